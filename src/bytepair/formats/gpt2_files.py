"""GPT-2's original vocabulary files, ``encoder.json`` + ``vocab.bpe``, as tiktoken ranks.

The conversion is the one tiktoken makes (``data_gym_to_mergeable_bpe_ranks``), so the ids
equal tiktoken's ``gpt2`` encoding:

1. the 256 single bytes take ranks 0..255 in the order of GPT-2's byte-to-unicode table
   (the printable bytes first, then the others);
2. merge line ``i`` of ``vocab.bpe`` (after its ``#version`` header) gives the concatenation of
   its two halves rank ``256 + i``; both halves are written in the byte-to-unicode alphabet;
3. ``encoder.json`` must give every token the same id, apart from ``<|endoftext|>``, which
   becomes a special token.

It does not encode: the ranks go to ``tiktoken_files.tokenizer_from_ranks``.

Example:
    >>> import json
    >>> alphabet = {BYTE_TO_CHAR[b]: rank for rank, b in enumerate(BYTE_ORDER)}
    >>> encoder = json.dumps(alphabet | {"ab": 256, "<|endoftext|>": 257})
    >>> ranks, specials = read_gpt2_files(encoder, "#version: 0.2\\na b\\n", "gpt2")
    >>> ranks[b"ab"], specials
    (256, {'<|endoftext|>': 257})
"""

from __future__ import annotations

from pathlib import Path

from ..bytelevel import BYTE_TO_CHAR, readable_to_bytes
from ..errors import FormatError
from ..ids import check_defined_id
from .tiktoken_files import ENCODINGS, tokenizer_from_ranks

# Step 1's order: the bytes GPT-2 shows as themselves, then the ones it shifts above U+00FF.
BYTE_ORDER = [b for b in range(256) if BYTE_TO_CHAR[b] == chr(b)] + [b for b in range(256) if BYTE_TO_CHAR[b] != chr(b)]

# Tokens of encoder.json that are not mergeable bytes (tiktoken drops the same two).
SPECIAL_ENTRIES = ("<|endoftext|>", "<|startoftext|>")


def read_gpt2_files(encoder_text, merges_text, where):
    """``(ranks, special_tokens)`` from the texts of ``encoder.json`` and ``vocab.bpe``.

    Raises ``FormatError`` naming the line or token when the files are malformed or disagree.
    """
    ranks = {bytes([b]): rank for rank, b in enumerate(BYTE_ORDER)}
    for number, (first, second) in _merge_lines(merges_text, where):
        merged = _to_bytes(first, where, number) + _to_bytes(second, where, number)
        if merged in ranks:
            raise FormatError(f"{where}: vocab.bpe line {number} builds {first + second!r} a second time")
        ranks[merged] = len(ranks)
    encoder = _read_encoder(encoder_text, where)
    count = len(encoder)
    specials = {token: encoder.pop(token) for token in SPECIAL_ENTRIES if token in encoder}
    for token, token_id in specials.items():
        check_defined_id(token_id, count=count, what=f"{where}: encoder.json entry {token!r}", error=FormatError)
    _check_agreement(ranks, encoder, where)
    return ranks, specials


def _merge_lines(merges_text, where):
    lines = merges_text.split("\n")
    for number, line in enumerate(lines, 1):
        if (number == 1 and line.startswith("#")) or not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise FormatError(f"{where}: vocab.bpe line {number} is {line[:80]!r}, not two tokens separated by a space")
        yield number, parts


def _to_bytes(text, where, number):
    try:
        return readable_to_bytes(text)
    except ValueError as error:
        raise FormatError(f"{where}: vocab.bpe line {number}: {error}") from None


def _read_encoder(encoder_text, where):
    from .._io import parse_json

    encoder = parse_json(encoder_text, f"{where}: encoder.json", FormatError)
    if not isinstance(encoder, dict):
        raise FormatError(f"{where}: encoder.json must map token strings to ids, not be a {type(encoder).__name__}")
    return encoder


def _check_agreement(ranks, encoder, where):
    """tiktoken's sanity check: encoder.json's ids must be the ranks the merges give."""
    decoded = {}
    for token, token_id in encoder.items():
        try:
            decoded[readable_to_bytes(token)] = token_id
        except ValueError:
            raise FormatError(
                f"{where}: encoder.json token {token!r} is not in GPT-2's byte-to-unicode alphabet"
            ) from None
    if decoded == ranks:
        return
    for value, rank in ranks.items():
        if decoded.get(value) != rank:
            raise FormatError(
                f"{where}: encoder.json gives {value!r} the id {decoded.get(value)!r} but vocab.bpe "
                f"gives it rank {rank}; the two files do not belong together"
            )
    extra = next(iter(set(decoded) - set(ranks)))
    raise FormatError(f"{where}: encoder.json has {extra!r}, which no merge in vocab.bpe builds")


def load_gpt2_files(encoder_path, merges_path, *, name="gpt2"):
    """A tokenizer from GPT-2's two files, identical to tiktoken's ``gpt2`` encoding.

    Example:
        >>> tok = load_gpt2_files("gpt2/encoder.json", "gpt2/vocab.bpe")  # doctest: +SKIP
        >>> tok.encode("hello world")                                     # doctest: +SKIP
        [31373, 995]
    """
    from .._io import check_path, read_tokenizer_text

    encoder_path, merges_path = (
        Path(check_path(encoder_path, "encoder_path")),
        Path(check_path(merges_path, "merges_path")),
    )
    for path in (encoder_path, merges_path):
        if not path.is_file():
            raise FormatError(f"{path}: no such file; GPT-2's vocabulary needs both encoder.json and vocab.bpe")
    where = str(encoder_path.parent)
    ranks, specials = read_gpt2_files(
        read_tokenizer_text(encoder_path, FormatError), read_tokenizer_text(merges_path, FormatError), where
    )
    pattern = ENCODINGS["r50k_base"].pattern
    return tokenizer_from_ranks(ranks, pattern=pattern, special_tokens=specials, name=name)
