"""A small decoder-only GPT: token + position embeddings, pre-norm blocks, tied output head.

The model maps token ids to next-token logits and nothing else: losses, batches, schedules and
checkpoints live in ``evaluate.py``, ``data.py``, ``train.py`` and ``checkpoint.py``. Its size
comes from the tokenizer (``vocab_size``) and six shape settings; the defaults are seed 000's
mini-GPT (128 tokens of context, 128 dimensions, 4 heads, 4 layers).

Shapes in the comments: B batch, T time (tokens), C embedding dims, H heads, D = C // H, V vocab.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from bytepair.gpt.errors import GPTSettingError


@dataclass(frozen=True)
class GPTConfig:
    """The architecture; ``vocab_size`` must be the tokenizer's.

    Example:
        >>> GPTConfig(vocab_size=300, num_layers=2).embedding_dim
        128
    """

    vocab_size: int
    block_size: int = 128
    embedding_dim: int = 128
    num_heads: int = 4
    num_layers: int = 4
    expansion_factor: int = 4
    dropout: float = 0.1

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "embedding_dim", "num_heads", "num_layers", "expansion_factor"):
            check_positive_int(name, getattr(self, name))
        if self.embedding_dim % self.num_heads:
            raise GPTSettingError(
                f"embedding_dim={self.embedding_dim!r} is not divisible by "
                f"num_heads={self.num_heads!r}; choose a number of heads that divides it"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise GPTSettingError(f"dropout={self.dropout!r} must be in [0, 1)")

    def to_dict(self) -> dict:
        """Plain values only, so the checkpoint loads with ``torch.load(weights_only=True)``."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> GPTConfig:
        """Inverse of ``to_dict``; unknown or missing fields are a ``GPTSettingError``."""
        return settings_from_dict(cls, values, "model")


def check_positive_int(name, value):
    """Reject anything but an integer >= 1 for a size or count setting (``batch_size``, ...)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise GPTSettingError(f"{name}={value!r} must be a positive integer")


def settings_from_dict(cls, values, kind):
    """A settings dataclass from plain values; unknown or missing fields are a ``GPTSettingError``."""
    names = {item.name for item in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise GPTSettingError(f"unknown {kind} settings {unknown!r}; expected some of {sorted(names)!r}")
    try:
        return cls(**values)
    except TypeError as error:
        raise GPTSettingError(f"incomplete {kind} settings {values!r}: {error}") from None


class CausalSelfAttention(nn.Module):
    """Multi-head attention where position t sees only positions <= t."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.num_heads = config.num_heads
        self.qkv = nn.Linear(config.embedding_dim, 3 * config.embedding_dim)
        self.projection = nn.Linear(config.embedding_dim, config.embedding_dim)
        self.dropout = config.dropout
        self.residual_dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, time, channels = x.shape  # (B, T, C)
        q, k, v = self.qkv(x).split(channels, dim=2)  # 3 x (B, T, C)
        # (B, T, C) -> (B, H, T, D): each head attends on its own slice of the channels.
        q, k, v = (t.view(batch, time, self.num_heads, -1).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
        )  # (B, H, T, D)
        y = y.transpose(1, 2).contiguous().view(batch, time, channels)  # (B, T, C)
        return self.residual_dropout(self.projection(y))


