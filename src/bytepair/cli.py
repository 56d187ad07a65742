"""The ``bytepair`` command: train, encode, decode, inspect, demo, and the commands of the
``datasets``, ``formats`` and ``gpt`` subpackages (prepare, sweep, compare, gpt ...).

Flags mirror the Python API's keyword arguments. User mistakes print one ``error:`` line and
exit with status 2; there are no tracebacks for them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path

from ._cliutil import (
    HelpFormatter,
    add_training_options,
    check_output_file,
    check_training_options,
    read_text,
    training_options,
)
from .errors import BytepairError, UsageError
from .normalize import normalize
from .report import longest_tokens

# Subpackages that add their own commands with ``register(subparsers)``.
COMMAND_MODULES = ("bytepair.datasets.cli", "bytepair.formats.cli", "bytepair.gpt.cli", "bytepair.demo", "bytepair.view.cli")


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return 2
    try:
        result = args.run(args)
    except (BytepairError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        # subtle: the files read are size-capped, so this is a real shortage, not a bad file.
        print("error: out of memory; give a smaller input (e.g. --max-chars) or free memory", file=sys.stderr)
        return 1
    return result or 0


def build_parser():
    parser = argparse.ArgumentParser(prog="bytepair", description="Train, run and compare BPE tokenizers.")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    _add_train(subparsers)
    _add_encode(subparsers)
    _add_decode(subparsers)
    _add_inspect(subparsers)
    _add_bench(subparsers)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError as error:
            if not (error.name and name.startswith(error.name)):
                raise
            _add_missing(subparsers, name, error)  # an optional extra is not installed
            continue
        module.register(subparsers)
    return parser


def _add_missing(subparsers, module_name, error):
    """A command whose extra is missing still exists, and says what to install."""
    command = module_name.split(".")[1]
    if command != "gpt":
        return
    stub = subparsers.add_parser(command, help="small GPTs (needs bytepair[gpt])")
    stub.add_argument("rest", nargs=argparse.REMAINDER)

    def run(args):
        print(f"error: {error}", file=sys.stderr)
        return 2

    stub.set_defaults(run=run)


# -- train --------------------------------------------------------------------------------


def _add_train(subparsers):
    parser = subparsers.add_parser("train", help="train a tokenizer on text files", formatter_class=HelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="training text (UTF-8)")
    add_training_options(parser)
    parser.add_argument("--base-text", nargs="+", type=Path, default=None, metavar="FILE", help="char mode: files whose characters join the base alphabet")
    parser.add_argument("-o", "--output", type=Path, default=Path("tokenizer.json"), help="where to write the tokenizer")
    parser.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                        help="count on a Ray cluster (auto: the one this machine belongs to; alone: a Ray started here); "
                             "FILEs are then inputs as in encode-corpus (.txt/.jsonl/.parquet, folders, globs); put --ray after them")
    parser.set_defaults(run=_run_train)


def _run_train(args):
    import time

    from .train import train

    check_training_options(args)
    check_output_file(args.output)
    if args.ray is not None:
        return _run_train_ray(args)
    texts = [read_text(p) for p in args.files]
    base_text = [read_text(p) for p in args.base_text] if args.base_text else None
    options = training_options(args)
    shown = {k: v for k, v in options.items() if k not in ("verbose", "progress")}
    print("training " + ", ".join(f"{k}={v!r}" for k, v in shown.items()), file=sys.stderr)
    started = time.perf_counter()
    tokenizer = train(texts if len(texts) > 1 else texts[0], base_text=base_text, **options)
    elapsed = time.perf_counter() - started
    tokenizer.save(args.output)
    sample = _round_trip_sample(tokenizer, texts[0])
    ok = tokenizer.decode(tokenizer.encode_ordinary(sample)) == normalize(sample, tokenizer.normalization)
    print(f"trained {tokenizer.vocab_size} tokens in {elapsed:.2f}s ({len(tokenizer.merges)} merges)")
    print(f"fingerprint {tokenizer.fingerprint}")
    print(f"round trip on mixed text: {'ok' if ok else 'FAILED'}")
    print(f"saved {args.output}")
    return 0 if ok else 1


def _run_train_ray(args):
    import time

    from .datasets.documents import find_inputs, read_documents
    from .distributed import train

    options = training_options(args)
    if options.pop("max_chars") is not None:
        raise UsageError("--max-chars is not available with --ray: give the files to train on")
    options["threads_per_task"] = options.pop("num_threads") or 1
    base_text = [read_text(p) for p in args.base_text] if args.base_text else None
    print("training on Ray " + ", ".join(f"{k}={v!r}" for k, v in options.items() if k not in ("verbose", "progress")), file=sys.stderr)
    started = time.perf_counter()
    tokenizer = train([str(p) for p in args.files], base_text=base_text, ray_address=args.ray, **options)
    elapsed = time.perf_counter() - started
    tokenizer.save(args.output)
    first = next((text for source in find_inputs([str(p) for p in args.files]) for text in read_documents(source)), "")
    sample = _round_trip_sample(tokenizer, first)
    ok = tokenizer.decode(tokenizer.encode_ordinary(sample)) == normalize(sample, tokenizer.normalization)
    print(f"trained {tokenizer.vocab_size} tokens in {elapsed:.2f}s ({len(tokenizer.merges)} merges)")
    print(f"fingerprint {tokenizer.fingerprint}")
    print(f"round trip on mixed text: {'ok' if ok else 'FAILED'}")
    print(f"saved {args.output}")
    return 0 if ok else 1


def _round_trip_sample(tokenizer, text):
    """Mixed text to check a fresh tokenizer on: multilingual in byte mode, its own text in char mode."""
    if tokenizer.mode == "byte" or tokenizer.byte_fallback:
        return "Hello, world! 你好世界 Hello 🌍 World\r\n\tdef foo(x): return x + 1  ¿Qué tal? ﬁ"
    return text[:2000] + text[-2000:]


# -- encode / decode ------------------------------------------------------------------------


def _add_encode(subparsers):
    parser = subparsers.add_parser("encode", help="text to token ids", formatter_class=HelpFormatter)
    parser.add_argument("input", nargs="?", default="-", help="text file, or - for standard input")
    parser.add_argument("-t", "--tokenizer", type=Path, required=True, help="tokenizer JSON file")
    parser.add_argument("--pieces", action="store_true", help="show each piece with its id")
    parser.add_argument("--allowed-special", default="", metavar="TOKENS", help="comma-separated special tokens to encode as such, or 'all'")
    parser.add_argument("--json", action="store_true", help="print the ids as a JSON list")
    parser.set_defaults(run=_run_encode)


def _allowed(value):
    if value == "all":
        return "all"
    return frozenset(token for token in value.split(",") if token)


def _run_encode(args):
    from .tokenizer import Tokenizer

    tokenizer = Tokenizer.load(args.tokenizer)
    text = read_text(args.input)
    ids = tokenizer.encode(text, allowed_special=_allowed(args.allowed_special))
    if args.pieces:
        for token_id in ids:
            print(f"{token_id:>8}  {tokenizer.token_string(token_id)!r}")
        print(f"{len(ids)} tokens, {len(text)} characters", file=sys.stderr)
    elif args.json:
        print(json.dumps(ids))
    else:
        print(" ".join(map(str, ids)))
    return 0


def _add_decode(subparsers):
    parser = subparsers.add_parser("decode", help="token ids to text", formatter_class=HelpFormatter)
    parser.add_argument("input", nargs="?", default="-", help="ids (whitespace/comma separated or JSON), or - for standard input")
    parser.add_argument("-t", "--tokenizer", type=Path, required=True, help="tokenizer JSON file")
    parser.add_argument("--errors", choices=("replace", "strict"), default="replace", help="what to do with invalid UTF-8")
    parser.set_defaults(run=_run_decode)


def _run_decode(args):
    from .tokenizer import Tokenizer

    tokenizer = Tokenizer.load(args.tokenizer)
    raw = read_text(args.input)
    words = raw.replace(",", " ").replace("[", " ").replace("]", " ").split()
    ids = []
    for position, word in enumerate(words):
        try:
            ids.append(int(word))
        except ValueError:
            raise UsageError(f"input item {position} is {word!r}, not a token id") from None
    try:
        text = tokenizer.decode(ids, errors=args.errors)
    except UnicodeDecodeError as error:
        raise UsageError(f"the ids do not decode to valid UTF-8 ({error.reason} at byte {error.start}); use --errors replace") from None
    sys.stdout.write(text)
    return 0


# -- inspect ----------------------------------------------------------------------------------


def _add_inspect(subparsers):
    parser = subparsers.add_parser("inspect", help="what a tokenizer file holds", formatter_class=HelpFormatter)
    parser.add_argument("tokenizer", type=Path, help="tokenizer JSON file")
    parser.add_argument("--vocab", action="store_true", help="dump the whole vocabulary: id, bytes, readable form")
    parser.add_argument("--top", type=int, default=10, help="how many merges and longest tokens to show")
    parser.set_defaults(run=_run_inspect)


def _run_inspect(args):
    from .tokenizer import Tokenizer

    tokenizer = Tokenizer.load(args.tokenizer)
    if args.vocab:
        for token_id in range(tokenizer.vocab_size):
            try:
                raw = tokenizer.token_bytes(token_id)
            except BytepairError:
                continue
            kind = "special" if tokenizer.is_special(token_id) else ""
            print(f"{token_id}\t{raw.hex()}\t{tokenizer.token_string(token_id)!r}\t{kind}".rstrip())
        return 0
    print(f"type          {'character_bpe' if tokenizer.mode == 'char' else 'byte_bpe'}")
    print(f"vocab size    {tokenizer.vocab_size}")
    print(f"merges        {len(tokenizer.merges)}")
    print(f"pattern       {tokenizer.pattern_name or tokenizer.pattern}")
    print(f"normalization {tokenizer.normalization}")
    print(f"special       {tokenizer.special_tokens or '-'}")
    print(f"fingerprint   {tokenizer.fingerprint}")
    print(f"first {args.top} merges:")
    for number, (left, right) in enumerate(tokenizer.merges[: args.top], 1):
        print(f"  {number:4d}  {_show(left)} + {_show(right)}")
    print(f"longest {args.top} learned tokens:")
    for token_id, token in longest_tokens(tokenizer, args.top):
        print(f"  {token_id:6d}  {token!r}")
    return 0


def _show(value):
    return repr(value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value)



# -- bench ------------------------------------------------------------------------------------


def _add_bench(subparsers):
    parser = subparsers.add_parser(
        "bench",
        help="run the benchmark harness bench/run.py of a source checkout (e.g. bench --quick --only encode)",
        description="Run bench/run.py with these arguments. The harness is tooling in the source tree, "
        "not part of the installed package.",
        # every argument, --help too, goes to the harness: no option of its own
        prefix_chars="\0",
        add_help=False,
    )
    parser.add_argument("harness_args", nargs=argparse.REMAINDER, metavar="ARGS", help="arguments for bench/run.py")
    parser.set_defaults(run=_run_bench)


def _run_bench(args):
    import subprocess

    package = Path(__file__).resolve().parent
    harness = package.parent.parent / "bench" / "run.py"
    if package.parent.name != "src" or not harness.is_file():
        raise UsageError(
            "the benchmark harness is not installed with the package: it lives in the source tree, "
            "bench/run.py; clone the repository, pip install '.[bench]' and run python bench/run.py --quick"
        )
    # the harness imports this very package, also when it was found on sys.path rather than installed
    path = os.pathsep.join(p for p in (str(package.parent), os.environ.get("PYTHONPATH")) if p)
    return subprocess.call([sys.executable, str(harness), *args.harness_args], env={**os.environ, "PYTHONPATH": path})
