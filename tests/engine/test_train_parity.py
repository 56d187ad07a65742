"""The compiled trainer, ``_engine.train_merges``, gives exactly ``reference.train_bpe``, in
both its layouts: unique chunks as linked lists ("chunks") and the chunks end to end in one
array ("sequence", seed 000's one long text in a few bytes per symbol).

Every merge is compared as a whole tuple ``(left_id, right_id, merged_id, frequency,
length_after)``: the merges and their frequencies and sequence lengths come from the reference
(its ``log``), the ids from ``reference.vocabulary``. Hypothesis draws texts from tiny alphabets
so that tied counts are the rule, not the exception; the tie-break (first occurrence, in chunk
order) is where fast trainers usually part from the seeds.
"""

from __future__ import annotations

import importlib.machinery
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import _engine, patterns, reference
from datafiles import data_file

# Tiny alphabets make equal counts (ties) and long runs of one letter common.
tied_text = st.one_of(
    st.text(alphabet="ab", max_size=80),
    st.text(alphabet="abc", max_size=80),
    st.text(alphabet="ab c\n", max_size=120),
)
unicode_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
any_text = st.one_of(tied_text, unicode_text)
parity = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def symbols(piece, mode):
    """A piece as the reference's base tokens: its characters, or its UTF-8 bytes."""
    return tuple(piece) if mode == "char" else tuple(reference.BYTE_TOKENS[b] for b in piece.encode())


def base_for(pieces, mode):
    """The base alphabet train.py would use: sorted characters, or the 256 bytes."""
    return sorted(set("".join(pieces))) if mode == "char" else reference.BYTE_TOKENS


def reference_records(pieces, counts, mode, base, vocab_size, min_frequency):
    """What train_merges must return, computed by the reference alone."""
    logged = []
    merges = reference.train_bpe(
        {symbols(p, mode): c for p, c in zip(pieces, counts)},
        base,
        vocab_size,
        min_frequency,
        log=lambda n, pair, merged, frequency, length, size: logged.append((frequency, length)),
    )
    index = {value: i for i, value in enumerate(reference.vocabulary(base, merges))}
    return [
        (index[left], index[right], index[left + right], frequency, length)
        for (left, right), (frequency, length) in zip(merges, logged)
    ]


LAYOUTS = ["chunks", "sequence"]


def compiled_records(pieces, counts, mode, base, vocab_size, min_frequency, layout=None):
    return _engine.train_merges(
        pieces,
        counts,
        mode=mode,
        base_tokens=base if mode == "char" else [],
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        layout=layout,
    )


def assert_parity(pieces, counts, mode, extra, min_frequency):
    base = base_for(pieces, mode)
    args = (pieces, counts, mode, base, len(base) + extra, min_frequency)
    expected = reference_records(*args)
    for layout in LAYOUTS:
        assert compiled_records(*args, layout=layout) == expected, layout


def unique_pieces(pieces, multiplier=1):
    """Unique pieces in order of first appearance, with their counts (as train.py counts)."""
    counted = Counter(pieces)
    return list(counted), [c * multiplier for c in counted.values()]


# Blocks of every str width (ASCII, Latin-1, BMP, astral), so that one piece can be stored at
# two widths in two blocks and must still be counted as one.
BLOCK_TEXT = st.text(st.sampled_from(list("ab \n'sé1") + ["\u00e9", "\u4eba", "\U0001f600", "\u2028"]), max_size=40)


@settings(max_examples=200, deadline=None)
@given(
    blocks=st.lists(BLOCK_TEXT, max_size=8),
    pattern=st.sampled_from(["gpt2", "cl100k", "o200k", "llama3"]),
    threads=st.integers(1, 3),
)
def test_counting_pieces_equals_a_counter_over_split(blocks, pattern, threads):
    pieces, counts = _engine.count_pieces(blocks, pattern, num_threads=threads)
    expected = Counter(piece for block in blocks for piece in patterns.split(block, pattern))
    assert pieces == list(expected)  # first-appearance order
    assert counts == list(expected.values())


def test_the_compiled_module_is_the_one_loaded():
    assert _engine.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def test_textbook_aaabdaaabac_three_merges():
    # By hand, ids a=0 b=1 c=2 d=3:
    # 1. a a a b d a a a b a c: (a,a) occurs 4 times (overlaps count), the most -> "aa" (4),
    #    merged left to right: aa a b d aa a b a c, 9 tokens.
    # 2. (aa,a) and (a,b) both occur twice; (aa,a) occurs first -> "aaa" (5): 7 tokens.
    # 3. (aaa,b) occurs twice, everything else once -> "aaab" (6): aaab d aaab a c, 5 tokens.
    records = _engine.train_merges(
        ["aaabdaaabac"], [1], mode="char", base_tokens=list("abcd"), vocab_size=7, min_frequency=2
    )
    assert records == [(0, 0, 4, 4, 9), (4, 0, 5, 2, 7), (5, 1, 6, 2, 5)]


