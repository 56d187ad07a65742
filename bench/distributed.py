"""The cost of Ray: the same training and encoding on one machine and through ``bytepair.distributed``.

Cuts WikiText-2 train into its articles, repeated to about ``--mb`` megabytes, written as
``--shards`` JSON Lines files, then times on the same documents:

    train   ``bytepair.train`` (count + learn in one process) against ``distributed.train``
            (count tasks, tree merge, learn on the driver); byte mode, cl100k, ``--vocab``
    encode  ``datasets.encode_corpus`` (all cores) against ``distributed.encode_corpus``

Each Ray run is repeated after a first warm-up run (worker processes started), as a cluster
that stays up would run it. It prints seconds, MB/s per core used, and the serial parts that
stay on one machine (the learning of merges and the last merge of counts; the driver's
writing of shards), then what N machines of ``--cores`` cores would give (Amdahl: serial time
plus the parallel work at the measured per-core rate under Ray).

    PYTHONPATH=src python bench/distributed.py --mb 20 --shards 16

Needs Ray (``pip install ".[ray]"``) and the data folder (``$BYTEPAIR_DATA``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from bytepair.datasets import split_articles

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("BYTEPAIR_DATA", ROOT.parent / "shared" / "data"))


def documents(megabytes):
    text = (DATA / "wikitext-2" / "train.txt").read_text(encoding="utf-8")
    articles = split_articles(text)
    found, size = [], 0
    while size < megabytes * 1e6:
        for article in articles:
            found.append(article)
            size += len(article.encode("utf-8"))
    return found, size


def write_shards(folder, docs, count):
    per = -(-len(docs) // count)
    for number in range(count):
        with open(folder / f"part_{number:03d}.jsonl", "w", encoding="utf-8") as file:
            for doc in docs[number * per : (number + 1) * per]:
                file.write(json.dumps({"text": doc}) + "\n")


def timed(function):
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=20)
    parser.add_argument("--shards", type=int, default=16)
    parser.add_argument("--vocab", type=int, default=2000)
    parser.add_argument("--tokenizer", default="cl100k_base")
    parser.add_argument("--cores", type=int, default=32, help="cores per machine in the extrapolation")
    args = parser.parse_args()

    import ray

    import bytepair
    from bytepair import distributed
    from bytepair.datasets.corpus import encode_corpus
    from bytepair.train import count_pieces, learn

    cores = os.cpu_count() or 1
    docs, size = documents(args.mb)
    mb = size / 1e6
    work = Path(tempfile.mkdtemp(prefix="bytepair-bench-"))
    try:
        folder = work / "shards"
        folder.mkdir()
        write_shards(folder, docs, args.shards)
        options = {"mode": "byte", "vocab_size": args.vocab, "pattern": "cl100k"}
        print(f"{len(docs):,} documents, {mb:.1f} MB in {args.shards} JSON Lines files; {cores} cores")

        # -- training
        one_count, counted = timed(lambda: count_pieces(docs, mode="byte", pattern="cl100k"))
        one_learn, reference = timed(lambda: learn(counted, **options))
        half = len(counted.pieces) // 2
        from bytepair.train import PieceCounts

        left = PieceCounts(counted.pieces[:half], counted.counts[:half])
        right = PieceCounts(counted.pieces[half:], counted.counts[half:])
        root_merge, _ = timed(lambda: left.merged(right))
        started, _ = timed(lambda: distributed.connect(num_cpus=cores))
        ray.data.DataContext.get_current().enable_progress_bars = False
        distributed.train([str(folder)], **options)  # warm-up: worker processes start
        ray_train, trained = timed(lambda: distributed.train([str(folder)], **options))
        assert trained.fingerprint == reference.fingerprint
        print(f"ray.init: {started:.1f} s")
        print(
            f"train one machine: count {one_count:.2f} s + learn {one_learn:.2f} s; {len(counted.pieces):,} unique pieces"
        )
        print(f"train on Ray: {ray_train:.2f} s (same fingerprint); root merge of two halves {root_merge:.2f} s")

        # -- encoding
        tokenizer = bytepair.load(args.tokenizer, path=DATA / "vocab")
        quiet = {"progress": False, "log": None}
        one_encode, meta = timed(
            lambda: encode_corpus([str(folder)], tokenizer, work / "one", num_threads=cores, **quiet)
        )
        distributed.encode_corpus([str(folder)], tokenizer, work / "warm", **quiet)
        ray_encode, _ = timed(lambda: distributed.encode_corpus([str(folder)], tokenizer, work / "ray", **quiet))
        for name in sorted(p.name for p in (work / "one").iterdir()):
            assert (work / "one" / name).read_bytes() == (work / "ray" / name).read_bytes(), name
        tokens = meta["splits"]["train"]["tokens"]
        # the driver's share of the Ray run: writing shards from encoded arrays, measured alone
        import numpy as np

        from bytepair.datasets import shards as shards_module
        from bytepair.datasets.corpus import write_documents

        ids = np.fromfile(work / "one" / "train.bin", dtype=meta["dtype"])
        (work / "w").mkdir()
        writer = {"train": shards_module.ShardWriter(work / "w", "train", meta["dtype"])}
        lengths = np.array([len(ids)], dtype=np.int64)
        driver_write, _ = timed(lambda: write_documents(writer, ids, lengths, [0], [size], [size], [1]))
        writer["train"].finish()
        print(f"encode one machine: {one_encode:.2f} s ({mb / one_encode:.1f} MB/s, {tokens:,} tokens)")
        print(
            f"encode on Ray: {ray_encode:.2f} s ({mb / ray_encode:.1f} MB/s, byte-identical); driver writes all shards in {driver_write:.2f} s"
        )

        per_core = {
            "train one": mb / one_count / cores,
            "train ray": mb / max(ray_train - one_learn - root_merge, 1e-9) / cores,
            "encode one": mb / one_encode / cores,
            "encode ray": mb / ray_encode / cores,
        }
        print("per-core MB/s: " + ", ".join(f"{k} {v:.2f}" for k, v in per_core.items()))
        print(
            f"Ray / one machine per core: train counting {per_core['train ray'] / per_core['train one']:.2f}, "
            f"encoding {per_core['encode ray'] / per_core['encode one']:.2f}"
        )
        corpus_gb = 1000
        serial_train = one_learn + root_merge
        serial_encode_per_gb = driver_write / mb * 1000
        print(
            f"extrapolation to {corpus_gb} GB, machines of {args.cores} cores (serial: learn + root merge on this corpus's pieces; "
            f"encoding: the driver's writes, {serial_encode_per_gb:.1f} s/GB):"
        )
        for machines in (1, 4, 16, 64):
            used = machines * args.cores
            train_time = corpus_gb * 1000 / (per_core["train ray"] * used) + serial_train
            encode_time = max(corpus_gb * 1000 / (per_core["encode ray"] * used), serial_encode_per_gb * corpus_gb)
            print(
                f"  {machines:3d} machines: count+learn {train_time / 60:7.1f} min, encode {encode_time / 60:7.1f} min"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
        ray.shutdown()


if __name__ == "__main__":
    main()
