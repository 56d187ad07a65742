"""``bytepair demo``: the whole seed-000 job on a corpus every Python install has.

The corpus is the English prose of the standard library: the docstrings of its modules,
classes and functions, read with ``ast`` from the ``.py`` files in sorted order (tests and
third-party packages left out). Each file goes to train, validation or test by a stable hash of
its path (90/5/5), so the splits never share a document. The demo trains a character-level
tokenizer (vocab 500, the first 500,000 training characters, base alphabet from all splits),
saves it, encodes every split, checks every round trip, and prints seed 000's report.
"""

from __future__ import annotations

import ast
import sysconfig
import time
import zlib
from pathlib import Path

SPLITS = ("train", "val", "test")
SAMPLE = "Artificial intelligence and machine learning"


def stdlib_docstrings():
    """(relative path, docstring text) for every documented stdlib module, in path order."""
    root = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if (
            relative.startswith(("site-packages/", "test/", "idlelib/idle_test/", "lib2to3/tests/"))
            or "/tests/" in relative
        ):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        docs = [
            ast.get_docstring(node, clean=True)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        text = "\n\n".join(d for d in docs if d)
        if text:
            yield relative, text + "\n\n"


def stdlib_corpus():
    """The demo corpus as {"train": str, "val": str, "test": str}."""
    parts = {name: [] for name in SPLITS}
    for relative, text in stdlib_docstrings():
        bucket = zlib.crc32(relative.encode()) % 20
        parts["val" if bucket == 0 else "test" if bucket == 1 else "train"].append(text)
    return {name: "".join(texts) for name, texts in parts.items()}


def register(subparsers):
    from ._cliutil import HelpFormatter

    parser = subparsers.add_parser(
        "demo",
        help="train, save and encode on the standard library's docstrings; print the report",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--vocab-size", type=int, default=500, help="distinct tokens to reach")
    parser.add_argument("--max-chars", type=int, default=500_000, help="training prefix length")
    parser.add_argument("--mode", choices=("char", "byte"), default="char", help="character- or byte-level BPE")
    parser.add_argument("-o", "--output", type=Path, default=Path("bytepair-demo"), help="folder for the tokenizer")
    parser.set_defaults(run=run)


def run(args):
    from ._io import check_output_folder
    from .artifact import ARTIFACT_NAME
    from .report import learned_tokens_report, sample_report, split_report
    from .tokenizer import Tokenizer
    from .train import train

    check_output_folder(args.output)  # before the corpus is gathered and trained on
    corpus = stdlib_corpus()
    print("corpus: docstrings of the Python standard library")
    for name in SPLITS:
        print(f"  {name:<5} {len(corpus[name]):>10,} characters")
    started = time.perf_counter()
    tokenizer = train(
        corpus["train"],
        mode=args.mode,
        vocab_size=args.vocab_size,
        max_chars=args.max_chars,
        base_text=[corpus[name] for name in SPLITS] if args.mode == "char" else None,
    )
    print(
        f"trained {tokenizer.vocab_size} tokens on {min(args.max_chars, len(corpus['train'])):,} characters in {time.perf_counter() - started:.2f}s"
    )
    path = args.output / ARTIFACT_NAME
    tokenizer.save(path)
    loaded = Tokenizer.load(path)
    if loaded.fingerprint != tokenizer.fingerprint:
        raise AssertionError("reloaded tokenizer has another fingerprint")
    print(f"saved {path}  fingerprint {loaded.fingerprint[:16]}…  (reload verified)")
    started = time.perf_counter()
    failures = 0
    for name in SPLITS:
        ids = loaded.encode_to_array(corpus[name])
        ok = loaded.decode(ids) == corpus[name]
        failures += not ok
        print(split_report(name, len(corpus[name]), len(ids)) + ("   round trip ok" if ok else "   ROUND TRIP FAILED"))
    print(f"encoded every split in {time.perf_counter() - started:.2f}s")
    for line in learned_tokens_report(loaded) + sample_report(loaded, SAMPLE):
        print(line)
    return 1 if failures else 0
