"""Which Unicode version each emulated library's character classes follow, on every code point.

tiktoken matches its patterns with Rust's regex crates and HF tokenizers with Oniguruma, each
with the Unicode tables compiled into it; bytepair's scanner gives a vocabulary loaded from one
of them that library's version (``patterns.UNICODE_BY_RULE``, tables generated into
engine/unicode_tables.hpp). Oracle: the peer itself, asked about each class (``\\p{L}``,
``\\p{N}``, ``\\s``, o200k's two case classes, the contraction letters under ``(?i:...)``) for
every code point but the surrogates. The end-to-end checks (ids on every assigned code point)
are in test_against_tiktoken.py and test_against_hf.py.
"""

from __future__ import annotations

import pytest

from bytepair import _engine
from bytepair.patterns import UNICODE_BY_RULE

tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")

pytestmark = [pytest.mark.peers, pytest.mark.slow]

# class -> the regex for it, in the syntax both peers read
CLASSES = {
    "L": r"\p{L}",
    "N": r"\p{N}",
    "S": r"\s",
    "upper": r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",
    "lower": r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]",
    "fold": r"(?i:[sdmtlvre])",  # the letters of 's 't 'm 'd 'll 've 're
}
CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
STEP = 1 << 16


def tiktoken_members(class_regex):
    """The code points tiktoken's regex puts in ``class_regex``.

    How: "a" + c is one piece under ``a(?:class)|[\\s\\S]`` exactly when c is in the class, and
    a vocabulary of the 256 bytes plus "a" + each byte merges "a" with c's first byte only
    inside one piece.
    """
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"a" + bytes([b]): 256 + b for b in range(256)})
    encoding = tiktoken.Encoding(
        "probe", pat_str=f"a(?:{class_regex})|[\\s\\S]", mergeable_ranks=ranks, special_tokens={}
    )
    members = set()
    for low in range(0, len(CODE_POINTS), STEP):
        chunk = CODE_POINTS[low : low + STEP]
        ids = encoding.encode_ordinary("".join("a" + chr(c) for c in chunk))
        k = 0
        for c in chunk:
            width = len(chr(c).encode("utf-8"))
            if ids[k] >= 256:
                members.add(c)
                k += width  # "a"+first byte, then the other bytes
            else:
                k += 1 + width
        assert k == len(ids)
    return members


def hf_members(class_regex):
    """The code points HF tokenizers' regex (Oniguruma) puts in ``class_regex``: those that a
    ``Split`` with behaviour ``removed`` leaves out of its pieces."""
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(class_regex), behavior="removed")
    members = set()
    for low in range(0, len(CODE_POINTS), STEP):
        chunk = CODE_POINTS[low : low + STEP]
        text = "".join(chr(c) for c in chunk)
        kept = bytearray(len(chunk))
        for piece, (start, end) in split.pre_tokenize_str(text):
            assert text[start:end] == piece  # offsets count characters
            kept[start:end] = b"\x01" * (end - start)
        members.update(c for c, k in zip(chunk, kept) if not k)
    return members


def ours(unicode, name):
    flags = _engine.char_flags(unicode)
    bit = _engine.CHAR_CLASSES[name]
    members = {c for c in CODE_POINTS if flags[c] & bit}
    if name == "fold":  # the scanner folds ASCII by lower-casing, without a flag
        members |= {ord(x) for x in "sdmtlvreSDMTLVRE"}
    return members


@pytest.mark.parametrize("name", list(CLASSES))
@pytest.mark.parametrize(
    "rule, members",
    [pytest.param("tiktoken", tiktoken_members, id="tiktoken"), pytest.param("hf", hf_members, id="hf")],
)
def test_peer_classes_are_the_scanners_tables(rule, members, name):
    unicode = UNICODE_BY_RULE[rule]
    theirs = members(CLASSES[name])
    mine = ours(unicode, name)
    only_theirs = sorted(theirs - mine)
    only_ours = sorted(mine - theirs)
    shown = lambda codes: ", ".join(f"U+{c:04X}" for c in codes[:10])  # noqa: E731
    assert not only_theirs and not only_ours, (
        f"{rule}'s {CLASSES[name]} is not Unicode {unicode}'s: {len(only_theirs)} code points only in "
        f"{rule}'s ({shown(only_theirs)}), {len(only_ours)} only in ours ({shown(only_ours)}); "
        "regenerate engine/unicode_tables.hpp for the peer's version (tools/gen_unicode_tables.py)"
    )
