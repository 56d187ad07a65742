"""Where the real corpora and vocabularies are, and a clean skip when they are not.

A test that reads the data folder is marked ``data`` (``pytestmark = pytest.mark.data`` or
``@pytest.mark.data``), so that the default run, which deselects that tier, never skips for want
of the folder. ``data_file`` enforces this: called from a test without the mark it fails and says
so (see ``tests/conftest.py``, which tells it the running test).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The test being set up or run, kept up to date by tests/conftest.py; None outside a test.
current_test = None


def data_dir():
    """The shared data folder: $BYTEPAIR_DATA, default ../shared/data beside the project."""
    return Path(os.environ.get("BYTEPAIR_DATA", ROOT.parent / "shared" / "data"))


def data_file(*parts):
    """A file or folder under the data folder, or skip the test saying which one is missing.

    Example: ``data_file("wikitext-2/valid.txt")`` or ``data_file("vocab", "gpt2")``.
    """
    if current_test is not None and current_test.get_closest_marker("data") is None:
        pytest.fail(
            f"{current_test.nodeid} reads the data folder ({'/'.join(map(str, parts))}) but is not marked "
            "'data'; add @pytest.mark.data (or pytestmark = pytest.mark.data) so the default run deselects it",
            pytrace=False,
        )
    path = data_dir().joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not available: {path} (set BYTEPAIR_DATA to the data folder)")
    return path


def package_env(**extra):
    """The environment for a subprocess that must import the same bytepair as this test run
    (the installed package in CI, ``src/`` in a development checkout)."""
    import bytepair

    package_root = str(Path(bytepair.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}
