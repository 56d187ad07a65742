"""Side-by-side benchmarks: bytepair against rustbpe, HF tokenizers, sentencepiece, tiktoken,
quicktok, bpe-openai and its own reference, on the same corpus, vocabulary size and pattern, in
one run.

    pip install ".[bench]"
    python bench/run.py --quick                  # small slices, about a minute
    python bench/run.py                          # every section, full corpora
    python bench/run.py --only encode --corpus wikitext-valid stdlib-code
    python bench/run.py --only train --vocab 32768 --json results.json

Sections (``--only``): ``train``, ``encode``, ``decode``, ``pieces``, ``load``, ``threads``, ``pathological``, ``seed``, ``char``, ``scaling``; corpora
are described in ``bench/corpora.py``; results and how to read them in ``bench/RESULTS.md``.

How it measures. The corpus, the texts and every tokenizer to encode with are prepared in this
process; each measurement then runs in a forked child (so no library's threads, caches or
memory outlive it), which times one call with ``time.perf_counter`` and reports its CPU time and
peak memory: the growth of the child's resident-set high-water mark (``VmHWM``, reset through
``/proc/self/clear_refs`` just before the call, so it counts what the call allocates and not
what the child inherited; where that file is missing, ``ru_maxrss`` minus the resident set at
the start). Before the window opens the child hands the heap's free pages back (glibc's
``malloc_trim``): otherwise a call reuses whatever free memory the parent's earlier work left
resident, and the same training measured 22 MB after one parent and 26 after another. A call
under a second is timed nine times (``--runs``), each in a fresh child (so each starts cold),
in as many passes through the section, and the fastest kept (``--quick``: once). A child
that runs past its time limit is killed and shown as ``> limit``. Ratios are peer time /
bytepair time from the same run (above 1: bytepair is faster); absolute times move with the
machine's load, ratios much less.

Threads: "1 call" is one call on the whole text on one thread; "batch ×N" is the batch API over
the corpus's documents on N threads (HF tokenizers gets ``RAYON_NUM_THREADS`` and
``TOKENIZERS_PARALLELISM`` in the child before its first parallel call). Training runs every
library on its default threads (rustbpe and HF count in parallel on all cores).
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import hashlib
import json
import multiprocessing
import os
import platform
import resource
import sys
import time
from array import array
from dataclasses import dataclass, field

import adapters
import corpora
from adapters import format_table

from bytepair._cliutil import positive_count

SECTIONS = ("train", "encode", "decode", "pieces", "load", "threads", "pathological", "seed", "char", "scaling")
CORES = os.cpu_count() or 1
MB = corpora.MB

# The full run: sized to finish in under 15 minutes on a quiet 2-core machine.
FULL = dict(
    train_corpora=["wikitext-train"],
    encode_corpora=["wikitext-valid", "stdlib-code", "english-docs", "udhr"],
    trained_encode_corpora=["wikitext-valid", "stdlib-code"],  # bytepair's own vocabulary
    vocab=[512, 8192, 32768],
    slice_bytes=None,
    reference_bytes=256_000,
    pathological_sizes=[1, 2, 4],
    scaling_sizes=[1, 10, 100],
    timeout=300,
    pathological_timeout=60,
    short_call_runs=9,  # at five, a short first call's ratio moved by a third from run to run; at nine, 6%
    decode_short_calls=20_000,
    piece_characters=2_000_000,
)
# --quick: the same code paths on small slices, about a minute.
QUICK = dict(
    train_corpora=["wikitext-train"],
    encode_corpora=["wikitext-valid", "stdlib-code"],
    trained_encode_corpora=["wikitext-valid", "stdlib-code"],
    vocab=[512, 2048],
    slice_bytes=300_000,
    reference_bytes=60_000,
    pathological_sizes=[0.25, 0.5, 1],
    scaling_sizes=[0.1, 0.3, 1],
    timeout=60,
    pathological_timeout=20,
    short_call_runs=1,
    decode_short_calls=2_000,
    piece_characters=300_000,
)
# On every machine: what train and encode use when the data folder is missing.
FALLBACK_CORPUS = "stdlib-code"
# A call shorter than this is timed plan["short_call_runs"] times, each in a fresh child, and the
# fastest run kept: one run of a few hundredths of a second moves by half with the machine's
# load. The runs are spread over passes through the whole section, so that a slow stretch of
# the machine falls on every library alike instead of on one library's runs.
SHORT_CALL_SECONDS = 1.0
# The reference rescans every chunk for every merge; past this vocabulary it takes minutes.
REFERENCE_MAX_VOCAB = 1024
# Seed 000's own program on the same pipeline, measured separately on the machine of RESULTS.md
# (2026-12-02, its `stoi5d` line fixed); the harness never runs it. Another machine: pass
# --seed-seconds with its own figure.
SEED_PROGRAM_SECONDS = 350.0


# -- measuring in a forked child ----------------------------------------------------------------


@dataclass
class Row:
    """One measurement, as printed and as written to JSON (fields starting with _ stay here)."""

    section: str
    library: str
    corpus: str
    vocab: object
    mode: str
    nbytes: int
    versus: str | None = "bytepair"  # the row whose time and output this one is compared with
    series: list = field(default_factory=list)  # rows of a series show how time grows
    status: str = "ok"
    seconds: float | None = None
    cpu_seconds: float | None = None
    peak_mb: float | None = None
    tokens: int | None = None
    facts: dict = field(default_factory=dict)

    def key(self):
        return (self.section, self.corpus, str(self.vocab), self.mode)

    def public(self):
        data = {k: v for k, v in self.__dict__.items() if k != "facts"}
        data.update({k: v for k, v in self.facts.items() if not k.startswith("_")})
        return data


def _memory_kb(field_name):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    raise OSError(f"/proc/self/status has no {field_name}")


def _release_free_heap():
    """Hand the heap's free pages back to the kernel (glibc's ``malloc_trim``) where the C
    library has it, so a call's peak counts the pages it needs rather than depending on how
    much free memory the parent happened to leave in the heap it forked."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the free pages stay and the peak is a floor
        pass


def _start_peak_window():
    """(baseline kB, method): reset the high-water mark where Linux allows it, so the peak
    counts only what the call allocates; elsewhere fall back to ``ru_maxrss`` growth."""
    _release_free_heap()
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
        return _memory_kb("VmRSS"), "VmHWM"
    except OSError:
        return _ru_maxrss_kb(), "ru_maxrss"


def _ru_maxrss_kb():
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak  # macOS reports bytes


def _peak_kb(method):
    return _memory_kb("VmHWM") if method == "VmHWM" else _ru_maxrss_kb()


def _child(work, summarize, env, pipe):
    try:
        os.environ.update(env)
        before_kb, method = _start_peak_window()
        cpu_before = os.times()
        started = time.perf_counter()
        result = work()
        seconds = time.perf_counter() - started
        cpu_after = os.times()
        peak_mb = max(0, _peak_kb(method) - before_kb) / 1024
        facts = summarize(result) if summarize else {}
        cpu = (cpu_after.user - cpu_before.user) + (cpu_after.system - cpu_before.system)
        pipe.send({"seconds": seconds, "cpu_seconds": cpu, "peak_mb": peak_mb, "memory_method": method, **facts})
    except BaseException as error:  # the parent reports it; a child must never raise past here
        pipe.send({"error": f"{type(error).__name__}: {error}"[:300]})
    finally:
        pipe.close()


def run_in_child(work, summarize=None, *, timeout, env=None):
    """Run ``work()`` in a forked child; {"seconds", "cpu_seconds", "peak_mb", ...facts} or
    {"error": ...} or {"timeout": limit}."""
    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(work, summarize, env or {}, writer), daemon=True)
    child.start()
    writer.close()
    try:
        if reader.poll(timeout):
            outcome = reader.recv()
        else:
            outcome = {"timeout": timeout}
    except EOFError:
        outcome = None
    if child.is_alive():
        child.kill()
    child.join()
    if outcome is None:
        outcome = {"error": f"the child died with exit code {child.exitcode} (out of memory?)"}
    return outcome


