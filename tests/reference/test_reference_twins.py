"""The reference's twins of the engine: rank-based merging and piece counting.

- ``merge_by_rank`` with a floor (replay by rank, as the engine does it) equals
  ``encode_piece`` (replay pass by pass) on random merge lists that learn a pair twice and
  rebuild existing values, in both modes;
- ``merge_by_rank`` equals the engine: a ``Tokenizer`` built from those merges (rule
  "replay"), from random tiktoken-style ranks (rule "tiktoken"), from random HF merges (rule
  "hf", with and without ``ignore_merges``), on pieces on both sides of the engine's
  short/long threshold;
- ``count_pieces`` equals the engine's counting (``_engine.count_pieces``, and train.py's
  counting with long documents cut into blocks) and a ``Counter`` over ``patterns.split``.
"""

from __future__ import annotations

import importlib
from collections import Counter
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair import Tokenizer, _engine, patterns, reference
from bytepair.formats import tokenizer_from_json, tokenizer_from_ranks
from bytepair.formats.export import huggingface_json

train_module = importlib.import_module("bytepair.train")  # ``bytepair.train`` is the function

ALPHABETS = ["ab", "abc", "ab c", "aé😀", "the cat"]
# Piece lengths on both sides of the engine's switch from its array scan to its heap (64).
LENGTHS = [1, 2, 7, 64, 65, 150]


def as_bytes(value):
    return value.encode("utf-8") if isinstance(value, str) else value


def initial_tokens(mode, text):
    return list(text) if mode == "char" else [bytes([b]) for b in text.encode("utf-8")]


@st.composite
def merge_lists(draw, mode, min_merges=0, anywhere=False):
    """(base, merges, text): merges over values the list builds, which may learn a pair
    again and may build a value that already exists (("a", "bc") after ("ab", "c")). The
    text is either random letters or a run of merged values, cut to at most 150 characters.

    ``anywhere``: a pair learned again may come before the merge that builds one of its
    halves. ``Tokenizer`` refuses such lists, but the reference replays them, and they are
    where a pair's later rank matters most often (about 1 list in 20 here, against 1 in
    1,500 otherwise)."""
    alphabet = draw(st.sampled_from(ALPHABETS))
    if mode == "char":
        base = sorted(set(alphabet))
        values = list(base)
    else:
        base = reference.BYTE_TOKENS
        values = [bytes([b]) for b in sorted(set(alphabet.encode("utf-8")))]
    merges = []
    for _ in range(draw(st.integers(min_merges, 25))):
        if merges and draw(st.integers(0, 3)) == 0:
            pair = draw(st.sampled_from(merges))  # the same pair learned again
        else:
            pair = (draw(st.sampled_from(values)), draw(st.sampled_from(values)))
        merges.append(pair)
        if pair[0] + pair[1] not in values:
            values.append(pair[0] + pair[1])
    for _ in range(draw(st.integers(0, 3)) if merges else 0):
        # the same pair learned again at an earlier rank, as early as allowed: replay needs
        # the later rank when it meets the pair after passing the first
        pair = draw(st.sampled_from(merges))
        built = {value: -1 for value in base}
        for index, (left, right) in enumerate(merges):
            built.setdefault(left + right, index)
        earliest = 0 if anywhere else max(built[pair[0]], built[pair[1]]) + 1
        merges.insert(draw(st.integers(earliest, len(merges))), pair)
    if merges and draw(st.booleans()):
        merged = [left + right for left, right in merges]
        parts = [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in merged]
    else:
        parts = list(alphabet)
    length = draw(st.sampled_from(LENGTHS))
    text = "".join(draw(st.lists(st.sampled_from(parts), min_size=length, max_size=length)))[:150]
    return base, merges, text


# -- rank-based replay against replay pass by pass -------------------------------------------


@pytest.mark.parametrize("mode", ["char", "byte"])
def test_textbook_aaabdaaabac_three_merges_by_rank(mode):
    merges = [("a", "a"), ("aa", "a"), ("aaa", "b")]  # what training learns (tests/test_reference.py)
    expected = ["aaab", "d", "aaab", "a", "c"]  # by hand: "aa" twice, then "aaa", then "aaab"
    if mode == "byte":
        merges = [(left.encode(), right.encode()) for left, right in merges]
        expected = [value.encode() for value in expected]
    tokens = initial_tokens(mode, "aaabdaaabac")
    assert reference.merge_by_rank(tokens, reference.replay_ranks(merges), floor=True) == expected
    assert reference.encode_piece(tokens, merges) == expected


