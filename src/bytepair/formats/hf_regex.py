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
    return _with_joiners(rewritten)


# The zero-width non-joiner and joiner: word characters for the regex module and tiktoken
# (Unicode's \w has Join_Control), not for Oniguruma, whose \w left them out of Persian and
# Malayalam words (one of 93 UDHR texts gave other ids through a custom \w+ pattern).
_JOINERS = "\\u200c\\u200d"


def _with_joiners(pattern):
    r"""``\w`` and ``\W`` written out with the joiners, in a set or not (Oniguruma takes a set
    inside a set), every other character and escape as it is."""
    out, at, in_set = [], 0, False
    while at < len(pattern):
        char = pattern[at]
        if char == "\\" and at + 1 < len(pattern):
            escape = pattern[at : at + 2]
            if escape == "\\w":
                escape = f"\\w{_JOINERS}" if in_set else f"[\\w{_JOINERS}]"
            elif escape == "\\W":
                escape = f"[^\\w{_JOINERS}]"
            out.append(escape)
            at += 2
            continue
        out.append(char)
        at += 1
        if char == "[" and not in_set:
            in_set = True
            for literal in ("^", "]"):  # "[^]..." and "[]...": a ] first in a set is itself
                if pattern.startswith(literal, at):
                    out.append(literal)
                    at += 1
        elif char == "]" and in_set:
            in_set = False
    return "".join(out)
