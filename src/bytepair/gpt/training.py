"""Training a GPT on a prepared folder: AdamW, linear warmup then cosine decay, checkpoints.

    for each step:  learning rate for the step -> random batch of windows -> forward ->
                    cross-entropy -> backward -> clip gradients -> AdamW step
    every eval_interval steps and at the end: bits per character on validation, checkpoint

Does: start a run or resume one from its checkpoint (same tokenizer, same recipe, same batches),
and record the learning curve against tokens and characters processed. Does not: compare
tokenizers (``comparison.py``) or define the model (``model.py``).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm import tqdm

from bytepair._io import check_output_file, check_output_folder, progress_shown
from bytepair.gpt.checkpoint import checkpoint_file, load_checkpoint, restore_model, save_checkpoint
from bytepair.gpt.data import EncodedData, aligned_spans, load_data, sample_batch
from bytepair.gpt.errors import CheckpointError, GPTSettingError
from bytepair.gpt.evaluation import Evaluation, evaluate_span
from bytepair.gpt.model import (
    GPT,
    GPTConfig,
    check_positive_int,
    check_training_fits,
    is_out_of_memory,
    resolve_device,
    settings_from_dict,
)

# AdamW's betas as in GPT-2/nanoGPT: a shorter second-moment memory than the default 0.999,
# which keeps small, noisy-batch runs stable.
BETAS = (0.9, 0.95)
MODEL_SETTINGS = ("block_size", "embedding_dim", "num_heads", "num_layers", "expansion_factor", "dropout")


@dataclass(frozen=True)
class TrainConfig:
    """The training recipe; saved in the checkpoint, and the same when a run resumes.

    Example:
        >>> TrainConfig(max_steps=100, warmup_steps=10).learning_rate
        0.001
    """

    max_steps: int = 2000
    batch_size: int = 32
    learning_rate: float = 1e-3
    min_learning_rate: float = 1e-4
    warmup_steps: int = 100
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    seed: int = 1337

    def __post_init__(self):
        for name in ("max_steps", "batch_size"):
            check_positive_int(name, getattr(self, name))
        if not isinstance(self.warmup_steps, int) or self.warmup_steps < 0:
            raise GPTSettingError(f"warmup_steps={self.warmup_steps!r} must be an integer >= 0")
        if not 0 < self.learning_rate < 1:
            raise GPTSettingError(f"learning_rate={self.learning_rate!r} must be in (0, 1); 1e-3 is a good start")
        if not 0 <= self.min_learning_rate <= self.learning_rate:
            raise GPTSettingError(
                f"min_learning_rate={self.min_learning_rate!r} must be between 0 and "
                f"learning_rate={self.learning_rate!r}"
            )
        if self.weight_decay < 0 or self.grad_clip < 0:
            raise GPTSettingError(
                f"weight_decay={self.weight_decay!r} and grad_clip={self.grad_clip!r} must be >= 0 "
                "(grad_clip=0 turns clipping off)"
            )
        if not isinstance(self.seed, int):
            raise GPTSettingError(f"seed={self.seed!r} must be an integer")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> TrainConfig:
        """Inverse of ``to_dict``; unknown or missing fields are a ``GPTSettingError``."""
        return settings_from_dict(cls, values, "training")


def learning_rate_at(step: int, config: TrainConfig) -> float:
    """Linear warmup over ``warmup_steps``, then cosine decay to ``min_learning_rate`` at the end.

    Example:
        >>> config = TrainConfig(max_steps=110, warmup_steps=10, learning_rate=1e-3, min_learning_rate=0.0)
        >>> [round(learning_rate_at(s, config), 6) for s in (0, 9, 60, 110)]
        [0.0001, 0.001, 0.0005, 0.0]
    """
    if step < config.warmup_steps:
        return config.learning_rate * (step + 1) / config.warmup_steps
    progress = min(1.0, (step - config.warmup_steps) / max(1, config.max_steps - config.warmup_steps))
    cosine = 0.5 * (1.0 + math.cos(math.pi * progress))
    return config.min_learning_rate + cosine * (config.learning_rate - config.min_learning_rate)


@dataclass
class TrainingRun:
    """Everything that changes while training; ``checkpoint_content`` saves all of it."""

    model: GPT
    optimizer: torch.optim.Optimizer
    batches: torch.Generator
    config: TrainConfig
    fingerprint: str
    characters_per_token: float
    device: torch.device
    step: int = 0
    train_seconds: float = 0.0
    history: list = field(default_factory=list)

    @property
    def tokens(self) -> int:
        """Target tokens trained on so far (batch_size x block_size per step)."""
        return self.step * self.config.batch_size * self.model.config.block_size

    @property
    def characters(self) -> float:
        """Characters trained on so far, from the training split's average characters/token."""
        return self.tokens * self.characters_per_token

    def checkpoint_content(self) -> dict:
        return {
            "tokenizer_fingerprint": self.fingerprint,
            "model_config": self.model.config.to_dict(),
            "train_config": self.config.to_dict(),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "step": self.step,
            "tokens": self.tokens,
            "characters": self.characters,
            "train_seconds": self.train_seconds,
            "history": self.history,
            "rng": {"torch": torch.get_rng_state(), "batches": self.batches.get_state()},
        }


