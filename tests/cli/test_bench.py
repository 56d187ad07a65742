"""``bytepair bench`` runs end to end and checks that every peer gives our ids."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.peers
@pytest.mark.slow
def test_bench_command_compares_with_the_installed_peers():
    pytest.importorskip("tiktoken", reason="the bench compares against tiktoken (test extra)")
    result = subprocess.run(
        [sys.executable, "-m", "bytepair", "bench", "--vocab-size", "1000", "--max-chars", "50000", "--repeat", "1"],
        capture_output=True, text=True, encoding="utf-8", timeout=600,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    tiktoken_row = next(line for line in lines if line.strip().startswith("tiktoken "))
    assert "✓" in tiktoken_row  # same ids as bytepair on the same text
    assert any(line.strip().startswith("bytepair ") for line in lines)
