"""``bytepair encode-corpus`` / ``encode_corpus``: documents in, shards out, exactly.

Small generated corpora (a tokenizer trained here, or the published vocabularies when the data
folder is present) so that most tests run in seconds; the real-data tests are marked slow.
"""

from __future__ import annotations

import gzip
import io
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import regex

from bytepair import train
from bytepair.cli import main
from bytepair.datasets import split_articles
from bytepair.datasets.corpus import SplitChooser, encode_corpus
from bytepair.datasets.shards import open_shards
from bytepair.errors import DatasetError, DocumentError, PreparedDataError, UsageError
from datafiles import data_dir, package_env

DATA = data_dir()
VOCAB = DATA / "vocab"
needs_vocab = pytest.mark.skipif(
    not (VOCAB / "gpt2.tiktoken").is_file(), reason=f"vocabulary files not found in {VOCAB} (set BYTEPAIR_DATA)"
)

DOCUMENTS = [
    "The first document.\nIt has two lines.",
    "Second: numbers 12345 and 3.14, CJK 你好世界, emoji 🌍.",
    "  leading spaces\r\n\tand tabs  ",
    "def foo(x):\n    return x + 1\n",
    "Ünïcödé façade naïve café",
    "short",
    "a" * 500,
    "Special token string inside: <|endoftext|> stays text.",
] * 5


@pytest.fixture(scope="module")
def tokenizer():
    text = "\n".join(DOCUMENTS) * 3
    return train(text, mode="byte", vocab_size=400, pattern="gpt2", special_tokens=["<|endoftext|>"], progress=False)


def write_jsonl(path, documents, field="text"):
    with open(path, "w", encoding="utf-8") as file:
        file.writelines(json.dumps({field: doc, "id": 1}) + "\n" for doc in documents)
    return path


def decode_documents(tokenizer, ids, eot_id):
    """The documents of a stream: ids cut after each eot id, each piece decoded."""
    ids = np.asarray(ids).tolist()
    docs, current = [], []
    for token in ids:
        if token == eot_id:
            docs.append(tokenizer.decode(current))
            current = []
        else:
            current.append(token)
    assert not current, "the stream does not end with the eot id"
    return docs


def stream(out, split="train", tokenizer=None):
    arrays = open_shards(out, split, tokenizer=tokenizer)
    return np.concatenate(arrays) if arrays else np.zeros(0)


def quiet(**options):
    return dict(progress=False, log=None, **options)


# -- round trip, order, formats -------------------------------------------------------------------