def new_run(data: EncodedData, model_config: GPTConfig, config: TrainConfig, device) -> TrainingRun:
    """A fresh model and optimizer, every random number drawn from ``config.seed``."""
    check_training_fits(model_config, config.batch_size, device)
    torch.manual_seed(config.seed)
    model = GPT(model_config).to(device)
    batches = torch.Generator().manual_seed(config.seed)
    return TrainingRun(
        model, _optimizer(model, config), batches, config, data.fingerprint, data.characters_per_token, device
    )


def resume_run(content: dict, data: EncodedData, device, max_steps=None) -> TrainingRun:
    """The run a checkpoint holds, ready to continue (optionally to a new ``max_steps``)."""
    saved_config = TrainConfig.from_dict(content["train_config"])
    config = saved_config if max_steps is None else dataclasses.replace(saved_config, max_steps=max_steps)
    check_training_fits(GPTConfig.from_dict(content["model_config"]), config.batch_size, device)
    model = restore_model(content).to(device).train()
    optimizer = _optimizer(model, config)
    optimizer.load_state_dict(content["optimizer"])
    batches = torch.Generator()
    batches.set_state(content["rng"]["batches"])
    torch.set_rng_state(content["rng"]["torch"])
    return TrainingRun(
        model,
        optimizer,
        batches,
        config,
        data.fingerprint,
        data.characters_per_token,
        device,
        content["step"],
        content["train_seconds"],
        list(content["history"]),
    )


def _optimizer(model: GPT, config: TrainConfig) -> torch.optim.AdamW:
    # Decay matrices and the (tied) embedding only, as GPT-2 does: decay pulls towards 0, the
    # wrong target for a LayerNorm gain (neutral at 1) and needless for a bias.
    matrices = [p for p in model.parameters() if p.dim() >= 2]
    vectors = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": matrices, "weight_decay": config.weight_decay}, {"params": vectors, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=config.learning_rate, betas=BETAS)


def train_step(run: TrainingRun, train_ids) -> float:
    """One optimizer step on a random batch; returns its mean loss per token (nats)."""
    learning_rate = learning_rate_at(run.step, run.config)
    for group in run.optimizer.param_groups:
        group["lr"] = learning_rate
    inputs, targets = sample_batch(train_ids, run.config.batch_size, run.model.config.block_size, run.batches)
    logits = run.model(inputs.to(run.device))  # (B, T, V)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.to(run.device).reshape(-1))
    run.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if run.config.grad_clip > 0:
        torch.nn.utils.clip_grad_norm_(run.model.parameters(), run.config.grad_clip)
    run.optimizer.step()
    run.step += 1
    return float(loss.item())


