"""Errors raised by ``bytepair.datasets`` for bad input: missing splits, corrupt files, failed
downloads, wrong checksums.

Each subclasses ``bytepair.errors.BytepairError`` and the built-in a caller would expect, so the
command line prints one ``error:`` line and ``except ValueError`` / ``except OSError`` keep working.
"""

from __future__ import annotations

from bytepair.errors import BytepairError


class DatasetError(BytepairError, ValueError):
    """A corpus folder or split file that cannot be used (missing split, not UTF-8, empty)."""


class DownloadError(BytepairError, OSError):
    """A download that failed (offline, HTTP error, a zip without the expected files)."""


class ChecksumError(DownloadError):
    """A downloaded file whose SHA-256 is not the expected one; nothing is kept in the cache."""


class PrepareError(BytepairError, ValueError):
    """An encoded split that fails its own check (an id out of range, a failed round trip)."""


class MissingDependencyError(BytepairError, ImportError):
    """An optional dependency (matplotlib) is missing; the message names what to install."""
