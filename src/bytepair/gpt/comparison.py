"""The fair comparison: any set of tokenizations of the same text, same architecture, one budget.

What is compared: two or more token streams of the same text (char, BPE 500, BPE 2,000,
cl100k...), each a folder written by ``bytepair prepare`` (``encoded_<kind>/``; a prepared
folder itself stands for its ``encoded_char/`` and ``encoded_bpe/``) or by ``bytepair
encode-corpus`` (shards). How the runs are made equal:

- the same text (checked here: the same characters and bytes in every split, and the same
  bytes decoded at the start of every split and over the evaluated spans), the same
  architecture, optimizer, schedule shape and seed;
- the same budget of training *characters*, *bytes* or *seconds*, not tokens or steps: all use
  the same batch shape (``batch_size`` windows of ``block_size`` tokens, so the same compute
  per step), and each runs ``round(budget / (batch_size x block_size x characters (or bytes)
  per token))`` steps, so a tokenizer whose tokens cover more text takes proportionally fewer
  steps. With ``seconds``, the steps come from the time of a few trial steps of each model, so
  each trains for about that many seconds. Warmup is the same fraction of each run (5%);
- the same yardstick: bits per byte and per character over exactly the same validation (and
  test) text, found by aligning all the token streams on a common boundary
  (``data.aligned_spans``).

Per-token perplexity is reported too, with the warning that it does not compare across
tokenizers. Wall time (training steps only, and in all) is reported, not equalised.

Does: train each model, evaluate, write ``comparison.json``, ``comparison.txt`` and
``comparison.png`` (validation bits per byte against training bytes; matplotlib, imported only
here). Does not: encode the data (``bytepair prepare`` and ``encode-corpus`` do).
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path

from bytepair._io import write_atomic, write_text_atomic
from bytepair.datasets.shards import META_FORMAT
from bytepair.errors import TokenIdError
from bytepair.gpt.checkpoint import checkpoint_file
from bytepair.gpt.data import adds_dummy_prefix, aligned_spans, load_data
from bytepair.gpt.errors import (
    CheckpointError,
    GPTSettingError,
    MissingDependencyError,
    PreparedDataError,
)
from bytepair.gpt.evaluation import Evaluation, evaluate_span, format_bits
from bytepair.gpt.model import GPTConfig, check_positive_int
from bytepair.gpt.training import (
    TrainConfig,
    last_validation,
    new_run,
    resolve_device,
    train_step,
    train_until_done,
)

# Warmup as a share of each run, not a step count: equal text, not equal steps.
WARMUP_FRACTION = 0.05
DEFAULT_CHARACTERS = 1_000_000
BUDGET_UNITS = ("characters", "bytes", "seconds")
# A ``seconds`` budget times this many steps of each model (after one untimed step that pays
# the one-off costs of the first forward and backward pass) to fix its number of steps.
TIMED_STEPS = 3
# Bytes decoded at the start of every split of every input to check that they hold the same text
# (counts alone would pass two different texts of equal length).
CHECKED_PREFIX_BYTES = 1 << 16
PERPLEXITY_NOTE = (
    "per-token perplexity does not compare across tokenizers (a token covers more or less "
    "text); compare bits per byte or per character"
)
EQUALIZATION_NOTE = (
    "same architecture, batch shape (batch_size x block_size tokens per step), optimizer, seed "
    "and training budget; each model runs round(budget / (tokens per step x characters or bytes "
    "per token)) steps (with a budget in seconds: the steps that take that long, timed on a few "
    "steps), so a tokenizer whose tokens cover more text takes fewer steps"
)


@dataclass(frozen=True)
class ComparedModel:
    """One tokenization of the comparison and the model trained on it."""

    name: str
    folder: Path
    vocab_size: int
    parameters: int
    fingerprint: str
    steps: int
    tokens_per_step: int
    characters_per_token: float
    bytes_per_token: float
    characters: float
    bytes: float
    train_seconds: float
    wall_seconds: float
    validation: Evaluation
    test: Evaluation | None  # None when an input has no test split (encode-corpus shards)
    curve: list
    checkpoint: Path
    spans: dict  # split -> data.Span: the tokens scored, start:end of the split's stream

    def to_dict(self) -> dict:
        return {
            "folder": str(self.folder),
            "vocab_size": self.vocab_size,
            "parameters": self.parameters,
            "tokenizer_fingerprint": self.fingerprint,
            "steps": self.steps,
            "tokens_per_step": self.tokens_per_step,
            "characters_per_token": self.characters_per_token,
            "bytes_per_token": self.bytes_per_token,
            "characters_processed": self.characters,
            "bytes_processed": self.bytes,
            "train_seconds": self.train_seconds,
            "wall_seconds": self.wall_seconds,
            "val": self.validation.to_dict(),
            "test": None if self.test is None else self.test.to_dict(),
            "curve": self.curve,
            "checkpoint": str(self.checkpoint),
            "spans": {split: {"start": span.start, "end": span.end} for split, span in self.spans.items()},
        }


@dataclass(frozen=True)
class Comparison:
    """The models, the budget and settings they shared, and where the report files are."""

    budget: dict  # {"unit": "characters" | "bytes" | "seconds", "value": ...}
    settings: dict
    models: dict  # name -> ComparedModel, in the order given
    files: dict
    skipped: tuple = ()  # (folder, name of the model with the same tokenizer and text)

    @property
    def budget_characters(self):
        """The budget in characters, or ``None`` when it is in bytes or seconds."""
        return self.budget["value"] if self.budget["unit"] == "characters" else None

    def to_dict(self) -> dict:
        return {
            "budget": self.budget,
            "budget_characters": self.budget_characters,
            "settings": self.settings,
            "equalization": EQUALIZATION_NOTE,
            "note": PERPLEXITY_NOTE,
            "models": {name: model.to_dict() for name, model in self.models.items()},
            "skipped": [{"folder": str(folder), "same_as": name} for folder, name in self.skipped],
            "files": {kind: str(path) for kind, path in self.files.items()},
        }

    def table(self) -> str:
        """The comparison as a plain-text table (what ``comparison.txt`` holds)."""
        models = list(self.models.values())
        has_test = all(model.test is not None for model in models)
        rows = [
            ("vocabulary size", lambda m: f"{m.vocab_size:,}"),
            ("parameters", lambda m: f"{m.parameters:,}"),
            ("characters / token (train)", lambda m: f"{m.characters_per_token:.3f}"),
            ("bytes / token (train)", lambda m: f"{m.bytes_per_token:.3f}"),
            ("steps", lambda m: f"{m.steps:,}"),
            ("training characters", lambda m: f"{m.characters:,.0f}"),
            ("training bytes", lambda m: f"{m.bytes:,.0f}"),
            ("training time (s)", lambda m: f"{m.train_seconds:.1f}"),
            ("wall time with evaluation (s)", lambda m: f"{m.wall_seconds:.1f}"),
            ("val bits / byte", lambda m: format_bits(m.validation.bits_per_byte)),
            ("val bits / character", lambda m: f"{m.validation.bits_per_character:.4f}"),
        ]
        if has_test:
            rows += [
                ("test bits / byte", lambda m: format_bits(m.test.bits_per_byte)),
                ("test bits / character", lambda m: f"{m.test.bits_per_character:.4f}"),
            ]
        rows += [
            ("val tokens scored", lambda m: f"{m.validation.tokens:,}"),
            ("val loss / token (nats)", lambda m: f"{m.validation.loss_per_token:.4f}"),
            ("val perplexity / token *", lambda m: f"{m.validation.perplexity:.3f}"),
        ]
        width = max(len(label) for label, _ in rows)
        columns = [max(12, len(model.name)) for model in models]
        s = self.settings
        first = models[0]
        lines = [
            f"Same architecture, same text, {_budget_words(self.budget)} each",
            f"model: block {s['block_size']}, {s['embedding_dim']} dims, {s['num_heads']} heads, "
            f"{s['num_layers']} layers, MLP x{s['expansion_factor']}, dropout {s['dropout']}; batch "
            f"{s['batch_size']}; lr {s['learning_rate']:g} -> {s['min_learning_rate']:g}, warmup "
            f"{s['warmup_fraction']:.0%}; seed {s['seed']}; device {s['device']}",
            "",
            f"{'':<{width}}" + "".join(f"  {model.name:>{column}}" for model, column in zip(models, columns)),
        ]
        lines += [
            f"{label:<{width}}" + "".join(f"  {show(model):>{column}}" for model, column in zip(models, columns))
            for label, show in rows
        ]
        lines += ["", f"* {PERPLEXITY_NOTE}."]
        validation = (
            f"Validation: the same {first.validation.characters:,} characters "
            f"({first.validation.bytes:,} UTF-8 bytes) for every model"
        )
        if has_test:
            validation += f"; test: the same {first.test.characters:,} ({first.test.bytes:,} bytes)"
        lines.append(validation + ".")
        lines += [f"{model.name}: {model.folder}" for model in models]
        lines += [f"skipped {folder}: the same tokenizer and text as {name}" for folder, name in self.skipped]
        lines.append(f"Equalised: {EQUALIZATION_NOTE}.")
        return "\n".join(lines) + "\n"


def _budget_words(budget) -> str:
    if budget["unit"] == "seconds":
        return f"about {budget['value']:g} seconds of training"
    return f"a budget of {budget['value']:,} training {budget['unit']}"


def compare(
    data,
    out_dir="checkpoints",
    *,
    characters=None,
    bytes=None,
    seconds=None,
    batch_size=32,
    block_size=128,
    embedding_dim=128,
    num_heads=4,
    num_layers=4,
    expansion_factor=4,
    dropout=0.1,
    learning_rate=1e-3,
    min_learning_rate=1e-4,
    weight_decay=0.1,
    grad_clip=1.0,
    eval_points=10,
    eval_characters=100_000,
    eval_batch_size=32,
    seed=1337,
    device=None,
    vocab_dir=None,
    overwrite=False,
    progress=None,
) -> Comparison:
    """Train one model per tokenization in ``data`` under one budget, and compare them.

    ``data``: a folder or a list of folders, each one of: a ``bytepair prepare`` output (stands
    for its ``encoded_char/``, when written with ``--char-baseline``, and ``encoded_bpe/``), one
    ``encoded_<kind>/`` folder of it, or a ``bytepair encode-corpus`` output (shards; its
    tokenizer is found by the name in its ``meta.json``, published ones in ``vocab_dir``). All
    must encode the same text; two or more tokenizations are needed. The budget is one of
    ``characters``, ``bytes`` (UTF-8) or ``seconds`` of training per model (default: 1,000,000
    characters). Each model is named from its folder and tokenizer (``char``, ``bpe``,
    ``bpe-2000``, ``cl100k_base``...); checkpoints go to ``out_dir/<name>/``, the report to
    ``out_dir/comparison.{json,txt,png}``. ``eval_points``: validation points on each learning
    curve; ``eval_characters``: validation and test characters evaluated (``None``: all).

    Example:
        >>> result = compare(["prepared", "prepared-2000"], "comparison", bytes=2_000_000)  # doctest: +SKIP
        >>> print(result.table())  # doctest: +SKIP

    WARNING: refuses to overwrite existing checkpoints unless ``overwrite=True``.
    """
    budget = _budget(characters, bytes, seconds)
    for name, value in (
        ("batch_size", batch_size),
        ("block_size", block_size),
        ("eval_points", eval_points),
        ("eval_batch_size", eval_batch_size),
    ):
        check_positive_int(name, value)  # here, before a size of 0 divides the budget by zero
    figure_class = _matplotlib_figure()  # fail before minutes of training, not after
    device = resolve_device(device)
    out_dir = Path(out_dir)
    datasets, skipped = _open_all(data, vocab_dir)
    tables = {name: token_table(data.tokenizer) for name, data in datasets.items()}
    splits = _check_same_text(datasets, tables)
    spans = {split: _spans(datasets, split, eval_characters) for split in splits if split != "train"}
    for split, split_spans in spans.items():
        _check_same_span_text(datasets, tables, split, split_spans)
    shape = dict(
        block_size=block_size,
        embedding_dim=embedding_dim,
        num_heads=num_heads,
        num_layers=num_layers,
        expansion_factor=expansion_factor,
        dropout=dropout,
    )
    recipe = dict(
        batch_size=batch_size,
        learning_rate=learning_rate,
        min_learning_rate=min_learning_rate,
        weight_decay=weight_decay,
        grad_clip=grad_clip,
        seed=seed,
    )
    checkpoints = {name: checkpoint_file(out_dir / name) for name in datasets}
    _check_free(checkpoints, overwrite)
    models = {}
    for name, data_one in datasets.items():
        steps = _steps(budget, data_one, shape, recipe, device)
        models[name] = _train_one(
            name,
            data_one,
            steps,
            shape,
            recipe,
            spans,
            eval_points,
            eval_batch_size,
            checkpoints[name],
            device,
            progress,
        )
    settings = {
        **shape,
        **recipe,
        "eval_points": eval_points,
        "eval_characters": eval_characters,
        "warmup_fraction": WARMUP_FRACTION,
        "device": str(device),
    }
    files = {kind: out_dir / f"comparison.{kind}" for kind in ("json", "txt", "png")}
    comparison = Comparison(budget, settings, models, files, tuple(skipped))
    write_text_atomic(files["json"], json.dumps(comparison.to_dict(), indent=2) + "\n")
    write_text_atomic(files["txt"], comparison.table())
    plot_curves(comparison, files["png"], figure_class=figure_class)
    return comparison


def _budget(characters, bytes_, seconds) -> dict:
    given = {unit: value for unit, value in zip(BUDGET_UNITS, (characters, bytes_, seconds)) if value is not None}
    if len(given) > 1:
        shown = ", ".join(f"{unit}={value!r}" for unit, value in given.items())
        raise GPTSettingError(f"give one budget, not {len(given)} ({shown}): training characters, bytes or seconds")
    unit, value = next(iter(given.items()), ("characters", DEFAULT_CHARACTERS))
    if unit == "seconds":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
            raise GPTSettingError(f"seconds={value!r} must be a positive number of seconds")
    else:
        check_positive_int(unit, value)
    return {"unit": unit, "value": value}


# -- the inputs ----------------------------------------------------------------------------------


def _open_all(data, vocab_dir):
    """``({name: EncodedData}, skipped)`` for the folders of ``data``, in the order given."""
    folders = [data] if isinstance(data, str | Path) else list(data)
    if not folders:
        raise PreparedDataError("no folders to compare; give two or more prepared or encode-corpus folders")
    found, seen = [], set()
    for folder in folders:
        for one in _tokenization_folders(Path(folder)):
            if one.resolve() not in seen:  # the same folder named twice (or by a prepared folder and itself)
                seen.add(one.resolve())
                found.append(one)
    datasets, skipped = [], []
    for folder in found:
        loaded = load_data(folder, vocab_dir=vocab_dir)
        twin = next((other for other in datasets if other.fingerprint == loaded.fingerprint), None)
        if twin is not None and _split_sizes(twin) == _split_sizes(loaded):
            skipped.append((folder, twin))  # e.g. the char baselines of two prepared folders
            continue
        datasets.append(loaded)
    if len(datasets) < 2:
        shown = " ".join(repr(str(folder)) for folder in folders)
        raise PreparedDataError(
            f"{shown} holds one tokenization only ({str(found[0])!r}); compare needs two or more: give more "
            "folders (prepare or encode-corpus outputs), or run `bytepair prepare` again with --char-baseline, "
            "which writes a character baseline (encoded_char/) beside encoded_bpe/"
        )
    names = _names(datasets)
    return dict(zip(names, datasets)), [(folder, names[datasets.index(twin)]) for folder, twin in skipped]


def _tokenization_folders(folder: Path) -> list:
    """``[folder]`` for a folder with ``meta.json``; a prepared folder's ``encoded_*/`` otherwise."""
    if (folder / "meta.json").is_file():
        return [folder]
    if (folder / "encoded_bpe" / "meta.json").is_file():
        inside = sorted(path.parent for path in folder.glob("encoded_*/meta.json"))
        # the character baseline first, as a table reads: from no merges to many
        return sorted(inside, key=lambda path: path.name != "encoded_char")
    if not folder.is_dir():
        raise PreparedDataError(
            f"{str(folder)!r} is not a folder; give a folder written by `bytepair prepare` or `bytepair encode-corpus`"
        )
    raise PreparedDataError(
        f"{str(folder)!r} has no meta.json and no encoded_bpe/meta.json; give a folder written by "
        "`bytepair prepare` (or one of its encoded_*/ folders) or by `bytepair encode-corpus`"
    )


