r"""HF tokenizers' regex dialect (Oniguruma, Ruby syntax) and the ``regex`` module's, translated
both ways. The only place bytepair translates a pattern for or from HF.

- ``hf_regex``: a pattern rewritten so that Oniguruma reads it as tiktoken and the ``regex``
  module do; used when writing a ``tokenizer.json`` (``export.py``), when recognising a named
  pattern in one (``huggingface.py``), and by the benchmark's HF pre-tokenizer.
- ``from_hf_regex``: a ``tokenizer.json``'s ``Split`` regex rewritten so that the ``regex``
  module splits as Oniguruma does; used when reading one (``huggingface.py``).

Where the two engines read the same text differently (measured by splitting every code point
through HF tokenizers 0.23 and regex 2026.12; tests/peers/test_against_hf.py keeps each case):

=======================  ===================================  ================================
Oniguruma                means                                the ``regex`` module reads
=======================  ===================================  ================================
``\w`` ``\b``            Alphabetic, M, Nd, Pc; outside a     the same and U+200C U+200D
                         set also ``²³¹¼½¾``                  (Join_Control), never ``²``
``^`` ``$``              start / end of any line              start / end of the text
``\Z``                   the end, or before a final newline   the end only
``(?m)``                 ``.`` matches a newline              ``^`` ``$`` match at lines
``X{n,m}+``              ``(?:X{n,m})+``                      a possessive ``X{n,m}``
``\h`` ``\H``            a hexadecimal digit                  horizontal space
``(?i)``                 full case folding (ß is ss), none    simple folding, in ``\p{..}``
                         in ``\p{..}`` and other classes      too (``\p{Lu}`` takes "a")
``[[:digit:]]``          Unicode's digits (``\p{Nd}``)        ASCII digits (alnum too)
``[[:punct:]]``          ``\p{P}`` and ``\p{S}``              another set
``[a[b]]`` ``[a&&b]``    a union, an intersection             literal "[" and "&"
``\p{Word}`` ``XDigit``  as ``\w``; ASCII hex digits          Unicode's properties
=======================  ===================================  ================================

``\d``, ``\s``, ``.``, ``\p{L}`` and the other categories and scripts mean the same in both.
``from_hf_regex`` refuses what it does not translate (``(?x)``, ``\k<..>``, ``(?~..)``, ...)
rather than read it otherwise.

NOTE: each engine keeps its own Unicode tables, so characters assigned after HF's (Unicode 16)
may split differently in a custom pattern. Under ``(?i)`` the regex module folds the Turkish
dotted and dotless I with i and I, Oniguruma does not: the translation keeps them apart, but
not Oniguruma's match of "İ" with "i" and U+0307 (two characters).
"""

from __future__ import annotations

import re
import unicodedata

import regex

from ..errors import FormatError

# An atom (a \p{..} class, an escape, a [...] set or a plain character) with a possessive
# interval after it, e.g. cl100k's \p{N}{1,3}+.
_POSSESSIVE_INTERVAL = re.compile(r"(\\[pP]\{\w+\}|\\.|\[(?:\\.|[^\]\\])*\]|[^\\()\[\]{}|])(\{\d+(?:,\d*)?\})\+")
_LEFT_OVER = re.compile(r"(?<!\\)\{\d+(?:,\d*)?\}\+")


def tiktoken_regex(pattern: str) -> str:
    r"""``pattern`` for a ``.tiktoken`` file's ``pat_str``, or ``FormatError`` where tiktoken's
    engine cannot read it as the ``regex`` module does: full case folding (the ``f`` flag, which
    ``from_hf_regex`` writes for HF's ``(?i)``) it does not have and refuses to load.

    Example:
        >>> tiktoken_regex(r"(?i:'s|'t)|\w+")
        "(?i:'s|'t)|\\w+"
    """
    for flags in _FLAGS.finditer(pattern):
        if "f" in flags.group(0)[2:]:
            raise FormatError(
                f"pattern {pattern[:200]!r} uses {flags.group(0)!r} (at character {flags.start()}): full case "
                "folding (an HF tokenizer.json's (?i) reads so), which tiktoken does not have; save it as an HF "
                "folder instead (save_pretrained)"
            )
    return pattern


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
    return _onig_spelling(rewritten)


