"""Char mode without a pattern: the engine cuts the text where no merge can span
(engine/cuts.hpp, twin ``reference.safe_cuts``) and encodes the parts apart.

- the rule itself: replaying the merges on the parts gives the tokens of the whole;
- the engine (through ``Tokenizer``) equals ``reference.encode_piece`` on the whole text, on
  random texts over small alphabets with trained merges, with and without byte fallback;
- unknown characters are still reported, each once;
- one text spread over threads (cut into spans at safe boundaries, ``num_threads``) gives the
  ids of one thread, with spans as short as a few characters (the tests lower the span size);
- on WikiText-2 train with seed 000's tokenizer: the same ids as the whole text merged as one
  piece (the engine's path before the cuts) and as the reference on a slice.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair import Tokenizer, _engine, reference, train
from bytepair.errors import UnknownCharactersError
from datafiles import data_file

# Small alphabets, so that merges cover many junctions; non-ASCII and astral characters too.
ALPHABETS = ["ab", "abc ", "ab\n c", "aé 😀", "the cat sat", "xy"]


def trained_merges(corpus, extra):
    """Merges the reference learns on ``corpus`` as one sequence (seed 000: no pattern)."""
    base = sorted(set(corpus))
    return base, reference.train_bpe({tuple(corpus): 1}, base, len(base) + extra, min_frequency=1)


def reference_ids(tokenizer, merges, text):
    values = reference.encode_piece(list(text), merges)
    return [tokenizer.encode_single_token(value) for value in values]


@st.composite
def cases(draw):
    alphabet = draw(st.sampled_from(ALPHABETS))
    corpus = "".join(draw(st.lists(st.sampled_from(alphabet), min_size=2, max_size=200)))
    base, merges = trained_merges(corpus, draw(st.integers(1, 40)))
    # past 64 characters, where the engine cuts (shorter texts are one piece)
    text = "".join(draw(st.lists(st.sampled_from(base), min_size=65, max_size=400)))
    return base, merges, text


@settings(max_examples=100, deadline=None)
@given(case=cases())
def test_parts_replay_to_the_tokens_of_the_whole(case):
    _, merges, text = case
    cuts = reference.safe_cuts(text, merges)
    parts = [text[start:end] for start, end in zip([0, *cuts], [*cuts, len(text)])]
    assert [token for part in parts for token in reference.encode_piece(list(part), merges)] == reference.encode_piece(
        list(text), merges
    )


@settings(max_examples=100, deadline=None)
@given(case=cases())
def test_cut_encoding_equals_the_reference(case):
    base, merges, text = case
    tokenizer = Tokenizer(mode="char", merges=merges, base_tokens=base)
    assert tokenizer.encode(text) == reference_ids(tokenizer, merges, text)
    assert tokenizer.encode_to_array(text).tolist() == reference_ids(tokenizer, merges, text)
    # pieces split in Python (a custom regex) are cut the same way when long
    encoder = _engine.Encoder(**tokenizer.model.engine_spec(), pattern=None)
    assert encoder.encode_pieces([text, text[::-1]]) == reference_ids(tokenizer, merges, text) + reference_ids(
        tokenizer, merges, text[::-1]
    )


@settings(max_examples=80, deadline=None)
@given(case=cases(), data=st.data())
def test_cut_encoding_with_byte_fallback(case, data):
    base, merges, text = case
    tokenizer = Tokenizer(mode="char", merges=merges, base_tokens=base, byte_fallback=True)
    # characters with no base token, anywhere: their bytes' ids, never a cut next to them
    for _ in range(data.draw(st.integers(0, 5))):
        at = data.draw(st.integers(0, len(text)))
        text = text[:at] + data.draw(st.sampled_from(["é", "中", "🙂", "q"])) + text[at:]
    first_fallback = len(tokenizer.model.token_bytes)
    expected = []
    for value in reference.encode_piece([c if c in base else c.encode() for c in text], merges):
        if isinstance(value, bytes):
            expected.extend(first_fallback - 256 + b for b in value)
        else:
            expected.append(tokenizer.encode_single_token(value))
    assert tokenizer.encode(text) == expected


@contextmanager
def spans_of(characters):
    """One text is spread over threads in spans of this many characters and more."""
    previous = _engine._set_spread_min_chars(characters)
    try:
        yield
    finally:
        _engine._set_spread_min_chars(previous)


@settings(max_examples=100, deadline=None)
@given(case=cases(), threads=st.integers(2, 6), span=st.integers(1, 60))
def test_spread_over_threads_equals_one_thread_and_the_reference(case, threads, span):
    base, merges, text = case
    tokenizer = Tokenizer(mode="char", merges=merges, base_tokens=base)
    expected = reference_ids(tokenizer, merges, text)
    assert tokenizer.encode(text, num_threads=1) == expected
    with spans_of(span):
        assert tokenizer.encode(text, num_threads=threads) == expected
        assert tokenizer.encode_to_array(text, num_threads=threads).tolist() == expected
        assert tokenizer.encode_ordinary(text, num_threads=threads) == expected


def test_spread_long_text_into_one_list():
    # past PARALLEL_LISTS_MIN_IDS ids, so that the list is filled on the threads
    alphabet = "abcdefgh ijk\né"
    text = "".join(alphabet[(k * k + k // 7) % len(alphabet)] for k in range(300_000))
    base, merges = trained_merges(text[:3000], 8)
    tokenizer = Tokenizer(mode="char", merges=merges, base_tokens=base)
    one = tokenizer.encode(text, num_threads=1)
    assert len(one) > _engine.PARALLEL_LISTS_MIN_IDS
    with spans_of(1000):
        for threads in (2, 3, 7):
            assert tokenizer.encode(text, num_threads=threads) == one
            assert tokenizer.encode_to_array(text, num_threads=threads).tolist() == one


def test_spread_reports_unknown_characters_once():
    tokenizer = Tokenizer(mode="char", merges=[("a", "b")], base_tokens="ab ")
    with spans_of(10), pytest.raises(UnknownCharactersError) as error:
        tokenizer.encode("ab ab z ab" * 50 + "y" + "ab " * 40, num_threads=4)
    assert error.value.characters == ["y", "z"]


def test_num_threads_is_checked():
    tokenizer = Tokenizer(mode="char", merges=[("a", "b")], base_tokens="ab ")
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError):
            tokenizer.encode("ab", num_threads=bad)
        with pytest.raises(ValueError):
            tokenizer.encode_to_array("ab", num_threads=bad)


def test_unknown_characters_are_reported_once_on_the_cut_path():
    tokenizer = Tokenizer(mode="char", merges=[("a", "b")], base_tokens="ab ")
    with pytest.raises(UnknownCharactersError) as error:
        tokenizer.encode("ab ab z ab" * 20 + "y")
    assert "'y'" in str(error.value) and "'z'" in str(error.value)


def test_a_text_with_no_safe_cut_is_one_piece():
    # ("x", "x") spans every boundary of a run: no cut, the whole run merged at once
    tokenizer = Tokenizer(mode="char", merges=[("x", "x"), ("xx", "xx")], base_tokens="x")
    assert reference.safe_cuts("x" * 100, [("x", "x")]) == []
    assert tokenizer.encode("x" * 101) == [tokenizer.encode_single_token("xxxx")] * 25 + [0]


@pytest.mark.data
@pytest.mark.slow
def test_wikitext_train_equals_the_whole_text_merged_as_one_piece():
    splits = [data_file("wikitext-2", f"{name}.txt").read_text("utf-8") for name in ("train", "valid", "test")]
    text = splits[0]
    tokenizer = train(text, mode="char", vocab_size=500, max_chars=500_000, base_text=splits, progress=False)
    # the engine's path before the cuts: a whole-piece lookup turns them off, and no token is
    # the whole text, so it is merged as one piece
    whole = _engine.Encoder(**{**tokenizer.model.engine_spec(), "whole_piece": True}, pattern=None)
    ids = tokenizer.encode(text)
    assert ids == whole.encode_ordinary(text)
    assert tokenizer.encode_to_array(text).tolist() == ids
    # spread over threads, as the default is on a machine with several cores
    assert tokenizer.encode(text, num_threads=3) == ids
    assert tokenizer.encode_to_array(text, num_threads=2).tolist() == ids
    assert tokenizer.decode(ids) == text
    sample = text[:100_000]
    assert tokenizer.encode(sample) == reference_ids(tokenizer, tokenizer.model.merges, sample)
