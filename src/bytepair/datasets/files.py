"""Writing outputs so that an interrupted run leaves no half-written file.

Every output is first written under a temporary name in its own folder (so the final
``os.replace`` is an atomic rename on the same file system), and renamed into place only when
every file of the run is complete. This module does not know any file format.

Example:
    >>> with StagedFiles() as staged:                      # doctest: +SKIP
    ...     staged.new("out/train.bin").write_bytes(b"...")
    ...     staged.commit(remove_first=["out/meta.json"])
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# mkstemp makes files readable by their owner only; outputs get the usual permissions instead.
# (Read once at import: os.umask can only be read by setting it.)
_UMASK = os.umask(0o022)
os.umask(_UMASK)
FILE_MODE = 0o666 & ~_UMASK


class StagedFiles:
    """Temporary files beside their targets, renamed into place together by ``commit``.

    On an exception inside the ``with`` block, or if ``commit`` is never called, every
    temporary file is removed and the targets are left as they were.
    """

    def __init__(self):
        self._staged = []  # (temporary path, final path), in commit order

    def new(self, final):
        """A fresh temporary path for ``final`` (its folder is created)."""
        final = Path(final)
        final.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".tmp")
        os.close(handle)
        self._staged.append((Path(temporary), final))
        return Path(temporary)

    def commit(self, *, remove_first=()):
        """Remove ``remove_first`` (e.g. old ``meta.json`` files), then rename every file in the
        order it was staged; stage the file that marks a folder complete last.
        """
        for path in remove_first:
            Path(path).unlink(missing_ok=True)
        for temporary, final in self._staged:
            os.chmod(temporary, FILE_MODE)
            os.replace(temporary, final)
        self._staged = []

    def discard(self):
        for temporary, _ in self._staged:
            temporary.unlink(missing_ok=True)
        self._staged = []

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.discard()
        return False


def write_bytes_atomic(path, write):
    """Call ``write(file)`` on a temporary binary file beside ``path``, then rename it to ``path``."""
    with StagedFiles() as staged:
        temporary = staged.new(path)
        with open(temporary, "wb") as file:
            write(file)
        staged.commit()
    return Path(path)