def test_shards_decode_back_to_the_documents_joined_by_eot(tokenizer, tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", DOCUMENTS)
    meta = encode_corpus([corpus], tokenizer, tmp_path / "out", **quiet())
    eot = tokenizer.special_tokens["<|endoftext|>"]
    assert meta["eot"] == "<|endoftext|>" and meta["eot_id"] == eot
    ids = stream(tmp_path / "out")
    assert decode_documents(tokenizer, ids, eot) == DOCUMENTS
    # each document's ids are exactly what encode gives it (special strings as text)
    expected = [i for doc in DOCUMENTS for i in [*tokenizer.encode_ordinary(doc), eot]]
    assert ids.tolist() == expected
    train_meta = meta["splits"]["train"]
    assert train_meta["documents"] == len(DOCUMENTS) and train_meta["tokens"] == len(expected)
    assert train_meta["characters"] == sum(map(len, DOCUMENTS))
    assert train_meta["bytes"] == sum(len(d.encode()) for d in DOCUMENTS)
    assert meta["documents"]["special_strings_as_text"] == {"<|endoftext|>": 5}
    assert meta["dtype"] == "uint16" and (tmp_path / "out" / "train.bin").stat().st_size == 2 * len(expected)
    assert json.loads((tmp_path / "out" / "meta.json").read_text()) == meta


def test_allowed_special_strings_become_their_ids(tokenizer, tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", ["a<|endoftext|>b"])
    meta = encode_corpus([corpus], tokenizer, tmp_path / "out", allowed_special="all", **quiet())
    eot = tokenizer.special_tokens["<|endoftext|>"]
    ids = stream(tmp_path / "out").tolist()
    assert ids == tokenizer.encode("a<|endoftext|>b", allowed_special="all") + [eot]
    assert meta["documents"]["special_strings_as_special"] == {"<|endoftext|>": 1}


def test_a_saved_tokenizer_folder_is_a_tokenizer(tokenizer, tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", DOCUMENTS[:3])
    tokenizer.save_pretrained(tmp_path / "tok")
    meta = encode_corpus([corpus], str(tmp_path / "tok"), tmp_path / "out", **quiet())
    expected = [i for d in DOCUMENTS[:3] for i in tokenizer.encode(d, disallowed_special=()) + [meta["eot_id"]]]
    assert stream(tmp_path / "out").tolist() == expected
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="is a folder without a tokenizer.json"):
        encode_corpus([corpus], str(tmp_path / "empty"), tmp_path / "out2", **quiet())


def test_eot_none_and_unknown_eot(tokenizer, tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", ["one", "two"])
    encode_corpus([corpus], tokenizer, tmp_path / "out", eot="none", **quiet())
    assert stream(tmp_path / "out").tolist() == tokenizer.encode("one") + tokenizer.encode("two")
    with pytest.raises(UsageError, match="<\\|nope\\|>"):
        encode_corpus([corpus], tokenizer, tmp_path / "out2", eot="<|nope|>", **quiet())


def test_text_folder_recursive_gz_and_json_array(tokenizer, tmp_path):
    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    (folder / "b.txt").write_text(DOCUMENTS[0], encoding="utf-8")
    (folder / "sub" / "a.txt").write_text(DOCUMENTS[1], encoding="utf-8")
    with gzip.open(folder / "sub" / "c.jsonl.gz", "wt", encoding="utf-8") as file:
        file.write(json.dumps({"text": DOCUMENTS[2]}) + "\n\n" + json.dumps({"text": DOCUMENTS[3]}) + "\n")
    (folder / "d.json").write_text(json.dumps([{"text": DOCUMENTS[4]}, {"text": DOCUMENTS[5]}]), encoding="utf-8")
    (folder / ".hidden.txt").write_text("never read", encoding="utf-8")
    (folder / "notes.md").write_text("not a corpus file", encoding="utf-8")
    meta = encode_corpus([folder], tokenizer, tmp_path / "out", **quiet())
    eot = meta["eot_id"]
    # sorted by path: b.txt, d.json, sub/a.txt, sub/c.jsonl.gz
    expected = [DOCUMENTS[0], DOCUMENTS[4], DOCUMENTS[5], DOCUMENTS[1], DOCUMENTS[2], DOCUMENTS[3]]
    assert decode_documents(tokenizer, stream(tmp_path / "out"), eot) == expected
    assert [Path(i["path"]).name for i in meta["inputs"]] == ["b.txt", "d.json", "a.txt", "c.jsonl.gz"]
    assert all(i["size"] > 0 and i["mtime"] > 0 for i in meta["inputs"])


def test_split_on_cuts_text_files_into_documents(tokenizer, tmp_path, monkeypatch):
    from bytepair.datasets import documents

    monkeypatch.setattr(documents, "SPLIT_WINDOW", 64)  # many windows: cuts across window edges
    monkeypatch.setattr(documents, "SPLIT_MARGIN", 16)
    docs = [d.replace("\r\n", "\n").strip() for d in DOCUMENTS]
    path = tmp_path / "c.txt"
    path.write_text("\n\n".join(docs) + "\n\n\n", encoding="utf-8")
    meta = encode_corpus([path], tokenizer, tmp_path / "out", split_on=r"\n\s*\n", **quiet())
    assert decode_documents(tokenizer, stream(tmp_path / "out"), meta["eot_id"]) == docs


@pytest.mark.parametrize("separator", [r"(?m)^=|,", r"x|\bq", r";|(?<=;)-"])
def test_split_on_sees_the_text_before_each_window(tokenizer, tmp_path, monkeypatch, separator):
    # a window that starts right after a cut must not make ^ or \b match there, nor blind a
    # lookbehind: the documents are those of the regex module on the whole file
    from bytepair.datasets import documents

    monkeypatch.setattr(documents, "SPLIT_WINDOW", 64)
    monkeypatch.setattr(documents, "SPLIT_MARGIN", 16)
    text = "".join(f"foo,=bar\nxq;-z {n}\n" for n in range(300))
    path = tmp_path / "c.txt"
    path.write_text(text, encoding="utf-8")
    meta = encode_corpus([path], tokenizer, tmp_path / "out", split_on=separator, **quiet())
    expected = [d for d in regex.split(separator, text) if d]
    assert decode_documents(tokenizer, stream(tmp_path / "out"), meta["eot_id"]) == expected


def test_glob_and_stdin(tokenizer, tmp_path):
    for number in range(3):
        write_jsonl(tmp_path / f"part{number}.jsonl", [f"document {number}"])
    meta = encode_corpus([str(tmp_path / "part*.jsonl")], tokenizer, tmp_path / "out", **quiet())
    assert decode_documents(tokenizer, stream(tmp_path / "out"), meta["eot_id"]) == [f"document {n}" for n in range(3)]
    artifact = tmp_path / "tok.json"
    tokenizer.save(artifact)
    lines = "".join(json.dumps({"text": d}) + "\n" for d in DOCUMENTS[:3])
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bytepair",
            "encode-corpus",
            "-",
            "-t",
            str(artifact),
            "-o",
            str(tmp_path / "stdin-out"),
            "--quiet",
        ],
        input=lines.encode(),
        capture_output=True,
        check=False,
        env=_env(),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert decode_documents(tokenizer, stream(tmp_path / "stdin-out"), meta["eot_id"]) == DOCUMENTS[:3]


def test_a_file_named_twice_is_refused_before_any_work(tokenizer, tmp_path):
    # a folder and one of its files, a link and its target, or the same name twice: its
    # documents would be encoded twice (and a model trained on them would see them twice)
    data = tmp_path / "data"
    data.mkdir()
    first = write_jsonl(data / "a.jsonl", ["one"])
    write_jsonl(data / "b.jsonl", ["two"])
    (tmp_path / "link.jsonl").symlink_to(first)
    for inputs, named in (
        ([str(data), str(first)], f"by {str(data)!r} and by {str(first)!r}"),
        ([str(first), str(tmp_path / "link.jsonl")], "is the same file"),
        ([str(first), str(first)], f"twice by {str(first)!r}"),
        ([str(data / "*.jsonl"), str(data)], "encoded twice"),
    ):
        with pytest.raises(UsageError, match="named .*encoded twice; name each input once") as raised:
            encode_corpus(inputs, tokenizer, tmp_path / "out", **quiet())
        assert named in str(raised.value)
        assert not (tmp_path / "out").exists()
    artifact = tmp_path / "tok.json"
    tokenizer.save(artifact)
    result = subprocess.run(
        [sys.executable, "-m", "bytepair", "encode-corpus", "-", "-", "-t", str(artifact), "-o", str(tmp_path / "out")],
        input=b'{"text": "one"}\n',
        capture_output=True,
        check=False,
        env=_env(),
        timeout=120,
    )
    assert result.returncode == 2 and "input '-' is named twice by '-'" in result.stderr.decode()
    assert not (tmp_path / "out").exists()


def test_a_reading_option_no_input_uses_is_refused(tokenizer, tmp_path):
    # --split-on on JSON Lines, or --text-field on text files, was ignored without a word
    jsonl = write_jsonl(tmp_path / "a.jsonl", ["one\n\ntwo"])
    text = tmp_path / "b.txt"
    text.write_text("one\n\ntwo", encoding="utf-8")
    with pytest.raises(UsageError, match=r"--split-on cuts text files .*a\.jsonl.*leave --split-on out"):
        encode_corpus([jsonl], tokenizer, tmp_path / "out", split_on=r"\n\n", **quiet())
    with pytest.raises(UsageError, match=r"--text-field 'body' names a JSON field .*b\.txt"):
        encode_corpus([text], tokenizer, tmp_path / "out", text_field="body", **quiet())
    assert not (tmp_path / "out").exists()
    # where some input uses it, it applies to those
    meta = encode_corpus([jsonl, text], tokenizer, tmp_path / "out", split_on=r"\n\n", **quiet())
    assert meta["splits"]["train"]["documents"] == 3
    assert (
        main(["train", str(text), "--vocab-size", "300", "--text-field", "body", "-o", str(tmp_path / "t.json")]) == 2
    )


@pytest.mark.slow
def test_parquet_read_by_batches(tokenizer, tmp_path, monkeypatch):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from bytepair.datasets import documents

    monkeypatch.setattr(documents, "PARQUET_BATCH_ROWS", 3)
    table = pa.table({"content": DOCUMENTS, "n": list(range(len(DOCUMENTS)))})
    pq.write_table(table, tmp_path / "c.parquet", row_group_size=7)
    meta = encode_corpus([tmp_path / "c.parquet"], tokenizer, tmp_path / "out", text_field="content", **quiet())
    assert decode_documents(tokenizer, stream(tmp_path / "out"), meta["eot_id"]) == DOCUMENTS
    with pytest.raises(DocumentError, match="no column 'text'.*'content'"):
        encode_corpus([tmp_path / "c.parquet"], tokenizer, tmp_path / "out2", **quiet())
    with pytest.raises(DocumentError, match="column 'n' holds int64"):
        encode_corpus([tmp_path / "c.parquet"], tokenizer, tmp_path / "out3", text_field="n", **quiet())


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["dictionary", "string_view"])
def test_parquet_strings_stored_other_ways_are_strings(tokenizer, tmp_path, layout):
    # dictionary: what pandas writes for a Categorical column, each distinct string stored once
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    if layout == "string_view" and not hasattr(pa, "string_view"):
        pytest.skip("this pyarrow has no string_view type (pyarrow 16 added it)")
    column = (
        pa.array(DOCUMENTS).dictionary_encode() if layout == "dictionary" else pa.array(DOCUMENTS, pa.string_view())
    )
    pq.write_table(pa.table({"text": column}), tmp_path / "c.parquet")
    meta = encode_corpus([tmp_path / "c.parquet"], tokenizer, tmp_path / "out", **quiet())
    assert decode_documents(tokenizer, stream(tmp_path / "out"), meta["eot_id"]) == DOCUMENTS


@pytest.mark.slow
def test_a_parquet_file_with_a_corrupt_page_is_named(tokenizer, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"text": [f"document {n} " * 50 for n in range(5000)]}), tmp_path / "c.parquet")
    data = bytearray((tmp_path / "c.parquet").read_bytes())
    data[200:2000] = b"\xab" * 1800  # the first data page; the footer is intact
    (tmp_path / "c.parquet").write_bytes(bytes(data))
    with pytest.raises(DocumentError, match=r"c\.parquet: cannot read it from row 0 on \(.+\); is the file complete\?"):
        encode_corpus([tmp_path / "c.parquet"], tokenizer, tmp_path / "out", **quiet())


