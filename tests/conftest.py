"""Shared fixtures: the real corpora, read once per session."""

from __future__ import annotations

import pytest

from datafiles import data_file


@pytest.fixture(scope="session")
def shakespeare():
    return data_file("tinyshakespeare/input.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def wikitext_valid():
    return data_file("wikitext-2/valid.txt").read_text(encoding="utf-8")
