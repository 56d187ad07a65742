"""The errors of ``bytepair.gpt``; they live with every other error in ``bytepair.errors``.

This module imports nothing heavy (no torch), so the command line can name these classes
before PyTorch loads.
"""

from bytepair.errors import (  # noqa: F401  (re-exported)
    CheckpointError,
    FingerprintMismatchError,
    GPTSettingError,
    MissingDependencyError,
    PreparedDataError,
)
