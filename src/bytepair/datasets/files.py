"""Writing outputs so that an interrupted run leaves no half-written file.

Every output is first written under a temporary name in its own folder (so the final
``os.replace`` is an atomic rename on the same file system), and renamed into place only when
every file of the run is complete. Single files use ``bytepair._io.write_atomic``; this is its
many-files form, with the same staging names and permissions. It does not know any file format.

Example:
    >>> with StagedFiles() as staged:                      # doctest: +SKIP
    ...     staged.new("out/train.bin").write_bytes(b"...")
    ...     staged.commit(remove_first=["out/meta.json"])
"""

from __future__ import annotations

from pathlib import Path

from .._io import commit, staging_path


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
        temporary = staging_path(final)
        self._staged.append((temporary, final))
        return temporary

    def commit(self, *, remove_first=()):
        """Remove ``remove_first`` (e.g. old ``meta.json`` files), then rename every file in the
        order it was staged; stage the file that marks a folder complete last.
        """
        for path in remove_first:
            Path(path).unlink(missing_ok=True)
        for temporary, final in self._staged:
            commit(temporary, final)
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
