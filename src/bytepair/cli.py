"""The ``bytepair`` command: train, encode, decode, inspect, demo, and the commands of the
``datasets``, ``formats`` and ``gpt`` subpackages (prepare, sweep, compare, gpt ...).

Flags mirror the Python API's keyword arguments. User mistakes print one ``error:`` line and
exit with status 2; there are no tracebacks for them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from .errors import BytepairError, UsageError
from .normalize import normalize

# Subpackages that add their own commands with ``register(subparsers)``.
COMMAND_MODULES = ("bytepair.datasets.cli", "bytepair.formats.cli", "bytepair.gpt.cli", "bytepair.demo", "bytepair.bench", "bytepair.view")


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
    return result or 0


def build_parser():
    parser = argparse.ArgumentParser(prog="bytepair", description="Train, run and compare BPE tokenizers.")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    _add_train(subparsers)
    _add_encode(subparsers)
    _add_decode(subparsers)
    _add_inspect(subparsers)
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


def _formatter(prog):
    return argparse.ArgumentDefaultsHelpFormatter(prog, max_help_position=32)


# -- train --------------------------------------------------------------------------------


def add_training_options(parser):
    """The flags of ``bytepair.train``; shared with ``bytepair prepare`` and ``sweep``."""
    parser.add_argument("--mode", choices=("char", "byte"), default="char", help="character- or byte-level BPE")
    parser.add_argument("--vocab-size", type=int, default=500, help="distinct tokens to reach (special tokens not counted)")
    parser.add_argument("--min-frequency", type=int, default=2, help="stop when the best pair occurs fewer times")
    parser.add_argument("--max-chars", type=int, default=None, help="train on the first N characters only")
    parser.add_argument("--pattern", default=None, help="pre-tokenization: gpt2, cl100k, gpt4, o200k, llama3, or a regex")
    parser.add_argument("--normalization", choices=("NFC", "NFKC"), default=None, help="Unicode normalization")
    parser.add_argument("--special", nargs="+", default=None, metavar="TOKEN", help="special tokens, ids after the learned vocabulary")
    parser.add_argument("--byte-fallback", action="store_true", help="char mode: unknown characters become byte tokens")
    parser.add_argument("--verbose", action="store_true", help="print seed 000's merge log")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, only the summary")


def training_options(args):
    """The keyword arguments of ``bytepair.train`` from parsed ``add_training_options`` flags."""
    return dict(
        mode=args.mode,
        vocab_size=args.vocab_size,
        min_frequency=args.min_frequency,
        max_chars=args.max_chars,
        pattern=args.pattern,
        normalization=args.normalization,
        special_tokens=args.special,
        byte_fallback=args.byte_fallback,
        verbose=args.verbose,
        progress=False if args.quiet else None,
    )


def _add_train(subparsers):
    parser = subparsers.add_parser("train", help="train a tokenizer on text files", formatter_class=_formatter)
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="training text (UTF-8)")
    add_training_options(parser)
    parser.add_argument("--base-text", nargs="+", type=Path, default=None, metavar="FILE", help="char mode: files whose characters join the base alphabet")
    parser.add_argument("-o", "--output", type=Path, default=Path("tokenizer.json"), help="where to write the tokenizer")
    parser.set_defaults(run=_run_train)


def read_text(path):
    """A UTF-8 text file, or ``-`` for standard input; bad bytes are a clear error."""
    if str(path) == "-":
        return sys.stdin.read()
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise UsageError(f"{path}: not UTF-8 text (byte {error.start}, line {line}: {data[error.start:error.start + 1]!r})") from None


def _run_train(args):
    import time

    from .train import train

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


def _round_trip_sample(tokenizer, text):
    """Mixed text to check a fresh tokenizer on: multilingual in byte mode, its own text in char mode."""
    if tokenizer.mode == "byte" or tokenizer.byte_fallback:
        return "Hello, world! 你好世界 Hello 🌍 World\r\n\tdef foo(x): return x + 1  ¿Qué tal? ﬁ"
    return text[:2000] + text[-2000:]


# -- encode / decode ------------------------------------------------------------------------


def _add_encode(subparsers):
    parser = subparsers.add_parser("encode", help="text to token ids", formatter_class=_formatter)
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
    parser = subparsers.add_parser("decode", help="token ids to text", formatter_class=_formatter)
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
    parser = subparsers.add_parser("inspect", help="what a tokenizer file holds", formatter_class=_formatter)
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
            kind = "special" if token_id in tokenizer._special_by_id else ""
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


def longest_tokens(tokenizer, count):
    """The ``count`` longest learned tokens as (id, readable string), longest first."""
    first_learned = len(tokenizer.base_tokens) if tokenizer.mode == "char" else 256
    learned = range(first_learned, tokenizer._learned_size - (256 if tokenizer.byte_fallback else 0))
    # Seed 000 ranks by length in characters (bytes in byte mode); ties keep id order.
    size = (lambda i: len(tokenizer._values[i])) if tokenizer.mode == "char" else (lambda i: len(tokenizer._token_bytes[i]))
    ranked = sorted(learned, key=lambda i: (-size(i), i))
    return [(i, tokenizer.token_string(i)) for i in ranked[:count]]
