"""``bytepair sweep``: seed 000's exercises 1, 3 and 5 over several vocabulary sizes.

It trains once, at the largest vocabulary size (default 300, 500, 1,000, 2,000, 8,000), on a
prefix of train (alphabet from all splits), and takes every smaller size as the prefix of that
merge list (``Tokenizer.prefix``): BPE training is greedy, so the first merges are what a
training run at the smaller size learns. With ``check_prefixes`` (the default) each smaller
size is also trained on its own and must give the same fingerprint. For each size it measures:
training time, the train split's length in tokens, compression (characters per token) on the
validation split (text the tokenizer did not learn from; on train too, in the JSON), the
longest learned tokens, the embedding table's size (vocab x dim), how many characters the first
``context`` tokens of validation cover, and how rare words split. A first row is the character tokenizer (same alphabet, no merges) as
the baseline. Output: a table, a JSON file, and a PNG of compression and embedding size
against vocabulary size (matplotlib, imported only to draw it).

It reads every split into memory (it is an analysis of a corpus you can train a small GPT
on; ``bytepair prepare`` is the command that streams large ones). It writes no token files.

Example:
    >>> from bytepair.datasets import find_split_files                                   # doctest: +SKIP
    >>> result = sweep(files=find_split_files("data/wikitext-2"), vocab_sizes=[300, 500])  # doctest: +SKIP
    >>> [row.vocab_size for row in result.rows]                                          # doctest: +SKIP
    [283, 300, 500]
"""

from __future__ import annotations

import functools
import importlib.util
import io
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..threads import renamed_workers
from .errors import DatasetError, MissingDependencyError

DEFAULT_VOCAB_SIZES = (300, 500, 1_000, 2_000, 8_000)
RARE_WORDS = ("electromagnetism", "neurocomputational", "uncharacteristically")


@dataclass
class SweepRow:
    """One tokenizer of the sweep; ``requested`` is None for the character baseline."""

    requested: int | None
    vocab_size: int
    merges: int
    train_seconds: float
    encode_seconds: float
    train_tokens: int
    train_characters: int
    compression: float
    embedding_parameters: int
    context_characters: int | None
    longest: list
    words: dict
    val_tokens: int | None = None  # the validation split (or test, if no validation), whole
    val_characters: int | None = None
    val_compression: float | None = None
    prefix_of: int | None = None  # taken as a prefix of the tokenizer trained at this size


@dataclass
class SweepResult:
    rows: list
    config: dict

    def to_json(self):
        return json.dumps({"config": self.config, "rows": [asdict(r) for r in self.rows]}, indent=2, ensure_ascii=False)


def sweep(
    *,
    files=None,
    texts=None,
    vocab_sizes=DEFAULT_VOCAB_SIZES,
    dim=128,
    context=128,
    words=RARE_WORDS,
    cleaning="none",
    mode="char",
    max_chars=500_000,
    longest=5,
    num_threads=None,
    log=None,
    workers=None,
    check_prefixes=True,
    **train_options,
):
    """Train at the largest size in ``vocab_sizes``, take the others as prefixes, and measure
    each; returns a ``SweepResult``.

    ``files``/``texts``, ``cleaning``, ``mode``, ``max_chars``, ``num_threads`` (``workers``: its deprecated old name) and
    ``train_options`` mean what they mean for ``prepare``. ``log`` (e.g. ``print``) gets one
    line per finished size. ``check_prefixes``: also train each smaller size on its own and
    raise ``TrainingError`` if the prefix differs from it.
    """
    from bytepair.tokenizer import Tokenizer

    from .prepare import base_alphabet, read_resident, split_sources

    sizes = _check_sizes(vocab_sizes, dim, context)
    num_threads = renamed_workers(num_threads, workers, "sweep")
    train_options["num_threads"] = num_threads
    sources = split_sources(files, texts, cleaning)
    splits = read_resident(sources, float("inf"))
    alphabet = base_alphabet(sources, splits, train_options.get("normalization"), 0)
    floor = 256 if mode == "byte" else len(alphabet)  # the tokens before any merge
    if sizes[0] < floor:
        raise DatasetError(
            f"vocab size {sizes[0]} is below the {floor:,} tokens of the base alphabet ({mode} mode, before any "
            f"merge); give sizes of at least {floor:,}"
        )
    train_text = splits["train"] if max_chars is None else splits["train"][:max_chars]
    probe = splits.get("val", splits.get("test"))
    char_tokenizer = Tokenizer(mode="char", base_tokens=alphabet, normalization=train_options.get("normalization"))
    measure = functools.partial(
        _measure,
        train_text=splits["train"],
        probe=probe,
        dim=dim,
        context=context,
        words=words,
        longest=longest,
        num_threads=num_threads,
    )
    rows = [measure(char_tokenizer, None, 0.0)]
    started = time.perf_counter()
    largest = _train(train_text, mode, sizes[-1], alphabet, train_options)
    largest_seconds = time.perf_counter() - started
    for size in sizes:
        started = time.perf_counter()
        tokenizer = _prefix(largest, size)
        seconds = largest_seconds if tokenizer is largest else time.perf_counter() - started
        if check_prefixes and tokenizer is not largest:
            _check_prefix(tokenizer, _train(train_text, mode, size, alphabet, train_options), sizes[-1])
        row = measure(tokenizer, size, seconds)
        row.prefix_of = None if tokenizer is largest else sizes[-1]
        rows.append(row)
        if log is not None:
            how = f"trained in {row.train_seconds:.2f}s" if tokenizer is largest else f"prefix of {sizes[-1]}"
            checked = " (equals its own training)" if check_prefixes and tokenizer is not largest else ""
            log(f"vocab {size}: {how}{checked}, {row.train_tokens:,} train tokens")
    config = {
        "mode": mode,
        "max_chars": max_chars,
        "train_characters": len(train_text),
        "dim": dim,
        "context": context,
        "cleaning": cleaning,
        "sources": {name: s.describe() for name, s in sources.items()},
        "context_split": "val" if "val" in splits else "test" if "test" in splits else None,
        "check_prefixes": check_prefixes,
        **{k: v for k, v in train_options.items() if k not in ("verbose", "progress")},
    }
    return SweepResult(rows, config)


