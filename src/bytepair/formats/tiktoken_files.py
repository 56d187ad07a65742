"""tiktoken's rank files (``*.tiktoken``): read them, build a tokenizer, write them.

A rank file has one line per token: the token's bytes in base64, a space, its rank. The rank
is both the token's id and its merge priority (lower merges first). The file holds neither the
pre-tokenization pattern nor the special tokens; for the published encodings both come from
``ENCODINGS``, which copies tiktoken's own values (``tiktoken_ext/openai_public.py``).

Encoding follows tiktoken's ``byte_pair_merge``: a piece that is itself a token is that token;
otherwise merge the adjacent pair whose concatenation has the lowest rank, leftmost first. The
engine derives that as a pair table from the token bytes (``Encoder(token_splits=True)``; the
Python twin is ``model.tiktoken_pair_table``).

It does not write rank files (``export.py``), download (``download.py``), read GPT-2's ``encoder.json``/``vocab.bpe``
(``gpt2_files.py``) or decide which file a name means (``formats/__init__.py``).

Example:
    >>> ranks = read_ranks(b"YQ== 0\\nYg== 1\\nYWI= 2\\n", "demo")
    >>> pair_table(ranks)
    {(0, 1): (2, 2)}
"""

from __future__ import annotations

import binascii
import functools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import _engine
from .._gc import gc_paused
from .._io import MAX_TOKENIZER_BYTES, check_path, read_limited
from ..errors import FormatError
from ..ids import MAX_ID_GAP, check_defined_id
from ..model import RankModel, tiktoken_pair_table
from ..patterns import check_pattern_spelling
from ..tokenizer import Tokenizer

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True)
class Encoding:
    """A published tiktoken encoding: where its file lives, its hash, pattern and specials."""

    name: str
    file: str  # file name in a vocabulary folder and in the cache
    url: str  # path below the download base URL
    sha256: str  # tiktoken's expected hash of the file
    size: int  # the file's size in bytes, for the download's size cap
    pattern: str  # a name in bytepair.patterns.PATTERNS
    special_tokens: dict = field(default_factory=dict)


