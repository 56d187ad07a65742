"""SentencePiece's ``.model`` file: a ``ModelProto`` message, read with a reader of our own.

The file is one protobuf message (``sentencepiece_model.proto``); this module reads the fields
that decide encoding and decoding, and skips the rest by wire type:

    ModelProto       1 pieces (repeated SentencePiece), 2 trainer_spec, 3 normalizer_spec
    SentencePiece    1 piece (string), 2 score (float), 3 type (enum, default NORMAL = 1)
    TrainerSpec      3 model_type (UNIGRAM = 1, BPE = 2, WORD = 3, CHAR = 4; default UNIGRAM),
                     24 treat_whitespace_as_suffix, 35 byte_fallback, 44 unk_surface
    NormalizerSpec   1 name, 2 precompiled_charsmap, 3 add_dummy_prefix (default true),
                     4 remove_extra_whitespaces (default true), 5 escape_whitespaces (default true)

Neither ``protobuf`` nor ``sentencepiece`` is needed: the wire format is varints, 32/64-bit
fixed fields and length-delimited fields, which is all these messages use.

It does not encode (``bytepair.sentencepiece``) or decide which file a name means
(``formats/__init__.py``).

Example:
    >>> proto = read_model_proto(open("tokenizer.model", "rb").read(), "tokenizer.model")  # doctest: +SKIP
    >>> proto.pieces[3]  # doctest: +SKIP
    Piece(piece='<0x00>', score=0.0, type=6)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import NamedTuple

from ..errors import FormatError

# SentencePiece.Type
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
TYPE_NAMES = {
    NORMAL: "normal",
    UNKNOWN: "unknown",
    CONTROL: "control",
    USER_DEFINED: "user_defined",
    UNUSED: "unused",
    BYTE: "byte",
}
# TrainerSpec.ModelType
MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}
DEFAULT_UNK_SURFACE = " \u2047 "


class Piece(NamedTuple):
    piece: str
    score: float
    type: int


@dataclass(frozen=True)
class ModelProto:
    """The fields of a SentencePiece model that encoding and decoding depend on."""

    pieces: tuple[Piece, ...]
    model_type: str = "unigram"
    byte_fallback: bool = False
    treat_whitespace_as_suffix: bool = False
    unk_surface: str = DEFAULT_UNK_SURFACE
    normalizer_name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    extra: dict = field(default_factory=dict)


def read_model_proto(data: bytes, where: str) -> ModelProto:
    """Parse a ``.model`` file's bytes. Raises ``FormatError`` naming the file and the field."""
    pieces = []
    trainer: dict | None = None
    normalizer: dict = {}
    try:
        for number, value in _fields(data):
            if number == 1:
                pieces.append(_piece(value, len(pieces), where))
            elif number == 2:
                trainer = _message(value, {3: "varint", 24: "varint", 35: "varint", 44: "string"})
            elif number == 3:
                normalizer = _message(value, {1: "string", 2: "bytes", 3: "varint", 4: "varint", 5: "varint"})
    except _WireError as error:
        raise FormatError(f"{where}: not a SentencePiece model file ({error}); is it truncated?") from None
    if not pieces:
        raise FormatError(f"{where}: a SentencePiece model holds no pieces; is it a .model file?")
    if trainer is None:  # written after the pieces by every trainer: a cut file loses it
        raise FormatError(f"{where}: a SentencePiece model without its trainer spec (field 2); is it truncated?")
    model_type = trainer.get(3, 1)
    return ModelProto(
        pieces=tuple(pieces),
        model_type=MODEL_TYPES.get(model_type, f"type {model_type}"),
        byte_fallback=bool(trainer.get(35, 0)),
        treat_whitespace_as_suffix=bool(trainer.get(24, 0)),
        unk_surface=trainer.get(44, DEFAULT_UNK_SURFACE),
        normalizer_name=normalizer.get(1, ""),
        precompiled_charsmap=normalizer.get(2, b""),
        add_dummy_prefix=bool(normalizer.get(3, 1)),
        remove_extra_whitespaces=bool(normalizer.get(4, 1)),
        escape_whitespaces=bool(normalizer.get(5, 1)),
    )


class _WireError(ValueError):
    pass


def _piece(data, index, where):
    fields = _message(data, {1: "string", 2: "fixed32", 3: "varint"})
    piece = fields.get(1, "")
    if not piece:
        raise FormatError(f"{where}: piece {index} is empty; the model file is corrupt")
    score = struct.unpack("<f", struct.pack("<I", fields.get(2, 0)))[0]
    kind = fields.get(3, NORMAL)
    if kind not in TYPE_NAMES:
        raise FormatError(f"{where}: piece {index} ({piece!r}) has unknown type {kind}; the model file is corrupt")
    return Piece(piece, score, kind)


def _message(data, wanted):
    """The last value of each wanted field number, decoded as its kind; other fields skipped."""
    found = {}
    for number, value in _fields(data):
        kind = wanted.get(number)
        if kind is None:
            continue
        if kind == "string":
            if not isinstance(value, bytes):
                raise _WireError(f"field {number} is not a string")
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                raise _WireError(f"field {number} is not UTF-8") from None
        elif kind == "bytes" and not isinstance(value, bytes):
            raise _WireError(f"field {number} is not bytes")
        elif kind in ("varint", "fixed32") and not isinstance(value, int):
            raise _WireError(f"field {number} is not a number")
        found[number] = value
    return found


def _fields(data):
    """``(field number, value)`` of each field: int for varint and fixed, bytes for the rest."""
    position, end = 0, len(data)
    while position < end:
        key, position = _varint(data, position)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, position = _varint(data, position)
        elif wire == 1:
            value, position = _fixed(data, position, 8)
        elif wire == 5:
            value, position = _fixed(data, position, 4)
        elif wire == 2:
            length, position = _varint(data, position)
            if position + length > end:
                raise _WireError(f"field {number} runs past the end")
            value, position = bytes(data[position : position + length]), position + length
        else:
            raise _WireError(f"field {number} has wire type {wire}")
        yield number, value


def _varint(data, position):
    result = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise _WireError("a number runs past the end")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, position
        shift += 7


def _fixed(data, position, size):
    if position + size > len(data):
        raise _WireError("a fixed-size field runs past the end")
    return int.from_bytes(data[position : position + size], "little"), position + size
