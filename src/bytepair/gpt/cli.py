"""``bytepair gpt train | eval | sample | compare``: the command line of ``bytepair.gpt``.

``register(subparsers)`` adds the ``gpt`` command to bytepair's parser; each subcommand's flags
mirror the keyword arguments of the function it calls (``train``, ``evaluate_checkpoint``,
``sample``, ``compare``). Progress bars show on a terminal and stay quiet in pipes. This module
imports neither torch nor matplotlib until a subcommand runs, so ``bytepair --help`` stays fast.
Errors are ``BytepairError``s; bytepair's ``main`` prints them as one ``error:`` line, exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from bytepair._cliutil import HelpFormatter, positive_count, write_output
from bytepair._io import check_output_folder

TRAIN_DEFAULTS = {  # shown in --help; the values themselves live in GPTConfig and TrainConfig
    "max_steps": 2000,
    "batch_size": 32,
    "learning_rate": 1e-3,
    "min_learning_rate": 1e-4,
    "warmup_steps": 100,
    "weight_decay": 0.1,
    "grad_clip": 1.0,
    "seed": 1337,
    "block_size": 128,
    "embedding_dim": 128,
    "num_heads": 4,
    "num_layers": 4,
    "expansion_factor": 4,
    "dropout": 0.1,
}


def characters(text: str) -> int:
    """A positive number of characters (``1_000_000`` and ``1,000,000`` accepted)."""
    return positive_count(text, "characters")


def byte_count(text: str) -> int:
    """A positive number of bytes, written as ``characters`` takes it."""
    return positive_count(text, "bytes")


def seconds(text: str) -> float:
    """A positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number of seconds")
    return value


def characters_or_all(text: str):
    """``--eval-characters`` value: a positive number of characters, or ``all`` (``None``)."""
    return None if text == "all" else characters(text)


def register(subparsers) -> None:
    """Add ``gpt`` and its subcommands to an argparse ``add_subparsers()`` object."""
    parser = subparsers.add_parser(
        "gpt",
        help="train, evaluate, sample and compare small GPTs (needs bytepair[gpt])",
        description="A small GPT on the folders written by `bytepair prepare`.",
        formatter_class=HelpFormatter,
    )
    commands = parser.add_subparsers(title="gpt commands", metavar="COMMAND", required=True)
    _add_train(commands)
    _add_eval(commands)
    _add_sample(commands)
    _add_compare(commands)


def _add_common(parser, *, progress=True):
    parser.add_argument("--device", default=None, help="torch device (default: cuda when available, else cpu)")
    parser.add_argument(
        "--vocab-dir",
        default=None,
        help="folder of published vocabularies, for tokenizers named by one (gpt2, ...), as encode-corpus outputs are",
    )
    if progress:
        parser.add_argument(
            "--progress",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="progress bar (default: only on a terminal)",
        )


def _add_train(commands):
    parser = commands.add_parser(
        "train",
        help="train a GPT on one prepared folder",
        formatter_class=HelpFormatter,
        description="Train a GPT on DATA (a folder with meta.json, e.g. prepared/encoded_bpe, or an "
        "encode-corpus output with a val split).",
    )
    parser.add_argument(
        "data", metavar="DATA", help="prepared folder with meta.json and train/val .bin files, or encode-corpus's"
    )
    parser.add_argument(
        "--out", default=None, help="checkpoint folder (default: checkpoints/<kind> for encoded_<kind>)"
    )
    parser.add_argument("--resume", action="store_true", help="continue the checkpoint in --out from its saved step")
    for name, kind in (
        ("max_steps", int),
        ("batch_size", int),
        ("learning_rate", float),
        ("min_learning_rate", float),
        ("warmup_steps", int),
        ("weight_decay", float),
        ("grad_clip", float),
        ("seed", int),
        ("block_size", int),
        ("embedding_dim", int),
        ("num_heads", int),
        ("num_layers", int),
        ("expansion_factor", int),
        ("dropout", float),
    ):
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            type=kind,
            default=None,
            help=f"default {TRAIN_DEFAULTS[name]}, or the checkpoint's with --resume",
        )
    parser.add_argument("--eval-interval", type=int, default=250, help="steps between validations and checkpoints")
    parser.add_argument(
        "--eval-characters",
        type=characters_or_all,
        default=100_000,
        help="validation characters per evaluation, or 'all'",
    )
    _add_common(parser)
    parser.set_defaults(run=_run_train)


