"""Pre-tokenization patterns: the named regexes and the plain ``regex`` splitter.

A pattern cuts text into pieces before BPE runs, so that no token crosses a piece boundary
(no token for "dog." or " the\\n"). This module holds:

- ``PATTERNS``: the named patterns, as the exact strings of the libraries they come from;
- ``resolve_pattern``: a name, alias or custom regex -> ``(name or None, regex string)``;
- ``split`` / ``pre_tokenize_str``: the ``regex`` module's pieces, the oracle for the compiled
  scanner (``bytepair._engine.split``) and the splitter for custom patterns.

Two rules hold for every pattern, in ``encode``, ``split`` and ``train`` alike:

- No text is ever lost. Text that a custom regex does not match becomes pieces of its own, one
  per gap between matches (Hugging Face's ``Split`` with ``Isolated`` behaviour does the same).
  The named patterns match every character, so for them this changes nothing.
- A custom regex runs with a time limit. Each stretch of ``STRETCH_CHARS`` characters gets
  ``MATCH_TIMEOUT`` seconds; a regex that backtracks catastrophically (``(a|aa)+$`` on
  ``"a" * 40 + "b"``) raises ``PatternError`` naming the pattern and the position instead of
  hanging. Ctrl-C interrupts a running match (the ``regex`` module checks for signals).

It does not encode anything, and it is not the fast path for named patterns: the engine scans
those with a hand-written scanner that must give exactly ``split``'s pieces.

Example:
    >>> split("Hello world!!", "gpt2")
    ['Hello', ' world', '!!']
"""

from __future__ import annotations

import difflib
import functools
import unicodedata

import regex

from .errors import PatternError

# Copied verbatim from tiktoken's source (``tiktoken_ext/openai_public.py``): GPT-2/r50k/p50k,
# cl100k_base, and o200k_base (the "|"-join of its list). Llama 3's is the ``Split``
# pre-tokenizer of Meta's ``tokenizer.json``. tests/test_scanner.py checks all four against
# their sources.
PATTERNS = {
    "gpt2": (r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""),
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

# Whose Unicode tables the compiled scanner's classes (\p{L}, \p{N}, \s, o200k's case classes)
# follow, by the merge rule of the vocabulary (``Tokenizer.rule``): a vocabulary loaded from a
# library gets that library's tables, so its ids are the library's for every code point.
# Measured by matching each class on every code point through the installed peers
# (tests/peers/test_unicode_tables.py): tiktoken 0.14 (Rust regex-syntax) and HF tokenizers 0.23
# (Oniguruma) both follow Unicode 16.0.0 exactly. A rule not listed here (``replay``: tokenizers
# trained by bytepair) keeps the installed ``regex`` module's tables ("regex"), so that encoding
# splits as training counted, and as ``split`` below does. Custom patterns always run on
# ``regex``, whatever the rule.
UNICODE_BY_RULE = {"tiktoken": "16.0.0", "hf": "16.0.0"}

# Other names people use for the same patterns: the vocabulary names each pattern belongs to
# (tiktoken's p50k_base and p50k_edit use r50k_base's pattern, which is GPT-2's; the GPT-4o
# tokenizer.json holds o200k's). Looked up case-insensitively, so "CL100K" and "GPT2" are names,
# never literal regexes that match almost nothing.
ALIASES = {
    "gpt4": "cl100k",
    "gpt-4": "cl100k",
    "cl100k_base": "cl100k",
    "r50k": "gpt2",
    "r50k_base": "gpt2",
    "p50k": "gpt2",
    "p50k_base": "gpt2",
    "p50k_edit": "gpt2",
    "o200k_base": "o200k",
    "gpt4o": "o200k",
    "gpt-4o": "o200k",
}

# A custom regex gets MATCH_TIMEOUT seconds for each stretch of STRETCH_CHARS characters it
# splits. Untuned but generous: a linear regex splits 64K characters in about 30 ms on this
# project's machines (cl100k's regex: 0.35 s per 850K characters), so only a regex that
# backtracks exponentially comes near the limit.
MATCH_TIMEOUT = 2.0
STRETCH_CHARS = 1 << 16


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
            f"pattern must be a non-empty string (a name such as 'cl100k' or a regex), not {name_or_regex!r}"
        )
    name = _known_name(name_or_regex)
    if name is not None:
        return name, PATTERNS[name]
    for known, pattern in PATTERNS.items():
        if name_or_regex == pattern:
            return known, pattern
    _compiled(name_or_regex)
    return None, name_or_regex


