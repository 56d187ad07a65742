"""SentencePiece ``.model`` files (Llama 2, Mistral 7B): read them into a tokenizer.

``load_sentencepiece(path)`` reads the file with our own protobuf reader
(``sentencepiece_proto``) and builds a ``SentencePieceTokenizer`` that encodes as the
``sentencepiece`` library does (see ``bytepair.sentencepiece``). Only BPE models with the
identity normalizer load; anything else is a ``FormatError`` that says which.

It does not write ``.model`` files.

Example:
    >>> tok = load_sentencepiece("tokenizer.model.v1")  # doctest: +SKIP
    >>> tok.encode("Hello world")  # doctest: +SKIP
    [22557, 1526]
"""

from __future__ import annotations

from pathlib import Path

from .._io import MAX_TOKENIZER_BYTES, check_path, read_limited
from ..errors import FormatError
from ..sentencepiece import SentencePieceModel, SentencePieceTokenizer
from .sentencepiece_proto import read_model_proto


def is_sentencepiece(data: bytes) -> bool:
    """Whether bytes start like a SentencePiece model (field 1, length-delimited: a piece)."""
    return data[:1] == b"\x0a"


def load_sentencepiece(path, *, name: str | None = None) -> SentencePieceTokenizer:
    """Read a SentencePiece BPE ``.model`` file into a tokenizer with sentencepiece's ids."""
    path = Path(check_path(path))
    data = read_limited(path, MAX_TOKENIZER_BYTES, FormatError, "SentencePiece model")
    proto = read_model_proto(data, str(path))
    check_supported(proto, str(path))
    try:
        model = SentencePieceModel(
            proto.pieces,
            byte_fallback=proto.byte_fallback,
            add_dummy_prefix=proto.add_dummy_prefix,
            remove_extra_whitespaces=proto.remove_extra_whitespaces,
            escape_whitespaces=proto.escape_whitespaces,
            treat_whitespace_as_suffix=proto.treat_whitespace_as_suffix,
            unk_surface=proto.unk_surface,
        )
        return SentencePieceTokenizer(model, name=name or path.name)
    except ValueError as error:
        raise FormatError(f"{path}: {error}") from None


def check_supported(proto, where: str) -> None:
    """Raise ``FormatError`` unless the model is BPE with an identity normalizer."""
    if proto.model_type != "bpe":
        raise FormatError(
            f"{where}: a SentencePiece {proto.model_type} model; bytepair reads SentencePiece BPE models "
            "(model_type BPE) only"
        )
    if proto.precompiled_charsmap:
        raise FormatError(
            f"{where}: the model normalizes text with a precompiled character map ({proto.normalizer_name!r}), "
            "which bytepair does not implement; only identity-normalized models (Llama 2, Mistral) load"
        )
