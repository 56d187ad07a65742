"""``bytepair view``: the command line of the token viewer (the page itself is ``bytepair.view``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .._cliutil import HelpFormatter, read_text
from .._io import check_output_file, write_text_atomic
from ..errors import BytepairError, UsageError
from ..formats.cli import load_tokenizers
from . import serve, view_page

# Characters a page shows unless --max-chars says otherwise: each becomes about 30 bytes of
# spans and attributes, and a browser takes seconds per 100,000 spans (10 MB of text gave a
# 278 MB page in 16 s; 100 MB ran out of memory at 7 GB).
VIEW_MAX_CHARS = 200_000
# Tokens (spans) a page holds at most unless --max-chars says otherwise, over all its panels: a
# character can be several tokens (Chinese with gpt2 is 2-3, an emoji 3-4 in each panel), and
# 200,000 of them made pages of 50-200 MB; 400,000 spans are 12-55 MB.
VIEW_MAX_TOKENS = 400_000


def _shown_part(text, tokenizers, allowed):
    """How many characters of ``text`` a page shows by default, and why fewer than all: at most
    ``VIEW_MAX_CHARS``, and as many as keep the page near ``VIEW_MAX_TOKENS`` spans over its
    panels (a tokenizer that cannot encode the text is left to the page's own error)."""
    shown = min(len(text), VIEW_MAX_CHARS)
    tokens = 0
    for _, tok in tokenizers:
        try:
            tokens += len(tok.encode(text[:shown], allowed_special=allowed, disallowed_special=()))
        except BytepairError:
            continue
    if tokens <= VIEW_MAX_TOKENS:
        return shown, ""
    why = f" ({shown:,} of them would be {tokens:,} tokens, a page too large for a browser)"
    return max(1, shown * VIEW_MAX_TOKENS // tokens), why


def register(subparsers):
    """Add the ``view`` command to the ``bytepair`` parser."""
    parser = subparsers.add_parser(
        "view",
        help="an HTML page showing how tokenizers cut a text",
        description="Write one self-contained HTML page: the text cut into tokens by each tokenizer, "
        "side by side, with token counts, characters and bytes per token; ids and bytes on hover.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "input",
        nargs="?",
        default=None,
        metavar="FILE_OR_TEXT",
        help="a UTF-8 text file, - for standard input, or the text itself",
    )
    parser.add_argument(
        "-t",
        "--tokenizer",
        action="append",
        required=True,
        metavar="TOKENIZER",
        help="a tokenizer file (ours, .tiktoken, tokenizer.json) or a vocabulary name (cl100k_base, ...); repeat for each",
    )
    parser.add_argument(
        "--vocab-dir",
        type=Path,
        default=None,
        help="folder holding vocabularies by name (default: $BYTEPAIR_VOCAB_DIR, then the download cache)",
    )
    parser.add_argument(
        "-o", "--output", type=Path, default=None, help="where to write the page (default: tokens.html)"
    )
    parser.add_argument(
        "--max-chars",
        type=int,
        default=None,
        help=f"show only the first N characters (default {VIEW_MAX_CHARS:,}: a page grows about 30 bytes a character)",
    )
    parser.add_argument(
        "--allowed-special",
        default="",
        metavar="TOKENS",
        help="comma-separated special tokens to show as such, or 'all'",
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="instead of a file, serve a live page on 127.0.0.1 where typed text is cut as you type",
    )
    parser.add_argument("--port", type=int, default=8000, help="port for --serve (0: any free port)")
    parser.set_defaults(run=run_view)


def run_view(args):

    if args.serve and args.output is not None:
        raise UsageError("--serve serves the page instead of writing it; give --serve or -o, not both")
    tokenizers = load_tokenizers(args.tokenizer, args.vocab_dir)
    allowed = "all" if args.allowed_special == "all" else frozenset(t for t in args.allowed_special.split(",") if t)
    if args.serve:
        serve(tokenizers, port=args.port, allowed_special=allowed)
        return 0
    if args.input is None:
        raise UsageError("give a text file, - for standard input, or the text itself to view")
    output = args.output or Path("tokens.html")
    check_output_file(output, [args.input, *args.tokenizer], example="tokens.html")
    text, name = read_input(args.input)
    if name == "text" and " " not in text and ("/" in text or "." in text):
        print(f"note: no file named {text!r}; showing the argument itself as the text", file=sys.stderr)
    if args.max_chars is not None and args.max_chars < 1:
        raise UsageError(f"--max-chars must be at least 1, not {args.max_chars}")
    if args.max_chars is not None:
        text = text[: args.max_chars]
    else:
        shown, why = _shown_part(text, tokenizers, allowed)
        if shown < len(text):
            print(
                f"note: showing the first {shown:,} of {len(text):,} characters{why}; give --max-chars for more",
                file=sys.stderr,
            )
        text = text[:shown]
    page = view_page(text, tokenizers, title=f"bytepair view: {_shown_name(name)}", allowed_special=allowed)
    try:
        write_text_atomic(output, page)
    except OSError as problem:  # e.g. a folder that lets no file be made beside the output (/proc)
        raise UsageError(
            f"-o {str(output)!r} cannot be written ({problem.strerror or problem}); give a file in a folder you can write to"
        ) from None
    # on standard error, as compare --html says it: -o /dev/stdout puts the page alone on standard output
    print(f"wrote {output} ({len(text):,} characters, {len(tokenizers)} tokenizer(s))", file=sys.stderr)
    return 0


def _shown_name(name):
    # a file name with bytes that are not UTF-8 (lone surrogates here) cannot go into the page
    return os.fsencode(name).decode("utf-8", errors="replace")


def read_input(value):
    """(text, name) for ``FILE_OR_TEXT``: an existing file, ``-`` for stdin, else the text itself."""
    if value == "-":
        return read_text("-"), "stdin"
    if value == "":  # Path("") is the current folder; the empty text is shown as an empty file is
        return "", "text"
    path = Path(value)
    try:
        exists = len(value) < 4096 and "\n" not in value and path.exists()
    except (OSError, ValueError):  # a name too long, or with a NUL: not a file
        exists = False
    if exists and path.is_dir():
        raise UsageError(f"{value!r} is a folder; give a text file, - for standard input, or the text itself")
    if exists:  # a file or a FIFO (<(...)) is read; read_text refuses a device with one line
        return read_text(path), path.name
    return _argument_text(value), "text"


def _argument_text(value):
    # Python hands undecodable argument bytes over as lone surrogates; they are decoded as the
    # live page decodes typed text (bad UTF-8 is U+FFFD), and said so, rather than refused.
    try:
        data = os.fsencode(value)
    except UnicodeEncodeError:  # surrogates that no bytes gave (main() called from Python)
        return value
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as bad:
        print(
            f"note: the text argument is not UTF-8 (byte {bad.start}: {data[bad.start : bad.start + 1]!r}); "
            "each bad byte sequence is shown as U+FFFD",
            file=sys.stderr,
        )
        return data.decode("utf-8", errors="replace")
