"""Token shards on disk: writing them while a run goes, resuming a run, reading them back.

A finished output folder::

    OUT/train.bin, OUT/val.bin            one file per split (nanoGPT's layout), or
    OUT/train_000000.bin, ...             shards of at most ``shard_tokens`` tokens
    OUT/meta.json                         what is in them (``corpus.py`` fills it)

Every ``.bin`` is a flat little-endian ``uint16`` (every id < 65,536) or ``uint32`` stream for
``np.memmap``. A shard holds whole documents, each followed by the end-of-text id; only a
document longer than a shard is cut, into full shards and a rest that starts the next one.

While a run goes, the folder is built in ``.OUT.partial`` beside ``OUT``: a shard is written
as ``.NAME.tmp`` and renamed to its name when complete, then recorded in ``shards.jsonl``
(size, documents, SHA-256); ``run.json`` holds what the run was asked to do. ``resume_shards``
keeps the recorded shards that are intact and end at a document boundary, so a resumed run
writes the rest exactly as an uninterrupted one would. ``meta.json`` is written last, and the
folder is switched into place in one step (``files.switch_folder``).

Example:
    >>> train = open_shards("out", "train")                 # doctest: +SKIP
    >>> int(train[0][:10].max()) < 50257                    # doctest: +SKIP
    True
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from bytepair.errors import PreparedDataError

from .._io import FILE_MODE, file_sha256, write_text_atomic

META_FORMAT = "bytepair-shards/1"
LOG = "shards.jsonl"
RUN = "run.json"


def array_dtype(vocab_size):
    """``"uint16"`` when every id fits (vocab_size <= 65,536), else ``"uint32"``."""
    return "uint16" if vocab_size <= 2**16 else "uint32"


def shard_name(split, index, sharded):
    return f"{split}_{index:06d}.bin" if sharded else f"{split}.bin"


@dataclass
class Shard:
    """One complete shard: its file, size, what it covers and its SHA-256.

    ``first_document`` counts documents of its split; ``end`` is the index (over the documents
    of every split, in reading order) just after the last document it finishes; ``whole`` is
    False when it ends inside a document.
    """

    split: str
    index: int
    file: str
    tokens: int
    documents: int
    first_document: int
    characters: int
    bytes: int
    sha256: str
    end: int
    whole: bool = True

    def public(self):
        return {k: v for k, v in asdict(self).items() if k not in ("split", "index", "end", "whole")}


class ShardWriter:
    """Appends encoded documents of one split to its shards, cutting them at ``shard_tokens``.

    ``add(ids, lengths, characters, bytes, ends)``: the ids of consecutive documents (each with
    its end-of-text id), and per document its token count, characters, bytes and its index + 1
    over all documents. ``finish()`` closes the last shard. Each complete shard is renamed into
    place and passed to ``on_shard``.
    """

    def __init__(self, folder, split, dtype, shard_tokens=None, *, on_shard=None, start=()):
        self.folder, self.split, self.dtype = Path(folder), split, np.dtype(dtype).newbyteorder("<")
        self.limit = shard_tokens or None
        self.on_shard = on_shard
        self.shards = list(start)
        self.documents_done = sum(s.documents for s in self.shards)
        self.end = self.shards[-1].end if self.shards else 0
        self._file = None
        self._open()

    def _open(self):
        name = shard_name(self.split, len(self.shards), self.limit is not None)
        self._final = self.folder / name
        self._temporary = self.folder / f".{name}.tmp"
        self._file = open(self._temporary, "wb")  # noqa: SIM115 - open across add() calls, closed by _close/discard
        self._sha = hashlib.sha256()
        self._tokens = self._documents = self._characters = self._bytes = 0

    def add(self, ids, lengths, characters, nbytes, ends):
        ids = np.asarray(ids).astype(self.dtype, copy=False)
        lengths = np.asarray(lengths, dtype=np.int64)
        position, first = 0, 0
        while first < len(lengths):
            room = (self.limit - self._tokens) if self.limit else None
            cum = np.cumsum(lengths[first:])
            fit = len(cum) if room is None else int(np.searchsorted(cum, room, side="right"))
            if fit:
                take = int(cum[fit - 1])
                self._write(ids[position : position + take])
                self._documents += fit
                self._characters += int(np.sum(characters[first : first + fit]))
                self._bytes += int(np.sum(nbytes[first : first + fit]))
                self.end = int(ends[first + fit - 1])
                position += take
                first += fit
                continue
            if self._tokens:  # the next document does not fit: it starts a new shard
                self._close(whole=True)
                continue
            # a document longer than a whole shard: a full shard of it, the rest goes on
            self._write(ids[position : position + self.limit])
            position += self.limit
            lengths = lengths.copy()
            lengths[first] -= self.limit
            self._close(whole=False)

    def _write(self, ids):
        data = memoryview(np.ascontiguousarray(ids)).cast("B")
        with self._named_errors():
            self._file.write(data)
        self._sha.update(data)
        self._tokens += len(ids)

    @contextlib.contextmanager
    def _named_errors(self):
        # a full disk says "[Errno 28] No space left on device" without naming a file
        try:
            yield
        except OSError as error:
            if error.filename is not None:
                raise
            raise OSError(error.errno, error.strerror, str(self._temporary)) from None

    def _close(self, *, whole):
        with self._named_errors():
            self._file.close()
        os.chmod(self._temporary, FILE_MODE)
        os.replace(self._temporary, self._final)
        shard = Shard(
            self.split,
            len(self.shards),
            self._final.name,
            self._tokens,
            self._documents,
            self.documents_done,
            self._characters,
            self._bytes,
            self._sha.hexdigest(),
            self.end,
            whole,
        )
        self.documents_done += self._documents
        self.shards.append(shard)
        if self.on_shard is not None:
            self.on_shard(shard)
        self._open()

    def finish(self):
        """Close the last shard (written even when empty if it is the split's only one)."""
        if self._tokens or self._documents or not self.shards:
            self._close(whole=True)
        self.discard()
        return self.shards

    def discard(self):
        """Drop the shard being written (an interrupted run)."""
        if self._file is not None:
            self._file.close()
            self._temporary.unlink(missing_ok=True)
            self._file = None


# -- the run folder ---------------------------------------------------------------------------


def record_shard(folder, shard):
    """Append ``shard`` to the run's log (after its file is in place)."""
    with open(Path(folder) / LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps(asdict(shard)) + "\n")
        log.flush()
        os.fsync(log.fileno())


def resume_shards(folder, dtype):
    """``{split: [Shard]}``: the recorded shards that a resumed run keeps.

    A shard is kept when its file has the recorded size and SHA-256, every earlier shard of its
    split is kept, and (for the last one) it ends at a document boundary. Every other file of
    the folder is removed, and the log rewritten to the kept shards.
    """
    folder = Path(folder)
    itemsize = np.dtype(dtype).itemsize
    kept = {}
    try:
        lines = (folder / LOG).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    broken = set()
    for line in lines:
        try:
            shard = Shard(**json.loads(line))
        except (ValueError, TypeError):
            break  # a line cut by the kill: nothing after it was recorded either
        have = kept.setdefault(shard.split, [])
        if shard.split in broken or shard.index != len(have) or not _intact(folder / shard.file, shard, itemsize):
            broken.add(shard.split)
            continue
        have.append(shard)
    kept = {split: resumable(shards) for split, shards in kept.items()}
    names = {s.file for shards in kept.values() for s in shards} | {LOG, RUN}
    for path in folder.iterdir():
        if path.name not in names:
            path.unlink()
    text = "".join(json.dumps(asdict(s)) + "\n" for shards in kept.values() for s in shards)
    write_text_atomic(folder / LOG, text)
    return {split: shards for split, shards in kept.items() if shards}


def resumable(shards):
    """The first of one split's ``shards`` that a resumed run can go on from: up to the last
    that ends at a document boundary (a document cut across shards is encoded again whole)."""
    count = len(shards)
    while count and not shards[count - 1].whole:
        count -= 1
    return shards[:count]


def _intact(path, shard, itemsize):
    try:
        if path.stat().st_size != shard.tokens * itemsize:
            return False
    except FileNotFoundError:
        return False
    return file_sha256(path) == shard.sha256


# -- reading back -----------------------------------------------------------------------------


def read_meta(out):
    path = Path(out) / "meta.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PreparedDataError(
            f"{path}: no such file; {str(out)!r} is not a finished encode-corpus output (an interrupted run has no meta.json)"
        ) from None
    except (ValueError, UnicodeDecodeError) as error:
        raise PreparedDataError(f"{path}: not valid JSON ({error}); encode the corpus again") from None
    if not isinstance(meta, dict) or meta.get("format") != META_FORMAT:
        raise PreparedDataError(
            f"{path}: not written by encode-corpus (format {meta.get('format') if isinstance(meta, dict) else None!r}, expected {META_FORMAT!r})"
        )
    return meta


