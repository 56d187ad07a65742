"""Long pieces in the compiled encoder: the chunks of ``merge.hpp`` (``merge_chunked``, for
tiktoken's and HF's rule) and its rank buckets (``merge_long``, for replay) against
``reference.merge_by_rank``, for every rule, at lengths on both sides of each threshold the
engine uses:

- ``SHORT_PIECE`` = 64 symbols: up to it the O(n^2) scan, above it the chunks or the buckets;
- ``CHUNK`` = 8 symbols, joined at seams that are checked (tests/native/test_engine.cpp runs
  chunks of 1 to 8 symbols and the fall-back to the buckets);
- 256 slots in the rank -> bucket table, grown when a piece has more than 128 distinct ranks;
- 2**16 symbols, where the engine used to switch to a second long-piece strategy (kept as a
  regression length), and the worker's scratch keeps buffers of up to 2**16 symbols.

Each piece is one piece (no pattern), so the whole text goes through one merge.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_encoders import engine_for, tiktoken_engine_for

from bytepair import reference
from datafiles import data_file

THRESHOLD_LENGTHS = [63, 64, 65, 66, 129, 300]
ALPHABET = "abcd"


def small_ranks(seed):
    """Every string of 2 to 4 letters of ALPHABET as a token, in a shuffled rank order (so a
    longer token often ranks below its parts: tiktoken's rule then goes back down), after the
    256 bytes."""
    rng = random.Random(seed)
    strings = [""]
    tokens = []
    for _ in range(4):
        strings = [s + c for s in strings for c in ALPHABET]
        tokens += strings if len(strings[0]) >= 2 else []
    rng.shuffle(tokens)
    ranks = {bytes([b]): b for b in range(256)}
    for token in tokens:
        ranks[token.encode()] = len(ranks)
    return ranks


def reference_ids(ranks, pair_ranks, text, *, floor):
    tokens = reference.merge_by_rank([bytes([b]) for b in text.encode()], pair_ranks, floor=floor)
    return [ranks[token] for token in tokens]


@st.composite
def long_piece(draw):
    length = draw(st.sampled_from(THRESHOLD_LENGTHS) | st.integers(2, 400))
    letters = draw(st.sampled_from(["ab", "abc", ALPHABET, "a", "aab"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = random.Random(seed)
    return "".join(rng.choice(letters) for _ in range(length)), seed % 4


@st.composite
def periodic_piece(draw):
    """A unit of 1 to 12 letters repeated, some copies with one letter changed, after a few
    other letters: the chunked merge merges a chunk (CHUNK = 8 symbols) equal to the one
    before it only once, and must tell it from one that differs in a single symbol."""
    letters = draw(st.sampled_from(["ab", "abc", ALPHABET]))
    length = draw(st.sampled_from([8, 8, 4, 1, 2, 3, 7, 12]))
    unit = draw(st.text(alphabet=letters, min_size=length, max_size=length))
    copies = []
    for _ in range(draw(st.integers(1, 60))):
        at = draw(st.integers(0, 2 * length))  # from `length` on: the unit as it is
        copies.append(unit if at >= length else unit[:at] + draw(st.sampled_from(letters)) + unit[at + 1 :])
    head = draw(st.sampled_from(["", "", draw(st.text(alphabet=letters, max_size=9))]))
    return head + "".join(copies), draw(st.integers(0, 3))


@pytest.fixture(scope="module")
def vocabularies():
    return [small_ranks(seed) for seed in range(4)]


@pytest.mark.slow
@settings(max_examples=250, deadline=None)
@given(case=long_piece() | periodic_piece())
def test_tiktoken_rule_on_long_pieces_equals_the_reference(vocabularies, case):
    text, which = case
    ranks = vocabularies[which]
    pair_ranks = reference.tiktoken_pair_ranks(ranks)
    encoder = engine_for(ranks, pair_ranks, whole_piece=True, monotonic=False)
    assert encoder.encode_ordinary(text) == reference_ids(ranks, pair_ranks, text, floor=False)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(case=long_piece(), merges_seed=st.integers(0, 2**32 - 1))
def test_replay_and_hf_rules_on_long_pieces_equal_the_reference(case, merges_seed):
    text, _ = case
    # a merge list over the letters that learns some pairs twice, as real lists can
    rng = random.Random(merges_seed)
    values = [c.encode() for c in ALPHABET]
    merges = []
    for _ in range(150):
        left, right = rng.choice(values), rng.choice(values)
        if len(left + right) <= 6:
            merges.append((left, right))
            values.append(left + right)
    merges += merges[:5]
    ranks = {bytes([b]): b for b in range(256)}
    for left, right in merges:
        ranks.setdefault(left + right, len(ranks))
    replay = reference.replay_ranks(merges)
    encoder = engine_for(ranks, replay, whole_piece=False, monotonic=True)
    assert encoder.encode_ordinary(text) == reference_ids(ranks, replay, text, floor=True)
    hf = reference.hf_ranks(merges)
    encoder = engine_for(ranks, hf, whole_piece=False, monotonic=False)
    assert encoder.encode_ordinary(text) == reference_ids(ranks, hf, text, floor=False)


@pytest.mark.slow
def test_more_than_128_distinct_ranks_in_one_piece():
    # the rank -> bucket table starts at 256 slots and grows past 128 ranks
    letters = "abcdefgh"
    rng = random.Random(1)
    tokens = sorted(
        {a + b for a in letters for b in letters} | {a + b + c for a in letters for b in letters for c in letters}
    )
    rng.shuffle(tokens)
    ranks = {bytes([b]): b for b in range(256)}
    for token in tokens:
        ranks[token.encode()] = len(ranks)
    pair_ranks = reference.tiktoken_pair_ranks(ranks)
    text = "".join(rng.choice(letters) for _ in range(3000))
    pieces = reference.merge_by_rank([bytes([b]) for b in text.encode()], pair_ranks)
    # each token of two or more letters was made at its own rank: that many buckets at least
    assert len({piece for piece in pieces if len(piece) > 1}) > 128
    encoder = engine_for(ranks, pair_ranks, whole_piece=True, monotonic=False)
    assert encoder.encode_ordinary(text) == [ranks[piece] for piece in pieces]


def test_tokens_below_id_256_join_seams_by_the_split_they_form_from():
    # "aaaa" has three splits, all pairs of ids below 256 (the pair table's dense array); only
    # (aa, aa) ends the merging of its bytes, and the chunked merge walks that split back from
    # a seam. With (a, aaa) left beside it, the seam between "aaaa" and "a" (chunks of 8
    # symbols: "bbbbaaaa" | "abbb...") was taken to hold: [aaaa, a] instead of [aa, aaa].
    ranks = {b"a": 1, b"aa": 50, b"aaa": 60, b"aaaa": 70}
    free = iter(rank for rank in range(300) if rank not in ranks.values())
    for b in range(256):
        if bytes([b]) not in ranks:
            ranks[bytes([b])] = next(free)
    encoder = tiktoken_engine_for(ranks)
    pair_ranks = reference.tiktoken_pair_ranks(ranks)
    for text in ["b" * 4 + "aaaaa" + "b" * 60, "bbb aaaaa " + "b" * 80, ("a" * 10 + "b") * 12]:
        assert len(text) > 64  # the chunked merge, not the scan
        assert encoder.encode_ordinary(text) == reference_ids(ranks, pair_ranks, text, floor=False)
    assert encoder.encode_ordinary("b" * 4 + "aaaaa" + "b" * 60)[4:6] == [ranks[b"aa"], ranks[b"aaa"]]


@pytest.fixture(scope="module")
def cl100k():
    tiktoken = pytest.importorskip("tiktoken", reason="compared with tiktoken (test extra)")
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(data_file("vocab", "cl100k_base.tiktoken")))
    encoder = engine_for(ranks, reference.tiktoken_pair_ranks(ranks), whole_piece=True, monotonic=False)
    encoding = tiktoken.Encoding("cl100k", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={})
    return encoder, encoding


@pytest.mark.data
@pytest.mark.peers
@pytest.mark.slow
@pytest.mark.parametrize("length", [63, 64, 65, 1000, 4000, 2**16 - 1, 2**16, 2**16 + 1])
@pytest.mark.parametrize(
    "kind", ["x", "=", "letters", "letters and digits", "ab", "7 letters", "8 letters, one changed"]
)
def test_cl100k_long_pieces_equal_tiktoken(cl100k, length, kind):
    encoder, encoding = cl100k
    rng = random.Random(length)
    # periodic: chunks (8 symbols) equal to the one before, or differing in their last symbol;
    # '=' * n is cut into tokens of 64, so its seams fail and chunks are mended
    units = {"=": "=", "ab": "ab", "7 letters": "kqzwvjx", "8 letters, one changed": "qwrtzpsd" * 2 + "qwrtzpsf"}
    if kind in units:
        text = (units[kind] * length)[:length]
    else:
        alphabet = {"x": "x", "letters": "abcdefghijklmnopqrstuvwxyz", "letters and digits": "etaoin0123"}[kind]
        text = "".join(rng.choice(alphabet) for _ in range(length))
    assert encoder.encode_ordinary(text) == encoding.encode_ordinary(text)


@pytest.mark.data
@pytest.mark.peers
@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_loaded_vocabularies_join_long_pieces_as_tiktoken(name):
    """A vocabulary loaded from its ``.tiktoken`` file derives its pairs and each token's merge
    tree, and the chunked merge tests its seams on those trees (merge.hpp, seam_walk): random
    letters (one piece under both patterns) of new texts at every length, against tiktoken."""
    tiktoken = pytest.importorskip("tiktoken", reason="compared with tiktoken (test extra)")
    from tiktoken.load import load_tiktoken_bpe

    import bytepair

    path = data_file("vocab", f"{name}.tiktoken")
    ours = bytepair.load(name, path=path)
    theirs = tiktoken.Encoding(
        name, pat_str=r"[\s\S]+", mergeable_ranks=load_tiktoken_bpe(str(path)), special_tokens={}
    )
    rng = random.Random(name)
    for length in [65, 100, 257, 1000, 4000]:
        for alphabet in ["abcdefghijklmnopqrstuvwxyz", "ab", "etaoinshr", "x"]:
            for _ in range(20):
                text = "".join(rng.choice(alphabet) for _ in range(length))
                assert ours.encode_ordinary(text) == theirs.encode_ordinary(text), (length, alphabet, text[:40])
