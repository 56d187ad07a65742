"""The errors of ``bytepair.datasets``; they live with every other error in ``bytepair.errors``."""

from bytepair.errors import (  # noqa: F401  (re-exported)
    ChecksumError,
    DatasetError,
    DocumentError,
    DownloadError,
    MissingDependencyError,
    PrepareError,
)
