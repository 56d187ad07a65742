"""Text from a trained checkpoint: encode a prompt, sample tokens, decode.

Does: load the tokenizer and the checkpoint (refusing a mismatched pair), then sample with a
temperature and an optional top-k cut-off from a seeded generator. Does not: train.
"""

from __future__ import annotations

import torch

from bytepair.gpt.checkpoint import load_checkpoint, restore_model
from bytepair.gpt.data import load_tokenizer
from bytepair.gpt.errors import GPTSettingError
from bytepair.gpt.model import check_sampling, resolve_device


def sample(
    checkpoint, tokenizer, *, prompt="\n", max_new_tokens=200, temperature=1.0, top_k=None, seed=1337, device=None
) -> str:
    """The text the model writes after ``prompt`` (the continuation only).

    ``tokenizer`` is a ``Tokenizer`` or the path of its JSON file; it must be the one the
    checkpoint was trained with. ``top_k=1`` is greedy decoding, the same text every time.

    Example:
        >>> sample("checkpoints/bpe", "prepared/tokenizer.bytepair.json", prompt="The ", top_k=1)  # doctest: +SKIP
        'first game in the series , the game was released in the United States ...'
    """
    check_sampling(temperature, top_k)
    if not isinstance(max_new_tokens, int) or max_new_tokens < 0:
        raise GPTSettingError(f"max_new_tokens={max_new_tokens!r} must be an integer >= 0")
    if not prompt:
        raise GPTSettingError("prompt is empty; give at least one character to start from, e.g. '\\n'")
    if not hasattr(tokenizer, "fingerprint"):
        tokenizer = load_tokenizer(tokenizer)
    device = resolve_device(device)
    model = restore_model(load_checkpoint(checkpoint, tokenizer_fingerprint=tokenizer.fingerprint)).to(device)
    prompt_ids = tokenizer.encode(prompt)
    if not prompt_ids:
        raise GPTSettingError(f"prompt {prompt!r} encodes to no tokens; give a prompt with visible text")
    ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)  # (1, T0)
    generator = torch.Generator(device=device).manual_seed(seed)
    ids = model.generate(ids, max_new_tokens, temperature=temperature, top_k=top_k, generator=generator)
    return tokenizer.decode(ids[0, len(prompt_ids) :].tolist())