def _split_sizes(data) -> dict:
    return {name: (split.characters, split.bytes) for name, split in data.splits.items()}


def _names(datasets) -> list:
    """A short unique name per tokenization, more specific only where two would clash:
    ``bpe``, then ``bpe-2000`` (with the vocabulary size), then ``prepared-bpe-2000`` (with the
    folder it is in), then a number."""
    levels = [_name_levels(data) for data in datasets]
    chosen = [0] * len(datasets)
    for _ in range(4):
        names = [levels[i][chosen[i]] for i in range(len(datasets))]
        clashing = [i for i, name in enumerate(names) if names.count(name) > 1]
        if not clashing:
            return names
        for i in clashing:
            chosen[i] = min(chosen[i] + 1, len(levels[i]) - 1)
    names = [levels[i][chosen[i]] for i in range(len(datasets))]
    return [f"{name}-{i + 1}" if names.count(name) > 1 else name for i, name in enumerate(names)]


def _name_levels(data) -> list:
    folder = data.folder.resolve()
    meta = _meta_of(data.folder)
    if meta.get("format") == META_FORMAT:
        base, parent = _safe(Path(str(meta.get("tokenizer"))).stem.removesuffix(".bytepair")), folder.name
    else:
        kind = folder.name.removeprefix("encoded_")
        source = meta.get("tokenizer_source")
        base = _safe(Path(source).stem.removesuffix(".bytepair")) if kind == "bpe" and source else _safe(kind)
        parent = folder.parent.name
    sized = f"{base}-{data.vocab_size}"
    return [base, sized, f"{_safe(parent)}-{sized}"]