def portable_regex(pattern: str) -> str:
    r"""A custom ``pattern`` (the ``regex`` module's syntax) spelled so that Oniguruma (HF) and
    fancy-regex (tiktoken) read it as the ``regex`` module does; for the files bytepair writes.

    ``^`` becomes ``\A`` and ``$`` ``(?=\n?\z)`` (both engines read them at every line, the
    ``regex`` module at the text's ends), ``\Z`` becomes ``\z`` (Oniguruma's also stops before a
    final newline); a ``[``, ``&`` or ``~`` inside a set is escaped (both engines read nested
    sets and ``&&`` / ``~~`` operators there, the ``regex`` module literal characters).
    ``\U0001F600`` and ``\N{name}`` become ``\x{1F600}``, ``\p{^L}`` ``\P{L}``, and
    ``(?P<name>`` ``(?<name>``, which both engines read. Raises ``FormatError`` naming what
    they read otherwise and this does not rewrite: ``\h``, ``\m``, ``\M``, ``\X``, ``\L``,
    ``\g``, ``(?P=``, ``(?P>``, a ``\p{..}`` under ``(?i)``, POSIX classes (``[[:alpha:]]``),
    ``--`` in a set and the flags m, s, x, a, L, u, V.

    Example:
        >>> portable_regex(r"^\w+|\s+$|[[a]")
        '\\A\\w+|\\s+(?=\\n?\\z)|[\\[a]'
        >>> portable_regex(r"[\U0001F300-\U0001FAFF]+|\p{^L}+|(?P<word>\w+)")
        '[\\x{1F300}-\\x{1FAFF}]+|\\P{L}+|(?<word>\\w+)'
    """
    out, at, in_set = [], 0, False
    # whether (?i) holds, per open group; the regex module's (?i) anywhere holds everywhere
    caseless = [any(flags.group(3) == ")" and "i" in flags.group(1) for flags in _FLAGS.finditer(pattern))]

    def refuse(construct, why):
        raise FormatError(
            f"pattern {pattern[:200]!r} uses {construct!r} (at character {at}), which {why}; the file would "
            "split otherwise than bytepair does. Rewrite the pattern without it"
        )

    while at < len(pattern):
        char = pattern[at]
        if char == "\\" and at + 1 < len(pattern):
            escape = pattern[at : at + 2]
            if escape in ("\\h", "\\H"):
                refuse(escape, "HF reads as a hexadecimal digit and tiktoken does not take")
            if escape[1] in _OWN_ESCAPES:
                refuse(escape, _OWN_ESCAPES[escape[1]])
            if escape in ("\\p", "\\P"):
                name = regex.match(r"\{(\^?)([^}]*)\}|()(\w)", pattern[at + 2 :])
                if name is None:
                    refuse(escape, "has no {name} after it")
                if caseless[-1]:
                    refuse(
                        escape + name.group(0),
                        "under (?i) the regex module reads with case folded (\\p{Lu} takes 'a'), HF and "
                        "tiktoken otherwise",
                    )
                negated = (escape == "\\P") != bool(name.group(1))  # \p{^L} is \P{L}
                out.append(f"\\{'P' if negated else 'p'}{{{name.group(2) or name.group(4)}}}")
                at += 2 + name.end()
                continue
            code = _CODE_POINT.match(pattern, at)
            if code:  # neither engine reads \U0001F600 or \N{name}; both read \x{1F600}
                try:
                    point = int(code.group(1), 16) if code.group(1) else ord(unicodedata.lookup(code.group(2)))
                except KeyError:
                    refuse(code.group(0), "names no character")
                out.append(f"\\x{{{point:X}}}")
                at = code.end()
                continue
            out.append("\\z" if escape == "\\Z" and not in_set else escape)
            at += 2
            continue
        if in_set:
            if pattern.startswith("[:", at):
                refuse(pattern[at : pattern.find("]", at) + 1] or "[:", "HF and tiktoken read with other characters")
            if pattern.startswith("--", at):
                refuse("--", "tiktoken reads as a set difference")
            out.append("\\" + char if char in "[&~" else char)
            in_set = char != "]"
            at += 1
            continue
        flags = _FLAGS.match(pattern, at) if char == "(" else None
        if flags and set(flags.group(1) + (flags.group(2) or "")) & set("msxaLuV"):
            refuse(
                flags.group(0), "HF or tiktoken read with another meaning (write [\\s\\S] for (?s)., \\n for line ends)"
            )
        if pattern.startswith(("(?P=", "(?P>"), at):
            refuse(pattern[at : at + 4], "HF reads as no group at all")
        if pattern.startswith("(?P<", at):  # a named group, as Oniguruma spells it too
            out.append("(?<")
            at += 4
            caseless.append(caseless[-1])
            continue
        if char == "(" and not (flags and flags.group(3) == ")"):
            on, off = (flags.group(1), flags.group(2) or "") if flags else ("", "")
            caseless.append((caseless[-1] or "i" in on) and "i" not in off)
        elif char == ")" and len(caseless) > 1:
            caseless.pop()
        out.append({"^": "\\A", "$": "(?=\\n?\\z)"}.get(char, char))
        at += 1
        if char == "[":
            in_set = True
            for literal in ("^", "]"):  # "[^]..." and "[]...": a ] first in a set is itself
                if pattern.startswith(literal, at):
                    out.append(literal)
                    at += 1
    return "".join(out)