def _add_eval(commands):
    parser = commands.add_parser(
        "eval", help="bits per character and per byte of a checkpoint on a split", formatter_class=HelpFormatter
    )
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help="checkpoint folder or .pt file")
    parser.add_argument(
        "data", metavar="DATA", help="prepared or encode-corpus folder (one with the checkpoint's tokenizer)"
    )
    parser.add_argument("--split", choices=("train", "val", "test"), default="val", help="which split")
    parser.add_argument(
        "--eval-characters", type=characters_or_all, default="all", help="characters to evaluate, or 'all'"
    )
    parser.add_argument("--batch-size", type=int, default=32, help="windows per forward pass")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    _add_common(parser, progress=False)
    parser.set_defaults(run=_memory_errors(_run_eval))


def _add_sample(commands):
    parser = commands.add_parser("sample", help="generate text from a checkpoint", formatter_class=HelpFormatter)
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help="checkpoint folder or .pt file")
    parser.add_argument(
        "-t",
        "--tokenizer",
        required=True,
        help="the tokenizer the checkpoint was trained with: its file (e.g. prepared/tokenizer.bytepair.json) "
        "or a published name (gpt2, cl100k_base, ...; see --vocab-dir)",
    )
    parser.add_argument("--prompt", default="\n", help="text to continue (default: a new line)")
    parser.add_argument("--max-new-tokens", type=int, default=200, help="tokens to generate")
    parser.add_argument("--temperature", type=float, default=1.0, help="divide the logits by this (> 0)")
    parser.add_argument(
        "--top-k", type=int, default=None, help="sample among the k likeliest tokens only (default: all; 1 = greedy)"
    )
    parser.add_argument("--seed", type=int, default=1337, help="sampling seed")
    _add_common(parser, progress=False)
    parser.set_defaults(run=_memory_errors(_run_sample))


def _add_compare(commands):
    parser = commands.add_parser(
        "compare",
        help="GPTs on several tokenizations of one text: same architecture, same budget, bits per byte",
        formatter_class=HelpFormatter,
        description="Train one GPT per tokenization of the same text (char, BPE 500, BPE 2,000, cl100k, ...) "
        "for the same training characters, bytes or seconds, and compare validation bits per byte "
        "and per character in one table and one plot (bits per byte against training bytes).",
    )
    parser.add_argument(
        "data",
        metavar="PREPARED_OR_SHARDS",
        nargs="+",
        help="`bytepair prepare` outputs (each stands for its encoded_char/ and encoded_bpe/), "
        "encoded_*/ folders of them, or `bytepair encode-corpus` outputs, all of the same text",
    )
    parser.add_argument(
        "--out", default="checkpoints", help="folder for one checkpoint folder per model and comparison.{json,txt,png}"
    )
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument(
        "--characters",
        type=characters,
        default=None,
        help="training characters for each model (the default budget: 1,000,000)",
    )
    budget.add_argument("--bytes", type=byte_count, default=None, help="training UTF-8 bytes for each model")
    budget.add_argument(
        "--seconds",
        type=seconds,
        default=None,
        help="seconds of training for each model (steps timed on a few trial steps)",
    )
    for name in ("batch_size", "block_size", "embedding_dim", "num_heads", "num_layers", "expansion_factor"):
        parser.add_argument(
            f"--{name.replace('_', '-')}", type=int, default=TRAIN_DEFAULTS[name], help=name.replace("_", " ")
        )
    for name in ("dropout", "learning_rate", "min_learning_rate", "weight_decay", "grad_clip"):
        parser.add_argument(
            f"--{name.replace('_', '-')}", type=float, default=TRAIN_DEFAULTS[name], help=name.replace("_", " ")
        )
    parser.add_argument("--seed", type=int, default=1337, help="seed of every run")
    parser.add_argument("--eval-points", type=int, default=10, help="validation points on each learning curve")
    parser.add_argument(
        "--eval-characters",
        type=characters_or_all,
        default=100_000,
        help="validation and test characters evaluated (the same for every model), or 'all'",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace existing checkpoints in --out")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON instead of a table")
    _add_common(parser)
    parser.set_defaults(run=_memory_errors(_run_compare))


# The settings that set how much memory a command takes, as argparse names them.
SIZE_SETTINGS = ("batch_size", "eval_batch_size", "block_size")


