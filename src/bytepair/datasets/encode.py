"""Encoding splits into token files: blocks on a thread pool, ids written in order, each block
checked on the way.

``encode_all`` runs one job per (tokenizer, split): the job reads the split's blocks (see
``blocks.py``), hands them to a shared pool of worker threads (the engine releases the GIL
while it encodes), and appends their ids, in order, to the split's file. Every block is checked
against its text: its ids must decode to exactly the text (after normalization) they came
from, which ``ByteTable`` does in numpy rather than one Python object per id. This module
knows nothing about file layouts or reports (``prepare.py``).

Example:
    >>> plans = {("bpe", "val"): (tokenizer, "val.bin", iter([text]))}    # doctest: +SKIP
    >>> encode_all(plans, num_threads=4)[("bpe", "val")].tokens               # doctest: +SKIP
    519689
"""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .._io import progress_shown
from .errors import PrepareError

# Blocks in flight per encoding job, per worker: enough to keep every core busy, few enough that
# memory stays a small multiple of the block size.
WINDOW_PER_WORKER = 2


def encode_text(tokenizer, text, *, num_threads, block_chars):
    """``tokenizer.encode_to_array(text)`` on ``num_threads`` threads, in blocks cut where the ids
    stay exact (``blocks.cut_for``), or whole where no cut is exact.

    Example:
        >>> ids = encode_text(tokenizer, text, num_threads=4, block_chars=1 << 22)  # doctest: +SKIP
        >>> ids.tolist() == tokenizer.encode_ordinary(text)                     # doctest: +SKIP
        True
    """
    from .blocks import SplitSource, cut_for, fitting_block

    cut = cut_for(tokenizer)
    if cut is None:
        return tokenizer.encode_to_array(text)
    blocks = SplitSource("text", text=text).blocks(fitting_block(block_chars, len(text), num_threads), cut=cut)
    with ThreadPoolExecutor(max_workers=num_threads, thread_name_prefix="bytepair-encode") as pool:
        arrays = list(pool.map(tokenizer.encode_to_array, blocks))
    return np.concatenate(arrays) if arrays else tokenizer.encode_to_array("")


def normalized(text, normalization):
    """``text`` after the tokenizer's normalization (None: unchanged)."""
    from bytepair.normalize import normalize

    return normalize(text, normalization)


@dataclass
class Counts:
    """Running totals of one encoded split."""

    tokens: int = 0
    characters: int = 0
    bytes: int = 0
    min_id: int | None = None
    max_id: int | None = None

    def add(self, other):
        self.tokens += other.tokens
        self.characters += other.characters
        self.bytes += other.bytes
        for attribute, pick in (("min_id", min), ("max_id", max)):
            mine, theirs = getattr(self, attribute), getattr(other, attribute)
            setattr(self, attribute, theirs if mine is None else mine if theirs is None else pick(mine, theirs))


class Cancelled(Exception):
    """Another encoding job failed; this one stops early."""


def encode_all(plans, *, num_threads, progress=None, total=None):
    """Run every plan ``key -> (tokenizer, path, blocks)``; returns ``key -> Counts``.

    One thread per plan reads its blocks and writes their ids in order; the encoding itself
    runs on a shared pool of ``num_threads`` threads. The first failure stops every plan and is
    raised once all threads have finished (so no thread writes after the caller cleans up).
    """
    from concurrent.futures import FIRST_EXCEPTION, wait

    stop = threading.Event()
    bar = _bar(progress, total)
    pool = ThreadPoolExecutor(max_workers=num_threads, thread_name_prefix="bytepair-encode")
    jobs = ThreadPoolExecutor(max_workers=max(1, len(plans)), thread_name_prefix="bytepair-split")
    futures = {}
    tables = {}
    try:
        for key, (tokenizer, path, blocks) in plans.items():
            if id(tokenizer) not in tables:
                tables[id(tokenizer)] = ByteTable(tokenizer)
            job = (tokenizer, tables[id(tokenizer)], blocks, path, pool, num_threads * WINDOW_PER_WORKER, stop, bar)
            futures[key] = jobs.submit(_encode_split, *job)
        wait(futures.values(), return_when=FIRST_EXCEPTION)
        failed = [f for f in futures.values() if f.done() and f.exception() is not None]
        if failed:
            stop.set()
            wait(futures.values())
            failed = [f.exception() for f in futures.values() if f.exception() is not None]
            raise next((e for e in failed if not isinstance(e, Cancelled)), failed[0])
        return {key: future.result() for key, future in futures.items()}
    except BaseException:
        stop.set()
        raise
    finally:
        jobs.shutdown(wait=True, cancel_futures=True)
        pool.shutdown(wait=True, cancel_futures=True)
        if bar is not None:
            bar.close()


