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
import re
import sys
from pathlib import Path

from ._cliutil import (
    HelpFormatter,
    add_training_options,
    check_training_options,
    read_text,
    training_options,
    write_output,
)
from ._io import check_output_file, check_readable
from .artifact import ARTIFACT_NAME
from .datasets.files import sigterm_as_interrupt
from .errors import BytepairError, DisallowedSpecialTokenError, UsageError
from .normalize import normalize
from .report import longest_tokens

# Subpackages that add their own commands with ``register(subparsers)``.
COMMAND_MODULES = (
    "bytepair.datasets.cli",
    "bytepair.formats.cli",
    "bytepair.gpt.cli",
    "bytepair.demo",
    "bytepair.view.cli",
)


def main(argv=None):
    _escape_what_stdout_cannot_show()
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # said by the command's own parser, with its usage, not the top level's
        getattr(args, "usage_parser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    if not hasattr(args, "run"):
        parser.print_help()
        return 2
    try:
        # SIGTERM (`kill`, a job scheduler) runs the cleanup Ctrl-C runs: staged files removed
        with sigterm_as_interrupt():
            result = args.run(args)
    except BrokenPipeError:
        # the reader stopped (`bytepair encode ... | head`): end quietly, as a tool killed by
        # SIGPIPE does, and keep Python from reporting the flush of a closed stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13
    except (BytepairError, OSError) as error:
        print(f"error: {error}", *getattr(error, "__notes__", ()), sep="\n", file=sys.stderr)
        return 2
    except KeyboardInterrupt as error:
        # one line, what was kept after the word (encode-corpus: the shards to resume from)
        terminated = error.args == ("terminated",)
        print(
            ": ".join(["terminated" if terminated else "interrupted", *getattr(error, "__notes__", ())]),
            file=sys.stderr,
        )
        return 128 + 15 if terminated else 128 + 2  # the exit status a shell gives a process the signal ended
    except MemoryError:
        # subtle: the files read are size-capped, so this is a real shortage, not a bad file.
        print("error: out of memory; give a smaller input (e.g. --max-chars) or free memory", file=sys.stderr)
        return 1
    return result or 0


def _escape_what_stdout_cannot_show():
    """Tables and reports (``inspect``, ``encode --pieces``, a file name) print a character that
    standard output's encoding lacks (``PYTHONIOENCODING=ascii``, a Latin-1 terminal) as an
    escape such as ``\\xe9``, instead of stopping with an encoding error."""
    stream = sys.stdout
    if stream is not None and getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
        stream.reconfigure(errors="backslashreplace")


def build_parser():
    from . import __version__

    parser = argparse.ArgumentParser(prog="bytepair", description="Train, run and compare BPE tokenizers.")
    parser.add_argument("--version", action="version", version=f"bytepair {__version__}")
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
    _mark_usage_parsers(parser)
    return parser


def _mark_usage_parsers(parser):
    """Each command's parser (``gpt train``'s too) as its own ``usage_parser`` default: the
    innermost parser's defaults win, so a mistake is reported with that command's usage."""
    parser.set_defaults(usage_parser=parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _mark_usage_parsers(child)


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
    parser = subparsers.add_parser(
        "train", help="train a tokenizer on text, JSON Lines or Parquet files", formatter_class=HelpFormatter
    )
    parser.add_argument(
        "files",
        nargs="+",
        type=Path,
        metavar="INPUT",
        help="training documents, as in encode-corpus: .txt/.jsonl/.json/.parquet (optionally .gz/.zst), folders, "
        "globs, - for standard input; a file of any other name is UTF-8 text",
    )
    parser.add_argument("--text-field", default="text", help="JSON field / Parquet column holding the text")
    parser.add_argument(
        "--split-on",
        default=None,
        metavar="REGEX",
        help="cut text files into documents at this regex (e.g. '\\n\\s*\\n'); default: one document per file",
    )
    parser.add_argument(
        "--skip-bad", action="store_true", help="skip documents that are not valid text instead of stopping"
    )
    add_training_options(parser)
    parser.add_argument(
        "--base-text",
        nargs="+",
        type=Path,
        default=None,
        metavar="FILE",
        help="char mode: files whose characters join the base alphabet",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path(ARTIFACT_NAME),
        help="where to write the tokenizer (bytepair's artifact; HF files: see save_pretrained)",
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="count on a Ray cluster (auto: the one this machine belongs to; alone: a Ray started here), "
        "one task per input file; put --ray after the INPUTs",
    )
    parser.set_defaults(run=_run_train)


def _run_train(args):
    import time

    from .train import train

    check_training_options(args)
    sources = _training_inputs(args)
    # the files found, not only those named: a glob or a folder can hold the output (an earlier run's)
    check_output_file(args.output, [*(s.path for s in sources), *(args.base_text or [])])
    if args.ray is not None:
        return _run_train_ray(args, sources)
    base_text = [read_text(p) for p in args.base_text] if args.base_text else None
    options = training_options(args)
    shown = {k: v for k, v in options.items() if k not in ("verbose", "progress")}
    if not args.quiet:
        print("training " + ", ".join(f"{k}={v!r}" for k, v in shown.items()), file=sys.stderr)
    started = time.perf_counter()
    first = []  # the first document, kept as read: standard input cannot be read twice
    tokenizer = train(_training_documents(sources, args, first), base_text=base_text, **options)
    return _checked_and_saved(tokenizer, time.perf_counter() - started, first[0] if first else "", args)


def _run_train_ray(args, sources):
    import time

    from .distributed import train

    options = training_options(args)
    if options.pop("max_chars") is not None:
        raise UsageError("--max-chars is not available with --ray: give the files to train on")
    options["threads_per_task"] = options.pop("num_threads") or 1
    base_text = [read_text(p) for p in args.base_text] if args.base_text else None
    if not args.quiet:
        settings = ", ".join(f"{k}={v!r}" for k, v in options.items() if k not in ("verbose", "progress"))
        print("training on Ray " + settings, file=sys.stderr)
    started = time.perf_counter()
    tokenizer = train(
        sources,
        base_text=base_text,
        ray_address=args.ray,
        text_field=args.text_field,
        split_on=args.split_on,
        skip_bad=args.skip_bad,
        **options,
    )
    return _checked_and_saved(tokenizer, time.perf_counter() - started, _first_document(sources, args), args)


def _training_inputs(args):
    """The INPUTs of ``train`` as ``Input`` records, all found (and their readers present) before
    any training starts."""
    from .datasets.documents import check_read_options, check_readers, find_inputs

    sources = find_inputs([str(p) for p in args.files], other_files_as_text=True)
    check_readers(sources)
    check_read_options(sources, text_field=args.text_field, split_on=args.split_on)
    return sources


def _training_documents(sources, args, first=None):
    """The documents of ``sources`` in order, read as they are trained on (one document in
    memory beyond what counting keeps); the first one is appended to ``first``."""
    from .datasets.documents import read_documents

    for source in sources:
        for document in read_documents(
            source, text_field=args.text_field, split_on=args.split_on, skip_bad=args.skip_bad
        ):
            if first is not None and not first:
                first.append(document)
            yield document


def _first_document(sources, args):
    return next(_training_documents(sources, args), "")


def _checked_and_saved(tokenizer, elapsed, first_document, args):
    """Round-trips a fresh tokenizer on mixed text, saves it and reports; 1 if the round trip
    failed (the tokenizer is saved all the same, to be looked at). The check comes first, so
    that nothing is written when it raises."""
    sample = _round_trip_sample(tokenizer, first_document)
    ok = tokenizer.decode(tokenizer.encode_ordinary(sample)) == normalize(sample, tokenizer.normalization)
    tokenizer.save(args.output)
    print(f"trained {tokenizer.vocab_size} tokens in {elapsed:.2f}s ({len(tokenizer.merges)} merges)")
    values = [bytes([b]) for b in range(256)] if tokenizer.mode == "byte" else list(tokenizer.base_tokens)
    reached = len(set(values).union(left + right for left, right in tokenizer.merges))  # as vocab_size counts
    if reached < args.vocab_size:
        lower = " or a lower --min-frequency" if args.min_frequency > 1 else ""
        print(
            f"stopped at {reached:,} of the {args.vocab_size:,} tokens asked: no pair occurs "
            f"{args.min_frequency} or more times (--min-frequency) any more; give more text{lower}"
        )
    print(f"fingerprint {tokenizer.fingerprint}")
    print(f"round trip on mixed text: {'ok' if ok else 'FAILED'}")
    print(f"saved {args.output}")
    return 0 if ok else 1


def _round_trip_sample(tokenizer, text):
    """Mixed text to check a fresh tokenizer on: multilingual in byte mode; in char mode, the
    start and end of its first document in the characters it has (``--max-chars`` may have
    stopped before some, and a special token's string is ordinary text here)."""
    if tokenizer.mode == "byte" or tokenizer.byte_fallback:
        return "Hello, world! 你好世界 Hello 🌍 World\r\n\tdef foo(x): return x + 1  ¿Qué tal? ﬁ"
    alphabet = set(tokenizer.base_tokens)
    return "".join(c for c in text[:2000] + text[-2000:] if c in alphabet)


# -- encode / decode ------------------------------------------------------------------------


def _add_tokenizer_option(parser, positional=False):
    """``-t``: anything ``bytepair.load`` takes, with ``--vocab-dir`` for published names."""
    what = "a bytepair artifact, a .tiktoken file, an HF tokenizer.json or folder, or a name (cl100k_base, o200k_base, gpt2, llama3 ...)"
    if positional:  # -t too, as every other command spells it
        parser.add_argument("tokenizer", nargs="?", default=None, help=what)
        parser.add_argument(
            "-t", "--tokenizer", dest="tokenizer_option", metavar="TOKENIZER", help="the same, as an option"
        )
    else:
        parser.add_argument("-t", "--tokenizer", required=True, help=what)
    parser.add_argument(
        "--vocab-dir",
        type=Path,
        default=None,
        help="folder or file holding a published vocabulary (default: $BYTEPAIR_VOCAB_DIR, then the download cache)",
    )


def _load_tokenizer(args):
    import bytepair

    option = getattr(args, "tokenizer_option", None)
    if option is not None and args.tokenizer is not None:
        raise UsageError(f"give the tokenizer once: {args.tokenizer!r} or -t {option!r}, not both")
    name = option if option is not None else args.tokenizer
    if name is None:
        raise UsageError("no tokenizer given; name one, e.g. bytepair inspect tok.json (or -t tok.json)")
    return bytepair.load(name, path=args.vocab_dir)


def _add_encode(subparsers):
    parser = subparsers.add_parser("encode", help="text to token ids", formatter_class=HelpFormatter)
    parser.add_argument("input", nargs="?", default="-", help="text file, or - for standard input")
    _add_tokenizer_option(parser)
    parser.add_argument(
        "--pieces", action="store_true", help="show each piece with its id (bytes that split a character escaped)"
    )
    parser.add_argument(
        "--special",
        action="append",
        default=[],
        metavar="TOKEN",
        help="a special token to encode as such; repeat the flag for more",
    )
    parser.add_argument(
        "--allowed-special",
        default="",
        metavar="TOKENS",
        help="'all', or comma-separated special tokens (prefer --special)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json", "npy", "bin"),
        default=None,
        help="ids as text, a JSON list, a .npy array or raw .bin (default: from -o's suffix, else text)",
    )
    parser.add_argument("--json", action="store_true", help="same as --format json")
    parser.add_argument(
        "-o", "--output", type=Path, default=None, help="write the ids to this file instead of standard output"
    )
    parser.set_defaults(run=_run_encode)


def _allowed(args):
    if args.allowed_special == "all":
        return "all"
    return frozenset(token for token in args.allowed_special.split(",") if token) | frozenset(args.special)


def _output_format(args):
    if args.json:
        return "json"
    if args.format:
        return args.format
    suffix = args.output.suffix.lstrip(".") if args.output else ""
    return suffix if suffix in ("json", "npy", "bin") else "text"


def _run_encode(args):
    import numpy as np

    from ._io import write_bytes_atomic, write_text_atomic

    if args.pieces and (args.output is not None or args.format or args.json):
        raise UsageError("--pieces prints a table of pieces; it takes no -o, --format or --json")
    if args.json and args.format not in (None, "json"):
        raise UsageError(f"--json and --format {args.format} disagree; give one of them")
    form = _output_format(args)
    if form in ("npy", "bin") and args.output is None:
        raise UsageError(f"--format {form} writes a binary file; give -o FILE")
    if args.output is not None:
        check_output_file(args.output, [args.input, args.tokenizer], example="ids.npy")
    tokenizer = _load_tokenizer(args)
    allowed = _allowed(args)
    unknown = sorted(allowed - set(tokenizer.special_tokens)) if allowed != "all" else []
    if unknown:
        flag = "--special" if unknown[0] in args.special else "--allowed-special"
        raise UsageError(
            f"{flag} {unknown[0]!r} is not a special token of this tokenizer; its special tokens are "
            f"{sorted(tokenizer.special_tokens)[:20]}"
        )
    text = read_text(args.input)
    try:
        ids = tokenizer.encode(text, allowed_special=allowed)
    except DisallowedSpecialTokenError as error:
        raise UsageError(
            f"the text contains the special token {error.token!r}; pass --special {error.token!r} to encode it "
            "as that token (--allowed-special all for every one), or remove it from the text"
        ) from None
    if args.pieces:
        for token_id in ids:
            print(f"{token_id:>8}  {_piece(tokenizer, token_id)}")
        print(f"{len(ids)} tokens, {len(text)} characters", file=sys.stderr)
        return 0
    if form in ("npy", "bin"):
        array = np.asarray(ids, dtype=tokenizer.array_dtype)
        if form == "bin":
            write_bytes_atomic(args.output, array.tobytes())
        else:
            import io

            buffer = io.BytesIO()
            np.save(buffer, array)
            write_bytes_atomic(args.output, buffer.getvalue())
        print(f"wrote {len(ids)} ids ({array.dtype}) to {args.output}", file=sys.stderr)
        return 0
    out = json.dumps(ids) if form == "json" else " ".join(map(str, ids))
    if args.output is not None:
        write_text_atomic(args.output, out + "\n")
    else:
        write_output(out + "\n")
    return 0


def _piece(tokenizer, token_id):
    """A token's text, or its bytes escaped where they are part of a character (no U+FFFD)."""
    raw = tokenizer.token_bytes(token_id)
    try:
        return repr(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return repr(raw)


def _add_decode(subparsers):
    parser = subparsers.add_parser("decode", help="token ids to text", formatter_class=HelpFormatter)
    parser.add_argument(
        "input", nargs="*", help="token ids (e.g. 15339 1917), or a file of ids; default: ids from standard input"
    )
    _add_tokenizer_option(parser)
    parser.add_argument(
        "--ids", default=None, help='the ids as one argument, e.g. --ids "15339 1917" or "[15339, 1917]"'
    )
    parser.add_argument(
        "--errors", choices=("replace", "strict"), default="replace", help="what to do with invalid UTF-8"
    )
    parser.set_defaults(run=_run_decode)


def _ids_file(name):
    """The ids of an array file ``encode -o`` wrote: .npy; a raw .bin has no dtype to read it by."""
    import numpy as np

    if name.endswith(".bin"):
        raise UsageError(
            f"{name}: a raw .bin holds no dtype, so its ids cannot be read back; write them with "
            "encode -o ids.npy (or --format json) to decode them"
        )
    check_readable(name, UsageError)
    try:
        array = np.load(name, allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise UsageError(f"{name}: not a readable .npy array of ids ({error})") from None
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise UsageError(f"{name}: holds a {array.dtype} array of shape {array.shape}, not one row of integer ids")
    return array.tolist()


def _id_words(raw):
    """The ids of ``15339 1917``, ``15339, 1917`` or a JSON list ``[15339, 1917]`` (what
    ``encode --json`` prints); a list that is not flat JSON (``[1, [2]]``, ``[1, 2,``) is an error."""
    text = raw.lstrip("\ufeff").strip()  # a BOM that an editor saved before the ids is no id
    if not text.startswith("["):
        return text.replace(",", " ").split()
    try:
        ids = json.loads(text)
    except ValueError as error:
        raise UsageError(f"the ids start like a JSON list but are not one ({error}); give [1, 2, 3] or 1 2 3") from None
    if not isinstance(ids, list) or any(isinstance(i, (list, dict)) for i in ids):
        raise UsageError("the ids must be one flat list, e.g. [1, 2, 3]; decode each list of a batch on its own")
    return ids


_ID_WORD = re.compile(r"-?[0-9]+")


def _decode_input(args):
    if args.ids is not None:
        if args.input:
            raise UsageError(f"give the ids once: --ids or arguments, not both (arguments: {args.input!r})")
        return _id_words(args.ids)
    if len(args.input) == 1 and args.input[0].endswith((".npy", ".bin")):
        return _ids_file(args.input[0])
    if args.input and all(
        word.lstrip("-").isdigit() or "," in word or "[" in word or "]" in word for word in args.input
    ):
        return _id_words(" ".join(args.input))
    if len(args.input) > 1:
        raise UsageError(f'decode takes ids or one file of ids, not {args.input!r}; pass ids as --ids "1 2 3"')
    if args.input and args.input[0] != "-" and not os.path.lexists(args.input[0]):  # "1.5" is no missing file
        raise UsageError(
            f"{args.input[0]!r} is neither a token id nor a file of ids; give whole-number ids (e.g. 15339 1917) "
            "or the path of a file holding them"
        )
    return _id_words(read_text(args.input[0] if args.input else "-"))


def _run_decode(args):
    words = _decode_input(args)
    tokenizer = _load_tokenizer(args)
    ids = []
    for position, word in enumerate(words):
        # ASCII digits only: int() would also take "1_0" and other scripts' digits
        try:
            if not _ID_WORD.fullmatch(str(word)):
                raise ValueError
            ids.append(int(word))
        except ValueError:  # also an int of more digits than Python converts
            raise UsageError(f"input item {position} is {str(word)[:40]!r}, not a token id") from None
    try:
        text = tokenizer.decode(ids, errors=args.errors)
    except UnicodeDecodeError as error:
        raise UsageError(
            f"the ids do not decode to valid UTF-8 ({error.reason} at byte {error.start}); use --errors replace"
        ) from None
    write_output(text)
    return 0


# -- inspect ----------------------------------------------------------------------------------


def _add_inspect(subparsers):
    parser = subparsers.add_parser("inspect", help="what a tokenizer holds", formatter_class=HelpFormatter)
    _add_tokenizer_option(parser, positional=True)
    parser.add_argument("--vocab", action="store_true", help="dump the whole vocabulary: id, bytes, readable form")
    parser.add_argument("--top", type=int, default=10, help="how many merges and longest tokens to show")
    parser.set_defaults(run=_run_inspect)


def _run_inspect(args):
    if args.top < 0:
        raise UsageError(f"--top must be 0 or more, not {args.top}")
    tokenizer = _load_tokenizer(args)
    if args.vocab:
        for token_id in range(tokenizer.vocab_size):
            try:
                raw = tokenizer.token_bytes(token_id)
            except BytepairError:
                continue
            kind = "special" if tokenizer.is_special(token_id) else ""
            print(f"{token_id}\t{raw.hex()}\t{tokenizer.token_string(token_id)!r}\t{kind}".rstrip())
        return 0
    if tokenizer.rule == "replay":
        kind, merges = ("character_bpe" if tokenizer.mode == "char" else "byte_bpe"), len(tokenizer.merges)
    elif tokenizer.rule == "tiktoken":  # its pair table holds every split of every token, not merges
        longer = sum(1 for value in tokenizer.model.token_bytes if value is not None and len(value) > 1)
        kind, merges = (
            "byte_bpe (tiktoken ranks)",
            f"- (a rank per token, no merge list; {longer:,} tokens of 2+ bytes)",
        )
    elif hasattr(tokenizer.model, "merge_pairs"):
        kind, merges = f"byte_bpe ({tokenizer.rule} ranks)", len(tokenizer.model.merge_pairs())
    else:  # a SentencePiece model: pieces with scores, merged by score, no merge list
        kind, merges = f"{tokenizer.rule} ({'byte fallback' if tokenizer.byte_fallback else 'no byte fallback'})", "-"
    print(f"type          {kind}")
    if tokenizer.name:
        print(f"name          {tokenizer.name}")
    print(f"vocab size    {tokenizer.vocab_size}")
    print(f"merges        {merges}")
    print(f"pattern       {tokenizer.pattern_name or tokenizer.pattern}")
    print(f"normalization {tokenizer.normalization}")
    specials = tokenizer.special_tokens
    shown = dict(list(specials.items())[:8])
    more = f" (+{len(specials) - len(shown)} more)" if len(specials) > len(shown) else ""
    print(f"special       {(str(shown) + more) if specials else '-'}")
    for name in ("bos_token", "eos_token", "pad_token"):
        if getattr(tokenizer, name) is not None:
            print(f"{name:<13} {getattr(tokenizer, name)!r}")
    print(f"fingerprint   {tokenizer.fingerprint}")
    if tokenizer.merges:
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
    # The source tree this package sits in, else the folder the command runs from (a clone
    # whose package was pip-installed).
    candidates = [package.parent.parent / "bench" / "run.py"] if package.parent.name == "src" else []
    harness = next((p for p in [*candidates, Path.cwd() / "bench" / "run.py"] if p.is_file()), None)
    if harness is None:
        raise UsageError(
            "the benchmark harness is not installed with the package: it lives in the source tree, "
            "bench/run.py; clone the repository, pip install '.[bench]' and run python bench/run.py --quick "
            "(or bytepair bench from the clone's folder)"
        )
    # the harness imports this very package, also when it was found on sys.path rather than installed
    path = os.pathsep.join(p for p in (str(package.parent), os.environ.get("PYTHONPATH")) if p)
    return subprocess.call([sys.executable, str(harness), *args.harness_args], env={**os.environ, "PYTHONPATH": path})