def _memory_errors(run):
    """``run`` with torch's out-of-memory error as one line naming what to make smaller
    (training turns its own into one already, naming its settings)."""

    def guarded(args) -> int:
        from bytepair.gpt.errors import GPTSettingError
        from bytepair.gpt.model import is_out_of_memory

        try:
            return run(args)
        except RuntimeError as error:
            if not is_out_of_memory(error):
                raise
            sizes = [f"--{k.replace('_', '-')}" for k in SIZE_SETTINGS if getattr(args, k, None) is not None]
            device = getattr(args, "device", None) or "the default device"
            raise GPTSettingError(f"out of memory on {device}; use a smaller {' or '.join(sizes) or 'model'}") from None

    return guarded


def _run_train(args) -> int:
    from bytepair.gpt.evaluation import format_bits
    from bytepair.gpt.training import check_out_dir, default_out_dir, train

    out = args.out if args.out is not None else default_out_dir(args.data)
    check_out_dir(out, flag="--out")  # named as the command line names it, before the data is read
    names = list(TRAIN_DEFAULTS)
    result = train(
        args.data,
        out,
        **{name: getattr(args, name) for name in names},
        eval_interval=args.eval_interval,
        eval_characters=args.eval_characters,
        resume=args.resume,
        device=args.device,
        progress=args.progress,
        vocab_dir=args.vocab_dir,
    )
    print(f"model: {result.model_config.to_dict()}")
    print(f"recipe: {result.config.to_dict()}")
    print(
        f"checkpoint: {result.checkpoint} (step {result.step:,}, {result.tokens:,} tokens, "
        f"{result.characters:,.0f} characters, {result.train_seconds:.1f} s of training)"
    )
    print(
        f"validation: {result.validation.bits_per_character:.4f} bits/character over "
        f"{result.validation.characters:,} characters, {format_bits(result.validation.bits_per_byte)} bits/byte "
        f"({result.validation.loss_per_token:.4f} nats/token)"
    )
    return 0


def _run_eval(args) -> int:
    from bytepair.gpt.evaluation import evaluate_checkpoint

    result = evaluate_checkpoint(
        args.checkpoint,
        args.data,
        split=args.split,
        eval_characters=args.eval_characters,
        batch_size=args.batch_size,
        device=args.device,
        vocab_dir=args.vocab_dir,
    )
    if args.json:
        print(json.dumps({"split": args.split, **result.to_dict()}, indent=2))
        return 0
    special = f", {result.special_tokens:,} special tokens not scored" if result.special_tokens else ""
    print(
        f"{args.split}: {result.bits_per_character:.4f} bits/character over {result.characters:,} characters, "
        f"{result.bits_per_byte:.4f} bits/byte over {result.bytes:,} bytes "
        f"({result.tokens:,} tokens{special}, {result.loss_per_token:.4f} nats/token, per-token perplexity "
        f"{result.perplexity:.3f}, which does not compare across tokenizers)"
    )
    return 0


def _run_sample(args) -> int:
    import bytepair
    from bytepair.gpt.sampling import sample

    text = sample(
        args.checkpoint,
        bytepair.load(args.tokenizer, path=args.vocab_dir),
        prompt=args.prompt,
        max_new_tokens=args.max_new_tokens,
        temperature=args.temperature,
        top_k=args.top_k,
        seed=args.seed,
        device=args.device,
    )
    write_output(args.prompt + text + "\n")
    return 0


def _run_compare(args) -> int:
    from bytepair.gpt.comparison import compare

    check_output_folder(args.out, "--out")  # before any model is trained
    settings = {
        name: getattr(args, name)
        for name in (
            "characters",
            "bytes",
            "seconds",
            "vocab_dir",
            "batch_size",
            "block_size",
            "embedding_dim",
            "num_heads",
            "num_layers",
            "expansion_factor",
            "dropout",
            "learning_rate",
            "min_learning_rate",
            "weight_decay",
            "grad_clip",
            "eval_points",
            "eval_characters",
            "seed",
            "device",
            "overwrite",
            "progress",
        )
    }
    result = compare(args.data, args.out, **settings)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(result.table(), end="")
        print("wrote " + ", ".join(str(path) for path in result.files.values()))
    return 0


def main(argv=None) -> int:
    """``python -m bytepair.gpt``: the ``gpt`` commands on their own (bytepair's CLI has them too)."""
    from bytepair.errors import BytepairError

    parser = argparse.ArgumentParser(prog="python -m bytepair.gpt")
    register(parser.add_subparsers(required=True))
    args = parser.parse_args(["gpt", *(sys.argv[1:] if argv is None else argv)])
    try:
        return args.run(args)
    except (BytepairError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


__all__ = ["main", "register"]
