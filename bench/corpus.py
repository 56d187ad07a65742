"""Corpus to shards, end to end, side by side in one process.

Builds a JSON Lines corpus of about ``--mb`` megabytes (WikiText-2 train cut into its articles,
repeated), then times on the same documents and threads:

    engine    bytepair ``encode_batch`` on the documents already in memory (no reading, no writing)
    corpus    ``bytepair.datasets.corpus.encode_corpus``: read the file, encode, write train.bin
    tiktoken  tiktoken's ``encode_ordinary_batch`` on the documents in memory + a plain numpy write

and prints seconds, MB/s, tokens/s and the ratios corpus/engine (the target is at least 0.8)
and tiktoken/corpus (at least 4). The corpus run computes the tokenizer's fingerprint (for
``meta.json``) on its first use, a fixed cost per run that is printed apart. ``--rss`` runs ``bytepair encode-corpus`` once more in a child
process and reports its peak resident memory (the target: under 500 MB for 1 GB).

    python bench/corpus.py --mb 100 --num-threads 2 --tokenizer gpt2
    python bench/corpus.py --mb 1000 --rss-only

Needs tiktoken (``pip install ".[bench]"``) and the data folder (``$BYTEPAIR_DATA``, default
``../shared/data``) for WikiText-2 and the vocabulary files.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bytepair.datasets import split_articles

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("BYTEPAIR_DATA", ROOT.parent / "shared" / "data"))
TIKTOKEN_NAMES = {"gpt2": "gpt2", "cl100k_base": "cl100k_base", "o200k_base": "o200k_base"}


def articles(path):
    """WikiText-2's articles: a top-level heading line `` = Title = `` starts each one."""
    return split_articles(path.read_text(encoding="utf-8"))


def build_corpus(folder, megabytes):
    docs = articles(DATA / "wikitext-2" / "train.txt")
    path = folder / f"wikitext2-x-{megabytes}mb.jsonl"
    target, written = megabytes * 1_000_000, 0
    with open(path, "w", encoding="utf-8") as out:
        while written < target:
            for doc in docs:
                line = json.dumps({"text": doc}, ensure_ascii=False) + "\n"
                out.write(line)
                written += len(doc.encode("utf-8"))
                if written >= target:
                    break
    return path, written


def read_jsonl(path):
    with open(path, encoding="utf-8") as file:
        return [json.loads(line)["text"] for line in file]