def test_a_full_disk_names_the_shard_being_written(tokenizer, tmp_path):
    import resource

    write_jsonl(tmp_path / "c.jsonl", DOCUMENTS * 200)
    tokenizer.save(tmp_path / "tok.json")
    command = ["encode-corpus", tmp_path / "c.jsonl", "-t", tmp_path / "tok.json", "-o", tmp_path / "out"]
    limit = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))  # noqa: E731 - a disk with 4 KB free
    result = subprocess.run(
        [sys.executable, "-m", "bytepair", *map(str, command)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
        preexec_fn=limit,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: [Errno 27] File too large: '{tmp_path / '.out.partial' / '.train.bin.tmp'}'"
    )


def test_parquet_without_pyarrow_says_what_to_install(tokenizer, tmp_path, monkeypatch):
    import importlib.util

    from bytepair.errors import MissingDependencyError

    (tmp_path / "c.parquet").write_bytes(b"PAR1")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a))
    with pytest.raises(MissingDependencyError, match=r"bytepair\[parquet\]"):
        encode_corpus([tmp_path / "c.parquet"], tokenizer, tmp_path / "out", **quiet())


# -- bad documents -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"text": "ok"', "line 2: not valid JSON"),
        (b'{"body": "x"}', "line 2: no field 'text'"),
        (b'{"text": 42}', "line 2: field 'text' is a JSON number 42, not a string"),
        (b'{"text": null}', "line 2: field 'text' is null;"),
        (b'{"text": ["a", "b"]}', 'line 2: field \'text\' is a JSON array \\["a", "b"\\], not a string'),
        (b'{"text": {"body": "x"}}', "line 2: field 'text' is a JSON object"),
        (b'{"text": true}', "line 2: field 'text' is a JSON boolean true"),
        (b'["text"]', "line 2: a JSON array, not an object"),
        (b'{"text": "\xff\xfe"}', "line 2: not UTF-8 \\(byte b'\\\\xff' at offset 31\\)"),
        (b'{"text": "\\ud800"}', "line 2: a lone surrogate"),
    ],
)
def test_a_bad_document_names_file_and_line_or_is_skipped(tokenizer, tmp_path, line, message):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"text": "good one"}\n' + line + b'\n{"text": "good two"}\n')
    with pytest.raises(DocumentError, match=f"c.jsonl, {message}"):
        encode_corpus([path], tokenizer, tmp_path / "out", **quiet())
    assert not (tmp_path / "out").exists()
    meta = encode_corpus([path], tokenizer, tmp_path / "out", skip_bad=True, **quiet())
    assert decode_documents(tokenizer, stream(tmp_path / "out"), meta["eot_id"]) == ["good one", "good two"]
    assert sum(meta["documents"]["bad_skipped"].values()) == 1


@pytest.fixture(scope="module")
def char_tokenizer():
    """Character level, no byte fallback: its alphabet is the ASCII of the text below."""
    text = "plain ascii words, and more plain words. " * 20
    return train(text, mode="char", vocab_size=60, special_tokens=["<|endoftext|>"], progress=False)


def test_a_document_with_characters_outside_a_char_alphabet_is_a_bad_document(char_tokenizer, tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", ["plain words", "naïve façade", "more words"])
    with pytest.raises(DocumentError, match=r"c.jsonl, line 2: characters missing .*'ç', 'ï'"):
        encode_corpus([path], char_tokenizer, tmp_path / "out", **quiet())
    meta = encode_corpus([path], char_tokenizer, tmp_path / "out", skip_bad=True, **quiet())
    assert decode_documents(char_tokenizer, stream(tmp_path / "out"), meta["eot_id"]) == ["plain words", "more words"]
    assert meta["documents"]["bad_skipped"] == {"missing characters": 1}
    # a text file cut by a separator: the document's first line; an ASCII character counts too
    (tmp_path / "c.txt").write_text("plain words\n\nmore\nwords #1\n\nwords\n", encoding="utf-8")
    with pytest.raises(DocumentError, match=r"c.txt, the document at line 3: characters missing .*'#', '1'"):
        encode_corpus([tmp_path / "c.txt"], char_tokenizer, tmp_path / "out2", split_on=r"\n\n", **quiet())


def test_allowed_special_strings_and_byte_fallback_need_no_alphabet(char_tokenizer, tmp_path):
    # '<', '|', 'x' and 't' are not in the alphabet, but an allowed special token is one id
    path = write_jsonl(tmp_path / "c.jsonl", ["plain words<|endoftext|>more words"])
    meta = encode_corpus([path], char_tokenizer, tmp_path / "out", allowed_special="all", **quiet())
    expected = char_tokenizer.encode("plain words<|endoftext|>more words", allowed_special="all")
    assert stream(tmp_path / "out").tolist() == expected + [meta["eot_id"]]
    with pytest.raises(DocumentError, match=r"line 1: characters missing .*'<', '>', 'f', 't', 'x', '\|'"):
        encode_corpus([path], char_tokenizer, tmp_path / "out2", **quiet())
    fallback = train("plain words " * 20, mode="char", vocab_size=40, byte_fallback=True, progress=False)
    write_jsonl(tmp_path / "f.jsonl", ["naïve"])
    meta = encode_corpus([tmp_path / "f.jsonl"], fallback, tmp_path / "out3", eot="none", **quiet())
    assert stream(tmp_path / "out3").tolist() == fallback.encode("naïve")


def test_invalid_utf8_text_file_and_bad_gzip(tokenizer, tmp_path):
    (tmp_path / "bad.txt").write_bytes(b"line one\nline \xff two\n")
    with pytest.raises(DocumentError, match=r"bad.txt, line 2: not UTF-8 \(byte b'\\xff' at offset 14\)"):
        encode_corpus([tmp_path / "bad.txt"], tokenizer, tmp_path / "out", **quiet())
    data = gzip.compress(b'{"text": "x"}\n' * 1000)
    (tmp_path / "cut.jsonl.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(DocumentError, match="cut.jsonl.gz: cannot decompress"):
        encode_corpus([tmp_path / "cut.jsonl.gz"], tokenizer, tmp_path / "out", **quiet())


def test_compressed_data_without_its_suffix_is_read_as_such(tokenizer, tmp_path):
    # a download saved as .jsonl but served gzip-compressed: the magic number says it
    (tmp_path / "c.jsonl").write_bytes(gzip.compress(b'{"text": "one"}\n{"text": "two"}\n'))
    meta = encode_corpus([tmp_path / "c.jsonl"], tokenizer, tmp_path / "out", **quiet())
    assert decode_documents(tokenizer, stream(tmp_path / "out"), meta["eot_id"]) == ["one", "two"]


def test_byte_order_marks(tokenizer, tmp_path, monkeypatch):
    bom = "\ufeff".encode()
    # UTF-8's before JSON (Windows tools write it): JSON all the same, the mark in no document
    (tmp_path / "array.json").write_bytes(bom + json.dumps([{"text": "one"}, {"text": "two"}]).encode())
    meta = encode_corpus([tmp_path / "array.json"], tokenizer, tmp_path / "out", **quiet())
    assert decode_documents(tokenizer, stream(tmp_path / "out"), meta["eot_id"]) == ["one", "two"]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(bom + b'{"text": "x"}\n'))))
    meta = encode_corpus(["-"], tokenizer, tmp_path / "out", **quiet())
    assert decode_documents(tokenizer, stream(tmp_path / "out"), meta["eot_id"]) == ["x"]
    # UTF-16 or UTF-32: one error for the file (not a bad document per line), naming the encoding
    for name, encoding in (("u.txt", "utf-16"), ("u.jsonl", "utf-16"), ("u32.txt", "utf-32")):
        (tmp_path / name).write_text('{"text": "x"}\n', encoding=encoding)
        label = encoding.upper()
        with pytest.raises(DocumentError, match=f"{name}: {label} text .*convert it, e.g. iconv -f {label} -t UTF-8"):
            encode_corpus([tmp_path / name], tokenizer, tmp_path / "bad", skip_bad=True, **quiet())
    # the same without a mark (as some Windows tools and exports write it): NULs between ASCII
    # characters are valid UTF-8, and were encoded as text
    for name, encoding in (("le.txt", "utf-16-le"), ("be.jsonl", "utf-16-be"), ("le32.txt", "utf-32-le")):
        (tmp_path / name).write_text('{"text": "a document"}\n' * 3, encoding=encoding)
        label = encoding.upper().replace("-LE", "LE").replace("-BE", "BE")
        with pytest.raises(DocumentError, match=f"{name}: looks like {label} text without a byte-order mark"):
            encode_corpus([tmp_path / name], tokenizer, tmp_path / "bad", skip_bad=True, **quiet())


