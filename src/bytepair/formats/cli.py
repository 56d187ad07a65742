"""``bytepair compare``: token counts, bytes per token and characters per token, side by side.

Tokenizers are compared honestly by how much text each token carries (bytes and characters per
token), never by raw token counts across different texts. Each text is one row; a folder gives
one row per file (the UDHR folder: one row per language, named by the file's stem), then a
total. Tokenizers are our artifacts by path, or published vocabularies by name (found in
``--vocab-dir``, ``$BYTEPAIR_VOCAB_DIR`` or the download cache).

Example::

    bytepair compare udhr/ -t gpt2 -t cl100k_base -t o200k_base -t mine.json --vocab-dir vocab/
    bytepair compare notes.txt -t llama3 --vocab-dir vocab/ --json

It does not train or save anything.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .._cliutil import HelpFormatter, read_text
from .._io import check_output_file
from ..errors import BytepairError, UsageError


def register(subparsers):
    """Add the ``compare`` command to the ``bytepair`` parser."""
    parser = subparsers.add_parser(
        "compare",
        help="compare tokenizers on texts: tokens, bytes/token, chars/token",
        description="Token counts, bytes per token and characters per token of each tokenizer, per text "
        "(per file for a folder, e.g. per language for the UDHR folder), then the total.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="text files, folders of text files (one row per file), or - for standard input",
    )
    parser.add_argument(
        "-t",
        "--tokenizer",
        action="append",
        required=True,
        metavar="TOKENIZER",
        help="a tokenizer file (ours, .tiktoken, tokenizer.json) or a vocabulary name (gpt2, cl100k_base, o200k_base, llama3, ...); repeat for each",
    )
    parser.add_argument(
        "--vocab-dir",
        type=Path,
        default=None,
        help="folder holding vocabularies by name (default: $BYTEPAIR_VOCAB_DIR, then the download cache)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument(
        "--html",
        type=Path,
        default=None,
        metavar="PAGE",
        help="also write the table as an HTML page with a sortable bar chart of tokens per text",
    )
    parser.set_defaults(run=run_compare)


def run_compare(args):
    if args.html is not None:
        check_output_file(args.html, [*args.inputs, *args.tokenizer], flag="--html", example="compare.html")
    texts = read_inputs(args.inputs)
    tokenizers = load_tokenizers(args.tokenizer, args.vocab_dir)
    total_chars = sum(len(text) for _, text in texts)
    shown = ", ".join(f"{label} (vocab {tok.vocab_size:,})" for label, tok in tokenizers)
    print(f"comparing {len(texts)} text(s), {total_chars:,} characters, with {shown}", file=sys.stderr)
    report = compare(texts, tokenizers)
    print(json.dumps(report, ensure_ascii=False, indent=2) if args.json else format_table(report))
    if args.html is not None:
        from .._io import write_text_atomic
        from ..view import compare_page

        write_text_atomic(args.html, compare_page(report))
        print(f"wrote {args.html}", file=sys.stderr)
    return 0


def read_inputs(inputs):
    """``[(name, text)]``: files as given, a folder's files sorted by name, ``-`` as stdin.
    A row is named by its file's stem, or by its path where two stems are the same."""
    texts = []
    for item in inputs:
        path = Path(item)
        if item == "-":
            texts.append(("stdin", "-", read_text("-")))
        elif path.is_dir():
            files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
            if not files:
                raise UsageError(f"{path}: the folder holds no files to compare on")
            texts += [(p.stem, str(p), read_text(p)) for p in files]
        elif path.exists():  # a FIFO (the shell's <(...)) is read; read_text names a device as one
            texts.append((path.stem, str(path), read_text(path)))
        else:
            raise UsageError(f"{item!r}: no such file or folder; give text files, folders, or - for standard input")
    stems = [stem for stem, _, _ in texts]
    named, names = [], set()
    for stem, shown, text in texts:
        # a.txt and a.md, or eng.txt in two folders: rows named alike could not be told apart
        name = stem if stems.count(stem) == 1 else shown
        while name in names:  # the same file given twice
            name += "'"
        names.add(name)
        named.append((name, text))
    return named


def load_tokenizers(specs, vocab_dir):
    """``[(label, tokenizer)]`` for each ``-t`` value, labels made unique."""
    loaded, labels = [], set()
    for spec in specs:
        label, tokenizer = load_one(spec, vocab_dir)
        while label in labels:
            label += "'"
        labels.add(label)
        loaded.append((label, tokenizer))
    return loaded


