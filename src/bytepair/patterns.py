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