class Bench:
    """Runs measurements, remembers them (a measurement asked for twice runs once) and prints."""

    def __init__(self, args, plan):
        self.args = args
        self.plan = plan
        self.rows = []
        self.families = None  # the encoders, built once (see _families)
        self.decoders = {}  # published vocabulary -> {library: tokenizer} (see section_decode)
        self.char_tokenizer = None  # seed 000's tokenizer (see section_char), trained once
        self._memo = {}
        self.repeat_pass = 0  # passes after the first re-run only the short calls
        self._passes = {}

    def measure(
        self,
        section,
        library,
        corpus,
        vocab,
        mode,
        nbytes,
        work,
        summarize=None,
        *,
        versus="bytepair",
        threads=None,
        timeout=None,
        series=None,
        hidden=False,
    ):
        """Run one measurement in a child (or reuse the same one from earlier in this run) and
        record it as a row of ``section``; ``hidden`` rows only feed other measurements."""
        memo_key = (library, corpus, str(vocab), mode)
        done = self._memo.get(memo_key)
        limit = timeout or self.plan["timeout"]
        if done is None:
            done = self._run(library, corpus, vocab, mode, nbytes, work, summarize, threads, limit, section)
            self._memo[memo_key] = done
            self._passes[memo_key] = 1
        elif self._passes[memo_key] <= self.repeat_pass and done.status == "ok" and done.seconds < SHORT_CALL_SECONDS:
            _keep_fastest(
                done, self._run(library, corpus, vocab, mode, nbytes, work, summarize, threads, limit, section)
            )
            self._passes[memo_key] += 1
        for row in self.rows:  # the same measurement in two series of one section: one row
            if (row.section, row.library, row.key()) == (section, library, (section, corpus, str(vocab), mode)):
                if self.repeat_pass == 0:
                    row.series += [series] if series else []
                _copy_timing(done, row)
                return row
        row = Row(
            section,
            library,
            corpus,
            vocab,
            mode,
            nbytes,
            versus,
            [series] if series else [],
            done.status,
            done.seconds,
            done.cpu_seconds,
            done.peak_mb,
            done.tokens,
            done.facts,
        )
        if not hidden:
            self.rows.append(row)
        return row

    def unavailable(self, section, library, corpus, vocab, mode, nbytes, reason, *, versus="bytepair"):
        """A row that says why ``library`` has no measurement here (it cannot load the
        vocabulary), so that a missing peer shows in the table instead of vanishing."""
        for row in self.rows:
            if (row.section, row.library, row.key()) == (section, library, (section, corpus, str(vocab), mode)):
                return row
        row = Row(section, library, corpus, vocab, mode, nbytes, versus, status=reason)
        self.rows.append(row)
        return row

    def _run(self, library, corpus, vocab, mode, nbytes, work, summarize, threads, limit, section):
        print(f"[{section}] {library} on {corpus}, vocab {vocab}, {mode} ...", file=sys.stderr, end=" ", flush=True)
        outcome = run_in_child(work, summarize, timeout=limit, env=_thread_env(threads))
        row = Row(section, library, corpus, vocab, mode, nbytes)
        if "timeout" in outcome:
            row.status = f"timeout > {limit:g} s"
        elif "error" in outcome:
            row.status = "error: " + outcome["error"]
        else:
            row.seconds = outcome.pop("seconds")
            row.cpu_seconds = outcome.pop("cpu_seconds")
            row.peak_mb = outcome.pop("peak_mb")
            row.tokens = outcome.pop("tokens", None)
            row.facts = outcome
        print(row.status if row.status != "ok" else f"{row.seconds:.2f} s", file=sys.stderr, flush=True)
        return row


def _keep_fastest(done, again):
    """Keep the faster of two runs of one measurement in ``done``, and every run's seconds in
    ``facts["runs"]``."""
    runs = done.facts.get("runs", [round(done.seconds, 5)])
    if again.status == "ok":
        runs.append(round(again.seconds, 5))
        if again.seconds < done.seconds:
            _copy_timing(again, done)
    done.facts["runs"] = runs


def _copy_timing(source, row):
    row.seconds, row.cpu_seconds, row.peak_mb = source.seconds, source.cpu_seconds, source.peak_mb
    row.tokens, row.facts = source.tokens, dict(source.facts)


