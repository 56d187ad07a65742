"""The tokenizer artifact: a JSON file, written atomically, checked by a SHA-256 fingerprint.

Two shapes, one reader:

- A plain character-level tokenizer (no pattern, normalization, special tokens or fallback) is
  written exactly as seed 000's ``tokenizer/bpe_tokenizer.json``::

      {"type": "character_bpe", "base_tokens": [...], "merges": [[l, r], ...],
       "vocab_size": N, "fingerprint": "<sha256>"}

  and its fingerprint is the seed's: SHA-256 of the compact JSON ``{"base_tokens", "merges"}``.
- Anything richer adds ``"version": 1`` and the fields that change behaviour — ``mode``
  (``"byte"``), ``pattern`` (``{"name", "regex"}``), ``normalization``, ``special_tokens``,
  ``byte_fallback`` — and each of them, when present, enters the fingerprint. Byte tokens are
  written in GPT-2's byte-to-unicode form (``"Ġ"`` is the space byte, ``bytelevel.py``), so
  any bytes are held losslessly and the file stays readable.

Its default file name is ``tokenizer.bytepair.json`` (``ARTIFACT_NAME``), so that it is never
taken for Hugging Face's ``tokenizer.json``; files of any name load.

``save(load(f))`` reproduces ``f`` byte for byte. Reading checks the fingerprint and every field;
a truncated, edited or foreign file raises ``ArtifactError`` saying which.

The artifact holds a ``MergeModel`` (``model.py``) and the tokenizer's stages. This module reads
and writes that content; it does not build the ``Tokenizer`` (``Tokenizer.load`` /
``Tokenizer.from_dict`` do, from what ``from_dict`` here returns), so it never imports it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, NamedTuple

from ._io import write_text_atomic
from .bytelevel import readable_to_bytes
from .errors import ArtifactError
from .model import MergeModel
from .patterns import resolve_pattern

FORMAT_VERSION = 1
TYPES = {"char": "character_bpe", "byte": "byte_bpe"}
KNOWN_FIELDS = {
    "type",
    "version",
    "base_tokens",
    "merges",
    "mode",
    "pattern",
    "normalization",
    "special_tokens",
    "byte_fallback",
    "vocab_size",
    "fingerprint",
}

# The default name of the artifact file: it says whose file it is (HF owns "tokenizer.json").
ARTIFACT_NAME = "tokenizer.bytepair.json"

# The JSON type of each field besides merges and pattern, and how an error describes it; null
# is the default of each (base_tokens is required in char mode).
FIELD_TYPES = {
    "base_tokens": (list, "a list of single characters"),
    "byte_fallback": (bool, "true or false"),
    "vocab_size": (int, "an integer"),
    "special_tokens": (dict, "an object of token strings to ids"),
    "normalization": (str, "'NFC', 'NFKC' or null"),
}


class ArtifactContent(NamedTuple):
    """What an artifact holds, checked: the model and the stages to compose it with."""

    model: MergeModel
    pattern: str | None  # a pattern name when the stored name still means the stored regex
    normalization: str | None
    special_tokens: dict[str, int] | None
    fingerprint: str
    vocab_size: int | None


def to_dict(tokenizer: Any) -> dict:
    """The artifact's content for a ``Tokenizer`` over a ``MergeModel``, fields in their fixed
    order. Raises ``ArtifactError`` for a model the artifact cannot hold."""
    model = tokenizer.model
    refusal = model.export_refusal("artifact")
    if refusal:
        raise ArtifactError(refusal)
    payload = model.fingerprint_payload()
    data = {"type": TYPES[model.mode]}
    behaviour = {}
    if "mode" in payload:
        behaviour["mode"] = payload["mode"]
    if tokenizer.pattern is not None:
        behaviour["pattern"] = {"name": tokenizer.pattern_name, "regex": tokenizer.pattern}
    if tokenizer.normalization is not None:
        behaviour["normalization"] = tokenizer.normalization
    if tokenizer.special_tokens:
        behaviour["special_tokens"] = dict(tokenizer.special_tokens)
    if "byte_fallback" in payload:
        behaviour["byte_fallback"] = payload["byte_fallback"]
    if behaviour:
        data["version"] = FORMAT_VERSION
    if "base_tokens" in payload:
        data["base_tokens"] = payload["base_tokens"]
    data["merges"] = payload["merges"]
    data.update(behaviour)
    data["vocab_size"] = tokenizer.vocab_size
    data["fingerprint"] = fingerprint_of(data)
    return data


def fingerprint_of(data: dict) -> str:
    """SHA-256 over the fields that define behaviour, compact JSON (seed 000's formula)."""
    payload = {key: data[key] for key in ("base_tokens", "merges") if key in data}
    for key in ("mode", "pattern", "normalization", "special_tokens", "byte_fallback"):
        if key in data:
            payload[key] = data[key]
    encoded = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(encoded).hexdigest()


def dumps(tokenizer: Any) -> str:
    """The artifact as text: indented, non-ASCII kept (what seed 000 writes)."""
    return json.dumps(to_dict(tokenizer), ensure_ascii=False, indent=2)


def save(tokenizer: Any, path: str | os.PathLike) -> None:
    """Write atomically (``_io.write_text_atomic``); a symbolic link is written through."""
    write_text_atomic(path, dumps(tokenizer))


def read_json(path: str | os.PathLike) -> Any:
    """The parsed JSON of an artifact file; ``ArtifactError`` naming the file when it is not."""
    from ._io import parse_json, read_tokenizer_text

    path = Path(path)
    return parse_json(read_tokenizer_text(path, ArtifactError), str(path), ArtifactError)


def from_dict(data: Any, where: str = "tokenizer") -> ArtifactContent:
    """Check artifact content field by field and against its fingerprint; build its model."""
    if not isinstance(data, dict) or data.get("type") not in TYPES.values():
        kind = data.get("type") if isinstance(data, dict) else type(data).__name__
        raise ArtifactError(
            f"{where}: not a bytepair tokenizer (type {kind!r}; expected 'character_bpe' or "
            "'byte_bpe'); for tiktoken or HF files use bytepair.load(..., path=...)"
        )
    version = data.get("version", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise ArtifactError(
            f"{where}: artifact version {version!r} is not supported (this bytepair reads version {FORMAT_VERSION})"
        )
    unknown = sorted(set(data) - KNOWN_FIELDS)
    if unknown:
        raise ArtifactError(f"{where}: unknown field(s) {unknown!r}; was the file written by a newer bytepair?")
    mode = "byte" if data["type"] == "byte_bpe" else "char"
    if mode != data.get("mode", "char" if mode == "char" else "byte"):
        raise ArtifactError(f"{where}: type {data['type']!r} and mode {data.get('mode')!r} disagree")
    for field in ("merges", "fingerprint") + (("base_tokens",) if mode == "char" else ()):
        if field not in data:
            raise ArtifactError(f"{where}: missing field {field!r} (truncated or edited file?)")
    for field, (kind, what) in FIELD_TYPES.items():
        value = data.get(field)
        required = field == "base_tokens" and mode == "char"
        if (value is not None or required) and (
            not isinstance(value, kind) or (kind is int and isinstance(value, bool))
        ):
            raise ArtifactError(f"{where}: field {field!r} must be {what}, not {value!r}; the file was edited")
    merges = _read_merges(data["merges"], mode, where)
    pattern = data.get("pattern")
    if pattern is not None:
        if (
            not isinstance(pattern, dict)
            or not isinstance(pattern.get("regex"), str)
            or not isinstance(pattern.get("name"), (str, type(None)))
        ):
            raise ArtifactError(f"{where}: field 'pattern' must be {{'name': ..., 'regex': ...}}, not {pattern!r}")
    try:
        model = MergeModel(
            mode=mode,
            merges=merges,
            base_tokens=data.get("base_tokens") if mode == "char" else None,
            byte_fallback=data.get("byte_fallback", False),
        )
    except (ValueError, TypeError) as error:  # a field of the wrong type ("base_tokens": 5)
        raise ArtifactError(f"{where}: {error}") from None
    expected = fingerprint_of(data)
    if data["fingerprint"] != expected:
        raise ArtifactError(
            f"{where}: fingerprint mismatch: the file says {data['fingerprint']!r} but its content "
            f"hashes to {expected!r}; the file was edited or corrupted"
        )
    return ArtifactContent(
        model=model,
        pattern=_pattern_argument(pattern),
        normalization=data.get("normalization"),
        special_tokens=data.get("special_tokens"),
        fingerprint=expected,
        vocab_size=data.get("vocab_size"),
    )


def _pattern_argument(pattern):
    """The stored pattern as ``Tokenizer`` takes it: the name if it still means this regex."""
    if pattern is None:
        return None
    name = pattern.get("name")
    if name is not None:
        try:
            if resolve_pattern(name)[1] == pattern["regex"]:
                return name
        except ValueError:
            pass
    return pattern["regex"]


def _read_merges(merges, mode, where):
    if not isinstance(merges, list):
        raise ArtifactError(f"{where}: field 'merges' must be a list of pairs")
    result = []
    for index, pair in enumerate(merges):
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) and p for p in pair)):
            raise ArtifactError(f"{where}: merge {index} is {pair!r}, not a pair of non-empty strings")
        if mode == "byte":
            try:
                pair = [readable_to_bytes(p) for p in pair]
            except ValueError as error:
                raise ArtifactError(
                    f"{where}: merge {index}: {error}; the file was edited or is not a byte_bpe artifact"
                ) from None
        result.append(tuple(pair))
    return result
