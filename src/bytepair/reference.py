"""The reference BPE: the seed algorithms, in plain Python, as the oracle for every test.

Everything here is written to be read, not to be fast: training rescans the working sequences
for every merge (O(merges x corpus)). The compiled core (``bytepair._engine``) must give exactly
the same merges and the same tokens; this module never imports it.

One algorithm serves both modes, because it only concatenates token values:

- character mode: a token is a ``str``, the base tokens are single characters;
- byte mode: a token is a ``bytes``, the base tokens are the 256 single bytes.

Example:
    >>> merges = train_bpe({tuple("aaabdaaabac"): 1}, base_tokens="abcd", vocab_size=7)
    >>> merges
    [('a', 'a'), ('aa', 'a'), ('aaa', 'b')]
    >>> encode_piece(list("aaabdaaabac"), merges)
    ['aaab', 'd', 'aaab', 'a', 'c']
"""

from __future__ import annotations

from collections import Counter

# Every base byte, as the one-byte values byte mode starts from.
BYTE_TOKENS = [bytes([b]) for b in range(256)]


def count_pairs(tokens):
    """Count adjacent pairs; the Counter remembers the order pairs were first seen.

    Example:
        >>> count_pairs(["a", "a", "a", "b"])
        Counter({('a', 'a'): 2, ('a', 'b'): 1})
    """
    return Counter(zip(tokens[:-1], tokens[1:]))


def merge_pair(tokens, pair, merged_token):
    """Replace each occurrence of ``pair``, scanning left to right, without overlaps.

    Example:
        >>> merge_pair(["a", "a", "a"], ("a", "a"), "aa")
        ['aa', 'a']
    """
    output = []
    index = 0
    while index < len(tokens):
        if index < len(tokens) - 1 and (tokens[index], tokens[index + 1]) == pair:
            output.append(merged_token)
            index += 2
        else:
            output.append(tokens[index])
            index += 1
    return output


def count_chunk_pairs(chunks):
    """Pair counts over weighted chunks, in order of first occurrence.

    ``chunks`` maps each unique chunk (a tuple of tokens) to how often it occurs, in the order
    chunks first appear in the text; pairs are then seen in order inside each chunk. With a
    single chunk this is exactly ``count_pairs``.
    """
    counts = Counter()
    for tokens, frequency in chunks.items():
        for pair in zip(tokens[:-1], tokens[1:]):
            counts[pair] += frequency
    return counts


def train_bpe(chunks, base_tokens, vocab_size, min_frequency=2, log=None):
    """Learn merges until ``vocab_size`` distinct tokens exist (seed 000's loop).

    ``chunks``: dict of chunk (tuple of base tokens) -> frequency, in order of first appearance.
    Stops early when no pairs remain or the best pair occurs fewer than ``min_frequency`` times.
    Ties go to the pair seen first (what ``Counter.most_common`` gives).

    # subtle: a merge can rebuild a token that already exists ("t"+"he" and "th"+"e"); such a
    # merge is recorded but does not grow the vocabulary, exactly as in seed 000.
    """
    vocabulary = set(base_tokens)
    working = {tuple(tokens): frequency for tokens, frequency in chunks.items()}
    merges = []
    while len(vocabulary) < vocab_size:
        pair_counts = count_chunk_pairs(working)
        if not pair_counts:
            break
        best_pair, frequency = pair_counts.most_common(1)[0]
        if frequency < min_frequency:
            break
        merged_token = best_pair[0] + best_pair[1]
        # subtle: two chunks can become equal after a merge; their counts must add up, not
        # overwrite each other, or the next counts are wrong.
        merged_chunks = {}
        for tokens, chunk_frequency in working.items():
            key = tuple(merge_pair(tokens, best_pair, merged_token))
            merged_chunks[key] = merged_chunks.get(key, 0) + chunk_frequency
        working = merged_chunks
        merges.append(best_pair)
        vocabulary.add(merged_token)
        if log is not None:
            length = sum(len(tokens) * f for tokens, f in working.items())
            log(len(merges), best_pair, merged_token, frequency, length, len(vocabulary))
    return merges


def train_chars(text, vocab_size, min_frequency=2, base_tokens=None):
    """Seed 000's character-level trainer on one text, no pre-tokenization.

    Returns ``(base_tokens, merges)``; the base alphabet is the sorted characters of ``text``
    unless ``base_tokens`` is given (it must then cover every character of ``text``).
    """
    if not text:
        raise ValueError("Training text cannot be empty")
    base = sorted(set(text) if base_tokens is None else set(base_tokens))
    if set(text) - set(base):
        raise ValueError("Base vocabulary is missing training characters")
    if vocab_size < len(base):
        raise ValueError("vocab_size cannot be smaller than the number of base tokens")
    return base, train_bpe({tuple(text): 1}, base, vocab_size, min_frequency)


def train_bytes(text, vocab_size, min_frequency=2):
    """Seed 001's byte-level trainer on one text: 256 base bytes, then merges.

    Returns the merges as pairs of ``bytes``.
    """
    if vocab_size < 256:
        raise ValueError("vocab_size must be at least 256 in byte mode")
    symbols = tuple(BYTE_TOKENS[b] for b in text.encode("utf-8"))
    return train_bpe({symbols: 1}, BYTE_TOKENS, vocab_size, min_frequency)


def encode_piece(tokens, merges):
    """Replay every merge in learned order over one piece (seed 000's ``encode_tokens``).

    Returns the token values (``str`` or ``bytes``); ids are looked up by the caller.
    """
    tokens = list(tokens)
    for left, right in merges:
        tokens = merge_pair(tokens, (left, right), left + right)
    return tokens


def vocabulary(base_tokens, merges):
    """Token values in id order: the base, then each new merged value once (seed 000)."""
    values = list(base_tokens)
    seen = set(values)
    for left, right in merges:
        merged = left + right
        if merged not in seen:
            seen.add(merged)
            values.append(merged)
    return values


def decode(values):
    """Concatenate token values (``str`` or ``bytes``)."""
    return values[0][:0].join(values) if values else ""
