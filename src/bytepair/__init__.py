"""bytepair: train, load and run BPE tokenizers for small GPTs.

The public API is small and flat:

    >>> import bytepair
    >>> tok = bytepair.train("some text " * 100, mode="byte", vocab_size=300)  # doctest: +SKIP
    >>> tok.save("tok.json")                                                  # doctest: +SKIP
    >>> tok = bytepair.load("tok.json")                                       # doctest: +SKIP
    >>> gpt2 = bytepair.load("gpt2", path="vocab/")                           # doctest: +SKIP

A ``Tokenizer`` composes a vocabulary model (``MergeModel``: trained here; ``RankModel``:
tiktoken's or HF's vocabularies) with normalization, special tokens and a pattern.

Everything else lives in named modules: ``reference`` (the readable oracle), ``formats``
(tiktoken and HF files), ``datasets`` (WikiText-2, encoded splits), ``gpt`` (a small model,
needs ``bytepair[gpt]``), ``chat`` (chat templates). Each is imported on first use, so
``bytepair.chat.render_chat(...)`` works after a plain ``import bytepair``.
"""

from __future__ import annotations

import importlib
import os

from .errors import BytepairError
from .model import MergeModel, RankModel
from .tokenizer import Tokenizer
from .train import train

__version__ = "0.1.0"


def load(
    name: str | os.PathLike,
    *,
    path: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    base_url: str | None = None,
) -> Tokenizer:
    """Load a tokenizer: the primary loading verb.

    ``name`` is a published vocabulary ("gpt2", "cl100k_base", "o200k_base", "llama3", ...),
    read from ``path`` (a file or folder), ``$BYTEPAIR_VOCAB_DIR`` or the download cache
    (downloaded once, sha256-checked, when online); or a path to any tokenizer file (a bytepair
    artifact, a ``.tiktoken`` file, a ``tokenizer.json``, GPT-2's ``encoder.json``).
    ``Tokenizer.load(path)`` is its alias for bytepair's own artifact files.

    Example:
        >>> bytepair.load("cl100k_base", path="vocab/").encode("hello world")  # doctest: +SKIP
        [15339, 1917]
    """
    from .formats import load as _load

    return _load(name, path=path, cache_dir=cache_dir, base_url=base_url)


# Submodules imported on first attribute access (``bytepair.chat``): importing them here would
# load jinja2, the formats and the datasets code for every ``import bytepair``.
LAZY_SUBMODULES = ("artifact", "chat", "datasets", "dropin", "formats", "gpt", "patterns", "reference", "view")


def __getattr__(name):
    if name in LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BytepairError", "MergeModel", "RankModel", "Tokenizer", "load", "train", "__version__"]
