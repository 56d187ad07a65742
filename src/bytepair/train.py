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

import os
import sys
from collections import Counter

from . import _engine
from .errors import TrainingError
from .normalize import check_normalization, normalize
from .patterns import safe_cut
from .patterns import split as regex_split
from .special import strip_special
from .tokenizer import Tokenizer, _resolve

# Long texts are counted in blocks of about this many characters, one thread per block, and
# this many characters of blocks at a time, so memory follows the unique pieces.
BLOCK_CHARS = 1 << 20
BATCH_CHARS = 1 << 26


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
    chunks, counts, seen_chars = _count_chunks(documents, pattern_name, pattern_regex, mode)
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


def _count_chunks(documents, pattern_name, pattern_regex, mode):
    """Unique pieces in order of first appearance, with their counts and the characters seen.

    Without a pattern each document is one chunk (seed 000 trains on one sequence). Named
    patterns are counted by the engine on all cores, block by block; a custom regex by the
    ``regex`` module.
    """
    from .tokenizer import SCANNED_PATTERNS

    counts = Counter()  # keeps first-appearance order, and counts in C
    seen_chars = set()
    batch, batch_chars = [], 0
    for document in documents:
        if not isinstance(document, str):
            raise TrainingError(f"training documents must be str, not {type(document).__name__}")
        if not document:
            continue
        if mode == "char":
            seen_chars.update(document)
        if pattern_regex is None:
            counts[document] += 1
        elif pattern_name in SCANNED_PATTERNS:
            for block in _cut_blocks(document):
                batch.append(block)
                batch_chars += len(block)
            if batch_chars >= BATCH_CHARS:
                _count_batch(counts, batch, pattern_name)
                batch, batch_chars = [], 0
        else:
            counts.update(_regex_pieces(document, pattern_regex))
    if batch:
        _count_batch(counts, batch, pattern_name)
    return list(counts), list(counts.values()), seen_chars


def _count_batch(counts, blocks, pattern_name):
    pieces, piece_counts = _engine.count_pieces(blocks, pattern_name, num_threads=os.cpu_count() or 1)
    if not counts:
        counts.update(dict(zip(pieces, piece_counts)))
        return
    for piece, count in zip(pieces, piece_counts):
        counts[piece] += count


def _cut_blocks(text):
    """``text`` in blocks of about ``BLOCK_CHARS``, cut only where no named pattern's piece
    crosses (``patterns.safe_cut``), so counting blocks apart counts the same pieces.
    """
    start = 0
    while len(text) - start > BLOCK_CHARS:
        cut = safe_cut(text[start : start + BLOCK_CHARS])
        if cut == 0:
            break  # no safe cut near the end of this block: count the rest whole
        yield text[start : start + cut]
        start += cut
    yield text[start:]


def _regex_pieces(document, pattern_regex):
    """Pieces of a long document under a custom regex, block by block.

    subtle: a block boundary can fall inside a piece, so the last piece of each block is
    carried over and split again with the next block; pieces before it never look past it.
    """
    if len(document) <= BLOCK_CHARS:
        return regex_split(document, pattern_regex)
    pieces = []
    carry = ""
    for start in range(0, len(document), BLOCK_CHARS):
        block_pieces = regex_split(carry + document[start : start + BLOCK_CHARS], pattern_regex)
        carry = block_pieces.pop() if block_pieces else ""
        pieces.extend(block_pieces)
    if carry:
        pieces.extend(regex_split(carry, pattern_regex))
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



def prefix(tokenizer, vocab_size):
    """The tokenizer made of the first merges of ``tokenizer``: those that reach ``vocab_size``
    distinct tokens (base alphabet + merged values; special and byte-fallback tokens not
    counted, as in ``train``). Pattern, normalization, byte fallback and special tokens are kept;
    special tokens take the ids right after the smaller vocabulary.

    BPE training is greedy and its choice of merge never depends on the size asked for, so the
    prefix is the tokenizer a separate ``train(..., vocab_size=vocab_size)`` on the same text
    gives, with the same fingerprint; one training run at the largest size gives every smaller
    size (``bytepair sweep`` uses this and checks it).

    Example:
        >>> tok = train("low lower newest widest", mode="char", vocab_size=20, min_frequency=1)
        >>> small = prefix(tok, 14)
        >>> small.merges == tok.merges[: len(small.merges)], small.vocab_size
        (True, 14)
    """
    if tokenizer.rule != "replay":
        raise TrainingError(
            f"prefix needs a tokenizer trained here (an ordered merge list); {tokenizer.name or 'this vocabulary'!r} "
            "was loaded from another library's ranks, whose ids are not built by merges in order"
        )
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise TrainingError(f"vocab_size must be an integer, not {vocab_size!r}")
    values = [bytes([b]) for b in range(256)] if tokenizer.mode == "byte" else list(tokenizer.base_tokens)
    floor, seen = len(values), set(values)
    kept = 0
    for left, right in tokenizer.merges:
        if len(seen) >= vocab_size:
            break
        seen.add(left + right)
        kept += 1
    if vocab_size < floor or len(seen) < vocab_size:
        raise TrainingError(
            f"vocab_size {vocab_size} is outside what this tokenizer's merges give: from {floor} "
            f"(the base alphabet) to {len(seen)} (all {len(tokenizer.merges)} merges); train a larger one to go further"
        )
    by_id = sorted(tokenizer.special_tokens.items(), key=lambda item: item[1])
    return Tokenizer(
        mode=tokenizer.mode,
        merges=tokenizer.merges[:kept],
        base_tokens=tokenizer.base_tokens if tokenizer.mode == "char" else None,
        pattern=tokenizer.pattern_name or tokenizer.pattern,
        normalization=tokenizer.normalization,
        special_tokens=[token for token, _ in by_id] or None,
        byte_fallback=tokenizer.byte_fallback,
    )