ENCODINGS = {
    encoding.name: encoding
    for encoding in (
        Encoding(
            "r50k_base",
            "r50k_base.tiktoken",
            "encodings/r50k_base.tiktoken",
            "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
            835_554,
            "gpt2",
            {ENDOFTEXT: 50256},
        ),
        Encoding(
            "p50k_base",
            "p50k_base.tiktoken",
            "encodings/p50k_base.tiktoken",
            "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
            836_186,
            "gpt2",
            {ENDOFTEXT: 50256},
        ),
        Encoding(
            "cl100k_base",
            "cl100k_base.tiktoken",
            "encodings/cl100k_base.tiktoken",
            "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
            1_681_126,
            "cl100k",
            {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276},
        ),
        Encoding(
            "o200k_base",
            "o200k_base.tiktoken",
            "encodings/o200k_base.tiktoken",
            "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
            3_613_922,
            "o200k",
            {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
        ),
    )
}


def read_ranks(data, where):
    """Parse a rank file's bytes into ``{token bytes: rank}``.

    Raises ``FormatError`` naming the line for a malformed line, a repeated token or rank, a
    rank far beyond the number of tokens (``ids.MAX_ID_GAP``), or an empty file.

    Example:
        >>> read_ranks(b"IQ== 0\\n", "x.tiktoken")
        {b'!': 0}
    """
    ranks = _read_ranks_fast(data)
    if ranks is None:
        ranks = _read_ranks_by_line(data.splitlines(), where)
    if not ranks:
        raise FormatError(f"{where}: no tokens in the file; is it a tiktoken rank file?")
    if max(ranks.values()) >= len(ranks) + MAX_ID_GAP:
        # Tables are sized by the largest rank: refuse it before anything is allocated.
        k, (token, rank) = max(enumerate(ranks.items()), key=lambda item: item[1][1])
        number = [n for n, line in enumerate(data.splitlines(), 1) if line][k]  # the k-th token's line
        check_defined_id(
            rank, count=len(ranks), what=f"{where}, line {number}: token {token[:50]!r}", error=FormatError
        )
    return ranks


def read_rank_file(path):
    """A rank file's bytes (size-capped) and its ``{token bytes: rank}`` (``read_ranks``)."""
    data = read_limited(path, MAX_TOKENIZER_BYTES, FormatError, "tiktoken rank file")
    # paused, o200k's whole load took 2.5 s instead of 4.5 (its tables of tuples, then)
    with gc_paused():
        return data, read_ranks(data, str(path))


# Bytes a well-formed file holds: the base64 alphabet with its padding, digits, space, newline.
_FILE_BYTES = np.zeros(256, dtype=bool)
_FILE_BYTES[list(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/= \n")] = True
_NEWLINE, _SPACE, _PAD = ord("\n"), ord(" "), ord("=")


def _read_ranks_fast(data):
    """The ranks of a file of exactly ``token SPACE rank NEWLINE`` lines, or None for any other
    file (then ``_read_ranks_by_line`` finds and names the bad line, or reads what is merely
    unusual: blank lines, CRLF, tabs).

    Read by the engine in one pass over the bytes (``_engine.read_rank_lines``): cl100k in
    31 ms against 92 ms for ``_read_ranks_numpy``, its twin (one process, process time). It
    also refuses a file with a rank at ``MAX_ID_GAP`` past the number of lines, which the
    line-by-line reader then names.
    """
    return _engine.read_rank_lines(bytes(data), MAX_ID_GAP)


def _read_ranks_numpy(data):
    """``_read_ranks_fast`` in numpy and Python, its twin (tests/engine/test_engine_load.py):
    the same files accepted, with the same ranks, but for ranks far past the number of lines.

    The layout is checked on the whole file in numpy (one space inside each line; nothing but
    the base64 alphabet, digits, spaces and newlines; each token a multiple of 4 long, with at
    most two ``=`` and only at its end), so that one ``bytes.split`` gives every field and the
    tokens decode without ``strict_mode`` to the same bytes as the strict decoder would: 5x less
    time than a ``split`` and a strict decode per line (cl100k: 0.16 s -> 0.03 s).
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    if not len(raw) or not _FILE_BYTES[raw].all():
        return None
    ends = np.flatnonzero(raw == _NEWLINE)
    if raw[-1] != _NEWLINE:
        ends = np.append(ends, len(raw))
    spaces = np.flatnonzero(raw == _SPACE)
    if len(spaces) != len(ends):
        return None
    starts = np.zeros(len(ends), dtype=np.int64)
    starts[1:] = ends[:-1] + 1
    # As many spaces as lines, and the k-th inside line k: exactly one per line, with a token
    # before it and a rank after it.
    if not ((spaces > starts).all() and (spaces + 1 < ends).all() and ((spaces - starts) % 4 == 0).all()):
        return None
    pads = np.flatnonzero(raw == _PAD)
    if len(pads):
        if pads[-1] == len(raw) - 1:  # the file ends in "=": no rank after it
            return None
        after, before = raw[pads + 1], raw[pads - 1]  # a token never starts the file with "="
        if not (((after == _PAD) | (after == _SPACE)).all() and (before != _NEWLINE).all() and (pads > 0).all()):
            return None
        if len(pads) > 2 and (raw[pads[2:] - 2] == _PAD).any():  # three in a row
            return None
    fields = data.split()
    try:
        tokens = list(map(binascii.a2b_base64, fields[0::2]))
        numbers = list(map(int, fields[1::2]))
    except (ValueError, binascii.Error):
        return None
    ranks = dict(zip(tokens, numbers))
    if len(ranks) != len(tokens) or len(set(numbers)) != len(numbers) or min(numbers) < 0 or not min(map(len, tokens)):
        return None
    return ranks


def _read_ranks_by_line(lines, where):
    ranks = {}
    seen_ranks = set()
    for number, line in enumerate(lines, 1):
        if not line:
            continue
        token, rank = _parse_line(line, number, where)
        if token in ranks or rank in seen_ranks:
            what = f"token {token!r}" if token in ranks else f"rank {rank}"
            raise FormatError(f"{where}, line {number}: {what} appears twice; the file is corrupt")
        ranks[token] = rank
        seen_ranks.add(rank)
    return ranks


# Strict: only the base64 alphabet, padding only at the end (what b64decode(validate=True)
# checks, and trailing data after the padding too). A partial, so that map() stays in C.
_decode_token = functools.partial(binascii.a2b_base64, strict_mode=True)


def _parse_line(line, number, where):
    parts = line.split()
    try:
        if len(parts) != 2:
            raise ValueError("expected two fields")
        token = _decode_token(parts[0])
        rank = int(parts[1])
        if rank < 0 or not token:
            raise ValueError("empty token or negative rank")
    except (ValueError, binascii.Error):
        shown = line[:80].decode("utf-8", errors="replace")
        raise FormatError(
            f"{where}, line {number}: {shown!r} is not 'base64-token rank'; "
            "the file is not a tiktoken rank file or is corrupt"
        ) from None
    return token, rank


# The pair table is the model's to derive (``model.tiktoken_pair_table``); the name stays here
# for callers that build one from a rank file.
pair_table = tiktoken_pair_table


def tokenizer_from_ranks(ranks, *, pattern, special_tokens, name=None):
    """A ``Tokenizer`` that encodes exactly like ``tiktoken.Encoding`` with these ranks.

    Example:
        >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
        >>> tokenizer_from_ranks(ranks, pattern="gpt2", special_tokens={}).encode("abc ab")
        [256, 99, 32, 256]
    """
    with gc_paused():
        try:
            model = RankModel(ranks, rule="tiktoken")
        except ValueError as error:
            raise FormatError(f"{name or 'rank file'}: {error}") from None
        # the Tokenizer's own rules and errors: a dict token -> id, a list (the next free ids), one str
        return Tokenizer(model, pattern=pattern, special_tokens=special_tokens, name=name)


def load_tiktoken(path, *, pattern, special_tokens=None, name=None):
    """Load any rank file with the pattern and special tokens it is meant to be used with.

    ``bytepair.load`` knows them for the published encodings; use this for others (such as a
    file written by ``to_tiktoken``). ``special_tokens``: a dict token -> id, or a list (they
    take the ids after the ranks), as ``Tokenizer`` takes them.

    Example:
        >>> tok = load_tiktoken("mine.tiktoken", pattern="gpt2", special_tokens={"<|end|>": 300})  # doctest: +SKIP
    """
    path = Path(check_path(path))
    check_pattern_spelling(pattern)
    _, ranks = read_rank_file(path)
    return tokenizer_from_ranks(ranks, pattern=pattern, special_tokens=special_tokens, name=name or path.stem)