def test_seed_001_hand_example_first_four_merges():
    # low x5, lower x2, newest x6, widest x3: 15 + 10 + 36 + 18 = 79 tokens.
    # (e,s) and (s,t) both occur 6 + 3 = 9 times; (e,s) comes first inside "newest" -> "es".
    # (es,t) 9 -> "est". Then (l,o) and (o,w) occur 5 + 2 = 7 times; (l,o) first -> "lo",
    # then (lo,w) 7 -> "low". Each merge removes one token per occurrence: 70, 61, 54, 47.
    words = ["low", "lower", "newest", "widest"]
    base = sorted(set("".join(words)))  # d e i l n o r s t w
    records = _engine.train_merges(
        words, [5, 2, 6, 3], mode="char", base_tokens=base, vocab_size=len(base) + 4, min_frequency=2
    )
    e, s, t, l, o, w = (base.index(c) for c in "estlow")  # noqa: E741 (the letter l)
    es, est, lo, low = range(len(base), len(base) + 4)
    assert records == [(e, s, es, 9, 70), (es, t, est, 9, 61), (l, o, lo, 7, 54), (lo, w, low, 7, 47)]


def test_a_power_of_two_run_of_one_letter_halves_each_merge():
    # 2**20 x's: merge k joins two copies of x * 2**k; it occurs 2**(20-k) - 1 times (runs
    # overlap) and leaves 2**(19-k) tokens. After 20 merges one token is left, no pairs.
    length = 1 << 20
    records = _engine.train_merges(["x" * length], [1], mode="char", base_tokens=["x"], vocab_size=100, min_frequency=1)
    assert records == [(k, k, k + 1, (length >> k) - 1, length >> (k + 1)) for k in range(20)]


def test_min_frequency_stops_before_a_rare_pair():
    # "abab": (a,b) occurs twice, (b,a) once. min_frequency=3 stops at once; 2 allows one merge.
    def run(min_frequency):
        return _engine.train_merges(
            ["abab"], [1], mode="char", base_tokens=["a", "b"], vocab_size=10, min_frequency=min_frequency
        )

    assert run(3) == []
    assert run(2) == [(0, 1, 2, 2, 2)]


def test_vocab_size_at_the_base_alphabet_learns_nothing():
    assert _engine.train_merges(["aaaa"], [1], mode="byte", base_tokens=[], vocab_size=256, min_frequency=1) == []


@parity
@given(text=any_text, extra=st.integers(0, 40), min_frequency=st.integers(1, 3))
def test_char_mode_one_chunk_equals_reference(text, extra, min_frequency):
    assert_parity([text], [1], "char", extra, min_frequency)


@parity
@given(text=any_text, extra=st.integers(0, 40), min_frequency=st.integers(1, 3))
def test_byte_mode_one_chunk_equals_reference(text, extra, min_frequency):
    assert_parity([text], [1], "byte", extra, min_frequency)


@parity
@given(
    text=any_text,
    split=st.sampled_from(["gpt2", "spaces"]),
    multiplier=st.integers(1, 3),
    mode=st.sampled_from(["char", "byte"]),
    extra=st.integers(0, 40),
    min_frequency=st.integers(1, 3),
)
def test_weighted_chunks_equal_reference(text, split, multiplier, mode, extra, min_frequency):
    pieces = patterns.split(text, "gpt2") if split == "gpt2" else text.split(" ")
    chunks, counts = unique_pieces(pieces, multiplier)
    assert_parity(chunks, counts, mode, extra, min_frequency)


@parity
@given(
    words=st.lists(st.text(alphabet="abc", min_size=1, max_size=6), min_size=1, max_size=8, unique=True),
    counts=st.lists(st.integers(1, 4), min_size=8, max_size=8),
    extra=st.integers(0, 30),
)
@pytest.mark.slow
def test_tied_weights_across_chunks_equal_reference(words, counts, extra):
    # Equal counts on different chunks: the tie goes to the chunk that comes first.
    assert_parity(words, counts[: len(words)], "char", extra, 1)


@settings(max_examples=50, deadline=None)
@given(text=tied_text, extra=st.integers(1, 30))
def test_ids_follow_the_reference_vocabulary(text, extra):
    base = base_for([text], "char")
    records = compiled_records([text], [1], "char", base, len(base) + extra, 1)
    values = list(base)
    for left, right, merged, _, _ in records:
        if merged == len(values):  # a new value takes the next id
            values.append(values[left] + values[right])
        assert values[merged] == values[left] + values[right]
    merges = [(values[left], values[right]) for left, right, *_ in records]
    assert values == reference.vocabulary(base, merges)


def test_bytes_chunks_train_like_their_text_in_byte_mode():
    text = "héllo wörld, hello world"
    as_text = compiled_records([text], [2], "byte", None, 280, 1)
    as_bytes = compiled_records([text.encode()], [2], "byte", None, 280, 1)
    assert as_bytes == as_text