# Merge lists where plain rank order is wrong, with what replay gives (by hand), and what
# makes the difference: the floor, or a pair's later rank.
REPLAY_CASES = [
    # (ab, c) rebuilds "abc" at rank 4; replay has passed (abc, d) at rank 3 by then
    ([("a", "b"), ("b", "c"), ("a", "bc"), ("abc", "d"), ("ab", "c")], "abcd", ["abc", "d"], "floor"),
    # (b, aaa) learned twice: "aaa" only forms at rank 3 ((a, a) takes the first two a's at
    # rank 0, so (a, aa) never meets), so rank 4 must apply it
    ([("a", "a"), ("a", "aa"), ("b", "aaa"), ("aa", "a"), ("b", "aaa")], "baaa", ["baaa"], "later rank"),
]


@pytest.mark.parametrize("mode", ["char", "byte"])
@pytest.mark.parametrize("merges, text, expected, why", REPLAY_CASES)
def test_rank_based_replay_where_the_floor_decides(mode, merges, text, expected, why):
    base = sorted(set(text))
    if mode == "byte":
        merges = [(left.encode(), right.encode()) for left, right in merges]
        expected = [value.encode() for value in expected]
    tokens = initial_tokens(mode, text)
    assert reference.encode_piece(tokens, merges) == expected
    assert reference.merge_by_rank(tokens, reference.replay_ranks(merges), floor=True) == expected
    ranks = reference.replay_ranks(merges)
    if why == "floor":
        assert reference.merge_by_rank(tokens, ranks) != expected
    else:
        first_ranks = {pair: pair_ranks[0] for pair, pair_ranks in ranks.items()}
        assert reference.merge_by_rank(tokens, first_ranks, floor=True) != expected
    tokenizer = Tokenizer(mode=mode, merges=merges, base_tokens=None if mode == "byte" else base)
    assert [tokenizer.token_bytes(i) for i in tokenizer.encode_ordinary(text)] == [as_bytes(v) for v in expected]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["char", "byte"])
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_rank_based_replay_equals_replay_pass_by_pass(mode, data):
    _, merges, text = data.draw(merge_lists(mode, anywhere=True))
    tokens = initial_tokens(mode, text)
    by_rank = reference.merge_by_rank(tokens, reference.replay_ranks(merges), floor=True)
    assert by_rank == reference.encode_piece(tokens, merges)


# -- merge_by_rank against the engine --------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["char", "byte"])
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_rule_replay_in_the_engine_is_merge_by_rank_with_a_floor(mode, data):
    base, merges, text = data.draw(merge_lists(mode))
    tokenizer = Tokenizer(mode=mode, merges=merges, base_tokens=None if mode == "byte" else base)
    twin = reference.merge_by_rank(initial_tokens(mode, text), reference.replay_ranks(merges), floor=True)
    assert [tokenizer.token_bytes(i) for i in tokenizer.encode_ordinary(text)] == [as_bytes(v) for v in twin]


@st.composite
def tiktoken_vocabularies(draw):
    """(ranks, text): the 256 bytes and random multi-byte tokens over a small alphabet, ranked
    by a random permutation (single bytes need not come first, as in real files)."""
    alphabet = draw(st.sampled_from(["ab", "abc", "aé"])).encode("utf-8")
    longer = draw(st.lists(st.lists(st.sampled_from(list(alphabet)), min_size=2, max_size=6), max_size=40))
    tokens = list(dict.fromkeys([bytes([b]) for b in range(256)] + [bytes(t) for t in longer]))
    order = draw(st.permutations(range(len(tokens))))
    ranks = dict(zip(tokens, order))
    length = draw(st.sampled_from(LENGTHS))
    text = bytes(draw(st.lists(st.sampled_from(list(alphabet)), min_size=length, max_size=length)))
    return ranks, text.decode("utf-8", errors="ignore") or "a"


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(case=tiktoken_vocabularies())
def test_rule_tiktoken_in_the_engine_is_encode_piece_tiktoken(case):
    ranks, text = case
    tokenizer = tokenizer_from_ranks(ranks, pattern=None, special_tokens={})
    twin = reference.encode_piece_tiktoken(text.encode("utf-8"), ranks)
    assert [tokenizer.token_bytes(i) for i in tokenizer.encode_ordinary(text)] == twin
    # the pair table written out (what the engine is given) merges the same way
    if len(twin) > 1:
        tokens = [bytes([b]) for b in text.encode("utf-8")]
        assert reference.merge_by_rank(tokens, reference.tiktoken_pair_ranks(ranks)) == twin


