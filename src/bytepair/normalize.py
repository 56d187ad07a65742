"""Stage 1: Unicode normalization, applied identically at training and encoding time.

``None`` (the default) leaves text untouched, so every tokenizer round-trips exactly. ``"NFC"``
composes characters and is lossless for text that is already NFC. ``"NFKC"`` also folds
compatibility characters (ligatures, full-width forms, superscripts), which makes the round
trip lossy by design: ``decode(encode(t)) == normalize(t, "NFKC")``, not ``t``.

Example:
    >>> normalize("ﬁ ｆｕｌｌ ²", "NFKC")
    'fi full 2'
"""

from __future__ import annotations

import unicodedata

from . import _engine
from .errors import NormalizationError

NORMALIZATIONS = (None, "NFC", "NFKC")


def check_normalization(form):
    """Return ``form`` if it is a supported normalization, else raise a clear error."""
    if form not in NORMALIZATIONS:
        raise NormalizationError(f"unknown normalization {form!r}; use one of None, 'NFC' or 'NFKC'")
    return form


def normalize(text, form):
    """Apply normalization ``form`` (None, "NFC" or "NFKC") to ``text``."""
    if form is None:
        return text
    return unicodedata.normalize(form, text)


def clean_surrogates(text):
    """tiktoken's rule for surrogates, which encoding applies too: a high and a low surrogate
    in a row become the character they encode, a lone one becomes U+FFFD.

    Python strings can hold surrogates that UTF-8 cannot; training uses this so that it sees
    exactly the text that encoding sees (the engine's test, which reads the string in place).

    Example:
        >>> clean_surrogates("a\\ud800b\\ud83d\\ude00")
        'a\\ufffdb😀'
    """
    return _engine.clean_surrogates(text)
