"""Where the real corpora and vocabularies are, and a clean skip when they are not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def data_dir():
    """The shared data folder: $BYTEPAIR_DATA, default ../shared/data beside the project."""
    return Path(os.environ.get("BYTEPAIR_DATA", ROOT.parent / "shared" / "data"))


def data_file(relative):
    """A file under the data folder, or skip the test saying which file is missing."""
    path = data_dir() / relative
    if not path.exists():
        pytest.skip(f"real data not available: {path} (set BYTEPAIR_DATA to the data folder)")
    return path