class FeedForward(nn.Module):
    """Position-wise MLP: C -> expansion_factor * C -> C, with GELU."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        hidden = config.expansion_factor * config.embedding_dim
        self.expand = nn.Linear(config.embedding_dim, hidden)
        self.projection = nn.Linear(hidden, config.embedding_dim)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.projection(F.gelu(self.expand(x))))  # (B, T, C)


class Block(nn.Module):
    """One transformer layer, pre-norm: x + attention(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.attention_norm = nn.LayerNorm(config.embedding_dim)
        self.attention = CausalSelfAttention(config)
        self.feed_forward_norm = nn.LayerNorm(config.embedding_dim)
        self.feed_forward = FeedForward(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.attention_norm(x))  # (B, T, C)
        return x + self.feed_forward(self.feed_forward_norm(x))  # (B, T, C)


class GPT(nn.Module):
    """Next-token logits for a batch of token ids; the output head shares the embedding matrix.

    Example:
        >>> model = GPT(GPTConfig(vocab_size=50, block_size=8, embedding_dim=16, num_heads=2))
        >>> model(torch.zeros(3, 8, dtype=torch.long)).shape
        torch.Size([3, 8, 50])

    NOTE: tying halves the vocabulary-dependent parameters (``vocab_size x embedding_dim`` once,
    not twice), which matters when comparing a 200-token and a 2,000-token vocabulary.
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.embedding_dim)
        self.position_embedding = nn.Embedding(config.block_size, config.embedding_dim)
        self.dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.num_layers))
        self.final_norm = nn.LayerNorm(config.embedding_dim)
        self.lm_head = nn.Linear(config.embedding_dim, config.vocab_size, bias=False)
        self.lm_head.weight = self.token_embedding.weight  # tied: one (V, C) matrix
        self.apply(_init_weights)
        # GPT-2's scaling: each residual branch adds to the stream, so shrink the last
        # projection of each by 1/sqrt(2 * layers) to keep the stream's variance from growing.
        for name, parameter in self.named_parameters():
            if name.endswith("projection.weight"):
                nn.init.normal_(parameter, mean=0.0, std=0.02 / math.sqrt(2 * config.num_layers))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, T, V)`` for ids ``(B, T)`` with ``T <= block_size``."""
        batch, time = ids.shape  # (B, T)
        if time > self.config.block_size:
            raise GPTSettingError(
                f"a sequence of {time!r} tokens is longer than block_size="
                f"{self.config.block_size!r}; crop the input to the last block_size tokens"
            )
        positions = torch.arange(time, device=ids.device)  # (T,)
        x = self.token_embedding(ids) + self.position_embedding(positions)  # (B, T, C)
        x = self.dropout(x)
        for block in self.blocks:
            x = block(x)  # (B, T, C)
        return self.lm_head(self.final_norm(x))  # (B, T, V)

    @torch.no_grad()
    def generate(self, ids, max_new_tokens, *, temperature=1.0, top_k=None, generator=None):
        """Extend ``ids`` ``(B, T0)`` by sampling ``max_new_tokens`` tokens, one at a time.

        Logits are divided by ``temperature`` and, with ``top_k``, all but the k largest are
        dropped before sampling; ``top_k=1`` is greedy decoding (no randomness left).
        """
        check_sampling(temperature, top_k)
        for _ in range(max_new_tokens):
            context = ids[:, -self.config.block_size :]  # (B, <=T)
            logits = self(context)[:, -1, :] / temperature  # (B, V)
            if top_k is not None:
                kth_largest = torch.topk(logits, min(top_k, logits.size(-1))).values[:, -1:]  # (B, 1)
                logits = logits.masked_fill(logits < kth_largest, float("-inf"))
            probabilities = F.softmax(logits, dim=-1)  # (B, V)
            next_ids = torch.multinomial(probabilities, 1, generator=generator)  # (B, 1)
            ids = torch.cat([ids, next_ids], dim=1)  # (B, T0 + step + 1)
        return ids


def check_sampling(temperature, top_k):
    """Reject a temperature <= 0 or a top_k < 1 with an error that says what to use instead."""
    if not temperature > 0:
        raise GPTSettingError(f"temperature={temperature!r} must be positive; for greedy decoding use top_k=1")
    if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
        raise GPTSettingError(f"top_k={top_k!r} must be a positive integer or None (no cut-off)")


def _init_weights(module: nn.Module) -> None:
    # GPT-2's initialisation: N(0, 0.02) weights and zero biases, so that the tied embedding
    # starts small and the first logits are close to uniform (loss ~ ln V at step 0).
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)


def parameter_count(config: GPTConfig) -> int:
    """The model's parameters (the tied embedding once), counted without allocating them."""
    with torch.device("meta"):  # shapes only: no memory, however large the config
        return sum(parameter.numel() for parameter in GPT(config).parameters())


