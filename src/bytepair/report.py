"""Seed 000's report on a trained tokenizer and its encoded splits, as printable lines.

Shared by ``bytepair demo`` and ``bytepair prepare``; it computes nothing that is not shown.
"""

from __future__ import annotations


def split_report(name, characters, tokens):
    """One line per split: characters, tokens, compression factor and reduction."""
    factor = characters / tokens if tokens else float("nan")
    reduction = 100.0 * (1 - tokens / characters) if characters else 0.0
    return (
        f"{name:<10} {characters:>12,} characters -> {tokens:>11,} tokens   "
        f"compression {factor:5.2f}x   reduction {reduction:5.1f}%"
    )


def longest_tokens(tokenizer, count):
    """The ``count`` longest learned tokens as (id, readable string), longest first."""
    model = tokenizer.model
    # Seed 000 ranks by length in characters (bytes in byte mode); ties keep id order.
    learned = [i for i in model.learned_ids() if model.token_value(i) is not None]
    ranked = sorted(learned, key=lambda i: (-len(model.token_value(i)), i))
    return [(i, tokenizer.token_string(i)) for i in ranked[:count]]


def learned_tokens_report(tokenizer, count=15):
    """The longest learned tokens with their ids."""
    lines = [f"longest learned tokens (of {tokenizer.vocab_size}):"]
    for token_id, token in longest_tokens(tokenizer, count):
        lines.append(f"  {token_id:5d} {token!r}")
    return lines


def sample_report(tokenizer, sentence):
    """The sample sentence as pieces and ids."""
    ids = tokenizer.encode_ordinary(sentence)
    pieces = [tokenizer.token_string(i) for i in ids]
    return [
        f"sample: {sentence!r}",
        f"  {len(sentence)} characters -> {len(ids)} tokens",
        f"  pieces: {pieces!r}",
        f"  ids:    {ids!r}",
    ]