def timed(function):
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=100, help="corpus size in MB of text")
    parser.add_argument("--num-threads", dest="threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--tokenizer", default="gpt2", choices=sorted(TIKTOKEN_NAMES))
    parser.add_argument(
        "--workdir", type=Path, default=None, help="where the corpus and outputs go (default: a temporary folder)"
    )
    parser.add_argument("--rss", action="store_true", help="also run encode-corpus in a child process for its peak RSS")
    parser.add_argument("--rss-only", action="store_true", help="only the child-process run (for the 1 GB figure)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    import bytepair
    from bytepair.datasets.corpus import encode_corpus

    with tempfile.TemporaryDirectory(dir=args.workdir) as work:
        work = Path(work)
        corpus, text_bytes = build_corpus(work, args.mb)
        mb = text_bytes / 1e6
        print(f"corpus: {corpus.name}, {mb:,.1f} MB of text, {args.threads} threads, tokenizer {args.tokenizer}")
        if not args.rss_only:
            tokenizer = bytepair.load(args.tokenizer, path=DATA / "vocab")
            docs = read_jsonl(corpus)
            tokenizer.encode_batch(docs[:200], num_threads=args.threads)  # warm the engine and its caches
            engine_s, lists = timed(
                lambda: tokenizer.encode_batch(docs, num_threads=args.threads, disallowed_special=())
            )
            tokens = sum(map(len, lists)) + len(lists)
            del lists
            corpus_s, meta = timed(
                lambda: encode_corpus(
                    [corpus], tokenizer, work / "out", num_threads=args.threads, progress=False, log=None
                )
            )
            assert meta["splits"]["train"]["tokens"] == tokens, (meta["splits"]["train"]["tokens"], tokens)
            import tiktoken

            if args.tokenizer == "gpt2":
                encoding = (
                    tiktoken.get_encoding("gpt2")
                    if _tiktoken_cached("gpt2")
                    else _tiktoken_from_file(tokenizer, "r50k_base")
                )
            else:
                encoding = _tiktoken_from_file(tokenizer, args.tokenizer)
            encoding.encode_ordinary_batch(docs[:200], num_threads=args.threads)

            def tiktoken_run():
                eot = encoding.eot_token
                out = encoding.encode_ordinary_batch(docs, num_threads=args.threads)
                ids = np.concatenate([np.asarray(ids + [eot], dtype=np.uint16) for ids in out])
                ids.tofile(work / "tiktoken.bin")
                return ids

            tiktoken_s, ids = timed(tiktoken_run)
            same = np.array_equal(ids, np.memmap(work / "out" / "train.bin", dtype=np.uint16, mode="r"))
            print(f"{'':10} {'seconds':>8} {'MB/s':>8} {'Mtokens/s':>10}")
            for name, seconds in (("engine", engine_s), ("corpus", corpus_s), ("tiktoken", tiktoken_s)):
                print(f"{name:10} {seconds:8.2f} {mb / seconds:8.1f} {tokens / seconds / 1e6:10.2f}")
            print(f"corpus / engine speed:   {engine_s / corpus_s:.2f}x (target >= 0.8)")
            fresh = bytepair.load(args.tokenizer, path=DATA / "vocab")
            fingerprint_s, _ = timed(lambda: fresh.fingerprint)
            print(
                f"  of the corpus run, {fingerprint_s:.2f}s is the tokenizer's fingerprint, once per run; "
                f"without it {engine_s / max(corpus_s - fingerprint_s, 1e-9):.2f}x"
            )
            print(f"corpus / tiktoken speed: {tiktoken_s / corpus_s:.2f}x (target >= 4)")
            print(f"same ids as tiktoken: {same}; tokens {tokens:,}")
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"peak RSS of this process (documents held in memory for the baselines): {peak:,.0f} MB")
        if args.rss or args.rss_only:
            # The child reports its own high-water mark (VmHWM): RUSAGE_CHILDREN would also count
            # the pages of this process that a forked child shares before it runs the command.
            child = (
                "import runpy, sys; sys.argv = ['bytepair'] + sys.argv[1:]\n"
                "try:\n    runpy.run_module('bytepair', run_name='__main__')\n"
                "finally:\n    print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1], file=sys.stderr)"
            )
            command = [
                sys.executable,
                "-c",
                child,
                "encode-corpus",
                str(corpus),
                "-t",
                args.tokenizer,
                "--vocab-dir",
                str(DATA / "vocab"),
                "-o",
                str(work / "rss-out"),
                "--num-threads",
                str(args.threads),
                "--quiet",
            ]
            env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
            seconds, done = timed(
                lambda: subprocess.run(
                    command, check=False, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
                )
            )
            peak = int(done.stderr.strip().splitlines()[-1]) / 1024
            print(
                f"encode-corpus in a child process: {seconds:.1f}s, {mb / seconds:.1f} MB/s, peak RSS {peak:,.0f} MB for {mb:,.0f} MB of text"
            )


def _tiktoken_cached(name):
    return False  # no network here: build the encoding from the vocabulary file instead


def _tiktoken_from_file(tokenizer, name):
    """A tiktoken Encoding from the local rank file, with the pattern and specials tiktoken uses."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(DATA / "vocab" / f"{name}.tiktoken"))
    return tiktoken.Encoding(
        name, pat_str=tokenizer.pattern, mergeable_ranks=ranks, special_tokens=dict(tokenizer.special_tokens)
    )


if __name__ == "__main__":
    main()
