"""Byte-mode encoders built straight from token ranks, for tests that compare the engine with
``reference.merge_by_rank`` on small or random vocabularies."""

from __future__ import annotations

from bytepair import _engine


def token_values(ranks):
    """The values of ``ranks`` ({bytes: rank}) in id order."""
    values = [None] * len(ranks)
    for value, rank in ranks.items():
        values[rank] = value
    return values


def engine_for(ranks, pair_ranks, *, whole_piece, monotonic, pattern=None):
    """An Encoder over ``ranks`` ({bytes: rank}, ids are ranks, every byte a token) with
    ``pair_ranks`` {(left bytes, right bytes): rank or ranks}."""
    pair_table = {
        (ranks[left], ranks[right]): (rank, ranks[left + right]) for (left, right), rank in pair_ranks.items()
    }
    return _engine.Encoder(
        mode="byte",
        token_bytes=token_values(ranks),
        base_ids=[ranks[bytes([b])] for b in range(256)],
        pair_table=pair_table,
        whole_piece=whole_piece,
        monotonic=monotonic,
        pattern=pattern,
        fallback_ids=None,
    )


def tiktoken_engine_for(ranks, *, pattern=None):
    """An Encoder over ``ranks`` ({bytes: rank}, ids are ranks, every byte a token) that
    derives tiktoken's pair table itself, as ``bytepair.load`` does for a rank file."""
    return _engine.Encoder(
        mode="byte",
        token_bytes=token_values(ranks),
        base_ids=[ranks[bytes([b])] for b in range(256)],
        pair_table={},
        whole_piece=True,
        monotonic=False,
        pattern=pattern,
        fallback_ids=None,
        token_splits=True,
    )
