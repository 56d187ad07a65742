"""Files and downloads, one way each: atomic writes, the cache folder, a bounded download.

- ``write_atomic`` (and ``write_bytes_atomic``, ``write_text_atomic``): the content goes to a
  temporary file in the target's own folder, is flushed and fsynced, gets the usual
  permissions (``0o666`` less the umask; ``mkstemp`` alone would give ``0o600``), and is
  renamed over the target, so a reader sees the old file or the new one, never half of one.
  A target that is a symbolic link is written through: the link's target is replaced and the
  link stays a link. A target that is no regular file (a FIFO, ``/dev/null``, ``/dev/stdout``)
  is written into, not replaced.
- ``cache_folder``: where downloads are kept.
- ``download``: one file from a URL into the cache, streamed to disk while hashing, with a
  size cap and one deadline for the whole transfer; nothing is kept unless the SHA-256 is the
  expected one.
- Reading files that may come from anywhere (``/dev/zero``, a folder, JSON nested 100,000
  deep, a 5,000-digit integer): ``read_limited``, ``read_tokenizer_text``, ``parse_json`` and
  ``read_text`` end each of those in the caller's error class, naming the file.
- ``check_output_file`` / ``check_output_folder``: an output that cannot be written, or that is
  one of the inputs, refused (``UsageError`` naming it) before the work that would fill it.

This module knows no file format.

Example:
    >>> write_text_atomic("out/notes.txt", "hello\\n")  # doctest: +SKIP
    PosixPath('out/notes.txt')
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from .errors import ChecksumError, DownloadError, UsageError

# os.umask can only be read by setting it, and setting it races with other threads; read it
# once at import.
_UMASK = os.umask(0o022)
os.umask(_UMASK)
FILE_MODE = 0o666 & ~_UMASK


def check_path(value, name="path") -> str:
    """``value`` as a path string (``os.fspath``), or an error naming the argument ``name``: a
    TypeError for what is no path (None, a number, bytes: pathlib would say "expected str, bytes
    or os.PathLike object" from inside), a ValueError for a NUL character, which no file name holds.

    Example:
        >>> check_path(None, "folder")
        Traceback (most recent call last):
        ...
        TypeError: folder must be a str or os.PathLike naming a file or folder, not None
    """
    path = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(path, str):
        raise TypeError(f"{name} must be a str or os.PathLike naming a file or folder, not {value!r:.200}")
    if "\0" in path:
        raise ValueError(f"{name} {path!r:.200} holds a NUL character, which no file name can")
    return path


def resolve_target(path: str | os.PathLike) -> Path:
    """The file a write to ``path`` must replace: ``path`` itself, or, through any symbolic
    links, the file they point to (which may not exist yet)."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def staging_path(final: Path) -> Path:
    """A fresh, empty temporary file beside ``final`` (same folder, so the rename is atomic)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".tmp")
    os.close(handle)
    return Path(temporary)


def commit(temporary: Path, final: Path) -> None:
    """Give ``temporary`` the usual mode and rename it to ``final``; then sync the folder."""
    os.chmod(temporary, FILE_MODE)
    os.replace(temporary, final)
    _sync_folder(final.parent)


@contextlib.contextmanager
def naming(name):
    """An ``OSError`` raised inside that names no file (a write to /dev/full or into a pipe)
    comes out naming ``name``; any other error as it is."""
    try:
        yield
    except OSError as error:
        if error.filename is not None or error.errno is None:
            raise
        raise type(error)(error.errno, error.strerror, name) from None


def write_atomic(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write(file)`` on a temporary binary file beside ``path``, then rename it to ``path``.

    Returns ``path`` as given. On any exception (Ctrl-C included) the temporary file is
    removed and ``path`` is left as it was.

    Example:
        >>> write_atomic("report.txt", lambda file: file.write(b"ok\\n"))  # doctest: +SKIP
        PosixPath('report.txt')
    """
    path = check_path(path)  # before any file is touched
    if not path:
        raise FileNotFoundError(errno.ENOENT, "the path is empty; give a file name")
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "is a folder; give a file name (inside it, say)", path)
    if _is_special_file(path):
        # a FIFO, a device, /dev/stdout: nothing to replace atomically (a rename would put a
        # plain file in its place), so it is written into as it is
        with naming(path), open(path, "wb") as file:  # /dev/full says "No space left", naming no file
            write(file)
        return Path(path)
    final = resolve_target(path)
    final.parent.mkdir(parents=True, exist_ok=True)  # its own error names the folder in the way
    try:
        temporary = staging_path(final)
    except OSError as error:  # it named the staging file, which the user never asked for
        reason = f"{error.strerror} (writing it takes a new file beside it, staged and renamed)"
        raise type(error)(error.errno, reason, path) from None
    try:
        with open(temporary, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        commit(temporary, final)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return Path(path)


def _is_special_file(path) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """``write_atomic`` for bytes."""
    return write_atomic(path, lambda file: file.write(data))


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """``write_atomic`` for UTF-8 text (written as given: no newline translation)."""
    return write_atomic(path, lambda file: file.write(text.encode("utf-8")))


def _sync_folder(folder: Path) -> None:
    # The rename is durable only once the folder's entry is on disk; some systems (Windows)
    # cannot open a folder, and then the rename is as durable as they make it.
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


# -- the cache and downloads ------------------------------------------------------------------


def cache_folder(cache_dir: str | os.PathLike | None = None) -> Path:
    """The cache folder: the argument, else ``$BYTEPAIR_CACHE``, else
    ``$XDG_CACHE_HOME/bytepair``, else ``~/.cache/bytepair``."""
    if cache_dir is not None:
        return Path(cache_dir)
    if os.environ.get("BYTEPAIR_CACHE"):
        return Path(os.environ["BYTEPAIR_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "bytepair"


def file_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# One deadline for a whole transfer: slow-drip servers cannot hold a download open forever.
DEADLINE_SECONDS = 600
# Each read waits at most this long (urllib's socket timeout); the deadline bounds the sum.
READ_TIMEOUT_SECONDS = 60
# Files whose exact size is unknown may still not exceed this.
DEFAULT_MAX_BYTES = 1 << 30


def size_cap(size: int) -> int:
    """The most bytes accepted for a file of known ``size``: a quarter more, so that a mirror
    with a slightly different file still reaches the hash check and its clear message."""
    return size + size // 4 + (1 << 16)


def download(
    url: str,
    path: str | os.PathLike,
    *,
    sha256: str,
    max_bytes: int | None = None,
    deadline: float = DEADLINE_SECONDS,
    progress: bool | None = False,
    offline_hint: str = "",
) -> Path:
    """Download ``url`` to ``path``: streamed to a temporary file beside it while hashing, then
    renamed into place only if the SHA-256 is ``sha256``.

    - ``max_bytes``: the most bytes accepted (give the known file's size, or a little more);
      a larger ``Content-Length`` or body stops the transfer with ``DownloadError``.
    - ``deadline``: seconds for the whole transfer, not per read.
    - ``progress``: True for a bar, False for none, None for a bar on a terminal only.
    - ``offline_hint``: appended to the error when the server cannot be reached or fails.

    Raises ``DownloadError`` (network, HTTP, size, deadline) or ``ChecksumError`` (a wrong
    hash, naming both hashes); in every case nothing is left at ``path`` or beside it.

    Example:
        >>> download("https://example.org/f.zip", "cache/f.zip", sha256="ab12...", max_bytes=5_000_000)  # doctest: +SKIP
        PosixPath('cache/f.zip')
    """
    limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    final = resolve_target(path)
    temporary = staging_path(final)
    digest = hashlib.sha256()
    try:
        with open(temporary, "wb") as file:
            try:
                _copy(url, file, digest, limit, deadline, progress)
            except urllib.error.HTTPError as error:
                raise DownloadError(
                    f"could not download {url} (HTTP {error.code} {error.reason}){offline_hint}"
                ) from None
            except (urllib.error.URLError, OSError, ValueError) as error:
                if isinstance(error, DownloadError):
                    raise
                reason = getattr(error, "reason", None) or error
                raise DownloadError(f"could not download {url} ({reason}){offline_hint}") from None
            file.flush()
            os.fsync(file.fileno())
        actual = digest.hexdigest()
        if actual != sha256.lower():
            raise ChecksumError(
                f"downloaded {url} but its sha256 is {actual}, not the expected {sha256}; the "
                "download is corrupt or the server holds another file, so nothing was kept. "
                "Try again, or pass a path to a copy you trust"
            )
        commit(temporary, final)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return Path(path)


def _copy(url, file, digest, limit, deadline, progress):
    stop_at = time.monotonic() + deadline
    with urllib.request.urlopen(url, timeout=READ_TIMEOUT_SECONDS) as response:
        total = int(response.headers.get("Content-Length") or 0) or None
        if total is not None and total > limit:
            raise DownloadError(f"{url} is {total:,} bytes, more than the {limit:,} expected; nothing was downloaded")
        bar = _bar(progress, total, url.rsplit("/", 1)[-1])
        received = 0
        try:
            for block in iter(lambda: response.read(1 << 16), b""):
                received += len(block)
                if received > limit:
                    raise DownloadError(f"{url} sends more than the {limit:,} bytes expected; the download was stopped")
                if time.monotonic() > stop_at:
                    raise DownloadError(
                        f"{url} did not finish within {deadline:g} s ({received:,} bytes received); try again later"
                    )
                digest.update(block)
                file.write(block)
                if bar:
                    bar.update(len(block))
        finally:
            if bar:
                bar.close()


def progress_shown(progress: bool | None) -> bool:
    """Whether a progress bar is drawn: ``progress`` when given, else only when standard error is
    a terminal; never without a standard error (closed, or ``pythonw``), where tqdm cannot write."""
    stream = sys.stderr
    if stream is None or progress is False:
        return False
    if progress:
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a stand-in stream without isatty, or a closed one
        return False


def _bar(progress, total, name):
    if not progress_shown(progress):
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=f"download {name}", unit="B", unit_scale=True, leave=False)


# -- reading ----------------------------------------------------------------------------------


def read_text(path: str | os.PathLike, *, error: type[Exception] = ValueError) -> str:
    """A UTF-8 text file, read faithfully (CRLF kept); bad bytes raise ``error`` naming the
    file, the byte offset, the line and the byte.

    Example:
        >>> read_text("corpus.txt")  # doctest: +SKIP
        'The quick brown fox ...'
    """
    return decode_text(read_limited(path, None, error, "text file"), path, error=error)


def standard_input(error: type[Exception] = ValueError):
    """Standard input as a binary stream (a text-only stand-in as it is); when it is closed
    (``<&-``, a service started without one), ``error`` saying so."""
    stream = sys.stdin
    if stream is None:
        raise error("standard input is closed, so - has nothing to read; give a file instead")
    return getattr(stream, "buffer", stream)


def decode_text(data: bytes, name, *, error: type[Exception] = ValueError) -> str:
    """``data`` as UTF-8 (``read_text``'s rule, for bytes from elsewhere: standard input);
    bad bytes raise ``error`` naming ``name``, the byte offset, the line and the byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = data[: bad.start].count(b"\n") + 1
        raise error(
            f"{name}: not UTF-8 text (byte {bad.start}, line {line}: {data[bad.start : bad.start + 1]!r})"
        ) from None


# -- reading files that may come from anywhere ---------------------------------------------

# The largest tokenizer file read: 4x the largest published one we know (o200k's HF
# tokenizer.json with merges, about 30 MB; Llama 3's is 9 MB, cl100k's .tiktoken 1.7 MB).
MAX_TOKENIZER_BYTES = 128 << 20


def check_readable(path, error, what="file"):
    """Refuse a missing path, a folder or a device (``/dev/zero``) before reading it."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise error(f"{path}: no such {what}") from None
    except OSError as problem:
        raise error(f"{path}: cannot read it ({problem.strerror})") from None
    if stat.S_ISDIR(mode):
        raise error(f"{path} is a folder; give a {what}")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
        raise error(f"{path} is a device, not a {what}; give a regular file (or - for standard input where allowed)")


def read_limited(path, limit, error, what="file"):
    """The bytes of ``path``; more than ``limit`` bytes (None: no limit) raises ``error``
    naming the limit."""
    check_readable(path, error, what)
    try:
        with open(path, "rb") as file:
            data = file.read() if limit is None else file.read(limit + 1)
    except OSError as problem:
        raise error(f"{path}: cannot read it ({problem.strerror or problem})") from None
    if limit is not None and len(data) > limit:
        raise error(f"{path}: larger than {limit >> 20} MiB, which no {what} is; check the path")
    return data


def read_tokenizer_text(path, error, what="tokenizer file"):
    """A tokenizer file's UTF-8 text, size-capped at ``MAX_TOKENIZER_BYTES``."""
    data = read_limited(path, MAX_TOKENIZER_BYTES, error, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as problem:
        raise error(f"{path}: not a {what} (not UTF-8 text: {problem.reason} at byte {problem.start})") from None


def parse_json(text, where, error):
    """``json.loads(text)``; any failure raises ``error`` with the place and the reason."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as problem:
        hint = "truncated" if problem.pos >= len(text.rstrip()) - 1 else "not valid JSON"
        raise error(f"{where}: {hint} (line {problem.lineno}, column {problem.colno}: {problem.msg})") from None
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply to be a tokenizer file") from None
    except ValueError as problem:  # an integer past Python's digit limit (4300 by default)
        raise error(f"{where}: not a usable JSON file ({_first_sentence(problem)})") from None


def _first_sentence(problem):
    return str(problem).split(";")[0]


# -- outputs checked before the work that fills them ------------------------------------------------


def check_output_file(path, inputs=(), *, flag="-o", example="tokenizer.bytepair.json"):
    """Refuse an output path that cannot be written, or that names one of the ``inputs`` (files
    read, tokenizers loaded: the write would replace them), before the work that would fill it."""
    if str(path) == "-":  # Path("-") would be a file named "-", which no user asking for stdout expects
        raise UsageError(
            f"{flag} - would write a file named '-'; give a file name ({flag} /dev/stdout writes to standard output)"
        )
    path = Path(path)
    if path.is_dir():
        raise UsageError(f"{flag} {str(path)!r} is a folder; give a file name, e.g. {str(path / example)!r}")
    for source in inputs:
        if source is not None and str(source) != "-" and _same_file(path, source):
            raise UsageError(
                f"{flag} {str(path)!r} is also an input ({str(source)!r}); writing it would replace what is "
                "read, so give another file name"
            )
    _check_makeable(path, path.parent if str(path.parent) else Path("."), flag)


def check_output_folder(path, flag="-o"):
    """Refuse an output folder that is a file, or that cannot be made or written, before the
    work that would fill it."""
    if str(path) == "-":
        raise UsageError(f"{flag} - would make a folder named '-'; give a folder name")
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {str(path)!r} is a file; give a folder (it is made if missing)")
    _check_makeable(path, path, flag)


def _check_makeable(path, folder, flag):
    # the nearest existing folder at or above `folder` must be a folder we may write in
    existing = next((p for p in (folder, *folder.parents) if p.exists()), Path("."))
    if not existing.is_dir():
        raise UsageError(f"{flag} {str(path)!r}: {str(existing)!r} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {str(path)!r}: the folder {str(existing)!r} is not writable")


def _same_file(left, right):
    try:
        return os.path.samefile(left, right) and Path(left).is_file()
    except OSError:  # either is missing (or unreadable): not the same existing file
        return False
