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
  written in GPT-2's byte-to-unicode form (``"Ġ"`` is the space byte), so any bytes are held
  losslessly and the file stays readable.

``save(load(f))`` reproduces ``f`` byte for byte. Loading checks the fingerprint and every field;
a truncated, edited or foreign file raises ``ArtifactError`` saying which.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from .errors import ArtifactError

FORMAT_VERSION = 1
TYPES = {"char": "character_bpe", "byte": "byte_bpe"}


def bytes_to_unicode():
    """GPT-2's reversible map from the 256 bytes to printable characters.

    Example:
        >>> bytes_to_unicode()[ord(" ")]
        'Ġ'
    """
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    mapping = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + shifted)
            shifted += 1
    return mapping


BYTE_TO_CHAR = bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def bytes_to_readable(value):
    """``b" hi"`` -> ``"Ġhi"``."""
    return "".join(BYTE_TO_CHAR[b] for b in value)


def readable_to_bytes(text, where):
    """``"Ġhi"`` -> ``b" hi"``; a character outside the map is a corrupt file."""
    try:
        return bytes(CHAR_TO_BYTE[c] for c in text)
    except KeyError as error:
        raise ArtifactError(f"{where}: {text!r} is not a byte token in GPT-2's byte-to-unicode form") from error


def to_dict(tokenizer):
    """The artifact's content, fields in their fixed order."""
    if tokenizer.rule != "replay":
        raise ArtifactError(
            "this tokenizer was loaded from another library's vocabulary; save it back with "
            "bytepair.formats (to_tiktoken / to_huggingface) instead"
        )
    data = {"type": TYPES[tokenizer.mode]}
    behaviour = _behaviour(tokenizer)
    if behaviour:
        data["version"] = FORMAT_VERSION
    if tokenizer.mode == "char":
        data["base_tokens"] = list(tokenizer.base_tokens)
    data["merges"] = _merges_for_json(tokenizer)
    data.update(behaviour)
    data["vocab_size"] = tokenizer.vocab_size
    data["fingerprint"] = _fingerprint_of(data)
    return data


def _behaviour(tokenizer):
    """The optional fields, only when they differ from seed 000's plain tokenizer."""
    fields = {}
    if tokenizer.mode == "byte":
        fields["mode"] = "byte"
    if tokenizer.pattern is not None:
        fields["pattern"] = {"name": tokenizer.pattern_name, "regex": tokenizer.pattern}
    if tokenizer.normalization is not None:
        fields["normalization"] = tokenizer.normalization
    if tokenizer.special_tokens:
        fields["special_tokens"] = dict(tokenizer.special_tokens)
    if tokenizer.byte_fallback:
        fields["byte_fallback"] = True
    return fields


def _merges_for_json(tokenizer):
    if tokenizer.mode == "byte":
        return [[bytes_to_readable(left), bytes_to_readable(right)] for left, right in tokenizer.merges]
    return [[left, right] for left, right in tokenizer.merges]


def _fingerprint_of(data):
    """SHA-256 over the fields that define behaviour, compact JSON (seed 000's formula)."""
    payload = {key: data[key] for key in ("base_tokens", "merges") if key in data}
    for key in ("mode", "pattern", "normalization", "special_tokens", "byte_fallback"):
        if key in data:
            payload[key] = data[key]
    encoded = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(encoded).hexdigest()


def fingerprint(tokenizer):
    """The tokenizer's fingerprint (foreign vocabularies: SHA-256 of their tokens and rules)."""
    if tokenizer.rule != "replay":
        return _foreign_fingerprint(tokenizer)
    return to_dict(tokenizer)["fingerprint"]


def _foreign_fingerprint(tokenizer):
    digest = hashlib.sha256()
    digest.update(json.dumps([tokenizer.rule, tokenizer.pattern, sorted(tokenizer.special_tokens.items())]).encode())
    for value in tokenizer._token_bytes:
        digest.update(b"\x00" if value is None else len(value).to_bytes(2, "little") + value)
    token_bytes, pair_table, whole_piece = tokenizer._foreign
    digest.update(repr(whole_piece).encode())
    for pair in sorted(pair_table):
        digest.update(repr((pair, pair_table[pair])).encode())
    return digest.hexdigest()


