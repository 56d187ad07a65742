"""Published vocabulary files: where to download them from, kept once in the cache.

- Cache folder: ``_io.cache_folder`` (the ``cache_dir`` argument, else ``$BYTEPAIR_CACHE``, else
  ``$XDG_CACHE_HOME/bytepair``, else ``~/.cache/bytepair``).
- Base URL: the ``base_url`` argument, else ``$BYTEPAIR_DOWNLOAD_URL``, else OpenAI's public
  blob store (where tiktoken downloads from); a file's URL is ``<base>/<path>``.
- A cached file is used only if its hash is still the expected one; otherwise it is fetched
  again through ``_io.download`` (streamed, hashed on the way, size-capped, one deadline).

It does not parse anything (``tiktoken_files.py`` does) and does not decide which file a name
means (``formats/__init__.py``).

Example:
    >>> vocabulary_file(ENCODINGS["cl100k_base"])  # doctest: +SKIP
    PosixPath('/home/me/.cache/bytepair/cl100k_base.tiktoken')
"""

from __future__ import annotations

import os
from pathlib import Path

from .._io import cache_folder, check_output_folder, download, file_sha256, size_cap
from ..errors import DownloadError  # noqa: F401  (re-exported: callers catch it from here)
from .tiktoken_files import Encoding

DEFAULT_BASE_URL = "https://openaipublic.blob.core.windows.net"


def base_url_for(base_url: str | None = None) -> str:
    """The download base URL: the argument, else ``$BYTEPAIR_DOWNLOAD_URL``, else the default."""
    if base_url is not None and not isinstance(base_url, str):
        raise TypeError(f"base_url must be a str such as 'https://host/path', not {base_url!r}")
    return (base_url or os.environ.get("BYTEPAIR_DOWNLOAD_URL") or DEFAULT_BASE_URL).rstrip("/")


def vocabulary_file(
    encoding: Encoding,
    *,
    cache_dir: str | os.PathLike | None = None,
    base_url: str | None = None,
    name: str | None = None,
) -> Path:
    """The cached copy of ``encoding``'s file, downloading it first if needed.

    Raises ``DownloadError`` when offline (saying to pass ``path=``), or when the download's
    hash is not the published one (``ChecksumError``), its size is far beyond the known file's,
    or it does not finish in time.
    """
    folder = cache_folder(cache_dir)
    target = folder / encoding.file
    if target.is_file() and file_sha256(target) == encoding.sha256:
        return target
    check_output_folder(folder, flag="the download cache")  # a file there: mkdir's "File exists"
    name = name or encoding.name
    hint = (
        f"; when offline, pass path= to a local copy, e.g. bytepair.load({name!r}, path='vocab/') "
        "(on the command line: --vocab-dir vocab/)"
    )
    url = f"{base_url_for(base_url)}/{encoding.url.lstrip('/')}"
    return download(url, target, sha256=encoding.sha256, max_bytes=size_cap(encoding.size), offline_hint=hint)
