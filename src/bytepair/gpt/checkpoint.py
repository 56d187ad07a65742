"""Checkpoints: one ``torch.save`` file of plain values, tied to its tokenizer by fingerprint.

Content (a dict, loadable with ``torch.load(weights_only=True)``: no pickled classes)::

    format, version          "bytepair-gpt-checkpoint", 1
    tokenizer_fingerprint    sha256 hex of the tokenizer the model was trained with
    model_config             GPTConfig as a dict
    train_config             TrainConfig as a dict (the recipe, needed to resume)
    model, optimizer         state dicts
    step, tokens, characters progress so far (characters = tokens x the split's characters/token)
    train_seconds            wall time spent in training steps (evaluation excluded)
    history                  list of dicts, one per evaluation (the learning curve)
    rng                      {"torch": ..., "batches": ...} generator states, so resuming draws
                             the same batches and dropout masks as an uninterrupted run (CPU)

Does: write atomically, read and check, refuse another tokenizer. Does not: train or evaluate.
"""

from __future__ import annotations

import pickle
import zipfile
from pathlib import Path

import torch

from bytepair._io import write_atomic
from bytepair.gpt.errors import CheckpointError, FingerprintMismatchError
from bytepair.gpt.model import GPT, GPTConfig

FORMAT = "bytepair-gpt-checkpoint"
VERSION = 1
FILE_NAME = "checkpoint.pt"
REQUIRED = (
    "tokenizer_fingerprint",
    "model_config",
    "train_config",
    "model",
    "optimizer",
    "step",
    "tokens",
    "characters",
    "train_seconds",
    "history",
    "rng",
)


def checkpoint_file(path) -> Path:
    """A checkpoint folder's file (``folder/checkpoint.pt``), or ``path`` itself if it is a file.

    Example:
        >>> checkpoint_file("checkpoints/bpe")
        PosixPath('checkpoints/bpe/checkpoint.pt')
    """
    path = Path(path)
    return path if path.suffix == ".pt" else path / FILE_NAME


def save_checkpoint(path, content: dict) -> Path:
    """Write ``content`` (the fields in the module docstring) to ``path``, atomically."""
    missing = [key for key in REQUIRED if key not in content]
    if missing:
        raise ValueError(f"checkpoint content lacks {missing!r}")  # a bug in the caller, not user input
    payload = {"format": FORMAT, "version": VERSION, **content}
    return write_atomic(checkpoint_file(path), lambda file: torch.save(payload, file))


def load_checkpoint(path, *, tokenizer_fingerprint: str) -> dict:
    """Read a checkpoint and refuse it unless it was trained with this tokenizer.

    Example:
        >>> saved = load_checkpoint("checkpoints/bpe", tokenizer_fingerprint=tok.fingerprint)  # doctest: +SKIP
        >>> saved["step"]  # doctest: +SKIP
        2000

    Raises ``FingerprintMismatchError`` (showing both fingerprints) for another tokenizer, even
    one of the same vocabulary size, and ``CheckpointError`` for a missing or damaged file.
    """
    file = checkpoint_file(path)
    content = read_checkpoint(file)
    if content["tokenizer_fingerprint"] != tokenizer_fingerprint:
        raise FingerprintMismatchError(file, saved=content["tokenizer_fingerprint"], given=tokenizer_fingerprint)
    return content


def read_checkpoint(path) -> dict:
    """Read and check the format of a checkpoint without comparing tokenizers."""
    file = checkpoint_file(path)
    if not file.is_file():
        raise CheckpointError(f"no checkpoint at {str(file)!r}; train one with `bytepair gpt train`")
    try:
        content = torch.load(file, map_location="cpu", weights_only=True)
    except (RuntimeError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile) as error:
        raise CheckpointError(
            f"{str(file)!r} is not a readable checkpoint (truncated or not written by bytepair: "
            f"{str(error).splitlines()[0] if str(error) else type(error).__name__}); train it again"
        ) from None
    if not isinstance(content, dict) or content.get("format") != FORMAT:
        raise CheckpointError(f"{str(file)!r} is not a bytepair GPT checkpoint (no format {FORMAT!r})")
    if content.get("version") != VERSION:
        raise CheckpointError(
            f"{str(file)!r} has checkpoint version {content.get('version')!r}; this bytepair reads "
            f"version {VERSION}: upgrade bytepair or train it again"
        )
    missing = [key for key in REQUIRED if key not in content]
    if missing:
        raise CheckpointError(f"{str(file)!r} lacks the fields {missing!r}; train it again")
    return content


def restore_model(content: dict) -> GPT:
    """The model a checkpoint holds, on the CPU, in eval mode."""
    model = GPT(GPTConfig.from_dict(content["model_config"]))
    try:
        model.load_state_dict(content["model"])
    except RuntimeError as error:
        raise CheckpointError(f"the checkpoint's weights do not fit its own model_config: {error}") from None
    return model.eval()