def train_until_done(run, train_ids, validate, *, eval_interval, checkpoint, progress=None, label="train"):
    """Train to ``run.config.max_steps``, evaluating and checkpointing every ``eval_interval``.

    ``validate(model) -> Evaluation`` gives the validation figure for the curve.
    """
    check_positive_int("eval_interval", eval_interval)
    if not run.history:
        _record(run, validate(run.model), train_loss=None)
    losses = []
    with tqdm(
        total=run.config.max_steps, initial=run.step, desc=label, unit="step", disable=not progress_shown(progress)
    ) as bar:
        while run.step < run.config.max_steps:
            started = time.perf_counter()
            losses.append(train_step(run, train_ids))
            run.train_seconds += time.perf_counter() - started
            if run.step % eval_interval == 0 or run.step == run.config.max_steps:
                entry = _record(run, validate(run.model), train_loss=sum(losses) / len(losses))
                save_checkpoint(checkpoint, run.checkpoint_content())
                losses = []
                bar.set_postfix(val_bpc=f"{entry['val_bits_per_character']:.3f}")
            bar.update(1)
    if run.history[-1]["step"] != run.step:  # resumed at the end already: nothing was recorded
        _record(run, validate(run.model), train_loss=None)


def _record(run: TrainingRun, evaluation: Evaluation, *, train_loss) -> dict:
    entry = {
        "step": run.step,
        "tokens": run.tokens,
        "characters": run.characters,
        "train_seconds": run.train_seconds,
        "train_loss_per_token": train_loss,
        "val_bits_per_character": evaluation.bits_per_character,
        "val_bits_per_byte": evaluation.bits_per_byte,
        "val_loss_per_token": evaluation.loss_per_token,
        "val_nats": evaluation.nats,
        "val_tokens": evaluation.tokens,
        "val_characters": evaluation.characters,
        "val_bytes": evaluation.bytes,
        "val_special_tokens": evaluation.special_tokens,
    }
    run.history.append(entry)
    return entry


@dataclass(frozen=True)
class TrainResult:
    """What ``train`` did: where the checkpoint is, how far it got, and the validation figure."""

    checkpoint: Path
    step: int
    tokens: int
    characters: float
    train_seconds: float
    validation: Evaluation
    history: list
    model_config: GPTConfig
    config: TrainConfig


def train(
    data_dir,
    out_dir=None,
    *,
    max_steps=None,
    batch_size=None,
    learning_rate=None,
    min_learning_rate=None,
    warmup_steps=None,
    weight_decay=None,
    grad_clip=None,
    seed=None,
    block_size=None,
    embedding_dim=None,
    num_heads=None,
    num_layers=None,
    expansion_factor=None,
    dropout=None,
    eval_interval=250,
    eval_characters=100_000,
    eval_batch_size=32,
    resume=False,
    device=None,
    progress=None,
    vocab_dir=None,
) -> TrainResult:
    """Train a GPT on ``data_dir`` (a folder with ``meta.json``: ``prepare``'s, or
    ``encode-corpus``'s with a 'val' split, ``vocab_dir`` finding a published vocabulary it
    names) and checkpoint it in ``out_dir``.

    Settings left at ``None`` take the defaults of ``GPTConfig``/``TrainConfig`` (128 context,
    128 dims, 4 heads, 4 layers; 2,000 steps of 32 windows, lr 1e-3 -> 1e-4), or, with
    ``resume=True``, the checkpoint's; ``max_steps`` may grow on resume (the cosine schedule
    then stretches to the new end). ``out_dir`` defaults to ``checkpoints/<kind>`` for
    ``.../encoded_<kind>``. ``eval_characters``: validation characters for the curve (``None``:
    the whole split).

    Example:
        >>> result = train("prepared/encoded_bpe", max_steps=500)  # doctest: +SKIP
        >>> result.checkpoint, round(result.validation.bits_per_character, 2)  # doctest: +SKIP
        (PosixPath('checkpoints/bpe/checkpoint.pt'), 2.31)

    WARNING: refuses to start over an existing checkpoint (pass ``resume=True`` or another
    ``out_dir``) and refuses to resume one trained with another tokenizer.
    """
    check_positive_int("eval_interval", eval_interval)
    check_positive_int("eval_batch_size", eval_batch_size)
    device = resolve_device(device)
    data = load_data(data_dir, vocab_dir=vocab_dir)
    out = out_dir if out_dir is not None else default_out_dir(data_dir)
    check_out_dir(out)  # before any model is trained: a file in the way failed only at the first save
    checkpoint = checkpoint_file(out)
    model_settings = _given(
        block_size=block_size,
        embedding_dim=embedding_dim,
        num_heads=num_heads,
        num_layers=num_layers,
        expansion_factor=expansion_factor,
        dropout=dropout,
    )
    recipe = _given(
        batch_size=batch_size,
        learning_rate=learning_rate,
        min_learning_rate=min_learning_rate,
        warmup_steps=warmup_steps,
        weight_decay=weight_decay,
        grad_clip=grad_clip,
        seed=seed,
    )
    if resume:
        run = _resume(checkpoint, data, device, model_settings, recipe, max_steps)
    else:
        if checkpoint.exists():
            raise CheckpointError(
                f"{str(checkpoint)!r} already exists; pass resume=True (--resume) to continue it, "
                "or choose another output folder"
            )
        model_config = GPTConfig(vocab_size=data.vocab_size, **model_settings)
        config = TrainConfig(**recipe, **({} if max_steps is None else {"max_steps": max_steps}))
        run = new_run(data, model_config, config, device)
    try:
        return _train_and_report(run, data, checkpoint, eval_interval, eval_characters, eval_batch_size, progress)
    except RuntimeError as error:
        if not is_out_of_memory(error):
            raise
        # what check_training_fits cannot see: attention scores some kernels store, other processes
        raise GPTSettingError(
            f"out of memory on {device} training with block_size={run.model.config.block_size!r} and "
            f"batch_size={run.config.batch_size!r}; use a smaller block_size or batch_size"
        ) from None


