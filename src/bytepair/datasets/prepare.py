"""``bytepair prepare``: from a corpus's splits to a tokenizer and np.memmap-ready token streams.

The steps, seed 000's program made fast and safe:

    1. read every split (train, val, test), cleaned if asked (``wikitext.clean_text``);
    2. take the base alphabet from all splits (character mode), so that every split encodes;
    3. train on the first ``max_chars`` characters of train only (merges never see val/test),
       or take an existing tokenizer (``tokenizer=``, anything ``bytepair.load`` takes);
    4. if asked (``char_baseline``), build a character-level tokenizer with the same alphabet
       and no merges, for comparison;
    5. encode every split with each tokenizer on a thread pool (the engine releases the GIL),
       in blocks cut where the ids stay exactly those of the whole split (``blocks.py``);
    6. check every id range (0 <= id < vocab_size) and the round trip of every split;
    7. write the files below into a hidden staging folder beside OUT, then switch it into
       place in one step (``files.switch_folder``), ``meta.json`` written last;
    8. print seed 000's report.

The layout (``bytepair.gpt`` reads exactly this)::

    OUT/tokenizer.bytepair.json               the BPE tokenizer (trained, or the one given;
                                              a published tiktoken one as OUT/NAME.tiktoken)
    OUT/encoded_bpe/{train,val,test}.bin      flat token ids, native byte order, for np.memmap
    OUT/encoded_bpe/meta.json
    OUT/encoded_bpe/{train,val,test}_ids.pt   torch.long tensors, with pt_files (--pt)
    OUT/encoded_char/tokenizer.bytepair.json  with char_baseline (--char-baseline):
    OUT/encoded_char/{train,val,test}.bin     character-level, same alphabet, no merges
    OUT/encoded_char/meta.json

``meta.json``: ``{"tokenizer": path relative to the folder, "fingerprint", "vocab_size",
"dtype": "uint16"|"uint32", "splits": {name: {"tokens", "characters", "bytes", "file"}}}`` plus
what produced it (``encoding``, ``mode``, ``pattern``, ``normalization``, ``cleaning``,
``sources``, ``train_characters`` (null for a given tokenizer), ``tokenizer_source``,
``bytepair_version``). ``characters`` and ``bytes`` count the text the ids decode to (after
normalization, if any).

OUT is replaced as a whole: a reader sees the complete old output or the complete new one,
never a mix. An interrupted or failed run (an exception, Ctrl-C, SIGTERM) removes its staging
folder; one killed outright leaves it, and the next run removes it. OUT must be empty, absent
or an earlier output, since everything else in it would be replaced. This module does not
download (``wikitext.py``) and does not train a model (``bytepair.gpt``).

Example:
    >>> from bytepair.datasets import find_split_files                             # doctest: +SKIP
    >>> result = prepare("prepared", files=find_split_files("data/wikitext-2"))  # doctest: +SKIP
    >>> result.splits["train"].bpe_tokens < result.splits["train"].characters     # doctest: +SKIP
    True
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..artifact import ARTIFACT_NAME
from ..threads import renamed_workers
from .blocks import ENCODE_BLOCK_CHARS, WHOLE_SPLIT_CHARS, SplitSource, cut_for, fitting_block, newline_cut, safe_cut
from .encode import encode_all, normalized
from .errors import DatasetError, PrepareError
from .files import FolderLock, held_interrupts, remove_stale, sibling, sigterm_as_interrupt, switch_folder
from .wikitext import CLEANINGS, SPLITS

SAMPLE = "Artificial intelligence and machine learning"


@dataclass
class SplitResult:
    """What one split became: its text's size and the token counts and id ranges.

    ``char_tokens`` is None when no character baseline was asked for.
    """

    characters: int = 0
    bytes: int = 0
    bpe_tokens: int = 0
    char_tokens: int | None = None
    bpe_ids: tuple = (None, None)  # (min, max) over the split; None when it is empty


@dataclass
class Prepared:
    """The result of ``prepare``: the tokenizers, per-split figures, timings and the report.

    ``char_tokenizer`` is None without ``char_baseline``; ``train_characters`` is None when an
    existing tokenizer was given.
    """

    out: Path
    tokenizer: object
    char_tokenizer: object
    splits: dict
    train_characters: int | None
    seconds: dict = field(default_factory=dict)
    report: list = field(default_factory=list)


# What ``prepare`` trains with when it is not given a tokenizer; with one, these must stay as
# they are (they would silently do nothing).
TRAINING_DEFAULTS = {"mode": "char", "vocab_size": 500, "max_chars": 500_000}
# What a folder written by ``prepare`` holds at its top level (and the hidden temporary files
# that versions before the staging folder could leave after a kill).
LAYOUT = (ARTIFACT_NAME, "tokenizer.json", "encoded_bpe", "encoded_char")


def prepare(
    out,
    *,
    files=None,
    texts=None,
    tokenizer=None,
    vocab_dir=None,
    cleaning="none",
    mode="char",
    vocab_size=500,
    max_chars=500_000,
    num_threads=None,
    char_baseline=False,
    pt_files=False,
    block_chars=ENCODE_BLOCK_CHARS,
    whole_split_chars=WHOLE_SPLIT_CHARS,
    progress=None,
    log=print,
    workers=None,
    **train_options,
):
    """Train on ``train`` (or take ``tokenizer``), encode every split, write ``out`` (the layout
    in the module docstring), print the report through ``log``.

    - ``files``: ``{"train": path, "val": path, "test": path}`` (``val``/``test`` optional), read
      as UTF-8, block by block when large; or ``texts``: the same with strings.
    - ``tokenizer``: encode with this tokenizer instead of training one: a ``Tokenizer`` or
      anything ``bytepair.load`` takes (a published name, found in ``vocab_dir`` /
      ``$BYTEPAIR_VOCAB_DIR`` / the cache, or a file). The training options must then be left out.
    - ``cleaning``: ``"none"`` (faithful, default), ``"clean"`` or ``"clean-no-headings"``.
    - ``mode``, ``vocab_size``, ``max_chars`` (None: all of train) and ``train_options``
      (``min_frequency``, ``pattern``, ``normalization``, ``special_tokens``, ``byte_fallback``,
      ``verbose``) go to ``bytepair.train``; the base alphabet always comes from all splits.
    - ``num_threads``: counting and encoding threads (default: every core; ``workers`` is its
      deprecated old name).
    - ``char_baseline``: also write ``encoded_char/`` (a character-level encoding of the same
      text, for ``bytepair gpt compare``); ``pt_files``: also write ``*_ids.pt`` (needs torch).
      Both are off by default: together they take about four times the space of the BPE ``.bin``.
    - ``block_chars``: the largest block encoded at once; ``whole_split_chars``: splits up to
      this size are read into memory once. Larger ones are streamed from their files; without
      a pattern, training then treats each block as a document (no merge is learned across a
      block boundary), and with a normalization but no pattern their ids near a cut may
      differ from encoding whole. Everything else is exact (``blocks.py``).

    Returns a ``Prepared``. Raises ``DatasetError`` for missing or unreadable splits or an
    ``out`` that holds other files, ``bytepair.errors.TrainingError`` for impossible training
    settings, ``UsageError`` for a tokenizer with training options, and ``PrepareError`` if an
    encoded split fails its own check. SIGTERM stops it as Ctrl-C does (``KeyboardInterrupt``).
    """
    from bytepair.tokenizer import Tokenizer

    sources = split_sources(files, texts, cleaning)
    num_threads = renamed_workers(num_threads, workers, "prepare")
    out = output_folder(out)
    given = dict(mode=mode, vocab_size=vocab_size, max_chars=max_chars)
    if tokenizer is not None:
        _check_no_training_options(given, train_options)
    options = dict(train_options, mode=mode, vocab_size=vocab_size, num_threads=num_threads)
    options.setdefault("progress", progress)
    if pt_files and importlib.util.find_spec("torch") is None:
        from bytepair.errors import MissingDependencyError

        raise MissingDependencyError("the *_ids.pt files need torch: pip install torch, or leave out pt_files (--pt)")
    timer, lines = Timer(), Report(log)

    with FolderLock(out), sigterm_as_interrupt():
        if tokenizer is not None:
            from .corpus import resolve_tokenizer

            with timer("load"):
                tokenizer, tokenizer_name = resolve_tokenizer(tokenizer, vocab_dir)
            _check_savable(tokenizer)
        with timer("read"):
            resident = read_resident(sources, whole_split_chars)
            # byte mode's base is the 256 bytes: its alphabet would be read and not used
            needs_alphabet = char_baseline or (tokenizer is None and options.get("mode") == "char")
            normalization = tokenizer.normalization if tokenizer is not None else options.get("normalization")
            alphabet = base_alphabet(sources, resident, normalization, block_chars) if needs_alphabet else None
        for name, source in sources.items():
            size = f"{len(resident[name]):,} characters" if name in resident else "streamed"
            lines(f"{name:<5} {size:>22}  {source.describe()}")
        if alphabet is not None:
            lines(f"base alphabet: {len(alphabet)} characters, from all splits")
        if tokenizer is None:
            with timer("train"):
                tokenizer, train_characters = _train(
                    sources["train"], resident.get("train"), alphabet, max_chars, block_chars, options
                )
            shown = {k: v for k, v in options.items() if k not in ("verbose", "progress") and v not in (None, False)}
            lines(
                f"trained on {train_characters:,} characters of train: "
                + ", ".join(f"{k}={v!r}" for k, v in shown.items())
            )
            lines(
                f"vocabulary {tokenizer.vocab_size} tokens ({len(tokenizer.merges)} merges) in {timer.seconds['train']:.2f}s; fingerprint {tokenizer.fingerprint}"
            )
            tokenizer_name = None
        else:
            train_characters = None
            lines(
                f"tokenizer {tokenizer_name or 'given'}: vocabulary {tokenizer.vocab_size} tokens; fingerprint {tokenizer.fingerprint} (nothing trained)"
            )
        tokenizers = {"bpe": tokenizer}
        if char_baseline:
            tokenizers["char"] = Tokenizer(mode="char", base_tokens=alphabet, normalization=normalization)

        context = dict(
            cleaning=cleaning,
            sources={n: s.describe() for n, s in sources.items()},
            train_characters=train_characters,
            tokenizer_source=tokenizer_name,
        )
        remove_stale(out)
        staging = sibling(out, "partial")
        staging.mkdir()
        try:
            splits = _encode_and_write(
                staging,
                sources,
                resident,
                tokenizers,
                context,
                num_threads,
                pt_files,
                block_chars,
                options["progress"],
                timer,
            )
            sync_tree(staging)
            with held_interrupts():
                switch_folder(staging, out)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    result = Prepared(out, tokenizer, tokenizers.get("char"), splits, train_characters, timer.seconds)
    _report(lines, result, num_threads, pt_files)
    result.report = lines.lines
    return result


def output_folder(out):
    """``out`` as an absolute path with its links resolved (the staging folder and the lock
    go beside the real folder), checked replaceable: not the current folder, and absent,
    empty, or holding only what ``prepare`` writes. Raises ``DatasetError`` otherwise, before
    any work.
    """
    out = Path(os.path.realpath(out))
    here = Path(os.path.realpath(os.getcwd()))
    if out == here or out in here.parents:
        # the switch would leave this process in the removed old folder
        raise DatasetError(
            f"output folder {str(out)!r} is the current folder (or holds it), and prepare replaces it whole; "
            "give a folder inside it instead, e.g. -o prepared"
        )
    if out.exists() and not out.is_dir():
        raise DatasetError(f"output {str(out)!r} is a file; give a folder")
    if out.is_dir():
        foreign = sorted(
            p.name
            for p in out.iterdir()
            if p.name not in LAYOUT and not p.name.endswith(".tiktoken") and not _old_temporary(p.name)
        )
        if foreign:
            shown = ", ".join(map(repr, foreign[:5])) + (", ..." if len(foreign) > 5 else "")
            raise DatasetError(
                f"output folder {str(out)!r} holds files prepare did not write ({shown}), and prepare replaces the "
                "whole folder; choose another output folder (-o), or move them out"
            )
    return out


def _old_temporary(name):
    # the temporary names ``_io.staging_path`` gave files staged in place (before the staging folder)
    return name.startswith(".") and name.endswith(".tmp")


def _check_no_training_options(given, train_options):
    from bytepair.errors import UsageError

    changed = sorted(k for k, v in given.items() if v != TRAINING_DEFAULTS[k])
    changed += sorted(
        k for k, v in train_options.items() if k not in ("progress", "verbose") and v not in (None, False)
    )
    if changed:
        flags = ", ".join("--special" if k == "special_tokens" else f"--{k.replace('_', '-')}" for k in changed)
        raise UsageError(
            f"a tokenizer was given, so nothing is trained: leave out the training options ({flags}), or leave out --tokenizer to train one"
        )


def sync_tree(folder):
    """Flush every file under ``folder`` and the folders themselves to disk (before a switch,
    so that a power loss right after it cannot leave the new folder with empty files)."""
    for path in sorted(Path(folder).rglob("*"), reverse=True) + [Path(folder)]:
        flags = os.O_RDONLY | (os.O_DIRECTORY if path.is_dir() else 0)
        try:
            descriptor = os.open(path, flags)
        except OSError:
            continue
        try:
            os.fsync(descriptor)
        except OSError:
            pass  # a file system that cannot sync folders
        finally:
            os.close(descriptor)


def _train(source, resident_text, alphabet, max_chars, block_chars, options):
    """The BPE tokenizer, trained on the first ``max_chars`` characters of train only."""
    from bytepair.train import train

    training_input, counted = _training_input(source, resident_text, max_chars, options.get("pattern"), block_chars)
    tokenizer = train(training_input, base_tokens=alphabet if options["mode"] == "char" else None, **options)
    return tokenizer, counted()


def _encode_and_write(
    folder, sources, resident, tokenizers, context, num_threads, pt_files, block_chars, progress, timer
):
    """Encode every split with each tokenizer, check them, and write the layout into ``folder``
    (the staging folder: nothing in it is seen until it is switched into place).
    """
    folders = {kind: folder / f"encoded_{kind}" for kind in tokenizers}
    for path in folders.values():
        path.mkdir()
    tokenizer_file = save_tokenizer(tokenizers["bpe"], folder)
    if "char" in tokenizers:
        tokenizers["char"].save(folders["char"] / ARTIFACT_NAME)
    plans = {
        (kind, name): (tok, folders[kind] / f"{name}.bin", _blocks_for(source, resident, tok, block_chars, num_threads))
        for kind, tok in tokenizers.items()
        for name, source in sources.items()
    }
    torch_import = _import_in_background("torch") if pt_files else None
    with timer("encode"):
        total = len(tokenizers) * sum(_size(s, resident) for s in sources.values())
        counts = encode_all(plans, num_threads=num_threads, progress=progress, total=total)
    splits = _split_results(sources, counts)
    _check_ranges(counts, tokenizers)
    with timer("write"):
        if pt_files:
            torch_import.join()
            for name in sources:
                _write_pt(plans[("bpe", name)][1], folders["bpe"] / f"{name}_ids.pt", tokenizers["bpe"].array_dtype)
        relative = {"bpe": f"../{tokenizer_file}", "char": ARTIFACT_NAME}
        for kind, tok in tokenizers.items():
            meta = _meta(kind, tok, relative[kind], {n: counts[(kind, n)] for n in sources}, context)
            (folders[kind] / "meta.json").write_text(
                json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
    return splits


def save_tokenizer(tokenizer, folder):
    """Write ``tokenizer`` into ``folder`` in a file ``bytepair.load`` rebuilds it from (same
    fingerprint); return the file's name (``tokenizer_file_name``)."""
    from bytepair.formats import to_huggingface, to_tiktoken

    name = tokenizer_file_name(tokenizer)
    if name == ARTIFACT_NAME:
        tokenizer.save(folder / name)
    elif name.endswith(".tiktoken"):
        to_tiktoken(tokenizer, folder / name)
    else:
        to_huggingface(tokenizer, folder / name)
    return name


