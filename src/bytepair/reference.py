"""The reference BPE: the seed algorithms, in plain Python, as the oracle for every test.

Everything here is written to be read, not to be fast: training rescans the working sequences
for every merge (O(merges x corpus)). The compiled core (``bytepair._engine``) must give exactly
the same merges and the same tokens; this module never imports it.

One algorithm serves both modes, because it only concatenates token values:

- character mode: a token is a ``str``, the base tokens are single characters;
- byte mode: a token is a ``bytes``, the base tokens are the 256 single bytes.

Each entry of the compiled core, and its twin here (tests/test_reference_twins.py and
tests/test_engine_encode.py check that they agree):

- ``_engine.split``, ``Encoder.split``: ``patterns.split`` (the ``regex`` module's pieces)
- ``_engine.count_pieces`` (train.py's counting): ``count_pieces``
- ``_engine.train_merges``: ``train_bpe``
- the engine's cuts of a char-mode text without a pattern (engine/cuts.hpp): ``safe_cuts``
- the engine's cuts inside a byte-mode piece (engine/piece_cuts.hpp): ``safe_piece_cuts``
- ``Encoder``, rule "replay" (``monotonic=True``), one piece: ``merge_by_rank(tokens,
  replay_ranks(merges), floor=True)``, which equals ``encode_piece`` (the merges pass by pass)
- ``Encoder``, rule "tiktoken" (``whole_piece=True``): ``encode_piece_tiktoken``; its pair
  table (``formats.tiktoken_files.pair_table``): ``tiktoken_pair_ranks``
- ``Encoder``, rule "hf" (``whole_piece`` = ``ignore_merges``): ``encode_piece_hf``
- ``Encoder.encode_ordinary``, ``encode_pieces``, ``encode_batch``, ``encode_to_array``: the
  piece twin of the rule on each piece of ``patterns.split``, ids looked up by value

Example:
    >>> merges = train_bpe({tuple("aaabdaaabac"): 1}, base_tokens="abcd", vocab_size=7)
    >>> merges
    [('a', 'a'), ('aa', 'a'), ('aaa', 'b')]
    >>> encode_piece(list("aaabdaaabac"), merges)
    ['aaab', 'd', 'aaab', 'a', 'c']
    >>> merge_by_rank(list("aaabdaaabac"), replay_ranks(merges), floor=True)
    ['aaab', 'd', 'aaab', 'a', 'c']
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

from .patterns import split

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


def safe_cuts(text, merges):
    """Positions where a character-mode text can be cut so that replaying ``merges`` on each
    part gives the tokens of the whole: before character ``i`` unless some merge joins a left
    side ending in ``text[i - 1]`` to a right side starting with ``text[i]``. (A token spanning
    a boundary is first made by a merge whose own junction is that boundary; with no such
    merge no token ever spans it, and each side merges alone.)

    Example:
        >>> safe_cuts("abcab", [("a", "b"), ("ab", "c")])
        [3]
        >>> [encode_piece(part, [("a", "b"), ("ab", "c")]) for part in ("abc", "ab")]
        [['abc'], ['ab']]
    """
    junctions = {(left[-1], right[0]) for left, right in merges}
    return [i for i in range(1, len(text)) if (text[i - 1], text[i]) not in junctions]


def _utf8_length(byte):
    """Bytes of the character that ``byte`` starts; 0 for a continuation byte (or 0xF8 up)."""
    for limit, length in ((0x80, 1), (0xC0, 0), (0xE0, 2), (0xF0, 3), (0xF8, 4)):
        if byte < limit:
            return length
    return 0


def _junction_keys(left, right):
    """Where a byte-mode merge ``(left, right)`` can join two characters of valid UTF-8: left's
    last character (or all of left, when it is continuation bytes only) and right's first
    character (or all of right, when it ends inside it); None if the join is inside one."""
    need = _utf8_length(right[0])
    if need == 0:
        return None
    start = max((k for k in range(len(left)) if _utf8_length(left[k])), default=None)
    if start is None:
        return (left, right[:need]) if len(left) < 4 else None
    return (left[start:], right[:need]) if _utf8_length(left[start]) == len(left) - start else None


def safe_piece_cuts(piece, pairs):
    """Positions where a byte-mode ``piece`` (a str) can be cut so that merging each part's
    bytes alone gives the tokens of the whole: before character ``i`` unless some pair
    ``(left, right)`` of ``pairs`` (byte values) may join there, left's last character ending
    ``piece[i - 1]``'s UTF-8 and right's first starting ``piece[i]``'s (``_junction_keys``).
    A token spanning a boundary is first made by a merge whose own junction is that boundary.

    Example:
        >>> e_acute = "\u00e9".encode()  # C3 A9
        >>> pairs = [(b"a", b"b"), (e_acute[:1], e_acute[1:]), (e_acute[1:], b"a")]
        >>> safe_piece_cuts("ab\u00e9a\u00e9b", pairs)  # not inside "ab", nor between \u00e9 and a
        [2, 4, 5]
    """
    junctions = {keys for keys in (_junction_keys(left, right) for left, right in pairs) if keys}
    return [
        i
        for i in range(1, len(piece))
        if not any(
            piece[i - 1].encode().endswith(left) and piece[i].encode().startswith(right) for left, right in junctions
        )
    ]


def premerged_characters(piece, ranks):
    """The initial tokens of a byte-mode ``piece`` (a str) under tiktoken's rule (``ranks``:
    ``{token bytes: rank}``, ranks rising from a token's parts to the token): a character
    whose bytes merge alone into one token ``t`` is ``t``, unless a pair ranked below ``t``
    can join part of it to a neighbour (``_junction_keys``: a proper prefix of the character
    after a left key that ends the character before, or a proper suffix before a right key
    that starts the character after); every other character is its bytes. A space that starts
    the piece and the character after it are taken the same way, as one unit with nothing
    before it (``" \u00e9"`` where ``" " + C3`` ranks below ``\u00e9``). Merging them gives the
    tokens of the piece's bytes merged: until rank ``t`` nothing joins the unit's bytes to
    anything else, and after it they are ``t`` (engine/char_tokens.hpp).

    The engine guards with each token's last split only (the others never merge) and may so
    give more characters as tokens; both are exact.

    Example:
        >>> e = "\u00e9".encode()  # C3 A9, the token of rank 257
        >>> ranks = {bytes([b]): b for b in range(256)} | {b" " + e[:1]: 256, e: 257}
        >>> premerged_characters("\u00e9 \u00e9", ranks)  # " " + C3 ranks below it
        [b'\xc3\xa9', b' ', b'\xc3', b'\xa9']
    """
    pair_ranks = tiktoken_pair_ranks(ranks)
    junctions = [(keys, rank) for (left, right), rank in pair_ranks.items() if (keys := _junction_keys(left, right))]
    characters = [c.encode() for c in piece]

    def enters_whole(unit, before, after):
        if len(unit) < 2 or merge_by_rank([bytes([b]) for b in unit], pair_ranks) != [unit]:
            return False
        return not any(
            rank < ranks[unit]
            and (
                (len(right) < len(unit) and unit.startswith(right) and before.endswith(left))
                or (len(left) < len(unit) and unit.endswith(left) and after.startswith(right))
            )
            for (left, right), rank in junctions
        )

    symbols, start = [], 0
    if len(characters) >= 2 and characters[0] == b" " and len(characters[1]) > 1:
        unit = b" " + characters[1]
        if enters_whole(unit, b"", characters[2] if len(characters) > 2 else b""):
            symbols, start = [unit], 2
    for i in range(start, len(characters)):
        c = characters[i]
        before = characters[i - 1] if i > 0 else b""
        after = characters[i + 1] if i + 1 < len(characters) else b""
        symbols.extend([c] if enters_whole(c, before, after) else [bytes([b]) for b in c])
    return symbols


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


# -- rank-based merging: what the engine does -------------------------------------------------


def merge_by_rank(tokens, ranks, *, floor=False):
    """Merge one piece by rank: again and again, the adjacent pair of lowest rank, leftmost on
    ties, into ``left + right``, until no pair has a rank.

    ``ranks`` maps a pair ``(left, right)`` to its rank, or to the list of all its ranks (a
    merge list can learn one pair twice); only ``ranks.get(pair)`` is used, and a pair it does
    not know never merges. The rules differ only in their ranks: ``replay_ranks`` (merges
    trained here), ``tiktoken_pair_ranks`` (rank of the concatenation), ``hf_ranks`` (rank of
    the merge line).

    ``floor=True`` is replay: once rank r is applied, a rank below r never applies again (the
    replay has passed it), so each pair merges at its lowest rank not below the last one
    applied. This equals ``encode_piece``, the merges replayed one pass each.

    Example:
        >>> merge_by_rank([b"a", b"b", b"c"], {(b"b", b"c"): 0, (b"a", b"bc"): 1})
        [b'abc']
        >>> merges = [("a", "bc"), ("b", "c"), ("a", "bc")]  # (a, bc) learned twice
        >>> merge_by_rank(list("abc"), replay_ranks(merges), floor=True)  # ranks 1, then 2
        ['abc']
        >>> merge_by_rank(list("abc"), replay_ranks(merges[:2]), floor=True)  # 0 is passed
        ['a', 'bc']
    """
    tokens = list(tokens)
    lowest_allowed = 0
    while len(tokens) > 1:
        # the rank of every adjacent pair that can still merge
        candidates = []
        for position, pair in enumerate(pairwise(tokens)):
            rank = _lowest_rank(ranks.get(pair), lowest_allowed)
            if rank is not None:
                candidates.append((rank, position))
        if not candidates:
            break  # no pair left to merge
        # lowest rank first; among equal ranks the leftmost (tuples compare rank, then position)
        rank, position = min(candidates)
        tokens[position : position + 2] = [tokens[position] + tokens[position + 1]]
        if floor:
            # subtle: "not below r", not "above r": the other occurrences of this pair still
            # merge at r, left to right, as replay's pass does. The engine instead gives only
            # the two new neighbour pairs the floor r + 1 and keeps every other pair's rank;
            # the same thing, since no pair is ever ranked below the lowest one, and a merge
            # never rebuilds the pair it just merged (the new value is longer than both).
            lowest_allowed = rank
        # subtle: without a floor a merge can make a pair of lower rank than the one just
        # applied (tiktoken: "bc", then "a" + "bc" = "abc" of lower rank); it merges next.
    return tokens


def _lowest_rank(ranks, at_least):
    """The lowest of a pair's ranks (None, one int, or a list) that is at least ``at_least``."""
    if ranks is None:
        return None
    usable = [rank for rank in ([ranks] if isinstance(ranks, int) else ranks) if rank >= at_least]
    return min(usable) if usable else None


