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


class TokenIdError(BytepairError, ValueError):
    """A token id that the vocabulary does not have."""


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


class UsageError(BytepairError, ValueError):
    """A command-line argument that makes no sense."""