def _check_savable(tokenizer):
    """prepare writes its tokenizer into the folder beside the ids (``save_tokenizer``); refuse one
    that no format takes (a SentencePiece model) before any text is read."""
    from bytepair.errors import UsageError

    refusal = (
        tokenizer.model.export_refusal("huggingface") if tokenizer_file_name(tokenizer) == "tokenizer.json" else None
    )
    if refusal is not None:
        raise UsageError(
            f"prepare writes its tokenizer into the output folder, and {refusal.split(';')[0]}, which no tokenizer "
            "file holds; encode the splits with `bytepair encode-corpus FILES -t TOKENIZER -o OUT` instead, which "
            "records the tokenizer by name"
        )


def tokenizer_file_name(tokenizer):
    """The file ``save_tokenizer`` writes ``tokenizer`` to. bytepair's own tokenizers are saved as
    ``tokenizer.bytepair.json``; a vocabulary loaded from another library's files cannot be (its ids are
    that library's ranks), so it is written back in its own format: a published tiktoken
    encoding as ``NAME.tiktoken``, any other as a Hugging Face ``tokenizer.json``.
    """
    from bytepair.formats import TIKTOKEN_VOCABULARIES

    if tokenizer.model.export_refusal("artifact") is None:
        return ARTIFACT_NAME
    name = getattr(tokenizer, "name", None)
    if name in TIKTOKEN_VOCABULARIES and tokenizer.model.export_refusal("tiktoken") is None:
        return f"{name}.tiktoken"
    return "tokenizer.json"


