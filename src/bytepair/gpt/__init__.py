"""A small GPT trained on bytepair's prepared data, and fair comparisons of tokenizations.

Needs the ``gpt`` extra (PyTorch, matplotlib): ``pip install 'bytepair[gpt]'``. Importing this
package without PyTorch raises ``ImportError`` saying so; ``import bytepair`` never imports it.

    >>> from bytepair import gpt                                                # doctest: +SKIP
    >>> result = gpt.train("prepared/encoded_bpe", "checkpoints/bpe", max_steps=500)  # doctest: +SKIP
    >>> gpt.sample("checkpoints/bpe", "prepared/tokenizer.bytepair.json", prompt="The ")  # doctest: +SKIP
    >>> print(gpt.compare("prepared", characters=2_000_000).table())            # doctest: +SKIP

Modules: ``model`` (the GPT), ``data`` (prepared and encode-corpus folders), ``training``, ``evaluation`` (bits per
character), ``checkpoint``, ``sampling``, ``comparison``, ``cli`` (``bytepair gpt ...``).
The names below load their module, and with it PyTorch, on first use, so that the command line
can list ``bytepair gpt`` without paying for the import of torch.
"""

from __future__ import annotations

import importlib
import importlib.util

from bytepair.gpt.errors import (  # noqa: F401 (re-exported: see __all__ below)
    CheckpointError,
    FingerprintMismatchError,
    GPTSettingError,
    MissingDependencyError,
    PreparedDataError,
)


def _torch_installed() -> bool:
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):  # a broken or blocked install counts as missing
        return False


if not _torch_installed():
    raise MissingDependencyError(
        "bytepair.gpt needs PyTorch, which is not installed; install it with: pip install 'bytepair[gpt]'",
        name=__name__,
    )

# name -> module that defines it
_LAZY = {
    "GPT": "model",
    "GPTConfig": "model",
    "TrainConfig": "training",
    "TrainResult": "training",
    "train": "training",
    "learning_rate_at": "training",
    "Evaluation": "evaluation",
    "evaluate_checkpoint": "evaluation",
    "evaluate_span": "evaluation",
    "EncodedData": "data",
    "load_encoded": "data",
    "load_shards": "data",
    "aligned_spans": "data",
    "load_checkpoint": "checkpoint",
    "read_checkpoint": "checkpoint",
    "restore_model": "checkpoint",
    "sample": "sampling",
    "Comparison": "comparison",
    "compare": "comparison",
    "plot_curves": "comparison",
}


def __getattr__(name):
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module_name}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = sorted(
    [
        "CheckpointError",
        "FingerprintMismatchError",
        "GPTSettingError",
        "MissingDependencyError",
        "PreparedDataError",
        *_LAZY,
    ]
)
