"""Pre-tokenization patterns: the named regexes and the plain ``regex`` splitter.

A pattern cuts text into pieces before BPE runs, so that no token crosses a piece boundary
(no token for "dog." or " the\\n"). This module holds:

- ``PATTERNS``: the named patterns, as the exact strings of the libraries they come from;
- ``resolve_pattern``: a name, alias or custom regex -> ``(name or None, regex string)``;
- ``split`` / ``pre_tokenize_str``: the ``regex`` module's pieces, the oracle for the compiled
  scanner (``bytepair._engine.split``) and the splitter for custom patterns.

It does not encode anything, and it is not the fast path for named patterns: the engine scans
those with a hand-written scanner that must give exactly ``split``'s pieces.

Example:
    >>> split("Hello world!!", "gpt2")
    ['Hello', ' world', '!!']
"""

from __future__ import annotations

import functools
import unicodedata

import regex

from .errors import PatternError

# Copied verbatim from tiktoken's source (``tiktoken_ext/openai_public.py``): GPT-2/r50k/p50k,
# cl100k_base, and o200k_base (the "|"-join of its list). Llama 3's is the ``Split``
# pre-tokenizer of Meta's ``tokenizer.json``. tests/test_scanner.py checks all four against
# their sources.
PATTERNS = {
    "gpt2": (
        r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
    ),
    "cl100k": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
        r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k": (
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
        r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
        r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
    ),
    "llama3": (
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
        r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
    ),
}

# Other names people use for the same patterns.
ALIASES = {"gpt4": "cl100k"}


def resolve_pattern(name_or_regex):
    """A pattern name, alias or custom regex -> ``(canonical name or None, regex string)``.

    A custom regex that is exactly one of the named patterns gets that name, so that it runs
    on the compiled scanner.

    Example:
        >>> resolve_pattern("gpt4")[0]
        'cl100k'
        >>> resolve_pattern(r"\\w+|\\s+")
        (None, '\\\\w+|\\\\s+')

    Raises ``PatternError`` for anything that is neither a name nor a valid regex.
    """
    if not isinstance(name_or_regex, str) or not name_or_regex:
        raise PatternError(
            f"pattern must be a non-empty string (a name such as 'cl100k' or a regex), "
            f"not {name_or_regex!r}"
        )
    name = ALIASES.get(name_or_regex, name_or_regex)
    if name in PATTERNS:
        return name, PATTERNS[name]
    for known, pattern in PATTERNS.items():
        if name_or_regex == pattern:
            return known, pattern
    _compiled(name_or_regex)
    return None, name_or_regex


@functools.lru_cache(maxsize=64)
def _compiled(pattern):
    try:
        return regex.compile(pattern)
    except regex.error as error:
        names = ", ".join(repr(n) for n in [*PATTERNS, *ALIASES])
        raise PatternError(
            f"pattern {pattern!r} is neither a known name ({names}) nor a valid regex: "
            f"{error}; fix the regex or use one of the names"
        ) from None


def _matches(text, pattern):
    """The non-empty matches of a pattern (name, alias or regex), left to right."""
    compiled = _compiled(resolve_pattern(pattern)[1])
    # subtle: finditer + group(0), not findall, so a custom regex with groups still gives
    # whole pieces; empty matches carry no text and would only make empty pieces.
    return [match for match in compiled.finditer(text) if match.end() > match.start()]


def split(text, pattern):
    """The pieces of ``text`` under ``pattern``, as ``regex`` finds them (the oracle).

    ``pattern=None`` means no pre-tokenization: the whole text is one piece.

    Example:
        >>> split("don't stop", "cl100k")
        ['don', "'t", ' stop']
    """
    if pattern is None:
        return [text] if text else []
    return [match.group(0) for match in _matches(text, pattern)]


def pre_tokenize_str(text, pattern):
    """The pieces with their ``(start, end)`` character offsets, for debugging (like HF's).

    Example:
        >>> pre_tokenize_str("Call 911!", "gpt2")
        [('Call', (0, 4)), (' 911', (4, 8)), ('!', (8, 9))]
    """
    if pattern is None:
        return [(text, (0, len(text)))] if text else []
    return [(match.group(0), match.span()) for match in _matches(text, pattern)]

# How far back from a block's end the cut functions look for a cut.
CUT_SEARCH = 1 << 16

# What the ``regex`` module's ``\s`` matches (Unicode White_Space): str.isspace() also accepts
# U+001C..U+001F, which the patterns treat as punctuation.
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def safe_cut(text):
    """The last position at which ``text`` can be cut without changing its pre-tokenization
    pieces under any named pattern (gpt2, cl100k, o200k, llama3), or 0 if none is known.

    Only positions near a newline in the last ``CUT_SEARCH`` characters are used:

    (a) just before a whitespace run that holds a newline and starts with a character other
        than ``\\r``/``\\n``, after a non-whitespace character (``"end ." | " \\n Next"``);
    (b) just after a lone ``"\\n"`` between a non-whitespace character and a letter or digit
        that NFKC keeps a letter or digit (``"end.\\n" | "Next"``).

    Why these are safe: no named pattern looks behind, so the text after the cut is split the
    same way; the piece before the cut ends at the non-whitespace character (or its newline)
    in both cases, because no alternative can take a space after a non-space character, and
    the only ones that take newlines after one (``[\\r\\n]*``) take the same newlines either
    way and never a letter or digit. Normalization (NFC, NFKC) never joins characters across
    such a cut either. A custom regex that looks behind is not covered.

    Example:
        >>> text = "first line . \\n second line"
        >>> text[: safe_cut(text)]
        'first line .'
    """
    position = len(text)
    lowest = max(0, len(text) - CUT_SEARCH)  # bounded, so a text without cuts costs O(n)
    while True:
        newline = text.rfind("\n", lowest, position)
        if newline <= 0:
            return 0
        position = newline
        start = newline
        while start > 0 and text[start - 1] in WHITESPACE:
            start -= 1
        end = newline + 1
        while end < len(text) and text[end] in WHITESPACE:
            end += 1
        if start == 0:
            continue  # nothing before the run
        if text[start] not in "\r\n":
            return start
        # (b) needs the character after the newline, so not at the very end
        if start == newline and end == newline + 1 < len(text) and _starts_word(text[end]):
            return end


def _starts_word(character):
    """A letter or digit that stays one after NFKC (U+2474 "⑴" becomes "(1)", U+037A a space)."""
    return character.isalnum() and unicodedata.normalize("NFKC", character)[:1].isalnum()
