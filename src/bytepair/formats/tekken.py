"""Mistral's "tekken" files (``tekken_*.json``): byte-level BPE with tiktoken's rule.

A tekken file is JSON with::

    config          {"pattern": regex, "default_vocab_size": n, "default_num_special_tokens": k, ...}
    vocab           [{"rank": r, "token_bytes": base64, "token_str": ...}, ...]   (rank = index)
    special_tokens  [{"rank": id, "token_str": "<s>", "is_control": true}, ...]   (optional)

``mistral_common``'s ``Tekkenizer`` keeps the first ``default_vocab_size - k`` vocab entries as
tiktoken ranks and encodes with a ``tiktoken.Encoding`` of those ranks and the pattern; an
ordinary token's id is its rank plus ``k``: ids ``0 .. k-1`` belong to special tokens. A file
without ``special_tokens`` (versions up to v7) uses Mistral's 20 built-in ones (``<unk>``,
``<s>``, ``</s>``, ``[INST]``, ...), and the ids left over get ``<SPECIAL_{id}>``.

The tokenizer built here is a ``RankModel`` (tiktoken's rule) whose ids are the ranks shifted
by ``k``, with the special tokens at their ids; the pattern is a custom regex, split by the
``regex`` module.

It does not write tekken files, and ignores the image and audio sections.

Example:
    >>> tok = load_tekken("tekken_240911.json")  # doctest: +SKIP
    >>> tok.encode("<s>[INST]", allowed_special="all")  # doctest: +SKIP
    [1, 3]
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path

from .._gc import gc_paused
from .._io import check_path, parse_json, read_tokenizer_text
from ..errors import FormatError
from ..model import RankModel
from ..tokenizer import Tokenizer

# Mistral's special tokens for tekken files that list none (mistral_common, Tekkenizer's
# DEPRECATED_SPECIAL_TOKENS): id = position.
BUILTIN_SPECIAL_TOKENS = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)
FILLER_TEMPLATE = "<SPECIAL_{id}>"


def is_tekken(data) -> bool:
    """Whether parsed JSON looks like a tekken file (``config`` with a pattern, and ``vocab``)."""
    return (
        isinstance(data, dict)
        and isinstance(data.get("config"), dict)
        and "pattern" in data["config"]
        and isinstance(data.get("vocab"), list)
    )


def load_tekken(path, *, name: str | None = None) -> Tokenizer:
    """Read a tekken JSON file into a ``Tokenizer`` with ``mistral_common``'s ids.

    Raises ``FormatError`` naming the file and field for anything malformed.
    """
    path = Path(check_path(path))
    text = read_tokenizer_text(path, FormatError)
    with gc_paused():
        data = parse_json(text, str(path), FormatError)
        return tokenizer_from_tekken(data, where=str(path), name=name or path.stem)


def tokenizer_from_tekken(data, *, where: str = "tekken file", name: str | None = None) -> Tokenizer:
    """A ``Tokenizer`` from a tekken file's parsed JSON."""
    if not is_tekken(data):
        raise FormatError(f"{where}: not a tekken file (it needs 'config' with a 'pattern', and a 'vocab' list)")
    config = data["config"]
    num_special = _int_field(config, "default_num_special_tokens", where)
    vocab_size = _int_field(config, "default_vocab_size", where)
    vocab = data["vocab"]
    inner = vocab_size - num_special
    if not 256 <= inner <= len(vocab):
        raise FormatError(
            f"{where}: config.default_vocab_size {vocab_size} minus {num_special} special tokens leaves "
            f"{inner} ordinary tokens, but the vocab lists {len(vocab)} (need 256 to {len(vocab)})"
        )
    ranks = {}
    for index, entry in enumerate(vocab[:inner]):
        token = _token_bytes(entry, index, where)
        if token in ranks:
            raise FormatError(f"{where}: vocab[{index}] repeats the token {token!r}; the file is corrupt")
        # mistral_common's ids: the rank shifted past the special tokens.
        ranks[token] = index + num_special
    special = _special_tokens(data.get("special_tokens"), num_special, where)
    try:
        model = RankModel(ranks, rule="tiktoken")
        return Tokenizer(model, pattern=config["pattern"], special_tokens=special, name=name or "tekken")
    except ValueError as error:
        raise FormatError(f"{where}: {error}") from None


def _int_field(config, key, where):
    value = config.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise FormatError(f"{where}: config.{key} must be a non-negative integer, not {value!r}")
    return value


def _token_bytes(entry, index, where):
    if not isinstance(entry, dict) or entry.get("rank") != index or not isinstance(entry.get("token_bytes"), str):
        raise FormatError(
            f"{where}: vocab[{index}] must be {{'rank': {index}, 'token_bytes': base64, ...}}, not {str(entry)[:80]!r}"
        )
    try:
        token = base64.b64decode(entry["token_bytes"], validate=True)
    except (ValueError, binascii.Error):
        token = b""
    if not token:
        raise FormatError(
            f"{where}: vocab[{index}].token_bytes {entry['token_bytes']!r} is not base64 of a non-empty token"
        )
    return token


def _special_tokens(listed, num_special, where):
    """``{token: id}``: the file's list (or Mistral's built-in one), fillers for the rest."""
    if listed is None:
        special = {token: i for i, token in enumerate(BUILTIN_SPECIAL_TOKENS[:num_special])}
    else:
        if not isinstance(listed, list):
            raise FormatError(f"{where}: special_tokens must be a list, not {type(listed).__name__}")
        special = {}
        for entry in listed:
            if (
                not isinstance(entry, dict)
                or not isinstance(entry.get("token_str"), str)
                or not isinstance(entry.get("rank"), int)
            ):
                raise FormatError(
                    f"{where}: special_tokens entry {str(entry)[:80]!r} needs 'rank' (int) and 'token_str'"
                )
            if entry["token_str"] in special or not 0 <= entry["rank"] < num_special:
                raise FormatError(
                    f"{where}: special token {entry['token_str']!r} is listed twice or its rank {entry['rank']} "
                    f"is outside 0..{num_special - 1}"
                )
            special[entry["token_str"]] = entry["rank"]
    taken = set(special.values())
    for token_id in range(num_special):
        if token_id not in taken:
            special[FILLER_TEMPLATE.format(id=token_id)] = token_id
    return special