def _meta_of(folder: Path) -> dict:
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _safe(name: str) -> str:
    """A name that is also a folder name (checkpoints go to ``out_dir/<name>/``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "model"


# -- the same text -------------------------------------------------------------------------------


def _check_same_text(datasets, tables) -> list:
    """The splits every input has (train and val at least), after checking they hold the same text."""
    items = list(datasets.values())
    first = items[0]
    common = [split for split in ("train", "val", "test") if all(split in data.splits for data in items)]
    for needed in ("train", "val"):
        if needed not in common:
            lacking = next(data for data in items if needed not in data.splits)
            lacking.split(needed)  # raises, naming the folder and the splits it has
    for split in common:
        reference = first.split(split)
        for data in items[1:]:
            other = data.split(split)
            if (other.characters, other.bytes) != (reference.characters, reference.bytes):
                raise _different_text(
                    first,
                    data,
                    split,
                    f"{reference.characters:,} vs {other.characters:,} "
                    f"characters, {reference.bytes:,} vs {other.bytes:,} bytes",
                )
        prefixes = [_prefix_bytes(data, tables[name], split) for name, data in datasets.items()]
        size = min(len(prefix) for prefix in prefixes)
        for data, prefix in zip(items[1:], prefixes[1:]):
            if prefix[:size] != prefixes[0][:size]:
                raise _different_text(first, data, split, f"different text in the first {size:,} bytes")
    return common


def _check_same_span_text(datasets, tables, split, spans):
    """The evaluated spans cover the same bytes by their lengths; check the bytes themselves."""
    items = list(datasets.items())
    first_name, first = items[0]

    def span_bytes(name, data):
        span = spans[name]
        return _decode(tables[name], data.split(split).ids[span.start : span.end])

    expected = span_bytes(first_name, first)
    for name, data in items[1:]:
        if span_bytes(name, data) != expected:
            raise _different_text(first, data, split, "different text in the evaluated span")


def _different_text(first, data, split, detail) -> PreparedDataError:
    prefixed = [str(one.folder) for one in (first, data) if adds_dummy_prefix(one.tokenizer)]
    if len(prefixed) == 1:
        return PreparedDataError(
            f"{prefixed[0]!r} does not stand for the same text as the other folder (the {split!r} splits differ: "
            f"{detail}): its SentencePiece tokenizer puts a space before each document (its dummy prefix), "
            "which its ids stand for too; evaluate it on its own with `bytepair gpt eval`, or compare it "
            "with tokenizations that add the same prefix"
        )
    return PreparedDataError(
        f"{str(data.folder)!r} does not encode the same text as {str(first.folder)!r} (the {split!r} splits "
        f"differ: {detail}); compare tokenizations of the same files (prepare or encode each from them)"
    )


def token_table(tokenizer) -> list:
    """Each id's bytes, ``b""`` for special tokens and unused ids (as ``TokenLengths`` counts them)."""
    special = set(tokenizer.special_tokens.values())
    table = []
    for token_id in range(tokenizer.vocab_size):
        try:
            table.append(b"" if token_id in special else tokenizer.token_bytes(token_id))
        except TokenIdError:  # an unused id (a hole in the vocabulary)
            table.append(b"")
    return table


