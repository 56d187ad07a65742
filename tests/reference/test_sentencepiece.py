"""SentencePiece BPE: the reference's rules on hand-made models, the engine path against the
reference on random text, and our protobuf reader on hand-written model files."""

from __future__ import annotations

import pickle
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.errors import FormatError
from bytepair.formats.sentencepiece_proto import read_model_proto
from bytepair.reference_sentencepiece import (
    BYTE,
    CONTROL,
    NORMAL,
    UNKNOWN,
    UNUSED,
    USER_DEFINED,
    SentencePieceBPE,
    byte_piece,
)
from bytepair.sentencepiece import SentencePieceModel, SentencePieceTokenizer

SPECIALS = [("<unk>", 0.0, UNKNOWN), ("<s>", 0.0, CONTROL), ("</s>", 0.0, CONTROL)]
BYTES = [(byte_piece(b), 0.0, BYTE) for b in range(256)]


def model_pieces(normal, extra=()):
    """Specials, 256 byte pieces, then ``normal`` as (piece, score) NORMAL pieces."""
    return SPECIALS + BYTES + [(p, s, NORMAL) for p, s in normal] + list(extra)


CHARS = [("▁", -1.0), ("a", -2.0), ("b", -3.0), ("c", -4.0)]


def ids_of(pieces, *names):
    index = {p: i for i, (p, _, _) in enumerate(pieces)}
    return [index[n] for n in names]


def test_score_not_list_order_decides():
    # "bc" has the better score, so "abc" -> a + bc, although "ab" comes first in the file
    pieces = model_pieces(CHARS + [("ab", -10.0), ("bc", -5.0), ("▁a", -20.0)])
    model = SentencePieceBPE(pieces, byte_fallback=True)
    assert model.encode("abc") == ids_of(pieces, "▁a", "bc")


def test_equal_scores_merge_leftmost_first():
    pieces = model_pieces(CHARS + [("ab", -5.0), ("ba", -5.0)])
    model = SentencePieceBPE(pieces, byte_fallback=True)
    assert model.encode("aba") == ids_of(pieces, "▁", "ab", "a")


def test_unknown_characters_fall_back_to_bytes_or_one_unk():
    pieces = model_pieces(CHARS)
    with_bytes = SentencePieceBPE(pieces, byte_fallback=True)
    assert with_bytes.encode("aé") == ids_of(pieces, "▁", "a", "<0xC3>", "<0xA9>")
    without = SentencePieceBPE(SPECIALS + [(p, s, NORMAL) for p, s in CHARS])
    assert without.encode("aéé b") == [3, 4, 0, 3, 5]  # ▁ a <unk> ▁ b: one <unk> for the run


def test_user_defined_pieces_are_frozen():
    pieces = model_pieces(CHARS + [("▁a", -5.0)], extra=[("ab", 0.0, USER_DEFINED)])
    model = SentencePieceBPE(pieces, byte_fallback=True)
    assert model.encode("abab") == ids_of(pieces, "▁", "ab", "ab")


def test_unused_pieces_are_split_back():
    pieces = model_pieces(CHARS, extra=[("ab", -1.5, UNUSED), ("abc", -1.6, NORMAL)])
    model = SentencePieceBPE(pieces, byte_fallback=True, add_dummy_prefix=False)
    assert model.encode("abc") == ids_of(pieces, "abc")
    assert model.encode("ab") == ids_of(pieces, "a", "b")


def test_normalization():
    model = SentencePieceBPE(model_pieces(CHARS))
    assert model.normalize("") == ""
    assert model.normalize("a b") == "▁a▁b"
    assert model.normalize(" ") == "▁▁"
    squeezed = SentencePieceBPE(model_pieces(CHARS), remove_extra_whitespaces=True)
    assert squeezed.normalize("  a   b  ") == "▁a▁b"
    assert squeezed.normalize("   ") == ""


def test_decode_rules():
    pieces = model_pieces(CHARS + [("▁a", -5.0)])
    model = SentencePieceBPE(pieces, byte_fallback=True)
    assert model.decode(ids_of(pieces, "▁a", "▁a")) == "a a"
    assert model.decode(ids_of(pieces, "<s>", "▁a")) == "a"
    assert model.decode(ids_of(pieces, "<0x0A>", "▁a")) == "\n a"
    assert model.decode(ids_of(pieces, "<0xE2>", "<0x96>", "a")) == "\ufffd\ufffda"
    assert model.decode(ids_of(pieces, "<unk>")) == " \u2047 "


# -- the engine path equals the reference ------------------------------------------------------

