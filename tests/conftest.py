"""Shared fixtures: the real corpora, read once per session; and the test tiers.

Tiers (markers declared in pyproject.toml): plain ``pytest`` runs the fast tier; ``data`` needs
the data folder, ``peers`` needs tiktoken / HF tokenizers / transformers, ``slow`` takes more
than about two seconds. ``pytest -m "" -n 0`` runs them all in one process, as ``.ci/run`` does.
"""

from __future__ import annotations

import pytest

import datafiles
from datafiles import data_file


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    datafiles.current_test = item  # lets data_file check that the test is marked "data"
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    datafiles.current_test = item
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item):
    try:
        return (yield)
    finally:
        datafiles.current_test = None


@pytest.fixture(scope="session")
def shakespeare():
    return data_file("tinyshakespeare/input.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def wikitext_valid():
    return data_file("wikitext-2/valid.txt").read_text(encoding="utf-8")
