"""The benchmark harness in ``bench/``: its adapters give every library the same vocabulary
(each peer's ids equal bytepair's), and ``bytepair bench`` runs it from a source checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def adapters():
    sys.path.insert(0, str(BENCH))
    try:
        import adapters
    finally:
        sys.path.remove(str(BENCH))
    return adapters


@pytest.fixture(scope="module")
def trained(adapters):
    from bytepair.demo import stdlib_corpus

    corpus = stdlib_corpus()
    tokenizer = adapters.train_bytepair(adapters.line_blocks(corpus["train"][:50_000]), 1000, "cl100k")
    return tokenizer, corpus["val"][:100_000]


@pytest.mark.peers
@pytest.mark.slow
def test_every_peer_gives_the_ids_of_its_bytepair_twin(adapters, trained):
    pytest.importorskip("tiktoken", reason="the bench compares against tiktoken (test extra)")
    pytest.importorskip("tokenizers", reason="the bench compares against HF tokenizers (test extra)")
    tokenizer, text = trained
    encoders = adapters.encoders_for(tokenizer, adapters.installed_peers())
    assert {"bytepair", "bytepair, tiktoken rule", "tiktoken", "tokenizers"} <= set(encoders)
    ids = {
        label: list(adapters.encode_one(library, encoder, text)) for label, (library, encoder, _) in encoders.items()
    }
    for label, (_, _, twin) in encoders.items():
        if twin is not None:
            assert ids[label] == ids[twin], label
    batch = adapters.encode_many("bytepair", tokenizer, [text, text[:500]], 2)
    assert batch == [ids["bytepair"], tokenizer.encode_ordinary(text[:500])]


@pytest.mark.peers
@pytest.mark.slow
def test_hf_with_all_splits_follows_tiktokens_rule(adapters, trained):
    tiktoken = pytest.importorskip("tiktoken", reason="the bench compares against tiktoken (test extra)")
    pytest.importorskip("tokenizers", reason="the bench compares against HF tokenizers (test extra)")
    tokenizer, text = trained
    ranks = adapters.token_ranks(tokenizer)
    encoding = tiktoken.Encoding(
        "trained", pat_str=adapters.pattern_regex("cl100k"), mergeable_ranks=ranks, special_tokens={}
    )
    hf = adapters.hf_tokenizer(ranks, adapters.all_splits(ranks), "cl100k", ignore_merges=True)
    assert adapters.encode_one("tokenizers", hf, text) == encoding.encode_ordinary(text)


def _bytepair_bench(*args):
    """``bytepair bench ARGS`` from the source checkout, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "bytepair", "bench", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
        cwd=BENCH.parent,
    )


@pytest.mark.slow
def test_bytepair_bench_runs_the_harness_with_its_arguments():
    result = _bytepair_bench("--help")
    assert result.returncode == 0, result.stderr
    assert "--quick" in result.stdout and "--only" in result.stdout  # bench/run.py's own options
    wrong = _bytepair_bench("--only", "everything")
    assert wrong.returncode == 2 and "'everything'" in wrong.stderr
    no_runs = _bytepair_bench("--runs", "0")
    assert no_runs.returncode == 2 and "--runs: '0' must be a positive number of runs" in no_runs.stderr
    not_a_number = _bytepair_bench("--runs", "x")
    assert not_a_number.returncode == 2 and "--runs: 'x' is not a number of runs" in not_a_number.stderr
