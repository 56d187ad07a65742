"""decode(encode(t)) == t, on named awkward strings, random Unicode and every real corpus."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.errors import TokenIdError, UnknownCharactersError
from datafiles import data_dir, data_file

AWKWARD = {
    "empty": "",
    "one character": "a",
    "cjk": "你好世界，分词器。",
    "emoji": "Hello 🌍 World 👩‍👩‍👧‍👦",
    "code": "def foo(x):\n\treturn x + 1  # ok\n",
    "crlf runs": "a\r\n\r\n\r\nb\r\r\n",
    "whitespace zoo": "\x1c\x1d\x1e\x1f\x85\u2028\u2029\xa0\u3000 \t\n",
    "combining marks": "e\u0301 n\u0303 \u0915\u094d\u0937",
    "rtl": "مرحبا بالعالم שלום",
}
CORPUS = "The quick brown fox jumps over the lazy dog. " * 30 + "".join(AWKWARD.values())


@pytest.fixture(scope="module", params=["char", "byte"])
def tok(request):
    vocab_size = 300 if request.param == "byte" else 120
    return bytepair.train(CORPUS, mode=request.param, vocab_size=vocab_size, pattern="cl100k")


@pytest.mark.parametrize("name", sorted(AWKWARD))
def test_awkward_strings_round_trip(tok, name):
    text = AWKWARD[name]
    assert tok.decode(tok.encode(text)) == text
    if tok.mode == "char":
        assert "".join(tok.encode_tokens(text)) == text


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",))))
def test_byte_mode_round_trips_any_unicode(text):
    tok = _byte_tok()
    assert tok.decode(tok.encode(text)) == text
    assert tok.decode_bytes(tok.encode(text)) == text.encode("utf-8")


_CACHE = {}


def _byte_tok():
    if "byte" not in _CACHE:
        _CACHE["byte"] = bytepair.train(CORPUS, mode="byte", vocab_size=320, pattern="gpt2")
    return _CACHE["byte"]


def test_lone_surrogates_become_replacement_characters_in_byte_mode():
    # As tiktoken: a str that cannot be UTF-8 has its lone surrogates replaced by U+FFFD.
    tok = _byte_tok()
    assert tok.decode(tok.encode("a\ud800b")) == "a\ufffdb"


def test_a_surrogate_pair_is_its_character_everywhere_the_text_goes():
    # tiktoken's rule: a pair is the character it encodes, before anything else looks at the text
    earth, pair = "\U0001f30d", "\ud83c\udf0d"
    tok = bytepair.train(CORPUS, mode="byte", vocab_size=300, pattern="cl100k", special_tokens=[f"<{earth}>"])
    assert tok.encode(f"<{pair}>", allowed_special="all") == [tok.special_tokens[f"<{earth}>"]]
    folding = bytepair.train(CORPUS, mode="byte", vocab_size=300, pattern="cl100k", normalization="NFKC")
    bold_a = "\U0001d400"  # MATHEMATICAL BOLD CAPITAL A, which NFKC folds to "A"
    assert folding.encode("\ud835\udc00") == folding.encode(bold_a) == folding.encode("A")
    text = f"a{pair}b\ud800c"  # a pair, then a lone surrogate (U+FFFD)
    ids, spans = tok.encode_with_offsets(text)
    assert ids == tok.encode(f"a{earth}b\ufffdc")
    covered = [text[start:end] for start, end in spans]
    assert covered[0] == "a" and covered[-1] == "c" and pair in covered and "\ud800" in covered


def test_char_mode_lists_every_unknown_character_once_sorted():
    tok = bytepair.train("abcabc", mode="char", vocab_size=5)
    with pytest.raises(UnknownCharactersError) as caught:
        tok.encode("zebra yak x")
    assert caught.value.characters == [" ", "e", "k", "r", "x", "y", "z"]
    assert "'e', 'k', 'r'" in str(caught.value)


def test_char_mode_byte_fallback_encodes_unknown_characters_as_bytes():
    tok = bytepair.train("abcabc", mode="char", vocab_size=5, byte_fallback=True)
    ids = tok.encode("ab€c")
    assert tok.decode(ids) == "ab€c"
    assert [tok.token_bytes(i) for i in ids] == [b"ab", b"\xe2", b"\x82", b"\xac", b"c"]


def test_decode_strict_raises_on_invalid_utf8_and_replace_does_not():
    tok = _byte_tok()
    broken = [0xC3]  # byte mode: id b is byte b; this is the first byte of "é" alone
    assert tok.decode(broken) == "\ufffd"
    with pytest.raises(UnicodeDecodeError):
        tok.decode(broken, errors="strict")


@pytest.mark.parametrize("bad", [-1, 10**6, "7", 1.5])
def test_out_of_range_or_non_integer_ids_are_named(bad):
    tok = _byte_tok()
    with pytest.raises(TokenIdError, match=repr(bad) if isinstance(bad, str) else str(bad)):
        tok.decode([1, 2, bad])


def test_encode_batch_equals_encode_on_every_thread_count():
    tok = _byte_tok()
    texts = list(AWKWARD.values()) * 5 + [CORPUS]
    expected = [tok.encode(t) for t in texts]
    for threads in (1, 2, 4):
        assert tok.encode_batch(texts, num_threads=threads) == expected


def test_encode_to_array_picks_uint16_and_matches_encode():
    tok = _byte_tok()
    array = tok.encode_to_array(CORPUS)
    assert array.dtype.name == "uint16"
    assert array.tolist() == tok.encode(CORPUS)


REAL_FILES = [
    "wikitext-2/valid.txt",
    "wikitext-2/test.txt",
    "tinyshakespeare/input.txt",
    "english/python-3.11-docs.txt",
]


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.parametrize("relative", REAL_FILES)
def test_every_real_corpus_round_trips_in_both_modes(relative):
    text = data_file(relative).read_text(encoding="utf-8")
    byte_tok = bytepair.train(text[:300_000], mode="byte", vocab_size=1000, pattern="cl100k", progress=False)
    assert byte_tok.decode(byte_tok.encode_to_array(text)) == text
    char_tok = bytepair.train(text[:300_000], mode="char", vocab_size=400, base_text=text, progress=False)
    assert char_tok.decode(char_tok.encode_to_array(text)) == text


@pytest.mark.data
@pytest.mark.slow
def test_every_udhr_language_round_trips():
    folder = data_dir() / "multilingual" / "udhr"
    if not folder.is_dir():
        pytest.skip(f"real data not available: {folder}")
    files = sorted(folder.glob("*.txt"))
    texts = [p.read_text(encoding="utf-8") for p in files]
    tok = bytepair.train(texts, mode="byte", vocab_size=2000, pattern="o200k", progress=False)
    for path, text, ids in zip(files, texts, tok.encode_batch(texts)):
        assert tok.decode(ids) == text, path.name
