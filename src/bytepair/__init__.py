"""bytepair: train, load and run BPE tokenizers for small GPTs.

The public API is small and flat:

    >>> import bytepair
    >>> tok = bytepair.train("some text " * 100, mode="byte", vocab_size=300)  # doctest: +SKIP
    >>> tok.save("tok.json")                                                  # doctest: +SKIP
    >>> tok = bytepair.Tokenizer.load("tok.json")                             # doctest: +SKIP
    >>> gpt2 = bytepair.load("gpt2", path="vocab/")                           # doctest: +SKIP

Everything else lives in named modules: ``reference`` (the readable oracle), ``formats``
(tiktoken and HF files), ``datasets`` (WikiText-2, encoded splits), ``gpt`` (a small model,
needs ``bytepair[gpt]``), ``chat`` (chat templates).
"""

from .errors import BytepairError
from .tokenizer import Tokenizer
from .train import train

__version__ = "0.1.0"


def load(name, *, path=None, cache_dir=None, base_url=None):
    """Load a published vocabulary by name ("gpt2", "cl100k_base", "o200k_base", "llama3", ...)
    from a local file or folder, or download it once into a cache (sha256-checked) when online.
    """
    from .formats import load as _load

    return _load(name, path=path, cache_dir=cache_dir, base_url=base_url)


__all__ = ["BytepairError", "Tokenizer", "load", "train", "__version__"]
