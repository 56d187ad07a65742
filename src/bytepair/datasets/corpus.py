"""``encode_corpus``: any corpus, any tokenizer, streamed into token shards with a ``meta.json``.

The pipeline, three stages on three threads so that the cores never wait for the disk::

    1. read   (a thread)   documents of each input in order (``documents.read_sized_documents``),
                           gathered into chunks of about ``chunk_bytes`` of text, each chunk's
                           documents sent to train or val (``Placement``);
    2. encode (the caller) ``encode_documents``: one ``Tokenizer.encode_batch_to_array`` per
                           chunk on every core (the engine releases the GIL), end-of-text id
                           after each document;
    3. write  (a thread)   ``shards.ShardWriter``: ids appended to each split's shards, each
                           complete shard renamed into place and recorded; ``meta.json`` last.

At most two chunks wait between stages, so memory is bounded by the chunk size whatever the
corpus size (a document is read whole: one 1 GB text file is 1 GB of memory). The run is
built in ``.OUT.partial`` and switched into place at the end (``shards.py``); ``resume=True``
continues an interrupted run after its last complete shard, with the same bytes as an
uninterrupted run. SIGTERM stops a run as Ctrl-C does.

This module does not parse files (``documents.py``) or know the shard file format (``shards.py``).

Example:
    >>> meta = encode_corpus(["wiki.jsonl"], "gpt2", "out", val_fraction=0.01)  # doctest: +SKIP
    >>> meta["splits"]["train"]["shards"][0]["file"], meta["eot"]               # doctest: +SKIP
    ('train.bin', '<|endoftext|>')
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import random
import re
import sys
import threading
import time
from array import array
from pathlib import Path

import numpy as np

from bytepair.errors import BadDocumentError, DatasetError, DocumentError, PreparedDataError, UsageError, own_cause
from bytepair.normalize import normalize

from .._io import progress_shown, write_text_atomic
from . import shards as _shards
from .documents import (
    ReadStats,
    check_read_options,
    check_readers,
    compiled_split_on,
    find_inputs,
    read_documents,
    read_sized_documents,
)
from .files import (
    FolderLock,
    held_interrupts,
    remove_stale,
    sibling,
    sigterm_as_interrupt,
    switch_folder,
)

# End-of-text tokens of the published vocabularies, tried in order for eot="auto": GPT-2, r50k,
# p50k, cl100k and o200k use <|endoftext|>; Llama 3 uses <|end_of_text|> (<|eot_id|> ends a
# chat turn, not a document).
EOT_CANDIDATES = ("<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>")
# Text per encode_batch call: large enough to keep 16+ threads busy on one call, small enough
# that two chunks in flight stay a few tens of MB.
CHUNK_BYTES = 8 << 20
# The first chunk holds this much text, each next one twice as much up to chunk_bytes: the
# encoder starts as soon as a little is read instead of idling while a whole chunk is read
# (measured on 20 MB of WikiText-2: the first encode started 0.13 s into the run with 8 MB
# chunks from the start, 0.006 s with this ramp).
FIRST_CHUNK_BYTES = 1 << 18
SPLITS = ("train", "val")
_CHOOSER_BLOCK = 1 << 16


def encode_corpus(
    inputs,
    tokenizer,
    out,
    *,
    vocab_dir=None,
    text_field="text",
    split_on=None,
    eot="auto",
    allowed_special=(),
    val_fraction=None,
    val_documents=None,
    seed=0,
    shard_tokens=None,
    resume=False,
    skip_bad=False,
    num_threads=None,
    chunk_bytes=CHUNK_BYTES,
    progress=None,
    log=print,
):
    """Encode the documents of ``inputs`` with ``tokenizer`` into shards in ``out``; return the
    metadata written to ``out/meta.json``.

    - ``inputs``: files, folders, globs, ``"-"`` (see ``documents.py``); ``text_field`` and
      ``split_on`` say where the documents are.
    - ``tokenizer``: a ``Tokenizer``, or anything ``bytepair.load`` takes (a published name,
      found in ``vocab_dir`` / ``$BYTEPAIR_VOCAB_DIR`` / the cache, or a file).
    - ``eot``: the special token after every document; ``"auto"``: the tokenizer's end-of-text
      token if it has one; ``None``/``"none"``: nothing between documents.
    - ``allowed_special``: special tokens whose strings in a document become their ids (a set
      or ``"all"``); the others are encoded as ordinary text and counted in the metadata.
    - ``val_fraction`` (each document goes to val with this probability) or ``val_documents``
      (exactly this many, drawn among all; reads the inputs twice), with ``seed``.
    - ``shard_tokens``: at most this many tokens per shard; default one file per split.
    - ``resume``: continue an interrupted run of the same command (or one stopped by a bad
      document, with ``skip_bad`` now on); ``skip_bad``: skip bad documents (counted) instead of
      stopping at the first.

    Raises ``UsageError`` for bad options, ``DocumentError`` for a bad document (file and line),
    ``DatasetError`` when the inputs hold no document or a split gets none (nothing is written),
    ``MissingDependencyError`` when an input needs pyarrow or zstandard.
    """
    return run_encoding(
        _Pipeline,
        inputs,
        tokenizer,
        out,
        vocab_dir=vocab_dir,
        text_field=text_field,
        split_on=split_on,
        eot=eot,
        allowed_special=allowed_special,
        val_fraction=val_fraction,
        val_documents=val_documents,
        seed=seed,
        shard_tokens=shard_tokens,
        resume=resume,
        skip_bad=skip_bad,
        num_threads=num_threads,
        chunk_bytes=chunk_bytes,
        progress=progress,
        log=log,
    )


def run_encoding(
    make_pipeline,
    inputs,
    tokenizer,
    out,
    *,
    vocab_dir,
    text_field,
    split_on,
    eot,
    allowed_special,
    val_fraction,
    val_documents,
    seed,
    shard_tokens,
    resume,
    skip_bad,
    num_threads,
    chunk_bytes,
    progress,
    log,
):
    """``encode_corpus`` with the read and encode stages of ``make_pipeline`` (called with the
    arguments of ``_Pipeline``): everything else (options, resume, shard writers, split chooser,
    ``meta.json``) is shared, so another pipeline that gives the same ids in the same order
    writes the same bytes (``bytepair.distributed`` runs the stages on Ray).
    """
    started = time.perf_counter()
    tokenizer, name = resolve_tokenizer(tokenizer, vocab_dir)
    eot_token, eot_id = end_of_text(tokenizer, eot)
    allowed = _allowed(tokenizer, allowed_special)
    _check_options(val_fraction, val_documents, seed, shard_tokens, num_threads, chunk_bytes)
    sources = _outside(find_inputs(inputs), out)
    check_readers(sources)
    compiled_split_on(split_on)  # a bad regex is refused before any work
    check_read_options(sources, text_field=text_field, split_on=split_on)
    if any(s.path == "-" for s in sources) and (val_documents is not None or resume):
        raise UsageError(
            "standard input can be read only once: use val_fraction instead of val_documents, and no resume"
        )
    out = Path(out)
    if out.is_symlink():  # written through: the folder it points to is replaced, staged beside it
        out = Path(os.path.realpath(out))
    _check_replaceable(out)
    read_options = {"text_field": text_field, "split_on": split_on, "skip_bad": skip_bad}
    options = {
        **read_options,
        "split_on": getattr(split_on, "pattern", split_on),
        "eot": eot_token,
        "allowed_special": sorted(allowed),
        "val_fraction": val_fraction,
        "val_documents": val_documents,
        "seed": seed,
        "shard_tokens": shard_tokens,
    }
    dtype = _shards.array_dtype(tokenizer.vocab_size)
    fingerprint = tokenizer.fingerprint  # computed once: it hashes the whole vocabulary
    run = {"fingerprint": fingerprint, "inputs": [s.describe() for s in sources], "options": options}
    threads = num_threads or os.cpu_count() or 1
    read_options["check"] = MissingCharacters.of(tokenizer, allowed)  # after `options`: not a recorded option

    with FolderLock(out), sigterm_as_interrupt():
        # counted before the staging folder exists: a bad document found here leaves nothing
        total = count_documents(sources, **read_options) if val_documents is not None else None
        partial = sibling(out, "partial")
        done = _start(partial, out, run, resume, dtype, log)
        chooser = SplitChooser(val_fraction=val_fraction, val_documents=val_documents, seed=seed, total=total)
        splits = SPLITS if chooser.has_val else SPLITS[:1]
        writers = {
            s: _shards.ShardWriter(
                partial,
                s,
                dtype,
                shard_tokens,
                start=done.get(s, ()),
                on_shard=lambda shard: _shards.record_shard(partial, shard),
            )
            for s in splits
        }
        pipeline = make_pipeline(
            sources, read_options, chooser, tokenizer, allowed, eot_id, writers, threads, chunk_bytes, progress
        )
        try:
            pipeline.run()
            for writer in writers.values():
                writer.finish()
        except BaseException as error:
            for writer in writers.values():
                writer.discard()
            kept = sum(len(_shards.resumable(w.shards)) for w in writers.values())
            if kept == 0 or any(s.path == "-" for s in sources):
                remove_stale(out)  # nothing to resume from (standard input is not read twice)
            else:
                # a note, not a log line: it comes after the error it follows from (the CLI
                # prints it on the error's line or the next; a traceback shows it last)
                (own_cause(error) or error).add_note(_kept_after(error, kept, partial))
            raise
        empty = [split for split, writer in writers.items() if writer.documents_done == 0]
        if empty:  # an empty train.bin (or val.bin) only fails later, in the training loop
            remove_stale(out)  # nothing to resume: the same command finds no documents again
            raise DatasetError(_nothing_for(empty[0], pipeline, sources, options))
        meta = _meta(name, fingerprint, tokenizer, dtype, eot_token, eot_id, writers, pipeline, sources, options)
        text = json.dumps(meta, indent=2, ensure_ascii=False) + "\n"
        write_text_atomic(partial / "meta.json", text)
        for leftover in (_shards.LOG, _shards.RUN):
            (partial / leftover).unlink(missing_ok=True)
        with held_interrupts():
            switch_folder(partial, out)
    if log is not None:
        for line in summary(meta, pipeline, time.perf_counter() - started, out):
            log(line)
    return meta


# -- the parts ----------------------------------------------------------------------------------


def resolve_tokenizer(tokenizer, vocab_dir=None):
    """``(Tokenizer, name)`` from a tokenizer or anything ``bytepair.load`` takes."""
    if hasattr(tokenizer, "encode_batch"):
        return tokenizer, getattr(tokenizer, "name", None)
    import bytepair
    from bytepair.formats import is_tokenizer_folder

    spec = str(tokenizer)
    if Path(spec).is_file() or is_tokenizer_folder(spec):
        loaded = bytepair.load(spec)
        return loaded, getattr(loaded, "name", None) or Path(spec).name
    if Path(spec).is_dir():
        raise UsageError(
            f"tokenizer {spec!r} is a folder without a tokenizer.json; give a tokenizer file or folder, or a "
            "published name (gpt2, cl100k_base, o200k_base, llama3, ...) with --vocab-dir for the folder"
        )
    loaded = bytepair.load(spec, path=vocab_dir)
    return loaded, getattr(loaded, "name", None) or spec


def end_of_text(tokenizer, eot="auto"):
    """``(token, id)`` of the token put after each document, or ``(None, None)``.

    Example:
        >>> end_of_text(bytepair.load("gpt2"))  # doctest: +SKIP
        ('<|endoftext|>', 50256)
    """
    specials = tokenizer.special_tokens
    if eot is None or eot == "none":
        return None, None
    if eot == "auto":
        for token in EOT_CANDIDATES:
            if token in specials:
                return token, specials[token]
        return None, None
    if eot not in specials:
        shown = ", ".join(map(repr, sorted(specials))) or "none"
        raise UsageError(
            f"--eot {eot!r} is not a special token of this tokenizer (its special tokens: {shown}); choose one of them, or 'none'"
        )
    return eot, specials[eot]


def _allowed(tokenizer, allowed_special):
    specials = tokenizer.special_tokens
    if allowed_special == "all":
        return frozenset(specials)
    if isinstance(allowed_special, str):
        allowed_special = [t for t in allowed_special.split(",") if t]
    unknown = sorted(set(allowed_special) - set(specials))
    if unknown:
        raise UsageError(
            f"--allowed-special names {unknown!r}, which are not special tokens of this tokenizer (it has {sorted(specials)!r})"
        )
    return frozenset(allowed_special)


class MissingCharacters:
    """The document check (``read_documents``'s ``check``) of a character-level tokenizer
    without byte fallback: a document holding characters outside its base vocabulary is bad
    when it is read, so it is named by file and line, or skipped with ``skip_bad`` on every
    pass and on resume alike. (The encoder refuses a whole chunk and names no document.)

    As encoding: the text normalized, then the allowed special tokens' strings left out.
    ASCII text is checked by ``bytes.translate`` (3 ms for WikiText-2 train), other text by a
    character class (``re``: 54 ms; the ``regex`` module took 240).

    Example:
        >>> from bytepair import Tokenizer
        >>> check = MissingCharacters.of(Tokenizer(mode="char", base_tokens="ab "), frozenset())
        >>> check("a ba") is None, check("a bc")[:60]
        (True, "characters missing from the tokenizer's base vocabulary: 'c'")
    """

    def __init__(self, tokenizer, allowed):
        alphabet = sorted(set(tokenizer.base_tokens))
        self.ascii_known = bytes(ord(c) for c in alphabet if c.isascii())
        self.unknown = re.compile("[^" + "".join(re.escape(c) for c in alphabet) + "]")
        self.normalization = tokenizer.normalization
        self.specials = special_regex(tuple(allowed))

    @classmethod
    def of(cls, tokenizer, allowed):
        """The check ``tokenizer`` needs, or None (byte level, byte fallback, another library)."""
        if getattr(tokenizer, "mode", None) != "char" or getattr(tokenizer, "byte_fallback", True):
            return None
        return cls(tokenizer, allowed)

    def __call__(self, text):
        if text.isascii():  # which normalization leaves as it is
            if not text.encode("ascii").translate(None, self.ascii_known):
                return None
        else:
            text = normalize(text, self.normalization)
        if self.unknown.search(text) is None:
            return None
        segments = self.specials.split(text) if self.specials is not None else [text]
        missing = sorted({c for segment in segments for c in self.unknown.findall(segment)})
        if not missing:
            return None
        shown = ", ".join(map(repr, missing[:20])) + (f" and {len(missing) - 20} more" if len(missing) > 20 else "")
        return (
            f"characters missing from the tokenizer's base vocabulary: {shown} (a character-level "
            "tokenizer without byte fallback; train it with base_text that holds them, or with byte_fallback=True)"
        )


def _check_options(val_fraction, val_documents, seed, shard_tokens, num_threads, chunk_bytes):
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:  # numpy's generators take these
        raise UsageError(f"--seed must be an integer of 0 or more, not {seed!r}")
    if val_fraction is not None and val_documents is not None:
        raise UsageError("give --val-fraction or --val-documents, not both")
    if val_fraction is not None and not (0 <= val_fraction < 1):
        raise UsageError(f"--val-fraction must be at least 0 and below 1, not {val_fraction!r}")
    for flag, value in (
        ("--val-documents", val_documents),
        ("--shard-tokens", shard_tokens),
        ("--num-threads", num_threads),
        ("chunk_bytes", chunk_bytes),
    ):
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < (0 if flag == "--val-documents" else 1)
        ):
            raise UsageError(f"{flag} must be a positive integer, not {value!r}")


def _outside(sources, out):
    """``sources`` without the files of the output folder: with ``-o`` inside an input folder
    (``data/ -o data/shards``), a second run would read the first one's ``meta.json``."""
    folder = Path(out).resolve()
    kept = [s for s in sources if s.path == "-" or folder not in Path(s.path).resolve().parents]
    if sources and not kept:
        raise UsageError(f"every input is inside the output folder {str(out)!r}; give the corpus files")
    return kept


def _check_replaceable(out):
    """Refuse to replace a folder that is not an earlier output (it may hold someone's files)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"output {str(out)!r} is a file; give a folder")
    if out.is_dir() and any(out.iterdir()):
        try:
            _shards.read_meta(out)
        except PreparedDataError:
            raise UsageError(
                f"output folder {str(out)!r} is not empty and is not an earlier encode-corpus output; choose another folder or empty it"
            ) from None


def _start(partial, out, run, resume, dtype, log):
    """Prepare ``partial`` for this run; the shards kept from an interrupted one by split."""
    if resume and (partial / _shards.RUN).is_file():
        try:
            before = json.loads((partial / _shards.RUN).read_text(encoding="utf-8"))
        except ValueError:
            before = None
        if before != run and _resumable_as(before) != run:
            changed = [
                k
                for k in ("fingerprint", "inputs", "options")
                if not isinstance(before, dict) or before.get(k) != run[k]
            ]
            raise UsageError(
                f"the interrupted run in {partial} was asked for something else (its {', '.join(changed)} differ); "
                "run the same command as before with --resume, or run without --resume to start over"
            )
        remove_stale(out, keep=[partial])
        if before != run:  # resumed with skip_bad now on: what it resumes from is recorded
            write_text_atomic(partial / _shards.RUN, json.dumps(run, indent=1) + "\n")
        done = _shards.resume_shards(partial, dtype)
        if log is not None:
            log(f"resuming: {sum(len(v) for v in done.values())} complete shard(s) kept in {partial}")
        return done
    if resume and log is not None:
        log(f"nothing to resume in {partial}; starting from the beginning")
    if not resume and (partial / _shards.RUN).is_file() and log is not None:
        log(f"removing the interrupted run in {partial} (pass --resume to continue it instead)")
    remove_stale(out)
    partial.mkdir(parents=True)
    text = json.dumps(run, indent=1) + "\n"
    write_text_atomic(partial / _shards.RUN, text)
    return {}


def _resumable_as(before):
    """The recorded run ``before`` as a run may resume it: one that stopped at a bad document
    (``skip_bad`` off) may go on with ``skip_bad`` on, since every document its kept shards hold
    came before the bad one, and the documents are read again from the start either way (so the
    skipped ones are all counted). The other way round is refused: documents skipped before
    would go uncounted by a run that says it skips none."""
    options = before.get("options") if isinstance(before, dict) else None
    if isinstance(options, dict) and options.get("skip_bad") is False:
        return {**before, "options": {**options, "skip_bad": True}}
    return before


def _kept_after(error, kept, partial):
    """What a failed run that kept shards leaves in ``partial`` and how to go on from it: one line."""
    if isinstance(error, KeyboardInterrupt):
        return (
            f"{kept} complete shard(s) kept in {partial}; run the same command with --resume (resume=True) to continue"
        )
    cause = own_cause(error)  # a worker's comes wrapped (Ray)
    if isinstance(cause, DocumentError) and not isinstance(cause, BadDocumentError):
        # a file that does not decompress or parse: fixing it changes the inputs, which --resume refuses
        return f"{kept} complete shard(s) kept in {partial}; fix the input and run again without --resume to start over"
    if isinstance(cause, BadDocumentError):
        return (
            f"{kept} complete shard(s) kept in {partial}: add --resume --skip-bad (resume=True, skip_bad=True) "
            "to go on past bad documents from there, or fix the input and run again without --resume to start over"
        )
    return f"{kept} complete shard(s) kept in {partial}; once the cause is fixed, run the same command with --resume to continue"


def _nothing_for(split, pipeline, sources, options):
    """Why ``split`` got no document (or the inputs hold none), and what to change: one sentence."""
    if pipeline.documents == 0:
        names = [s.path if s.path != "-" else "standard input" for s in sources]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more input(s)" if len(names) > 3 else "")
        stats, found = pipeline.stats, []
        if stats.empty:
            found.append(f"{stats.empty:,} empty document(s) dropped")
        if stats.skipped:
            reasons = ", ".join(f"{count:,} {reason}" for reason, count in sorted(stats.skipped.items()))
            if "missing field" in stats.skipped:
                reasons += f"; is --text-field {options['text_field']!r} the right field?"
            found.append(f"{sum(stats.skipped.values()):,} bad document(s) skipped ({reasons})")
        return (
            f"no documents to encode in {shown}: {', '.join(found) or 'none found'}; "
            "give inputs that hold text (nothing was written)"
        )
    how = (
        f"--val-fraction {options['val_fraction']}"
        if options["val_fraction"] is not None
        else f"--val-documents {options['val_documents']}"
    )
    fix = (
        "a larger --val-fraction, or --val-documents N for exactly N validation documents"
        if split == "val"
        else "a smaller --val-fraction or --val-documents"
    )
    return (
        f"the {split} split got none of the {pipeline.documents:,} documents ({how}); give {fix} (nothing was written)"
    )


class SplitChooser:
    """Which split each document goes to, by its index over all documents in reading order.

    - ``val_fraction``: document ``i`` goes to val when the ``i``-th draw of a generator seeded
      with ``seed`` is below the fraction (streaming: no need to know the total);
    - ``val_documents`` with ``total``: exactly that many, drawn without replacement.

    Example:
        >>> chooser = SplitChooser(val_fraction=0.5, seed=1)
        >>> [chooser(i) for i in range(8)] == [chooser(i) for i in range(8)]
        True
    """

    def __init__(self, *, val_fraction=None, val_documents=None, seed=0, total=None):
        self.fraction, self.seed = val_fraction or 0.0, seed
        self.chosen = None
        if val_documents is not None:
            if val_documents > total:
                raise UsageError(f"--val-documents {val_documents} is more than the {total} documents of the corpus")
            self.chosen = frozenset(random.Random(seed).sample(range(total), val_documents))
        self.has_val = bool(self.fraction) or bool(self.chosen)
        self._block, self._draws = None, None

    def __call__(self, index):
        """0 for train, 1 for val."""
        if self.chosen is not None:
            return 1 if index in self.chosen else 0
        if not self.fraction:
            return 0
        block = index // _CHOOSER_BLOCK
        if block != self._block:
            # One generator per block of indices: document i's draw does not depend on how the
            # documents were read or where a resumed run started.
            self._draws = (
                np.random.Generator(np.random.PCG64([self.seed, block])).random(_CHOOSER_BLOCK) < self.fraction
            )
            self._block = block
        return int(self._draws[index % _CHOOSER_BLOCK])

    def splits(self, start, count):
        """``[self(i) for i in range(start, start + count)]`` as an int8 array, without a Python
        call per document."""
        if self.chosen is not None:
            return np.fromiter((i in self.chosen for i in range(start, start + count)), dtype=np.int8, count=count)
        found = np.zeros(count, dtype=np.int8)
        if not self.fraction:
            return found
        done = 0
        while done < count:
            index = start + done
            block, offset = divmod(index, _CHOOSER_BLOCK)
            if block != self._block:
                self._draws = (
                    np.random.Generator(np.random.PCG64([self.seed, block])).random(_CHOOSER_BLOCK) < self.fraction
                )
                self._block = block
            take = min(count - done, _CHOOSER_BLOCK - offset)
            found[done : done + take] = self._draws[offset : offset + take]
            done += take
        return found


class Placement:
    """Where consecutive documents go, in reading order: their split (``SplitChooser``), their
    index + 1 over all documents, and whether a shard kept from an interrupted run already holds
    them (the first ``documents_done`` documents of each split's writer).

    Example:
        >>> placement = Placement(SplitChooser(val_fraction=0.5, seed=1), {})
        >>> splits, ends, keep = placement.place(4)
        >>> ends.tolist(), bool(keep.all()), placement.documents
        ([1, 2, 3, 4], True, 4)
    """

    def __init__(self, chooser, writers):
        self.chooser = chooser
        self.documents = 0  # every document placed, in every split, including those resumed
        self._left = [writers[s].documents_done if s in writers else 0 for s in SPLITS]  # still to skip

    def place(self, count):
        """``(splits, ends, keep)`` of the next ``count`` documents (int8, int64, bool arrays)."""
        splits = self.chooser.splits(self.documents, count)
        ends = np.arange(self.documents + 1, self.documents + count + 1, dtype=np.int64)
        self.documents += count
        keep = np.ones(count, dtype=bool)
        for split, left in enumerate(self._left):
            if left:
                mine = np.flatnonzero(splits == split)[:left]
                keep[mine] = False
                self._left[split] -= len(mine)
        return splits, ends, keep


def count_specials(finder, texts, counts):
    """Add to ``counts`` how often each match of ``finder`` (``special_regex``) occurs in ``texts``."""
    if finder is None:
        return
    for text in texts:
        # NOTE: a "<|" in text prefilter was tried: slower than the regex module's own
        # literal search (0.023 s against 0.009 s for 20 MB of WikiText-2).
        if finder.search(text):
            for token in finder.findall(text):
                counts[token] = counts.get(token, 0) + 1


def count_documents(sources, **read_options):
    """The number of documents ``read_documents`` yields over ``sources`` (a first pass)."""
    return sum(sum(1 for _ in read_documents(s, **read_options)) for s in sources)


def encode_documents(tokenizer, texts, *, eot_id=None, allowed_special=frozenset(), num_threads=None, dtype="uint32"):
    """The ids of ``texts``, each followed by ``eot_id`` (when not None), as one ``dtype`` array,
    and the token count of each document (eot included): the one encode step of ``encode_corpus``.

    Ordinary text never becomes Python ints: ``Tokenizer.encode_batch_to_array`` gives one flat
    array and the documents' offsets, and the eot ids are inserted into it (allowed special
    tokens are cut out first and their ids put between the ordinary segments' ids).
    Special-token strings that are not allowed are ordinary text (never refused, never dropped).

    Example:
        >>> ids, lengths = encode_documents(gpt2, ["hello world", "hi"], eot_id=50256)  # doctest: +SKIP
        >>> ids.tolist(), lengths.tolist()                                             # doctest: +SKIP
        ([31373, 995, 50256, 5303, 50256], [3, 2])
    """
    ids, offsets = tokenizer.encode_batch_to_array(
        texts, num_threads=num_threads, dtype=dtype, allowed_special=allowed_special, disallowed_special=()
    )
    return with_eot(ids, np.asarray(offsets, dtype=np.int64), eot_id)


def with_eot(ids, offsets, eot_id):
    """``(ids with eot_id after each document, lengths)`` from a flat array and its document
    offsets (``len(texts) + 1`` of them, the last one ``len(ids)``)."""
    lengths = np.diff(offsets)
    if eot_id is None:
        return ids, lengths
    return np.insert(ids, offsets[1:], np.asarray(eot_id, dtype=ids.dtype)), lengths + 1


def special_regex(tokens):
    """A regex that finds any of ``tokens`` (longest first), or None when there are none."""
    import regex

    if not tokens:
        return None
    return regex.compile("|".join(regex.escape(t) for t in sorted(tokens, key=lambda t: (-len(t), t))))


# -- the pipeline ---------------------------------------------------------------------------------


class _Chunk:
    """Consecutive documents gathered for one encode step: their texts and UTF-8 sizes as read,
    then (``place``) per document its split, characters and index + 1 over all documents."""

    __slots__ = ("bytes", "characters", "ends", "read_bytes", "splits", "texts")

    def __init__(self):
        self.texts, self.bytes, self.read_bytes = [], array("q"), 0
        self.splits = self.characters = self.ends = None

    def place(self, placement):
        """Fill in where each document goes; drop those a kept shard already holds."""
        splits, ends, keep = placement.place(len(self.texts))
        nbytes = np.frombuffer(self.bytes, dtype=np.int64)
        if not keep.all():
            self.texts = list(itertools.compress(self.texts, keep))
            splits, ends, nbytes = splits[keep], ends[keep], nbytes[keep]
            self.read_bytes = int(nbytes.sum())
        self.splits, self.ends, self.bytes = splits, ends, nbytes
        self.characters = np.fromiter(map(len, self.texts), dtype=np.int64, count=len(self.texts))


_END = object()


class PipelineBase:
    """What ``run_encoding`` reads from a pipeline once it has run, and what every pipeline is
    made with (its arguments are ``make_pipeline``'s)."""

    def __init__(
        self, sources, read_options, chooser, tokenizer, allowed, eot_id, writers, threads, chunk_bytes, progress
    ):
        self.sources, self.read_options = sources, read_options
        self.tokenizer, self.allowed, self.eot_id, self.writers = tokenizer, allowed, eot_id, writers
        self.dtype = next(iter(writers.values())).dtype.name  # "uint16" or "uint32", as the encoders take it
        self.threads, self.chunk_bytes, self.progress = threads, chunk_bytes, progress
        self.placement = Placement(chooser, writers)
        self.stats = ReadStats()
        self.special_counts = {}
        self.encoded_documents = self.encoded_tokens = self.encoded_bytes = 0

    @property
    def documents(self):
        """Every document read, in every split, including those resumed."""
        return self.placement.documents


class _Pipeline(PipelineBase):
    """Reader thread -> encode (calling thread) -> writer thread, with bounded queues."""

    def __init__(self, *args):
        super().__init__(*args)
        self._stop = threading.Event()
        self._errors = []

    def run(self):
        to_encode, to_write = queue.Queue(maxsize=2), queue.Queue(maxsize=2)
        reader = threading.Thread(target=self._guard, args=(self._read, to_encode), name="bytepair-read", daemon=True)
        writer = threading.Thread(target=self._guard, args=(self._write, to_write), name="bytepair-write", daemon=True)
        bar = _progress_bar(self.progress)
        reader.start()
        writer.start()
        try:
            while True:
                chunk = self._get(to_encode)
                if chunk is _END:
                    break
                ids, lengths = encode_documents(
                    self.tokenizer,
                    chunk.texts,
                    eot_id=self.eot_id,
                    allowed_special=self.allowed,
                    num_threads=self.threads,
                    dtype=self.dtype,
                )
                self.encoded_documents += len(chunk.texts)
                chunk.texts = None  # encoded: the text need not wait for the writer
                self._put(to_write, (chunk, ids, lengths))
                self.encoded_tokens += len(ids)
                self.encoded_bytes += chunk.read_bytes
                if bar is not None:
                    bar.update(chunk.read_bytes)
                    bar.set_postfix(
                        docs=f"{self.encoded_documents:,}", tokens=f"{self.encoded_tokens:,}", refresh=False
                    )
            self._put(to_write, _END)
            writer.join()
            self._raise_errors()
        finally:
            self._stop.set()
            reader.join()
            writer.join()
            if bar is not None:
                bar.close()

    def _guard(self, work, channel):
        try:
            work(channel)
        except BaseException as error:  # noqa: BLE001 - handed to the calling thread, which raises it
            self._errors.append(error)
            self._stop.set()

    def _raise_errors(self):
        if self._errors:
            raise self._errors[0]

    def _put(self, channel, item):
        while True:
            if self._stop.is_set():
                self._raise_errors()
                raise _Stopped
            try:
                channel.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def _get(self, channel):
        while True:
            if self._stop.is_set() and channel.empty():
                self._raise_errors()
                raise _Stopped
            try:
                return channel.get(timeout=0.1)
            except queue.Empty:
                continue

    def _read(self, channel):
        finder = special_regex(tuple(self.tokenizer.special_tokens))
        limit, chunk = min(FIRST_CHUNK_BYTES, self.chunk_bytes), _Chunk()
        for source in self.sources:
            for text, size in read_sized_documents(source, stats=self.stats, **self.read_options):
                chunk.texts.append(text)
                chunk.bytes.append(size)
                chunk.read_bytes += size
                if chunk.read_bytes >= limit:
                    self._send(channel, chunk, finder)
                    chunk, limit = _Chunk(), min(2 * limit, self.chunk_bytes)
        if chunk.texts:
            self._send(channel, chunk, finder)
        self._put(channel, _END)

    def _send(self, channel, chunk, finder):
        count_specials(finder, chunk.texts, self.special_counts)  # resumed documents are counted too
        chunk.place(self.placement)
        if chunk.texts:
            self._put(channel, chunk)

    def _write(self, channel):
        while True:
            item = self._get(channel)
            if item is _END:
                return
            chunk, ids, lengths = item
            write_documents(self.writers, ids, lengths, chunk.splits, chunk.characters, chunk.bytes, chunk.ends)


def write_documents(writers, ids, lengths, splits, characters, nbytes, ends):
    """Consecutive encoded documents to the shard writers of their splits: ``ids`` (each document's
    ids and end-of-text id, joined) and ``lengths`` as ``encode_documents`` gives them, and per document
    its split (0 train, 1 val), characters, bytes and index + 1 over all documents."""
    splits = np.asarray(splits, dtype=np.int8)
    characters = np.asarray(characters, dtype=np.int64)
    nbytes = np.asarray(nbytes, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    if not splits.any():
        writers[SPLITS[0]].add(ids, lengths, characters, nbytes, ends)
        return
    for number, name in enumerate(SPLITS):
        mine = splits == number
        if name in writers and mine.any():
            writers[name].add(ids[np.repeat(mine, lengths)], lengths[mine], characters[mine], nbytes[mine], ends[mine])


class _Stopped(Exception):
    """The other stage stopped; its error is raised instead."""


def _progress_bar(progress):
    if not progress_shown(progress):
        return None
    from tqdm import tqdm

    return tqdm(desc="encoding", unit="B", unit_scale=True, unit_divisor=1000, file=sys.stderr, dynamic_ncols=True)


# -- metadata and report ----------------------------------------------------------------------------


def _meta(name, fingerprint, tokenizer, dtype, eot_token, eot_id, writers, pipeline, sources, options):
    from bytepair import __version__

    splits = {}
    for split, writer in writers.items():
        shards = writer.shards
        splits[split] = {
            "tokens": sum(s.tokens for s in shards),
            "documents": sum(s.documents for s in shards),
            "characters": sum(s.characters for s in shards),
            "bytes": sum(s.bytes for s in shards),
            "shards": [s.public() for s in shards],
        }
    allowed = set(options["allowed_special"])
    return {
        "format": _shards.META_FORMAT,
        "tokenizer": name,
        "fingerprint": fingerprint,
        "vocab_size": tokenizer.vocab_size,
        "dtype": dtype,
        "byte_order": "little",
        "eot": eot_token,
        "eot_id": eot_id,
        "splits": splits,
        "order": (
            "inputs in the order listed (folders and globs sorted by path), documents in file order; "
            "each split keeps that order; every document is followed by eot_id when it is not null"
        ),
        "documents": {
            "total": pipeline.documents,
            "empty_dropped": pipeline.stats.empty,
            "bad_skipped": dict(sorted(pipeline.stats.skipped.items())),
            "special_strings_as_text": {t: c for t, c in sorted(pipeline.special_counts.items()) if t not in allowed},
            "special_strings_as_special": {t: c for t, c in sorted(pipeline.special_counts.items()) if t in allowed},
        },
        "inputs": [s.describe() for s in sources],
        "options": options,
        "bytepair_version": __version__,
    }


def summary(meta, pipeline, seconds, out):
    """The report lines: totals, speed, and what was skipped or encoded as text."""
    tokens = sum(s["tokens"] for s in meta["splits"].values())
    text_bytes = sum(s["bytes"] for s in meta["splits"].values())
    parts = ", ".join(
        f"{name} {s['documents']:,} documents {s['tokens']:,} tokens in {len(s['shards'])} file(s)"
        for name, s in meta["splits"].items()
    )
    speed = pipeline.encoded_bytes / seconds / 1e6 if seconds else 0.0
    rate = pipeline.encoded_tokens / max(seconds, 1e-9)
    lines = [
        (
            f"encoded {meta['documents']['total']:,} documents ({text_bytes / 1e6:,.1f} MB) into {tokens:,} {meta['dtype']} tokens "
            f"in {seconds:.1f}s ({speed:,.1f} MB/s, {rate:,.0f} tokens/s): {parts}; wrote {out}"
        )
    ]
    documents = meta["documents"]
    if documents["bad_skipped"]:
        lines.append(
            "skipped bad documents: "
            + ", ".join(f"{count:,} {reason}" for reason, count in documents["bad_skipped"].items())
        )
    if documents["special_strings_as_text"]:
        shown = ", ".join(f"{t!r} x{c:,}" for t, c in documents["special_strings_as_text"].items())
        lines.append(
            f"special-token strings in the documents were encoded as ordinary text: {shown}; pass --allowed-special to encode them as special tokens"
        )
    if meta["eot"] is None:
        lines.append("no end-of-text token between documents (the tokenizer has none, or --eot none)")
    return lines
