"""Train and encode on a Ray cluster, with exactly the result of one machine.

When a corpus outgrows one machine, the two heavy loops run on Ray (Ray Core tasks for
counting, Ray Data for encoding); what makes the result depend on order stays on the driver:

``train``::

    1. count  (a Ray task per input)  read its documents (``datasets.documents``), normalize,
                                       cut at special tokens, pre-tokenize and count the unique
                                       pieces in order of first appearance (``train.count_pieces``)
    2. merge  (a tree of Ray tasks)    consecutive parts pairwise, ``PieceCounts.merged``: the
                                       earlier part's pieces, then the later part's new ones, so
                                       the root holds the corpus's first occurrences (the
                                       earliest-first tie-break of merges is kept)
    3. learn  (the driver)             ``train.learn``: the merges, on one machine

``encode_corpus``::

    1. read   (a Ray Data task per     each input's documents in file order, in chunks
               input)
    2. encode (the same task)          the worker process's encoder (the tokenizer shipped once
                                       through the object store, built once per process) encodes
                                       a chunk on its threads with ``datasets.corpus``'s encode
                                       step (``encode_documents``)
    3. write  (the driver)             chunks in order (``preserve_order``) into the same split
                                       chooser, shard writers and ``meta.json`` as
                                       ``datasets.encode_corpus``, which is why the shards are
                                       byte-identical to it

A worker that dies is retried by Ray (its task runs again); counting and encoding are deterministic, so a retried piece of work gives the
same result. Inputs must be readable at the same path from every node (a shared file system);
paths are made absolute before they are sent.

Memory on the driver: training holds the merged unique pieces and the merge tables built from
them, which follow the number of unique pieces, not the corpus size. Measured on WikiText-2
train (10.8 MB, 630 articles as documents): byte mode with cl100k gives 32,465 unique pieces
(words); char mode without a pattern makes each document one piece, so the driver holds every
distinct document: the whole corpus. Unique words grow far slower than
text (Heaps' law, about the square root: 100 GB of web text has some tens of millions of
distinct cl100k pieces, a few GB with their counts), so train at scale with a pattern.
Encoding keeps at most a few chunks (``chunk_bytes`` of text each) per task and on the driver.

Example:
    >>> from bytepair import distributed
    >>> tok = distributed.train(["shards/"], vocab_size=1000, mode="byte", pattern="cl100k")  # doctest: +SKIP
    >>> distributed.encode_corpus(["shards/"], tok, "out", shard_tokens=10**8)                # doctest: +SKIP

NOTE: this is the only module that imports Ray (``pip install 'bytepair[ray]'``); nothing
else in the package imports this module.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import os
import socket
import warnings
from pathlib import Path

import numpy as np

from .datasets import corpus as _corpus
from .datasets.documents import ReadStats, check_readers, find_inputs, read_documents, read_sized_documents
from .errors import MissingDependencyError, RayConnectionError, TrainingError, UsageError, own_cause
from .train import PieceCounts, check_options, count_pieces, learn

INSTALL = "pip install 'bytepair[ray]'"


def connect(ray_address=None, *, num_cpus=None):
    """The ``ray`` module, connected: to ``ray_address`` (``"auto"``: the cluster this machine
    belongs to; ``"ray://host:10001"``: a remote one), else to a Ray started here with
    ``num_cpus`` cores (default all). An existing connection is kept (``ray.shutdown()`` ends it).

    Ray's driver logger shows errors only: its warnings (token authentication chosen for a new
    Ray, ...) are about Ray's set-up, not this run; a Ray set up by the caller (``ray.init``
    first) keeps its own logging.
    """
    try:
        import ray
    except ImportError:
        raise MissingDependencyError(f"running on Ray needs the ray package: {INSTALL}") from None
    if ray.is_initialized():
        return ray
    local = ray_address in (None, "local")
    answered = False  # the address answered as Ray: what fails after that is Ray's own connection
    try:
        if not local:
            answered = _check_answers(ray_address)
        # Ray's warnings while it connects (a client time-out, ...) only repeat the error below
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            if local:
                # The workers of a Ray started here import the same bytepair as this process, installed or not.
                here = str(Path(__file__).resolve().parents[1])
                path = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)
                ray.init(
                    num_cpus=num_cpus,
                    include_dashboard=False,
                    logging_level="error",
                    runtime_env={"env_vars": {"PYTHONPATH": path}},
                )
            else:
                ray.init(address=ray_address, logging_level="error")
    except Exception as error:  # Ray raises ValueError, ConnectionError, RuntimeError or Exception
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:300]
        if local:
            raise RayConnectionError(f"could not start Ray on this machine ({reason})") from None
        # Ray 2.60's heads make an authentication token by default; a driver without
        # RAY_AUTH_MODE=token fails with "Failed to connect", the cause only in Ray's own log line
        token = (
            "; if the cluster uses token authentication, set RAY_AUTH_MODE=token"
            if answered and not os.environ.get("RAY_AUTH_MODE")
            else ""
        )
        raise RayConnectionError(
            f"could not connect to Ray at {ray_address!r} ({reason}); give 'auto' for the cluster this "
            f"machine belongs to, HOST:6379 for a cluster's head, or ray://HOST:10001 for a remote one{token}"
        ) from None
    for warning in shown:  # connected: they may matter
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return ray


def _check_answers(address, timeout=10, answer_timeout=5):
    """A cluster's own address (``HOST:PORT``, as ``ray start --head`` prints it, or
    ``ray://HOST:PORT``) must answer, and answer as Ray: where nothing listens, or another server
    does (a web server, SSH), ``ray.init`` retries for minutes (20 tries of about 35 s each,
    logging each; a Ray Client address 30 s). The head's GCS and its Ray Client server speak
    gRPC, HTTP/2 without TLS: they answer a client's connection preface with a SETTINGS frame,
    which a server of another protocol does not. True when it answered so, False when not asked
    (no HOST:PORT, or TLS)."""
    scheme, _, rest = address.rpartition("://")
    host, _, port = rest.rpartition(":")
    if scheme not in ("", "ray") or not host or not port.isdigit():
        return False  # "auto", another scheme, or no address at all: Ray answers at once or refuses it
    try:
        connection = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
    except OSError as error:
        raise ConnectionError(f"nothing answers at {host}:{port}: {error.strerror or error}") from None
    with connection:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
            return False  # a cluster with TLS (Ray's own switch) answers only a TLS handshake
        reply, ended = _http2_reply(connection, answer_timeout)
    if not _is_settings_frame(reply):
        if reply:
            line = reply.split(b"\n", 1)[0].strip()
            said = "with bytes that are not HTTP/2 (gRPC)"
            if line and all(32 <= byte < 127 for byte in line):
                said = repr(line.decode("ascii")[:80])
            ended = f"it answered {said}"
        raise ConnectionError(f"{host}:{port} did not answer as a Ray cluster: {ended}")
    return True


# An HTTP/2 client's connection preface (RFC 9113, 3.4): the magic string, then its SETTINGS
# frame (empty: 3-byte length 0, type 4, no flags, stream 0).
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def _http2_reply(connection, timeout):
    """What the server sends back to an HTTP/2 preface within ``timeout`` seconds (a frame header,
    a line of text, or what came before it stopped), and how it stopped if it did."""
    connection.settimeout(timeout)
    reply = b""
    try:
        connection.sendall(_HTTP2_PREFACE)
        while len(reply) < 9 or not (_is_settings_frame(reply) or b"\n" in reply or len(reply) >= 200):
            chunk = connection.recv(200 - len(reply))
            if not chunk:
                return reply, "it closed the connection without a word"
            reply += chunk
    except TimeoutError:
        return reply, f"it accepted the connection but sent nothing back within {timeout} s"
    except OSError as error:
        return reply, f"it dropped the connection ({error.strerror or error})"
    return reply, None


def _is_settings_frame(reply):
    return len(reply) >= 9 and reply[3] == 4 and reply[5:9] == bytes(4)


@contextlib.contextmanager
def _our_errors():
    """bytepair's own errors raised in a Ray worker (a bad document, a bad option) come out as
    themselves, with their one-line message, not wrapped in Ray's remote traceback, nor with
    the retry advice Ray Data appends to a message."""
    try:
        yield
    except Exception as error:
        cause = own_cause(error)
        if cause is None:
            raise
        if cause.args and isinstance(cause.args[0], str) and RAY_RETRY_NOTE in cause.args[0]:
            cause.args = (cause.args[0].split(RAY_RETRY_NOTE, 1)[0], *cause.args[1:])
        raise cause.with_traceback(None) from None


# What Ray Data appends to the message of an exception raised in a map function (ray.data's
# _annotate_exception_with_retry_context: "\nFailed to apply UDF transform after 1/1 attempts...").
RAY_RETRY_NOTE = "\nFailed to "


@contextlib.contextmanager
def _ray_data_console(level):
    """Ray Data's console handlers (not its log file's) at ``level`` while inside: a bad
    document is one line from bytepair, not also three tracebacks of it from Ray Data.
    (Ray Data sets up its handlers when ``ray.data`` is imported.)"""
    handlers = [h for h in logging.getLogger("ray.data").handlers if isinstance(h, logging.StreamHandler)]
    before = [h.level for h in handlers]
    for handler in handlers:
        handler.setLevel(level)
    try:
        yield
    finally:
        for handler, old in zip(handlers, before):
            handler.setLevel(old)


# -- training -------------------------------------------------------------------------------------


def train(
    inputs,
    *,
    vocab_size,
    mode="char",
    min_frequency=2,
    pattern=None,
    normalization=None,
    special_tokens=None,
    base_text=None,
    base_tokens=None,
    byte_fallback=False,
    text_field="text",
    split_on=None,
    skip_bad=False,
    threads_per_task=1,
    ray_address=None,
    verbose=False,
    progress=None,
):
    """``bytepair.train`` on the documents of ``inputs``, counted on Ray; the same tokenizer (same
    fingerprint) as ``bytepair.train`` on the same documents in the same order.

    - ``inputs``: files, folders, globs of .txt/.jsonl/.json/.parquet (optionally .gz/.zst), as in
      ``encode_corpus`` (one Ray task per file, so give many files for many workers); or a
      ``ray.data.Dataset`` whose ``text_field`` column holds the documents (one task per block).
    - ``text_field``, ``split_on``, ``skip_bad``: where the documents are (``read_documents``).
    - ``threads_per_task``: CPUs each counting task takes and counts on.
    - ``ray_address``: see ``connect``. The other options are ``bytepair.train``'s.

    Example:
        >>> tok = train(["wiki/*.jsonl"], vocab_size=1000, mode="byte", pattern="cl100k")  # doctest: +SKIP
    """
    check_options(
        mode=mode,
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        pattern=pattern,
        normalization=normalization,
        special_tokens=special_tokens,
        base_text=base_text,
        base_tokens=base_tokens,
        byte_fallback=byte_fallback,
        num_threads=threads_per_task,
    )
    counting = {
        "mode": mode,
        "pattern": pattern,
        "normalization": normalization,
        "special_tokens": special_tokens,
        "num_threads": threads_per_task,
    }
    dataset = _is_dataset(inputs)
    if not dataset:
        sources = _shared_inputs(inputs)
        read_options = {"text_field": text_field, "split_on": split_on, "skip_bad": skip_bad}
    ray = connect(ray_address)
    count = ray.remote(num_cpus=threads_per_task, max_retries=3)(_count_input)
    merge = ray.remote(num_cpus=1, max_retries=3)(_merge)
    if dataset:
        inputs = inputs.select_columns([text_field])
        inputs.context.execution_options.preserve_order = True  # blocks in dataset order
        with _our_errors():
            blocks = inputs.to_arrow_refs()
        parts = [count.remote(block, None, {"text_field": text_field}, counting) for block in blocks]
    else:
        parts = [count.remote(None, source, read_options, counting) for source in _absolute(sources)]
    with _our_errors():
        counted = ray.get(merge_tree(parts, merge.remote)) if parts else PieceCounts([], [])
    return learn(
        counted,
        mode=mode,
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        pattern=pattern,
        normalization=normalization,
        special_tokens=special_tokens,
        base_text=base_text,
        base_tokens=base_tokens,
        byte_fallback=byte_fallback,
        verbose=verbose,
        progress=progress,
    )


def merge_tree(parts, merge):
    """The parts (in corpus order) merged pairwise, level by level: ``merge(earlier, later)`` keeps
    the order, so the root is the merge of all of them in order. ``merge`` may return a future
    (Ray's ``.remote``): the merges of one level run at once.

    Example:
        >>> merge_tree(["a", "b", "c", "d", "e"], lambda x, y: x + y)
        'abcde'
    """
    parts = list(parts)
    while len(parts) > 1:
        paired = [merge(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        parts = paired + parts[len(parts) - len(parts) % 2 :]
    return parts[0]


def _count_input(table, source, read_options, counting):
    """One Ray task: the piece counts of one input file, or of one block of a dataset."""
    if source is not None:
        documents = read_documents(source, **read_options)
    else:
        documents = _column(table, read_options["text_field"])
    return count_pieces(documents, **counting)


def _column(table, field):
    for number, text in enumerate(table.column(field).to_pylist()):
        if text is None:
            continue  # a missing value is no document, as an empty one
        if not isinstance(text, str):
            raise TrainingError(
                f"dataset column {field!r} holds {type(text).__name__} in row {number} of a block, not text; choose the text column with text_field"
            )
        yield text


def _merge(earlier, later):
    return earlier.merged(later)


def _is_dataset(inputs):
    return type(inputs).__module__.startswith("ray.data") and hasattr(inputs, "to_arrow_refs")


def _shared_inputs(inputs):
    """The inputs, with absolute paths so that every node finds them; standard input refused."""
    sources = find_inputs(inputs)
    check_readers(sources)
    if any(s.path == "-" for s in sources):
        raise UsageError(
            "standard input cannot be read by Ray workers; give files on a file system every node can read"
        )
    return sources


def _absolute(sources):
    return [dataclasses.replace(s, path=os.path.abspath(s.path)) for s in sources]


# -- encoding -------------------------------------------------------------------------------------


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
    num_workers=None,
    threads_per_worker=1,
    chunk_bytes=1 << 20,
    ray_address=None,
    progress=None,
    log=print,
):
    """``bytepair.datasets.encode_corpus`` with reading and encoding on Ray: the same shards,
    byte for byte, and the same ``meta.json``, for the same inputs and options.

    - ``num_workers``: encoding tasks at once (default: the cluster's CPUs over
      ``threads_per_worker``); each worker process holds one copy of the tokenizer.
    - ``threads_per_worker``: CPUs each task takes and encodes on.
    - ``chunk_bytes``: text per read chunk and per ``encode_batch`` call.
    - ``ray_address``: see ``connect``. The other options are ``encode_corpus``'s.

    The driver writes every shard: put ``out`` on a disk of the driver's machine. ``val_documents``
    counts the documents on the driver first (a second read); ``val_fraction`` does not.

    Example:
        >>> meta = encode_corpus(["wiki/*.jsonl"], "cl100k_base", "out", shard_tokens=10**8)  # doctest: +SKIP
    """
    sources = _shared_inputs(inputs)  # before Ray starts: a bad input fails at once
    if not isinstance(threads_per_worker, int) or isinstance(threads_per_worker, bool) or threads_per_worker < 1:
        raise UsageError(f"threads_per_worker must be a positive integer, not {threads_per_worker!r}")
    if num_workers is not None and (
        not isinstance(num_workers, int) or isinstance(num_workers, bool) or num_workers < 1
    ):
        raise UsageError(f"num_workers must be a positive integer, not {num_workers!r}")
    if isinstance(ray_address, str) and ray_address.startswith("ray://"):
        raise UsageError(_NO_RAY_CLIENT.format(address=repr(ray_address)))
    ray = connect(ray_address)
    if ray.util.client.ray.is_connected():  # connected through Ray Client by the caller, or by RAY_ADDRESS
        raise UsageError(_NO_RAY_CLIENT.format(address="a Ray Client connection"))
    if num_workers is None:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        num_workers = max(1, cpus // threads_per_worker)
    make = functools.partial(_RayPipeline, ray=ray, num_workers=num_workers)
    with _our_errors():
        return _corpus.run_encoding(
            make,
            sources,
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
            num_threads=threads_per_worker,
            chunk_bytes=chunk_bytes,
            progress=progress,
            log=log,
        )


# Ray Data's tasks need the driver to be a worker of the cluster, which a Ray Client driver is
# not ("'Worker' object has no attribute 'core_worker'"; ray-project/ray#42739, #48682).
_NO_RAY_CLIENT = (
    "encode-corpus cannot run through Ray Client ({address}): Ray Data, which reads and encodes "
    "the inputs, needs the driver on a machine of the cluster; run the command there with --ray "
    "auto or --ray HOST:6379 (the head's address), or submit it as a Ray job "
    "(train --ray ray://HOST:10001 works)"
)


class _RayPipeline(_corpus.PipelineBase):
    """``corpus._Pipeline``'s interface, with the read and encode stages on Ray Data."""

    def __init__(self, *args, ray, num_workers):
        super().__init__(*args)
        self.ray, self.num_workers = ray, num_workers

    def dataset(self):
        """The Ray Data pipeline: input numbers -> chunks of documents -> encoded chunks, in order."""
        import ray.data

        sources = _absolute(self.sources)
        inputs = ray.data.from_items([{"input": i} for i in range(len(sources))], override_num_blocks=len(sources))
        # One Ray Data task per input reads and encodes it (no copy of the text between
        # processes). Tasks, not an actor pool: Ray Data gives its actors their set-up by
        # ObjectRef, for which Ray logs an error-level line on stderr at each run
        # (ray-project/ray#53727), while tasks are retried when their worker dies (max_retries=-1,
        # ray/data/_internal/remote_fn.py). The tokenizer goes in the object store once, its
        # reference inside a tuple so that Ray passes it unread, and each worker process
        # builds its encoder from it once (``_encoder``).
        encoder = (self.ray.put((self.tokenizer, self.allowed, self.eot_id, self.threads, self.dtype)),)
        encoded = inputs.map_batches(
            _read_and_encode,
            batch_size=1,
            batch_format="numpy",
            num_cpus=self.threads,
            # at most one task per input: a larger cap only draws Ray Data's warning about it
            compute=ray.data.TaskPoolStrategy(size=max(1, min(self.num_workers, len(sources)))),
            fn_kwargs={
                "sources": sources,
                "read_options": self.read_options,
                "chunk_bytes": self.chunk_bytes,
                "encoder": encoder,
            },
        )
        # This dataset's settings only, not the caller's: the shards' order is the documents'
        # order, and the one progress bar is ours (Ray Data's would redraw over it).
        encoded.context.execution_options.preserve_order = True
        encoded.context.enable_progress_bars = False
        return encoded

    def run(self):
        bar = _corpus._progress_bar(self.progress)
        try:
            dataset = self.dataset()
            with _ray_data_console(logging.CRITICAL):
                for table in dataset.iter_batches(batch_size=None, batch_format="pyarrow", prefetch_batches=2):
                    for row in table.to_pylist():
                        read_bytes = self._write(row)
                        if bar is not None:
                            bar.update(read_bytes)
        finally:
            if bar is not None:
                bar.close()

    def _write(self, row):
        """Write one encoded chunk; the bytes of text it read."""
        notes = json.loads(row["notes"])
        for token, count in notes["specials"].items():
            self.special_counts[token] = self.special_counts.get(token, 0) + count
        self.stats.empty += notes["empty"]
        for reason, count in notes["skipped"].items():
            self.stats.skipped[reason] = self.stats.skipped.get(reason, 0) + count
        ids = np.frombuffer(row["ids"], self.dtype)
        lengths, characters, nbytes = (np.frombuffer(row[k], np.int64) for k in ("lengths", "characters", "bytes"))
        read_bytes = int(nbytes.sum())
        if not len(lengths):
            return read_bytes
        splits, ends, keep = self.placement.place(len(lengths))
        if not keep.all():  # already in a shard kept from the interrupted run
            ids = ids[np.repeat(keep, lengths)]
            lengths, characters, nbytes, splits, ends = (
                lengths[keep],
                characters[keep],
                nbytes[keep],
                splits[keep],
                ends[keep],
            )
        if len(lengths):
            _corpus.write_documents(self.writers, ids, lengths, splits, characters, nbytes, ends)
        self.encoded_documents += len(lengths)
        self.encoded_tokens += int(lengths.sum())
        self.encoded_bytes += int(nbytes.sum())
        return read_bytes


def _read_and_encode(batch, *, sources, read_options, chunk_bytes, encoder):
    """One Ray Data task: the inputs of ``batch`` read in chunks (``_read_chunks``), each encoded
    into one row (``_Encoder``)."""
    encode = _encoder(encoder[0])
    for table in _read_chunks(batch, sources=sources, read_options=read_options, chunk_bytes=chunk_bytes):
        yield encode(table)


# The encoder of the run under way in this worker process, by the hex id of its arguments'
# ObjectRef: built once per process, not once per task.
_ENCODERS = {}


def _encoder(reference):
    key = reference.hex()
    if key not in _ENCODERS:
        import ray

        _ENCODERS.clear()  # another run's: its tokenizer need not stay in memory
        _ENCODERS[key] = _Encoder(*ray.get(reference))
    return _ENCODERS[key]


def _read_chunks(batch, *, sources, read_options, chunk_bytes):
    """One Ray Data task per input: its documents in file order with their sizes in UTF-8 bytes,
    in tables of about ``chunk_bytes`` of text; the last row of an input carries no text but
    what reading skipped (``stats``)."""
    import pyarrow as pa

    def table(texts, sizes, stats=None):
        tail = [None] if stats is not None else []
        notes = [None] * len(texts) + (
            [json.dumps({"empty": stats.empty, "skipped": stats.skipped})] if stats is not None else []
        )
        return pa.table(
            {
                "text": pa.array(texts + tail, pa.large_string()),
                "bytes": pa.array(sizes + tail, pa.int64()),
                "stats": pa.array(notes, pa.string()),
            }
        )

    for index in batch["input"]:
        stats = ReadStats()
        texts, sizes, size = [], [], 0
        for text, nbytes in read_sized_documents(sources[int(index)], stats=stats, **read_options):
            texts.append(text)
            sizes.append(nbytes)
            size += nbytes
            if size >= chunk_bytes:
                yield table(texts, sizes)
                texts, sizes, size = [], [], 0
        yield table(texts, sizes, stats)


class _Encoder:
    """Holds the tokenizer, encodes one table of documents per call into one row
    of joined ids (with end-of-text ids), per-document lengths, characters and bytes, and notes
    (special-token strings found, documents that reading skipped)."""

    def __init__(self, tokenizer, allowed, eot_id, threads, dtype):
        self.tokenizer, self.allowed, self.eot_id, self.threads, self.dtype = tokenizer, allowed, eot_id, threads, dtype
        self.finder = _corpus.special_regex(tuple(tokenizer.special_tokens))

    def __call__(self, table):
        import pyarrow as pa

        texts = [t for t in table.column("text").to_pylist() if t is not None]
        nbytes = np.asarray([n for n in table.column("bytes").to_pylist() if n is not None], dtype=np.int64)
        notes = {"specials": {}, "empty": 0, "skipped": {}}
        for stats in table.column("stats").to_pylist():
            if stats is not None:
                read = json.loads(stats)
                notes["empty"] += read["empty"]
                for reason, count in read["skipped"].items():
                    notes["skipped"][reason] = notes["skipped"].get(reason, 0) + count
        _corpus.count_specials(self.finder, texts, notes["specials"])
        ids, lengths = _corpus.encode_documents(
            self.tokenizer,
            texts,
            eot_id=self.eot_id,
            allowed_special=self.allowed,
            num_threads=self.threads,
            dtype=self.dtype,
        )
        characters = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        row = {
            "ids": ids.tobytes(),
            "lengths": lengths.astype(np.int64).tobytes(),
            "characters": characters.tobytes(),
            "bytes": nbytes.tobytes(),
            "notes": json.dumps(notes),
        }
        return pa.table(
            {k: pa.array([v], pa.large_binary() if isinstance(v, bytes) else pa.string()) for k, v in row.items()}
        )
