"""The compiled encoder (``bytepair._engine.Encoder``) against its oracles.

- rule "replay" (``monotonic=True``): ``reference.encode_piece`` on merges learned by
  ``reference.train_bpe`` (with tied counts) and on arbitrary merge lists that build a value
  twice or learn a pair twice, in both modes, short pieces and long ones;
- rule "tiktoken" (``whole_piece=True``): tiktoken itself, on the real vocabulary files;
- rule "hf": HF tokenizers on Meta's Llama 3 ``tokenizer.json`` (``ignore_merges``).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_encoders import engine_for

from bytepair import _engine, patterns, reference
from bytepair.model import MergeModel
from datafiles import data_file

PATTERN_CHOICES = [None, "gpt2", "cl100k", "o200k", "llama3"]


# -- building encoders the way docs/internals.md describes ---------------------------------


def replay_encoder(mode, merges, base_tokens=None, pattern=None, byte_fallback=False):
    """An Encoder for rule "replay", and the value -> id map of its vocabulary."""
    base = reference.BYTE_TOKENS if mode == "byte" else list(base_tokens)
    values = reference.vocabulary(base, merges)
    ids = {value: index for index, value in enumerate(values)}
    pair_table = {
        (ids[left], ids[right]): (ranks, ids[left + right])
        for (left, right), ranks in reference.replay_ranks(merges).items()
    }
    fallback_ids = list(range(len(values), len(values) + 256)) if byte_fallback else None
    encoder = _engine.Encoder(
        mode=mode,
        token_bytes=[v.encode("utf-8") if isinstance(v, str) else v for v in values],
        base_ids=list(range(256)) if mode == "byte" else {ord(c): ids[c] for c in base},
        pair_table=pair_table,
        whole_piece=False,
        monotonic=True,
        pattern=pattern,
        fallback_ids=fallback_ids,
    )
    return encoder, ids


def initial_tokens(mode, piece):
    return list(piece) if mode == "char" else [bytes([b]) for b in piece.encode("utf-8")]


def reference_ids(mode, merges, ids, text, pattern):
    """Split with `regex`, replay every merge on each piece, look the values up."""
    out = []
    for piece in patterns.split(text, pattern):
        out.extend(ids[value] for value in reference.encode_piece(initial_tokens(mode, piece), merges))
    return out


def train_merges(mode, corpus, pattern, vocab_size):
    """Merges learned by the reference on ``corpus``, pieces in order of first appearance."""
    chunks = {}
    for piece in patterns.split(corpus, pattern):
        key = tuple(initial_tokens(mode, piece))
        chunks[key] = chunks.get(key, 0) + 1
    base = reference.BYTE_TOKENS if mode == "byte" else sorted(set(corpus))
    return base, reference.train_bpe(chunks, base, vocab_size, min_frequency=1)


# -- replay against the reference -----------------------------------------------------------

ALPHABETS = ["ab", "abc ", "ab\n c", "aé 😀", "the cat sat"]


@st.composite
def trained_case(draw):
    mode = draw(st.sampled_from(["char", "byte"]))
    alphabet = draw(st.sampled_from(ALPHABETS))
    letters = st.sampled_from(alphabet)
    corpus = "".join(draw(st.lists(letters, min_size=1, max_size=120)))
    pattern = draw(st.sampled_from(PATTERN_CHOICES))
    extra = draw(st.integers(1, 30))
    base, merges = train_merges(mode, corpus, pattern, (256 if mode == "byte" else len(set(corpus))) + extra)
    text = "".join(draw(st.lists(st.sampled_from(sorted(set(corpus))), max_size=150)))
    return mode, base, merges, pattern, text


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(case=trained_case())
def test_replay_equals_reference_on_trained_merges(case):
    mode, base, merges, pattern, text = case
    encoder, ids = replay_encoder(mode, merges, base, pattern)
    assert encoder.encode_ordinary(text) == reference_ids(mode, merges, ids, text, pattern)


@st.composite
def arbitrary_merge_case(draw):
    """Any merge list whose parts exist: values built twice, pairs learned twice, any order."""
    mode = draw(st.sampled_from(["char", "byte"]))
    alphabet = draw(st.sampled_from(ALPHABETS))
    if mode == "char":
        base = sorted(set(alphabet))
        values = list(base)
    else:
        base = reference.BYTE_TOKENS
        values = [bytes([b]) for b in sorted(set(alphabet.encode("utf-8")))]
    merges = []
    for _ in range(draw(st.integers(0, 30))):
        if merges and draw(st.integers(0, 4)) == 0:
            pair = draw(st.sampled_from(merges))  # the same pair learned again
        else:
            pair = (draw(st.sampled_from(values)), draw(st.sampled_from(values)))
        merges.append(pair)
        if pair[0] + pair[1] not in values:
            values.append(pair[0] + pair[1])
    length = draw(st.sampled_from([10, 60, 70, 200]))  # both sides of the heap threshold
    text = "".join(draw(st.lists(st.sampled_from(alphabet), min_size=length, max_size=length)))
    return mode, base, merges, draw(st.sampled_from(PATTERN_CHOICES)), text


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(case=arbitrary_merge_case())
def test_replay_equals_reference_on_arbitrary_merge_lists(case):
    mode, base, merges, pattern, text = case
    encoder, ids = replay_encoder(mode, merges, base, pattern)
    assert encoder.encode_ordinary(text) == reference_ids(mode, merges, ids, text, pattern)


@settings(max_examples=60, deadline=None)
@given(case=arbitrary_merge_case())
def test_pair_columns_load_the_pairs_a_pair_table_does(case):
    # MergeModel hands its merges to the engine as columns, a row per (pair, rank)
    mode, base, merges, pattern, text = case
    by_table, ids = replay_encoder(mode, merges, base, pattern)
    model = MergeModel(mode=mode, merges=merges, base_tokens=base if mode == "char" else None)
    left, right, rank, merged = model.engine_spec()["pair_columns"]
    rows = sorted(zip(left.tolist(), right.tolist(), rank.tolist(), merged.tolist()))
    expected = sorted(
        (ids[a], ids[b], r, ids[a + b]) for (a, b), ranks in reference.replay_ranks(merges).items() for r in ranks
    )
    assert rows == expected
    by_columns = _engine.Encoder(**model.engine_spec(), pattern=pattern)
    assert by_columns.encode_ordinary(text) == by_table.encode_ordinary(text)


@pytest.mark.parametrize("mode", ["char", "byte"])
def test_textbook_case(mode):
    merges = [("a", "a"), ("aa", "a"), ("aaa", "b")]
    if mode == "byte":
        merges = [(left.encode(), right.encode()) for left, right in merges]
    encoder, ids = replay_encoder(mode, merges, "abcd")
    values = ["aaab", "d", "aaab", "a", "c"]  # reference.py's docstring, derived by hand
    expected = [ids[v if mode == "char" else v.encode()] for v in values]
    assert encoder.encode_ordinary("aaabdaaabac") == expected


@pytest.mark.parametrize("mode", ["char", "byte"])
@pytest.mark.parametrize(
    "merges, text, values",
    [
        # two merges build "abc"; replay never goes back to (abc, d) after (ab, c) at rank 4
        ([("a", "b"), ("b", "c"), ("a", "bc"), ("abc", "d"), ("ab", "c")], "abcd", ["abc", "d"]),
        # the brief's list: (b, c) first, so (a, bc) builds "abc" and (abc, d) applies
        ([("b", "c"), ("a", "bc"), ("abc", "d"), ("a", "b"), ("ab", "c")], "abcd abc", ["abcd", " ", "abc"]),
        # (b, aaa) learned twice: "aaa" only appears at rank 3, so rank 4 must apply it
        ([("a", "a"), ("a", "aa"), ("b", "aaa"), ("aa", "a"), ("b", "aaa")], "baaa", ["baaa"]),
    ],
)
def test_duplicate_values_and_pairs_replay_in_order(mode, merges, text, values):
    base = sorted(set(text))
    if mode == "byte":
        merges = [(left.encode(), right.encode()) for left, right in merges]
        values = [v.encode() for v in values]
    encoder, ids = replay_encoder(mode, merges, base)
    assert encoder.encode_ordinary(text) == [ids[v] for v in values]
    assert encoder.encode_ordinary(text) == reference_ids(mode, merges, ids, text, None)


def test_long_pieces_use_the_same_order_as_short_ones():
    rng = random.Random(7)
    corpus = "".join(rng.choice("ab c") for _ in range(3000))
    base, merges = train_merges("char", corpus, None, 40)
    encoder, ids = replay_encoder("char", merges, base)
    for length in [1, 2, 63, 64, 65, 66, 500, 3000]:
        text = corpus[:length]
        assert encoder.encode_ordinary(text) == reference_ids("char", merges, ids, text, None)


@pytest.mark.parametrize("mode", ["char", "byte"])
def test_huge_pieces_replay_by_rank_buckets(mode):
    # a piece past 2**16 symbols (where a second long-piece strategy once took over)
    rng = random.Random(11)
    text = "".join(rng.choice("aab c") for _ in range(70_000))
    base, merges = train_merges(mode, text[:2000], None, (256 if mode == "byte" else 4) + 25)
    merges += merges[:3]  # pairs learned twice
    encoder, ids = replay_encoder(mode, merges, base)
    assert encoder.encode_ordinary(text) == reference_ids(mode, merges, ids, text, None)


def test_a_million_of_one_character():
    merges = [("x", "x"), ("xx", "xx"), ("xxxx", "xxxx")]
    encoder, ids = replay_encoder("char", merges, "x")
    # 2**20 x's: three rounds of pairing leave 2**17 tokens of eight x's (by hand)
    assert encoder.encode_ordinary("x" * 2**20) == [ids["x" * 8]] * 2**17
    assert encoder.encode_ordinary("x" * 11) == [ids["x" * 8], ids["xx"], ids["x"]]


@pytest.mark.data
@pytest.mark.slow
def test_ten_megabytes_as_one_char_piece():
    text = data_file("wikitext-2", "train.txt").read_text("utf-8")
    sample = text[:3000]
    _, merges = train_merges("char", sample, None, len(set(sample)) + 60)
    base = sorted(set(text))
    encoder, ids = replay_encoder("char", merges, base)
    values = reference.vocabulary(base, merges)
    encoded = encoder.encode_ordinary(text)
    assert "".join(values[i] for i in encoded) == text
    assert len(merges) == 60 and len(encoded) < 0.7 * len(text)
    sample = text[:20_000]
    assert encoder.encode_ordinary(sample) == reference_ids("char", merges, ids, sample, None)


# -- unknown characters, byte fallback, surrogates ------------------------------------------


def test_unknown_characters_are_reported_sorted_once():
    encoder, _ = replay_encoder("char", [("a", "b")], "ab", pattern="gpt2")
    with pytest.raises(_engine.UnknownCharacters) as error:
        encoder.encode_ordinary("zab yz ab x")
    assert isinstance(error.value, ValueError)
    assert error.value.characters == [" ", "x", "y", "z"]


def test_byte_fallback_gives_the_utf8_bytes():
    encoder, ids = replay_encoder("char", [("a", "b")], "ab", byte_fallback=True)
    first_fallback = len(ids)
    expected = [ids["ab"]] + [first_fallback + b for b in "é😀".encode()] + [ids["a"]]
    assert encoder.encode_ordinary("abé😀a") == expected


@pytest.mark.data
@pytest.mark.peers
def test_lone_surrogates_are_cleaned_like_tiktoken(cl100k):
    encoder, encoding = cl100k
    for text in ["a\ud800b", "\udfff", "x\ud83d\ude00y", "\ud83d\ude00", "ok \udc80\ud800 ok"]:
        assert encoder.encode_ordinary(text) == encoding.encode_ordinary(text)
    assert encoder.split("x\ud83d\ude00") == ["x", "\U0001f600"]


@pytest.mark.data
@pytest.mark.peers
def test_lone_surrogates_in_a_batch_are_cleaned_like_tiktoken(cl100k):
    # the batch's threads pass over texts with surrogates, which are cleaned and encoded after
    encoder, encoding = cl100k
    texts = ["plain text", "a\ud800b", "more plain text " * 50, "\udfff", "x\ud83d\ude00y", "ok \udc80\ud800 ok"] * 40
    expected = [encoding.encode_ordinary(text) for text in texts]
    assert encoder.encode_batch(texts, num_threads=2) == expected
    ids, offsets = encoder.encode_batch_to_array(texts, num_threads=2)
    assert [ids[offsets[k] : offsets[k + 1]].tolist() for k in range(len(texts))] == expected


def test_a_cleaned_surrogate_with_no_id_is_reported_from_a_batch():
    encoder, ids = replay_encoder("char", [("a", "b")], "ab")
    assert encoder.encode_batch(["ab", "ba"]) == [[ids["ab"]], [ids["b"], ids["a"]]]
    with pytest.raises(_engine.UnknownCharacters) as error:
        encoder.encode_batch(["ab", "a\ud800b", "abz"], num_threads=2)
    assert error.value.characters == ["z", "\ufffd"]  # the lone surrogate became U+FFFD


# -- the other entry points -----------------------------------------------------------------


@pytest.fixture(scope="module")
def small():
    corpus = "the cat sat on the mat; the cat ate the rat. " * 3 + "über naïve café 😀"
    base, merges = train_merges("byte", corpus, "cl100k", 300)
    encoder, ids = replay_encoder("byte", merges, pattern="cl100k")
    return encoder, merges, ids


@pytest.fixture(scope="module")
def small_encoder(small):
    return small[0]


TEXTS = ["", "the cat", "the mat\n\nthe rat", "über café 😀 " * 50, "x" * 5000, "a"]


@pytest.mark.parametrize("threads", [1, 2, 3, 8, None])
def test_batch_equals_single(small_encoder, threads):
    texts = TEXTS * 20
    assert small_encoder.encode_batch(texts, threads) == [small_encoder.encode_ordinary(t) for t in texts]
    assert small_encoder.encode_batch([], threads) == []


@pytest.mark.parametrize("threads", [2, 3])
def test_large_batches_fill_lists_on_threads_with_exact_references(small_encoder, threads):
    # past 2**16 ids the lists are filled without the GIL and the references added once per
    # int object afterwards: every count must come out exact, or ints leak or die early
    import gc
    import sys
    from collections import Counter

    texts = TEXTS * 200
    single = [small_encoder.encode_ordinary(t) for t in texts]
    assert sum(map(len, single)) > 2**16
    uses = Counter(i for ids in single for i in ids)
    # the encoder's own int objects (not the interpreter's cached small ints), one of each
    objects = list({x: x for ids in single for x in ids if x > 256}.values())
    assert objects

    def references():  # counts only: a dict keyed by the objects would hold references itself
        return [sys.getrefcount(x) for x in objects]

    before = references()
    lists = small_encoder.encode_batch(texts, threads)
    during = references()
    assert lists == single
    assert all(gc.is_tracked(ids) for ids in lists if ids)
    assert [now - then for now, then in zip(during, before)] == [uses[x] for x in objects]
    del lists
    assert references() == before


def test_one_long_list_gains_exact_references(small_encoder):
    # a list of at least as many ids as the encoder has int objects counts its references per
    # object and adds them once (bp::ids_to_list): every count must come out exact
    import sys
    from collections import Counter

    text = " ".join(TEXTS) * 400
    # the encoder's own int objects (not the interpreter's cached small ints), one of each
    alone = [small_encoder.encode_ordinary(t) for t in TEXTS]
    objects = list({x: x for ids in alone for x in ids if x > 256}.values())
    assert objects

    def references():
        return [sys.getrefcount(x) for x in objects]

    before = references()
    ids = small_encoder.encode_ordinary(text)
    during = references()
    uses = Counter(ids)
    assert len(ids) > 10 * 300  # far more ids than the vocabulary's 300
    assert [now - then for now, then in zip(during, before)] == [uses[x] for x in objects]
    del ids, uses  # the Counter's keys are references too
    assert references() == before


def test_encode_pieces_encodes_each_piece_whole(small):
    encoder, merges, ids = small
    pieces = ["the", " cat sat", "", "the\n\nmat", " 😀"]  # pieces the scanner would cut
    expected = [i for piece in pieces for i in reference_ids("byte", merges, ids, piece, None)]
    assert encoder.encode_pieces(pieces) == expected


@pytest.mark.parametrize("dtype", ["uint16", "uint32"])
def test_encode_to_array(small_encoder, dtype):
    text = "the cat sat on the mat 😀" * 10
    array = small_encoder.encode_to_array(text, dtype)
    assert array.dtype == np.dtype(dtype)
    assert array.tolist() == small_encoder.encode_ordinary(text)
    assert small_encoder.encode_to_array("", dtype).tolist() == []


def test_encode_to_array_refuses_ids_beyond_uint16():
    encoder = _engine.Encoder(
        mode="byte",
        token_bytes=[bytes([b]) for b in range(256)],
        base_ids=[70_000 + b for b in range(256)],
        pair_table={},
        whole_piece=False,
        monotonic=True,
        pattern=None,
        fallback_ids=None,
    )
    assert encoder.encode_to_array("A", "uint32").tolist() == [70_000 + 65]
    with pytest.raises(OverflowError, match="70065"):
        encoder.encode_to_array("A", "uint16")


def test_special_ids_are_never_whole_pieces():
    token_bytes = [bytes([b]) for b in range(256)] + [b"<|end|>"]
    arguments = dict(
        mode="byte",
        token_bytes=token_bytes,
        base_ids=list(range(256)),
        pair_table={},
        whole_piece=True,
        monotonic=False,
        pattern=None,
        fallback_ids=None,
    )
    assert _engine.Encoder(**arguments).encode_ordinary("<|end|>") == [256]
    assert _engine.Encoder(**arguments, special_ids=[256]).encode_ordinary("<|end|>") == list(b"<|end|>")


def test_pieces_of_several_characters_are_found_whole():
    # The whole-piece lookup is skipped for a piece whose first character (or second, after
    # a space) begins no longer token; each token here is the only one its first characters
    # begin (ASCII, a CJK character, a Greek one, an emoji, one past U+20000, a space first).
    whole = ["ab", "中文", "Ωμέγα", "éa", "😀😀", "\U00020000\U00020001", " 中", " 文字"]
    ranks = {bytes([b]): b for b in range(256)}
    for token in whole:
        ranks[token.encode()] = len(ranks)
    pair_ranks = reference.tiktoken_pair_ranks(ranks)
    encoder = engine_for(ranks, pair_ranks, whole_piece=True, monotonic=False)
    for token in whole:
        assert encoder.encode_ordinary(token) == [ranks[token.encode()]], token
        # one character more is no token: merged from its bytes
        longer = (token + "中").encode()
        merged = reference.merge_by_rank([bytes([b]) for b in longer], pair_ranks)
        assert encoder.encode_ordinary(token + "中") == [ranks[t] for t in merged], token


def test_encoder_rejects_bad_arguments():
    good = dict(
        mode="byte",
        token_bytes=[],
        base_ids=list(range(256)),
        pair_table={},
        whole_piece=False,
        monotonic=True,
        pattern=None,
        fallback_ids=None,
    )
    with pytest.raises(ValueError, match="'bytes'"):
        _engine.Encoder(**{**good, "mode": "bytes"})
    with pytest.raises(ValueError, match="'gpt5'"):
        _engine.Encoder(**{**good, "pattern": "gpt5"})
    with pytest.raises(ValueError, match="256"):
        _engine.Encoder(**{**good, "base_ids": [0, 1]})
    with pytest.raises(ValueError, match="-1"):
        _engine.Encoder(**{**good, "pair_table": {(1, 2): (0, -1)}})
    columns = ([97], [98], [0], [256])
    with pytest.raises(ValueError, match="merged id must be an int in \\[0, 2\\*\\*31\\), not -1"):
        _engine.Encoder(**{**good, "pair_columns": ([97], [98], [0], [-1])})
    with pytest.raises(ValueError, match="four one-dimensional arrays of one length"):
        _engine.Encoder(**{**good, "pair_columns": ([97, 97], [98], [0], [256])})
    with pytest.raises(ValueError, match="not both"):
        _engine.Encoder(**{**good, "pair_table": {(97, 98): (0, 256)}, "pair_columns": columns})
    assert _engine.Encoder(**{**good, "pair_columns": columns}).encode_ordinary("ab") == [256]
    with pytest.raises(TypeError):
        _engine.Encoder(**good).encode_ordinary(b"bytes")


def test_the_compiled_engine_is_loaded():
    assert Path(_engine.__file__).suffix in (".so", ".pyd")


# -- rule "tiktoken" against tiktoken -------------------------------------------------------


def tiktoken_pair_table(ranks):
    """``reference.tiktoken_pair_ranks`` in ids: (left id, right id) -> (rank, id); ids are ranks."""
    pairs = reference.tiktoken_pair_ranks(ranks)
    return {(ranks[left], ranks[right]): (rank, rank) for (left, right), rank in pairs.items()}


def tiktoken_pair(file_name, pattern):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(data_file("vocab", file_name)))
    token_bytes = [None] * (max(ranks.values()) + 1)
    for value, rank in ranks.items():
        token_bytes[rank] = value
    encoder = _engine.Encoder(
        mode="byte",
        token_bytes=token_bytes,
        base_ids=[ranks[bytes([b])] for b in range(256)],
        pair_table=tiktoken_pair_table(ranks),
        whole_piece=True,
        monotonic=False,
        pattern=pattern,
        fallback_ids=None,
    )
    encoding = tiktoken.Encoding(
        file_name, pat_str=patterns.PATTERNS[pattern], mergeable_ranks=ranks, special_tokens={}
    )
    return encoder, encoding


@pytest.fixture(scope="module")
def cl100k():
    return tiktoken_pair("cl100k_base.tiktoken", "cl100k")


@pytest.fixture(scope="module")
def r50k():
    return tiktoken_pair("r50k_base.tiktoken", "gpt2")


@pytest.mark.data
@pytest.mark.peers
def test_published_ids(cl100k, r50k):
    assert cl100k[0].encode_ordinary("hello world") == [15339, 1917]
    assert r50k[0].encode_ordinary("hello world") == [31373, 995]


TIKTOKEN_STRINGS = [
    "",
    " ",
    "a",
    "hello world",
    "don't I'LL",
    "  \n\n  x",
    "١٢٣٤ 12345",
    "人人生而自由 😀👍🏽",
    "def f(x):\r\n\treturn x  # ok\n",
    "ǅungla HELLOworld e\u0301",
    "a" * 300,
    "😀" * 100,
    " " * 70 + "x",
    "\x00\x1c\x85\xa0\u2028",
]


@pytest.mark.data
@pytest.mark.peers
@pytest.mark.parametrize("text", TIKTOKEN_STRINGS)
def test_tiktoken_rule_on_named_strings(cl100k, r50k, text):
    for encoder, encoding in (cl100k, r50k):
        assert encoder.encode_ordinary(text) == encoding.encode_ordinary(text)


@pytest.mark.data
@pytest.mark.peers
@settings(max_examples=300, deadline=None)
@given(text=st.text(st.one_of(st.sampled_from(list(" \n\r\t'sSé中😀1a.")), st.characters()), max_size=80))
def test_tiktoken_rule_on_random_text(cl100k, text):
    encoder, encoding = cl100k
    assert encoder.encode_ordinary(text) == encoding.encode_ordinary(text)


@pytest.mark.data
@pytest.mark.peers
def test_cache_overflow_keeps_ids_right(r50k):
    # gpt2 keeps " 12345" whole: 70,000 distinct pieces, more than one cache holds
    encoder, encoding = r50k
    text = "".join(f" {i}" for i in range(70_000))
    assert encoder.encode_ordinary(text) == encoding.encode_ordinary(text)
    assert encoder.encode_ordinary(text) == encoding.encode_ordinary(text)


@pytest.mark.data
@pytest.mark.peers
def test_sparse_cache_and_batched_merging_keep_ids_right(cl100k):
    # random CJK + emoji words repeat no piece (the cache goes sparse: one miss in 16 kept),
    # then text that repeats a few new pieces (it fills again)
    encoder, encoding = cl100k
    rng = random.Random(7)
    chars = [chr(c) for c in range(0x4E00, 0x9FFF)] + [chr(c) for c in range(0x1F300, 0x1FAFF)]
    fresh = " ".join("".join(rng.choice(chars) for _ in range(rng.randint(1, 8))) for _ in range(20_000))
    repeats = " ".join(rng.choice(["Zxqv", "the", "中文字", "qzx9", "hello"]) for _ in range(20_000))
    for text in (fresh, repeats, fresh + " " + repeats, repeats + fresh):
        assert encoder.encode_ordinary(text) == encoding.encode_ordinary(text)


@pytest.mark.data
@pytest.mark.peers
@pytest.mark.parametrize("key", ["eng", "cmn_hans", "arb", "hin", "jpn", "rus", "tha", "kor"])
def test_tiktoken_rule_on_udhr(cl100k, key):
    encoder, encoding = cl100k
    text = data_file("multilingual", "udhr", f"{key}.txt").read_text("utf-8")
    assert encoder.encode_ordinary(text) == encoding.encode_ordinary(text)
    assert encoder.encode_batch([text, text[:100]], 2) == encoding.encode_ordinary_batch([text, text[:100]])


# Past 2**16 symbols: where a second long-piece strategy once took over (tests/engine/
# test_engine_long_pieces.py crosses every threshold merge.hpp has now).
HUGE = 70_000


@pytest.mark.data
@pytest.mark.peers
@pytest.mark.parametrize("alphabet", ["x", "ab", "abcdefghij", "aé人"])
def test_tiktoken_rule_on_huge_pieces(cl100k, alphabet):
    encoder, encoding = cl100k
    rng = random.Random(5)
    text = "".join(rng.choice(alphabet) for _ in range(HUGE))
    assert encoder.split(text) == [text]  # one piece of letters
    assert encoder.encode_ordinary(text) == encoding.encode_ordinary(text)


@pytest.mark.peers
def test_tiktoken_rule_goes_back_to_a_lower_rank_on_huge_pieces():
    # "bc" (rank 257) merges first, and makes the pair ("a", "bc") of rank 256: lower than
    # the rank just applied, which replay never does and tiktoken's rule must honour
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {bytes([b]): b for b in range(256)} | {b"abc": 256, b"bc": 257}
    token_bytes = [None] * 258
    for value, rank in ranks.items():
        token_bytes[rank] = value
    pair_table = {(ord("a"), 257): (256, 256), (ord("b"), ord("c")): (257, 257)}
    encoder = _engine.Encoder(
        mode="byte",
        token_bytes=token_bytes,
        base_ids=list(range(256)),
        pair_table=pair_table,
        whole_piece=True,
        monotonic=False,
        pattern=None,
        fallback_ids=None,
    )
    encoding = tiktoken.Encoding("abc", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={})
    rng = random.Random(3)
    mixed = "".join(rng.choice(["abc", "bc", "a", "c", "ab"]) for _ in range(HUGE))
    for text in [mixed, mixed[:3000], mixed[:60]]:  # huge, long, short
        assert encoder.encode_ordinary(text) == encoding.encode_ordinary(text)
    assert encoder.encode_ordinary("abc" * HUGE) == [256] * HUGE


@pytest.mark.data
@pytest.mark.peers
@pytest.mark.slow
def test_tiktoken_rule_on_wikitext_and_stdlib_source(cl100k):
    import sysconfig

    encoder, encoding = cl100k
    texts = [data_file("wikitext-2", "valid.txt").read_text("utf-8")]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    texts.append("".join(p.read_text("utf-8", errors="replace") for p in sorted(stdlib.glob("*.py"))[:80]))
    for text in texts:
        assert encoder.encode_ordinary(text) == encoding.encode_ordinary(text)


@pytest.mark.data
@pytest.mark.peers
@pytest.mark.slow
def test_o200k_rule_on_udhr():
    encoder, encoding = tiktoken_pair("o200k_base.tiktoken", "o200k")
    for key in ["eng", "cmn_hans", "arb", "hin", "jpn", "rus", "tha", "kor", "amh", "heb"]:
        text = data_file("multilingual", "udhr", f"{key}.txt").read_text("utf-8")
        assert encoder.encode_ordinary(text) == encoding.encode_ordinary(text)


# -- rule "hf" against HF tokenizers (Llama 3) ---------------------------------------------


def byte_level_alphabet():
    """GPT-2's byte -> printable character map that byte-level HF vocabularies are written in."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars = list(printable)
    shift = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + shift)
            shift += 1
    return {b: chr(c) for b, c in zip(printable, chars)}