ALPHABET = "ab c▁é\n"
RANDOM_PIECES = model_pieces(
    [
        ("▁", -1.0),
        ("a", -2.0),
        ("b", -3.0),
        ("c", -4.0),
        ("▁a", -5.0),
        ("ab", -5.0),
        ("ba", -6.0),
        ("▁ab", -7.0),
        ("aba", -7.0),
        ("bab", -8.0),
        ("▁▁", -1e9),
        ("cc", -9.0),
        ("▁c", -9.0),
    ]
)


@pytest.fixture(scope="module")
def tokenizer():
    return SentencePieceTokenizer(SentencePieceModel(RANDOM_PIECES, byte_fallback=True))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=60))
def test_engine_equals_reference(tokenizer, text):
    reference = tokenizer.model.reference
    assert tokenizer.encode_ordinary(text) == reference.encode(text)
    assert tokenizer.decode(tokenizer.encode_ordinary(text)) == reference.decode(reference.encode(text))


def test_batch_equals_single(tokenizer):
    texts = ["ab ab", "", " ", "ééa  b", "a" * 500]
    assert tokenizer.encode_batch(texts, num_threads=2) == [tokenizer.encode_ordinary(t) for t in texts]


def test_model_without_byte_fallback_runs_the_reference():
    model = SentencePieceModel(SPECIALS + [(p, s, NORMAL) for p, s in CHARS])
    assert model.engine_reason is not None
    assert SentencePieceTokenizer(model).encode_ordinary("aéé b") == [3, 4, 0, 3, 5]


def test_pickle_and_special_tokens(tokenizer):
    copy = pickle.loads(pickle.dumps(tokenizer))
    assert copy.encode_ordinary("ab ab") == tokenizer.encode_ordinary("ab ab")
    assert copy.fingerprint == tokenizer.fingerprint
    assert tokenizer.special_tokens == {"<s>": 1, "</s>": 2}
    assert tokenizer.encode("<s>ab", allowed_special="all") == [1, *tokenizer.encode_ordinary("ab")]


def test_export_is_refused_with_a_reason(tokenizer, tmp_path):
    with pytest.raises(ValueError, match="SentencePiece"):
        tokenizer.save(tmp_path / "x.json")


# -- the protobuf reader ---------------------------------------------------------------------


def _varint(n):
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _field(number, wire, payload):
    key = _varint(number << 3 | wire)
    return key + (_varint(len(payload)) + payload if wire == 2 else payload)


def write_model(pieces, *, byte_fallback=True, model_type=2, add_dummy_prefix=True, specs=True):
    out = b""
    for piece, score, kind in pieces:
        body = _field(1, 2, piece.encode()) + _field(2, 5, struct.pack("<f", score)) + _field(3, 0, _varint(kind))
        out += _field(1, 2, body)
    if not specs:  # a file cut after its pieces
        return out
    trainer = (
        _field(3, 0, _varint(model_type))
        + _field(35, 0, _varint(int(byte_fallback)))
        + _field(4, 0, _varint(len(pieces)))
    )
    normalizer = _field(1, 2, b"identity") + _field(3, 0, _varint(int(add_dummy_prefix))) + _field(4, 0, _varint(0))
    return out + _field(2, 2, trainer) + _field(3, 2, normalizer)


def test_reader_reads_what_was_written(tmp_path):
    path = tmp_path / "toy.model"
    path.write_bytes(write_model(RANDOM_PIECES))
    proto = read_model_proto(path.read_bytes(), str(path))
    assert [tuple(p) for p in proto.pieces] == [(p, pytest.approx(s), k) for p, s, k in RANDOM_PIECES]
    assert (proto.model_type, proto.byte_fallback, proto.add_dummy_prefix, proto.remove_extra_whitespaces) == (
        "bpe",
        True,
        True,
        False,
    )
    tok = bytepair.load(path)
    assert tok.encode_ordinary("ab ab") == SentencePieceBPE(RANDOM_PIECES, byte_fallback=True).encode("ab ab")


def test_reader_refuses_bad_files(tmp_path):
    good = write_model(RANDOM_PIECES)
    truncated = tmp_path / "cut.model"
    truncated.write_bytes(good[: len(good) // 2])
    with pytest.raises(FormatError, match="cut.model"):
        bytepair.load(truncated)
    unigram = tmp_path / "uni.model"
    unigram.write_bytes(write_model(RANDOM_PIECES, model_type=1))
    with pytest.raises(FormatError, match="unigram"):
        bytepair.load(unigram)
    empty = tmp_path / "empty.model"
    empty.write_bytes(b"")
    with pytest.raises(FormatError, match="no pieces"):
        bytepair.load(empty)
    # cut after the last piece, before the trainer spec: not "a unigram model" (its default type)
    pieces_only = tmp_path / "pieces.model"
    pieces_only.write_bytes(write_model(RANDOM_PIECES, specs=False))
    with pytest.raises(FormatError, match="pieces.model: a SentencePiece model without its trainer spec"):
        bytepair.load(pieces_only)