def _encode_split(tokenizer, table, blocks, path, pool, window, stop, bar):
    """One plan: blocks to the pool, ids to ``path`` in order; a failure stops the others."""
    try:
        return _write_split(tokenizer, table, blocks, path, pool, window, stop, bar)
    except BaseException:
        stop.set()
        raise


def _write_split(tokenizer, table, blocks, path, pool, window, stop, bar):
    totals = Counts()
    pending = deque()
    with open(path, "wb") as file:

        def write_next():
            ids, counts = pending.popleft().result()
            ids.tofile(file)
            totals.add(counts)

        for block in blocks:
            if stop.is_set():
                raise Cancelled()
            pending.append(pool.submit(_encode_block, tokenizer, table, block, stop, bar))
            if len(pending) >= window:
                write_next()
        while pending:
            write_next()
    return totals


def _encode_block(tokenizer, table, block, stop, bar):
    """Encode one block, check that its ids decode to exactly its (normalized) text."""
    if stop.is_set():
        raise Cancelled()
    ids = tokenizer.encode_to_array(block)
    text = normalized(block, tokenizer.normalization)
    expected = text.encode("utf-8")
    if not same_bytes(table, ids, expected):
        raise PrepareError(
            f"the round trip failed: {len(ids):,} ids do not decode to the {len(expected):,} bytes "
            "they were encoded from; this is a bug in bytepair, please report it with the corpus"
        )
    counts = Counts(len(ids), len(text), len(expected))
    if len(ids):
        counts.min_id, counts.max_id = int(ids.min()), int(ids.max())
    if bar is not None:
        bar.update(len(block))
    return ids, counts


def same_bytes(table, ids, expected):
    """Whether ``ids`` decode to exactly ``expected`` (bytes), checked in numpy, in chunks.

    The plain decoder makes one Python object per id (4.5 s for WikiText-2's train split in
    characters); this gathers each token's bytes from a ``ByteTable`` (0.3 s). An id with no
    bytes (out of range, unused, or a special token, which ordinary text never gives) fails.
    """
    done = 0
    for start in range(0, len(ids), CHECK_CHUNK):
        part = table.decode(ids[start : start + CHECK_CHUNK])
        if part is None or expected[done : done + len(part)] != part:
            return False
        done += len(part)
    return done == len(expected)


# Ids per step of ``same_bytes``: bounds its memory to a few tens of MB whatever the split.
CHECK_CHUNK = 1 << 20


class ByteTable:
    """Every token's bytes in two numpy forms, for decoding whole arrays of ids at once.

    ``rows`` is a (vocab, longest) matrix when tokens are short (a row per id, masked by its
    length: one gather and one compress); long tokens use ``flat`` and per-id offsets instead.
    Special tokens and unused ids get length 0.
    """

    LONGEST_ROW = 64

    def __init__(self, tokenizer):
        from bytepair.errors import TokenIdError

        special_ids = set(tokenizer.special_tokens.values())
        values = []
        for token_id in range(tokenizer.vocab_size):
            try:
                values.append(b"" if token_id in special_ids else tokenizer.token_bytes(token_id))
            except TokenIdError:
                values.append(b"")
        self.lengths = np.fromiter((len(v) for v in values), dtype=np.int64, count=len(values))
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)
        self.flat = np.frombuffer(b"".join(values), dtype=np.uint8)
        longest = int(self.lengths.max()) if len(values) else 0
        self.rows = None
        if longest <= self.LONGEST_ROW:
            self.rows = np.zeros((len(values), max(longest, 1)), dtype=np.uint8)
            for token_id, value in enumerate(values):
                self.rows[token_id, : len(value)] = np.frombuffer(value, dtype=np.uint8)
            self.columns = np.arange(self.rows.shape[1], dtype=np.int64)

    def decode(self, ids):
        """The bytes of ``ids`` (a numpy array), or None if one has no bytes."""
        if len(ids) == 0:
            return b""
        if int(ids.max()) >= len(self.lengths):
            return None
        token_lengths = self.lengths[ids]
        if not token_lengths.all():
            return None
        if self.rows is not None:
            return self.rows[ids][self.columns < token_lengths[:, None]].tobytes()
        ends = np.cumsum(token_lengths)
        gather = np.arange(int(ends[-1]), dtype=np.int64)
        gather += np.repeat(self.offsets[ids] - (ends - token_lengths), token_lengths)
        return self.flat[gather].tobytes()


def _bar(progress, total):
    if not progress_shown(progress):
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="encode", unit="char", unit_scale=True, leave=False)