def open_shards(out, split="train", tokenizer=None):
    """The shards of ``split`` in ``out`` as read-only ``np.memmap`` arrays, in order.

    ``tokenizer``: when given, its fingerprint must be the one the shards were encoded with
    (``PreparedDataError`` otherwise: equal vocabulary sizes do not make equal ids).

    Example:
        >>> [train] = open_shards("out", "train", tokenizer=bytepair.load("gpt2"))  # doctest: +SKIP
        >>> train.dtype  # doctest: +SKIP
        dtype('uint16')
    """
    out = Path(out)
    meta = read_meta(out)
    if tokenizer is not None and tokenizer.fingerprint != meta["fingerprint"]:
        raise PreparedDataError(
            f"{out}: encoded with the tokenizer whose fingerprint is {meta['fingerprint']!r} "
            f"({meta.get('tokenizer')!r}), but the tokenizer given has fingerprint "
            f"{tokenizer.fingerprint!r}; use the tokenizer the shards were encoded with, or encode again"
        )
    if split not in meta["splits"]:
        raise PreparedDataError(f"{out}: no split {split!r} (it has {', '.join(map(repr, meta['splits']))})")
    dtype = np.dtype(meta["dtype"]).newbyteorder("<")
    arrays = []
    for shard in meta["splits"][split]["shards"]:
        path = out / shard["file"]
        size = path.stat().st_size if path.exists() else None
        if size != shard["tokens"] * dtype.itemsize:
            raise PreparedDataError(
                f"{path}: {size} bytes, but meta.json says {shard['tokens']} tokens of {dtype.itemsize} bytes; the folder is incomplete or edited, encode again"
            )
        arrays.append(np.memmap(path, dtype=dtype, mode="r") if size else np.zeros(0, dtype=dtype))
    return arrays
