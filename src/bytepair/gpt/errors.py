"""Errors raised by ``bytepair.gpt`` for bad user input: prepared data, checkpoints, settings.

Every class subclasses ``bytepair.errors.BytepairError`` and ``ValueError``, so the command line
prints ``error: <message>`` and exits with status 2 instead of showing a traceback. This module
imports nothing heavy (no torch), so the command line can name these classes before PyTorch loads.
"""

from __future__ import annotations

from bytepair.errors import BytepairError


class GPTSettingError(BytepairError, ValueError):
    """A model, training or sampling setting is out of range (e.g. ``num_heads=3`` for 128 dims)."""


class PreparedDataError(BytepairError, ValueError):
    """A prepared-data folder (``meta.json`` + ``.bin`` streams) is missing, corrupt or inconsistent."""


class CheckpointError(BytepairError, ValueError):
    """A checkpoint file is missing, unreadable, or does not match what it is used with."""


class FingerprintMismatchError(CheckpointError):
    """A checkpoint was trained with a different tokenizer than the one given to load it with.

    Example:
        >>> error = FingerprintMismatchError("model.pt", saved="ab" * 32, given="cd" * 32)
        >>> "ab" * 32 in str(error) and "cd" * 32 in str(error)
        True

    NOTE: two tokenizers with the same vocabulary size still map ids to different text, so the
    sizes matching is no reason to accept the pair; only equal fingerprints are.
    """

    def __init__(self, path, *, saved: str, given: str):
        self.path = str(path)
        self.saved = saved
        self.given = given
        super().__init__(
            f"checkpoint {self.path!r} was trained with the tokenizer whose fingerprint is "
            f"{saved!r}, but the tokenizer given has fingerprint {given!r}; use the tokenizer the "
            "checkpoint was trained with, or train a new model for this tokenizer"
        )


class MissingDependencyError(BytepairError, ImportError):
    """An optional dependency (PyTorch, matplotlib) is not installed; the message says what to install."""