# -- sources and what is read into memory ---------------------------------------------------


def split_sources(files, texts, cleaning):
    """``{"train": SplitSource, ...}`` in split order, from ``files=`` or ``texts=``, checked."""
    if (files is None) == (texts is None):
        raise DatasetError("give the splits either as files= or as texts=, not both")
    if cleaning not in CLEANINGS and cleaning is not None:
        raise DatasetError(f"unknown cleaning {cleaning!r}; use one of {', '.join(CLEANINGS)}")
    given = files if files is not None else texts
    unknown = sorted(set(given) - set(SPLITS))
    if unknown:
        raise DatasetError(f"unknown split name(s) {unknown!r}; the splits are called {', '.join(SPLITS)}")
    if "train" not in given or given["train"] is None:
        raise DatasetError("there is no 'train' split; the tokenizer is trained on it, so give one")
    sources = {}
    for name in SPLITS:
        if given.get(name) is None:
            continue
        if files is not None:
            sources[name] = SplitSource(name, given[name], cleaning=cleaning)
        else:
            sources[name] = SplitSource(name, text=given[name], cleaning=cleaning)
    return sources


def read_resident(sources, whole_split_chars):
    """The cleaned text of every split small enough to hold in memory (read once, used thrice)."""
    return {name: s.text() for name, s in sources.items() if s.size_bound() <= whole_split_chars}