def _check_sizes(vocab_sizes, dim, context):
    sizes = sorted(set(vocab_sizes))
    if not sizes or any(not isinstance(s, int) or s < 1 for s in sizes):
        raise DatasetError(f"vocab_sizes must be positive integers, not {list(vocab_sizes)!r}")
    for name, value in (("dim", dim), ("context", context)):
        if not isinstance(value, int) or value < 1:
            raise DatasetError(f"{name} must be a positive integer, not {value!r}")
    return sizes


def _prefix(largest, size):
    """``largest.prefix(size)``, or ``largest`` itself when it has no more tokens than ``size``
    (training stopped early at ``min_frequency``, as a separate run at ``size`` would)."""
    learned = largest.vocab_size - len(largest.special_tokens) - (256 if largest.byte_fallback else 0)
    return largest if size >= learned else largest.prefix(size)


def _check_prefix(prefix, trained, largest_size):
    from bytepair.errors import TrainingError

    if prefix.fingerprint != trained.fingerprint:
        raise TrainingError(
            f"the first merges of the {largest_size}-token training differ from a training at "
            f"{trained.vocab_size} tokens (fingerprints {prefix.fingerprint[:12]} and {trained.fingerprint[:12]}); "
            "this is a bug in bytepair, please report it; rerun with --no-check-prefixes to sweep anyway"
        )


def _train(text, mode, size, alphabet, train_options):
    from bytepair.train import train

    options = dict(train_options)
    options.setdefault("progress", False)
    return train(text, mode=mode, vocab_size=size, base_tokens=alphabet if mode == "char" else None, **options)


def _measure(tokenizer, requested, train_seconds, *, train_text, probe, dim, context, words, longest, num_threads):
    from bytepair.errors import UnknownCharactersError
    from bytepair.report import longest_tokens

    from .blocks import ENCODE_BLOCK_CHARS
    from .encode import encode_text

    started = time.perf_counter()
    train_ids = encode_text(tokenizer, train_text, num_threads=num_threads, block_chars=ENCODE_BLOCK_CHARS)
    covered = val_ids = None
    if probe is not None:
        val_ids = encode_text(tokenizer, probe, num_threads=num_threads, block_chars=ENCODE_BLOCK_CHARS)
        covered = sum(1 for byte in tokenizer.decode_bytes(val_ids[:context]) if byte & 0xC0 != 0x80)
    encode_seconds = time.perf_counter() - started
    pieces = {}
    for word in words:
        try:
            pieces[word] = tokenizer.encode_tokens(word)
        except UnknownCharactersError:
            pieces[word] = None
    return SweepRow(
        requested=requested,
        vocab_size=tokenizer.vocab_size,
        merges=len(tokenizer.merges),
        train_seconds=round(train_seconds, 4),
        encode_seconds=round(encode_seconds, 4),
        train_tokens=len(train_ids),
        train_characters=len(train_text),
        compression=round(len(train_text) / len(train_ids), 4) if len(train_ids) else 0.0,
        embedding_parameters=tokenizer.vocab_size * dim,
        context_characters=covered,
        longest=[[token_id, token] for token_id, token in longest_tokens(tokenizer, longest)]
        if tokenizer.merges
        else [],
        words=pieces,
        val_tokens=None if val_ids is None else len(val_ids),
        val_characters=None if probe is None else len(probe),
        val_compression=round(len(probe) / len(val_ids), 4) if probe is not None and len(val_ids) else None,
    )


