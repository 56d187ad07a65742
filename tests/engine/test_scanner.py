"""The named patterns and the compiled scanner that implements them.

Oracles: tiktoken's own source for the pattern strings, Meta's ``tokenizer.json`` for Llama 3's,
the `regex` module (``patterns.split``) for every piece boundary, and tiktoken / HF tokenizers
for how those libraries split real text.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair import _engine, patterns
from bytepair.errors import PatternError
from datafiles import data_file

NAMES = ["gpt2", "cl100k", "o200k", "llama3"]

# Characters where the patterns differ or where a scanner could go wrong, so that random
# text hits them often: every \s character (and near misses: \x1c-\x1f, ZWSP, BOM), CR/LF,
# apostrophes and contraction letters (with U+017F LONG S, which (?i:s) matches), the
# o200k classes (Lu, Ll, Lt, Lm, Lo, Mn/Mc marks), digits and numbers of other scripts,
# slashes, emoji and lone surrogates.
TRICKY = list(
    " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000"
    "\u200b\u200d\ufeff\x00\x7f"
    "'\"/\\.,!?-_()[]{}<>@#$%^&*+=|~`"
    "sStTdDmMlLvVrReE\u017f"
    "aZ\u01c5\u02b0\u3005\u4e2d\u3042\ud55c\u0627\u00df\u0130\u0131\u212a"
    "\u0301\u0308\u093f\u0e31"
    "19\u0663\u096a\u00bd\u2167\u00b2"
) + ["\U0001f600", "\U0001f3fd", "\ud800", "\udfff"]

tricky_text = st.lists(
    st.one_of(st.sampled_from(TRICKY), st.sampled_from(TRICKY), st.sampled_from(TRICKY), st.characters()),
    max_size=40,
).map("".join)

NAMED_STRINGS = {
    "empty": "",
    "one char": "a",
    "one space": " ",
    "cjk": "人人生而自由，在尊严和权利上一律平等。",
    "emoji": "hi 😀😀 👍🏽 ok",
    "code": "def f(x):\n    return x**2  # square\n\n\nprint(f(3))\r\n",
    "crlf runs": "a\r\n\r\n\r\nb\n\n\r\r\n c \r\n",
    "spaces then word": "  \n\n  x",
    "trailing spaces": "end   ",
    "trailing newline": "end\n",
    "contractions": "don't I'LL we'Re they've ſ's 'S",
    "other digits": "١٢٣٤ ४५६७ 12345 ½²",
    "mixed case": "HELLOworld helloWorld ǅungla McDonald's",
    "marks": "e\u0301 \u0301x a\u0308\u0308b हिन्दी",
    "slashes": "a//b\n/c http://x.org/ //\n/",
    "odd whitespace": "a\x1cb\x1fc\x85d\u2028e\u2029f\xa0g\u3000h",
}


# -- the pattern strings -------------------------------------------------------------------


@pytest.mark.peers
def test_patterns_are_tiktokens_own(monkeypatch):
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    # the constructors would download the ranks; only their pattern strings are wanted here
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: {})
    monkeypatch.setattr(openai_public, "data_gym_to_mergeable_bpe_ranks", lambda *a, **k: {})
    assert patterns.PATTERNS["gpt2"] == openai_public.gpt2()["pat_str"]
    assert patterns.PATTERNS["gpt2"] == openai_public.r50k_base()["pat_str"]
    assert patterns.PATTERNS["cl100k"] == openai_public.cl100k_base()["pat_str"]
    assert patterns.PATTERNS["o200k"] == openai_public.o200k_base()["pat_str"]
    assert patterns.PATTERNS["cl100k"].endswith(r"|\s++$|\s*[\r\n]|\s+(?!\S)|\s")


@pytest.mark.data
def test_llama3_pattern_is_metas_own():
    config = json.loads(data_file("vocab", "hf", "llama3", "tokenizer.json").read_text("utf-8"))
    split_step = config["pre_tokenizer"]["pretokenizers"][0]
    assert split_step["type"] == "Split"
    assert patterns.PATTERNS["llama3"] == split_step["pattern"]["Regex"]


def test_resolve_names_aliases_and_custom_regexes():
    assert patterns.resolve_pattern("gpt4") == ("cl100k", patterns.PATTERNS["cl100k"])
    assert patterns.resolve_pattern("o200k") == ("o200k", patterns.PATTERNS["o200k"])
    assert patterns.resolve_pattern(patterns.PATTERNS["llama3"]) == ("llama3", patterns.PATTERNS["llama3"])
    assert patterns.resolve_pattern(r"\w+|\s+") == (None, r"\w+|\s+")


@pytest.mark.parametrize("bad", ["(unclosed", "[z-a]", "", None, 3])
def test_bad_pattern_raises_pattern_error_naming_it(bad):
    with pytest.raises(PatternError) as error:
        patterns.resolve_pattern(bad)
    assert isinstance(error.value, ValueError)
    assert repr(bad) in str(error.value)


def test_split_gives_whole_matches_even_with_groups():
    assert patterns.split("abba", r"(a)|(b)") == ["a", "b", "b", "a"]
    # Empty matches carry no text and are dropped; the text between matches is kept as pieces.
    assert patterns.split("a b", r"\s*") == ["a", " ", "b"]
    assert patterns.split("", "gpt2") == []
    assert patterns.split("any text", None) == ["any text"]


def test_pre_tokenize_str_gives_offsets():
    assert patterns.pre_tokenize_str("Call 911!", "gpt2") == [
        ("Call", (0, 4)),
        (" 911", (4, 8)),
        ("!", (8, 9)),
    ]
    assert patterns.pre_tokenize_str("ab", None) == [("ab", (0, 2))]


# -- hand-derived pieces (read off the pattern strings, not from the code) ----------------


@pytest.mark.parametrize(
    "name, text, pieces",
    [
        ("gpt2", "don't I'LL", ["don", "'t", " I", "'", "LL"]),
        ("cl100k", "don't I'LL", ["don", "'t", " I", "'LL"]),
        ("cl100k", "  \n\n  x", ["  \n\n", " ", " x"]),
        ("llama3", "  \n\n  ", ["  \n\n", "  "]),
        ("cl100k", "  \n\n  ", ["  \n\n  "]),
        ("cl100k", "١٢٣٤", ["١٢٣", "٤"]),
        ("gpt2", "١٢٣٤", ["١٢٣٤"]),
        ("o200k", "HELLOworld helloWorld", ["HELLOworld", " hello", "World"]),
        ("o200k", "a//\n/c", ["a", "//\n/", "c"]),
        ("gpt2", "a\x1cb", ["a", "\x1c", "b"]),
    ],
)
def test_hand_derived_pieces(name, text, pieces):
    assert patterns.split(text, name) == pieces
    assert _engine.split(text, name) == pieces


# -- the scanner equals regex ---------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("label", list(NAMED_STRINGS))
def test_scanner_on_named_strings(name, label):
    text = NAMED_STRINGS[label]
    assert _engine.split(text, name) == patterns.split(text, name)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=400, deadline=None)
@given(text=tricky_text)
def test_scanner_equals_regex_on_tricky_text(name, text):
    pieces = _engine.split(text, name)
    assert pieces == patterns.split(text, name)
    assert "".join(pieces) == text  # every named pattern covers every character


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=200))
def test_scanner_equals_regex_on_any_text(name, text):
    assert _engine.split(text, name) == patterns.split(text, name)


@pytest.mark.parametrize("name", NAMES)
def test_scanner_reads_every_string_width(name):
    # the same text as 1-, 2- and 4-byte code point arrays inside Python
    for suffix in ["", "\u0100", "\U0001f600"]:
        text = "Hello  world's 123\r\n\tok" + suffix
        assert _engine.split(text, name) == patterns.split(text, name)


def test_scanner_rejects_unknown_pattern_and_non_text():
    with pytest.raises(ValueError, match="custom"):
        _engine.split("x", "not-a-pattern")
    with pytest.raises(TypeError):
        _engine.split(b"x", "gpt2")
    assert _engine.split("a b", None) == ["a b"]


# -- Unicode tables ------------------------------------------------------------------------------

NEW_IN_17 = "\U0003d000"  # a CJK ideograph (Lo) of Unicode 17.0, unassigned in 16.0


def test_unicode_tables_are_chosen_per_call():
    text = NEW_IN_17 + "'s"
    # 16.0: not a letter, so [^\s\p{L}\p{N}]+ takes it with the apostrophe, then "s" is a word
    assert _engine.split(text, "o200k", unicode="16.0.0") == [NEW_IN_17 + "'", "s"]
    assert _engine.split(text, "o200k") == patterns.split(text, "o200k")  # the `regex` module's
    with pytest.raises(ValueError, match="Unicode tables"):
        _engine.split("x", "gpt2", unicode="15.0")


def test_generated_tables_hold_the_versions_letters_and_digits():
    flags = _engine.char_flags("16.0.0")
    classes = _engine.CHAR_CLASSES
    assert flags[ord("a")] == classes["L"] | classes["lower"]
    assert flags[ord("A")] == classes["L"] | classes["upper"]
    assert flags[ord("7")] == classes["N"] and flags[ord(" ")] == classes["S"]
    assert flags[0x17F] & classes["fold"]  # LONG S: (?i:s) matches it
    assert flags[0x1C] == 0  # a control, not \s (str.isspace says it is)
    assert flags[0x1E5D0] & classes["L"]  # OL ONAL LETTER O, new in Unicode 16.0
    assert not flags[0x11DE0] & classes["N"]  # a digit new in 17.0
    assert not flags[ord(NEW_IN_17)] & classes["L"]


def test_tokenizers_take_their_libraries_tables():
    from bytepair import Tokenizer
    from bytepair.model import RankModel

    ranks = {bytes([b]): b for b in range(256)}
    text = NEW_IN_17 + "'s"
    for loaded in [RankModel(ranks, rule="tiktoken"), RankModel(ranks, rule="hf", pair_table={})]:
        assert Tokenizer(loaded, pattern="o200k").split(text) == [NEW_IN_17 + "'", "s"]
    trained = Tokenizer(mode="byte", pattern="o200k")
    assert trained.split(text) == patterns.split(text, "o200k")
    custom = Tokenizer(RankModel(ranks, rule="tiktoken"), pattern=r"\p{L}+|\P{L}")
    assert custom.split(NEW_IN_17 * 2) == patterns.split(NEW_IN_17 * 2, r"\p{L}+|\P{L}")  # `regex`


def test_pathological_runs():
    for text in ["x" * 100_000, " " * 100_000, "\n" * 50_000 + "x", "1" * 100_001, "." * 100_000]:
        for name in NAMES:
            assert _engine.split(text, name) == patterns.split(text, name)


# -- real text ------------------------------------------------------------------------------

UDHR_SAMPLE = ["eng", "cmn_hans", "arb", "hin", "jpn", "rus", "tha", "amh", "kor", "heb", "kat", "ell_polytonic"]


def udhr_text(key):
    return data_file("multilingual", "udhr", f"{key}.txt").read_text("utf-8")


@pytest.mark.data
@pytest.mark.parametrize("key", UDHR_SAMPLE)
def test_scanner_on_udhr_sample(key):
    text = udhr_text(key)
    for name in NAMES:
        assert _engine.split(text, name) == patterns.split(text, name), (key, name)


@pytest.mark.data
@pytest.mark.slow
def test_scanner_on_every_udhr_file():
    folder = data_file("multilingual", "udhr")
    files = sorted(folder.glob("*.txt"))
    assert len(files) > 400
    for path in files:
        text = path.read_text("utf-8")
        for name in NAMES:
            assert _engine.split(text, name) == patterns.split(text, name), (path.name, name)


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_scanner_on_wikitext_valid(name):
    text = data_file("wikitext-2", "valid.txt").read_text("utf-8")
    assert _engine.split(text, name) == patterns.split(text, name)


# -- against the libraries' own splitting ---------------------------------------------------

TIKTOKEN_FILES = {"gpt2": "r50k_base.tiktoken", "cl100k": "cl100k_base.tiktoken", "o200k": "o200k_base.tiktoken"}


@pytest.fixture(scope="module", params=["gpt2", "cl100k", "o200k"])
def tiktoken_encoding(request):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(data_file("vocab", TIKTOKEN_FILES[request.param])))
    encoding = tiktoken.Encoding(
        request.param, pat_str=patterns.PATTERNS[request.param], mergeable_ranks=ranks, special_tokens={}
    )
    return request.param, encoding


@pytest.mark.data
@pytest.mark.peers
def test_scanner_agrees_with_tiktoken(tiktoken_encoding):
    # tiktoken splits with its own regex engine, then merges inside each piece: its ids for
    # the text equal the concatenation of its ids for our pieces when the splits agree
    name, encoding = tiktoken_encoding
    texts = list(NAMED_STRINGS.values()) + [udhr_text(key) for key in UDHR_SAMPLE[:6]]
    for text in texts:
        pieces = _engine.split(text, name)
        per_piece = [i for piece in pieces for i in encoding.encode_ordinary(piece)]
        assert encoding.encode_ordinary(text) == per_piece


@pytest.mark.data
@pytest.mark.peers
def test_llama3_scanner_agrees_with_hf_tokenizers():
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_file(str(data_file("vocab", "hf", "llama3", "tokenizer.json")))
    texts = list(NAMED_STRINGS.values()) + [udhr_text(key) for key in UDHR_SAMPLE]
    for text in texts:
        hf_pieces = [text[start:end] for _, (start, end) in hf.pre_tokenizer.pre_tokenize_str(text)]
        assert _engine.split(text, "llama3") == hf_pieces