def _thread_env(threads):
    if threads is None:
        return {}
    return {"RAYON_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "true" if threads > 1 else "false"}


def ids_digest(ids):
    """A digest of an id sequence (a list, a numpy array, or a list of lists for a batch)."""
    digest = hashlib.blake2b(digest_size=16)
    if hasattr(ids, "dtype"):
        digest.update(ids.astype("uint32").tobytes())
    elif ids and isinstance(ids[0], list):
        for part in ids:
            digest.update(array("I", part).tobytes())
    else:
        digest.update(array("I", ids).tobytes())
    return digest.hexdigest()


def merges_digest(merges):
    return hashlib.blake2b(repr([tuple(m) for m in merges]).encode(), digest_size=16).hexdigest()


def _ids_facts(ids):
    count = ids.size if hasattr(ids, "size") else sum(map(len, ids)) if ids and isinstance(ids[0], list) else len(ids)
    return {"tokens": int(count), "_digest": ids_digest(ids)}


# -- the sections -------------------------------------------------------------------------------


def _corpus(bench, name):
    """A corpus by name, cut to the plan's slice; None (and a note) when its data is missing."""
    try:
        corpus = corpora.corpus(name)
    except corpora.CorpusUnavailable as error:
        print(f"skipping corpus {name}: {error}", file=sys.stderr)
        return None
    if bench.plan["slice_bytes"]:
        corpus = corpus.prefix(bench.plan["slice_bytes"])
    return corpus


def _trainers(pattern, peers):
    """{library: function(documents, vocab) -> model} for every installed trainer."""
    trainers = {"bytepair": lambda docs, v: adapters.train_bytepair(docs, v, pattern)}
    if "rustbpe" in peers:
        trainers["rustbpe"] = lambda docs, v: adapters.train_rustbpe(docs, v, pattern)
    if "tokenizers" in peers:
        trainers["tokenizers"] = lambda docs, v: adapters.train_hf(docs, v, pattern)
    if "sentencepiece" in peers:
        trainers["sentencepiece"] = lambda docs, v: adapters.train_sentencepiece(docs, v)
    return trainers


def _train_summary(library):
    def summarize(model):
        facts = {"vocab_reached": adapters.vocab_reached(model)}
        if library == "bytepair":
            facts["_merges"] = list(model.merges)
            facts["merges_digest"] = merges_digest(model.merges)
        if library in ("bytepair", "rustbpe", "tokenizers"):
            facts["_learned"] = adapters.learned_bytes(model)
        return facts

    return summarize


def train_one(bench, section, library, trainer, corpus, vocab, series=None, hidden=False):
    documents = corpus.documents
    return bench.measure(
        section,
        library,
        corpus.name,
        vocab,
        "train",
        corpus.nbytes,
        lambda: trainer(documents, vocab),
        _train_summary(library),
        series=series,
        hidden=hidden,
    )


def _reference_summary(merges):
    return {
        "vocab_reached": 256 + len({left + right for left, right in merges}),
        "merges_digest": merges_digest(merges),
    }


def reference_train(documents, vocab_size, pattern):
    """bytepair.reference.train_bpe on the pieces of ``documents``, counted in order of first
    appearance (what bytepair.train does, written plainly)."""
    from bytepair import reference
    from bytepair.patterns import split

    chunks = {}
    for document in documents:
        for piece in split(document, pattern):
            key = tuple(reference.BYTE_TOKENS[b] for b in piece.encode("utf-8"))
            chunks[key] = chunks.get(key, 0) + 1
    return reference.train_bpe(chunks, reference.BYTE_TOKENS, vocab_size, min_frequency=2)


def _available(bench, names):
    """The corpora among ``names`` that this machine has; the standard library's code (on
    every machine) when it has none of them, so a clone without the data folder still runs."""
    found = [c for c in (_corpus(bench, name) for name in names) if c is not None]
    if not found and FALLBACK_CORPUS not in names:
        print(f"using {FALLBACK_CORPUS} instead", file=sys.stderr)
        found = [_corpus(bench, FALLBACK_CORPUS)]
    return found


def section_train(bench, peers):
    pattern = bench.args.pattern
    trainers = _trainers(pattern, peers)
    for corpus in _available(bench, bench.args.corpus or bench.plan["train_corpora"]):
        for vocab in bench.args.vocab or bench.plan["vocab"]:
            for library, trainer in trainers.items():
                train_one(bench, "train", library, trainer, corpus, vocab)
            if vocab <= REFERENCE_MAX_VOCAB:
                _train_reference(bench, corpus, vocab, pattern)


def _train_reference(bench, corpus, vocab, pattern):
    """The reference on a slice (it rescans every chunk per merge), with bytepair on the same
    slice: the two must learn exactly the same merges."""
    piece = corpus.prefix(bench.plan["reference_bytes"])
    train_one(bench, "train", "bytepair", _trainers(pattern, {})["bytepair"], piece, vocab)
    documents = piece.documents
    bench.measure(
        "train",
        "reference",
        piece.name,
        vocab,
        "train",
        piece.nbytes,
        lambda: reference_train(documents, vocab, pattern),
        _reference_summary,
        timeout=2 * bench.plan["timeout"],
    )


def trained_tokenizer(bench, corpus, vocab):
    """A bytepair tokenizer trained on ``corpus`` (through a measurement, reused if the train
    section ran it), rebuilt here from its merges."""
    from bytepair import Tokenizer

    row = train_one(
        bench, "setup", "bytepair", _trainers(bench.args.pattern, {})["bytepair"], corpus, vocab, hidden=True
    )
    if row.status != "ok":
        raise RuntimeError(f"training bytepair on {corpus.name} failed: {row.status}")
    return Tokenizer(mode="byte", merges=row.facts["_merges"], pattern=bench.args.pattern)


def _families(bench, peers):
    """{vocabulary: {label: (library, encoder, label it must equal)}}, built once: each
    published vocabulary (cl100k unless ``--published`` says more) from its file in every
    library, and bytepair's own trained vocabulary in every library."""
    if bench.families is not None:
        return bench.families
    families = {}
    for name in bench.args.published:
        path = corpora.data_dir() / "vocab" / f"{name}.tiktoken"
        if not path.is_file():
            print(f"skipping the {name} vocabulary: {path} is missing", file=sys.stderr)
            continue
        print(f"building {name} in every library ...", file=sys.stderr, flush=True)
        found = adapters.published_tokenizers(name, path)
        families[name.replace("_base", "")] = {
            lib: (lib, enc, None if lib == "bytepair" else "bytepair") for lib, enc in found.items()
        }
    train_corpus = _available(bench, ["wikitext-train"])[0]
    vocab = max(bench.args.vocab or bench.plan["vocab"])
    tokenizer = trained_tokenizer(bench, train_corpus, vocab)
    families[f"trained-{vocab}"] = adapters.encoders_for(tokenizer, peers)
    bench.families = {family: _with_array_twins(encoders) for family, encoders in families.items()}
    return bench.families


# quicktok's batch API returns one flat uint32 array and offsets, no Python lists: its batch rows
# are compared with bytepair's call that returns the same (``encode_batch_to_array``).
ARRAYS = " → arrays"


def _with_array_twins(encoders):
    """``encoders`` with, after each bytepair entry, its batch-to-arrays twin (label + ARRAYS)."""
    twinned = {}
    for label, (library, encoder, versus) in encoders.items():
        twinned[label] = (library, encoder, versus)
        if library == "bytepair":
            twinned[label + ARRAYS] = ("bytepair arrays", encoder, None)
    return twinned


def _pre_tokenize(bench, corpus, families):
    """The pre-tokenizer alone, for each published vocabulary's pattern: bytepair's scanner
    against the ``regex`` module and HF's Split; the pieces must be the same."""
    for family in families:
        if family.startswith("trained-"):
            continue
        pattern = "gpt2" if family == "r50k" else family
        text = corpus.text
        for label, split in adapters.splitters(pattern).items():
            bench.measure(
                "encode",
                label,
                corpus.name,
                pattern,
                "split",
                corpus.nbytes,
                lambda split=split, text=text: split(text),
                _ids_facts,
                versus="bytepair scanner",
                threads=1,
            )


def _first_published(families):
    """(name, encoders) of the first published vocabulary (cl100k by default), or None."""
    return next(((name, enc) for name, enc in families.items() if not name.startswith("trained-")), None)


def _modes():
    modes = [("1 call", 1), ("batch ×1", 1)]
    if CORES > 1:
        modes.append((f"batch ×{CORES}", CORES))
    return modes


def encode_measure(
    bench, section, family, label, entry, corpus_name, payload, nbytes, mode, threads, timeout=None, series=None
):
    """Time one encoder on ``payload``: a text for "1 call", a list of documents for batches."""
    library, encoder, versus = entry
    if library == "quicktok" and mode != "1 call":
        versus += ARRAYS
    if isinstance(encoder, adapters.Unavailable):
        return bench.unavailable(section, label, corpus_name, family, mode, nbytes, encoder.reason, versus=versus)

    def work():
        if mode == "1 call":
            return adapters.encode_one(library, encoder, payload)
        return adapters.encode_many(library, encoder, payload, threads)

    return bench.measure(
        section,
        label,
        corpus_name,
        family,
        mode,
        nbytes,
        work,
        _ids_facts,
        versus=versus,
        threads=threads,
        timeout=timeout,
        series=series,
    )


def section_encode(bench, peers):
    """Every encoder of every vocabulary on each corpus, in one call and in batches.

    HF tokenizers is left out of "1 call": on one multi-megabyte string it runs at a third of
    its batch speed (measured: 37 s against 23 s on stdlib-code), which would only say that
    its single-string API is not meant for whole corpora, and would take a third of the run.
    Batches run twice in bytepair: into lists (tiktoken's and HF's output) and into one flat
    array (``→ arrays``, quicktok's output, which its rows are compared with).
    """
    families = _families(bench, peers)
    for corpus in _available(bench, bench.args.corpus or bench.plan["encode_corpora"]):
        base_name = corpus.name.split("[")[0]
        for family, encoders in families.items():
            if family != "cl100k" and not bench.args.corpus and base_name not in bench.plan["trained_encode_corpora"]:
                continue
            for mode, threads in _modes():
                payload = corpus.text if mode == "1 call" else corpus.documents
                for label, entry in encoders.items():
                    if mode == "1 call" and entry[0] in ("tokenizers", "bytepair arrays"):
                        continue
                    encode_measure(
                        bench, "encode", family, label, entry, corpus.name, payload, corpus.nbytes, mode, threads
                    )
        _pre_tokenize(bench, corpus, families)


# Ids in a short decode call: a sentence or two, what a sampling loop or a viewer decodes.
SHORT_DECODE_IDS = 40


def _decode_summary(ids, calls):
    def summarize(text):
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        return {"tokens": ids * calls, "calls": calls, "_digest": digest}

    return summarize


def _published(bench, name):
    """{library: tokenizer} of a published vocabulary from its file, built once per run; None
    (and a note) when the file is missing."""
    path = corpora.data_dir() / "vocab" / f"{name}.tiktoken"
    if not path.is_file():
        print(f"skipping the {name} vocabulary: {path} is missing", file=sys.stderr)
        return None
    if name not in bench.decoders:
        bench.decoders[name] = adapters.published_tokenizers(name, path)
    return bench.decoders[name]


def section_decode(bench, peers):
    """Every decoder of each published vocabulary on the ids of WikiText-2 train (cl100k: 2.5 M),
    from a list and from a numpy uint32 array, and on 40 of those ids (timed over many calls,
    each row's seconds being all of them). The ids are bytepair's, equal to tiktoken's (the
    encode section checks it); the decoded text must be the same in every library.
    """
    import numpy as np

    corpus = _available(bench, ["wikitext-train"])[0]
    calls = bench.plan["decode_short_calls"]
    for name in bench.args.published:
        decoders = _published(bench, name)
        if decoders is None:
            continue
        family = name.replace("_base", "")
        ids = decoders["bytepair"].encode_ordinary(corpus.text)
        middle = len(ids) // 2
        short = ids[middle : middle + SHORT_DECODE_IDS]
        inputs = [
            ("list", ids, 1),
            ("numpy array", np.array(ids, dtype=np.uint32), 1),
            (f"{len(short)}-id list", short, calls),
            (f"{len(short)}-id array", np.array(short, dtype=np.uint32), calls),
        ]
        for mode, payload, repeat in inputs:
            nbytes = len(decoders["bytepair"].decode_bytes(payload)) * repeat
            for library, decoder in decoders.items():
                if isinstance(decoder, adapters.Unavailable):
                    bench.unavailable("decode", library, corpus.name, family, mode, nbytes, decoder.reason)
                    continue

                def work(library=library, decoder=decoder, payload=payload, repeat=repeat):
                    for _ in range(repeat - 1):
                        adapters.decode_ids(library, decoder, payload)
                    return adapters.decode_ids(library, decoder, payload)

                bench.measure(
                    "decode",
                    library,
                    corpus.name,
                    family,
                    mode,
                    nbytes,
                    work,
                    _decode_summary(len(payload), repeat),
                    versus=None if library == "bytepair" else "bytepair",
                    threads=1,
                )


# One piece of each length: from tiktoken's O(n^2) scan's comfort zone to past 2**16 symbols.
PIECE_LENGTHS = (1_000, 4_000, 16_000, 64_000)


def piece_texts(length, calls):
    """The sweep's pieces of ``length`` characters, each one pre-tokenization piece under
    cl100k's pattern, as (kind, texts that the ``calls`` calls take in turn): one letter
    repeated (few distinct pairs, all in cache); random lowercase letters without spaces (a new
    pair, often a cache miss, at nearly every merge), one text encoded again and again; and such
    letters new at every call, since one text again keeps its pairs, and the chunked merge's
    seams, in the CPU's and the engine's caches (a 1,000-letter text: about 14 ns per character
    for bytepair against 32 when new; tiktoken's time does not change)."""
    import random

    alphabet = "abcdefghijklmnopqrstuvwxyz"
    rng = random.Random(length)
    letters = "".join(rng.choice(alphabet) for _ in range(length))
    return [
        ("'x'", ["x" * length]),
        ("letters", [letters]),
        ("letters, new each call", ["".join(rng.choices(alphabet, k=length)) for _ in range(calls)]),
    ]


def section_pieces(bench, peers):
    """cl100k on one piece of 1,000 to 64,000 symbols, about ``piece_characters`` characters
    of calls in one child (one call of 1,000 symbols takes tens of microseconds); time per
    character shows how merging one long piece scales."""
    encoders = _published(bench, "cl100k_base")
    if encoders is None:
        return
    for length in PIECE_LENGTHS:
        calls = max(1, bench.plan["piece_characters"] // length)
        for kind, texts in piece_texts(length, calls):
            for library, encoder in encoders.items():
                if library == "tokenizers":  # left out of "1 call" (see section_encode)
                    continue
                corpus = f"{kind} × {length:,}"
                if isinstance(encoder, adapters.Unavailable):
                    bench.unavailable("pieces", library, corpus, "cl100k", "1 piece", length * calls, encoder.reason)
                    continue

                def work(library=library, encoder=encoder, texts=texts, calls=calls):
                    for k in range(calls - 1):
                        adapters.encode_one(library, encoder, texts[k % len(texts)])
                    return adapters.encode_one(library, encoder, texts[(calls - 1) % len(texts)])

                def summarize(ids, calls=calls, length=length):
                    return {**_ids_facts(list(ids)), "calls": calls, "symbols": length}

                bench.measure(
                    "pieces",
                    library,
                    corpus,
                    "cl100k",
                    "1 piece",
                    length * calls,
                    work,
                    summarize,
                    versus=None if library == "bytepair" else "bytepair",
                    threads=1,
                )


# Loads of one vocabulary timed in one child; the fastest is the figure (the first also pays
# for the file's pages and the allocator's first growth).
LOAD_RUNS = 3
# What each loaded tokenizer encodes, so that the row shows it loaded the same vocabulary.
LOAD_CHECK_TEXT = "Hello, world! Ünïcödé, 数字 12345 and   spaces\n\tdef f(x): return x ** 2  # 😀"


def section_load(bench, peers):
    """A published vocabulary loaded from its ``.tiktoken`` file: ``bytepair.load`` against
    tiktoken's ``load_tiktoken_bpe`` and ``Encoding`` (what ``tiktoken.get_encoding`` does with
    a cached file), and quicktok from its own files written from the same ranks beforehand;
    each ``LOAD_RUNS`` times in one child, the fastest kept."""
    import tempfile

    from bytepair.formats.tiktoken_files import ENCODINGS

    for name in bench.args.published:
        path = corpora.data_dir() / "vocab" / f"{name}.tiktoken"
        if not path.is_file():
            print(f"skipping the {name} vocabulary: {path} is missing", file=sys.stderr)
            continue
        encoding = ENCODINGS[name]
        loaders = {"bytepair": lambda name=name, path=path: __import__("bytepair").load(name, path=path)}
        if "tiktoken" in peers:

            def tiktoken_load(name=name, path=path, encoding=encoding):
                import tiktoken
                from tiktoken.load import load_tiktoken_bpe

                return tiktoken.Encoding(
                    name,
                    pat_str=adapters.pattern_regex(encoding.pattern),
                    mergeable_ranks=load_tiktoken_bpe(str(path)),
                    special_tokens=encoding.special_tokens,
                )

            loaders["tiktoken"] = tiktoken_load
        folder = None
        if "quicktok" in peers and encoding.pattern in adapters.QUICKTOK_SCANNERS:
            folder = tempfile.mkdtemp(prefix="bench-quicktok-")
            adapters.write_quicktok_files(
                folder, adapters.read_tiktoken_file(path), encoding.pattern, encoding.special_tokens
            )
            loaders["quicktok"] = lambda folder=folder: __import__("quicktok").Tokenizer("bench", folder)
        elif "quicktok" in peers:
            bench.unavailable(
                "load",
                "quicktok",
                f"{name}.tiktoken",
                name.replace("_base", ""),
                "load",
                path.stat().st_size,
                f"cannot load: no {encoding.pattern} scanner",
            )
        for library, loader in loaders.items():

            def work(loader=loader):
                times = []
                for _ in range(LOAD_RUNS):
                    started = time.perf_counter()
                    tokenizer = loader()
                    times.append(time.perf_counter() - started)
                return tokenizer, times

            def summarize(result, library=library):
                tokenizer, times = result
                return {
                    **_ids_facts(list(adapters.encode_one(library, tokenizer, LOAD_CHECK_TEXT))),
                    "load_seconds": min(times),
                    "load_runs": [round(t, 4) for t in times],
                }

            bench.measure(
                "load",
                library,
                f"{name}.tiktoken",
                name.replace("_base", ""),
                "load",
                path.stat().st_size,
                work,
                summarize,
                versus=None if library == "bytepair" else "bytepair",
                threads=1,
            )
        if folder:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)


# Timed runs of each thread count in the threads section, alternating, after one warm-up call each.
THREAD_RUNS = 5


def section_threads(bench, peers):
    """Two threads (every core) against one, in one process: each library's batch API on
    WikiText-2 train cut into its 6,212 sections (``bytepair.datasets.split_articles``), cl100k, after
    a warm-up call on each thread count (so both find warm caches), ``THREAD_RUNS`` runs of
    each in turn, the fastest kept. The ratio is the one-thread time over the all-core time;
    the ids must equal bytepair's."""
    cores = os.cpu_count() or 1
    if cores < 2:
        print("skipping threads: one core", file=sys.stderr)
        return
    from bytepair.datasets import split_articles

    try:
        documents = split_articles(corpora.read_data_text("wikitext-2/train.txt"), sections=True)
    except corpora.CorpusUnavailable as error:
        print(f"skipping threads: {error}", file=sys.stderr)
        return
    tokenizers = _published(bench, "cl100k_base")
    if tokenizers is None:
        return
    nbytes = sum(len(d.encode("utf-8")) for d in documents)
    libraries = [("bytepair", "bytepair"), ("bytepair arrays", "bytepair"), ("tiktoken", "tiktoken")]
    libraries += [("quicktok", "quicktok")] if "quicktok" in peers else []
    for library, source in libraries:
        tokenizer = tokenizers.get(source)
        if tokenizer is None or isinstance(tokenizer, adapters.Unavailable):
            continue

        def work(library=library, tokenizer=tokenizer):
            times = {1: [], cores: []}
            for threads in times:
                ids = adapters.encode_many(library, tokenizer, documents, threads)
            for _ in range(THREAD_RUNS):
                for threads in times:
                    started = time.perf_counter()
                    adapters.encode_many(library, tokenizer, documents, threads)
                    times[threads].append(time.perf_counter() - started)
            return ids, times

        def summarize(result):
            ids, times = result
            return {**_ids_facts(ids), "one_thread": min(times[1]), "all_cores": min(times[cores]), "cores": cores}

        label = "bytepair → arrays" if library == "bytepair arrays" else library
        bench.measure(
            "threads",
            label,
            "wikitext-train sections",
            "cl100k",
            f"1 vs {cores} threads",
            nbytes,
            work,
            summarize,
            versus=None if library == "bytepair" else "bytepair",
            threads=cores,
        )


THREADS_HEADER = ["library", "corpus", "MB", "1 thread, s", "threads", "all cores, s", "speed-up", "same ids"]


def _threads_cells(bench, row):
    one, every = row.facts.get("one_thread"), row.facts.get("all_cores")
    return [
        row.library,
        row.corpus,
        f"{row.nbytes / MB:.2f}",
        f"{one:.4f}" if one else row.status,
        str(row.facts.get("cores", "-")),
        f"{every:.4f}" if every else "-",
        f"{one / every:.2f}×" if one and every else "-",
        _same_text(row, _twin(bench, row)),
    ]


def _threads_targets(bench):
    return [
        f"{row.library}: {row.facts['cores']} threads against one, batch on WikiText-2 train's sections ≥ 1.8×: "
        f"{row.facts['one_thread'] / row.facts['all_cores']:.2f}× "
        f"({_met(row.facts['one_thread'] / row.facts['all_cores'] >= 1.8)})"
        for row in bench.rows
        if row.section == "threads" and row.library.startswith("bytepair") and row.facts.get("all_cores")
    ]


def section_pathological(bench, peers):
    """cl100k on a run of one character and on random Latin-1 text at growing sizes, and on
    prose of the smallest size: time should grow linearly."""
    family = _first_published(_families(bench, peers))
    if family is None:
        return
    sizes = bench.plan["pathological_sizes"]
    inputs = []
    for size in sizes:
        characters = int(size * MB)
        inputs.append(("'x' run", f"'x' × {size:g}M", corpora.run_of_one_character(characters)))
        inputs.append(("random latin-1", f"random latin-1 {size:g}M", corpora.random_latin1(characters)))
    try:
        inputs.append(("prose", f"prose {sizes[0]:g}M", corpora.prose(int(sizes[0] * MB))))
    except corpora.CorpusUnavailable as error:
        print(f"skipping prose: {error}", file=sys.stderr)
    for series, name, text in inputs:
        nbytes = len(text.encode("utf-8"))
        for label, entry in family[1].items():
            encode_measure(
                bench,
                "pathological",
                family[0],
                label,
                entry,
                name,
                text,
                nbytes,
                "1 call",
                1,
                timeout=bench.plan["pathological_timeout"],
                series=series,
            )


def seed_pipeline(train_text, splits):
    """Seed 000's job: char mode, vocab 500, first 500,000 training characters, base alphabet
    from all splits; then encode every split. Returns what the check needs and sub-timings."""
    import bytepair

    started = time.perf_counter()
    tokenizer = bytepair.train(
        train_text, mode="char", vocab_size=500, max_chars=500_000, base_text=list(splits.values()), progress=False
    )
    trained = time.perf_counter()
    arrays = {name: tokenizer.encode_to_array(text) for name, text in splits.items()}
    encoded = time.perf_counter()
    return tokenizer, arrays, trained - started, encoded - trained


def _wikitext_splits(what):
    """WikiText-2's three splits by name, or None (and a note) when the data folder lacks them."""
    splits = {}
    for name in ("train", "valid", "test"):
        try:
            splits[name] = corpora.read_data_text(f"wikitext-2/{name}.txt")
        except corpora.CorpusUnavailable as error:
            print(f"skipping {what}: {error}", file=sys.stderr)
            return None
    return splits


def section_seed(bench, peers):
    splits = _wikitext_splits("the seed pipeline")
    if splits is None:
        return

    def summarize(result):
        tokenizer, arrays, train_seconds, encode_seconds = result
        round_trip = all(tokenizer.decode(arrays[n]) == splits[n] for n in splits)
        return {
            "tokens": int(sum(a.size for a in arrays.values())),
            "train_seconds": train_seconds,
            "encode_seconds": encode_seconds,
            "vocab_reached": tokenizer.vocab_size,
            "round_trip": round_trip,
            "seed_program_seconds": bench.args.seed_seconds,
        }

    nbytes = sum(len(t.encode("utf-8")) for t in splits.values())
    bench.measure(
        "seed",
        "bytepair",
        "wikitext-2 (all splits)",
        500,
        "char pipeline",
        nbytes,
        lambda: seed_pipeline(splits["train"], splits),
        summarize,
        versus=None,
    )


CHAR_VOCAB = 500


def _merges_of_records(records, base):
    """``train_merges``' records as (left, right) value pairs, as ``MergeModel.merges`` holds them."""
    values = list(base)
    merges = []
    for left, right, merged, _, _ in records:
        if merged == len(values):
            values.append(values[left] + values[right])
        merges.append((values[left], values[right]))
    return merges


def _merges_summary(merges):
    return {"merges_digest": merges_digest(merges), "merges": len(merges)}


def section_char(bench, peers):
    """Char mode without a pattern (seed 000's pipeline) on WikiText-2 train.

    Encoding with seed 000's tokenizer (vocab 500, trained on the first 500,000 characters,
    base alphabet from all splits), into an array and into a list, on one thread and on every
    core (the default), against the whole text
    merged as one piece (the engine's path before it cut the text where no merge can span; a
    whole-piece lookup turns the cuts off): the ids must be equal. Training at vocab 500 on
    the whole text: peak memory against the corpus, against the unique-chunk layout of the
    trainer (``train_merges(layout="chunks")``, what a text without a pattern took before):
    the merges must be equal.
    """
    import bytepair
    from bytepair import _engine

    splits = _wikitext_splits("the char-mode section")
    if splits is None:
        return
    text = splits["train"]
    if bench.plan["slice_bytes"]:
        text = text[: bench.plan["slice_bytes"]]
    corpus = "wikitext-train" + (f"[:{len(text):,}]" if len(text) < len(splits["train"]) else "")
    nbytes = len(text.encode("utf-8"))
    if bench.char_tokenizer is None:
        bench.char_tokenizer = bytepair.train(
            text, mode="char", vocab_size=CHAR_VOCAB, max_chars=500_000, base_text=list(splits.values()), progress=False
        )
    tokenizer = bench.char_tokenizer
    one_piece = _engine.Encoder(**{**tokenizer.model.engine_spec(), "whole_piece": True}, pattern=None)
    facts = lambda ids: {**_ids_facts(ids), "characters": len(text)}  # noqa: E731
    cores = os.cpu_count() or 1
    encoders = [
        ("bytepair", "array", lambda: tokenizer.encode_to_array(text, num_threads=1), 1),
        ("bytepair", "list", lambda: tokenizer.encode(text, num_threads=1), 1),
        ("bytepair, one piece", "list", lambda: one_piece.encode_ordinary(text), 1),
        # the default: the text cut at safe junctions and spread over every core
        ("bytepair", f"array ×{cores}", lambda: tokenizer.encode_to_array(text), cores),
        ("bytepair", f"list ×{cores}", lambda: tokenizer.encode(text), cores),
    ]
    for library, mode, work, threads in encoders:
        bench.measure(
            "char", library, corpus, CHAR_VOCAB, mode, nbytes, work, facts, versus="bytepair", threads=threads
        )
    base = sorted(set(text))
    trainers = [
        (
            "bytepair",
            lambda: list(bytepair.train(text, mode="char", vocab_size=CHAR_VOCAB, progress=False).model.merges),
        ),
        (
            "bytepair, chunk layout",
            lambda: _merges_of_records(
                _engine.train_merges(
                    [text], [1], mode="char", base_tokens=base, vocab_size=CHAR_VOCAB, min_frequency=2, layout="chunks"
                ),
                base,
            ),
        ),
    ]
    for library, work in trainers:
        bench.measure("char", library, corpus, CHAR_VOCAB, "train", nbytes, work, _merges_summary)


def _print_char(bench, rows):
    header = [
        "library",
        "corpus",
        "vocab",
        "work",
        "MB",
        "seconds",
        "M chars/s",
        "peak MB",
        "peak / corpus",
        "same output",
        "peer/ours",
    ]
    cells = []
    for row in rows:
        twin = _twin(bench, row)
        seconds = f"{row.seconds:.3f}" if row.seconds is not None else row.status
        characters = row.facts.get("characters")
        rate = f"{characters / row.seconds / 1e6:.1f}" if characters and row.seconds else "-"
        peak = f"{row.peak_mb:,.1f}" if row.peak_mb is not None else "-"
        ratio = f"{row.peak_mb * MB / row.nbytes:.2f}×" if row.peak_mb is not None else "-"
        work = "train" if row.mode == "train" else f"encode, {row.mode}"
        cells.append(
            [
                row.library,
                row.corpus,
                str(row.vocab),
                work,
                f"{row.nbytes / MB:.2f}",
                seconds,
                rate,
                peak,
                ratio,
                _same_text(row, twin),
                _ratio_text(row, twin),
            ]
        )
    for line in format_table(header, cells):
        print(line)


def section_scaling(bench, peers):
    """Training time against corpus size (at the largest vocabulary) and against vocabulary
    size (on the middle size), and encoding time against corpus size, on the mix."""
    trainers = {
        k: v for k, v in _trainers(bench.args.pattern, peers).items() if k in ("bytepair", "rustbpe", "tokenizers")
    }
    try:
        mix = corpora.corpus("mix-100mb")
    except corpora.CorpusUnavailable as error:
        print(f"skipping scaling: {error}", file=sys.stderr)
        return
    sizes = [mix.prefix(int(size * MB), name=f"mix[:{size:g}MB]") for size in bench.plan["scaling_sizes"]]
    vocabs = sorted(bench.args.vocab or bench.plan["vocab"])
    for corpus in sizes:
        for library, trainer in trainers.items():
            train_one(bench, "scaling", library, trainer, corpus, vocabs[-1], series="size")
    middle = sizes[len(sizes) // 2]
    for vocab in vocabs:
        for library, trainer in trainers.items():
            train_one(bench, "scaling", library, trainer, middle, vocab, series="vocab")
    family = _first_published(_families(bench, peers))
    if family is not None:
        chosen = {k: v for k, v in family[1].items() if k in ("bytepair", "tiktoken")}
        for corpus in sizes:
            text = corpus.text
            for label, entry in chosen.items():
                encode_measure(
                    bench,
                    "scaling",
                    family[0],
                    label,
                    entry,
                    corpus.name,
                    text,
                    corpus.nbytes,
                    "1 call",
                    1,
                    series="size",
                )


# -- printing -----------------------------------------------------------------------------------


def _twin(bench, row):
    """The row this one is compared with: same section, corpus, vocabulary and mode."""
    if not row.versus:
        return None
    for other in bench.rows:
        if other.library == row.versus and other.key() == row.key() and other is not row:
            return other
    return None


def _ratio_text(row, twin):
    if twin is None or not twin.seconds:
        return "-"
    if row.status.startswith("timeout"):
        limit = float(row.status.split(">")[1].split()[0])
        return f"> {limit / twin.seconds:.1f}×"
    return f"{row.seconds / twin.seconds:.2f}×" if row.seconds else "-"


def _same_text(row, twin):
    """✓ when this row's output (ids or merges) equals its twin's."""
    if twin is None or row.status != "ok" or twin.status != "ok":
        return ""
    mine = row.facts.get("_digest") or row.facts.get("merges_digest")
    theirs = twin.facts.get("_digest") or twin.facts.get("merges_digest")
    if mine is None or theirs is None:
        return ""
    return "✓" if mine == theirs else f"✗ ({row.tokens or '-'} vs {twin.tokens or '-'} tokens)" if row.tokens else "✗"


def _shared_text(row, twin):
    """How many of bytepair's learned tokens this trainer learned too."""
    if twin is None or "_learned" not in row.facts or "_learned" not in twin.facts:
        return "-"
    return f"{len(row.facts['_learned'] & twin.facts['_learned']) / len(twin.facts['_learned']):.1%}"


def _cells(bench, row):
    twin = _twin(bench, row)
    seconds = f"{row.seconds:.2f}" if row.seconds is not None else row.status
    rate = f"{row.nbytes / MB / row.seconds:.2f}" if row.seconds else "-"
    peak = f"{row.peak_mb:,.0f}" if row.peak_mb is not None else "-"
    size = f"{row.nbytes / MB:.2f}"
    checks = [_same_text(row, twin), _ratio_text(row, twin)]
    if row.mode == "train":
        reached = str(row.facts.get("vocab_reached", "-"))
        return [
            row.library,
            row.corpus,
            str(row.vocab),
            size,
            seconds,
            rate,
            peak,
            reached,
            _shared_text(row, twin),
            *checks,
        ]
    tokens_rate = f"{row.tokens / row.seconds:,.0f}" if row.seconds and row.tokens else "-"
    return [row.library, row.corpus, str(row.vocab), row.mode, size, seconds, rate, tokens_rate, peak, *checks]


TRAIN_HEADER = [
    "library",
    "corpus",
    "vocab",
    "MB",
    "seconds",
    "MB/s",
    "peak MB",
    "vocab reached",
    "tokens shared",
    "same merges",
    "peer/ours",
]
ENCODE_HEADER = [
    "library",
    "corpus",
    "vocabulary",
    "mode",
    "MB",
    "seconds",
    "MB/s",
    "tokens/s",
    "peak MB",
    "same ids",
    "peer/ours",
]


DECODE_HEADER = [
    "library",
    "corpus",
    "vocabulary",
    "input",
    "ids",
    "calls",
    "seconds",
    "M ids/s",
    "µs per call",
    "same text",
    "peer/ours",
]


def _decode_cells(bench, row):
    twin = _twin(bench, row)
    calls = row.facts.get("calls", 1)
    seconds = f"{row.seconds:.3f}" if row.seconds is not None else row.status
    rate = f"{row.tokens / row.seconds / 1e6:.1f}" if row.seconds and row.tokens else "-"
    per_call = f"{row.seconds / calls * 1e6:,.1f}" if row.seconds else "-"
    return [
        row.library,
        row.corpus,
        str(row.vocab),
        row.mode,
        f"{row.tokens // calls:,}" if row.tokens else "-",
        f"{calls:,}",
        seconds,
        rate,
        per_call,
        _same_text(row, twin),
        _ratio_text(row, twin),
    ]


PIECES_HEADER = ["library", "piece", "calls", "seconds", "ns per character", "same ids", "peer/ours"]


def _pieces_cells(bench, row):
    twin = _twin(bench, row)
    calls = row.facts.get("calls", 1)
    seconds = f"{row.seconds:.3f}" if row.seconds is not None else row.status
    per_char = f"{row.seconds / row.nbytes * 1e9:,.1f}" if row.seconds else "-"
    return [row.library, row.corpus, f"{calls:,}", seconds, per_char, _same_text(row, twin), _ratio_text(row, twin)]


LOAD_HEADER = ["library", "file", "MB", f"best of {LOAD_RUNS}, s", "runs, s", "same ids", "peer/ours"]


def _load_cells(bench, row):
    twin = _twin(bench, row)
    best = row.facts.get("load_seconds")
    ratio = "-"
    if twin is not None and best and twin.facts.get("load_seconds"):
        ratio = f"{best / twin.facts['load_seconds']:.2f}×"
    runs = ", ".join(f"{t:.3f}" for t in row.facts.get("load_runs", []))
    return [
        row.library,
        row.corpus,
        f"{row.nbytes / MB:.2f}",
        f"{best:.3f}" if best else row.status,
        runs or "-",
        _same_text(row, twin),
        ratio,
    ]


def print_section(bench, section):
    rows = [r for r in bench.rows if r.section == section]
    if not rows:
        return
    print(f"\n== {section} ==")
    if section == "seed":
        _print_seed(bench, rows)
        return
    if section == "char":
        _print_char(bench, rows)
        return
    if section == "decode":
        for line in format_table(DECODE_HEADER, [_decode_cells(bench, r) for r in rows]):
            print(line)
        return
    if section == "pieces":
        for line in format_table(PIECES_HEADER, [_pieces_cells(bench, r) for r in rows]):
            print(line)
        return
    if section == "load":
        for line in format_table(LOAD_HEADER, [_load_cells(bench, r) for r in rows]):
            print(line)
        return
    if section == "threads":
        for line in format_table(THREADS_HEADER, [_threads_cells(bench, r) for r in rows]):
            print(line)
        return
    for kind, header in (("train", TRAIN_HEADER), ("encode", ENCODE_HEADER)):
        chosen = [r for r in rows if (r.mode == "train") == (kind == "train")]
        if chosen:
            for line in format_table(header, [_cells(bench, r) for r in chosen]):
                print(line)
            print()
    for line in growth_lines(rows):
        print(line)


def _print_seed(bench, rows):
    for row in rows:
        if row.status != "ok":
            print(f"bytepair: {row.status}")
            continue
        facts = row.facts
        print(
            f"bytepair, seed 000's pipeline on WikiText-2: train {facts['train_seconds']:.2f} s + encode all splits "
            f"({row.nbytes / MB:.1f} MB) {facts['encode_seconds']:.2f} s = {row.seconds:.2f} s; vocab "
            f"{facts['vocab_reached']}, {row.tokens:,} tokens, round trip {'ok' if facts['round_trip'] else 'FAILED'}, "
            f"peak {row.peak_mb:,.0f} MB"
        )
        if bench.args.seed_seconds:
            print(
                f"seed 000's own program (measured separately): {bench.args.seed_seconds:,.0f} s, "
                f"{bench.args.seed_seconds / row.seconds:,.0f}× bytepair's time"
            )
        else:
            print("seed 000's own program: not given (pass --seed-seconds to compare)")


def growth_lines(rows):
    """How time grows: per library and series, the first and last points and time per unit."""
    series = {}
    for row in rows:
        for name in row.series if row.seconds else ():
            x = row.nbytes if name != "vocab" else int(row.vocab)
            fixed = str(row.vocab) if name != "vocab" else row.corpus
            series.setdefault((row.library, name, row.mode, fixed), []).append((x, row.seconds))
    lines = []
    for (library, name, mode, fixed), points in series.items():
        points.sort()
        if len(points) < 2 or points[0][0] == points[-1][0]:
            continue
        (x0, t0), (x1, t1) = points[0], points[-1]
        if name == "vocab":
            detail = ", ".join(f"{x:,}: {t:.2f} s" for x, t in points)
            lines.append(f"  {library:<24} vocabulary ×{x1 / x0:.0f} -> time ×{t1 / t0:.2f}   on {fixed} ({detail})")
        else:
            detail = ", ".join(f"{x / MB:.2f} MB: {t / (x / MB):.3f} s/MB" for x, t in points)
            lines.append(
                f"  {library:<24} {name:<15} {mode:<6} size ×{x1 / x0:.1f} -> time ×{t1 / t0:.1f}   ({detail})"
            )
    return ["how time grows (linear: time grows as much as size):", *lines] if lines else []


def _find(bench, section, library, corpus_prefix, vocab, mode):
    """The first measured row that matches (corpus by prefix, so slices match too)."""
    for row in bench.rows:
        same = (row.section, row.library, str(row.vocab), row.mode) == (section, library, str(vocab), mode)
        if same and row.corpus.startswith(corpus_prefix) and row.seconds:
            return row
    return None


def _met(condition):
    return "met" if condition else "NOT met"


def _training_targets(bench):
    lines = []
    for section, corpus in (("train", "wikitext-train"), ("scaling", "mix[:100MB]")):
        ours, rust, hf = (
            _find(bench, section, lib, corpus, 32768, "train") for lib in ("bytepair", "rustbpe", "tokenizers")
        )
        if ours and rust:
            ratio = rust.seconds / ours.seconds
            line = f"training ≥4× faster than rustbpe at vocab 32,768 on {corpus}: {ratio:.2f}× ({_met(ratio >= 4)})"
            if hf and hf.peak_mb is not None and ours.peak_mb is not None:
                share = ours.peak_mb / hf.peak_mb if hf.peak_mb else float("inf")
                line += (
                    f"; peak memory ≤ 0.6× HF's: {ours.peak_mb:,.0f} MB vs {hf.peak_mb:,.0f} MB,"
                    f" {share:.2f}× ({_met(share <= 0.6)})"
                )
            lines.append(line)
    return lines


def _encode_ratio(bench, peer, corpus, vocab, mode):
    """``peer``'s encode time / bytepair's on one row, or None where either was not measured."""
    ours = _find(bench, "encode", "bytepair", corpus, vocab, mode)
    theirs = _find(bench, "encode", peer, corpus, vocab, mode)
    return theirs.seconds / ours.seconds if ours and theirs else None


def _encoding_targets(bench):
    lines = []
    many_threads = f"batch ×{CORES}"
    for corpus in ("wikitext-valid", "stdlib-code"):
        for mode in ("1 call", "batch ×1", many_threads):
            ratio = _encode_ratio(bench, "tiktoken", corpus, "cl100k", mode)
            if ratio is not None:
                lines.append(f"encoding ≥4× tiktoken, cl100k, {corpus}, {mode}: {ratio:.2f}× ({_met(ratio >= 4)})")
        one = _find(bench, "encode", "bytepair", corpus, "cl100k", "batch ×1")
        many = _find(bench, "encode", "bytepair", corpus, "cl100k", many_threads)
        if CORES > 1 and one and many:  # the threads target itself is the threads section's
            lines.append(
                f"bytepair on {CORES} threads against 1, cl100k, {corpus} ({one.nbytes / 1e6:.1f} MB): "
                f"{one.seconds / many.seconds:.2f}× (not a target: that is on WikiText-2 train's sections, --only threads)"
            )
    return lines


# One call on text of many scripts (issue "Engine, round 2"): times tiktoken wanted, by (corpus,
# vocabulary); random CJK + emoji also ahead of quicktok.
SCRIPT_TARGETS = {("udhr", "cl100k"): 5, ("udhr", "o200k"): 4, ("cjk-emoji", "cl100k"): 4, ("cjk-emoji", "o200k"): 3}


def _script_targets(bench):
    lines = []
    for (corpus, vocab), wanted in SCRIPT_TARGETS.items():
        ratio = _encode_ratio(bench, "tiktoken", corpus, vocab, "1 call")
        if ratio is None:
            continue
        line = f"encoding ≥{wanted}× tiktoken, {vocab}, {corpus}, 1 call: {ratio:.2f}× ({_met(ratio >= wanted)})"
        ahead = _encode_ratio(bench, "quicktok", corpus, vocab, "1 call")
        if corpus == "cjk-emoji" and ahead is not None:
            line += f"; ahead of quicktok: {ahead:.2f}× ({_met(ahead > 1)})"
        lines.append(line)
    return lines


def _decoding_targets(bench):
    lines = []
    for row in bench.rows:
        if row.section == "decode" and row.library in ("tiktoken", "quicktok") and row.seconds:
            ours = _twin(bench, row)
            if ours and ours.seconds:
                ratio = row.seconds / ours.seconds
                wanted = 1.0 if row.facts.get("calls", 1) > 1 or row.library == "quicktok" else 1.5
                lines.append(
                    f"decoding ≥{wanted:g}× {row.library}, {row.vocab}, {row.mode}: {ratio:.2f}× ({_met(ratio >= wanted)})"
                )
    return lines


def _piece_targets(bench):
    lines = []
    for row in bench.rows:
        if row.section == "pieces" and row.library == "bytepair" and row.seconds:
            per_char = row.seconds / row.nbytes * 1e9
            line = f"one piece, cl100k, {row.corpus}: {per_char:.1f} ns per character (≤ 40 wanted: {_met(per_char <= 40)})"
            tiktoken = next(
                (
                    r
                    for r in bench.rows
                    if r.section == "pieces" and r.library == "tiktoken" and r.key() == row.key() and r.seconds
                ),
                None,
            )
            if tiktoken:
                ratio = tiktoken.seconds / row.seconds
                line += f"; {ratio:.2f}× tiktoken (≥ 4 wanted: {_met(ratio >= 4)})"
            lines.append(line)
    return lines


def _load_targets(bench):
    lines = []
    for row in bench.rows:
        if row.section == "load" and row.library == "tiktoken" and row.facts.get("load_seconds"):
            ours = _twin(bench, row)
            if ours and ours.facts.get("load_seconds"):
                ratio = row.facts["load_seconds"] / ours.facts["load_seconds"]
                lines.append(
                    f"load {row.corpus} ≤ tiktoken's time: {ours.facts['load_seconds']:.3f} s vs "
                    f"{row.facts['load_seconds']:.3f} s, {ratio:.2f}× ({_met(ratio >= 1)})"
                )
    return lines


def _linearity_targets(bench):
    lines = []
    for kind in ("'x' run", "random latin-1"):
        rows = [
            r
            for r in bench.rows
            if r.section == "pathological" and r.library == "bytepair" and kind in r.series and r.seconds
        ]
        points = sorted((r.nbytes, r.seconds) for r in rows)
        if len(points) >= 2:
            size, grown = points[-1][0] / points[0][0], points[-1][1] / points[0][1]
            # "linear" allows 1.5× the size's growth: noise, and caches that a bigger input overflows
            lines.append(
                f"pathological input grows linearly, bytepair, {kind}: size ×{size:.1f} -> time ×{grown:.1f} ({_met(grown <= 1.5 * size)})"
            )
    return lines


def _char_targets(bench):
    lines = []
    for row in bench.rows:
        if row.section != "char" or row.library != "bytepair" or not row.seconds:
            continue
        if row.mode == "train":
            ratio = row.peak_mb * MB / row.nbytes
            lines.append(
                f"char mode without a pattern, training peak memory ≤ 4× the corpus: {ratio:.2f}× ({_met(ratio <= 4)})"
            )
        else:
            rate = row.facts["characters"] / row.seconds / 1e6
            lines.append(
                f"char mode without a pattern, encode {row.corpus} into a {row.mode} ≥ 40 M characters/s: "
                f"{rate:.1f} ({_met(rate >= 40)})"
            )
    return lines


def targets(bench):
    """The project's performance targets, each with this run's figure (absent when the run did
    not measure it)."""
    return (
        _training_targets(bench)
        + _encoding_targets(bench)
        + _script_targets(bench)
        + _decoding_targets(bench)
        + _piece_targets(bench)
        + _load_targets(bench)
        + _threads_targets(bench)
        + _linearity_targets(bench)
        + _char_targets(bench)
    )


# -- the command line -------------------------------------------------------------------------


def environment(peers):
    """What the numbers were measured on."""
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import bytepair

    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu": cpu,
        "cores": CORES,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "bytepair": bytepair.__version__,
        **peers,
    }


def warm_up(pattern, peers):
    """Everything imported and the engine set up here, before any fork (see adapters.warm_up)."""
    from bytepair import patterns, reference  # noqa: F401  (imported once, for every child)

    adapters.warm_up(sorted({pattern, "cl100k", "gpt2", "o200k"}), peers)


def _runs(text):
    return positive_count(text, "runs")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only",
        nargs="+",
        choices=SECTIONS,
        default=list(SECTIONS),
        metavar="SECTION",
        help=f"sections to run (default: all): {', '.join(SECTIONS)}",
    )
    parser.add_argument(
        "--corpus",
        nargs="+",
        choices=corpora.NAMES,
        default=None,
        metavar="NAME",
        help=f"corpora for train and encode (default: per section); one of {', '.join(corpora.NAMES)}",
    )
    parser.add_argument(
        "--vocab", nargs="+", type=int, default=None, help="vocabulary sizes (default 512 8192 32768; --quick 512 2048)"
    )
    parser.add_argument(
        "--published",
        nargs="+",
        choices=("r50k_base", "cl100k_base", "o200k_base"),
        default=["cl100k_base"],
        metavar="NAME",
        help="published vocabularies to encode with (default: cl100k_base; also r50k_base, o200k_base)",
    )
    parser.add_argument(
        "--pattern",
        choices=("cl100k", "gpt2"),
        default="cl100k",
        help="pre-tokenization for training (default: cl100k)",
    )
    parser.add_argument("--quick", action="store_true", help="small slices of each corpus; about a minute")
    parser.add_argument(
        "--json",
        nargs="?",
        const="-",
        default=None,
        metavar="PATH",
        help="also write every measurement as JSON to PATH ('-': to stdout, instead of the tables)",
    )
    parser.add_argument(
        "--seed-seconds",
        type=float,
        default=SEED_PROGRAM_SECONDS,
        help="seed 000's own time on its pipeline in seconds, measured separately, to compare with",
    )
    parser.add_argument(
        "--scaling-sizes",
        nargs="+",
        type=float,
        default=None,
        metavar="MB",
        help="corpus sizes for the scaling section (default 1 10 100; --quick 0.1 0.3 1)",
    )
    parser.add_argument(
        "--timeout", type=float, default=None, help="seconds before a measurement is stopped (default 300; --quick 60)"
    )
    parser.add_argument(
        "--runs",
        type=_runs,
        default=None,
        metavar="N",
        help="how many fresh children time each call under a second, the fastest kept (default 9; --quick 1)",
    )
    return parser.parse_args(argv)


