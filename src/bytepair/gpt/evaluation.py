"""Validation and test loss, in bits per character: the one number that compares tokenizers.

    bits per character = (sum over the span's tokens of -ln p(token | tokens before it))
                         / (characters the span covers x ln 2)

A BPE token covers several characters, so its per-token loss (and perplexity) is larger than a
character model's even when the BPE model predicts the text better; dividing the total by the
characters, not the tokens, puts both on the same scale.

Does: sum the negative log-likelihood of every token of a span (``data.Span``), in windows of
``block_size`` tokens, and evaluate a saved checkpoint on a prepared split. Does not: train.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from bytepair.gpt.data import Span, aligned_spans


@dataclass(frozen=True)
class Evaluation:
    """Summed loss over a span, and the figures derived from it.

    Example:
        >>> uniform = Evaluation(nats=10 * math.log(4), tokens=10, characters=20)
        >>> uniform.bits_per_character, uniform.perplexity  # 10 tokens x 2 bits / 20 characters
        (1.0, 4.0)
    """

    nats: float
    tokens: int
    characters: int

    @property
    def bits_per_character(self) -> float:
        return self.nats / (self.characters * math.log(2))

    @property
    def loss_per_token(self) -> float:
        """Mean cross-entropy per token, in nats (what training minimises)."""
        return self.nats / self.tokens

    @property
    def perplexity(self) -> float:
        """Per-token perplexity. WARNING: does not compare across tokenizers; use bits per character."""
        return math.exp(self.loss_per_token)

    def to_dict(self) -> dict:
        return {
            "bits_per_character": self.bits_per_character,
            "loss_per_token": self.loss_per_token,
            "perplexity_per_token": self.perplexity,
            "nats": self.nats,
            "tokens": self.tokens,
            "characters": self.characters,
        }


def summed_nll(model, ids: np.ndarray, span: Span, *, batch_size: int = 32, device="cpu") -> float:
    """Total negative log-likelihood (nats) of ``ids[span.start:span.end]``.

    Targets go in consecutive windows of ``block_size``; the window for targets ``c:c+T`` reads
    inputs ``c-1:c+T-1``, so every target sees the tokens before it in its window (between 1
    and ``block_size`` of them). The same windowing is used for every model.
    """
    block_size = model.config.block_size
    window_starts = np.arange(span.start, span.end, block_size)
    full = window_starts[window_starts + block_size <= span.end]
    was_training = model.training
    model.eval()
    total = 0.0
    try:
        with torch.inference_mode():
            for offset in range(0, len(full), batch_size):
                total += _window_nll(model, ids, full[offset:offset + batch_size], block_size, device)
            if len(full) < len(window_starts):
                last = int(window_starts[-1])
                total += _window_nll(model, ids, np.array([last]), span.end - last, device)
    finally:
        model.train(was_training)
    return total


def _window_nll(model, ids, starts, length, device) -> float:
    positions = starts[:, None] + np.arange(-1, length)  # (B, length + 1)
    windows = torch.from_numpy(ids[positions].astype(np.int64)).to(device)
    inputs, targets = windows[:, :-1], windows[:, 1:]  # (B, length), (B, length)
    logits = model(inputs)  # (B, length, V)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1), reduction="sum")
    return float(loss.item())


def evaluate_span(model, ids, span: Span, *, batch_size=32, device="cpu") -> Evaluation:
    """``Evaluation`` of a model on one span of a stream."""
    return Evaluation(summed_nll(model, ids, span, batch_size=batch_size, device=device), span.tokens, span.characters)


def evaluate_checkpoint(checkpoint, data_dir, *, split="val", eval_characters=None, batch_size=32,
                        device=None) -> Evaluation:
    """Load a checkpoint and evaluate it on a split of a prepared folder.

    ``eval_characters``: evaluate the first N characters of the split (after its first token),
    or the whole split with ``None``.

    Example:
        >>> evaluate_checkpoint("checkpoints/bpe", "prepared/encoded_bpe").bits_per_character  # doctest: +SKIP
        2.04

    Raises ``FingerprintMismatchError`` when the checkpoint was trained with another tokenizer.
    """
    from bytepair.gpt.checkpoint import load_checkpoint, restore_model
    from bytepair.gpt.data import load_encoded
    from bytepair.gpt.model import resolve_device

    device = resolve_device(device)
    data = load_encoded(data_dir)
    saved = load_checkpoint(checkpoint, tokenizer_fingerprint=data.fingerprint)
    model = restore_model(saved).to(device)
    stream = data.split(split)
    (span,) = aligned_spans([(stream.ids, data.lengths)], eval_characters)
    return evaluate_span(model, stream.ids, span, batch_size=batch_size, device=device)
