"""The JSON artifact: seed 000's format, the fingerprint, atomic writes, corrupt files."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

import bytepair
from bytepair import reference
from bytepair.errors import ArtifactError

TEXT = "the cat sat on the mat; the hat is flat. " * 20


def seed_file(tmp_path, base_tokens, merges):
    """A tokenizer file as seed 000's script writes it (the contract in DESIGN.md)."""
    payload = json.dumps({"base_tokens": base_tokens, "merges": merges}, ensure_ascii=False, separators=(",", ":"))
    vocab = reference.vocabulary(base_tokens, [tuple(m) for m in merges])
    data = {
        "type": "character_bpe",
        "base_tokens": base_tokens,
        "merges": merges,
        "vocab_size": len(vocab),
        "fingerprint": hashlib.sha256(payload.encode("utf-8")).hexdigest(),
    }
    path = tmp_path / "bpe_tokenizer.json"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def test_a_seed_file_loads_verifies_and_encodes_like_the_seed(tmp_path):
    base, merges = reference.train_chars(TEXT, vocab_size=40)
    path = seed_file(tmp_path, base, [list(m) for m in merges])
    tok = bytepair.Tokenizer.load(path)
    values = reference.vocabulary(base, merges)
    expected = [values.index(v) for v in reference.encode_piece(list(TEXT), merges)]
    assert tok.encode(TEXT) == expected
    assert tok.fingerprint == json.loads(path.read_text())["fingerprint"]


def test_save_of_a_loaded_seed_file_reproduces_it_byte_for_byte(tmp_path):
    base, merges = reference.train_chars(TEXT + "é ñ 你", vocab_size=45)
    path = seed_file(tmp_path, base, [list(m) for m in merges])
    again = tmp_path / "again.json"
    bytepair.Tokenizer.load(path).save(again)
    assert again.read_bytes() == path.read_bytes()


@pytest.mark.parametrize(
    "options",
    [
        dict(mode="char"),
        dict(mode="byte"),
        dict(mode="byte", pattern="cl100k", special_tokens=["<|endoftext|>"]),
        dict(mode="char", pattern="gpt2", normalization="NFKC", byte_fallback=True),
        dict(mode="byte", pattern=r"\w+|\s+|[^\w\s]+"),
    ],
)
def test_save_load_save_is_byte_identical_and_keeps_behaviour(tmp_path, options):
    vocab_size = 300 if options["mode"] == "byte" else 60
    tok = bytepair.train(TEXT + "Ünïcödé ﬁ", vocab_size=vocab_size, **options)
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    tok.save(first)
    loaded = bytepair.Tokenizer.load(first)
    loaded.save(second)
    assert first.read_bytes() == second.read_bytes()
    assert loaded.fingerprint == tok.fingerprint
    sample = "the flat cat; Ünï"
    assert loaded.encode(sample) == tok.encode(sample)


def test_behaviour_fields_enter_the_fingerprint():
    plain = bytepair.train(TEXT, mode="byte", vocab_size=280)
    fingerprints = {plain.fingerprint}
    for options in (dict(pattern="gpt2"), dict(normalization="NFC"), dict(special_tokens=["<|x|>"])):
        fingerprints.add(bytepair.train(TEXT, mode="byte", vocab_size=280, **options).fingerprint)
    assert len(fingerprints) == 4


def test_byte_tokens_are_written_readably(tmp_path):
    tok = bytepair.train(TEXT, mode="byte", vocab_size=270)
    tok.save(tmp_path / "t.json")
    data = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert data["type"] == "byte_bpe" and data["mode"] == "byte"
    assert any("Ġ" in left + right for left, right in data["merges"])  # the space byte


def test_truncated_file_says_truncated(tmp_path):
    path = tmp_path / "t.json"
    bytepair.train(TEXT, mode="char", vocab_size=40).save(path)
    path.write_text(path.read_text(encoding="utf-8")[:-40], encoding="utf-8")
    with pytest.raises(ArtifactError, match="truncated"):
        bytepair.Tokenizer.load(path)


def test_edited_merge_is_a_fingerprint_mismatch(tmp_path):
    path = tmp_path / "t.json"
    bytepair.train(TEXT, mode="char", vocab_size=40).save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["merges"][0], data["merges"][1] = data["merges"][1], data["merges"][0]
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    with pytest.raises(ArtifactError, match="fingerprint mismatch"):
        bytepair.Tokenizer.load(path)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("base_tokens", 5, "field 'base_tokens' must be a list of single characters, not 5"),
        ("base_tokens", None, "field 'base_tokens' must be a list of single characters, not None"),
        ("byte_fallback", "yes", "field 'byte_fallback' must be true or false, not 'yes'"),
        ("vocab_size", "30", "field 'vocab_size' must be an integer, not '30'"),
        ("vocab_size", True, "field 'vocab_size' must be an integer, not True"),
        ("special_tokens", ["<x>"], "field 'special_tokens' must be an object of token strings to ids"),
        ("normalization", 5, "field 'normalization' must be 'NFC', 'NFKC' or null, not 5"),
        ("pattern", {"name": 5, "regex": "\\w+"}, "field 'pattern' must be"),
    ],
)
def test_a_field_of_the_wrong_type_is_named_even_with_a_matching_fingerprint(tmp_path, field, value, message):
    # an edit whose fingerprint was recomputed: the field, not "does not rebuild", is the error
    from bytepair.artifact import fingerprint_of, to_dict

    data = to_dict(bytepair.train(TEXT, mode="char", vocab_size=30))
    data[field] = value
    data["fingerprint"] = fingerprint_of(data)
    (tmp_path / "t.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ArtifactError, match=re.escape(message)):
        bytepair.Tokenizer.load(tmp_path / "t.json")


def test_foreign_json_is_named_as_such(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"model": {"type": "BPE"}}), encoding="utf-8")
    with pytest.raises(ArtifactError, match="not a bytepair tokenizer"):
        bytepair.Tokenizer.load(path)


def test_missing_file_and_binary_file(tmp_path):
    with pytest.raises(ArtifactError, match="no such tokenizer file"):
        bytepair.Tokenizer.load(tmp_path / "absent.json")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ArtifactError, match="not UTF-8"):
        bytepair.Tokenizer.load(tmp_path / "bin.json")


def test_save_leaves_no_temporary_file_and_replaces_atomically(tmp_path):
    path = tmp_path / "t.json"
    bytepair.train(TEXT, mode="char", vocab_size=30).save(path)
    second = bytepair.train(TEXT, mode="char", vocab_size=35)
    second.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]
    assert bytepair.Tokenizer.load(path).fingerprint == second.fingerprint