def write_json(path, data):
    text = json.dumps(data, indent=1, ensure_ascii=False, default=str)
    if path == "-":
        print(text)
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    temporary = f"{path}.tmp{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(temporary, path)


def main(argv=None):
    args = parse_args(argv)
    plan = dict(QUICK if args.quick else FULL)
    if args.scaling_sizes:
        plan["scaling_sizes"] = sorted(args.scaling_sizes)
    if args.timeout:
        plan["timeout"] = plan["pathological_timeout"] = args.timeout
    if args.runs:
        plan["short_call_runs"] = args.runs
    peers = adapters.installed_peers()
    env = environment(peers)
    tables = args.json != "-"
    if tables:
        print("bytepair benchmarks: " + ", ".join(f"{k} {v}" for k, v in env.items()))
        print("ratio = peer time / bytepair time in this run (above 1: bytepair is faster); peak MB = growth of the")
        print(
            "child's resident-set high-water mark during the call; tie-breaking differs between trainers, so merges differ"
        )
    bench = Bench(args, plan)
    warm_up(args.pattern, peers)
    started = time.perf_counter()
    for section in SECTIONS:
        if section in args.only:
            for bench.repeat_pass in range(plan["short_call_runs"]):
                globals()[f"section_{section}"](bench, peers)
            bench.repeat_pass = 0
            if tables:
                print_section(bench, section)
                sys.stdout.flush()
    goals = targets(bench)
    if tables and goals:
        print("\n== targets ==")
        for line in goals:
            print(line)
    print(f"total {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if args.json:
        used = sorted({r.corpus for r in bench.rows})
        hashes = {name: corpora.corpus(name).sha256 for name in corpora._cache if name != "mix"}
        write_json(
            args.json,
            {
                "environment": env,
                "plan": plan,
                "corpora_sha256": hashes,
                "corpora_used": used,
                "results": [r.public() for r in bench.rows],
                "targets": goals,
            },
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
