"""Training: from text to a ``Tokenizer``, with the compiled trainer doing the counting.

The steps: normalize the text, cut it at special tokens (they never take part in merges),
pre-tokenize it into pieces, count the unique pieces in order of first appearance, then learn
merges with incremental pair counts (``bytepair._engine.train_merges``), which gives exactly
the merges of ``bytepair.reference.train_bpe`` on the same pieces.

Example:
    >>> tok = train("low lower newest widest", mode="char", vocab_size=20, min_frequency=1)
    >>> tok.decode(tok.encode("lowest"))
    'lowest'
"""

from __future__ import annotations

import sys
from collections import Counter

from . import _engine
from .errors import TrainingError
from .normalize import check_normalization, normalize
from .special import strip_special
from .tokenizer import Tokenizer, _resolve

# Inputs longer than this are counted block by block, so memory follows the unique pieces.
BLOCK_CHARS = 1 << 20


def train(
    text,
    *,
    mode="char",
    vocab_size,
    min_frequency=2,
    pattern=None,
    normalization=None,
    special_tokens=None,
    base_text=None,
    base_tokens=None,
    max_chars=None,
    byte_fallback=False,
    verbose=False,
    progress=None,
):
    """Learn a BPE tokenizer from ``text`` (a str, or an iterable of str documents).

    - ``mode="char"``: the base alphabet is every character of the training text, plus those
      of ``base_text`` (str or list of str, e.g. all splits so validation and test encode) and
      ``base_tokens``; ``mode="byte"``: the 256 bytes.
    - ``vocab_size``: distinct tokens to reach, special tokens not counted; training stops
      earlier when no pair occurs ``min_frequency`` times.
    - ``pattern``: None (seed 000: the text is one sequence), a named pattern ("gpt2",
      "cl100k"/"gpt4", "o200k", "llama3") or a regex; merges never cross its pieces.
    - ``max_chars``: train on the first ``max_chars`` characters only.
    - ``progress``: True for a bar, False for none, None for a bar on a terminal only.
    - ``verbose``: print seed 000's log (the first 20 merges and every 100th).
    """
    check_normalization(normalization)
    if mode not in ("char", "byte"):
        raise TrainingError(f"unknown mode {mode!r}; use 'char' or 'byte'")
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or vocab_size < 1:
        raise TrainingError(f"vocab_size must be a positive integer, not {vocab_size!r}")
    if not isinstance(min_frequency, int) or min_frequency < 1:
        raise TrainingError(f"min_frequency must be an integer of at least 1, not {min_frequency!r}")
    if mode == "byte" and (base_text is not None or base_tokens is not None):
        raise TrainingError("base_text and base_tokens apply to mode='char' only; byte mode starts from 256 bytes")
    pattern_name, pattern_regex = _resolve(pattern)
    specials = list(special_tokens or ())

    documents = _documents(text, max_chars)
    documents = (normalize(d, normalization) for d in documents)
    if specials:
        documents = (segment for d in documents for segment in strip_special(d, specials))
    splitter = _splitter(pattern_name, pattern_regex)
    chunks, counts, seen_chars = _count_chunks(documents, splitter, mode)
    if not chunks:
        raise TrainingError("the training text is empty; give at least two characters of text")

    if mode == "char":
        alphabet = set(seen_chars)
        for extra in _as_texts(base_text):
            alphabet.update(normalize(extra, normalization))
        alphabet.update(base_tokens or ())
        base = sorted(alphabet)
        floor = len(base)
    else:
        base = []
        floor = 256
    if vocab_size < floor:
        raise TrainingError(
            f"vocab_size {vocab_size} is below the base alphabet's {floor} tokens; "
            f"ask for at least {floor}"
        )

    log = _log(chunks, counts, base, mode) if verbose else None
    bar = _progress_bar(progress, vocab_size - floor)
    result = _engine.train_merges(
        chunks,
        counts,
        mode=mode,
        base_tokens=base,
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        progress=bar.update_to if bar else None,
    )
    if bar:
        bar.close()
    values = [bytes([b]) for b in range(256)] if mode == "byte" else list(base)
    merges = []
    for left_id, right_id, merged_id, frequency, length in result:
        pair = (values[left_id], values[right_id])
        if merged_id == len(values):
            values.append(pair[0] + pair[1])
        merges.append(pair)
        if log:
            log(len(merges), pair, values[merged_id], frequency, length, len(values))
    tokenizer = Tokenizer(
        mode=mode,
        merges=merges,
        base_tokens=base if mode == "char" else None,
        pattern=pattern,
        normalization=normalization,
        special_tokens=special_tokens,
        byte_fallback=byte_fallback,
    )
    if verbose:
        print("Final vocabulary size:", tokenizer.vocab_size)
        print("Final training sequence length:", result[-1][4] if result else sum(len(c) * n for c, n in zip(chunks, counts)))
    return tokenizer


