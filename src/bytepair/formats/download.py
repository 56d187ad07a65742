"""Download a published vocabulary file once, check its SHA-256, keep it in a cache.

- Cache folder: the ``cache_dir`` argument, else ``$BYTEPAIR_CACHE``, else ``~/.cache/bytepair``.
- Base URL: the ``base_url`` argument, else ``$BYTEPAIR_DOWNLOAD_URL``, else OpenAI's public
  blob store (where tiktoken downloads from); a file's URL is ``<base>/<path>``.
- A cached file is used only if its hash is still the expected one; otherwise it is fetched
  again. A download whose hash is wrong is an error naming both hashes, and nothing is written.
- Files are written atomically (a temporary name in the cache folder, then ``os.replace``).

It does not parse anything (``tiktoken_files.py`` does) and does not decide which file a name
means (``formats/__init__.py``).

Example:
    >>> fetch("encodings/cl100k_base.tiktoken", sha256="2239...", filename="cl100k_base.tiktoken")  # doctest: +SKIP
    PosixPath('/home/me/.cache/bytepair/cl100k_base.tiktoken')
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from ..errors import DownloadError

DEFAULT_BASE_URL = "https://openaipublic.blob.core.windows.net"
TIMEOUT_SECONDS = 60


def cache_folder(cache_dir=None):
    """The cache folder: the argument, else ``$BYTEPAIR_CACHE``, else ``~/.cache/bytepair``."""
    if cache_dir is not None:
        return Path(cache_dir)
    if os.environ.get("BYTEPAIR_CACHE"):
        return Path(os.environ["BYTEPAIR_CACHE"])
    return Path.home() / ".cache" / "bytepair"


def base_url_for(base_url=None):
    """The download base URL: the argument, else ``$BYTEPAIR_DOWNLOAD_URL``, else the default."""
    return (base_url or os.environ.get("BYTEPAIR_DOWNLOAD_URL") or DEFAULT_BASE_URL).rstrip("/")


def fetch(url_path, *, sha256, filename, cache_dir=None, base_url=None, name=None):
    """The cached copy of ``<base>/<url_path>``, downloading it first if needed.

    Raises ``DownloadError`` when offline (saying to pass ``path=``) or when the download's
    hash is not ``sha256``.
    """
    target = cache_folder(cache_dir) / filename
    if target.is_file() and _sha256(target.read_bytes()) == sha256:
        return target
    url = f"{base_url_for(base_url)}/{url_path.lstrip('/')}"
    data = _download(url, name or filename)
    actual = _sha256(data)
    if actual != sha256:
        raise DownloadError(
            f"downloaded {url} but its sha256 is {actual}, not the expected {sha256}; the "
            "download is corrupt or the server holds another file, so nothing was cached. "
            "Try again, or pass path= to a copy you trust"
        )
    write_bytes_atomic(target, data)
    return target


def _download(url, name):
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            return response.read()
    except urllib.error.HTTPError as error:
        raise DownloadError(f"could not download {name!r} from {url}: HTTP {error.code} {error.reason}") from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise DownloadError(
            f"could not download {name!r} from {url} ({reason}); when offline, pass path= to "
            f"a local copy, e.g. bytepair.load({name!r}, path='vocab/') (on the command line: "
            "--vocab-dir vocab/)"
        ) from None


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def write_bytes_atomic(path, data):
    """Write ``data`` to ``path`` via a temporary file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
