"""Vocabularies loaded by ``bytepair.load`` give tiktoken's ids, byte for byte.

Oracle: tiktoken itself, built offline by its own constructors in ``tiktoken_ext/
openai_public.py`` (so the patterns, special tokens and expected hashes are tiktoken's), with
only the file reads redirected to the local copies in ``$BYTEPAIR_DATA/vocab``. Texts: every
UDHR language, WikiText-2 validation, the Python documentation, standard-library code, a table
of awkward strings, and random Unicode from hypothesis.
"""

from __future__ import annotations

import hashlib
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.errors import DisallowedSpecialTokenError
from datafiles import data_file
from generated import code_point_texts, random_texts

tiktoken = pytest.importorskip("tiktoken")
openai_public = pytest.importorskip("tiktoken_ext.openai_public")

pytestmark = [pytest.mark.peers, pytest.mark.data]

# name -> how bytepair loads it (vocabulary name, path below the vocab folder)
SOURCES = {
    "gpt2": ("gpt2", "gpt2.tiktoken"),
    "gpt2 (encoder.json + vocab.bpe)": ("gpt2", "gpt2/encoder.json"),
    "r50k_base": ("r50k_base", "r50k_base.tiktoken"),
    "p50k_base": ("p50k_base", "p50k_base.tiktoken"),
    "cl100k_base": ("cl100k_base", "cl100k_base.tiktoken"),
    "o200k_base": ("o200k_base", "o200k_base.tiktoken"),
}
MAIN = ["gpt2", "gpt2 (encoder.json + vocab.bpe)", "cl100k_base", "o200k_base"]

# Awkward strings: whitespace of every kind and length, CRLF runs, contractions, numbers,
# scripts, emoji with modifiers, code, long runs of one character.
NAMED_STRINGS = {
    "empty": "",
    "one char": "a",
    "spaces": "a  b   c    d",
    "trailing spaces": "end   ",
    "crlf runs": "line\r\n\r\n\r\nnext\n\n\n \n",
    "tabs and nbsp": "\tx\t\ty\u00a0z\u3000w\u2009v",
    "contractions": "I'm sure they'll say it's what we'd've DONE'S",
    "numbers": "1 12 123 1234 12345 3.14159 ١٢٣ ½",
    "cjk": "人人生而自由，在尊严和权利上一律平等。",
    "emoji": "hi 😀😀 👍🏽 👨‍👩‍👧 ok",
    "code": "def f(x):\n    return x**2  # square\n\n\nprint(f(3))\r\n",
    "mixed": "Machine learning is powerful. 机器学习很强大。 L'apprentissage automatique est puissant. 🤖💪",
    "long run": "a" * 5000,
    "long spaces": " " * 3000 + "x",
    "long newlines": "\n" * 3000,
    "long digits": "7" * 2001,
}
PUBLISHED = {"cl100k_base": [15339, 1917], "gpt2": [31373, 995], "o200k_base": [24912, 2375], "r50k_base": [31373, 995]}


def vocab_folder():
    return data_file("vocab")


def _local_files(monkeypatch, folder):
    """Point tiktoken's own constructors at the local files, checking tiktoken's hashes."""
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks, load_tiktoken_bpe

    def local(url):
        name = url.rsplit("/", 1)[-1]
        return str(folder / "gpt2" / name) if name in ("encoder.json", "vocab.bpe") else str(folder / name)

    def check(path, expected):
        actual = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        assert actual == expected, f"{path}: the local copy is not the published file"
        return path

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # no cache: read the local file itself
    monkeypatch.setattr(
        openai_public,
        "load_tiktoken_bpe",
        lambda url, expected_hash: load_tiktoken_bpe(check(local(url), expected_hash)),
    )
    monkeypatch.setattr(
        openai_public,
        "data_gym_to_mergeable_bpe_ranks",
        lambda vocab_bpe_file, encoder_json_file, vocab_bpe_hash, encoder_json_hash: data_gym_to_mergeable_bpe_ranks(
            check(local(vocab_bpe_file), vocab_bpe_hash), check(local(encoder_json_file), encoder_json_hash)
        ),
    )


