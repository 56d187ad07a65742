"""Byte mode: the engine cuts a piece between characters where no merge can span
(engine/piece_cuts.hpp, twin ``reference.safe_piece_cuts``) and merges the parts apart, each
from the worker's memos of one and two characters or its cache when it has been seen.

- the rule itself: merging the parts gives the tokens of the whole, for tiktoken's, HF's and
  replay's ranks, on vocabularies whose tokens start and end inside characters;
- the engine equals ``reference.merge_by_rank`` on the whole piece for every rule, on short
  and long pieces, cold and with every part already seen;
- characters from U+20000 up (never cut next to) and pieces of ASCII only (never cut).

Real vocabularies on every script are compared with tiktoken in
tests/peers/test_against_tiktoken.py.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_encoders import engine_for

from bytepair import reference
from generated import texts_for_vocabularies

# Characters whose UTF-8 shares lead and continuation bytes (é/ê, 中/丰/串, two emoji), ASCII,
# and one past U+20000: tokens cut at any byte join them in every way a real vocabulary can.
ALPHABET = "ab é ê 中丰串😀😁𠀀"


def random_ranks(seed, tokens=60):
    """The 256 bytes, then ``tokens`` byte strings of 2-7 bytes taken at random offsets of a
    random text over ALPHABET (so they start and end inside characters), in random order."""
    rng = random.Random(seed)
    text = "".join(rng.choice(ALPHABET) for _ in range(400)).encode()
    ranks = {bytes([b]): b for b in range(256)}
    while len(ranks) < 256 + tokens:
        start = rng.randrange(len(text) - 8)
        ranks.setdefault(text[start : start + rng.randint(2, 7)], len(ranks))
    return ranks


def merge_list(ranks):
    """A merge list over ``ranks``: each token of two or more bytes from one of its splits
    into two tokens, in rank order (a replay/HF vocabulary)."""
    merges = []
    for token in sorted(ranks, key=ranks.get):
        splits = [(token[:k], token[k:]) for k in range(1, len(token)) if token[:k] in ranks and token[k:] in ranks]
        if len(token) > 1 and splits:
            merges.append(splits[len(token) % len(splits)])
    return merges


def rules(ranks):
    """(name, pair ranks, floor, whole_piece, monotonic) of the three rules over ``ranks``."""
    merges = merge_list(ranks)
    return [
        ("tiktoken", reference.tiktoken_pair_ranks(ranks), False, True, False),
        ("hf", reference.hf_ranks(merges), False, False, False),
        ("replay", reference.replay_ranks(merges), True, False, True),
    ]


def merged(ranks, pair_ranks, text, floor):
    return reference.merge_by_rank([bytes([b]) for b in text.encode()], pair_ranks, floor=floor)


def reference_ids(ranks, pair_ranks, text, floor, whole_piece):
    if whole_piece and text.encode() in ranks:
        return [ranks[text.encode()]]
    return [ranks[token] for token in merged(ranks, pair_ranks, text, floor)]


def cases():
    return texts_for_vocabularies(ALPHABET, [2, 3, 5, 8, 20, 70])


@pytest.fixture(scope="module")
def vocabularies():
    return [random_ranks(seed) for seed in range(8)]


@settings(max_examples=150, deadline=None)
@given(case=cases())
def test_parts_merge_to_the_tokens_of_the_whole(vocabularies, case):
    which, text = case
    ranks = vocabularies[which]
    for _, pair_ranks, floor, _, _ in rules(ranks):
        cuts = reference.safe_piece_cuts(text, list(pair_ranks))
        parts = [text[start:end] for start, end in zip([0, *cuts], [*cuts, len(text)])]
        whole = merged(ranks, pair_ranks, text, floor)
        assert [token for part in parts for token in merged(ranks, pair_ranks, part, floor)] == whole


@settings(max_examples=150, deadline=None)
@given(case=cases())
def test_cut_pieces_equal_the_reference_for_every_rule(vocabularies, case):
    which, text = case
    ranks = vocabularies[which]
    for name, pair_ranks, floor, whole_piece, monotonic in rules(ranks):
        encoder = engine_for(ranks, pair_ranks, whole_piece=whole_piece, monotonic=monotonic)
        want = reference_ids(ranks, pair_ranks, text, floor, whole_piece)
        assert encoder.encode_ordinary(text) == want, name
        # again, each part now from the cache or the memos (pairs of emoji: too many ids to keep)
        assert encoder.encode_ordinary(text) == want, name


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_many_pieces_share_their_parts(vocabularies, seed):
    # pieces of a few characters, split by a pattern: most parts come back from the cache
    rng = random.Random(seed)
    ranks = vocabularies[seed % 8]
    words = ["".join(rng.choice(ALPHABET.replace(" ", "")) for _ in range(rng.randint(1, 9))) for _ in range(300)]
    text = " ".join(words)
    for name, pair_ranks, floor, whole_piece, monotonic in rules(ranks):
        encoder = engine_for(ranks, pair_ranks, whole_piece=whole_piece, monotonic=monotonic, pattern="cl100k")
        want = [
            token_id
            for piece in encoder.split(text)
            for token_id in reference_ids(ranks, pair_ranks, piece, floor, whole_piece)
        ]
        assert encoder.encode_ordinary(text) == want, name


def test_a_token_between_two_characters_is_kept_whole():
    # "é" then "a" join in one token through A9 + "a": no cut there, however often "a" repeats
    e_acute = "é".encode()
    ranks = {bytes([b]): b for b in range(256)}
    for token in (e_acute, e_acute[1:] + b"a", e_acute[:1] + e_acute[1:] + b"a"):
        ranks[token] = len(ranks)
    pair_ranks = reference.tiktoken_pair_ranks(ranks)
    assert reference.safe_piece_cuts("béa", list(pair_ranks)) == [1]
    encoder = engine_for(ranks, pair_ranks, whole_piece=True, monotonic=False)
    for text in ("béa", "béaéaéa", "é" * 30 + "a"):
        assert encoder.encode_ordinary(text) == reference_ids(ranks, pair_ranks, text, False, True)
