"""Byte mode under tiktoken's rule: a character whose bytes merge alone into one token enters
the merge as that token, unless a pair ranked below it could join part of it to a neighbour
(engine/char_tokens.hpp, twin ``reference.premerged_characters``).

- the rule itself: the premerged symbols merged give the tokens of the bytes merged;
- the engine equals ``reference.encode_piece_tiktoken`` on short and long pieces (the long
  ones merged in chunks), cold and again from its cache, whole and split by a pattern;
- pairs that join part of a character to the character before or after keep it as bytes;
- a space that starts a piece and the character after it enter as one token the same way.

The vocabularies rise in rank from a token's parts to the token, as trained ones (and
tiktoken's files) do; only then is the rule exact and used. Real vocabularies on every script
are compared with tiktoken in tests/peers/test_against_tiktoken.py.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from rank_encoders import tiktoken_engine_for

from bytepair import reference
from generated import texts_for_vocabularies

# Characters that share lead bytes (é ê à: C3; п р: D0, D1; 中丰: E4; two emoji), ASCII and a
# space: tokens cut at any byte join them in every way a byte-level vocabulary can.
ALPHABET = "ab éêà пр中丰😀😁"


def rising_ranks(seed, tokens=70):
    """The 256 bytes, then ``tokens`` byte strings of 2-6 bytes from random offsets of a
    random text over ALPHABET (so many start or end inside characters) and the UTF-8 of some
    characters, ranked in a random order in which every token comes after the two tokens of
    each of its splits."""
    rng = random.Random(seed)
    text = "".join(rng.choice(ALPHABET) for _ in range(400)).encode()
    values = {c.encode() for c in ALPHABET if len(c.encode()) > 1 and rng.random() < 0.7}
    while len(values) < tokens:
        start = rng.randrange(len(text) - 7)
        values.add(text[start : start + rng.randint(2, 6)])
    ranks = {bytes([b]): b for b in range(256)}
    every = values | set(ranks)
    waiting = sorted(values)
    while waiting:
        ready = [
            value
            for value in waiting
            if all(
                (value[:k] in ranks and value[k:] in ranks) or not (value[:k] in every and value[k:] in every)
                for k in range(1, len(value))
            )
        ]
        chosen = rng.choice(ready)
        ranks[chosen] = len(ranks)
        waiting.remove(chosen)
    return ranks


def bytes_merged(ranks, text):
    return reference.merge_by_rank([bytes([b]) for b in text.encode()], reference.tiktoken_pair_ranks(ranks))


def reference_ids(ranks, text):
    return [ranks[token] for token in reference.encode_piece_tiktoken(text.encode(), ranks)]


def cases():
    return texts_for_vocabularies(ALPHABET, [1, 2, 3, 8, 70, 150])


VOCABULARIES = [rising_ranks(seed) for seed in range(8)]


@settings(max_examples=150, deadline=None)
@given(case=cases())
def test_premerged_characters_merge_to_the_tokens_of_the_bytes(case):
    which, text = case
    ranks = VOCABULARIES[which]
    symbols = reference.premerged_characters(text, ranks)
    assert b"".join(symbols) == text.encode()
    assert reference.merge_by_rank(symbols, reference.tiktoken_pair_ranks(ranks)) == bytes_merged(ranks, text)


@settings(max_examples=150, deadline=None)
@given(case=cases())
def test_whole_texts_equal_the_reference(case):
    which, text = case
    ranks = VOCABULARIES[which]
    encoder = tiktoken_engine_for(ranks)
    want = reference_ids(ranks, text)
    assert encoder.encode_ordinary(text) == want
    assert encoder.encode_ordinary(text) == want  # again, from the cache


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_words_split_by_a_pattern_equal_the_reference(seed):
    # pieces of a space and a word: the character after the space is the one most often guarded
    rng = random.Random(seed)
    ranks = VOCABULARIES[seed % 8]
    words = ["".join(rng.choice(ALPHABET.replace(" ", "")) for _ in range(rng.randint(1, 9))) for _ in range(200)]
    text = " ".join(words)
    encoder = tiktoken_engine_for(ranks, pattern="cl100k")
    want = [token_id for piece in encoder.split(text) for token_id in reference_ids(ranks, piece)]
    assert encoder.encode_ordinary(text) == want


def with_tokens(*values):
    ranks = {bytes([b]): b for b in range(256)}
    for value in values:
        ranks[value] = len(ranks)
    return ranks


E_ACUTE = "é".encode()  # C3 A9


def test_a_pair_into_the_character_before_keeps_it_as_bytes():
    # " " + C3 ranks below é: after a space, é's first byte goes to the space
    ranks = with_tokens(b" " + E_ACUTE[:1], E_ACUTE)
    assert reference.premerged_characters("é é", ranks) == [E_ACUTE, b" ", E_ACUTE[:1], E_ACUTE[1:]]
    encoder = tiktoken_engine_for(ranks)
    for text in ("é é", " é", "é" * 3 + " é" * 40):
        assert (
            encoder.encode_ordinary(text) == reference_ids(ranks, text) == [ranks[t] for t in bytes_merged(ranks, text)]
        )
    assert encoder.encode_ordinary("é é") == [ranks[E_ACUTE], ranks[b" \xc3"], 0xA9]


def test_a_pair_into_the_character_after_keeps_it_as_bytes():
    # A9 + " " ranks below é: before a space, é's last byte goes to the space
    ranks = with_tokens(E_ACUTE[1:] + b" ", E_ACUTE)
    assert reference.premerged_characters("éé ", ranks) == [E_ACUTE, E_ACUTE[:1], E_ACUTE[1:], b" "]
    encoder = tiktoken_engine_for(ranks)
    for text in ("éé ", "é ", "é" * 3 + "é " * 40):
        assert (
            encoder.encode_ordinary(text) == reference_ids(ranks, text) == [ranks[t] for t in bytes_merged(ranks, text)]
        )
    assert encoder.encode_ordinary("é ") == [0xC3, ranks[b"\xa9 "]]


def test_a_pair_ranked_above_the_character_does_not_guard_it():
    # " " + C3 ranks above é: é is made first wherever it stands, so it enters whole
    ranks = with_tokens(E_ACUTE, b" " + E_ACUTE[:1], b" " + E_ACUTE)
    assert reference.premerged_characters("é é", ranks) == [E_ACUTE, b" ", E_ACUTE]
    encoder = tiktoken_engine_for(ranks)
    for text in ("é é", " é" * 40):
        assert encoder.encode_ordinary(text) == reference_ids(ranks, text)


def test_a_space_and_a_character_enter_as_one_token_at_the_start_of_a_piece():
    # " " + C3 ranks below é, so é after a space stays bytes; " é" whole is still exact there
    ranks = with_tokens(b" " + E_ACUTE[:1], E_ACUTE, b" " + E_ACUTE)
    assert reference.premerged_characters(" éa", ranks) == [b" " + E_ACUTE, b"a"]
    encoder = tiktoken_engine_for(ranks)
    for text in (" é", " éa", " éé", " " + "é" * 70):
        assert (
            encoder.encode_ordinary(text) == reference_ids(ranks, text) == [ranks[t] for t in bytes_merged(ranks, text)]
        )


def test_a_pair_of_the_character_and_the_next_keeps_the_space_apart():
    # é + "b" ranks below " é": before a "b", é joins it first and the space stays alone
    ranks = with_tokens(E_ACUTE, E_ACUTE + b"b", b" " + E_ACUTE)
    assert reference.premerged_characters(" éb", ranks) == [b" ", E_ACUTE, b"b"]
    assert reference.premerged_characters(" éa", ranks) == [b" " + E_ACUTE, b"a"]
    encoder = tiktoken_engine_for(ranks)
    assert encoder.encode_ordinary(" éb") == [ranks[b" "], ranks[E_ACUTE + b"b"]]
    for text in (" éb", " éa", " éé", " éb" * 30):
        assert (
            encoder.encode_ordinary(text) == reference_ids(ranks, text) == [ranks[t] for t in bytes_merged(ranks, text)]
        )
