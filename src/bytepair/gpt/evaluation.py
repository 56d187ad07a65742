"""Validation and test loss, in bits per character and per byte: the numbers that compare tokenizers.

    bits per character = (sum over the span's tokens of -ln p(token | tokens before it))
                         / (characters the span covers x ln 2)
    bits per byte      = the same sum / (UTF-8 bytes the span covers x ln 2)

A BPE token covers several characters, so its per-token loss (and perplexity) is larger than a
character model's even when the BPE model predicts the text better; dividing the total by the
characters (or bytes), not the tokens, puts both on the same scale. Bits per byte is the
standard for byte-level and multilingual models, where a character is 1 to 4 bytes.

Special tokens (document separators) stand for no text: their loss is left out of the sum and
they are counted apart (``special_tokens``), like their bytes.

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
from bytepair.gpt.model import check_positive_int


@dataclass(frozen=True)
class Evaluation:
    """Summed loss over a span, and the figures derived from it.

    Example:
        >>> uniform = Evaluation(nats=10 * math.log(4), tokens=10, characters=20, bytes=40)
        >>> uniform.bits_per_character, uniform.bits_per_byte, uniform.perplexity  # 10 x 2 bits
        (1.0, 0.5, 4.0)
    """

    nats: float
    tokens: int  # tokens whose loss is in ``nats`` (special tokens not included)
    characters: int
    bytes: int | None = None  # UTF-8 bytes of the same text; None in curves saved before it existed
    special_tokens: int = 0  # special tokens in the span, left out of ``nats`` and ``tokens``

    @property
    def bits_per_character(self) -> float:
        return self.nats / (self.characters * math.log(2))

    @property
    def bits_per_byte(self) -> float | None:
        return None if self.bytes is None else self.nats / (self.bytes * math.log(2))

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
            "bits_per_byte": self.bits_per_byte,
            "loss_per_token": self.loss_per_token,
            "perplexity_per_token": self.perplexity,
            "nats": self.nats,
            "tokens": self.tokens,
            "characters": self.characters,
            "bytes": self.bytes,
            "special_tokens": self.special_tokens,
        }


def format_bits(value) -> str:
    """A bits figure for a report line: four decimals, or ``n/a`` for ``None`` (a curve saved
    before bytes were recorded has no bits per byte)."""
    return "n/a" if value is None else f"{value:.4f}"


def summed_nll(model, ids: np.ndarray, span: Span, *, batch_size: int = 32, device="cpu", special=None) -> float:
    """Total negative log-likelihood (nats) of ``ids[span.start:span.end]``.

    Targets go in consecutive windows of ``block_size``; the window for targets ``c:c+T`` reads
    inputs ``c-1:c+T-1``, so every target sees the tokens before it in its window (between 1
    and ``block_size`` of them). The same windowing is used for every model. ``special``: a
    boolean array by id; those targets are context only, their loss is not summed.
    """
    check_positive_int("batch_size", batch_size)  # else range() below skips every full window, or fails
    mask = None if special is None else torch.from_numpy(np.asarray(special, dtype=bool)).to(device)
    block_size = model.config.block_size
    window_starts = np.arange(span.start, span.end, block_size)
    full = window_starts[window_starts + block_size <= span.end]
    was_training = model.training
    model.eval()
    total = 0.0
    try:
        with torch.inference_mode():
            for offset in range(0, len(full), batch_size):
                total += _window_nll(model, ids, full[offset : offset + batch_size], block_size, device, mask)
            if len(full) < len(window_starts):
                last = int(window_starts[-1])
                total += _window_nll(model, ids, np.array([last]), span.end - last, device, mask)
    finally:
        model.train(was_training)
    return total


def _window_nll(model, ids, starts, length, device, special=None) -> float:
    # special: the (V,) bool mask, already on ``device`` (moved once per span, not per window)
    positions = starts[:, None] + np.arange(-1, length)  # (B, length + 1)
    windows = torch.from_numpy(ids[positions].astype(np.int64)).to(device)
    inputs, targets = windows[:, :-1], windows[:, 1:]  # (B, length), (B, length)
    logits = model(inputs)  # (B, length, V)
    if special is None:
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1), reduction="sum")
        return float(loss.item())
    losses = F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1), reduction="none")
    keep = ~special[targets.reshape(-1)]  # (B * length,)
    return float(losses[keep].sum().item())


def evaluate_span(model, ids, span: Span, *, batch_size=32, device="cpu", special=None) -> Evaluation:
    """``Evaluation`` of a model on one span of a stream; ``special``: ``TokenLengths.special``."""
    nats = summed_nll(model, ids, span, batch_size=batch_size, device=device, special=special)
    return Evaluation(nats, span.tokens - span.special_tokens, span.characters, span.bytes, span.special_tokens)


def evaluate_checkpoint(
    checkpoint, data_dir, *, split="val", eval_characters=None, batch_size=32, device=None, vocab_dir=None
) -> Evaluation:
    """Load a checkpoint and evaluate it on a split of a prepared folder, or of an
    ``encode-corpus`` folder (``vocab_dir`` finds a published vocabulary it names).

    ``eval_characters``: evaluate the first N characters of the split (after its first token),
    or the whole split with ``None``.

    Example:
        >>> evaluate_checkpoint("checkpoints/bpe", "prepared/encoded_bpe").bits_per_character  # doctest: +SKIP
        2.04

    Raises ``FingerprintMismatchError`` when the checkpoint was trained with another tokenizer.
    """
    from bytepair.gpt.checkpoint import load_checkpoint, restore_model
    from bytepair.gpt.data import load_data
    from bytepair.gpt.model import resolve_device

    check_positive_int("batch_size", batch_size)  # before the checkpoint and data are read
    device = resolve_device(device)
    data = load_data(data_dir, vocab_dir=vocab_dir)
    saved = load_checkpoint(checkpoint, tokenizer_fingerprint=data.fingerprint)
    model = restore_model(saved).to(device)
    stream = data.split(split)
    (span,) = aligned_spans([(stream.ids, data.lengths)], eval_characters)
    return evaluate_span(model, stream.ids, span, batch_size=batch_size, device=device, special=data.lengths.special)