# The regex module's own escapes, which tiktoken refuses and HF reads otherwise or not at all.
_OWN_ESCAPES = {
    "m": "HF does not take and tiktoken refuses (the regex module's start of a word)",
    "M": "HF does not take and tiktoken refuses (the regex module's end of a word)",
    "X": "tiktoken refuses and HF cuts by older grapheme rules",
    "L": "HF and tiktoken do not take (the regex module's named lists)",
    "g": "HF reads as a subroutine call, not a backreference",
}
_CODE_POINT = re.compile(r"\\U([0-9A-Fa-f]{8})|\\N\{([^}]*)\}")


# The zero-width non-joiner and joiner: word characters for the regex module and tiktoken
# (Unicode's \w has Join_Control), not for Oniguruma, whose \w left them out of Persian and
# Malayalam words (one of 93 UDHR texts gave other ids through a custom \w+ pattern).
_JOINERS = "\\u200c\\u200d"


def _onig_spelling(pattern):
    r"""``\w`` and ``\W`` written out with the joiners, in a set or not (Oniguruma takes a set
    inside a set), and the regex module's ``f`` flag left out of flag groups (its full case
    folding is the only one Oniguruma has: ``from_hf_regex`` writes ``(?i)`` as ``(?fi)``);
    every other character and escape as it is."""
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
        flags = None if in_set or char != "(" else _FLAGS.match(pattern, at)
        if flags and "f" in flags.group(0):
            written = flags.group(0).replace("f", "")
            out.append("" if written in ("(?)", "(?-)") else written.replace("-:", ":"))
            at = flags.end()
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


