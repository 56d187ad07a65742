"""The CLI takes any tokenizer ``bytepair.load`` takes, ids from arguments or standard input,
writes ids as text, JSON or arrays, and says its version."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import bytepair as bp
from datafiles import data_file, package_env

TEXT = "the cat sat on the mat. the hat is flat. 你好 🌍\n" * 30


def bytepair(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "bytepair", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        env=package_env(),
    )


@pytest.fixture(scope="module")
def tok_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dropin_cli")
    tok = bp.train(TEXT, mode="byte", vocab_size=280, pattern="gpt2", special_tokens=["<|a|>", "<|b|>"])
    path = folder / "tokenizer.bytepair.json"
    tok.save(path)
    return tok, path


def test_version():
    result = bytepair("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"bytepair {bp.__version__}"


def test_train_writes_bytepair_named_artifact_by_default(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bytepair",
            "train",
            str(corpus),
            "--vocab-size",
            "40",
            "--quiet",
            "--special",
            "<|a|>",
            "--special",
            "<|b|>",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=package_env(),
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "tokenizer.bytepair.json").is_file() and not (tmp_path / "tokenizer.json").exists()
    assert set(bp.load(tmp_path / "tokenizer.bytepair.json").special_tokens) == {"<|a|>", "<|b|>"}


def test_decode_takes_ids_as_arguments_flag_or_stdin(tok_file):
    tok, path = tok_file
    ids = tok.encode("the cat 🌍")
    expected = "the cat 🌍"
    assert bytepair("decode", "-t", path, *ids).stdout == expected
    assert bytepair("decode", "-t", path, "--ids", " ".join(map(str, ids))).stdout == expected
    assert bytepair("decode", "-t", path, stdin=json.dumps(ids)).stdout == expected


def test_encode_special_is_repeatable_and_formats(tok_file, tmp_path):
    tok, path = tok_file
    text = "<|a|>the cat<|b|>"
    result = bytepair("encode", "-t", path, "--special", "<|a|>", "--special", "<|b|>", "--format", "json", stdin=text)
    assert json.loads(result.stdout) == tok.encode(text, allowed_special="all")
    refused = bytepair("encode", "-t", path, "--special", "<|a|>", stdin=text)
    assert refused.returncode == 2 and "<|b|>" in refused.stderr
    for suffix in ("npy", "bin"):
        out = tmp_path / f"ids.{suffix}"
        assert bytepair("encode", "-t", path, "-o", out, stdin="the cat").returncode == 0
        array = np.load(out) if suffix == "npy" else np.fromfile(out, dtype=tok.array_dtype)
        assert array.tolist() == tok.encode("the cat") and array.dtype == np.dtype(tok.array_dtype)


def test_pieces_show_partial_characters_as_escaped_bytes(tok_file):
    tok, path = tok_file
    result = bytepair("encode", "-t", path, "--pieces", stdin="🌍")
    assert "\ufffd" not in result.stdout
    assert "\\x" in result.stdout  # the emoji's bytes, split across tokens, shown escaped
    assert b"".join(tok.token_bytes(i) for i in tok.encode("🌍")) == "🌍".encode()


@pytest.mark.data
def test_commands_take_published_names_tiktoken_files_and_hf_folders():
    vocab = data_file("vocab")
    for spec in (("-t", "cl100k_base", "--vocab-dir", vocab), ("-t", vocab / "cl100k_base.tiktoken")):
        assert bytepair("encode", *spec, stdin="hello world").stdout.split() == ["15339", "1917"]
    assert bytepair("decode", "-t", vocab / "hf" / "llama3", "15339", "1917").stdout == "hello world"
    assert (
        bytepair("decode", "-t", vocab / "hf" / "llama3" / "tokenizer.json", "--ids", "15339 1917").stdout
        == "hello world"
    )
    inspect = bytepair("inspect", vocab / "hf" / "llama3")
    assert inspect.returncode == 0 and "128256" in inspect.stdout and "eos_token" in inspect.stdout