@pytest.fixture(scope="module")
def pairs():
    """name -> (bytepair tokenizer, tiktoken Encoding), both from the same local file."""
    folder = vocab_folder()
    with pytest.MonkeyPatch.context() as monkeypatch:
        _local_files(monkeypatch, folder)
        loaded = {}
        for label, (name, relative) in SOURCES.items():
            constructor = openai_public.ENCODING_CONSTRUCTORS[name]
            loaded[label] = (bytepair.load(name, path=folder / relative), tiktoken.Encoding(**constructor()))
    return loaded


def assert_same(tokenizer, encoding, text, what):
    ours = tokenizer.encode_ordinary(text)
    theirs = encoding.encode_ordinary(text)
    if ours != theirs:
        first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
        pytest.fail(
            f"{what}: ids differ at token {first}: ours {ours[first : first + 5]} vs tiktoken {theirs[first : first + 5]}"
        )
    assert tokenizer.decode_bytes(ours) == encoding.decode_bytes(theirs)
    assert tokenizer.decode(ours) == encoding.decode(theirs)


def mismatches(tokenizer, encoding, texts):
    """Names of the texts whose ids or decoded text differ (checked as one batch per call)."""
    bad = []
    for name, text in texts:
        ours = tokenizer.encode_ordinary(text)
        if ours != encoding.encode_ordinary(text) or tokenizer.decode(ours) != encoding.decode(ours):
            bad.append(name)
    return bad


# -- the published checks and small strings -------------------------------------------------


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_hello_world_gives_the_published_ids(pairs, name):
    tokenizer, encoding = pairs[name]
    assert tokenizer.encode("hello world") == PUBLISHED[name] == encoding.encode("hello world")


@pytest.mark.parametrize("label", list(SOURCES))
def test_vocabulary_size_and_special_tokens_are_tiktokens(pairs, label):
    tokenizer, encoding = pairs[label]
    assert tokenizer.vocab_size == encoding.n_vocab
    assert tokenizer.special_tokens == encoding._special_tokens


def test_gpt2_from_encoder_json_equals_the_rank_file(pairs):
    from_json, _ = pairs["gpt2 (encoder.json + vocab.bpe)"]
    from_ranks, _ = pairs["gpt2"]
    assert [from_json.token_bytes(i) for i in range(50257)] == [from_ranks.token_bytes(i) for i in range(50257)]


@pytest.mark.parametrize("label", MAIN)
@pytest.mark.parametrize("case", list(NAMED_STRINGS))
def test_named_strings(pairs, label, case):
    tokenizer, encoding = pairs[label]
    assert_same(tokenizer, encoding, NAMED_STRINGS[case], case)


@pytest.mark.parametrize("label", MAIN)
def test_tokens_longer_than_a_short_piece(pairs, label):
    # their last merges are found by the bucket merge at load (EncoderCore::keep_last_merges),
    # not the O(n^2) scan of shorter tokens: each one alone, cut, repeated and inside text
    tokenizer, encoding = pairs[label]
    texts = []
    for token in encoding.token_byte_values():
        if len(token) <= 64:
            continue
        text = token.decode("utf-8", errors="replace")
        half = len(text) // 2
        texts += [
            (f"{token!r}{how}", variant)
            for how, variant in (
                ("", text),
                (" twice", text * 2),
                (" cut", text[:half] + "|" + text[half:]),
                (" in text", f"x{text}y"),
                (" shortened", text[1:]),
            )
        ]
    assert texts  # gpt2 has 3 such tokens, cl100k 121, o200k 85
    assert mismatches(tokenizer, encoding, texts) == []


@pytest.mark.parametrize("label", MAIN)
def test_special_tokens_when_allowed(pairs, label):
    tokenizer, encoding = pairs[label]
    specials = sorted(encoding.special_tokens_set)
    text = "start" + "".join(f"{s} middle {s}{s}" for s in specials) + " end<|endoftext"
    ours = tokenizer.encode(text, allowed_special="all")
    assert ours == encoding.encode(text, allowed_special="all")
    assert tokenizer.decode(ours) == encoding.decode(ours) == text
    some = {specials[0]}
    assert tokenizer.encode(text, allowed_special=some, disallowed_special=()) == encoding.encode(
        text, allowed_special=some, disallowed_special=()
    )