def _size(source, resident):
    return len(resident[source.name]) if source.name in resident else source.size_bound()


def base_alphabet(sources, resident, normalization, block_chars):
    """Every character of every split (after normalization), sorted: the base alphabet."""
    characters = set()
    for name, source in sources.items():
        blocks = [resident[name]] if name in resident else source.blocks(block_chars, cut=newline_cut)
        for block in blocks:
            characters.update(normalized(block, normalization))
    return sorted(characters)


def _training_input(source, resident_text, max_chars, pattern, block_chars):
    """The text ``bytepair.train`` sees, and a function that says how many characters it had.

    One string when it fits in memory. Otherwise blocks of the split: with a pattern they are
    cut where pieces end (exactly the same merges); without one, each block (cut after a
    newline) is a separate document, so no merge is learned across a block boundary.
    """
    if max_chars is not None:
        text = resident_text[:max_chars] if resident_text is not None else source.prefix(max_chars)
        return text, lambda: len(text)
    if resident_text is not None:
        return resident_text, lambda: len(resident_text)
    seen = [0]

    def counted_blocks():
        for block in source.blocks(block_chars, cut=newline_cut if pattern is None else safe_cut):
            seen[0] += len(block)
            yield block

    return counted_blocks(), lambda: seen[0]


def _blocks_for(source, resident, tokenizer, block_chars, num_threads):
    """The blocks one tokenizer encodes a split in, cut where its ids stay exact
    (``blocks.cut_for``). Where no cut is exact (no pattern, but a normalization) a split in
    memory is encoded whole, and a larger one is cut after newlines (ids near a cut may differ).
    """
    in_memory = source.name in resident
    text_source = SplitSource(source.name, text=resident[source.name]) if in_memory else source
    cut = cut_for(tokenizer)
    if cut is None and in_memory:
        return iter([resident[source.name]])
    return text_source.blocks(fitting_block(block_chars, _size(source, resident), num_threads), cut=cut or newline_cut)


