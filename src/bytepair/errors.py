"""Every error bytepair raises on purpose, in one place.

Each subclasses the built-in a caller would expect (``ValueError`` for bad values, ``OSError``
for files), so ``except ValueError`` keeps working; the message names the offending value and
says what to do about it.
"""

from __future__ import annotations


class BytepairError(Exception):
    """Base class of bytepair's own errors; the CLI prints these without a traceback."""


class UnknownCharactersError(BytepairError, ValueError):
    """Text holds characters outside a character-level tokenizer's base alphabet."""

    def __init__(self, characters):
        self.characters = sorted(set(characters))
        shown = ", ".join(repr(c) for c in self.characters[:50])
        more = f" and {len(self.characters) - 50} more" if len(self.characters) > 50 else ""
        super().__init__(
            f"text contains {len(self.characters)} character(s) missing from the base "
            f"vocabulary: {shown}{more}; train with base_text/base_tokens that include them, "
            "or with byte_fallback=True"
        )


class DisallowedSpecialTokenError(BytepairError, ValueError):
    """Text contains a special token's string that the caller did not allow."""

    def __init__(self, token):
        self.token = token
        super().__init__(
            f"text contains the special token {token!r}, which is disallowed; pass "
            f"allowed_special={{{token!r}}} (or 'all') to encode it as a special token, or "
            "disallowed_special=() to encode it as ordinary text"
        )


class TokenIdError(BytepairError, ValueError, KeyError):
    """A token id that the vocabulary does not have.

    Also a ``KeyError``, as tiktoken raises for an id it cannot decode, so tiktoken code that
    catches ``KeyError`` keeps working; its message reads as a sentence, not a quoted key.
    """

    __str__ = BaseException.__str__


class TrainingError(BytepairError, ValueError):
    """Training parameters or training text that cannot give a tokenizer."""


class PatternError(BytepairError, ValueError):
    """A pre-tokenization pattern that is neither a known name nor a valid regex."""


class NormalizationError(BytepairError, ValueError):
    """An unknown normalization form."""


class SpecialTokenError(BytepairError, ValueError):
    """A special-token definition that clashes with itself or the vocabulary."""


class ArtifactError(BytepairError, ValueError):
    """A tokenizer file that is truncated, edited, foreign or from a newer version."""


class FormatError(BytepairError, ValueError):
    """A vocabulary file in another library's format that cannot be read or written."""


class ChatTemplateError(BytepairError, ValueError):
    """Chat messages or a chat template that cannot be rendered."""


class ThreadCountError(BytepairError, ValueError):
    """A ``num_threads`` that is not a positive integer (0, -1, 2.5, True)."""


class UsageError(BytepairError, ValueError):
    """A command-line argument that makes no sense."""


class ViewError(BytepairError, ValueError):
    """A tokenizer whose tokens cannot be laid over the text (its ids do not decode to it)."""


class MissingDependencyError(BytepairError, ImportError):
    """An optional dependency (PyTorch, matplotlib) is not installed; the message says what to install."""


class DatasetError(BytepairError, ValueError):
    """A corpus folder or split file that cannot be used (missing split, not UTF-8, empty)."""


class DocumentError(DatasetError):
    """A corpus input that cannot be read: a file that does not decompress or parse as a whole,
    or one of its documents (``BadDocumentError``). The message names the file."""


class BadDocumentError(DocumentError):
    """One corpus document that cannot be read: invalid UTF-8, bad JSON, a missing or non-string
    text field, characters a tokenizer lacks. The message names the file and the line (or row);
    ``skip_bad`` skips such documents."""


class RayConnectionError(BytepairError, ConnectionError):
    """Ray could not be started on this machine, or the cluster named could not be reached."""


class DownloadError(BytepairError, OSError):
    """A download that failed (offline, HTTP error, a file without the expected content)."""


class ChecksumError(DownloadError):
    """A downloaded file whose SHA-256 is not the expected one; nothing is kept in the cache."""


class PrepareError(BytepairError, ValueError):
    """An encoded split that fails its own check (an id out of range, a failed round trip)."""


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


def own_cause(error: BaseException) -> BytepairError | None:
    """The first of bytepair's own errors in ``error``'s chain of causes (``__cause__``, and the
    ``cause`` of errors that carry one, as Ray's do), or None: a worker's bad document comes
    back wrapped in another library's exception."""
    cause, seen = error, set()
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, BytepairError) and type(cause).__module__.startswith("bytepair"):
            return cause
        seen.add(id(cause))
        cause = getattr(cause, "cause", None) or cause.__cause__
    return None