def training_step_bytes(config: GPTConfig, batch_size: int) -> tuple[int, int]:
    """A lower bound on the float32 bytes one training step holds: ``(model, activations)``.

    The model counts 4 copies of the parameters (weights, gradients, AdamW's two moments). The
    activations count, per token, what the backward pass must keep in each layer (the two norms'
    outputs, q, k, v, the attention output, the block input, the MLP's two expanded tensors) and
    the logits with their gradient; attention's (T, T) scores are left out, as fused kernels never
    store them, so a run can still need more than this.
    """
    model = 4 * 4 * parameter_count(config)
    per_token = config.num_layers * (6 + 2 * config.expansion_factor) * config.embedding_dim + 2 * config.vocab_size
    return model, 4 * batch_size * config.block_size * per_token


def device_memory(device) -> int | None:
    """Total bytes of memory on ``device``, or ``None`` where it is not known (then nothing is checked)."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory
    if device.type == "cpu":
        try:
            physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):  # no sysconf (Windows) or no such name
            return None
        limit = cgroup_memory_limit()
        return physical if limit is None else min(physical, limit)
    return None


def cgroup_memory_limit(root="/sys/fs/cgroup", membership="/proc/self/cgroup") -> int | None:
    """The memory limit of this process's control group (a container's ``--memory``), in bytes;
    ``None`` where there is none or it cannot be read. A container sees the host's RAM in
    ``sysconf``, and a step past its limit is killed rather than refused.

    Reads cgroup v2 (``memory.max``) or v1 (``memory.limit_in_bytes``), at the process's own
    group and, as inside a container that sees only its own tree, at the root.
    """
    try:
        with open(membership, encoding="utf-8") as lines:
            groups = [line.rstrip("\n").split(":", 2) for line in lines]
    except OSError:
        return None
    candidates = []
    for fields in groups:
        if len(fields) != 3:
            continue
        _, controllers, path = fields
        path = path.lstrip("/")
        if controllers == "":
            candidates += [os.path.join(root, path, "memory.max"), os.path.join(root, "memory.max")]
        elif "memory" in controllers.split(","):
            folder = os.path.join(root, "memory")
            names = [os.path.join(folder, path, "memory.limit_in_bytes"), os.path.join(folder, "memory.limit_in_bytes")]
            candidates += names
    limits = []
    for candidate in candidates:
        try:
            with open(candidate, encoding="ascii") as file:
                value = file.read().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if value.isdigit() and int(value) < 2**62:  # "max" (v2) or a huge number (v1): no limit
            limits.append(int(value))
    return min(limits) if limits else None


def check_training_fits(config: GPTConfig, batch_size: int, device) -> None:
    """Refuse a model and batch whose training step cannot fit in the device's total memory, before
    anything is allocated (``training_step_bytes`` is a lower bound, so nothing that fits is refused)."""
    memory = device_memory(device)
    model, activations = training_step_bytes(config, batch_size)
    if memory is None or model + activations <= memory:
        return
    smaller = "block_size, embedding_dim or num_layers" if model > memory else "block_size or batch_size"
    raise GPTSettingError(
        f"block_size={config.block_size!r} with batch_size={batch_size!r} (embedding_dim="
        f"{config.embedding_dim!r}, num_layers={config.num_layers!r}, vocab_size={config.vocab_size!r}) needs "
        f"at least {_gigabytes(model + activations)} per training step ({_gigabytes(model)} for the model, its "
        f"gradients and AdamW state, {_gigabytes(activations)} of activations), more than the "
        f"{_gigabytes(memory)} of memory on {device}; use a smaller {smaller}"
    )


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is torch failing to allocate: CUDA's error, or the CPU allocator's."""
    return isinstance(error, torch.OutOfMemoryError) or (
        isinstance(error, RuntimeError) and "can't allocate memory" in str(error)
    )


def _gigabytes(size: int) -> str:
    return f"{size / 1e9:,.1f} GB"


def resolve_device(device=None) -> torch.device:
    """``None``: CUDA when available, else the CPU; otherwise the device named."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError):
        raise GPTSettingError(f"device={device!r} is not a torch device; use 'cpu', 'cuda' or 'cuda:1'") from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise GPTSettingError(f"device={device!r} was asked for, but CUDA is not available here; use 'cpu'")
    return resolved
