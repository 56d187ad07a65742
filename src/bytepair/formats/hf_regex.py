"""HF tokenizers' regex dialect: a pattern rewritten so that HF's engine (Oniguruma) reads it
as tiktoken and the ``regex`` module do. The only place bytepair translates a pattern for HF.

Used when writing a ``tokenizer.json`` (``export.py``), when recognising a named pattern in
one (``huggingface.py``), and by the benchmark's HF pre-tokenizer.
"""

from __future__ import annotations

import re

from ..errors import FormatError

# An atom (a \p{..} class, an escape, a [...] set or a plain character) with a possessive
# interval after it, e.g. cl100k's \p{N}{1,3}+.
_POSSESSIVE_INTERVAL = re.compile(r"(\\[pP]\{\w+\}|\\.|\[(?:\\.|[^\]\\])*\]|[^\\()\[\]{}|])(\{\d+(?:,\d*)?\})\+")
_LEFT_OVER = re.compile(r"(?<!\\)\{\d+(?:,\d*)?\}\+")


def hf_regex(pattern: str) -> str:
    r"""``pattern`` as HF's regex engine (Oniguruma) must read it to mean the same.

    Oniguruma reads ``X{1,3}+`` as ``(X{1,3})+`` (one to three, repeated), not as a
    possessive interval as tiktoken and ``regex`` do, so cl100k's ``\p{N}{1,3}+`` would take
    "1644" whole; an atomic group says what the possessive interval means.

    Example:
        >>> hf_regex(r"\p{N}{1,3}+|\s+")
        '(?>\\p{N}{1,3})|\\s+'
    """
    rewritten = _POSSESSIVE_INTERVAL.sub(r"(?>\1\2)", pattern)
    if _LEFT_OVER.search(rewritten):
        raise FormatError(
            f"pattern {pattern!r} has a possessive interval ({{n,m}}+) that HF's regex engine reads "
            "differently and that bytepair cannot rewrite; write it as an atomic group (?>...)"
        )
    return rewritten