# -- checks, files, report ------------------------------------------------------------------


def _split_results(sources, counts):
    splits = {}
    for name in sources:
        bpe, char = counts[("bpe", name)], counts.get(("char", name))
        if char is not None and (bpe.characters, bpe.bytes) != (char.characters, char.bytes):
            raise PrepareError(
                f"split {name!r}: the BPE and character encodings cover different text; this is a bug in bytepair"
            )
        char_tokens = char.tokens if char is not None else None
        splits[name] = SplitResult(bpe.characters, bpe.bytes, bpe.tokens, char_tokens, (bpe.min_id, bpe.max_id))
    return splits


def _check_ranges(counts, tokenizers):
    """Seed 000's check: every id of every split in [0, vocab_size)."""
    for (kind, name), total in counts.items():
        size = tokenizers[kind].vocab_size
        if total.tokens and not (0 <= total.min_id and total.max_id < size):
            raise PrepareError(
                f"split {name!r} ({kind}) has ids from {total.min_id} to {total.max_id}, outside "
                f"[0, {size}); this is a bug in bytepair, please report it"
            )
        if kind == "char" and total.tokens != total.characters:
            raise PrepareError(f"split {name!r}: {total.tokens} character ids for {total.characters} characters")


def _import_in_background(module):
    """Start importing ``module`` on a thread (torch takes seconds; encoding leaves the GIL free)."""
    thread = threading.Thread(target=_try_import, args=(module,), daemon=True)
    thread.start()
    return thread


