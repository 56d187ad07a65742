"""A Tokenizer pickles and deep-copies by its content, and works in a spawned process.

Tokenizers go to DataLoader workers, spawn pools and Ray tasks; each comes back with the same
fingerprint and gives the same ids. A rank vocabulary travels as its token bytes (its pair
table is derived again), so the pickle stays small.
"""

from __future__ import annotations

import copy
import multiprocessing
import pickle

import pytest

import bytepair
from bytepair import MergeModel, RankModel, Tokenizer
from datafiles import data_file

TEXT = "hello world low lower newest widest <|end|> naïve 東京 🌍 \r\n\tdef f(x): return x + 1\n" * 20
SAMPLES = ["lower world", "low lower newest", "東京 🌍 naïve", "  slow\n\n", "", "<|end|> text"]


@pytest.fixture(scope="module")
def char_tok():
    return bytepair.train(TEXT, mode="char", vocab_size=120, min_frequency=1)


@pytest.fixture(scope="module")
def byte_tok():
    return bytepair.train(TEXT, mode="byte", vocab_size=300, pattern="cl100k", special_tokens=["<|end|>", "<|pad|>"])


def same(tok, other):
    assert type(other) is Tokenizer
    assert other.fingerprint == tok.fingerprint
    assert other.model == tok.model
    assert (other.vocab_size, other.special_tokens, other.pattern, other.normalization, other.name) == (
        tok.vocab_size,
        tok.special_tokens,
        tok.pattern,
        tok.normalization,
        tok.name,
    )
    allowed = "all" if tok.special_tokens else set()
    for text in SAMPLES:
        assert other.encode(text, allowed_special=allowed) == tok.encode(text, allowed_special=allowed)


def tokenizers(char_tok, byte_tok):
    yield "char", char_tok
    yield "byte", byte_tok


def test_trained_tokenizers_pickle_and_deep_copy(char_tok, byte_tok):
    for _, tok in tokenizers(char_tok, byte_tok):
        same(tok, pickle.loads(pickle.dumps(tok)))
        copied = copy.deepcopy(tok)
        same(tok, copied)
        assert copied is not tok and copy.copy(tok).fingerprint == tok.fingerprint


def test_a_copy_is_independent(byte_tok):
    copied = copy.deepcopy(byte_tok)
    copied.add_special_tokens(["<|extra|>"])
    assert "<|extra|>" not in byte_tok.special_tokens
    assert copied.fingerprint != byte_tok.fingerprint


def test_models_compare_by_content_and_pickle(char_tok):
    model = char_tok.model
    assert pickle.loads(pickle.dumps(model)) == model
    assert MergeModel(mode="char", base_tokens=model.base_tokens, merges=model.merges) == model
    assert MergeModel(mode="char", base_tokens=model.base_tokens, merges=model.merges[:-1]) != model


@pytest.mark.data
@pytest.mark.parametrize(
    ("name", "file"), [("cl100k_base", "vocab/cl100k_base.tiktoken"), ("llama3", "vocab/hf/llama3/tokenizer.json")]
)
def test_published_vocabularies_pickle_small(name, file):
    tok = bytepair.load(name, path=data_file(file))
    data = pickle.dumps(tok)
    again = pickle.loads(data)
    same(tok, again)
    assert isinstance(again.model, RankModel) and again.model.rule == tok.model.rule
    # The token bytes and (for HF's rule) the merges, not every derived table: smaller than
    # the file the vocabulary came from.
    assert len(data) < data_file(file).stat().st_size


def _encode_in_child(tokenizer, texts):
    return tokenizer.fingerprint, [tokenizer.encode(t, allowed_special="all") for t in texts]


@pytest.mark.slow
def test_spawned_workers_get_a_working_tokenizer(byte_tok):
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        fingerprint, ids = pool.apply(_encode_in_child, (byte_tok, SAMPLES))
    assert fingerprint == byte_tok.fingerprint
    assert ids == [byte_tok.encode(t, allowed_special="all") for t in SAMPLES]
