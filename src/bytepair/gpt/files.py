"""Atomic file writes for checkpoints, reports and plots: a temporary file, then ``os.replace``.

An interrupted run leaves either the previous file or the new one, never half of one. This module
does not know about formats; callers pass a function that writes to a binary file object.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path, write) -> Path:
    """Call ``write(file)`` on a temporary file beside ``path``, then rename it to ``path``.

    Example:
        >>> write_atomic("report.txt", lambda file: file.write(b"ok\\n"))  # doctest: +SKIP
        PosixPath('report.txt')
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path, text: str) -> Path:
    """``write_atomic`` for UTF-8 text."""
    return write_atomic(path, lambda file: file.write(text.encode("utf-8")))