def _decode(table, ids) -> bytes:
    return b"".join(table[token_id] for token_id in ids.tolist())


def _prefix_bytes(data, table, split) -> bytes:
    # every token but a special one is at least one byte, so this many tokens cover the checked
    # bytes unless the split starts with many special tokens (then the check is shorter)
    return _decode(table, data.split(split).ids[:CHECKED_PREFIX_BYTES])[:CHECKED_PREFIX_BYTES]


def _spans(datasets, split, eval_characters) -> dict:
    streams = [(data.split(split).ids, data.lengths) for data in datasets.values()]
    return dict(zip(datasets, aligned_spans(streams, eval_characters)))


def _check_free(checkpoints, overwrite):
    taken = [str(path) for path in checkpoints.values() if path.exists()]
    if taken and not overwrite:
        raise CheckpointError(
            f"{taken!r} already exist; pass overwrite=True (--overwrite) to replace them, or "
            "choose another output folder"
        )


# -- training ------------------------------------------------------------------------------------


def _steps(budget, data, shape, recipe, device) -> int:
    """Steps that spend the budget: text per step is tokens per step x text per token."""
    tokens_per_step = recipe["batch_size"] * shape["block_size"]
    if budget["unit"] == "characters":
        return max(1, round(budget["value"] / (tokens_per_step * data.characters_per_token)))
    if budget["unit"] == "bytes":
        return max(1, round(budget["value"] / (tokens_per_step * data.bytes_per_token)))
    return max(1, round(budget["value"] / _seconds_per_step(data, shape, recipe, device)))