@pytest.mark.parametrize("layout", LAYOUTS)
def test_packed_records_hold_the_same_merges_as_the_tuples(layout):
    pieces, counts = ["héllo wörld", "hello", " world", "aaaa"], [3, 5, 2, 4]
    tuples = compiled_records(pieces, counts, "byte", None, 300, 1, layout)
    packed = _engine.train_merges(
        pieces, counts, mode="byte", base_tokens=[], vocab_size=300, min_frequency=1, layout=layout, packed=True
    )
    assert len(tuples) > 10
    assert np.frombuffer(packed, dtype=np.int64).reshape(-1, 5).tolist() == [list(record) for record in tuples]


def test_spell_merges_names_a_records_array_of_the_wrong_shape():
    with pytest.raises(ValueError, match="5 columns, not 3"):
        _engine.spell_merges(np.zeros((2, 3), dtype=np.int64), [b"a"])


def test_progress_counts_up_to_the_number_of_merges():
    seen = []
    records = _engine.train_merges(
        ["abcabdabcabe" * 20],
        [1],
        mode="byte",
        base_tokens=[],
        vocab_size=300,
        min_frequency=1,
        progress=seen.append,
    )
    assert seen == sorted(seen)
    assert seen[-1] == len(records)


@pytest.mark.parametrize(
    "chunks, counts, base_tokens, message",
    [
        (["ab"], [0], ["a", "b"], "counts must be at least 1"),
        (["ab", "b"], [1], ["a", "b"], "zip"),
        (["aq"], [1], ["a"], "'q'"),
        (["a"], [1], ["ab"], "'ab'"),
        (["a"], [1], ["a", "a"], "listed twice"),
    ],
)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_bad_arguments_are_value_errors_that_name_the_value(chunks, counts, base_tokens, message, layout):
    with pytest.raises(ValueError, match=message):
        _engine.train_merges(
            chunks, counts, mode="char", base_tokens=base_tokens, vocab_size=9, min_frequency=1, layout=layout
        )


@pytest.mark.parametrize("layout", LAYOUTS)
def test_unknown_mode_is_a_value_error(layout):
    with pytest.raises(ValueError, match="'words'"):
        _engine.train_merges(["a"], [1], mode="words", base_tokens=["a"], vocab_size=9, min_frequency=1, layout=layout)
    with pytest.raises(ValueError, match="'rows'"):
        _engine.train_merges(["a"], [1], mode="char", base_tokens=["a"], vocab_size=9, min_frequency=1, layout="rows")


def test_one_long_text_takes_the_sequence_layout_and_pretokenized_text_the_chunks():
    assert _engine._choose_layout(["ab" * 40_000], [1]) == "sequence"
    assert _engine._choose_layout(["ab", " cd"], [50_000, 40_000]) == "chunks"
    assert _engine._choose_layout(["ab"], [1]) == "chunks"  # small: either is cheap


# Texts of many blocks of the sequence layout's occurrence index (64 Ki positions), where the
# reference is too slow: the two layouts against each other.
@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(
    alphabet=st.sampled_from(["ab", "abc ", "aé 😀", "the cat sat", "xxxxy"]),
    lengths=st.lists(st.integers(1, 150_000), min_size=1, max_size=3),
    weights=st.lists(st.integers(1, 3), min_size=3, max_size=3),
    mode=st.sampled_from(["char", "byte"]),
    extra=st.integers(1, 300),
    seed=st.integers(0, 2**32 - 1),
)
def test_layouts_agree_on_texts_of_many_blocks(alphabet, lengths, weights, mode, extra, seed):
    import random

    rng = random.Random(seed)
    chunks = list(dict.fromkeys("".join(rng.choice(alphabet) for _ in range(n)) for n in lengths))
    counts = weights[: len(chunks)]
    base = base_for(chunks, mode)
    args = (chunks, counts, mode, base, len(base) + extra, 2)
    assert compiled_records(*args, layout="sequence") == compiled_records(*args, layout="chunks")


@pytest.mark.data
@pytest.mark.slow
def test_wikitext_prefix_as_one_chunk_all_500_merges():
    text = data_file("wikitext-2/train.txt").read_text(encoding="utf-8")[:50_000]
    assert_parity([text], [1], "char", 500, 2)


@pytest.mark.data
@pytest.mark.slow
def test_wikitext_train_as_one_chunk_both_layouts_500_merges():
    text = data_file("wikitext-2/train.txt").read_text(encoding="utf-8")
    base = base_for([text], "char")
    args = ([text], [1], "char", base, len(base) + 500, 2)
    assert compiled_records(*args, layout="sequence") == compiled_records(*args, layout="chunks")


@pytest.mark.data
@pytest.mark.slow
def test_wikitext_prefix_pretokenized_bytes_300_merges():
    text = data_file("wikitext-2/train.txt").read_text(encoding="utf-8")[:100_000]
    chunks, counts = unique_pieces(patterns.split(text, "gpt2"))
    assert_parity(chunks, counts, "byte", 300, 2)