# -- output ---------------------------------------------------------------------------------


def table(result):
    """The sweep as printable lines: one row per tokenizer, then how each rare word splits."""
    dim, context = result.config["dim"], result.config["context"]
    header = (
        f"{'vocab':>7} {'merges':>6} {'train s':>8} {'train tokens':>13} {'compression':>11} {'on val':>7} "
        f"{f'embedding x{dim}':>15} {f'chars in {context} val tokens':>22}  longest tokens"
    )
    lines = [header]
    for row in result.rows:
        name = f"{row.vocab_size}" + ("*" if row.requested is None else "")
        covered = "-" if row.context_characters is None else f"{row.context_characters:,}"
        longest = ", ".join(repr(token) for _, token in row.longest) or "(characters)"
        on_val = "-" if row.val_compression is None else f"{row.val_compression:.2f}x"
        seconds = "prefix" if row.prefix_of is not None else f"{row.train_seconds:.2f}"
        lines.append(
            f"{name:>7} {row.merges:>6} {seconds:>8} {row.train_tokens:>13,} "
            f"{row.compression:>10.2f}x {on_val:>7} {row.embedding_parameters:>15,} {covered:>22}  {longest}"
        )
    lines.append("* the character tokenizer: the same alphabet, no merges")
    trained = [row for row in result.rows if row.requested is not None and row.prefix_of is None]
    if trained and any(row.prefix_of is not None for row in result.rows):
        checked = " (each checked against its own training)" if result.config.get("check_prefixes") else ""
        lines.append(f"prefix: the first merges of the {trained[-1].vocab_size}-token training{checked}")
    lines.append("compression: characters per token on train; on val: on the validation split, not trained on")
    for word in result.rows[0].words:
        lines.append(f"{word!r}:")
        for row in result.rows:
            pieces = row.words[word]
            shown = "(characters outside the alphabet)" if pieces is None else f"{len(pieces):>2} tokens {pieces!r}"
            lines.append(f"  {row.vocab_size:>6}  {shown}")
    return lines


def check_plotting():
    """Raise ``MissingDependencyError`` now, before any work, if matplotlib is not installed."""
    if importlib.util.find_spec("matplotlib") is None:
        raise MissingDependencyError(
            "the sweep plot needs matplotlib, which is not installed: pip install 'bytepair[plot]' "
            "(or pass --no-plot for the table and JSON only)"
        )


def plot_png(result):
    """Compression and embedding size against vocabulary size, as PNG bytes.

    Uses matplotlib's object API with the Agg canvas, so no global backend is changed.
    """
    check_plotting()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    sizes = [row.vocab_size for row in result.rows]
    figure = Figure(figsize=(10, 4), dpi=100)
    FigureCanvasAgg(figure)
    left, right = figure.subplots(1, 2)
    on_val = all(row.val_compression is not None for row in result.rows)
    left.plot(sizes, [row.val_compression if on_val else row.compression for row in result.rows], marker="o")
    left.set(
        xscale="log",
        xlabel="vocabulary size",
        ylabel=f"characters per token ({'validation' if on_val else 'train'})",
        title="compression",
    )
    right.plot(sizes, [row.embedding_parameters for row in result.rows], marker="o", color="tab:orange")
    right.set(
        xscale="log",
        yscale="log",
        xlabel="vocabulary size",
        ylabel=f"parameters (vocab x {result.config['dim']})",
        title="embedding table",
    )
    for axes in (left, right):
        axes.grid(True, which="both", alpha=0.3)
        # label the sizes measured, not log-scale minor ticks (they overlap)
        axes.xaxis.set_minor_formatter(NullFormatter())
        axes.set_xticks(sizes[1:], labels=[f"{size:,}" for size in sizes[1:]], rotation=45)
    left.annotate(
        "characters",
        (sizes[0], result.rows[0].val_compression if on_val else result.rows[0].compression),
        textcoords="offset points",
        xytext=(6, -4),
        fontsize=8,
    )
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def write_outputs(result, folder, *, plot=True):
    """Write ``sweep.json`` (and ``sweep.png``) atomically into ``folder``; returns the paths."""
    from bytepair._io import write_bytes_atomic, write_text_atomic

    folder = Path(folder)
    paths = {"json": folder / "sweep.json"}
    write_text_atomic(paths["json"], result.to_json() + "\n")
    if plot:
        png = plot_png(result)
        paths["png"] = write_bytes_atomic(folder / "sweep.png", png)
    return paths