def _documents(text, max_chars):
    """The training input as an iterator of str, cut after ``max_chars`` characters."""
    if isinstance(text, str):
        documents = iter([text])
    else:
        try:
            documents = iter(text)
        except TypeError:
            raise TrainingError(f"training text must be a str or an iterable of str, not {type(text).__name__}") from None
    if max_chars is None:
        return documents
    if not isinstance(max_chars, int) or max_chars < 1:
        raise TrainingError(f"max_chars must be a positive integer, not {max_chars!r}")
    return _prefix(documents, max_chars)


def _prefix(documents, limit):
    for document in documents:
        if limit <= 0:
            return
        yield document[:limit]
        limit -= len(document)


def _as_texts(base_text):
    if base_text is None:
        return []
    return [base_text] if isinstance(base_text, str) else list(base_text)


def _splitter(pattern_name, pattern_regex):
    """A function from text to its pieces: the engine's scanner, the regex module, or none."""
    if pattern_regex is None:
        return None
    from .tokenizer import SCANNED_PATTERNS

    if pattern_name in SCANNED_PATTERNS:
        return Tokenizer(mode="byte", pattern=pattern_name).split
    from functools import partial

    from .patterns import split

    return partial(split, pattern=pattern_regex)


def _count_chunks(documents, splitter, mode):
    """Unique pieces in order of first appearance, with their counts and the characters seen.

    Without a pattern each document is one chunk (seed 000 trains on one sequence).
    """
    counts = Counter()  # keeps first-appearance order, and counts in C
    seen_chars = set()
    for document in documents:
        if not isinstance(document, str):
            raise TrainingError(f"training documents must be str, not {type(document).__name__}")
        if not document:
            continue
        if mode == "char":
            seen_chars.update(document)
        counts.update([document] if splitter is None else _split_blocks(document, splitter))
    return list(counts), list(counts.values()), seen_chars


def _split_blocks(document, splitter):
    """Pieces of a long document, block by block.

    subtle: a block boundary can fall inside a piece, so the last piece of each block is
    carried over and split again with the next block; pieces before it never look past it.
    """
    if len(document) <= BLOCK_CHARS:
        return splitter(document)
    pieces = []
    carry = ""
    for start in range(0, len(document), BLOCK_CHARS):
        block_pieces = splitter(carry + document[start : start + BLOCK_CHARS])
        carry = block_pieces.pop() if block_pieces else ""
        pieces.extend(block_pieces)
    if carry:
        pieces.extend(splitter(carry))
    return pieces


def _progress_bar(progress, total):
    if progress is False or (progress is None and not sys.stderr.isatty()):
        return None
    from tqdm import tqdm

    bar = tqdm(total=total, desc="merges", unit="merge", leave=False)

    def update_to(done):
        bar.update(done - bar.n)

    bar.update_to = update_to
    return bar


def _log(chunks, counts, base, mode):
    """Seed 000's log lines, printed as the merges come back from the engine."""
    length = sum(len(c if mode == "char" else c.encode("utf-8")) * n for c, n in zip(chunks, counts))
    print("Initial characters:" if mode == "char" else "Initial bytes:", length)
    print("Base vocabulary size:", len(base) if mode == "char" else 256)

    def log(number, pair, merged, frequency, sequence_length, vocabulary):
        if number <= 20 or number % 100 == 0:
            print(
                f"Merge {number:4d}: {pair!r} → {merged!r}, frequency={frequency:,}, "
                f"sequence length={sequence_length:,}, vocabulary={vocabulary:,}"
            )

    return log