def replay_ranks(merges):
    """Replay's pair ranks: every rank at which the merge list learns each pair.

    Example:
        >>> replay_ranks([("a", "b"), ("ab", "c"), ("a", "b")])
        {('a', 'b'): [0, 2], ('ab', 'c'): [1]}
    """
    ranks = {}
    for rank, pair in enumerate(merges):
        ranks.setdefault(tuple(pair), []).append(rank)
    return ranks


def hf_ranks(merges):
    """HF tokenizers' pair ranks: the merge line's number.

    Example:
        >>> hf_ranks([("b", "a"), ("a", "b"), ("b", "a")])
        {('b', 'a'): 2, ('a', 'b'): 1}

    # subtle: HF collects the merges into a hash map, so a pair listed twice keeps its LAST
    # rank (a dict comprehension does the same), where replay applies it at both.
    """
    return {tuple(pair): rank for rank, pair in enumerate(merges)}


def tiktoken_pair_ranks(ranks):
    """tiktoken's pair ranks from its token ranks (``{token bytes: rank}``): every split of
    every token into two tokens, ranked as the whole token.

    Example:
        >>> tiktoken_pair_ranks({b"a": 0, b"b": 1, b"ab": 2, b"bab": 3})
        {(b'a', b'b'): 2, (b'b', b'ab'): 3}

    # subtle: every split, not only the one that first built the token: tiktoken merges any
    # two adjacent tokens whose concatenation is a token ("ba" is no token, so (ba, b) is not).
    """
    pairs = {}
    for token, rank in ranks.items():
        for cut in range(1, len(token)):
            if token[:cut] in ranks and token[cut:] in ranks:
                pairs[(token[:cut], token[cut:])] = rank
    return pairs