@pytest.fixture(scope="module")
def llama3():
    tokenizers = pytest.importorskip("tokenizers")
    path = data_file("vocab", "hf", "llama3", "tokenizer.json")
    config = json.loads(path.read_text("utf-8"))
    unicode_of = byte_level_alphabet()
    byte_of = {c: b for b, c in unicode_of.items()}
    vocab = {bytes(byte_of[c] for c in token): i for token, i in config["model"]["vocab"].items()}
    pair_table = {}
    for rank, merge in enumerate(config["model"]["merges"]):
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        left, right = (bytes(byte_of[c] for c in part) for part in (left, right))
        pair_table.setdefault((vocab[left], vocab[right]), (rank, vocab[left + right]))
    token_bytes = [None] * (max(vocab.values()) + 1)
    for value, i in vocab.items():
        token_bytes[i] = value
    encoder = _engine.Encoder(
        mode="byte",
        token_bytes=token_bytes,
        base_ids=[vocab[bytes([b])] for b in range(256)],
        pair_table=pair_table,
        whole_piece=config["model"]["ignore_merges"],
        monotonic=False,
        pattern="llama3",
        fallback_ids=None,
    )
    return encoder, tokenizers.Tokenizer.from_file(str(path))


@pytest.mark.data
@pytest.mark.peers
@pytest.mark.parametrize("alphabet", ["x", "abcdefghij", "aé人"])
def test_hf_rule_on_huge_pieces(llama3, alphabet):
    encoder, hf = llama3
    rng = random.Random(9)
    text = "".join(rng.choice(alphabet) for _ in range(HUGE))
    assert encoder.split(text) == [text]
    assert encoder.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids


@pytest.mark.data
@pytest.mark.peers
@pytest.mark.parametrize("key", ["eng", "cmn_hans", "arb", "hin", "rus", "tha"])
def test_hf_rule_equals_hf_tokenizers(llama3, key):
    encoder, hf = llama3
    texts = TIKTOKEN_STRINGS + [data_file("multilingual", "udhr", f"{key}.txt").read_text("utf-8")]
    for text in texts:
        assert encoder.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids
