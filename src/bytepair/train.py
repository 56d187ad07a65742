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

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from . import _engine
from ._gc import gc_paused
from ._io import progress_shown
from .errors import SpecialTokenError, TrainingError
from .ids import plain_int
from .model import MergeModel
from .normalize import check_normalization, clean_surrogates, normalize
from .patterns import check_pattern_spelling, safe_cut
from .patterns import split as regex_split
from .special import special_token_list, strip_special
from .threads import check_num_threads
from .tokenizer import SCANNED_PATTERNS, Tokenizer, _resolve

# Long texts are counted in blocks of about this many characters, one thread per block, and
# BATCH_CHARS characters of blocks at a time, so memory follows the unique pieces. Not the
# encoder's block (``datasets.blocks.ENCODE_BLOCK_CHARS``, 256 Ki, measured): counting a block
# costs a table of its unique pieces that is then merged into the whole count, so larger
# blocks mean fewer merges; 1 Mi is untuned beyond that reasoning.
COUNT_BLOCK_CHARS = 1 << 20
BATCH_CHARS = 1 << 26
# Ids are 32-bit in the engine and in encoded arrays (uint32); a larger target is a typo.
MAX_VOCAB_SIZE = 2**31 - 1
# Pair counts are 64-bit in the engine.
MAX_MIN_FREQUENCY = 2**63 - 1


def train(
    text: str | Iterable[str],
    *,
    mode: Literal["char", "byte"] = "char",
    vocab_size: int,
    min_frequency: int = 2,
    pattern: str | None = None,
    normalization: str | None = None,
    special_tokens: Iterable[str] | Mapping[str, int] | None = None,
    base_text: str | Iterable[str] | None = None,
    base_tokens: Iterable[str] | None = None,
    max_chars: int | None = None,
    byte_fallback: bool = False,
    num_threads: int | None = None,
    verbose: bool = False,
    progress: bool | None = None,
) -> Tokenizer:
    """Learn a BPE tokenizer from ``text`` (a str, or an iterable of str documents).

    - ``mode="char"``: the base alphabet is every character of the training text, plus those
      of ``base_text`` (str or list of str, e.g. all splits so validation and test encode) and
      ``base_tokens``; ``mode="byte"``: the 256 bytes.
    - ``vocab_size``: distinct tokens to reach, special tokens not counted (nor, in char mode,
      the 256 byte tokens that ``byte_fallback=True`` adds); training stops earlier when no
      pair occurs ``min_frequency`` times.
    - ``pattern``: None (seed 000: the text is one sequence), a named pattern ("gpt2",
      "cl100k"/"gpt4", "o200k", "llama3") or a regex; merges never cross its pieces.
    - ``special_tokens``: a list of strings (a bare string is one token), or a dict token -> id.
    - ``max_chars``: train on the first ``max_chars`` characters only.
    - ``num_threads``: counting threads for named patterns (default: one per core).
    - ``progress``: True for a bar, False for none, None for a bar on a terminal only.
    - ``verbose``: print seed 000's log (the first 20 merges and every 100th).

    Every argument is checked before any text is read. Lone surrogates in the text become
    U+FFFD and surrogate pairs their character, as in ``encode`` (tiktoken's rule).
    """
    checked = check_options(
        mode=mode,
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        pattern=pattern,
        normalization=normalization,
        special_tokens=special_tokens,
        base_text=base_text,
        base_tokens=base_tokens,
        max_chars=max_chars,
        byte_fallback=byte_fallback,
        num_threads=num_threads,
        verbose=verbose,
        progress=progress,
    )
    return _learn(_count(text, checked), checked)


# -- the two stages: counting (can run apart, on many machines) and learning (one machine) -------


@dataclass
class PieceCounts:
    """The counted training text, all that learning needs: the unique ``pieces`` in order of
    first appearance, their ``counts``, and the ``characters`` seen (char mode; empty in byte mode).

    The order matters: merges tied on frequency go to the pair seen first. ``merged`` joins the
    counts of two consecutive parts of a corpus into those of the whole, so counting parts apart
    (``bytepair.distributed``) gives exactly the counts of one pass.

    Example:
        >>> a = count_pieces(["to be"], pattern="gpt2")
        >>> b = count_pieces(["or not to be"], pattern="gpt2")
        >>> a.merged(b).pieces == count_pieces(["to be", "or not to be"], pattern="gpt2").pieces
        True
    """

    pieces: list[str]
    counts: list[int]
    characters: set[str] = field(default_factory=set)

    def merged(self, later: PieceCounts) -> PieceCounts:
        """The counts of this part followed by ``later``: this part's pieces in their order, then
        the pieces ``later`` adds in its order. Associative, so any tree of merges that keeps the
        parts in order gives the counts of the whole."""
        counts = dict(zip(self.pieces, self.counts))  # dicts keep insertion order
        for piece, count in zip(later.pieces, later.counts):
            counts[piece] = counts.get(piece, 0) + count
        return PieceCounts(list(counts), list(counts.values()), self.characters | later.characters)


def count_pieces(
    documents: str | Iterable[str],
    *,
    mode: Literal["char", "byte"] = "char",
    pattern: str | None = None,
    normalization: str | None = None,
    special_tokens: Iterable[str] | Mapping[str, int] | None = None,
    max_chars: int | None = None,
    num_threads: int | None = None,
) -> PieceCounts:
    """Stage one of ``train``: normalize ``documents`` (a str or an iterable of str), cut them at
    special tokens, pre-tokenize and count the unique pieces. ``learn`` on the result with the
    same options gives ``train``'s tokenizer.

    Example:
        >>> counted = count_pieces(["a b a b"], pattern="gpt2")
        >>> counted.pieces, counted.counts
        (['a', ' b', ' a'], [1, 2, 1])
    """
    checked = check_options(
        mode=mode,
        vocab_size=MAX_VOCAB_SIZE,  # any size is valid here: counting does not use it
        pattern=pattern,
        normalization=normalization,
        special_tokens=special_tokens,
        max_chars=max_chars,
        num_threads=num_threads,
    )
    return _count(documents, checked)


def learn(
    counted: PieceCounts,
    *,
    mode: Literal["char", "byte"] = "char",
    vocab_size: int,
    min_frequency: int = 2,
    pattern: str | None = None,
    normalization: str | None = None,
    special_tokens: Iterable[str] | Mapping[str, int] | None = None,
    base_text: str | Iterable[str] | None = None,
    base_tokens: Iterable[str] | None = None,
    byte_fallback: bool = False,
    verbose: bool = False,
    progress: bool | None = None,
) -> Tokenizer:
    """Stage two of ``train``: learn the merges of ``counted`` (from ``count_pieces`` with the same
    ``mode``, ``pattern``, ``normalization`` and ``special_tokens``) and build the tokenizer.

    Example:
        >>> counted = count_pieces("low lower newest widest")
        >>> tok = learn(counted, vocab_size=20, min_frequency=1)
        >>> tok.fingerprint == train("low lower newest widest", vocab_size=20, min_frequency=1).fingerprint
        True
    """
    checked = check_options(
        mode=mode,
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        pattern=pattern,
        normalization=normalization,
        special_tokens=special_tokens,
        base_text=base_text,
        base_tokens=base_tokens,
        byte_fallback=byte_fallback,
        verbose=verbose,
        progress=progress,
    )
    return _learn(counted, checked)


# ``_count`` and ``_learn`` take ``check_options``' result: every option, checked and resolved.


def _count(documents, options):
    pattern_name, pattern_regex = options["pattern"]
    normalization, specials = options["normalization"], list(options["special_tokens"])
    documents = _documents(documents, options["max_chars"])
    documents = (normalize(clean_surrogates(d), normalization) if isinstance(d, str) else d for d in documents)
    if specials:
        documents = (segment for d in documents for segment in strip_special(d, specials))
    chunks, counts, seen_chars = _count_chunks(
        documents, pattern_name, pattern_regex, options["mode"], options["num_threads"]
    )
    return PieceCounts(chunks, counts, seen_chars)


def _learn(counted, options):
    mode, vocab_size, normalization = options["mode"], options["vocab_size"], options["normalization"]
    chunks, counts, seen_chars = counted.pieces, counted.counts, counted.characters
    if not chunks:
        raise TrainingError("the training text is empty; give at least two characters of text")

    if mode == "char":
        alphabet = set(seen_chars)
        for extra in options["base_text"]:
            alphabet.update(normalize(clean_surrogates(extra), normalization))
        alphabet.update(options["base_tokens"] or ())
        base = sorted(alphabet)
        floor = len(base)
    else:
        base = []
        floor = 256
    if vocab_size < floor:
        raise TrainingError(
            f"vocab_size {vocab_size} is below the base alphabet's {floor} tokens; ask for at least {floor}"
        )

    verbose = options["verbose"]
    log = _log(chunks, counts, base, mode) if verbose else None
    bar = _progress_bar(options["progress"], vocab_size - floor)
    # packed: 5 int64 per merge (left, right, merged, frequency, length after); at 32,768
    # merges 1.3 MB, where tuples took 7.6 MB at training's peak
    packed = _engine.train_merges(
        chunks,
        counts,
        mode=mode,
        base_tokens=base,
        vocab_size=vocab_size,
        min_frequency=options["min_frequency"],
        progress=bar.update_to if bar else None,
        packed=True,
    )
    if bar:
        bar.close()
    result = np.frombuffer(packed, dtype=np.int64).reshape(-1, 5)
    # 32,768 merges come back as tuples of values: with the collector on, 92 young collections
    # took 15-20 ms of a first run's 200-250 (a forked child's included), 2.5 of a warm one's
    with gc_paused():
        values = [bytes([b]) for b in range(256)] if mode == "byte" else list(base)
        merges, packed_ids = _engine.spell_merges(result, values)
        model = MergeModel._learned(
            mode=mode,
            base_tokens=base if mode == "char" else None,
            byte_fallback=options["byte_fallback"],
            merges=merges,
            values=values,
            merge_ids=np.frombuffer(packed_ids, dtype=np.uint32).reshape(-1, 3),
        )
    if log:
        vocabulary = floor
        for number, (record, pair) in enumerate(zip(result.tolist(), merges), 1):
            merged_id, frequency, length = record[2:]
            vocabulary += merged_id == vocabulary
            log(number, pair, values[merged_id], frequency, length, vocabulary)
    tokenizer = Tokenizer(
        model, pattern=options["pattern_given"], normalization=normalization, special_tokens=options["special_tokens"]
    )
    if verbose:
        print("Final vocabulary size:", tokenizer.vocab_size)
        print(
            "Final training sequence length:",
            int(result[-1, 4]) if len(result) else sum(len(c) * n for c, n in zip(chunks, counts)),
        )
    return tokenizer


def check_options(
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
    num_threads=None,
    verbose=False,
    progress=None,
):
    """Check ``train``'s keyword arguments without training; raises what ``train`` would.

    The CLI calls it before reading any file, so a bad flag fails at once, not after training.
    Returns every option by name, the resolved ones as resolved: ``pattern`` (name, regex),
    ``special_tokens`` (a list), ``base_text`` (a list) and ``num_threads``; ``pattern_given``
    is ``pattern`` as passed, which the tokenizer keeps.

    Example:
        >>> check_options(mode="byte", vocab_size=300, pattern="CL100K")["pattern"][0]
        'cl100k'
    """
    check_normalization(normalization)
    if mode not in ("char", "byte"):
        raise TrainingError(f"unknown mode {mode!r}; use 'char' or 'byte'")
    vocab_size, min_frequency, max_chars = plain_int(vocab_size), plain_int(min_frequency), plain_int(max_chars)
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or not 1 <= vocab_size <= MAX_VOCAB_SIZE:
        raise TrainingError(
            f"vocab_size must be an integer from 1 to {MAX_VOCAB_SIZE} (ids are 32-bit), not {vocab_size!r}"
        )
    if mode == "byte" and vocab_size < 256:  # the byte alphabet is known before any text is read
        raise TrainingError(f"vocab_size {vocab_size} is below the base alphabet's 256 tokens; ask for at least 256")
    if (
        not isinstance(min_frequency, int)
        or isinstance(min_frequency, bool)
        or not 1 <= min_frequency <= MAX_MIN_FREQUENCY
    ):
        raise TrainingError(f"min_frequency must be an integer from 1 to {MAX_MIN_FREQUENCY}, not {min_frequency!r}")
    if max_chars is not None and (not isinstance(max_chars, int) or isinstance(max_chars, bool) or max_chars < 1):
        raise TrainingError(f"max_chars must be a positive integer, not {max_chars!r}")
    if mode == "byte" and (base_text is not None or base_tokens is not None):
        raise TrainingError("base_text and base_tokens apply to mode='char' only; byte mode starts from 256 bytes")
    if not isinstance(byte_fallback, bool):  # "yes" or 1 reached the model only after training
        raise TrainingError(f"byte_fallback must be True or False, not {byte_fallback!r}")
    if mode == "byte" and byte_fallback:
        raise TrainingError("byte_fallback applies to mode='char' only; byte mode never meets an unknown character")
    check_pattern_spelling(pattern)
    specials = special_token_list(special_tokens)
    if mode == "byte" and isinstance(specials, Mapping):
        # ids 0-255 are the bytes whatever the text: said before training, not after
        for token, token_id in specials.items():
            if isinstance(token_id, int) and not isinstance(token_id, bool) and 0 <= token_id < 256:
                raise SpecialTokenError(
                    f"special token {token!r} asks for id {token_id}, which in byte mode is the byte "
                    f"{bytes([token_id])!r}; use an id past the learned tokens, or give the special tokens "
                    "as a list to number them after them"
                )
    base_text = _as_texts(base_text)
    _check_base(base_text, base_tokens)
    return {
        "mode": mode,
        "vocab_size": vocab_size,
        "min_frequency": min_frequency,
        "pattern": _resolve(pattern),
        "pattern_given": pattern,
        "normalization": normalization,
        "special_tokens": specials,
        "base_text": base_text,
        "base_tokens": base_tokens,
        "max_chars": max_chars,
        "byte_fallback": byte_fallback,
        "num_threads": check_num_threads(num_threads),
        "verbose": verbose,
        "progress": progress,
    }


def _documents(text, max_chars):
    """The training input as an iterator of str, cut after ``max_chars`` characters (checked
    by ``check_options``)."""
    if isinstance(text, str):
        documents = iter([text])
    elif isinstance(text, (bytes, bytearray)):
        # iterated, bytes are ints: the error named an int, not what was passed
        raise TrainingError(
            f"training text must be a str or an iterable of str, not {type(text).__name__}; decode it first"
        )
    elif isinstance(text, Mapping):  # iterated, only its keys (words of a count table, a row's fields)
        raise TrainingError(
            f"training text must be a str or an iterable of str, not a {type(text).__name__}, whose keys "
            "alone would be trained on; pass the texts themselves"
        )
    else:
        try:
            documents = iter(text)
        except TypeError:
            raise TrainingError(
                f"training text must be a str or an iterable of str, not {type(text).__name__}"
            ) from None
    if max_chars is None:
        return documents
    return _prefix(documents, max_chars)


def _prefix(documents, limit):
    for document in documents:
        if limit <= 0:
            return
        yield document[:limit]
        limit -= len(document)


def _check_base(base_text, base_tokens):
    """``base_text`` (str or list of str) and ``base_tokens`` (single characters), checked early."""
    for extra in base_text:
        if not isinstance(extra, str):
            raise TrainingError(f"base_text must be a str or a list of str, and holds {extra!r}")
    try:
        base_tokens = list(base_tokens or ())
    except TypeError:
        raise TrainingError(f"base_tokens must be a str or a list of single characters, not {base_tokens!r}") from None
    for token in base_tokens:
        if not isinstance(token, str) or len(token) != 1:
            raise TrainingError(f"base_tokens must be single characters, and holds {token!r}")
        if "\ud800" <= token <= "\udfff":
            raise TrainingError(
                f"base_tokens holds the lone surrogate {token!r}, which encoding turns into U+FFFD; leave it out"
            )


def _as_texts(base_text):
    if base_text is None:
        return []
    if isinstance(base_text, str):
        return [base_text]
    try:
        return list(base_text)
    except TypeError:
        raise TrainingError(f"base_text must be a str or a list of str, not {base_text!r}") from None


def _count_chunks(documents, pattern_name, pattern_regex, mode, threads):
    """Unique pieces in order of first appearance, with their counts and the characters seen.

    Without a pattern each document is one chunk (seed 000 trains on one sequence). Named
    patterns are counted by the engine on all cores, block by block; a custom regex by the
    ``regex`` module.
    """
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
                _count_batch(counts, batch, pattern_name, threads)
                batch, batch_chars = [], 0
        else:
            counts.update(regex_split(document, pattern_regex))
    if batch:
        _count_batch(counts, batch, pattern_name, threads)
    return list(counts), list(counts.values()), seen_chars


def _count_batch(counts, blocks, pattern_name, threads):
    pieces, piece_counts = _engine.count_pieces(blocks, pattern_name, num_threads=threads)
    if not counts:
        counts.update(dict(zip(pieces, piece_counts)))
        return
    for piece, count in zip(pieces, piece_counts):
        counts[piece] += count


def _cut_blocks(text):
    """``text`` in blocks of about ``COUNT_BLOCK_CHARS``, cut only where no named pattern's piece
    crosses (``patterns.safe_cut``), so counting blocks apart counts the same pieces.
    """
    start = 0
    while len(text) - start > COUNT_BLOCK_CHARS:
        cut = safe_cut(text[start : start + COUNT_BLOCK_CHARS])
        if cut == 0:
            break  # no safe cut near the end of this block: count the rest whole
        yield text[start : start + cut]
        start += cut
    yield text[start:]


def _progress_bar(progress, total):
    if not progress_shown(progress):
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
