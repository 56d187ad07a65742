"""The ``bytepair prepare`` and ``bytepair sweep`` commands (added by ``register``).

Both take the corpus the same way: a folder (WikiText-2's raw or tokens files, or plain
``train.txt``/``val.txt``/``test.txt``), explicit ``--train/--val/--test`` files, or
``--download`` (WikiText-2 from its public zip, into a cache, checked by SHA-256). Every flag
of ``bytepair train`` is available too. This module parses and prints; the work is in
``prepare.py``, ``sweep.py`` and ``wikitext.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bytepair._cliutil import HelpFormatter, add_training_options, training_options
from bytepair._io import cache_folder, check_output_folder
from bytepair.errors import UsageError

from .blocks import ENCODE_BLOCK_CHARS
from .wikitext import CLEANINGS, SPLITS

PREPARE_EPILOG = (
    "Defaults are seed 000's: character mode, vocab 500, the first 500,000 characters of train "
    "(--max-chars 0 trains on all of it); merges come from train only, the base alphabet from "
    "every split. --tokenizer encodes with an existing tokenizer instead of training one. "
    "Writes OUT/tokenizer.bytepair.json and OUT/encoded_bpe/ ({train,val,test}.bin + meta.json), with "
    "--char-baseline OUT/encoded_char/ (for `bytepair gpt compare`), with --pt *_ids.pt files."
)


def register(subparsers):
    _add_prepare(subparsers)
    _add_sweep(subparsers)
    _add_encode_corpus(subparsers)


def _add_corpus_options(parser):
    parser.add_argument(
        "source",
        nargs="?",
        type=Path,
        default=None,
        help="folder with the split files (WikiText-2 raw or tokens names, or train.txt/val.txt/test.txt)",
    )
    parser.add_argument(
        "--train", type=Path, default=None, metavar="FILE", help="training split file (instead of SOURCE)"
    )
    parser.add_argument("--val", type=Path, default=None, metavar="FILE", help="validation split file")
    parser.add_argument("--test", type=Path, default=None, metavar="FILE", help="test split file")
    parser.add_argument(
        "--variant",
        choices=("auto", "raw", "tokens"),
        default="auto",
        help="which WikiText-2 files to use (--download: auto means raw)",
    )
    parser.add_argument(
        "--cleaning",
        choices=CLEANINGS,
        default="none",
        help="none keeps the files exactly; clean drops empty lines, strips line edges, joins @-@ @,@ @.@",
    )
    parser.add_argument(
        "--download",
        action="store_true",
        help="download WikiText-2 into the cache (only the first time) instead of SOURCE",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=cache_folder(),
        help="download cache ($BYTEPAIR_CACHE, else $XDG_CACHE_HOME/bytepair or ~/.cache/bytepair)",
    )
    parser.add_argument("--url", default=None, help="download from this mirror instead of the public address")
    parser.add_argument("--sha256", default=None, help="expected SHA-256 of the zip, if it is not the published one")


def _add_training(parser, *, max_chars=500_000):
    add_training_options(parser)
    parser.set_defaults(max_chars=max_chars)


def _add_prepare(subparsers):
    parser = subparsers.add_parser(
        "prepare",
        help="train on a corpus and write its splits as token streams (seed 000, end to end)",
        description="Train a tokenizer on the train split, encode every split, check and write them.",
        epilog=PREPARE_EPILOG,
        formatter_class=HelpFormatter,
    )
    _add_corpus_options(parser)
    _add_training(parser)
    parser.add_argument("-o", "--output", type=Path, default=Path("prepared"), help="output folder OUT")
    parser.add_argument(
        "--workers", type=int, dest="num_threads", help=argparse.SUPPRESS
    )  # deprecated name of --num-threads
    parser.add_argument(
        "-t",
        "--tokenizer",
        default=None,
        help="encode with this tokenizer instead of training one: a published name (gpt2, cl100k_base, ...), a .tiktoken file, an HF tokenizer.json or a bytepair tokenizer file",
    )
    parser.add_argument(
        "--vocab-dir",
        type=Path,
        default=None,
        help="folder holding vocabularies by name, for --tokenizer (default: $BYTEPAIR_VOCAB_DIR, then the download cache)",
    )
    parser.add_argument(
        "--char-baseline",
        action="store_true",
        help="also write OUT/encoded_char/, a character-level encoding of the same text (for `bytepair gpt compare`)",
    )
    parser.add_argument("--pt", action="store_true", help="also write the torch *_ids.pt files (needs torch)")
    parser.add_argument(
        "--no-pt", action="store_true", help=argparse.SUPPRESS
    )  # the old default wrote them; now --pt asks
    parser.add_argument(
        "--block-chars", type=int, default=ENCODE_BLOCK_CHARS, help="block size for large splits, in characters"
    )
    parser.add_argument(
        "--write-text",
        type=Path,
        default=None,
        metavar="DIR",
        help="also write each (cleaned) split as DIR/wikitext2_{split}_clean.txt",
    )
    parser.set_defaults(run=_run_prepare, training_defaults=_training_defaults(parser))


def _training_defaults(parser):
    """The training options a parser gives when no training flag is typed."""
    names = (
        "mode",
        "vocab_size",
        "min_frequency",
        "max_chars",
        "pattern",
        "normalization",
        "special",
        "byte_fallback",
        "num_threads",
        "verbose",
        "quiet",
    )
    return argparse.Namespace(**{name: parser.get_default(name) for name in names})


def _add_sweep(subparsers):
    from .sweep import DEFAULT_VOCAB_SIZES, RARE_WORDS

    parser = subparsers.add_parser(
        "sweep",
        help="compare vocabulary sizes: training time, sequence length, compression, embedding size",
        description="Seed 000's exercises 1, 3 and 5: one tokenizer per vocabulary size, measured on the same corpus.",
        formatter_class=HelpFormatter,
    )
    _add_corpus_options(parser)
    _add_training(parser)
    for action in parser._actions:
        if action.dest == "vocab_size":
            action.help = argparse.SUPPRESS  # --vocab-sizes replaces it
            action.default = None
    parser.add_argument(
        "--vocab-sizes",
        type=int,
        nargs="+",
        default=list(DEFAULT_VOCAB_SIZES),
        metavar="N",
        help="vocabulary sizes to compare",
    )
    parser.add_argument("--dim", type=int, default=128, help="embedding dimension for the embedding-size column")
    parser.add_argument("--context", type=int, default=128, help="tokens of validation whose characters are counted")
    parser.add_argument(
        "--words", nargs="+", default=list(RARE_WORDS), metavar="WORD", help="words whose pieces are shown"
    )
    parser.add_argument("-o", "--output", type=Path, default=Path("sweep"), help="folder for sweep.json and sweep.png")
    parser.add_argument(
        "--workers", type=int, dest="num_threads", help=argparse.SUPPRESS
    )  # deprecated name of --num-threads
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of the table")
    parser.add_argument("--no-plot", action="store_true", help="do not draw sweep.png (no matplotlib needed)")
    parser.add_argument(
        "--no-check-prefixes",
        dest="check_prefixes",
        action="store_false",
        default=argparse.SUPPRESS,
        help="trust the smaller sizes taken as prefixes of the largest training, without training each to compare",
    )
    parser.set_defaults(run=_run_sweep)


# -- running ----------------------------------------------------------------------------------


def split_files(args):
    """``{"train": Path, ...}`` from SOURCE, --train/--val/--test or --download."""
    from .wikitext import download_wikitext, find_split_files

    explicit = {name: getattr(args, name) for name in SPLITS if getattr(args, name) is not None}
    for name, path in explicit.items():
        if Path(path).is_dir():
            raise UsageError(f"--{name} {str(path)!r} is a folder; give the split's text file, or the folder as SOURCE")
    chosen = [
        what
        for what, given in (("SOURCE", args.source), ("--train/--val/--test", explicit), ("--download", args.download))
        if given
    ]
    stray = [
        flag
        for flag, value in (("--url", getattr(args, "url", None)), ("--sha256", getattr(args, "sha256", None)))
        if value
    ]
    if stray and not args.download:
        raise UsageError(f"{' and '.join(stray)} only apply with --download; add it, or leave them out")
    if len(chosen) != 1:
        raise UsageError(
            "give the corpus one way: a SOURCE folder, --train FILE (with --val/--test), or --download"
            + (f"; got {' and '.join(chosen)}" if chosen else "")
        )
    if explicit:
        if "train" not in explicit:
            raise UsageError("--val/--test need --train FILE too; the tokenizer is trained on it")
        return explicit
    if args.download:
        variant = "raw" if args.variant == "auto" else args.variant
        folder = download_wikitext(
            variant, cache_dir=args.cache_dir, url=args.url, sha256=args.sha256, progress=False if args.quiet else None
        )
        return find_split_files(folder, variant=variant)
    return find_split_files(args.source, variant=args.variant)


def _training_options(args):
    if args.max_chars is not None and args.max_chars < 0:
        raise UsageError(f"--max-chars must be 0 (all of train) or more, not {args.max_chars}")
    options = training_options(args)
    if options["max_chars"] == 0:
        options["max_chars"] = None  # 0: all of train
    return options


def _run_prepare(args):
    from .blocks import SplitSource
    from .prepare import prepare
    from .wikitext import write_texts

    check_output_folder(args.output)
    if args.write_text is not None:
        check_output_folder(args.write_text, "--write-text")
    files = split_files(args)
    if args.block_chars < 1:
        raise UsageError(f"--block-chars must be at least 1, not {args.block_chars!r}")
    if args.pt and args.no_pt:
        raise UsageError("give --pt or --no-pt, not both")
    options = _training_options(args)
    if args.tokenizer is not None:
        # only the training flags actually typed go on, so that prepare can refuse them
        defaults = _training_options(args.training_defaults)
        options = {k: v for k, v in options.items() if v != defaults[k] or k in ("num_threads", "progress", "verbose")}
    prepare(
        args.output,
        files=files,
        tokenizer=args.tokenizer,
        vocab_dir=args.vocab_dir,
        cleaning=args.cleaning,
        char_baseline=args.char_baseline,
        pt_files=args.pt,
        block_chars=args.block_chars,
        **options,
    )
    if args.write_text is not None:
        texts = {name: SplitSource(name, path, cleaning=args.cleaning).text() for name, path in files.items()}
        for name, path in write_texts(texts, args.write_text).items():
            print(f"wrote {path} ({len(texts[name]):,} characters)")
    return 0


def _run_sweep(args):
    from .sweep import check_plotting, sweep, table, write_outputs

    if args.vocab_size is not None:
        raise UsageError(
            f"sweep compares several sizes: use --vocab-sizes {args.vocab_size} ... instead of --vocab-size"
        )
    if not args.no_plot:
        check_plotting()  # before the work, not after it
    check_output_folder(args.output)
    files = split_files(args)
    options = _training_options(args)
    options.pop("vocab_size")
    log = None if args.quiet or args.json else (lambda line: print(line, file=sys.stderr))
    result = sweep(
        files=files,
        vocab_sizes=args.vocab_sizes,
        dim=args.dim,
        context=args.context,
        words=args.words,
        cleaning=args.cleaning,
        log=log,
        check_prefixes=getattr(args, "check_prefixes", True),
        **options,
    )
    paths = write_outputs(result, args.output, plot=not args.no_plot)
    if args.json:
        print(result.to_json())
    else:
        for line in table(result):
            print(line)
        print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


# -- encode-corpus ------------------------------------------------------------------------------


def _add_encode_corpus(subparsers):
    parser = subparsers.add_parser(
        "encode-corpus",
        help="encode a corpus (text, JSON Lines, Parquet) with any tokenizer into np.memmap-ready shards",
        description="Stream the documents of INPUT... through a tokenizer into OUT/train.bin (and val.bin, or shards) with OUT/meta.json.",
        epilog="Example: bytepair encode-corpus data/*.jsonl.gz -t gpt2 -o out --val-fraction 0.01; then "
        "np.memmap('out/train.bin', dtype=np.uint16, mode='r') in the training loop.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="files, folders (recursive), globs of .txt/.jsonl/.json/.parquet (optionally .gz/.zst), or - for standard input",
    )
    parser.add_argument(
        "-t",
        "--tokenizer",
        required=True,
        help="a published name (gpt2, cl100k_base, o200k_base, llama3, ...), a .tiktoken file, an HF tokenizer.json or a bytepair tokenizer file",
    )
    parser.add_argument("-o", "--output", type=Path, required=True, help="output folder OUT")
    parser.add_argument(
        "--vocab-dir",
        type=Path,
        default=None,
        help="folder holding vocabularies by name (default: $BYTEPAIR_VOCAB_DIR, then the download cache)",
    )
    parser.add_argument("--text-field", default="text", help="JSON field / Parquet column holding the text")
    parser.add_argument(
        "--split-on",
        default=None,
        metavar="REGEX",
        help="cut text files into documents at this regex (e.g. '\\n\\s*\\n' for blank lines); default: one document per file",
    )
    parser.add_argument(
        "--eot",
        default="auto",
        metavar="TOKEN",
        help="special token after every document; auto: the tokenizer's end-of-text token if it has one; none: nothing",
    )
    parser.add_argument(
        "--allowed-special",
        default="",
        metavar="TOKENS",
        help="comma-separated special tokens whose strings in documents become special ids, or 'all'; others are encoded as text",
    )
    parser.add_argument(
        "--val-fraction", type=float, default=None, metavar="F", help="each document goes to val.bin with probability F"
    )
    parser.add_argument(
        "--val-documents",
        type=int,
        default=None,
        metavar="N",
        help="exactly N documents go to val.bin (reads the inputs twice)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the validation split")
    parser.add_argument(
        "--shard-tokens",
        type=int,
        default=None,
        metavar="N",
        help="shards of at most N tokens (SPLIT_000000.bin, ...); default one file per split",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run of the same command after its last complete shard (after a bad document: with --skip-bad)",
    )
    parser.add_argument(
        "--skip-bad", action="store_true", help="skip (and count) bad documents instead of stopping at the first"
    )
    parser.add_argument(
        "--num-threads",
        type=int,
        default=None,
        help="encoding threads (default: one per core; with --ray: per worker, default 1)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar, only the summary")
    parser.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="read and encode on a Ray cluster (auto: the one this machine belongs to; alone: a Ray started here); "
        "--num-threads is then per worker; put --ray after the inputs",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="with --ray: encoding workers (default: the cluster's CPUs over --num-threads)",
    )
    parser.set_defaults(run=_run_encode_corpus)


def _run_encode_corpus(args):
    from .corpus import encode_corpus

    check_output_folder(args.output)
    options = {"num_threads": args.num_threads}
    if args.ray is not None:
        from bytepair import distributed

        encode_corpus = distributed.encode_corpus
        options = {"ray_address": args.ray, "num_workers": args.workers, "threads_per_worker": args.num_threads or 1}
    elif args.workers is not None:
        raise UsageError("--workers applies to --ray runs; use --num-threads for the encoding threads here")
    encode_corpus(
        args.inputs,
        args.tokenizer,
        args.output,
        vocab_dir=args.vocab_dir,
        text_field=args.text_field,
        split_on=args.split_on,
        eot=args.eot,
        allowed_special="all" if args.allowed_special == "all" else [t for t in args.allowed_special.split(",") if t],
        val_fraction=args.val_fraction,
        val_documents=args.val_documents,
        seed=args.seed,
        shard_tokens=args.shard_tokens,
        resume=args.resume,
        skip_bad=args.skip_bad,
        **options,
        progress=False if args.quiet else None,
        log=lambda line: (
            print(line, file=sys.stderr) if line.startswith(("resuming", "removing", "nothing")) else print(line)
        ),
    )
    return 0
