"""The fair comparison: a character-level and a BPE model, same architecture, same characters.

How the two runs are made equal:

- the same text (``bytepair prepare`` writes both folders from the same files; checked here),
  the same architecture, optimizer, schedule shape and seed;
- the same budget of training *characters*, not tokens or steps: both use the same batch shape
  (``batch_size`` windows of ``block_size`` tokens, so the same compute per step), and each runs
  ``round(characters / (batch_size x block_size x characters per token))`` steps, so the BPE
  model, whose tokens cover several characters, takes proportionally fewer steps. Warmup is the
  same fraction of each run (5%), so both schedules follow the characters seen;
- the same yardstick: bits per character (and per UTF-8 byte) over exactly the same validation
  (and test) text, found by aligning the two token streams on a common boundary
  (``data.aligned_spans``).

Per-token perplexity is reported too, with the warning that it does not compare across
tokenizers. Wall time (training steps only, and in all) is reported, not equalised.

Does: train both, evaluate, write ``comparison.json``, ``comparison.txt`` and ``comparison.png``
(matplotlib, imported only here). Does not: prepare the data (``bytepair prepare`` does).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

from bytepair._io import write_atomic, write_text_atomic
from bytepair.gpt.checkpoint import checkpoint_file
from bytepair.gpt.data import aligned_spans, load_encoded
from bytepair.gpt.errors import (
    CheckpointError,
    GPTSettingError,
    MissingDependencyError,
    PreparedDataError,
)
from bytepair.gpt.evaluation import Evaluation, evaluate_span, format_bits
from bytepair.gpt.model import GPTConfig
from bytepair.gpt.training import (
    TrainConfig,
    last_validation,
    new_run,
    resolve_device,
    train_until_done,
)

# Warmup as a share of each run, not a step count: equal characters, not equal steps.
WARMUP_FRACTION = 0.05
MODELS = ("char", "bpe")
PERPLEXITY_NOTE = (
    "per-token perplexity does not compare across tokenizers (a BPE token covers several "
    "characters); compare bits per character"
)
EQUALIZATION_NOTE = (
    "same architecture, batch shape (batch_size x block_size tokens per step), optimizer, seed "
    "and training characters; each model runs round(characters / (tokens per step x characters "
    "per token)) steps, so the BPE model takes fewer steps"
)


@dataclass(frozen=True)
class ComparedModel:
    """One side of the comparison."""

    name: str
    vocab_size: int
    parameters: int
    fingerprint: str
    steps: int
    tokens_per_step: int
    characters_per_token: float
    characters: float
    train_seconds: float
    wall_seconds: float
    validation: Evaluation
    test: Evaluation
    curve: list
    checkpoint: Path

    def to_dict(self) -> dict:
        return {
            "vocab_size": self.vocab_size,
            "parameters": self.parameters,
            "tokenizer_fingerprint": self.fingerprint,
            "steps": self.steps,
            "tokens_per_step": self.tokens_per_step,
            "characters_per_token": self.characters_per_token,
            "characters_processed": self.characters,
            "train_seconds": self.train_seconds,
            "wall_seconds": self.wall_seconds,
            "val": self.validation.to_dict(),
            "test": self.test.to_dict(),
            "curve": self.curve,
            "checkpoint": str(self.checkpoint),
        }


@dataclass(frozen=True)
class Comparison:
    """Both models, the settings they shared, and where the report files are."""

    budget_characters: int
    settings: dict
    models: dict
    files: dict

    def to_dict(self) -> dict:
        return {
            "budget_characters": self.budget_characters,
            "settings": self.settings,
            "equalization": EQUALIZATION_NOTE,
            "note": PERPLEXITY_NOTE,
            "models": {name: model.to_dict() for name, model in self.models.items()},
            "files": {kind: str(path) for kind, path in self.files.items()},
        }

    def table(self) -> str:
        """The comparison as a plain-text table (what ``comparison.txt`` holds)."""
        char, bpe = self.models["char"], self.models["bpe"]
        rows = [
            ("vocabulary size", lambda m: f"{m.vocab_size:,}"),
            ("parameters", lambda m: f"{m.parameters:,}"),
            ("characters / token (train)", lambda m: f"{m.characters_per_token:.3f}"),
            ("steps", lambda m: f"{m.steps:,}"),
            ("training characters", lambda m: f"{m.characters:,.0f}"),
            ("training time (s)", lambda m: f"{m.train_seconds:.1f}"),
            ("wall time with evaluation (s)", lambda m: f"{m.wall_seconds:.1f}"),
            ("val bits / character", lambda m: f"{m.validation.bits_per_character:.4f}"),
            ("test bits / character", lambda m: f"{m.test.bits_per_character:.4f}"),
            ("val bits / byte", lambda m: format_bits(m.validation.bits_per_byte)),
            ("test bits / byte", lambda m: format_bits(m.test.bits_per_byte)),
            ("val loss / token (nats)", lambda m: f"{m.validation.loss_per_token:.4f}"),
            ("val perplexity / token *", lambda m: f"{m.validation.perplexity:.3f}"),
        ]
        width = max(len(label) for label, _ in rows)
        s = self.settings
        lines = [
            f"Same architecture, same text, a budget of {self.budget_characters:,} training characters each",
            f"model: block {s['block_size']}, {s['embedding_dim']} dims, {s['num_heads']} heads, "
            f"{s['num_layers']} layers, MLP x{s['expansion_factor']}, dropout {s['dropout']}; batch "
            f"{s['batch_size']}; lr {s['learning_rate']:g} -> {s['min_learning_rate']:g}, warmup "
            f"{s['warmup_fraction']:.0%}; seed {s['seed']}; device {s['device']}",
            "",
            f"{'':<{width}}  {'char':>12}  {'bpe':>12}",
        ]
        lines += [f"{label:<{width}}  {show(char):>12}  {show(bpe):>12}" for label, show in rows]
        lines += [
            "",
            f"* {PERPLEXITY_NOTE}.",
            f"Validation: the same {char.validation.characters:,} characters ({char.validation.bytes:,} "
            f"UTF-8 bytes) for both models; test: the same {char.test.characters:,} ({char.test.bytes:,} bytes).",
            f"Equalised: {EQUALIZATION_NOTE}.",
        ]
        return "\n".join(lines) + "\n"


def compare(prepared_dir, out_dir="checkpoints", *, characters=1_000_000, batch_size=32, block_size=128,
            embedding_dim=128, num_heads=4, num_layers=4, expansion_factor=4, dropout=0.1,
            learning_rate=1e-3, min_learning_rate=1e-4, weight_decay=0.1, grad_clip=1.0,
            eval_points=10, eval_characters=100_000, eval_batch_size=32, seed=1337, device=None,
            overwrite=False, progress=None) -> Comparison:
    """Train a char and a BPE model on ``prepared_dir`` for the same training characters.

    ``prepared_dir`` is the output of ``bytepair prepare --char-baseline`` (``encoded_char/``
    and ``encoded_bpe/``). Checkpoints go to ``out_dir/char/`` and ``out_dir/bpe/``, the report to
    ``out_dir/comparison.{json,txt,png}``. ``eval_points``: validation points on each learning
    curve; ``eval_characters``: validation and test characters evaluated (``None``: all).

    Example:
        >>> result = compare("prepared", characters=2_000_000)  # doctest: +SKIP
        >>> print(result.table())  # doctest: +SKIP

    WARNING: refuses to overwrite existing checkpoints unless ``overwrite=True``.
    """
    _check_budget(characters, eval_points)
    figure_class = _matplotlib_figure()  # fail before minutes of training, not after
    device = resolve_device(device)
    out_dir = Path(out_dir)
    _check_prepared(Path(prepared_dir))
    datasets = {name: load_encoded(Path(prepared_dir) / f"encoded_{name}") for name in MODELS}
    _check_same_text(datasets)
    spans = {split: _spans(datasets, split, eval_characters) for split in ("val", "test")}
    shape = dict(block_size=block_size, embedding_dim=embedding_dim, num_heads=num_heads,
                 num_layers=num_layers, expansion_factor=expansion_factor, dropout=dropout)
    recipe = dict(batch_size=batch_size, learning_rate=learning_rate, min_learning_rate=min_learning_rate,
                  weight_decay=weight_decay, grad_clip=grad_clip, seed=seed)
    checkpoints = {name: checkpoint_file(out_dir / name) for name in MODELS}
    _check_free(checkpoints, overwrite)
    models = {}
    for name, data in datasets.items():
        models[name] = _train_one(name, data, shape, recipe, characters, spans, eval_points, eval_batch_size,
                                  checkpoints[name], device, progress)
    settings = {**shape, **recipe, "eval_points": eval_points, "eval_characters": eval_characters,
                "warmup_fraction": WARMUP_FRACTION, "device": str(device)}
    files = {kind: out_dir / f"comparison.{kind}" for kind in ("json", "txt", "png")}
    comparison = Comparison(characters, settings, models, files)
    write_text_atomic(files["json"], json.dumps(comparison.to_dict(), indent=2) + "\n")
    write_text_atomic(files["txt"], comparison.table())
    plot_curves(comparison, files["png"], figure_class=figure_class)
    return comparison


def _check_budget(characters, eval_points):
    for name, value in (("characters", characters), ("eval_points", eval_points)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise GPTSettingError(f"{name}={value!r} must be a positive integer")


def _check_prepared(folder: Path):
    """Both encodings are there; ``encoded_char/`` is written only with ``--char-baseline``."""
    if not (folder / "encoded_bpe" / "meta.json").is_file():
        raise PreparedDataError(f"{str(folder)!r} has no encoded_bpe/meta.json; pass the output folder of "
                                "`bytepair prepare ... --char-baseline`")
    if not (folder / "encoded_char" / "meta.json").is_file():
        raise PreparedDataError(f"{str(folder)!r} has no character baseline (encoded_char/); run `bytepair prepare` "
                                "again with --char-baseline, which writes it beside encoded_bpe/")


def _check_same_text(datasets):
    char, bpe = datasets["char"], datasets["bpe"]
    for split in ("train", "val", "test"):
        a, b = char.split(split), bpe.split(split)
        if (a.characters, a.bytes) != (b.characters, b.bytes):
            raise PreparedDataError(
                f"the {split!r} splits of {str(char.folder)!r} and {str(bpe.folder)!r} encode different "
                f"text ({a.characters} vs {b.characters} characters); prepare both from the same files"
            )


def _spans(datasets, split, eval_characters) -> dict:
    streams = [(datasets[name].split(split).ids, datasets[name].lengths) for name in MODELS]
    return dict(zip(MODELS, aligned_spans(streams, eval_characters)))


def _check_free(checkpoints, overwrite):
    taken = [str(path) for path in checkpoints.values() if path.exists()]
    if taken and not overwrite:
        raise CheckpointError(
            f"{taken!r} already exist; pass overwrite=True (--overwrite) to replace them, or "
            "choose another output folder"
        )


def _train_one(name, data, shape, recipe, characters, spans, eval_points, eval_batch_size, checkpoint,
               device, progress) -> ComparedModel:
    tokens_per_step = recipe["batch_size"] * shape["block_size"]
    steps = max(1, round(characters / (tokens_per_step * data.characters_per_token)))
    config = TrainConfig(max_steps=steps, warmup_steps=round(WARMUP_FRACTION * steps), **recipe)
    run = new_run(data, GPTConfig(vocab_size=data.vocab_size, **shape), config, device)
    val, test = data.split("val").ids, data.split("test").ids

    def validate(model):
        return evaluate_span(model, val, spans["val"][name], batch_size=eval_batch_size, device=device,
                             special=data.lengths.special)

    started = time.perf_counter()
    train_until_done(run, data.split("train").ids, validate, eval_interval=math.ceil(steps / eval_points),
                     checkpoint=checkpoint, progress=progress, label=name)
    test_result = evaluate_span(run.model, test, spans["test"][name], batch_size=eval_batch_size, device=device,
                                special=data.lengths.special)
    wall = time.perf_counter() - started
    return ComparedModel(
        name, data.vocab_size, sum(p.numel() for p in run.model.parameters()), data.fingerprint, steps,
        tokens_per_step, data.characters_per_token, run.characters, run.train_seconds, wall,
        last_validation(run.history), test_result, run.history, checkpoint,
    )


def _matplotlib_figure():
    """matplotlib's ``Figure`` (no pyplot, so no GUI backend and no global state)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError(
            "the comparison plot needs matplotlib, which is not installed; install it with: "
            "pip install 'bytepair[gpt]'"
        ) from None
    return Figure


def plot_curves(comparison: Comparison, path, *, figure_class=None) -> Path:
    """Validation bits per character against training characters, one line per model, as PNG."""
    figure = (figure_class or _matplotlib_figure())(figsize=(7, 4.5), dpi=120)
    axes = figure.subplots()
    for name, model in comparison.models.items():
        # The untrained point (step 0, ~log2(V) bits per token) is in the JSON but left out
        # here: it would stretch the y axis and flatten the part of the curves worth reading.
        trained = [entry for entry in model.curve if entry["step"] > 0]
        xs = [entry["characters"] for entry in trained]
        ys = [entry["val_bits_per_character"] for entry in trained]
        axes.plot(xs, ys, marker="o", markersize=3, label=f"{name} (vocab {model.vocab_size:,}, {model.steps:,} steps)")
    axes.set_xlabel("training characters processed")
    axes.set_ylabel("validation bits per character")
    axes.set_title("Same architecture, same characters: char vs BPE")
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    return write_atomic(path, lambda file: figure.savefig(file, format="png"))
