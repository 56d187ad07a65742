"""The pipeline end to end on small generated corpora: the fast tier's cover for the data tier.

train -> save -> load -> encode/decode in both modes; ``prepare`` and ``sweep`` on a generated
WikiText-2-like folder, from Python and from the command line; export to tiktoken and Hugging
Face files and back. The same checks on the real corpora are in test_prepare.py,
test_sweep.py, test_roundtrip.py and tests/peers/ (tiers ``data`` and ``peers``).

Oracles: the split texts themselves (every stream decodes to exactly its text), the sorted set of
characters (the base alphabet and the character ids), ``bytepair.reference`` (merge replay over
the ``regex`` module's pieces), and ``bytepair.train`` on the training prefix alone.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import bytepair
from bytepair import patterns, reference
from bytepair.cli import main
from bytepair.datasets import find_split_files
from bytepair.datasets.prepare import prepare
from bytepair.formats import load_huggingface, load_tiktoken, to_huggingface, to_tiktoken
from bytepair.tokenizer import Tokenizer
from bytepair.train import train
from generated import write_wikitext_folder

SPLITS = ("train", "val", "test")
FILES = {"train": "train.txt", "val": "valid.txt", "test": "test.txt"}
MAX_CHARS = 20_000
VOCAB = 300
SPECIALS = ["<|endoftext|>"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_wikitext_folder(tmp_path_factory.mktemp("wikitext-like"))


@pytest.fixture(scope="module")
def texts(folder):
    return {name: (folder / FILES[name]).read_text(encoding="utf-8") for name in SPLITS}


@pytest.fixture(scope="module")
def byte_tok(texts):
    return bytepair.train(texts["train"], mode="byte", vocab_size=400, pattern="cl100k", special_tokens=SPECIALS)


# -- train, save, load, encode, decode ---------------------------------------------------------


@pytest.mark.parametrize("mode", ["char", "byte"])
def test_train_save_load_encode_decode(texts, tmp_path, mode):
    options = {"base_text": "".join(texts.values())} if mode == "char" else {"pattern": "gpt2"}
    size = 200 if mode == "char" else 400
    tok = bytepair.train(texts["train"], mode=mode, vocab_size=size, special_tokens=SPECIALS, **options)
    path = tmp_path / "tok.json"
    tok.save(path)
    loaded = Tokenizer.load(path)
    assert loaded.fingerprint == tok.fingerprint and loaded.vocab_size == tok.vocab_size == size + 1
    for name in ("val", "test"):
        ids = loaded.encode(texts[name])
        assert ids == tok.encode(texts[name])
        assert len(ids) < len(texts[name])  # merges were learned and used
        assert loaded.decode(ids) == texts[name]
    marked = "<|endoftext|>" + texts["val"][:200]
    assert loaded.encode(marked, allowed_special="all")[0] == loaded.special_tokens["<|endoftext|>"]
    loaded.save(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()


def test_byte_ids_equal_the_reference_replay_over_the_patterns_pieces(byte_tok, texts):
    values = reference.vocabulary(reference.BYTE_TOKENS, byte_tok.merges)
    ids_of = {value: token_id for token_id, value in enumerate(values)}
    text = texts["val"][:5_000]
    expected = []
    for piece in patterns.split(text, "cl100k"):
        symbols = [bytes([b]) for b in piece.encode("utf-8")]
        expected.extend(ids_of[value] for value in reference.encode_piece(symbols, byte_tok.merges))
    assert byte_tok.encode_ordinary(text) == expected


def test_encode_batch_equals_encode(byte_tok, texts):
    lines = texts["test"].splitlines(keepends=True)
    assert byte_tok.encode_batch(lines) == [byte_tok.encode_ordinary(line) for line in lines]


# -- prepare -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def prepared(folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("prepared")
    result = prepare(
        out,
        files=find_split_files(folder),
        vocab_size=VOCAB,
        max_chars=MAX_CHARS,
        char_baseline=True,
        log=None,
        progress=False,
        pt_files=False,
    )
    return out, result


def read_stream(folder, name):
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    ids = np.memmap(folder / meta["splits"][name]["file"], dtype=meta["dtype"], mode="r")
    return meta, ids


def test_prepare_finds_the_wikitext_names(folder):
    assert {name: path.name for name, path in find_split_files(folder).items()} == FILES


def test_prepared_streams_decode_to_exactly_their_splits(prepared, texts):
    out, _ = prepared
    for kind in ("bpe", "char"):
        for name in SPLITS:
            meta, ids = read_stream(out / f"encoded_{kind}", name)
            tokenizer = Tokenizer.load(out / f"encoded_{kind}" / meta["tokenizer"])
            assert tokenizer.fingerprint == meta["fingerprint"]
            assert tokenizer.decode(ids) == texts[name], (kind, name)
            assert meta["splits"][name]["tokens"] == len(ids)
            assert meta["splits"][name]["characters"] == len(texts[name])


def test_prepared_char_ids_are_indices_of_the_sorted_alphabet(prepared, texts):
    out, result = prepared
    alphabet = sorted(set("".join(texts.values())))
    assert list(result.tokenizer.base_tokens) == alphabet
    index = {character: i for i, character in enumerate(alphabet)}
    for name in SPLITS:
        _, ids = read_stream(out / "encoded_char", name)
        assert ids.tolist() == [index[c] for c in texts[name]]


def test_prepared_merges_come_from_the_training_prefix_only(prepared, texts):
    _, result = prepared
    alphabet = sorted(set("".join(texts.values())))
    alone = train(texts["train"][:MAX_CHARS], vocab_size=VOCAB, base_tokens=alphabet, progress=False)
    assert result.tokenizer.fingerprint == alone.fingerprint
    assert result.train_characters == MAX_CHARS


def test_the_prepare_command_on_the_folder(folder, tmp_path, capsys):
    arguments = [
        "prepare",
        str(folder),
        "-o",
        str(tmp_path),
        "--vocab-size",
        "250",
        "--max-chars",
        "10000",
        "--quiet",
        "--no-pt",
    ]
    assert main(arguments) == 0
    output = capsys.readouterr().out
    assert "compression factor:" in output
    meta = json.loads((tmp_path / "encoded_bpe" / "meta.json").read_text(encoding="utf-8"))
    assert meta["vocab_size"] == 250 and meta["train_characters"] == 10_000


# -- sweep -------------------------------------------------------------------------------------


def test_the_sweep_command_on_the_folder(folder, tmp_path, capsys):
    arguments = [
        "sweep",
        str(folder),
        "--vocab-sizes",
        "250",
        "200",
        "--max-chars",
        "10000",
        "--context",
        "50",
        "--dim",
        "8",
        "--words",
        "Zürich",
        "-o",
        str(tmp_path),
        "--json",
        "--no-plot",
    ]
    assert main(arguments) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [row["requested"] for row in rows] == [None, 200, 250]
    assert [row["embedding_parameters"] for row in rows] == [row["vocab_size"] * 8 for row in rows]
    tokens = [row["train_tokens"] for row in rows]
    assert tokens == sorted(tokens, reverse=True) and tokens[-1] < tokens[0]
    assert all("".join(row["words"]["Zürich"]) == "Zürich" for row in rows)


# -- export and load back ------------------------------------------------------------------------


def test_tiktoken_and_huggingface_files_load_back_with_the_same_ids(byte_tok, texts, tmp_path):
    info = to_tiktoken(byte_tok, tmp_path / "mine.tiktoken")
    to_huggingface(byte_tok, tmp_path / "tokenizer.json")
    from_tiktoken = load_tiktoken(
        tmp_path / "mine.tiktoken", pattern=info["pat_str"], special_tokens=info["special_tokens"]
    )
    from_hf = load_huggingface(tmp_path / "tokenizer.json")
    text = "<|endoftext|>" + texts["val"]
    ours = byte_tok.encode(text, allowed_special="all")
    assert from_tiktoken.encode(text, allowed_special="all") == ours
    assert from_hf.encode(text, allowed_special="all") == ours
    assert from_hf.decode(ours) == text
