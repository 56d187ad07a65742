"""The compiled decoder (``_engine.Decoder`` behind ``Tokenizer.decode_bytes``) against its
definition, ``b"".join(bytes of each id)``, on every input kind it reads itself (lists, tuples,
numpy arrays of every integer dtype, strided) and on those it leaves to Python's checks; and
the errors: ``TokenIdError`` naming the first bad id and its position, in the same order as
``bytepair/ids.py`` checks them (a non-integer anywhere before a negative id, a negative id
before one past the vocabulary).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair import Tokenizer, _engine
from bytepair.errors import TokenIdError

INT_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]

# A byte-level vocabulary with merges (multi-byte and split-character tokens) and special tokens
# at chosen ids, so that ids 259-261 and 263-269 are unused.
TOKENIZER = Tokenizer(
    mode="byte",
    merges=[(b"a", b"b"), (b"ab", b"c"), (b"\xe6", b"\x9d"), (b"abc", b"abc")],
    special_tokens={"<|end|>": 262, "<|pad|>": 270},
    pattern="gpt2",
)


def reference_table(tokenizer):
    """id -> bytes or None, from the public model and special tokens (not the decoder's table)."""
    table = [None] * tokenizer.vocab_size
    for token_id, value in enumerate(tokenizer.model.token_bytes):
        table[token_id] = value
    for token, token_id in tokenizer.special_tokens.items():
        table[token_id] = token.encode("utf-8")
    return table


TABLE = reference_table(TOKENIZER)
VALID = [i for i, value in enumerate(TABLE) if value is not None]
HOLES = [i for i, value in enumerate(TABLE) if value is None]


def expected(ids):
    return b"".join(TABLE[int(i)] for i in ids)


valid_ids = st.lists(st.sampled_from(VALID), max_size=2000)


@settings(max_examples=200, deadline=None)
@given(valid_ids)
def test_lists_and_tuples_decode_to_the_joined_bytes(ids):
    assert TOKENIZER.decode_bytes(ids) == expected(ids)
    assert TOKENIZER.decode_bytes(tuple(ids)) == expected(ids)
    assert TOKENIZER.decode(ids) == expected(ids).decode("utf-8", errors="replace")


@settings(max_examples=200, deadline=None)
@given(valid_ids, st.sampled_from(INT_DTYPES), st.integers(1, 3))
def test_arrays_of_every_integer_dtype_decode_to_the_joined_bytes(ids, dtype, step):
    ids = [i for i in ids if i <= np.iinfo(dtype).max]
    array = np.array(ids, dtype=dtype)
    assert TOKENIZER.decode_bytes(array) == expected(ids)
    strided = np.repeat(array, step)[::step]  # a view with a stride of `step` items
    assert TOKENIZER.decode_bytes(strided) == expected(ids)
    assert TOKENIZER.decode(array) == expected(ids).decode("utf-8", errors="replace")


def test_inputs_the_engine_leaves_to_python_decode_the_same():
    ids = [97, 258, 262, 0, 270, 257]
    want = expected(ids)
    assert TOKENIZER.decode_bytes(iter(ids)) == want
    assert TOKENIZER.decode_bytes(range(97, 100)) == b"abc"
    assert TOKENIZER.decode_bytes([np.int64(i) for i in ids]) == want
    assert TOKENIZER.decode_bytes(np.array(ids, dtype=">i4")) == want  # foreign byte order
    record = np.zeros(len(ids), dtype=[("flag", "u1"), ("id", "<i4")])  # packed: stride 5
    record["id"] = ids
    assert TOKENIZER.decode_bytes(record["id"]) == want
    assert TOKENIZER.decode_bytes([]) == b"" == TOKENIZER.decode_bytes(np.array([], dtype="int64"))


def test_errors_name_the_first_bad_id_and_its_position():
    hole = HOLES[0]
    for ids in ([97, 98, hole, 5], [97, 98, 10**6], [97, 98, 10**30]):
        bad = ids[2]
        with pytest.raises(TokenIdError, match=f"token id {bad} at position 2 is not in the vocabulary"):
            TOKENIZER.decode_bytes(ids)
        with pytest.raises(TokenIdError, match=f"token id {bad} at position 2 is not in the vocabulary"):
            TOKENIZER.decode(tuple(ids))
    for dtype in INT_DTYPES:
        if hole <= np.iinfo(dtype).max:
            array = np.array([97, 98, hole], dtype=dtype)
            with pytest.raises(TokenIdError, match=f"token id {hole} at position 2 is not in the vocabulary"):
                TOKENIZER.decode_bytes(array)
        if dtype.startswith("int"):
            with pytest.raises(TokenIdError, match="token id -3 at position 1 is negative"):
                TOKENIZER.decode_bytes(np.array([97, -3, 10**2], dtype=dtype))
    with pytest.raises(TokenIdError, match="token id -3 at position 1 is negative"):
        TOKENIZER.decode_bytes([97, -3, 10**6])  # negative is checked before the vocabulary


@pytest.mark.parametrize(
    "ids, message",
    [
        ([97, True], "token id True at position 1 is not an integer"),
        ([97, np.bool_(False)], "at position 1 is not an integer"),
        ([97, 1.0], "token id 1.0 at position 1 is not an integer"),
        ([-1, "a"], "token id 'a' at position 1 is not an integer"),  # type before sign
        ("abc", "not str"),
        (b"abc", "not bytes"),
        (np.array([True, False]), "not dtype bool"),
        (np.array([1.0, 2.0]), "not dtype float64"),
        (np.array([[97, 98]]), "not an array of shape"),
        (5, "not 5"),
    ],
)
def test_what_is_not_ids_is_refused(ids, message):
    with pytest.raises(TokenIdError, match=message.replace("(", r"\(")):
        TOKENIZER.decode_bytes(ids)
    with pytest.raises(TokenIdError, match=message.replace("(", r"\(")):
        TOKENIZER.decode(ids)


def test_decoder_alone_returns_none_for_what_it_leaves_to_python():
    decoder = _engine.Decoder([b"a", None, b"bc", b""])
    assert decoder.decode_bytes([2, 0, 3, 2]) == b"bcabc"
    assert decoder.decode_bytes(np.array([0, 2], dtype="int8")) == b"abc"
    for ids in ([1], [4], [-1], [True], [0.0], iter([0]), np.array([0.0]), np.array([[0]])):
        assert decoder.decode_bytes(ids) is None


def test_a_list_mutated_by_nobody_and_large_decodes_in_one_piece():
    ids = VALID * 400  # over the stack buffer: the heap path
    assert TOKENIZER.decode_bytes(ids) == expected(ids)
