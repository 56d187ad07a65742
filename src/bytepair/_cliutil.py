"""What every ``bytepair`` command shares: the help formatter, reading input text, counts given
as flags, and the training flags. Used by ``cli.py``, each subpackage's ``cli.py`` and
``bench/run.py``; library code imports nothing from here or from any ``cli`` module.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ._io import decode_text, naming, standard_input
from ._io import read_text as _read_text
from .errors import UsageError


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each flag's default, except where it is None or the help text already says it."""

    def __init__(self, prog, **options):
        options.setdefault("max_help_position", 32)
        super().__init__(prog, **options)

    def _get_help_string(self, action):
        if action.default is None or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def positive_count(text: str, unit: str = "characters") -> int:
    """A flag's count of 1 or more, for argparse's ``type=`` (``1_000_000`` and ``1,000,000``
    accepted); anything else is argparse's error for the flag, naming the value and the unit.

    Example:
        >>> positive_count("1,000")
        1000
    """
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of {unit}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number of {unit}")
    return value


def read_text(path) -> str:
    """A UTF-8 text file, or ``-`` for standard input; bad bytes are a one-line usage error."""
    if str(path) == "-":
        data = standard_input(UsageError).read()  # bytes, so that bad ones are not replaced
        return data if isinstance(data, str) else decode_text(data, "standard input", error=UsageError)
    return _read_text(Path(path), error=UsageError)


def write_output(text: str) -> None:
    """A command's result (decoded text, ids) on standard output: UTF-8 whatever the locale says,
    as ``read_text`` reads it back; all of it, or an ``OSError`` naming standard output."""
    stream = sys.stdout
    if stream is None:
        raise UsageError("standard output is closed, so the result has nowhere to go; redirect it to a file")
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # a text-only stand-in (an IDE's console): it takes str
        stream.write(text)
        stream.flush()
        return
    stream.flush()  # lines printed before go first
    data = memoryview(text.encode("utf-8", errors="surrogateescape"))  # argv's undecodable bytes as they came
    with naming("standard output"):
        # subtle: a write that fills the disk or meets a closed pipe can take part of the data
        # and report no error; only the next write raises, so write until all of it is taken
        while data:
            data = data[buffer.write(data) :]
        buffer.flush()


def add_training_options(parser: argparse.ArgumentParser) -> None:
    """The flags of ``bytepair.train``; shared by ``bytepair train``, ``prepare`` and ``sweep``."""
    parser.add_argument("--mode", choices=("char", "byte"), default="char", help="character- or byte-level BPE")
    parser.add_argument(
        "--vocab-size",
        type=int,
        default=500,
        help="distinct tokens to reach (special tokens and --byte-fallback's 256 byte tokens not counted)",
    )
    parser.add_argument("--min-frequency", type=int, default=2, help="stop when the best pair occurs fewer times")
    parser.add_argument("--max-chars", type=int, default=None, help="train on the first N characters only")
    parser.add_argument(
        "--pattern", default=None, help="pre-tokenization: gpt2, cl100k, gpt4, o200k, llama3, or a regex"
    )
    parser.add_argument("--normalization", choices=("NFC", "NFKC"), default=None, help="Unicode normalization")
    parser.add_argument(
        "--special",
        action="append",
        default=None,
        metavar="TOKEN",
        help="a special token (ids after the learned vocabulary); repeat the flag for more",
    )
    parser.add_argument("--byte-fallback", action="store_true", help="char mode: unknown characters become byte tokens")
    parser.add_argument(
        "--num-threads",
        type=int,
        default=None,
        help="threads for counting (and for encoding in prepare/sweep); default: one per core",
    )
    # one or the other: --verbose prints every 100th merge, --quiet only the summary
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--verbose", action="store_true", help="print seed 000's merge log")
    output.add_argument("--quiet", action="store_true", help="no progress bar, only the summary")


def training_options(args: argparse.Namespace) -> dict:
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
        num_threads=args.num_threads,
        verbose=args.verbose,
        progress=False if args.quiet else None,
    )


def check_training_options(args):
    """Every training flag checked before any file is read or any work starts."""
    from .train import check_options

    check_options(**training_options(args))