def _train_and_report(run, data, checkpoint, eval_interval, eval_characters, eval_batch_size, progress):
    val = data.split("val")
    (span,) = aligned_spans([(val.ids, data.lengths)], eval_characters)

    def validate(model):
        return evaluate_span(
            model, val.ids, span, batch_size=eval_batch_size, device=run.device, special=data.lengths.special
        )

    train_until_done(
        run,
        data.split("train").ids,
        validate,
        eval_interval=eval_interval,
        checkpoint=checkpoint,
        progress=progress,
        label=data.folder.name,
    )
    save_checkpoint(checkpoint, run.checkpoint_content())
    validation = last_validation(run.history)
    return TrainResult(
        checkpoint,
        run.step,
        run.tokens,
        run.characters,
        run.train_seconds,
        validation,
        run.history,
        run.model.config,
        run.config,
    )


def last_validation(history) -> Evaluation:
    """The latest validation figure of a learning curve."""
    last = history[-1]
    # .get: curves in checkpoints written before bytes were recorded
    return Evaluation(
        last["val_nats"],
        last["val_tokens"],
        last["val_characters"],
        last.get("val_bytes"),
        last.get("val_special_tokens", 0),
    )


def _resume(checkpoint, data, device, model_settings, recipe, max_steps) -> TrainingRun:
    content = load_checkpoint(checkpoint, tokenizer_fingerprint=data.fingerprint)
    saved = {**content["model_config"], **content["train_config"]}
    asked = {**model_settings, **recipe}
    conflicts = {name: (value, saved[name]) for name, value in asked.items() if saved[name] != value}
    if conflicts:
        shown = ", ".join(f"{name}={given!r} (checkpoint: {kept!r})" for name, (given, kept) in conflicts.items())
        raise CheckpointError(
            f"cannot resume {str(checkpoint)!r} with different settings: {shown}; drop those "
            "settings to keep the checkpoint's, or train a new model in another folder"
        )
    if max_steps is not None and max_steps < content["step"]:
        raise GPTSettingError(
            f"max_steps={max_steps!r} is below the checkpoint's step {content['step']}; ask for more steps"
        )
    return resume_run(content, data, device, max_steps)


def _given(**settings) -> dict:
    return {name: value for name, value in settings.items() if value is not None}


def check_out_dir(out, flag="out_dir") -> None:
    """Refuse a checkpoint destination that cannot be written: a ``.pt`` path is the checkpoint
    file itself (``checkpoint_file``), anything else its folder (made if missing)."""
    if checkpoint_file(out) == Path(out):
        check_output_file(out, flag=flag, example="checkpoint.pt")
    else:
        check_output_folder(out, flag=flag)


def default_out_dir(data_dir) -> Path:
    """``checkpoints/bpe`` for ``.../encoded_bpe``, ``checkpoints/<name>`` for any other folder."""
    name = Path(data_dir).resolve().name
    return Path("checkpoints") / name.removeprefix("encoded_")