@pytest.mark.slow
@pytest.mark.peers
@settings(max_examples=50, deadline=None)
@given(case=tiktoken_vocabularies())
def test_encode_piece_tiktoken_is_tiktoken(case):
    tiktoken = pytest.importorskip("tiktoken")
    ranks, text = case
    encoding = tiktoken.Encoding("random", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={})
    by_rank = {rank: token for token, rank in ranks.items()}
    assert [by_rank[i] for i in encoding.encode_ordinary(text)] == reference.encode_piece_tiktoken(
        text.encode("utf-8"), ranks
    )


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(data=st.data(), ignore_merges=st.booleans())
def test_rule_hf_in_the_engine_is_encode_piece_hf(data, ignore_merges):
    _, merges, text = data.draw(merge_lists("byte"))
    content = huggingface_json(Tokenizer(mode="byte", merges=merges))
    content["model"]["ignore_merges"] = ignore_merges
    tokenizer = tokenizer_from_json(content)
    vocabulary = set(reference.vocabulary(reference.BYTE_TOKENS, merges)) if ignore_merges else None
    twin = reference.encode_piece_hf(initial_tokens("byte", text), merges, vocabulary=vocabulary)
    assert [tokenizer.token_bytes(i) for i in tokenizer.encode_ordinary(text)] == twin


def test_hf_keeps_the_last_rank_of_a_pair_listed_twice():
    # replay: (b, a) at rank 0 first; HF: (b, a) ranks 2, after (a, b) at rank 1
    merges = [("b", "a"), ("a", "b"), ("b", "a")]
    assert reference.encode_piece(list("aba"), merges) == ["a", "ba"]
    assert reference.encode_piece_hf(list("aba"), merges) == ["ab", "a"]


# -- counting pieces -------------------------------------------------------------------------

TEXT_PARTS = ["the", " cat", "  ", "\n", "\r\n", "sat.", "123456", "don't", "é", "人人", "😀", " ", "\t", "X"]
documents_strategy = st.lists(st.lists(st.sampled_from(TEXT_PARTS), max_size=30).map("".join), min_size=1, max_size=6)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(documents=documents_strategy, pattern=st.sampled_from(["gpt2", "cl100k", "o200k", "llama3"]))
def test_count_pieces_equals_the_engine_and_a_counter(documents, pattern):
    counts = list(reference.count_pieces(documents, pattern).items())
    counter = Counter(piece for document in documents for piece in patterns.split(document, pattern))
    assert counts == list(counter.items())  # same pieces, same counts, same order
    for threads in (1, 2):
        pieces, piece_counts = _engine.count_pieces(documents, pattern, num_threads=threads)
        assert counts == list(zip(pieces, piece_counts))


@settings(max_examples=50, deadline=None)
@given(documents=documents_strategy, pattern=st.sampled_from([None, "gpt2", "cl100k", r"\w+|\W"]))
def test_count_pieces_equals_training_counts_with_documents_cut_into_blocks(documents, pattern):
    name, regex = (None, None) if pattern is None else patterns.resolve_pattern(pattern)
    # tiny blocks and batches, so that long documents are cut and counted in several batches
    with mock.patch.object(train_module, "COUNT_BLOCK_CHARS", 40), mock.patch.object(train_module, "BATCH_CHARS", 100):
        pieces, counts, _ = train_module._count_chunks(documents, name, regex, "char", 1)
    assert list(zip(pieces, counts)) == list(reference.count_pieces(documents, pattern).items())


@pytest.mark.data
def test_count_pieces_on_real_prose(shakespeare):
    text = shakespeare[:300_000]
    documents = text.split("\n\n")  # one document per speech
    for pattern in ("gpt2", "cl100k"):
        counts = reference.count_pieces(documents, pattern)
        # more threads than cores too: blocks finish out of order and wait to be merged in order
        for threads in (2, 8):
            pieces, piece_counts = _engine.count_pieces(documents, pattern, num_threads=threads)
            assert list(counts.items()) == list(zip(pieces, piece_counts))
        assert sum(counts.values()) == sum(len(patterns.split(d, pattern)) for d in documents)