def _try_import(module):
    try:
        importlib.import_module(module)
    except ImportError:
        pass  # imported again where it is needed, which raises there


def _write_pt(bin_path, pt_path, dtype):
    """The split as a ``torch.long`` tensor, seed 000's ``{split}_ids.pt``."""
    import torch

    ids = np.fromfile(bin_path, dtype=dtype)
    torch.save(torch.from_numpy(ids.astype(np.int64)), pt_path)


def _meta(kind, tokenizer, relative, counts, context):
    from bytepair import __version__

    return {
        "tokenizer": relative,
        "fingerprint": tokenizer.fingerprint,
        "vocab_size": tokenizer.vocab_size,
        "dtype": tokenizer.array_dtype,
        "splits": {
            name: {"tokens": c.tokens, "characters": c.characters, "bytes": c.bytes, "file": f"{name}.bin"}
            for name, c in counts.items()
        },
        "encoding": kind,
        "mode": tokenizer.mode,
        "pattern": tokenizer.pattern_name or tokenizer.pattern,
        "normalization": tokenizer.normalization,
        **context,
        "bytepair_version": __version__,
    }


class Timer:
    """Seconds per named phase: ``with timer("train"): ...``."""

    def __init__(self):
        self.seconds = {}

    @contextmanager
    def __call__(self, phase):
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - started


class Report:
    """Lines printed as they come (through ``log``) and kept for the caller."""

    def __init__(self, log):
        self.log = log
        self.lines = []

    def __call__(self, line=""):
        self.lines.append(line)
        if self.log is not None:
            self.log(line)


def _report(lines, result, num_threads, pt_files):
    from bytepair.errors import UnknownCharactersError
    from bytepair.report import learned_tokens_report, sample_report, split_report

    tokenizer, seconds = result.tokenizer, result.seconds
    both = "both tokenizers" if result.char_tokenizer is not None else "the tokenizer"
    lines(
        f"encoded {len(result.splits)} splits with {both} in {seconds['encode']:.2f}s on {num_threads} threads; every round trip ok"
    )
    for name, split in result.splits.items():
        lines(split_report(name, split.characters, split.bpe_tokens))
    for name, split in result.splits.items():
        low, high = split.bpe_ids
        lines(
            f"{name:<5} ids: {split.bpe_tokens:,} tokens, min={low}, max={high}, all < vocab_size {tokenizer.vocab_size}"
        )
    train = result.splits["train"]
    lines(f"character token count: {train.characters:,}")
    lines(f"BPE token count:       {train.bpe_tokens:,}")
    if train.bpe_tokens:
        lines(f"compression factor:    {train.characters / train.bpe_tokens:.2f}x")
        lines(f"token-count reduction: {100 * (1 - train.bpe_tokens / train.characters):.2f}%")
    if result.train_characters is not None:
        for line in learned_tokens_report(tokenizer):
            lines(line)
    try:
        for line in sample_report(tokenizer, SAMPLE):
            lines(line)
    except UnknownCharactersError as error:
        lines(f"sample {SAMPLE!r} not shown: {error}")
    extras = ", *_ids.pt" if pt_files else ""
    char = f", {result.out / 'encoded_char'}" if result.char_tokenizer is not None else ""
    lines(
        f"wrote {result.out / tokenizer_file_name(tokenizer)}, {result.out / 'encoded_bpe'} ({tokenizer.array_dtype} .bin{extras}){char}"
    )
    total = sum(seconds.values())
    lines("time: " + ", ".join(f"{phase} {value:.2f}s" for phase, value in seconds.items()) + f", total {total:.2f}s")