# Oniguruma's \w in a set (and [[:word:]]), and outside one, where code points below 256 are
# looked up in a Latin-1 table that also counts the superscripts 1-3 and the fractions 1/4, 1/2
# and 3/4 as word characters (measured on every code point). Its \W in a set is the regex
# module's \W with the joiners.
_WORD_IN_SET = r"\p{Alpha}\p{M}\p{Nd}\p{Pc}"
_WORD = _WORD_IN_SET + r"\u00b2\u00b3\u00b9\u00bc-\u00be"
_NOT_WORD_IN_SET = r"\W" + _JOINERS
_HEX, _NOT_HEX = "0-9A-Fa-f", r"\P{AHex}"
_PUNCT = r"\p{P}\p{S}"
# Oniguruma's classes as the content of a regex-module set, (positive, negated); None for
# a name that the regex module reads as Oniguruma does, and a negated None that it cannot put
# in a set. POSIX classes by name; \p{..} names by their loose spelling (Oniguruma ignores
# case, spaces, "_" and "-"), only those the regex module reads otherwise.
_POSIX_CLASSES = {
    "alnum": (r"\p{Alnum}", r"\P{Alnum}"),
    "digit": (r"\p{Nd}", r"\P{Nd}"),
    "punct": (_PUNCT, None),
    "word": (_WORD_IN_SET, _NOT_WORD_IN_SET),
    "xdigit": (_HEX, _NOT_HEX),
    **dict.fromkeys(("alpha", "ascii", "blank", "cntrl", "graph", "lower", "print", "space", "upper")),
}
_PROPERTIES = {
    "word": (_WORD_IN_SET, _NOT_WORD_IN_SET),
    "xdigit": (_HEX, _NOT_HEX),
    "posixpunct": (_PUNCT, None),
}
# Names the regex module reads as other properties (IDC, VS), measured like the rest.
_REFUSED_PROPERTIES = ("idc", "vs")
# Escapes that mean the same in both engines outside a set.
_SAME_ESCAPES = set("dDsSntrfva") | set("AzGKR")
# Escapes that stand for one character ("\b" only in a set: a word boundary outside one).
_CHAR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "e": "\x1b", "b": "\b"}
_CLASS_ESCAPES = tuple("wWhHpPdDsS")
_INTERVAL = re.compile(r"\{(?:\d+(?:,\d*)?|,\d+)\}")
_FLAGS = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")
# Groups that mean the same in both: capturing, non-capturing, atomic, lookaround, named.
_GROUP = re.compile(r"\((?:\?(?:[:>=!]|<[=!]|<[A-Za-z_]\w*>))?")
_SET_SPECIALS = set("\\]-^[")
_SPECIALS = set(".^$*+?{}[]\\|()")
# Under (?i) Oniguruma folds case in a set's classes otherwise than the regex module (\p{L}
# takes U+0345, \p{Lt} no "A", [[:ascii:]] takes "ſ"); these POSIX classes have no case.
_CASELESS_POSIX = ("blank", "cntrl", "digit", "space", "word", "xdigit")
_FOLDED_CLASS = "in a set under (?i) Oniguruma case-folds otherwise than the regex module"
# Under (?i) Oniguruma folds I with i only; the regex module also with the Turkish dotted
# and dotless I (U+0130, U+0131), so these four are decided apart.
_TURKISH_I = "iI\u0130\u0131"


def from_hf_regex(pattern: str) -> str:
    r"""``pattern`` as HF tokenizers (Oniguruma) reads it, written for the ``regex`` module.

    Raises ``FormatError`` naming a construct that Oniguruma reads in a way this does not
    translate (the table in the module docstring lists what it does).

    Example:
        >>> from_hf_regex(r"\p{N}{1,3}+|\s+$")
        '(?:\\p{N}{1,3})+|\\s+(?=\\n|\\z)'
    """
    return _OnigReader(pattern).read()