def dumps(tokenizer):
    """The artifact as text: indented, non-ASCII kept (what seed 000 writes)."""
    return json.dumps(to_dict(tokenizer), ensure_ascii=False, indent=2)


def save(tokenizer, path):
    """Write atomically: a temporary file in the same folder, then ``os.replace``."""
    write_text_atomic(path, dumps(tokenizer))


def write_text_atomic(path, text):
    """Write ``text`` to ``path`` via a temporary file and a rename, so no half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def load(path):
    """Read and verify an artifact; raises ``ArtifactError`` naming what is wrong."""
    from .reading import parse_json, read_tokenizer_text

    path = Path(path)
    data = parse_json(read_tokenizer_text(path, ArtifactError), str(path), ArtifactError)
    return from_dict(data, where=str(path))


def from_dict(data, where="tokenizer"):
    """Build a ``Tokenizer`` from artifact content, checking every field and the fingerprint."""
    from .tokenizer import Tokenizer

    if not isinstance(data, dict) or data.get("type") not in TYPES.values():
        kind = data.get("type") if isinstance(data, dict) else type(data).__name__
        raise ArtifactError(
            f"{where}: not a bytepair tokenizer (type {kind!r}; expected 'character_bpe' or "
            "'byte_bpe'); for tiktoken or HF files use bytepair.load(..., path=...)"
        )
    version = data.get("version", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise ArtifactError(f"{where}: artifact version {version!r} is not supported (this bytepair reads version {FORMAT_VERSION})")
    known = {"type", "version", "base_tokens", "merges", "mode", "pattern", "normalization",
             "special_tokens", "byte_fallback", "vocab_size", "fingerprint"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ArtifactError(f"{where}: unknown field(s) {unknown!r}; was the file written by a newer bytepair?")
    mode = "byte" if data["type"] == "byte_bpe" else "char"
    if mode != data.get("mode", "char" if mode == "char" else "byte"):
        raise ArtifactError(f"{where}: type {data['type']!r} and mode {data.get('mode')!r} disagree")
    for field in ("merges", "fingerprint") + (("base_tokens",) if mode == "char" else ()):
        if field not in data:
            raise ArtifactError(f"{where}: missing field {field!r} (truncated or edited file?)")
    merges = _read_merges(data["merges"], mode, where)
    pattern = data.get("pattern")
    if pattern is not None:
        if not isinstance(pattern, dict) or not isinstance(pattern.get("regex"), str):
            raise ArtifactError(f"{where}: field 'pattern' must be {{'name': ..., 'regex': ...}}, not {pattern!r}")
    try:
        tokenizer = Tokenizer(
            mode=mode,
            merges=merges,
            base_tokens=data.get("base_tokens") if mode == "char" else None,
            pattern=_pattern_argument(pattern),
            normalization=data.get("normalization"),
            special_tokens=data.get("special_tokens"),
            byte_fallback=data.get("byte_fallback", False),
        )
    except (ValueError, TypeError) as error:  # a field of the wrong type ("base_tokens": 5)
        raise ArtifactError(f"{where}: {error}") from None
    expected = _fingerprint_of(data)
    if data["fingerprint"] != expected:
        raise ArtifactError(
            f"{where}: fingerprint mismatch: the file says {data['fingerprint']!r} but its content "
            f"hashes to {expected!r}; the file was edited or corrupted"
        )
    if tokenizer.fingerprint != expected:
        raise ArtifactError(f"{where}: the file's content does not rebuild the tokenizer it describes")
    if "vocab_size" in data and data["vocab_size"] != tokenizer.vocab_size:
        raise ArtifactError(
            f"{where}: vocab_size says {data['vocab_size']} but the merges and tokens give "
            f"{tokenizer.vocab_size}; the file was edited"
        )
    return tokenizer


def _pattern_argument(pattern):
    """The stored pattern as ``Tokenizer`` takes it: the name if it still means this regex."""
    if pattern is None:
        return None
    from .patterns import resolve_pattern

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
            pair = [readable_to_bytes(p, f"{where}: merge {index}") for p in pair]
        result.append(tuple(pair))
    return result