class _ConcatenationRanks:
    """``tiktoken_pair_ranks(ranks)`` without building it: a pair ranks as its concatenation.
    (Both halves are always tokens while merging, so this is the same table.)"""

    def __init__(self, ranks):
        self.ranks = ranks

    def get(self, pair):
        return self.ranks.get(pair[0] + pair[1])


def encode_piece_tiktoken(piece, ranks):
    """tiktoken's rule on one piece (``bytes``): the piece itself if it is a token, else its
    bytes merged by the rank of each pair's concatenation. Returns the token values.

    Example:
        >>> ranks = {b"a": 0, b"b": 1, b"c": 2, b"abc": 3, b"bc": 4}
        >>> encode_piece_tiktoken(b"abc", ranks), encode_piece_tiktoken(b"abcc", ranks)
        ([b'abc'], [b'abc', b'c'])

    # subtle: the whole-piece lookup comes first, and finds tokens that merging never reaches
    # (with only a, b, c and abc, no pair of "abc" is a token, yet the piece is one token).
    """
    if piece in ranks:
        return [piece]
    return merge_by_rank([bytes([b]) for b in piece], _ConcatenationRanks(ranks))


def encode_piece_hf(tokens, merges, *, vocabulary=None):
    """HF tokenizers' BPE model on one piece: lowest merge rank first, leftmost on ties.

    ``vocabulary``: HF's vocab (any container of values) when the model has
    ``ignore_merges=True``; then a piece that is a token is that token, as in tiktoken.

    Example:
        >>> encode_piece_hf(list("aba"), [("b", "a"), ("a", "b"), ("b", "a")])
        ['ab', 'a']
        >>> encode_piece_hf(list("aba"), [("a", "b")], vocabulary={"a", "b", "ab", "aba"})
        ['aba']
    """
    tokens = list(tokens)
    if vocabulary is not None and tokens and decode(tokens) in vocabulary:
        return [decode(tokens)]
    return merge_by_rank(tokens, hf_ranks(merges))


# -- counting pieces: what training starts from -----------------------------------------------


def count_pieces(text_or_documents, pattern):
    """The unique pieces of a text (or of each document of a list) under ``pattern``, with how
    often each occurs, in order of first appearance: ``{piece: count}``.

    ``pattern``: a name ("gpt2", "cl100k", ...), a regex, or None (each document one piece).
    A document never shares a piece with the next one.

    Example:
        >>> count_pieces(["a b a", " b"], "gpt2")
        {'a': 1, ' b': 2, ' a': 1}

    # subtle: the order is part of the result: training breaks ties between pairs of equal
    # count by first appearance, pieces first, then position inside the piece.
    """
    documents = [text_or_documents] if isinstance(text_or_documents, str) else text_or_documents
    counts = {}
    for document in documents:
        for piece in split(document, pattern):
            # a dict keeps insertion order: a piece keeps the place of its first appearance
            counts[piece] = counts.get(piece, 0) + 1
    return counts