@pytest.mark.parametrize("label", ["gpt2", "cl100k_base"])
def test_disallowed_special_raises_like_tiktoken(pairs, label):
    tokenizer, encoding = pairs[label]
    text = "a <|endoftext|> b"
    with pytest.raises(ValueError):
        encoding.encode(text)
    with pytest.raises(DisallowedSpecialTokenError, match="endoftext"):
        tokenizer.encode(text)
    assert tokenizer.encode(text, disallowed_special=()) == encoding.encode(text, disallowed_special=())


@pytest.mark.parametrize("label", MAIN)
def test_lone_surrogates_are_replaced_like_tiktoken(pairs, label):
    tokenizer, encoding = pairs[label]
    text = "a\ud800b \udfff \U0001f600"
    assert tokenizer.encode(text) == encoding.encode(text)


# -- real corpora -----------------------------------------------------------------------------


def udhr_texts():
    folder = data_file("multilingual/udhr")
    files = sorted(folder.glob("*.txt"))
    assert len(files) >= 400, f"{folder}: expected the 460 UDHR files, found {len(files)}"
    return [(path.stem, path.read_text(encoding="utf-8")) for path in files]


@pytest.fixture(scope="module")
def udhr():
    return udhr_texts()


@pytest.mark.slow
@pytest.mark.parametrize("label", MAIN)
def test_every_udhr_language(pairs, udhr, label):
    tokenizer, encoding = pairs[label]
    bad = mismatches(tokenizer, encoding, udhr)
    assert not bad, f"{len(bad)} of {len(udhr)} languages differ: {bad[:20]}"


@pytest.mark.parametrize("label", MAIN)
def test_wikitext2_valid(pairs, wikitext_valid, label):
    tokenizer, encoding = pairs[label]
    assert_same(tokenizer, encoding, wikitext_valid, "wikitext-2 valid")


@pytest.mark.parametrize("label", MAIN)
def test_python_docs_slice(pairs, label):
    text = data_file("english/python-3.11-docs.txt").read_text(encoding="utf-8")
    tokenizer, encoding = pairs[label]
    middle = len(text) // 2
    assert_same(tokenizer, encoding, text[:500_000] + text[middle : middle + 500_000], "python docs (1M characters)")


@pytest.mark.slow
@pytest.mark.parametrize("label", MAIN)
def test_python_docs_whole(pairs, label):
    text = data_file("english/python-3.11-docs.txt").read_text(encoding="utf-8")
    tokenizer, encoding = pairs[label]
    assert_same(tokenizer, encoding, text, "python docs")


def stdlib_files(every):
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts)
    assert files, f"no standard-library sources under {root}"
    return [(str(p.relative_to(root)), p.read_text(encoding="utf-8", errors="surrogateescape")) for p in files[::every]]


@pytest.mark.slow
@pytest.mark.parametrize("label", MAIN)
def test_stdlib_code(pairs, label):
    tokenizer, encoding = pairs[label]
    texts = stdlib_files(every=10)
    bad = mismatches(tokenizer, encoding, texts)
    assert not bad, f"{len(bad)} of {len(texts)} files differ: {bad[:20]}"


@pytest.mark.slow
def test_all_stdlib_code_cl100k(pairs):
    tokenizer, encoding = pairs["cl100k_base"]
    texts = stdlib_files(every=1)
    bad = mismatches(tokenizer, encoding, texts)
    assert not bad, f"{len(bad)} of {len(texts)} files differ: {bad[:20]}"


# -- random text --------------------------------------------------------------------------------

# Any character, unassigned ones included: the scanner takes tiktoken's Unicode tables for its
# vocabularies (test_every_assigned_code_point_encodes_like_tiktoken checks them all).
random_text = random_texts()
runs = st.tuples(st.sampled_from([" ", "\n", "a", "1", "é", "!", "\t", "人"]), st.integers(1, 400)).map(
    lambda pair: pair[0] * pair[1]
)


