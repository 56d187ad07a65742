"""Writing whole output folders so that an interrupted run leaves the old folder or the new one.

A run that writes a folder (``prepare``, ``encode-corpus``) builds it in a hidden sibling
(``sibling``), holding the folder's lock for the whole run (``FolderLock``), and puts it in
place in one step at the end (``switch_folder``); the next run removes what a killed one left
(``remove_stale``). ``sigterm_as_interrupt`` makes SIGTERM run the same cleanup as Ctrl-C, and
``held_interrupts`` keeps both out of the switch itself. Single files use
``bytepair._io.write_atomic``. This module does not know any file format.

Example:
    >>> with FolderLock("out"), sigterm_as_interrupt():         # doctest: +SKIP
    ...     remove_stale("out")
    ...     staging = sibling("out", "partial")
    ...     write_everything(staging)
    ...     with held_interrupts():
    ...         switch_folder(staging, "out")
"""

from __future__ import annotations

import os
from pathlib import Path

# -- whole output folders --------------------------------------------------------------------
#
# A run that writes a folder (``prepare``, ``encode-corpus``) builds it in a hidden sibling,
# ``.<name>.<tag>`` (same file system, so renames are atomic), and switches it into place at
# the end. A lock file ``.<name>.lock`` held for the whole run keeps two runs off one folder;
# whoever holds it may remove the siblings a killed run left behind.


class FolderBusyError(OSError):
    """Another live run holds the output folder's lock."""


class FolderLock:
    """``with FolderLock(out):`` an exclusive lock on ``out`` (``fcntl.flock`` on a sibling file;
    released by the OS when the process dies, so a killed run never leaves the folder locked).
    """

    def __init__(self, final):
        self.final = Path(final)
        self.path = self.final.parent / f".{self.final.name}.lock"
        self._file = None

    def __enter__(self):
        import fcntl

        self.final.parent.mkdir(parents=True, exist_ok=True)
        while True:
            file = open(self.path, "a+b")
            try:
                fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                file.close()
                raise FolderBusyError(
                    f"{self.final}: another run is writing this folder; wait for it to finish or choose another folder"
                ) from None
            # subtle: the previous holder unlinks the file on release; a lock taken on that
            # unlinked file would not exclude a third run, so take it again on the new file.
            try:
                if os.stat(self.path).st_ino == os.fstat(file.fileno()).st_ino:
                    break
            except FileNotFoundError:
                pass
            file.close()
        self._file = file
        return self

    def __exit__(self, *exc_info):
        if self._file is not None:
            self.path.unlink(missing_ok=True)
            self._file.close()
            self._file = None
        return False


def sibling(final, tag):
    """The hidden sibling folder ``.<name>.<tag>`` of ``final``."""
    final = Path(final)
    return final.parent / f".{final.name}.{tag}"


def remove_stale(final, *, keep=()):
    """Remove what killed runs left beside ``final`` (call while holding its ``FolderLock``):
    staging folders, and the old copy of a switch that stopped half-way (put back first when
    ``final`` itself is missing). Siblings named in ``keep`` stay (e.g. one to resume).
    """
    import shutil

    final = Path(final)
    if not final.parent.is_dir():
        return
    prefix = f".{final.name}."
    keep = {Path(k).name for k in keep}
    olds = sorted(p for p in final.parent.iterdir() if p.name.startswith(prefix + "old-"))
    if olds and not final.exists():
        os.rename(olds[-1], final)  # the switch stopped between its two renames: undo it
        olds = olds[:-1]
    for path in final.parent.iterdir():
        if path.name.startswith(prefix) and path.name != prefix + "lock" and path.name not in keep:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def switch_folder(staging, final):
    """Put the complete folder ``staging`` in place of ``final`` and remove the old one.

    Where the system can (Linux ``renameat2(RENAME_EXCHANGE)``), the two folders are exchanged
    in one atomic step: a reader sees the old or the new folder, never neither. Elsewhere it is
    two renames, and ``remove_stale`` puts the old folder back if a kill falls between them.
    """
    import shutil

    staging, final = Path(staging), Path(final)
    if not final.exists() and not final.is_symlink():
        os.rename(staging, final)
        return
    if _exchange(staging, final):
        shutil.rmtree(staging)
        return
    old = sibling(final, f"old-{os.getpid()}")
    os.rename(final, old)
    os.rename(staging, final)
    shutil.rmtree(old)


def _exchange(first, second):
    """Atomically exchange two paths; False where the system or file system cannot."""
    import ctypes
    import errno
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EXDEV, errno.ENOTSUP, errno.EPERM):
        return False
    raise OSError(code, os.strerror(code), str(second))


class sigterm_as_interrupt:
    """``with sigterm_as_interrupt():`` SIGTERM (``kill``, a job scheduler) raises
    ``KeyboardInterrupt`` like Ctrl-C, so the same cleanup runs. Only in the main thread;
    elsewhere it does nothing.
    """

    def __enter__(self):
        import signal
        import threading

        self._previous = None
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._raise)
        return self

    @staticmethod
    def _raise(signum, frame):
        raise KeyboardInterrupt("terminated")

    def __exit__(self, *exc_info):
        import signal

        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
        return False


class held_interrupts:
    """``with held_interrupts():`` Ctrl-C and SIGTERM that arrive inside the block wait for its
    end, then raise ``KeyboardInterrupt`` (for a few renames that must not be cut in two).
    Only in the main thread; elsewhere it does nothing. SIGKILL cannot be held: that case is
    ``switch_folder``'s and ``remove_stale``'s.
    """

    def __enter__(self):
        import signal
        import threading

        self._previous, self._received = {}, []
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, lambda number, frame: self._received.append(number))
        return self

    def __exit__(self, exc_type, *rest):
        import signal

        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        if self._received and exc_type is None:
            raise KeyboardInterrupt(*(["terminated"] if signal.SIGTERM in self._received else []))
        return False