def _seconds_per_step(data, shape, recipe, device) -> float:
    """Time ``TIMED_STEPS`` training steps of a throwaway model (the real run starts afresh
    from the seed, so timing changes nothing but the number of steps)."""
    config = TrainConfig(max_steps=TIMED_STEPS + 1, warmup_steps=0, **recipe)
    run = new_run(data, GPTConfig(vocab_size=data.vocab_size, **shape), config, device)
    train = data.split("train").ids
    train_step(run, train)
    started = time.perf_counter()
    for _ in range(TIMED_STEPS):
        train_step(run, train)
    return max((time.perf_counter() - started) / TIMED_STEPS, 1e-9)


def _train_one(
    name, data, steps, shape, recipe, spans, eval_points, eval_batch_size, checkpoint, device, progress
) -> ComparedModel:
    tokens_per_step = recipe["batch_size"] * shape["block_size"]
    config = TrainConfig(max_steps=steps, warmup_steps=round(WARMUP_FRACTION * steps), **recipe)
    run = new_run(data, GPTConfig(vocab_size=data.vocab_size, **shape), config, device)
    special = data.lengths.special

    def evaluate(model, split):
        return evaluate_span(
            model, data.split(split).ids, spans[split][name], batch_size=eval_batch_size, device=device, special=special
        )

    started = time.perf_counter()
    train_until_done(
        run,
        data.split("train").ids,
        lambda model: evaluate(model, "val"),
        eval_interval=math.ceil(steps / eval_points),
        checkpoint=checkpoint,
        progress=progress,
        label=name,
    )
    test = evaluate(run.model, "test") if "test" in spans else None
    wall = time.perf_counter() - started
    # the bytes each curve point has seen, for the plot; the checkpoint's curve has characters
    curve = [{**entry, "bytes": entry["tokens"] * data.bytes_per_token} for entry in run.history]
    return ComparedModel(
        name,
        data.folder,
        data.vocab_size,
        sum(p.numel() for p in run.model.parameters()),
        data.fingerprint,
        steps,
        tokens_per_step,
        data.characters_per_token,
        data.bytes_per_token,
        run.characters,
        run.tokens * data.bytes_per_token,
        run.train_seconds,
        wall,
        last_validation(run.history),
        test,
        curve,
        checkpoint,
        {split: split_spans[name] for split, split_spans in spans.items()},
    )