def load_one(spec, vocab_dir):
    """A tokenizer from a file path (ours or a foreign format) or a vocabulary name."""
    from . import KNOWN, load

    path = Path(spec)
    if path.is_file():
        tokenizer = load(str(path))
        return tokenizer.name or path.stem, tokenizer
    if path.is_dir():
        raise UsageError(f"-t {spec!r} is a folder; give a tokenizer file or a vocabulary name ({', '.join(KNOWN)})")
    return spec, load(spec, path=vocab_dir)


def compare(texts, tokenizers):
    """The comparison as a JSON-ready dict: per text, per tokenizer, and the totals."""
    rows = [_row(name, text, tokenizers) for name, text in texts]
    return {
        "tokenizers": [
            {"label": label, "vocab_size": tok.vocab_size, "fingerprint": tok.fingerprint} for label, tok in tokenizers
        ],
        "texts": rows,
        "total": _total(rows, [label for label, _ in tokenizers]),
    }


def _row(name, text, tokenizers):
    chars, size = len(text), len(text.encode("utf-8", errors="surrogatepass"))
    results = {}
    for label, tokenizer in tokenizers:
        try:
            count = len(tokenizer.encode_ordinary(text))
        except BytepairError as error:
            results[label] = {"tokens": None, "error": str(error)}
            continue
        results[label] = _ratios(count, size, chars)
    return {"name": name, "chars": chars, "bytes": size, "results": results}


def _ratios(tokens, size, chars):
    return {
        "tokens": tokens,
        "bytes_per_token": round(size / tokens, 4) if tokens else None,
        "chars_per_token": round(chars / tokens, 4) if tokens else None,
    }


def _total(rows, labels):
    """Sums over the texts every tokenizer could encode, so each column counts the same text."""
    usable = [row for row in rows if all(row["results"][label]["tokens"] is not None for label in labels)]
    chars = sum(row["chars"] for row in usable)
    size = sum(row["bytes"] for row in usable)
    results = {label: _ratios(sum(row["results"][label]["tokens"] for row in usable), size, chars) for label in labels}
    return {
        "name": "total",
        "texts": len(usable),
        "skipped": len(rows) - len(usable),
        "chars": chars,
        "bytes": size,
        "results": results,
    }


def format_table(report):
    """The report as an aligned text table: one column group per tokenizer."""
    labels = [entry["label"] for entry in report["tokenizers"]]
    total = report["total"]
    if total["skipped"]:  # the total leaves out texts some tokenizer cannot encode: say how many it counts
        total = {**total, "name": f"total ({total['texts']} of {len(report['texts'])} texts)"}
    rows = report["texts"] + ([total] if len(report["texts"]) > 1 else [])
    name_width = max(8, *(len(row["name"]) for row in rows))
    head = f"{'text':<{name_width}} {'chars':>11} {'bytes':>11}"
    # a long label widens its columns (cut, two labels alike at the start could not be told apart)
    widths = [max(0, len(label) - 26) + 10 for label in labels]  # of the tokens column
    groups = "".join(f" | {label:<26}" for label in labels)
    units = "".join(f" | {'tokens':>{width}} {'B/tok':>7} {'ch/tok':>7}" for width in widths)
    lines = [f"{'':<{name_width + 24}}{groups}", head + units]
    for row in rows:
        cells = "".join(_cells(row["results"][label], width) for label, width in zip(labels, widths))
        lines.append(f"{row['name']:<{name_width}} {row['chars']:>11,} {row['bytes']:>11,}{cells}")
    errors = sorted(
        {
            f"{row['name']} / {label}: {row['results'][label]['error']}"
            for row in report["texts"]
            for label in labels
            if "error" in row["results"][label]
        }
    )
    if errors:
        lines.append(
            f"n/a: the tokenizer cannot encode that text ({len(errors)} case(s)); total counts only texts every tokenizer encodes"
        )
        lines += [f"  {line[:160]}" for line in errors[:10]]
    return "\n".join(lines)


def _cells(result, width=10):
    if result["tokens"] is None:
        return f" | {'n/a':>{width}} {'':>7} {'':>7}"
    if not result["tokens"]:
        return f" | {0:>{width}} {'-':>7} {'-':>7}"
    return f" | {result['tokens']:>{width},} {result['bytes_per_token']:>7.3f} {result['chars_per_token']:>7.3f}"
