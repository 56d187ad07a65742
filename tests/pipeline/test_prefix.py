"""Nested vocabularies: ``tok.prefix(k)`` is the tokenizer a separate training at ``k`` gives.

Oracle: a separate ``bytepair.train`` run at each size, compared by fingerprint, merge list,
artifact bytes and encodings. Fast tier on generated text (both modes, a pattern, byte
fallback, special tokens); the slow tier on WikiText-2's training split for k = 300, 500, 1000.
"""

from __future__ import annotations

import random

import pytest

import bytepair
from bytepair.errors import TrainingError
from datafiles import data_file

SAMPLE = "Hello, world! The naïve café's 東京 lobsters — 1,234.5 <|end|>\n"


def generated_text(size=60_000, seed=0):
    """Words from a few syllables with Zipf-like frequencies: many tied and untied pair counts."""
    rng = random.Random(seed)
    syllables = ["ka", "to", "ri", "é", "東", "ne", "sa", "mu", "lo", "bst", "er", " ", "\n", ", "]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(300)]
    weights = [1 / (rank + 1) for rank in range(len(words))]
    out, length = [], 0
    while length < size:
        word = rng.choices(words, weights)[0]
        out.append(word + " ")
        length += len(word) + 1
    return "".join(out)


def assert_same(prefix, trained, tmp_path):
    assert prefix.fingerprint == trained.fingerprint
    assert prefix.merges == trained.merges
    assert prefix.vocab_size == trained.vocab_size and prefix.special_tokens == trained.special_tokens
    prefix.save(tmp_path / "prefix.json")
    trained.save(tmp_path / "trained.json")
    assert (tmp_path / "prefix.json").read_bytes() == (tmp_path / "trained.json").read_bytes()
    loaded = bytepair.Tokenizer.load(tmp_path / "prefix.json")  # a valid artifact: its checks pass
    assert loaded.fingerprint == prefix.fingerprint


SETTINGS = [
    {"mode": "char"},
    {"mode": "char", "byte_fallback": True, "special_tokens": ["<|end|>", "<|pad|>"]},
    {"mode": "byte"},
    {"mode": "byte", "pattern": "cl100k", "special_tokens": ["<|end|>"]},
    {"mode": "byte", "pattern": r"\s?\w+|\s?[^\w\s]+|\s+", "normalization": "NFKC"},
]


@pytest.mark.slow
@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_prefix_equals_training_at_that_size(tmp_path, settings):
    text = generated_text()
    floor = 256 if settings["mode"] == "byte" else len(set(text))
    largest = bytepair.train(text, vocab_size=floor + 200, progress=False, **settings)
    # with a pattern, pair counts can fall under min_frequency before 200 merges: the top is
    # then where training stopped
    top = largest.vocab_size - len(largest.special_tokens) - (256 if largest.byte_fallback else 0)
    assert top > floor + 150
    for size in (floor, floor + 1, floor + 57, floor + 150, top):
        prefix = largest.prefix(size)
        trained = bytepair.train(text, vocab_size=size, progress=False, **settings)
        assert_same(prefix, trained, tmp_path)
        sample = SAMPLE if settings["mode"] == "byte" or settings.get("byte_fallback") else text[:500]
        assert prefix.encode(sample, disallowed_special=()) == trained.encode(sample, disallowed_special=())
    # the fingerprint is the prefix's own: sizes differ, fingerprints differ
    assert len({largest.prefix(size).fingerprint for size in (floor, floor + 1, top)}) == 3


def test_special_tokens_take_the_ids_after_the_smaller_vocabulary():
    text = generated_text(20_000)
    largest = bytepair.train(text, mode="byte", vocab_size=400, special_tokens=["<|a|>", "<|b|>"], progress=False)
    assert largest.special_tokens == {"<|a|>": 400, "<|b|>": 401}
    small = largest.prefix(300)
    assert small.special_tokens == {"<|a|>": 300, "<|b|>": 301}
    assert small.encode("<|b|>", allowed_special="all") == [301]


def test_sizes_outside_the_merge_list_are_refused():
    largest = bytepair.train(generated_text(20_000), mode="byte", vocab_size=300, progress=False)
    with pytest.raises(TrainingError, match="from 256 .* to 300"):
        largest.prefix(301)
    with pytest.raises(TrainingError, match="from 256 .* to 300"):  # the range, also from below it
        largest.prefix(255)
    with pytest.raises(TrainingError, match="integer"):
        largest.prefix("300")


@pytest.mark.data
def test_a_foreign_vocabulary_has_no_prefix():
    gpt2 = bytepair.load("gpt2", path=data_file("vocab/r50k_base.tiktoken"))
    with pytest.raises(TrainingError, match="trained here"):
        gpt2.prefix(1000)


def test_the_sweep_takes_prefixes_and_checks_them():
    from bytepair.datasets.sweep import sweep

    text = generated_text(30_000)
    texts = {"train": text, "val": generated_text(5_000, seed=1)}
    result = sweep(texts=texts, vocab_sizes=[60, 80, 100], dim=8, context=10, words=["kato"])
    rows = result.rows[1:]
    assert [row.prefix_of for row in rows] == [100, 100, None]
    for row, size in zip(rows, (60, 80, 100)):
        alone = bytepair.train(
            text[:500_000], vocab_size=size, base_tokens=sorted(set(text + texts["val"])), progress=False
        )
        assert row.vocab_size == alone.vocab_size == size
        assert row.val_tokens == len(alone.encode(texts["val"]))
        assert row.val_compression == pytest.approx(len(texts["val"]) / row.val_tokens, abs=1e-4)


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.parametrize("mode", ["char", "byte"])
def test_prefix_equals_training_on_wikitext(tmp_path, mode):
    text = data_file("wikitext-2/train.txt").read_text(encoding="utf-8")
    options = {"mode": mode, "progress": False, **({"pattern": "gpt2"} if mode == "byte" else {})}
    largest = bytepair.train(text, vocab_size=1000, **options)
    for size in (300, 500, 1000):
        assert_same(largest.prefix(size), bytepair.train(text, vocab_size=size, **options), tmp_path)
