"""``bytepair.train`` gives exactly the reference's merges and the reference's ids."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import patterns, reference
from bytepair.errors import TrainingError
from bytepair.model import MergeModel

# Small alphabets make ties and rebuilt values common, which is where trainers differ.
tied_text = st.text(alphabet="ab c\n", min_size=0, max_size=120)
unicode_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)


def reference_ids(tokenizer, text, base, merges, pieces=None):
    """Ids the reference gives: replay every merge over each piece, look values up in order."""
    values = reference.vocabulary(base, merges)
    index = {v: i for i, v in enumerate(values)}
    ids = []
    for piece in pieces if pieces is not None else [text]:
        symbols = list(piece) if tokenizer.mode == "char" else [bytes([b]) for b in piece.encode()]
        ids.extend(index[v] for v in reference.encode_piece(symbols, merges))
    return ids


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(tied_text, unicode_text), extra=st.integers(0, 40), min_frequency=st.integers(1, 3))
def test_char_mode_equals_seed_000_trainer(text, extra, min_frequency):
    if not text:
        return
    base, expected = reference.train_chars(text, len(set(text)) + extra, min_frequency)
    tok = bytepair.train(text, mode="char", vocab_size=len(base) + extra, min_frequency=min_frequency)
    assert list(tok.base_tokens) == base
    assert list(tok.merges) == expected
    assert tok.encode(text) == reference_ids(tok, text, base, expected)


@settings(max_examples=100, deadline=None)
@given(text=st.one_of(tied_text, unicode_text), extra=st.integers(0, 40), min_frequency=st.integers(1, 3))
def test_byte_mode_equals_seed_001_trainer(text, extra, min_frequency):
    if not text:
        return
    expected = reference.train_bytes(text, 256 + extra, min_frequency)
    tok = bytepair.train(text, mode="byte", vocab_size=256 + extra, min_frequency=min_frequency)
    assert list(tok.merges) == expected
    assert tok.encode(text) == reference_ids(tok, text, reference.BYTE_TOKENS, expected)


@settings(max_examples=60, deadline=None)
@given(
    text=st.one_of(st.text(alphabet="ab c'\n1", max_size=200), unicode_text),
    extra=st.integers(1, 40),
    mode=st.sampled_from(["char", "byte"]),
    pattern=st.sampled_from(["gpt2", "cl100k", "o200k", "llama3"]),
)
def test_pretokenized_training_equals_reference_on_unique_pieces(text, extra, mode, pattern):
    pieces = patterns.split(text, pattern)
    if not pieces:
        return
    chunks = {}
    for piece in pieces:  # first appearance order, as the contract says
        key = tuple(piece) if mode == "char" else tuple(bytes([b]) for b in piece.encode())
        chunks[key] = chunks.get(key, 0) + 1
    base = sorted(set(text)) if mode == "char" else reference.BYTE_TOKENS
    vocab_size = len(base) + extra
    expected = reference.train_bpe(chunks, base, vocab_size, min_frequency=1)
    tok = bytepair.train(text, mode=mode, vocab_size=vocab_size, min_frequency=1, pattern=pattern)
    assert list(tok.merges) == expected
    assert tok.encode(text) == reference_ids(tok, text, base, expected, pieces)


@settings(max_examples=80, deadline=None)
@given(
    text=st.one_of(tied_text, unicode_text),
    extra=st.integers(1, 40),
    mode=st.sampled_from(["char", "byte"]),
    byte_fallback=st.booleans(),
)
def test_the_learned_model_equals_the_model_rebuilt_from_its_merges(text, extra, mode, byte_fallback):
    # training keeps the values and ids its engine worked out instead of rebuilding them
    if len(text) < 2:
        return
    fallback = byte_fallback and mode == "char"
    floor = len(set(text)) if mode == "char" else 256
    learned = bytepair.train(text, mode=mode, vocab_size=floor + extra, min_frequency=1, byte_fallback=fallback).model
    base_tokens = learned.base_tokens if mode == "char" else None
    rebuilt = MergeModel(mode=mode, merges=learned.merges, base_tokens=base_tokens, byte_fallback=fallback)
    assert learned.values == rebuilt.values
    assert learned.token_bytes == rebuilt.token_bytes
    assert learned.fallback_ids == rebuilt.fallback_ids
    learned_pairs, rebuilt_pairs = (model.engine_spec()["pair_columns"] for model in (learned, rebuilt))
    assert [column.tolist() for column in learned_pairs] == [column.tolist() for column in rebuilt_pairs]


def test_base_text_widens_the_alphabet_so_other_splits_encode():
    tok = bytepair.train("abab abab", mode="char", vocab_size=10, base_text=["xyz", "ab"])
    assert set(tok.base_tokens) == set("ab xyz")
    assert tok.decode(tok.encode("zyx ab")) == "zyx ab"


def test_max_chars_trains_on_a_prefix():
    text = "ab" * 50 + "cd" * 500
    tok = bytepair.train(text, mode="char", vocab_size=8, max_chars=100)
    assert set(tok.base_tokens) == {"a", "b"}
    assert tok.merges[0] == ("a", "b")


def test_several_documents_never_merge_across_each_other():
    tok = bytepair.train(["ab", "ab", "ba"], mode="char", vocab_size=10, min_frequency=1)
    assert ("b", "b") not in tok.merges and tok.merges[0] == ("a", "b")


def test_vocab_size_below_the_base_alphabet_is_an_error():
    with pytest.raises(TrainingError, match="below the base alphabet's 4 tokens"):
        bytepair.train("abcd", mode="char", vocab_size=3)
    with pytest.raises(TrainingError, match="at least 256"):
        bytepair.train("abcd", mode="byte", vocab_size=100)


def test_empty_corpus_is_an_error():
    with pytest.raises(TrainingError, match="empty"):
        bytepair.train("", mode="char", vocab_size=10)
    with pytest.raises(TrainingError, match="empty"):
        bytepair.train([], mode="byte", vocab_size=300)


def test_verbose_prints_the_seed_log(capsys):
    bytepair.train("aaabdaaabac", mode="char", vocab_size=7, verbose=True, progress=False)
    out = capsys.readouterr().out
    assert "Base vocabulary size: 4" in out
    assert "Merge    1: ('a', 'a') → 'aa', frequency=4, sequence length=9, vocabulary=5" in out
    assert "Final vocabulary size: 7" in out


@pytest.mark.slow
def test_ten_million_characters_of_one_letter():
    # A run of one character is the worst case for naive pair counting: every pair overlaps.
    text = "x" * 10_000_000
    tok = bytepair.train(text, mode="char", vocab_size=20)
    assert len(tok.merges) == 19
    assert list(tok.merges[:3]) == [("x", "x"), ("xx", "xx"), ("xxxx", "xxxx")]
    assert tok.decode(tok.encode(text)) == text