def test_zstd_inputs_read_every_frame_and_a_cut_one_is_named(tokenizer, tmp_path):
    zstandard = pytest.importorskip("zstandard")
    docs = [f"document {n} of the zstd corpus" for n in range(3000)]
    data = "".join(json.dumps({"text": d}) + "\n" for d in docs).encode()
    half = data.index(b"\n", len(data) // 2) + 1
    # two frames, as pzstd or `cat a.zst b.zst` write them
    frames = [zstandard.ZstdCompressor().compress(part) for part in (data[:half], data[half:])]
    (tmp_path / "c.jsonl.zst").write_bytes(b"".join(frames))
    meta = encode_corpus([tmp_path / "c.jsonl.zst"], tokenizer, tmp_path / "out", **quiet())
    assert decode_documents(tokenizer, stream(tmp_path / "out"), meta["eot_id"]) == docs
    # a download stopped half-way: an error, not a shorter corpus
    whole = zstandard.ZstdCompressor().compress(data)
    (tmp_path / "cut.jsonl.zst").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(DocumentError, match=r"cut\.jsonl\.zst: cannot decompress it .*is the file complete\?"):
        encode_corpus([tmp_path / "cut.jsonl.zst"], tokenizer, tmp_path / "out2", **quiet())
    (tmp_path / "cut.txt.zst").write_bytes(frames[0] + frames[1][:-4])
    with pytest.raises(DocumentError, match=r"cut\.txt\.zst: cannot decompress it"):
        encode_corpus([tmp_path / "cut.txt.zst"], tokenizer, tmp_path / "out2", **quiet())


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux's /proc/self/mem")
def test_an_input_that_fails_to_read_is_named(tokenizer, tmp_path):
    # /proc/self/mem opens but fails to read at offset 0 (EIO): a disk error, or a file replaced
    # since the inputs were found, whose OSError names no file
    (tmp_path / "disk.txt").symlink_to("/proc/self/mem")
    message = r"disk\.txt: cannot read it \(Input/output error\); every input must stay readable"
    with pytest.raises(DocumentError, match=message):
        encode_corpus([tmp_path / "disk.txt"], tokenizer, tmp_path / "out", **quiet())


def test_invalid_utf8_in_a_split_text_file_is_one_bad_document_at_its_line(tokenizer, tmp_path, monkeypatch):
    import bytepair.datasets.documents as documents

    monkeypatch.setattr(documents, "SPLIT_WINDOW", 64)  # the bad byte far from the first window
    paragraphs = [f"paragraph {n} of the file" for n in range(40)]
    data = "\n\n".join(paragraphs).encode("utf-8").replace(b"paragraph 25", b"paragraph \xe925")
    (tmp_path / "bad.txt").write_bytes(data)
    options = dict(split_on=r"\n\n", eot="none", **quiet())
    with pytest.raises(DocumentError, match=r"bad.txt, line 51: not UTF-8 \(byte b'\\xe9'\)"):
        encode_corpus([tmp_path / "bad.txt"], tokenizer, tmp_path / "out", **options)
    meta = encode_corpus([tmp_path / "bad.txt"], tokenizer, tmp_path / "out", skip_bad=True, **options)
    kept = paragraphs[:25] + paragraphs[26:]  # only the paragraph with the bad byte is lost
    assert meta["documents"]["bad_skipped"] == {"invalid UTF-8": 1}
    assert stream(tmp_path / "out").tolist() == [i for text in kept for i in tokenizer.encode_ordinary(text)]


def test_a_run_that_fails_before_any_shard_leaves_nothing_and_says_nothing_of_resuming(tokenizer, tmp_path):
    data = gzip.compress(b'{"text": "x"}\n' * 1000)
    (tmp_path / "cut.jsonl.gz").write_bytes(data[: len(data) // 2])  # no --skip-bad skips this
    lines = []
    with pytest.raises(DocumentError, match="cannot decompress"):
        encode_corpus([tmp_path / "cut.jsonl.gz"], tokenizer, tmp_path / "out", progress=False, log=lines.append)
    assert lines == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.jsonl.gz"]  # no .out.partial
    with pytest.raises(UsageError, match="--split-on '\\(' is not a valid regex"):
        encode_corpus([tmp_path / "cut.jsonl.gz"], tokenizer, tmp_path / "out2", split_on="(", **quiet())
    with pytest.raises(UsageError, match="--seed must be an integer of 0 or more, not -5"):
        encode_corpus([tmp_path / "cut.jsonl.gz"], tokenizer, tmp_path / "out2", seed=-5, val_fraction=0.1, **quiet())
    assert not (tmp_path / "out2").exists() and not (tmp_path / ".out2.partial").exists()


def test_invalid_utf8_inside_a_separator_is_reported_not_dropped(tokenizer, tmp_path):
    (tmp_path / "sep.txt").write_bytes(b"doc one\n--- caf\xe9 ---\ndoc two\n")
    options = dict(split_on=r"\n---[^\n]*\n", eot="none", **quiet())
    with pytest.raises(DocumentError, match=r"sep.txt, line 2: not UTF-8 \(byte b'\\xe9', in a separator\)"):
        encode_corpus([tmp_path / "sep.txt"], tokenizer, tmp_path / "out", **options)
    meta = encode_corpus([tmp_path / "sep.txt"], tokenizer, tmp_path / "out", skip_bad=True, **options)
    assert meta["documents"]["bad_skipped"] == {"invalid UTF-8": 1}
    assert stream(tmp_path / "out").tolist() == tokenizer.encode_ordinary("doc one") + tokenizer.encode_ordinary(
        "doc two\n"
    )


def test_a_file_that_breaks_after_shards_were_kept_says_to_start_over(tokenizer, tmp_path):
    corpus, _ = _big_corpus(tmp_path, 6000)
    data = gzip.compress(b'{"text": "x"}\n' * 1000)
    (tmp_path / "z.jsonl.gz").write_bytes(data[: len(data) // 2])
    options = dict(shard_tokens=500, chunk_bytes=4000, progress=False, log=None)
    with pytest.raises(DocumentError, match="cannot decompress") as raised:
        encode_corpus([corpus, tmp_path / "z.jsonl.gz"], tokenizer, tmp_path / "out", **options)
    (line,) = raised.value.__notes__
    assert line.endswith("fix the input and run again without --resume to start over") and "--skip-bad" not in line


def test_a_bad_document_met_while_counting_for_val_documents_leaves_nothing(tokenizer, tmp_path):
    (tmp_path / "c.jsonl").write_text('{"text": "fine"}\n{not json\n', encoding="utf-8")
    with pytest.raises(DocumentError, match="line 2"):
        encode_corpus([tmp_path / "c.jsonl"], tokenizer, tmp_path / "out", val_documents=1, **quiet())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]


@pytest.mark.parametrize(
    ("files", "options", "message"),
    [
        ({"e.jsonl": b""}, {}, r"no documents to encode in .*e\.jsonl: none found"),
        ({"e.txt": b"", "e.jsonl": b'{"text": ""}\n\n'}, {}, r"e\.txt, .*e\.jsonl: 2 empty document\(s\) dropped"),
        ({"b.jsonl": b'{"body": "x"}\n'}, {"skip_bad": True}, r"1 missing field; is --text-field 'text' the right"),
        ({"c.jsonl": b'{"text": "a"}\n{"text": "b"}\n'}, {"val_documents": 2}, r"the train split got none of the 2"),
        (
            {"c.jsonl": b'{"text": "a"}\n'},
            {"val_fraction": 0.01},
            r"the val split got none of the 1 .*--val-documents N",
        ),
    ],
)
def test_no_documents_for_a_split_is_an_error_that_writes_nothing(tokenizer, tmp_path, files, options, message):
    # an empty train.bin or val.bin would only fail later, inside the training loop
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    inputs = [tmp_path / name for name in files]
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(DatasetError, match=message):
        encode_corpus(inputs, tokenizer, tmp_path / "out", shard_tokens=1, **quiet(**options))
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    # an earlier output stays as it was
    write_jsonl(tmp_path / "good.jsonl", ["kept"])
    encode_corpus([tmp_path / "good.jsonl"], tokenizer, tmp_path / "out", **quiet())
    with pytest.raises(DatasetError, match=message):
        encode_corpus(inputs, tokenizer, tmp_path / "out", shard_tokens=1, **quiet(**options))
    assert decode_documents(tokenizer, stream(tmp_path / "out"), tokenizer.special_tokens["<|endoftext|>"]) == ["kept"]


def test_cli_empty_input_is_an_error_naming_it(tokenizer, tmp_path, capsys):
    (tmp_path / "e.jsonl").write_bytes(b"")
    tokenizer.save(tmp_path / "tok.json")
    command = ["encode-corpus", str(tmp_path / "e.jsonl"), "-t", str(tmp_path / "tok.json"), "-o", str(tmp_path / "o")]
    assert main(command) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"error: no documents to encode in {tmp_path / 'e.jsonl'}: none found; give inputs that hold text "
        "(nothing was written)\n"
    )
    assert captured.out == "" and not (tmp_path / "o").exists()


def test_cli_errors_are_one_line(tokenizer, tmp_path, capsys):
    path = tmp_path / "c.jsonl"
    path.write_text('{"text": 1}\n', encoding="utf-8")
    artifact = tmp_path / "tok.json"
    tokenizer.save(artifact)
    assert main(["encode-corpus", str(path), "-t", str(artifact), "-o", str(tmp_path / "out"), "--quiet"]) == 2
    assert capsys.readouterr().err.startswith(f"error: {path}, line 1: field 'text' is a JSON number 1, not a string")
    assert (
        main(["encode-corpus", str(tmp_path / "missing.jsonl"), "-t", str(artifact), "-o", str(tmp_path / "out")]) == 2
    )
    assert "no such file or folder" in capsys.readouterr().err
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "precious.txt").write_text("x")
    write_jsonl(path, ["a"])
    assert main(["encode-corpus", str(path), "-t", str(artifact), "-o", str(tmp_path / "mine")]) == 2
    assert "not an earlier encode-corpus output" in capsys.readouterr().err
    assert (tmp_path / "mine" / "precious.txt").exists()


# -- splits, shards, determinism -----------------------------------------------------------------------


def test_val_split_is_deterministic_by_whole_documents(tokenizer, tmp_path):
    docs = [f"document number {n} " * (n % 7 + 1) for n in range(200)]
    corpus = write_jsonl(tmp_path / "c.jsonl", docs)
    meta = encode_corpus([corpus], tokenizer, tmp_path / "a", val_fraction=0.2, seed=3, **quiet())
    encode_corpus([corpus], tokenizer, tmp_path / "b", val_fraction=0.2, seed=3, **quiet())
    other = encode_corpus([corpus], tokenizer, tmp_path / "c", val_fraction=0.2, seed=4, **quiet())
    eot = meta["eot_id"]
    train_docs = decode_documents(tokenizer, stream(tmp_path / "a", "train"), eot)
    val_docs = decode_documents(tokenizer, stream(tmp_path / "a", "val"), eot)
    chooser = SplitChooser(val_fraction=0.2, seed=3)
    assert val_docs == [d for i, d in enumerate(docs) if chooser(i)]
    assert train_docs == [d for i, d in enumerate(docs) if not chooser(i)]
    assert 10 < len(val_docs) < 70
    for split in ("train", "val"):
        assert (tmp_path / "a" / f"{split}.bin").read_bytes() == (tmp_path / "b" / f"{split}.bin").read_bytes()
    assert other["splits"]["val"]["shards"][0]["sha256"] != meta["splits"]["val"]["shards"][0]["sha256"]
    exact = encode_corpus([corpus], tokenizer, tmp_path / "d", val_documents=17, seed=1, **quiet())
    assert exact["splits"]["val"]["documents"] == 17 and exact["splits"]["train"]["documents"] == 183


def test_shards_hold_at_most_n_tokens_and_whole_documents(tokenizer, tmp_path):
    docs = [f"doc {n} " + "word " * (n % 13) for n in range(60)] + ["long " * 300]
    corpus = write_jsonl(tmp_path / "c.jsonl", docs)
    meta = encode_corpus([corpus], tokenizer, tmp_path / "out", shard_tokens=50, **quiet())
    shards = meta["splits"]["train"]["shards"]
    assert len(shards) > 5 and all(0 < s["tokens"] <= 50 for s in shards)
    assert [s["file"] for s in shards] == [f"train_{i:06d}.bin" for i in range(len(shards))]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted([s["file"] for s in shards] + ["meta.json"])
    ids = stream(tmp_path / "out")
    assert decode_documents(tokenizer, ids, meta["eot_id"]) == docs
    assert sum(s["documents"] for s in shards) == len(docs)
    assert shards[1]["first_document"] == shards[0]["documents"]
    for shard in shards[:-1]:  # whole documents, except the cut long one
        data = np.fromfile(tmp_path / "out" / shard["file"], dtype="<u2")
        assert data[-1] == meta["eot_id"] or len(data) == 50


def test_an_output_that_is_a_symbolic_link_is_written_through(tokenizer, tmp_path):
    write_jsonl(tmp_path / "a.jsonl", DOCUMENTS)
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    for _ in range(2):  # a new folder, then one replaced
        encode_corpus([tmp_path / "a.jsonl"], tokenizer, tmp_path / "link", **quiet())
        assert (tmp_path / "link").is_symlink() and (tmp_path / "real" / "meta.json").is_file()
    assert stream(tmp_path / "link").size > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "link", "real"]


def test_an_output_folder_inside_the_input_folder_is_not_read_as_input(tokenizer, tmp_path):
    write_jsonl(tmp_path / "a.jsonl", DOCUMENTS)
    first = encode_corpus([tmp_path], tokenizer, tmp_path / "shards", **quiet())
    again = encode_corpus([tmp_path], tokenizer, tmp_path / "shards", **quiet())  # its meta.json is there now
    assert again["splits"] == first["splits"] and again["splits"]["train"]["documents"] == len(DOCUMENTS)
    with pytest.raises(UsageError, match="every input is inside the output folder"):
        encode_corpus([tmp_path / "shards"], tokenizer, tmp_path / "shards", **quiet())


def test_same_command_twice_gives_identical_shards_and_replaces_the_old_output(tokenizer, tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", DOCUMENTS)
    first = encode_corpus([corpus], tokenizer, tmp_path / "out", shard_tokens=64, **quiet())
    files = {p.name: p.read_bytes() for p in (tmp_path / "out").glob("*.bin")}
    second = encode_corpus([corpus], tokenizer, tmp_path / "out", shard_tokens=64, **quiet())
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").glob("*.bin")} == files
    assert first["splits"] == second["splits"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl", "out"]  # no lock, staging or old copy left


def test_open_shards_refuses_another_tokenizer(tokenizer, tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", DOCUMENTS[:3])
    encode_corpus([corpus], tokenizer, tmp_path / "out", **quiet())
    assert len(open_shards(tmp_path / "out", "train", tokenizer=tokenizer)) == 1
    other = train("\n".join(DOCUMENTS), mode="byte", vocab_size=300, progress=False)
    with pytest.raises(PreparedDataError, match="fingerprint"):
        open_shards(tmp_path / "out", "train", tokenizer=other)
    with pytest.raises(PreparedDataError, match="no split 'val'"):
        open_shards(tmp_path / "out", "val")


# -- interruption and resume --------------------------------------------------------------------------


def _env():
    return package_env()


def _big_corpus(tmp_path, count=4000):
    docs = [f"Document {n}: " + " ".join(f"word{(n * 7 + k) % 101}" for k in range(n % 50 + 5)) for n in range(count)]
    return write_jsonl(tmp_path / "big.jsonl", docs), docs


@pytest.mark.slow
def test_interrupted_run_leaves_no_complete_looking_shard_and_resume_is_byte_identical(tokenizer, tmp_path):
    import bytepair.datasets.corpus as corpus_module

    corpus, _ = _big_corpus(tmp_path, 1500)
    options = {"shard_tokens": 2000, "val_fraction": 0.1, "seed": 5, "chunk_bytes": 4000}
    reference = encode_corpus([corpus], tokenizer, tmp_path / "ref", **quiet(**options))
    calls = [0]
    original = corpus_module.encode_documents

    def interrupting(*args, **kwargs):
        calls[0] += 1
        if calls[0] == 6:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    corpus_module.encode_documents = interrupting  # the one encode step of the pipeline
    try:
        with pytest.raises(KeyboardInterrupt):
            encode_corpus([corpus], tokenizer, tmp_path / "out", **quiet(**options))
    finally:
        corpus_module.encode_documents = original
    assert not (tmp_path / "out").exists()
    partial = tmp_path / ".out.partial"
    assert not list(partial.glob("*.tmp")) and not list(partial.glob(".*.tmp"))
    kept = sorted(partial.glob("*.bin"))
    assert kept, "some shards were complete before the interruption"
    resumed = encode_corpus([corpus], tokenizer, tmp_path / "out", resume=True, **quiet(**options))
    assert resumed["splits"] == reference["splits"]
    for shard in (s for split in reference["splits"].values() for s in split["shards"]):
        assert (tmp_path / "out" / shard["file"]).read_bytes() == (tmp_path / "ref" / shard["file"]).read_bytes()
    assert not partial.exists()
    assert corpus_module.SPLITS == ("train", "val")


def test_an_interrupted_run_ends_with_one_line_saying_what_to_resume(tokenizer, tmp_path, capsys, monkeypatch):
    import bytepair.datasets.corpus as corpus_module

    corpus, _ = _big_corpus(tmp_path, 3000)
    tokenizer.save(tmp_path / "tok.json")
    original, calls = corpus_module.encode_documents, [0]

    def interrupting(*args, **kwargs):
        calls[0] += 1
        if calls[0] == 4:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(corpus_module, "encode_documents", interrupting)
    monkeypatch.setattr(corpus_module, "FIRST_CHUNK_BYTES", 4000)  # chunks of 4, 8, 16 KB before the fourth
    out = tmp_path / "out"
    command = ["encode-corpus", str(corpus), "-t", str(tmp_path / "tok.json"), "-o", str(out), "--quiet"]
    assert main([*command, "--shard-tokens", "2000"]) == 128 + 2
    kept = len(list((tmp_path / ".out.partial").glob("*.bin")))
    assert kept, "some shards were complete before the interruption"
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"interrupted: {kept} complete shard(s) kept in {tmp_path / '.out.partial'}; run the same command with "
        "--resume (resume=True) to continue\n"
    )
    # one file per split: nothing is complete before the end, so nothing is kept or offered
    calls[0] = 0
    command[command.index(str(out))] = str(tmp_path / "whole")
    assert main(command) == 128 + 2
    assert capsys.readouterr().err == "interrupted\n"
    assert not (tmp_path / "whole").exists() and not (tmp_path / ".whole.partial").exists()
    # standard input is read once: its shards cannot be resumed from, so none are offered
    calls[0] = 0
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(corpus.read_bytes()))))
    command[command.index(str(corpus))] = "-"
    assert main([*command, "--shard-tokens", "2000"]) == 128 + 2
    assert capsys.readouterr().err == "interrupted\n"
    assert not (tmp_path / ".whole.partial").exists()


