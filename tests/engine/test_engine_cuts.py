"""Char mode without a pattern: the engine cuts the text where no merge can span
(engine/cuts.hpp, twin ``reference.safe_cuts``) and encodes the parts apart.

- the rule itself: replaying the merges on the parts gives the tokens of the whole;
- the engine (through ``Tokenizer``) equals ``reference.encode_piece`` on the whole text, on
  random texts over small alphabets with trained merges, with and without byte fallback;
- unknown characters are still reported, each once;
- on WikiText-2 train with seed 000's tokenizer: the same ids as the whole text merged as one
  piece (the engine's path before the cuts) and as the reference on a slice.
"""

from __future__ import annotations

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


@settings(max_examples=300, deadline=None)
@given(case=cases())
def test_parts_replay_to_the_tokens_of_the_whole(case):
    _, merges, text = case
    cuts = reference.safe_cuts(text, merges)
    parts = [text[start:end] for start, end in zip([0, *cuts], [*cuts, len(text)])]
    assert [token for part in parts for token in reference.encode_piece(list(part), merges)] == reference.encode_piece(
        list(text), merges
    )


@settings(max_examples=300, deadline=None)
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


@settings(max_examples=200, deadline=None)
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
    assert tokenizer.decode(ids) == text
    sample = text[:100_000]
    assert tokenizer.encode(sample) == reference_ids(tokenizer, tokenizer.model.merges, sample)
