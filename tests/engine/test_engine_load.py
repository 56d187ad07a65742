"""Loading a tiktoken vocabulary in the engine, against the Python twins.

- ``_engine.read_rank_lines`` (a rank file's bytes in one pass) against
  ``tiktoken_files._read_ranks_numpy`` and the line-by-line reader, on generated files, files
  with one byte changed, and the published files;
- ``_engine.token_splits`` (tiktoken's pair table by sorted prefixes and suffixes) against the
  definition (every cut, by slicing) and ``model.tiktoken_pair_table``;
- ``Encoder(token_splits=True)`` against an encoder given the Python pair table.
"""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair import _engine
from bytepair.errors import FormatError
from bytepair.formats.tiktoken_files import _read_ranks_by_line, _read_ranks_numpy, read_ranks
from bytepair.ids import MAX_ID_GAP
from bytepair.model import _split_candidates, tiktoken_pair_table
from datafiles import data_file

# -- the rank file ------------------------------------------------------------------------


def rank_file_bytes(tokens, ranks, newline=b"\n", final=True):
    lines = [base64.b64encode(token) + b" " + str(rank).encode() for token, rank in zip(tokens, ranks)]
    return newline.join(lines) + (newline if final else b"")


def by_line(data):
    try:
        return _read_ranks_by_line(data.splitlines(), "x.tiktoken")
    except Exception:
        return None


def assert_reader_agrees(data):
    engine = _engine.read_rank_lines(data, MAX_ID_GAP)
    twin = _read_ranks_numpy(data)
    if engine is not None:
        assert engine == twin == by_line(data)
        assert list(engine.items()) == list(twin.items())  # file order too
    elif twin is not None:
        # The engine leaves only ranks far past the number of lines to the line reader.
        assert max(twin.values()) >= len(twin) + MAX_ID_GAP


tokens_strategy = st.lists(st.binary(min_size=1, max_size=12), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(tokens=tokens_strategy, data=st.data())
def test_rank_lines_equal_the_twin_on_generated_files(tokens, data):
    ranks = data.draw(st.permutations(range(len(tokens))))
    final = data.draw(st.booleans())
    assert_reader_agrees(rank_file_bytes(tokens, ranks, final=final))
    if len(set(tokens)) == len(tokens):
        assert _engine.read_rank_lines(rank_file_bytes(tokens, ranks, final=final), MAX_ID_GAP) == dict(
            zip(tokens, ranks)
        )


# Bytes that change a well-formed file into a doubtful one.
DOUBTFUL = list(b"= \n\r\t+-_0A/") + [0, 0xFF, ord("9")]


@settings(max_examples=200, deadline=None)
@given(tokens=tokens_strategy, data=st.data())
def test_rank_lines_equal_the_twin_with_a_byte_changed(tokens, data):
    ranks = data.draw(st.lists(st.integers(0, 3 * len(tokens)), min_size=len(tokens), max_size=len(tokens)))
    raw = bytearray(rank_file_bytes(tokens, ranks))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(raw)))
        byte = data.draw(st.sampled_from(DOUBTFUL))
        if data.draw(st.booleans()) and at < len(raw):
            raw[at] = byte
        else:
            raw.insert(at, byte)
    assert_reader_agrees(bytes(raw))


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n",
        b"YQ== 0",
        b"YQ== 0\n\n",
        b"YQ== 0\r\n",
        b"YQ==  0\n",
        b" 0\n",
        b"YQ== \n",
        b"YQ== +1\n",
        b"YQ== 1_0\n",
        b"YQ== 007\n",
        b"YQ=A 0\n",
        b"Y=== 0\n",
        b"==== 0\n",
        b"YQ==YQ== 0\n",
        b"YR== 0\n",  # unused low bits, dropped as binascii does
        b"YQ 0\n",
        b"YQ== 0\nYQ== 1\n",
        b"YQ== 0\nYg== 0\n",
        b"YQ== 99999999999999999999999\n",
        b"YQ== 0=",
        f"YQ== {MAX_ID_GAP}\n".encode(),
        f"YQ== {MAX_ID_GAP + 1}\n".encode(),
    ],
)
def test_rank_lines_on_edge_cases(data):
    assert_reader_agrees(data)
    engine = _engine.read_rank_lines(data, MAX_ID_GAP)
    if engine is None and by_line(data):
        # What the engine leaves to the line reader is still read by read_ranks, or named.
        try:
            result = read_ranks(data, "x.tiktoken")
        except FormatError as error:
            assert "x.tiktoken, line 1" in str(error)
        else:
            assert result == by_line(data)