def _interrupted_at_the_second_chunk(encode_documents):
    calls = []

    def interrupting(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return encode_documents(*args, **kwargs)

    return interrupting


@pytest.mark.parametrize(("short_documents", "chunk_bytes"), [(0, 10_000), (40, 12_000)])
def test_the_shards_an_interruption_keeps_are_those_resume_goes_on_from(
    tokenizer, tmp_path, monkeypatch, short_documents, chunk_bytes
):
    import bytepair.datasets.corpus as corpus_module

    # a document of many shards' tokens first: its full shards end inside it, so a resumed run
    # encodes it again and keeps none of them; short documents after it fill whole shards
    docs = ["word " * 2000] + [f"short document {n}" for n in range(short_documents)] + ["the end " * 500] * 4
    corpus = write_jsonl(tmp_path / "c.jsonl", docs)
    original = corpus_module.encode_documents
    monkeypatch.setattr(corpus_module, "encode_documents", _interrupted_at_the_second_chunk(original))
    options = dict(shard_tokens=100, chunk_bytes=chunk_bytes)  # the first chunk: the long document (and more)
    with pytest.raises(KeyboardInterrupt) as raised:
        encode_corpus([corpus], tokenizer, tmp_path / "out", **quiet(**options))
    partial = tmp_path / ".out.partial"
    notes = getattr(raised.value, "__notes__", [])
    monkeypatch.setattr(corpus_module, "encode_documents", original)
    lines = []
    meta = encode_corpus(
        [corpus], tokenizer, tmp_path / "out", resume=True, progress=False, log=lines.append, **options
    )
    if short_documents:
        (note,) = notes
        kept = int(note.split()[0])
        assert kept > 0 and note.endswith("run the same command with --resume (resume=True) to continue")
        assert lines[0] == f"resuming: {kept} complete shard(s) kept in {partial}"
    else:
        assert notes == []
        assert lines[0] == f"nothing to resume in {partial}; starting from the beginning"
    assert decode_documents(tokenizer, stream(tmp_path / "out"), meta["eot_id"]) == docs


@pytest.mark.slow
def test_resume_with_other_options_is_refused(tokenizer, tmp_path):
    corpus, _ = _big_corpus(tmp_path, 300)
    import bytepair.datasets.corpus as corpus_module

    original = corpus_module.encode_documents
    corpus_module.encode_documents = _interrupted_at_the_second_chunk(original)
    try:
        with pytest.raises(KeyboardInterrupt):
            encode_corpus([corpus], tokenizer, tmp_path / "out", chunk_bytes=2000, shard_tokens=100, **quiet())
    finally:
        corpus_module.encode_documents = original
    assert list((tmp_path / ".out.partial").glob("*.bin")), "the first chunk's shards are kept"
    with pytest.raises(UsageError, match="options differ"):
        encode_corpus([corpus], tokenizer, tmp_path / "out", shard_tokens=200, resume=True, **quiet())
    meta = encode_corpus([corpus], tokenizer, tmp_path / "out", shard_tokens=200, **quiet())  # starts over
    assert meta["splits"]["train"]["documents"] == 300
    assert original is not None


def test_a_run_stopped_by_a_bad_document_resumes_with_skip_bad(tokenizer, tmp_path):
    corpus, _ = _big_corpus(tmp_path, 3000)
    with open(corpus, "a", encoding="utf-8") as file:
        file.write("{not json\n")
        file.writelines(json.dumps({"text": f"after the bad line {n}"}) + "\n" for n in range(50))
    options = {"shard_tokens": 2000, "val_fraction": 0.1, "seed": 3, "chunk_bytes": 4000}
    reference = encode_corpus([corpus], tokenizer, tmp_path / "ref", skip_bad=True, **quiet(**options))
    lines = []
    with pytest.raises(DocumentError, match="line 3001") as raised:
        encode_corpus([corpus], tokenizer, tmp_path / "out", progress=False, log=lines.append, **options)
    partial = tmp_path / ".out.partial"
    kept = sorted(partial.glob("*.bin"))
    assert kept, "shards were complete before the bad line"
    assert lines == []
    assert raised.value.__notes__ == [
        f"{len(kept)} complete shard(s) kept in {partial}: add --resume --skip-bad (resume=True, skip_bad=True) "
        "to go on past bad documents from there, or fix the input and run again without --resume to start over"
    ]
    lines = []
    resumed = encode_corpus(
        [corpus], tokenizer, tmp_path / "out", resume=True, skip_bad=True, progress=False, log=lines.append, **options
    )
    assert lines[0] == f"resuming: {len(kept)} complete shard(s) kept in {partial}"
    assert resumed["splits"] == reference["splits"]
    assert resumed["documents"] == reference["documents"]
    for shard in (s for split in reference["splits"].values() for s in split["shards"]):
        assert (tmp_path / "out" / shard["file"]).read_bytes() == (tmp_path / "ref" / shard["file"]).read_bytes()


def test_a_run_that_skipped_bad_documents_is_not_resumed_without_skip_bad(tokenizer, tmp_path):
    corpus, _ = _big_corpus(tmp_path, 300)
    import bytepair.datasets.corpus as corpus_module

    original = corpus_module.encode_documents
    corpus_module.encode_documents = _interrupted_at_the_second_chunk(original)
    try:
        with pytest.raises(KeyboardInterrupt):
            encode_corpus(
                [corpus], tokenizer, tmp_path / "out", chunk_bytes=2000, shard_tokens=100, skip_bad=True, **quiet()
            )
    finally:
        corpus_module.encode_documents = original
    assert list((tmp_path / ".out.partial").glob("*.bin")), "the first chunk's shards are kept"
    # its shards may lack documents it skipped, which a run without skip_bad would not count
    with pytest.raises(UsageError, match="options differ"):
        encode_corpus([corpus], tokenizer, tmp_path / "out", shard_tokens=100, resume=True, **quiet())


@pytest.mark.slow
@pytest.mark.data
@needs_vocab
@pytest.mark.parametrize("kill_signal", [signal.SIGKILL, signal.SIGTERM])
def test_killed_at_a_random_moment_then_resumed_gives_identical_shards(tmp_path, kill_signal):
    corpus, _ = _big_corpus(tmp_path, 30000)
    command = [
        sys.executable,
        "-m",
        "bytepair",
        "encode-corpus",
        str(corpus),
        "-t",
        "gpt2",
        "--vocab-dir",
        str(VOCAB),
        "--shard-tokens",
        "20000",
        "--val-fraction",
        "0.05",
        "--quiet",
        "--num-threads",
        "2",
    ]
    reference = subprocess.run(
        command + ["-o", str(tmp_path / "ref")], capture_output=True, env=_env(), timeout=300, check=False
    )
    assert reference.returncode == 0, reference.stderr
    rng = np.random.default_rng(int(time.time()))
    for _attempt in range(3):
        process = subprocess.Popen(
            command + ["-o", str(tmp_path / "out")], env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        time.sleep(float(rng.uniform(0.5, 2.5)))
        process.send_signal(kill_signal)
        process.wait(timeout=120)
        if process.returncode != 0:
            break
    out = tmp_path / "out"
    if out.exists():  # the run finished before the kill: nothing partial to look at
        assert (out / "meta.json").is_file()
    else:
        partial = tmp_path / ".out.partial"
        if kill_signal == signal.SIGTERM:  # cleanup ran: no temporary shard left
            assert not list(partial.glob(".*.tmp"))
        resumed = subprocess.run(
            command + ["-o", str(out), "--resume"], capture_output=True, env=_env(), timeout=300, check=False
        )
        assert resumed.returncode == 0, resumed.stderr
    ref_files = sorted(p.name for p in (tmp_path / "ref").iterdir())
    assert sorted(p.name for p in out.iterdir()) == ref_files
    for name in ref_files:
        if name.endswith(".bin"):
            assert (out / name).read_bytes() == (tmp_path / "ref" / name).read_bytes(), name
    ref_meta, meta = (json.loads((d / "meta.json").read_text()) for d in (tmp_path / "ref", out))
    assert meta["splits"] == ref_meta["splits"]


# -- against the peers, on real data ------------------------------------------------------------------


def _wikitext_articles(limit=None):
    text = (DATA / "wikitext-2" / "valid.txt").read_text(encoding="utf-8")
    return split_articles(text)[:limit]


@pytest.mark.data
@pytest.mark.peers
@needs_vocab
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_ids_of_each_document_equal_tiktoken(tmp_path, name):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    import bytepair

    tokenizer = bytepair.load(name, path=VOCAB)
    docs = _wikitext_articles(40) + DOCUMENTS
    corpus = write_jsonl(tmp_path / "c.jsonl", docs)
    meta = encode_corpus([corpus], name, tmp_path / "out", vocab_dir=VOCAB, **quiet())
    ranks = load_tiktoken_bpe(str(VOCAB / f"{'r50k_base' if name == 'gpt2' else name}.tiktoken"))
    encoding = tiktoken.Encoding(
        name, pat_str=tokenizer.pattern, mergeable_ranks=ranks, special_tokens=dict(tokenizer.special_tokens)
    )
    eot = encoding.eot_token
    assert meta["eot_id"] == eot and meta["tokenizer"] == name
    expected = [i for ids in encoding.encode_ordinary_batch(docs) for i in [*ids, eot]]
    assert stream(tmp_path / "out").tolist() == expected
    assert meta["dtype"] == ("uint16" if name == "gpt2" else "uint32")


@pytest.mark.data
@pytest.mark.peers
@needs_vocab
def test_ids_of_each_document_equal_hf_llama3(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    path = VOCAB / "hf" / "llama3" / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    docs = _wikitext_articles(20) + DOCUMENTS
    corpus = write_jsonl(tmp_path / "c.jsonl", docs)
    meta = encode_corpus([corpus], str(path), tmp_path / "out", **quiet())
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert meta["eot"] == "<|end_of_text|>" and meta["eot_id"] == hf.token_to_id("<|end_of_text|>")
    expected = [i for doc in docs for i in [*hf.encode(doc, add_special_tokens=False).ids, meta["eot_id"]]]
    # HF matches special-token strings inside text; ours are text by default, so compare the
    # documents without them
    clean = [d for d in docs if "<|" not in d]
    expected = [i for doc in clean for i in [*hf.encode(doc, add_special_tokens=False).ids, meta["eot_id"]]]
    corpus = write_jsonl(tmp_path / "clean.jsonl", clean)
    encode_corpus([corpus], str(path), tmp_path / "clean", **quiet())
    assert stream(tmp_path / "clean").tolist() == expected


@pytest.mark.slow
@pytest.mark.data
@needs_vocab
def test_real_corpora_as_jsonl_and_as_a_folder_of_text_files(tmp_path):
    import bytepair

    tokenizer = bytepair.load("gpt2", path=VOCAB)
    docs = _wikitext_articles()
    docs_path = DATA / "english" / "python-3.11-docs.txt"
    if docs_path.is_file():
        docs += [d for d in docs_path.read_text(encoding="utf-8").split("\n\n\n") if d][:2000]
    corpus = write_jsonl(tmp_path / "c.jsonl", docs)
    folder = tmp_path / "folder"
    folder.mkdir()
    for number, doc in enumerate(docs):
        (folder / f"{number:06d}.txt").write_text(doc, encoding="utf-8")
    a = encode_corpus([corpus], tokenizer, tmp_path / "a", val_fraction=0.05, shard_tokens=100_000, **quiet())
    b = encode_corpus([folder], tokenizer, tmp_path / "b", val_fraction=0.05, shard_tokens=100_000, **quiet())
    assert a["splits"] == b["splits"]
    chooser = SplitChooser(val_fraction=0.05, seed=0)
    for split, wanted in (("train", 0), ("val", 1)):
        got = decode_documents(tokenizer, stream(tmp_path / "a", split, tokenizer=tokenizer), a["eot_id"])
        assert got == [d for i, d in enumerate(docs) if chooser(i) == wanted]


# -- the encode step ---------------------------------------------------------------------------------


@pytest.mark.parametrize("eot_id", [None, 400])
@pytest.mark.parametrize("dtype", ["uint16", "uint32"])
def test_the_encode_step_gives_encode_ordinarys_ids_on_every_path(tokenizer, eot_id, dtype):
    from bytepair.datasets.corpus import encode_documents

    texts = ["hello world", "naïve café 東京 🌍", "x" * 5000, "a <|endoftext|> b"] * 9 + ["the end", "é"]
    expected_lists = [tokenizer.encode_ordinary(t) for t in texts]
    expected = [i for ids in expected_lists for i in ids + ([eot_id] if eot_id is not None else [])]
    lengths = [len(ids) + (eot_id is not None) for ids in expected_lists]
    paths = {
        "three threads": encode_documents(tokenizer, texts, eot_id=eot_id, num_threads=3, dtype=dtype),
        "one thread": encode_documents(tokenizer, texts, eot_id=eot_id, num_threads=1, dtype=dtype),
    }
    for name, (ids, counts) in paths.items():
        assert ids.dtype == np.dtype(dtype) and ids.tolist() == expected and counts.tolist() == lengths, name
    # with a special token allowed, its string becomes its id (only encode_batch knows the rules)
    ids, counts = encode_documents(
        tokenizer, texts[3:4], eot_id=eot_id, allowed_special=frozenset({"<|endoftext|>"}), dtype=dtype
    )
    special = tokenizer.special_tokens["<|endoftext|>"]
    assert ids.tolist() == tokenizer.encode(texts[3], allowed_special="all") + ([eot_id] if eot_id is not None else [])
    assert special in ids.tolist() and ids.dtype == np.dtype(dtype)
    empty, none = encode_documents(tokenizer, [], eot_id=eot_id, dtype=dtype)
    assert empty.tolist() == [] and none.tolist() == []