# -- the plot ------------------------------------------------------------------------------------


def _matplotlib_figure():
    """matplotlib's ``Figure`` (no pyplot, so no GUI backend and no global state)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError(
            "the comparison plot needs matplotlib, which is not installed; install it with: pip install 'bytepair[gpt]'"
        ) from None
    return Figure


def plot_curves(comparison: Comparison, path, *, figure_class=None) -> Path:
    """Validation bits per byte against training bytes, one line per model, as PNG."""
    figure = (figure_class or _matplotlib_figure())(figsize=(7, 4.5), dpi=120)
    axes = figure.subplots()
    for name, model in comparison.models.items():
        # The untrained point (step 0, ~log2(V) bits per token) is in the JSON but left out
        # here: it would stretch the y axis and flatten the part of the curves worth reading.
        trained = [entry for entry in model.curve if entry["step"] > 0]
        xs = [entry["bytes"] for entry in trained]
        ys = [entry["val_bits_per_byte"] for entry in trained]
        axes.plot(xs, ys, marker="o", markersize=3, label=f"{name} (vocab {model.vocab_size:,}, {model.steps:,} steps)")
    axes.set_xlabel("training bytes processed")
    axes.set_ylabel("validation bits per byte")
    axes.set_title(f"Same architecture, same text, {_budget_words(comparison.budget)}")
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    return write_atomic(path, lambda file: figure.savefig(file, format="png"))