@pytest.mark.data
@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_rank_lines_of_the_published_files(name):
    data = data_file("vocab", f"{name}.tiktoken").read_bytes()
    ranks = _engine.read_rank_lines(data, MAX_ID_GAP)
    assert ranks is not None and list(ranks.items()) == list(_read_ranks_numpy(data).items())


# -- the pair table's splits --------------------------------------------------------------


def brute_force_splits(tokens):
    """Every cut of every token whose sides are tokens, by slicing; a side is the first index
    of its bytes."""
    first = {}
    for index, token in enumerate(tokens):
        first.setdefault(token, index)
    found = set()
    for index, token in enumerate(tokens):
        for cut in range(1, len(token)):
            left, right = first.get(token[:cut]), first.get(token[cut:])
            if left is not None and right is not None:
                found.add((left, right, index))
    return found


def engine_splits(tokens):
    left, right, whole = _engine.token_splits(tokens)
    found = list(zip(left, right, whole))
    assert len(found) == len(set(found))  # each split once
    return set(found)


# Few letters, so that tokens share prefixes and suffixes and split in many ways; 0x00 and
# 0xFF so that zero padding and the top byte value are exercised.
token_strategy = st.binary(min_size=1, max_size=20).map(lambda b: bytes(b"ab\x00\xff"[x % 4] for x in b))


@settings(max_examples=200, deadline=None)
@given(tokens=st.lists(token_strategy, min_size=1, max_size=60))
def test_token_splits_are_every_split(tokens):
    assert engine_splits(tokens) == brute_force_splits(tokens)


@settings(max_examples=100, deadline=None)
@given(extra=st.lists(st.binary(min_size=2, max_size=30), max_size=80, unique=True))
def test_token_splits_equal_the_python_pair_table(extra):
    tokens = [bytes([b]) for b in range(256)] + [t for t in extra if len(t) > 1]
    ranks = {token: index for index, token in enumerate(tokens)}
    tokens = list(ranks)
    left, right, whole = _split_candidates(tokens)
    assert engine_splits(tokens) == set(zip(left.tolist(), right.tolist(), whole.tolist()))


def test_token_splits_of_long_and_repeated_tokens():
    tokens = [b"a", b"b", b"a" * 1000, b"a" * 999, b"a" * 1, b"ab" * 500, b"b" + b"ab" * 499, b"ab" * 499 + b"a"]
    tokens += [b"\x00", b"\x00a", b"a\x00", b"\x00" * 9, b"\x00" * 8, b"\x00" * 17]
    assert engine_splits(tokens) == brute_force_splits(tokens)
    with pytest.raises(ValueError, match="non-empty"):
        _engine.token_splits([b"a", b""])


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_token_splits_of_the_published_files(name):
    ranks = _read_ranks_numpy(data_file("vocab", f"{name}.tiktoken").read_bytes())
    table = tiktoken_pair_table(ranks)
    left, right, whole = _engine.token_splits(list(ranks))  # ids are ranks, in order
    assert len(whole) == len(table)
    assert {(a, b): (w, w) for a, b, w in zip(left, right, whole)} == table


# -- the encoder with a derived pair table ----------------------------------------------


def encoders(tokens):
    """An encoder deriving the pair table, and one given ``model.tiktoken_pair_table``."""
    token_bytes = [bytes([b]) for b in range(256)] + tokens
    common = dict(
        mode="byte",
        token_bytes=token_bytes,
        base_ids=list(range(256)),
        whole_piece=True,
        monotonic=False,
        pattern=None,
        fallback_ids=None,
    )
    table = tiktoken_pair_table({token: index for index, token in enumerate(token_bytes)})
    return _engine.Encoder(**common, pair_table=None, token_splits=True), _engine.Encoder(**common, pair_table=table)


@settings(max_examples=100, deadline=None)
@given(
    tokens=st.lists(st.text("abc ", min_size=2, max_size=8).map(str.encode), max_size=40, unique=True),
    text=st.text("abc ", max_size=60),
)
def test_encoder_with_derived_splits_equals_the_given_table(tokens, text):
    derived, given = encoders(tokens)
    assert derived.encode_ordinary(text) == given.encode_ordinary(text)