@pytest.mark.parametrize("label", MAIN)
@settings(max_examples=300, deadline=None)
@given(text=random_text)
def test_random_unicode(pairs, label, text):
    tokenizer, encoding = pairs[label]
    assert_same(tokenizer, encoding, text, "random text")


def test_letters_newer_than_tiktoken_split_like_tiktoken(pairs):
    import regex

    from bytepair import patterns

    tokenizer, encoding = pairs["o200k_base"]
    text = "\U0003d000's"  # U+3D000: a letter (Lo) since Unicode 17, unassigned in tiktoken's 16.0
    assert tokenizer.encode_ordinary(text) == encoding.encode_ordinary(text)
    # not a letter, so [^\s\p{L}\p{N}]+ takes it with the apostrophe, and "s" is a word
    assert tokenizer.split(text) == ["\U0003d000'", "s"]
    if regex.fullmatch(r"\p{L}", text[0]):  # the `regex` module (patterns.split) is newer
        assert patterns.split(text, "o200k") == [text]


# Each code point alone, after a letter, a digit and a space, and before a contraction, a letter,
# a digit, a word and a number. Ids show a piece boundary only where it splits a token, so the
# contexts end in tokens that a wrong class would split: "'s" follows a letter as its own piece
# but joins the apostrophe to a non-letter ("x'", "s"); "123" is one piece after a non-number
# but "x12", "3" after a number. Run with the `regex` module's (Unicode 17) tables instead of
# tiktoken's, they catch, of the 17,560 assigned code points whose classes differ, all 17,480
# whose \p{L}, \p{N} or \s differ (gpt2, cl100k), and 17,559 on o200k; the class tests of
# every code point are in test_unicode_tables.py.
CONTEXTS = ["{}", "a{}", "1{}", " {}", "{}'s", "{}a", "{}1", "{} x", "{}123"]


@pytest.mark.slow
@pytest.mark.parametrize("label", ["gpt2", "cl100k_base", "o200k_base"])
def test_every_assigned_code_point_encodes_like_tiktoken(pairs, label):
    tokenizer, encoding = pairs[label]
    bad = []
    for points, text in code_point_texts(CONTEXTS):
        if tokenizer.encode_ordinary(text) != encoding.encode_ordinary(text):
            bad += [
                f"U+{c:04X} in {context!r}"
                for c in points
                for context in CONTEXTS
                if tokenizer.encode_ordinary(context.format(chr(c))) != encoding.encode_ordinary(context.format(chr(c)))
            ]
    assert not bad, f"{len(bad)} code points in context differ from tiktoken: {bad[:20]}"


@pytest.mark.parametrize("label", ["cl100k_base", "o200k_base"])
@settings(max_examples=100, deadline=None)
@given(parts=st.lists(st.one_of(runs, random_text), max_size=6))
def test_random_runs_and_text(pairs, label, parts):
    tokenizer, encoding = pairs[label]
    assert_same(tokenizer, encoding, "".join(parts), "runs")


# -- decoding ----------------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["cl100k_base", "o200k_base"])
def test_decode_of_lists_and_arrays_is_tiktokens(pairs, wikitext_valid, label):
    import numpy as np

    tokenizer, encoding = pairs[label]
    ids = encoding.encode_ordinary(wikitext_valid)
    ids += sorted(encoding.encode_single_token(token) for token in encoding.special_tokens_set)
    want = encoding.decode_bytes(ids)
    assert tokenizer.decode_bytes(ids) == want
    for dtype in ("uint32", "int32", "int64", "uint64"):
        assert tokenizer.decode_bytes(np.array(ids, dtype=dtype)) == want, dtype
    assert tokenizer.decode(ids) == encoding.decode(ids)
    # every token alone, special ones included: a short list each, as tiktoken sees them
    for token_id in range(0, encoding.max_token_value + 1, 97):
        try:
            theirs = encoding.decode_single_token_bytes(token_id)
        except KeyError:
            continue  # an id tiktoken has no token for
        assert tokenizer.decode_bytes([token_id]) == theirs