# What a name looks like: letters, digits, "-" and "_". As a regex such a string matches only that
# very word, which no one pre-tokenizes by, so a user who gives one means a name and misspelt it.
_NAME_LIKE = regex.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def check_pattern_spelling(pattern):
    """Refuse a ``pattern`` given by a user that looks like a name but is none (``"cl100k_bas"``,
    ``"gpt-4o-mini"``), which ``resolve_pattern`` would take as a regex matching that word alone.
    Patterns read from files are not checked here: a file may hold any regex.

    Example:
        >>> check_pattern_spelling("cl100k_bas")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        bytepair.errors.PatternError: pattern 'cl100k_bas' is not a pattern name (did you mean 'cl100k_base'?); ...
    """
    if not isinstance(pattern, str) or not _NAME_LIKE.fullmatch(pattern) or _known_name(pattern) is not None:
        return
    names = [*PATTERNS, *ALIASES]
    close = difflib.get_close_matches(pattern.strip().lower(), names, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise PatternError(
        f"pattern {pattern!r} is not a pattern name{hint}; the names are {', '.join(map(repr, names))}. As a "
        f"regex it would match only the word {pattern!r}; write (?:{pattern}) if that is what you mean"
    )


def _known_name(text):
    """The canonical pattern name that ``text`` spells (any case, with or without ``-`` and
    ``_``: "gpt-2", "llama-3" and "cl100k-base" are names, not regexes that match nothing), or None."""
    folded = text.strip().lower()
    if folded in PATTERNS:
        return folded
    return ALIASES.get(folded) or _COMPACT_NAMES.get(_compact(folded))


def _compact(name):
    return name.replace("-", "").replace("_", "")


_COMPACT_NAMES = {_compact(name): name for name in PATTERNS} | {_compact(a): name for a, name in ALIASES.items()}


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


def _spans(text, pattern):
    """``(start, end)`` of every piece of ``text`` under ``pattern``, left to right, covering
    the whole text: the regex's non-empty matches, and each gap between them as a piece.

    subtle: ``finditer`` with one ``timeout`` bounds the whole call, so the text is split in
    stretches: after a match that ends ``STRETCH_CHARS`` or more past the stretch's start, a
    new ``finditer`` starts at that match's end with a fresh time limit. Restarting after a
    non-empty match finds the same matches, since the search passes the whole text and ``pos``
    (lookbehind, ``$`` and ``\\G`` see what they saw before).
    """
    regex_text = resolve_pattern(pattern)[1]
    compiled = _compiled(regex_text)
    covered = 0  # the end of the text given out so far
    start = 0
    while True:
        restart = None
        try:
            for match in compiled.finditer(text, start, timeout=MATCH_TIMEOUT):
                begin, end = match.span()
                if end == begin:
                    continue  # an empty match carries no text
                if begin > covered:
                    yield covered, begin
                yield begin, end
                covered = end
                if end - start >= STRETCH_CHARS:
                    restart = end
                    break
        except TimeoutError:
            raise PatternError(
                f"pattern {_shown(regex_text)} took more than {MATCH_TIMEOUT:g} s to split "
                f"{STRETCH_CHARS} characters, at character {covered} of the text "
                f"({text[covered : covered + 30]!r}...): it backtracks catastrophically (nested "
                "repeats such as '(a|aa)+'); rewrite it with possessive quantifiers or atomic "
                "groups, or use a named pattern"
            ) from None
        if restart is None:
            break
        start = restart
    if covered < len(text):
        yield covered, len(text)


def keep_gaps(regex_text: str) -> str:
    """``regex_text`` extended so that its matches alone hold every piece that ``split`` gives:
    the text between two matches is matched as a whole by a second alternative. For libraries
    that keep only a regex's matches (tiktoken, HF's ``Split`` with ``Removed`` and ``invert``).

    Example:
        >>> regex.findall(keep_gaps(r"\\w+"), "hello, world")
        ['hello', ', ', 'world']
    """
    return f"(?:{regex_text})|(?:(?!(?:{regex_text}))[\\s\\S])+"


def gaps_kept(regex_text):
    """The regex ``X`` if ``regex_text`` is ``keep_gaps(X)`` and ``X`` matches no empty string
    in a sample of text, else None: then ``regex_text``'s matches hold every character.

    subtle: where ``X`` matches the empty string the gap alternative cannot start, so a library
    that keeps only matches drops that character; the sample finds the usual cases (``\\w*``).

    Example:
        >>> gaps_kept(keep_gaps(r"\\w+"))
        '\\\\w+'
    """
    found = _KEPT_GAPS.fullmatch(regex_text)
    if found is None:
        return None
    inner = found.group(1)
    try:
        where = empty_match(inner)
    except PatternError:
        return None
    return None if where is not None else inner


def empty_match(regex_text):
    """Where ``regex_text`` matches the empty string, in words (the empty text, or before which
    character of a sample text), else None. A library that keeps only matches (tiktoken, HF's
    ``Split``) skips the character after an empty match, so such a pattern loses text there.

    Example:
        >>> empty_match(r"\\w*"), empty_match(r"\\w+")
        ('the empty text', None)
    """
    compiled = _compiled(regex_text)
    if compiled.fullmatch("", timeout=MATCH_TIMEOUT) is not None:
        return "the empty text"
    for found in compiled.finditer(_EMPTY_MATCH_SAMPLE, timeout=MATCH_TIMEOUT):
        if found.end() == found.start():
            at = found.start()
            return f"{_EMPTY_MATCH_SAMPLE[max(0, at - 8) : at + 8]!r}, before {_EMPTY_MATCH_SAMPLE[at : at + 1]!r}"
    return None


_KEPT_GAPS = regex.compile(r"\(\?:(.*)\)\|\(\?:\(\?!\(\?:\1\)\)\[\\s\\S\]\)\+", flags=regex.DOTALL)
_EMPTY_MATCH_SAMPLE = "The cat's 12 hats, 3.5 ÉTÉ!\n\n  \t\r\n x\u00e9\u4eba\U0001f600 'll _-_ \u0661\u0662 end"


def _shown(regex_text):
    return repr(regex_text) if len(regex_text) <= 200 else repr(regex_text[:200]) + "..."


def split(text, pattern):
    """The pieces of ``text`` under ``pattern``, as ``regex`` finds them (the oracle).

    ``pattern=None`` means no pre-tokenization: the whole text is one piece. Text between the
    matches of a custom regex is kept as pieces of its own, so ``"".join(pieces) == text``.

    Example:
        >>> split("don't stop", "cl100k")
        ['don', "'t", ' stop']
        >>> split("hello, world", r"\\w+")
        ['hello', ', ', 'world']
    """
    if pattern is None:
        return [text] if text else []
    return [text[begin:end] for begin, end in _spans(text, pattern)]


def pre_tokenize_str(text, pattern):
    """The pieces with their ``(start, end)`` character offsets, for debugging (like HF's).

    Example:
        >>> pre_tokenize_str("Call 911!", "gpt2")
        [('Call', (0, 4)), (' 911', (4, 8)), ('!', (8, 9))]
    """
    if pattern is None:
        return [(text, (0, len(text)))] if text else []
    return [(text[begin:end], (begin, end)) for begin, end in _spans(text, pattern)]


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
        start = newline
        while start > 0 and text[start - 1] in WHITESPACE:
            start -= 1
        # the other newlines of this run have its start and end too, so neither rule can hold
        # at them if it fails here: the search goes on before the run (rescanning the run for
        # each of its newlines was quadratic: 10 M newlines did not train in 300 s)
        position = start
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