class _OnigReader:
    """One left-to-right pass over an Oniguruma pattern; each method reads one construct at
    ``self.at`` and returns its ``regex`` text."""

    def __init__(self, pattern):
        self.pattern, self.at = pattern, 0

    def read(self):
        out = self.alternation(ignore_case=False, dotall=False)
        while self.at < len(self.pattern):  # an unbalanced ")": the regex module says so
            self.at += 1
            out += ")" + self.alternation(ignore_case=False, dotall=False)
        return out

    def refuse(self, construct, why):
        start = self.pattern.rfind(construct, 0, self.at + len(construct))  # read or about to be
        raise FormatError(
            f"pattern {self.pattern[:200]!r} uses {construct!r} (at character {max(start, 0)}), which {why}; "
            "bytepair cannot split as HF does with it. Rewrite the pattern without it"
        )

    def peek(self, count=1):
        return self.pattern[self.at : self.at + count]

    def alternation(self, ignore_case, dotall):
        """Up to the ")" that closes the current group (not read) or the end."""
        out = []
        while self.at < len(self.pattern) and self.peek() != ")":
            if self.peek() == "|":
                out.append("|")
                self.at += 1
                continue
            flags = _FLAGS.match(self.pattern, self.at)
            if flags and flags.group(3) == ")":
                # subtle: Oniguruma reads a(?i)b|c as a(?i:b|c): the flags hold to the end
                # of the group, its later alternatives included
                self.at = flags.end()
                ignore_case, dotall, opener = self.flags(flags, ignore_case, dotall)
                out.append(opener + self.alternation(ignore_case, dotall) + ")")
                break
            out.append(self.quantified(self.atom(ignore_case, dotall)))
        return "".join(out)

    def flags(self, match, ignore_case, dotall):
        """The flags after ``(?on-off`` and the regex module's group opener for them."""
        on, off = match.group(1), match.group(2) or ""
        unknown = sorted(set(on + off) - set("im"))
        if unknown:
            self.refuse(match.group(0), f"sets option {unknown[0]!r} (bytepair translates only i and m)")
        # Oniguruma's m is the regex module's s: it is translated where "." is read
        dotall = ("m" in on or dotall) and "m" not in off
        if "i" in on + off:
            ignore_case = "i" in on and "i" not in off
            # full case folding, as Oniguruma's: (?i)ss matches "ß"
            return ignore_case, dotall, "(?fi:" if ignore_case else "(?-i:"
        return ignore_case, dotall, "(?:"

    def quantified(self, atom):
        """``atom`` with the quantifiers after it; Oniguruma applies a second quantifier to
        the quantified atom (``X{2}+`` is ``(?:X{2})+``), the regex module refuses or reads a
        possessive one."""
        count = 0
        while True:
            interval = _INTERVAL.match(self.pattern, self.at)
            if interval:
                quantifier = interval.group(0)
            elif self.peek() and self.peek() in "*+?":
                quantifier = self.peek()
            else:
                return atom
            self.at += len(quantifier)
            if count:
                atom = f"(?:{atom})"
            atom += quantifier
            # a lazy "?" after any quantifier, a possessive "+" after * + ? only
            if self.peek() == "?" or (self.peek() == "+" and not interval):
                atom += self.peek()
                self.at += 1
            count += 1

    def atom(self, ignore_case, dotall):
        char = self.peek()
        if char == "(":
            return self.group(ignore_case, dotall)
        if char == "[":
            return self.set(ignore_case)
        self.at += 1
        if char == "\\":
            return self.escape(ignore_case)
        if char == ".":
            return r"[\s\S]" if dotall else "."
        if char == "^":
            return r"(?<![^\n])"
        if char == "$":
            return r"(?=\n|\z)"
        return self.literal(char, ignore_case) if char in _TURKISH_I else char

    def group(self, ignore_case, dotall):
        if self.peek(3) == "(?#":  # a comment, the same in both
            start, end = self.at, self.pattern.find(")", self.at)
            self.at = len(self.pattern) if end < 0 else end + 1
            return self.pattern[start : self.at]
        flags = _FLAGS.match(self.pattern, self.at)
        if flags:  # (?i:...); (?i) alone is read by alternation
            self.at = flags.end()
            ignore_case, dotall, opener = self.flags(flags, ignore_case, dotall)
        else:
            opener = _GROUP.match(self.pattern, self.at).group(0)
            if opener == "(" and self.peek(2) == "(?":
                self.refuse(self.peek(3), "is a kind of group that the regex module lacks or reads otherwise")
            self.at += len(opener)
        body = self.alternation(ignore_case, dotall)
        if self.peek() != ")":
            return opener + body  # unclosed: the regex module says so
        self.at += 1
        return opener + body + ")"

    def property(self, negated):
        r"""``\p{..}`` or ``\P{..}`` just read: (negated, name, Oniguruma's meaning or None)."""
        end = self.pattern.find("}", self.at)
        if self.peek() != "{" or end < 0:
            self.refuse(self.pattern[self.at - 2 : self.at + 1], "has no {name}")
        name = self.pattern[self.at + 1 : end]
        self.at = end + 1
        if name.startswith("^"):
            negated, name = not negated, name[1:]
        loose = re.sub(r"[\s_-]", "", name).lower()
        if loose in _REFUSED_PROPERTIES:
            self.refuse(f"\\p{{{name}}}", "the regex module reads as another property")
        return negated, name, _PROPERTIES.get(loose)

    def escape(self, ignore_case):
        """After a "\\" outside a set."""
        char = self.peek()
        self.at += 1
        if char in ("w", "W"):
            return _case_sensitive(f"[{'^' if char == 'W' else ''}{_WORD}]", ignore_case)
        if char in ("b", "B"):
            word = _case_sensitive(f"[{_WORD}]", ignore_case)
            if char == "b":
                return f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"
            return f"(?:(?<={word})(?={word})|(?<!{word})(?!{word}))"
        if char in ("h", "H"):
            return f"[{'^' if char == 'H' else ''}{_HEX}]"
        if char in ("p", "P"):
            # subtle: outside a set Oniguruma does not fold case in a property (under (?i)
            # \p{Lu} takes no "a"), in a set it does, as the regex module does in both
            negated, name, known = self.property(char == "P")
            if known:
                text = f"[{'^' if negated else ''}{_WORD if known[0] == _WORD_IN_SET else known[0]}]"
            else:
                text = f"\\{'P' if negated else 'p'}{{{name}}}"
            return _case_sensitive(text, ignore_case)
        if char == "Z":
            return r"(?=\n?\z)"
        if char == "N":
            return r"[^\n]"
        if char == "O":
            return r"[\s\S]"
        if char == "X":
            self.refuse("\\X", "cuts grapheme clusters by older rules than the regex module (Oriya differs)")
        if ignore_case and char in ("u", "x"):
            return self.literal(self.char_escape(char), ignore_case)
        if char in _SAME_ESCAPES or char.isdigit() or not char.isalnum():
            return "\\" + char
        return _literal(self.char_escape(char), _SPECIALS)

    def literal(self, char, ignore_case):
        """A character outside a set; under (?i) the Turkish I's fold as in Oniguruma."""
        if ignore_case and char in _TURKISH_I:
            return "(?-i:[iI])" if char in "iI" else f"(?-i:{char})"
        return _literal(char, _SPECIALS)

    def char_escape(self, char):
        """The character that ``\\<char>...`` (just read) stands for."""
        if char in _CHAR_ESCAPES:
            return _CHAR_ESCAPES[char]
        digits = None
        if char == "x" and self.peek() == "{":
            digits = re.match(r"\{()([0-9A-Fa-f]{1,8})\}", self.pattern[self.at :])
        elif char == "x":
            digits = re.match(r"()([0-9A-Fa-f]{1,2})", self.pattern[self.at :])
        elif char == "u":
            digits = re.match(r"()([0-9A-Fa-f]{4})", self.pattern[self.at :])
        if digits is None or int(digits.group(2), 16) > 0x10FFFF:
            self.refuse("\\" + char, "has no translation to the regex module")
        self.at += len(digits.group(0))
        return chr(int(digits.group(2), 16))

    def set(self, ignore_case):
        r"""A ``[...]`` set as one regex-module set (Oniguruma's set inside a set is a union);
        with a complemented set inside (as ``hf_regex`` writes ``\W``), the alternation or the
        lookaheads that mean it."""
        negated, items, complements = self.set_items(ignore_case)
        if complements and ignore_case:
            self.refuse("[^", "inside a set under (?i) has no translation to the regex module")
        if complements and not negated:  # any of the parts
            parts = ([f"[{items}]"] if items else []) + [f"[^{part}]" for part in complements]
            return f"(?:{'|'.join(parts)})"
        if complements:  # none of the items, and each complemented set's content
            tests = ([f"(?![{items}])"] if items else []) + [f"(?=[{part}])" for part in complements[:-1]]
            return f"(?:{''.join(tests)}[{complements[-1]}])"
        text = f"[{'^' if negated else ''}{items}]"
        if not ignore_case:
            return text
        # Oniguruma folds i with I only: each of the four is in the set when it, or for i and
        # I its pair, is in it case-sensitively
        inside = regex.compile(f"[{items}]")
        member = {char: bool(inside.match(char)) for char in _TURKISH_I}
        member["i"] = member["I"] = member["i"] or member["I"]
        taken = [char for char in _TURKISH_I if member[char] != negated]
        folded = regex.compile(f"(?fi){text}")
        if taken == [char for char in _TURKISH_I if folded.match(char)]:
            return text
        others = f"(?![{_TURKISH_I}]){text}"
        return f"(?:{others}|(?-i:[{''.join(taken)}]))" if taken else others

    def set_items(self, ignore_case):
        """At "[": (negated, the set's content for the regex module, the contents of the
        complemented sets inside it)."""
        self.at += 1
        negated = self.peek() == "^"
        self.at += negated
        items, complements = [], []
        first = True
        while self.peek() != "]" or first:
            if not self.peek():
                self.refuse("[", "is not closed")
            if self.peek(2) == "&&":
                self.refuse("&&", "intersects sets, and the regex module reads it as two '&'")
            posix = re.match(r"\[:(\^?)(\w+):\]", self.pattern[self.at :])
            if posix:
                self.at += len(posix.group(0))
                if posix.group(2) not in _POSIX_CLASSES:
                    self.refuse(posix.group(0), "is not a POSIX class Oniguruma knows")
                if ignore_case and posix.group(2) not in _CASELESS_POSIX:
                    self.refuse(posix.group(0), _FOLDED_CLASS)
                items.append(self.class_text(posix.group(0), bool(posix.group(1)), _POSIX_CLASSES[posix.group(2)]))
            elif self.peek() == "[":
                nested, content, inner = self.set_items(ignore_case)
                if inner:
                    self.refuse("[", "holds a complemented set two sets deep")
                (complements if nested else items).append(content)
            elif self.peek() == "\\" and self.peek(2)[1:] in _CLASS_ESCAPES:
                items.append(self.class_escape(ignore_case))
            else:
                low = _literal(self.set_char(), _SET_SPECIALS)
                if self.peek() == "-" and self.peek(2)[1:] not in ("]", ""):
                    self.at += 1
                    if self.peek() == "[" or self.peek() == "\\" and self.peek(2)[1:] in _CLASS_ESCAPES:
                        self.refuse(self.peek(2), "ends a range")
                    low += "-" + _literal(self.set_char(), _SET_SPECIALS)
                items.append(low)
            first = False
        self.at += 1
        return negated, "".join(items), complements

    def class_text(self, written, negated, meaning):
        """A class in a set: ``meaning`` (positive, negated) or, if None, ``written``."""
        if meaning is None:
            return written
        if meaning[negated] is None:
            self.refuse(written, "negated in a set has no regex-module set to stand for it")
        return meaning[negated]

    def class_escape(self, ignore_case):
        """A class escape in a set (\\w, \\p{..}, ...)."""
        char = self.peek(2)[1]
        if ignore_case and char in ("p", "P"):
            self.refuse(self.pattern[self.at : self.pattern.find("}", self.at) + 1] or self.peek(2), _FOLDED_CLASS)
        self.at += 2
        if char in ("w", "W"):
            return (_WORD_IN_SET, _NOT_WORD_IN_SET)[char == "W"]
        if char in ("h", "H"):
            return (_HEX, _NOT_HEX)[char == "H"]
        if char in ("p", "P"):
            negated, name, known = self.property(char == "P")
            written = f"\\{'P' if negated else 'p'}{{{name}}}"
            return self.class_text(written, negated, known)
        return "\\" + char  # \d \D \s \S mean the same

    def set_char(self):
        """One character of a set (a literal or an escape that stands for one)."""
        char = self.peek()
        self.at += 1
        if char != "\\":
            return char
        char = self.peek()
        self.at += 1
        if not char.isalnum():
            return char
        if char in "01234567":  # octal
            digits = re.match(r"[0-7]{0,2}", self.pattern[self.at :]).group(0)
            self.at += len(digits)
            return chr(int(char + digits, 8))
        return self.char_escape(char)


def _case_sensitive(text, ignore_case):
    """Oniguruma does not fold case in classes (\\p{Lu} stays upper case), the regex module does."""
    return f"(?-i:{text})" if ignore_case else text


def _literal(char, specials):
    """``char`` as a pattern's text: escaped where it is special, by code where it is unprintable."""
    if char in specials:
        return "\\" + char
    if char.isprintable() or ord(char) > 0xFFFF:
        return char
    return f"\\u{ord(char):04x}"
