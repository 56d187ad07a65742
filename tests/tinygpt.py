"""Helpers for the tests of ``bytepair.gpt``; import only after ``pytest.importorskip("torch")``.

- ``one_torch_thread``: a module-scoped autouse fixture; import it into a test module to run
  that module's tiny models on one thread.
- ``UniformModel``: all-zero logits, so every token costs exactly ln V nats (the hand oracle of
  bits per character and per byte).
"""

from __future__ import annotations

import pytest
import torch

from bytepair import gpt


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """Tiny models gain nothing from threads, and on a busy machine threads make them crawl."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class UniformModel(torch.nn.Module):
    """Logits all zero: every token has probability 1/V, so it costs ln V nats."""

    def __init__(self, vocab_size, block_size):
        super().__init__()
        self.config = gpt.GPTConfig(vocab_size=vocab_size, block_size=block_size, embedding_dim=4, num_heads=1)

    def forward(self, ids):
        return torch.zeros(*ids.shape, self.config.vocab_size)
