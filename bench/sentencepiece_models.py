"""SentencePiece BPE models: bytepair against ``sentencepiece`` on Mistral's ``.model`` files.

    python bench/sentencepiece_models.py                       # wikitext-valid and english-docs
    python bench/sentencepiece_models.py --corpus udhr --threads 2

For each model and corpus: one call on the whole text on one thread (``encode_ordinary`` vs
``SentencePieceProcessor.encode(text)``), then the corpus's documents as a batch on N threads
(``encode_batch(..., num_threads=N)`` vs ``encode(list, num_threads=N)``). Each is timed three
times and the fastest kept; the ids are checked equal before anything is timed. Ratios are
sentencepiece time / bytepair time (above 1: bytepair is faster). Load times are shown once.

The tekken file is not here: it is a tiktoken-rule vocabulary with a custom regex, measured
like any other such vocabulary.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import corpora
import sentencepiece

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
import bytepair  # noqa: E402

MODELS = ("tokenizer.model.v1", "mistral_instruct_tokenizer_240323.model.v3")


def best_of(function, *args, repeats=3, **kwargs):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", nargs="+", default=["wikitext-valid", "english-docs"], choices=corpora.NAMES)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    folder = corpora.data_dir() / "vocab" / "mistral"
    print(
        f"| model | corpus | MB | 1 call: bytepair s | sentencepiece s | ratio | batch ×{args.threads}: bytepair s | sentencepiece s | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for model_name in MODELS:
        path = folder / model_name
        start = time.perf_counter()
        ours = bytepair.load(path)
        load_ours = time.perf_counter() - start
        start = time.perf_counter()
        theirs = sentencepiece.SentencePieceProcessor(model_file=str(path))
        load_theirs = time.perf_counter() - start
        print(
            f"<!-- {model_name}: load bytepair {load_ours:.2f} s, sentencepiece {load_theirs:.3f} s -->",
            file=sys.stderr,
        )
        for name in args.corpus:
            corpus = corpora.corpus(name)
            text, documents = corpus.text, corpus.documents
            assert ours.encode_ordinary(text) == theirs.encode(text), f"{model_name} / {name}: ids differ"
            assert ours.encode_batch(documents, num_threads=args.threads) == theirs.encode(documents), (
                f"{model_name} / {name}: batch ids differ"
            )
            one_ours = best_of(ours.encode_ordinary, text)
            one_theirs = best_of(theirs.encode, text)
            batch_ours = best_of(ours.encode_batch, documents, num_threads=args.threads)
            batch_theirs = best_of(theirs.encode, documents, num_threads=args.threads)
            print(
                f"| {model_name} | {name} | {corpus.nbytes / corpora.MB:.1f} | {one_ours:.2f} | {one_theirs:.2f} | "
                f"{one_theirs / one_ours:.1f} | {batch_ours:.2f} | {batch_theirs:.2f} | {batch_theirs / batch_ours:.1f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
