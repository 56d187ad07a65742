"""The ``bytepair`` command as a user runs it: real processes, real files."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

TEXT = "the cat sat on the mat. the hat is flat, the bat is fat.\n" * 40


def bytepair(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "bytepair", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    corpus = folder / "corpus.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    extra = folder / "extra.txt"
    extra.write_text("XYZ!?", encoding="utf-8")
    out = folder / "tok.json"
    result = bytepair("train", corpus, "--mode", "char", "--vocab-size", 60, "--base-text", extra, "-o", out, "--quiet")
    assert result.returncode == 0, result.stderr
    return folder, out, result


def test_train_reports_and_writes_a_loadable_file(trained):
    folder, out, result = trained
    assert "round trip on mixed text: ok" in result.stdout
    assert result.stderr == ""  # --quiet: the summary only, on standard output
    assert json.loads(out.read_text(encoding="utf-8"))["type"] == "character_bpe"


def test_train_reads_json_lines_folders_and_any_text_file_as_encode_corpus_does(tmp_path):
    import bytepair as bp

    documents = [f"document {i}: the cat sat on the mat, number {i * 7}." for i in range(60)]
    folder = tmp_path / "corpus"
    (folder / "more").mkdir(parents=True)
    (folder / "a.jsonl").write_text("".join(json.dumps({"body": d}) + "\n" for d in documents[:30]), encoding="utf-8")
    (folder / "more" / "b.jsonl").write_text(
        "".join(json.dumps({"body": d}) + "\n" for d in documents[30:50]), encoding="utf-8"
    )
    notes = tmp_path / "notes"  # no suffix: text, as `bytepair train` always read any file
    notes.write_text("".join(documents[50:]), encoding="utf-8")
    out = tmp_path / "tok.json"
    result = bytepair(
        "train",
        folder,
        notes,
        "--text-field",
        "body",
        "--mode",
        "byte",
        "--pattern",
        "gpt2",
        "--vocab-size",
        300,
        "-o",
        out,
        "--quiet",
    )
    assert result.returncode == 0, result.stderr
    expected = bp.train([*documents[:50], "".join(documents[50:])], mode="byte", pattern="gpt2", vocab_size=300)
    assert bp.load(out).fingerprint == expected.fingerprint


def test_train_says_when_it_stops_below_the_vocabulary_size_asked(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world hello there", encoding="utf-8")
    # "hello " twice: its five merges (256 + 5 tokens), then no pair is seen twice
    result = bytepair("train", corpus, "--mode", "byte", "--vocab-size", 1000, "-o", tmp_path / "t.json")
    assert result.returncode == 0, result.stderr
    assert "trained 261 tokens" in result.stdout
    assert (
        "stopped at 261 of the 1,000 tokens asked: no pair occurs 2 or more times (--min-frequency) any more; "
        "give more text or a lower --min-frequency"
    ) in result.stdout
    reached = bytepair("train", corpus, "--mode", "byte", "--vocab-size", 261, "-o", tmp_path / "u.json")
    assert reached.returncode == 0 and "stopped at" not in reached.stdout


def test_train_names_a_missing_json_field(tmp_path):
    (tmp_path / "a.jsonl").write_text(json.dumps({"text": "hello"}) + "\n", encoding="utf-8")
    result = bytepair(
        "train", tmp_path / "a.jsonl", "--text-field", "body", "--vocab-size", 40, "-o", tmp_path / "t.json"
    )
    assert result.returncode != 0 and "Traceback" not in result.stderr
    error = result.stderr.splitlines()[-1]
    assert error.startswith("error: ") and "'body'" in error and "a.jsonl" in error
    assert not (tmp_path / "t.json").exists()


def test_encode_then_decode_gives_the_text_back(trained):
    folder, out, _ = trained
    encoded = bytepair("encode", "-t", out, stdin="the flat XYZ cat")
    assert encoded.returncode == 0, encoded.stderr
    decoded = bytepair("decode", "-t", out, stdin=encoded.stdout)
    assert decoded.stdout == "the flat XYZ cat"


def test_encode_pieces_shows_each_piece_with_its_id(trained):
    _, out, _ = trained
    result = bytepair("encode", "-t", out, "--pieces", stdin="the cat")
    pieces = [line.split(None, 1) for line in result.stdout.splitlines()]
    assert "".join(eval(piece) for _, piece in pieces) == "the cat"
    assert all(token_id.isdigit() for token_id, _ in pieces)


def test_inspect_shows_type_size_fingerprint_and_longest_tokens(trained):
    _, out, _ = trained
    data = json.loads(out.read_text(encoding="utf-8"))
    result = bytepair("inspect", out)
    assert "character_bpe" in result.stdout
    assert data["fingerprint"] in result.stdout
    assert "longest" in result.stdout
    vocab = bytepair("inspect", out, "--vocab")
    assert len(vocab.stdout.splitlines()) == data["vocab_size"]


def test_inspect_takes_the_tokenizer_as_t_as_the_other_commands_do(trained):
    _, out, _ = trained
    positional = bytepair("inspect", out)
    for flag in ("-t", "--tokenizer"):
        result = bytepair("inspect", flag, out)
        assert (result.returncode, result.stdout) == (0, positional.stdout)
    for args in ((), (out, "-t", out)):
        result = bytepair("inspect", *args)
        assert result.returncode == 2 and result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


@pytest.mark.data
def test_inspect_of_tiktoken_ranks_counts_tokens_not_splits():
    from datafiles import data_file

    folder = data_file("vocab")
    result = bytepair("inspect", "gpt2", "--vocab-dir", folder)
    merges = (folder / "gpt2" / "vocab.bpe").read_text(encoding="utf-8").splitlines()[1:]
    count = len([line for line in merges if line.strip()])  # GPT-2's own merge list: 50,000
    assert f"merges        - (a rank per token, no merge list; {count:,} tokens of 2+ bytes)" in result.stdout


def test_unknown_characters_are_one_clear_line_and_exit_2(trained):
    _, out, _ = trained
    result = bytepair("encode", "-t", out, stdin="the ü cat ß")
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "'ß', 'ü'" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_id_and_missing_file_are_clear_errors(trained, tmp_path):
    _, out, _ = trained
    result = bytepair("decode", "-t", out, stdin="1 2 999999")
    assert result.returncode == 2 and "999999" in result.stderr and "Traceback" not in result.stderr
    result = bytepair("encode", "-t", tmp_path / "absent.json", stdin="x")
    assert result.returncode == 2 and "no such tokenizer file" in result.stderr


def test_vocab_size_below_alphabet_is_a_clear_error(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("abcdef", encoding="utf-8")
    result = bytepair("train", corpus, "--vocab-size", 3, "-o", tmp_path / "t.json")
    assert result.returncode == 2 and "below the base alphabet" in result.stderr
    assert not (tmp_path / "t.json").exists()


def test_invalid_utf8_input_names_the_byte(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"abc\ndef\xff")
    result = bytepair("train", corpus, "-o", tmp_path / "t.json")
    assert result.returncode == 2 and "line 2" in result.stderr


@pytest.mark.slow
def test_demo_runs_end_to_end(tmp_path):
    result = bytepair("demo", "-o", tmp_path / "demo")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("round trip ok") == 3
    assert "compression" in result.stdout and (tmp_path / "demo" / "tokenizer.bytepair.json").exists()


@pytest.mark.parametrize("command", ["train", "prepare"])
def test_verbose_and_quiet_together_are_refused_before_any_work(command, tmp_path):
    # --verbose printed the merge log and --quiet was ignored
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "out"
    result = bytepair(command, corpus, "--verbose", "--quiet", "-o", out)
    assert result.returncode == 2
    assert "argument --quiet: not allowed with argument --verbose" in result.stderr
    assert result.stdout == "" and not out.exists()


@pytest.mark.parametrize(
    ("args", "usage"),
    [
        (["inspect", "--foo"], "usage: bytepair inspect "),
        (["encode", "-t", "gpt2", "--foo"], "usage: bytepair encode "),
        (["gpt", "eval", "ckpt", "data", "--foo"], "usage: bytepair gpt eval "),
        (["--foo"], "usage: bytepair [-h]"),
    ],
)
def test_an_unknown_flag_is_reported_with_its_command_usage(args, usage):
    result = bytepair(*args)
    assert result.returncode == 2
    assert result.stderr.startswith(usage), result.stderr
    assert result.stderr.rstrip().endswith("error: unrecognized arguments: --foo")
