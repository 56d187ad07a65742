"""Where the ``bytepair`` command reads and writes: an output that is also an input, a folder,
a FIFO or a device; bytes on standard input that are not UTF-8; ids that only look like ids; an
output folder that is a file. Each case ends in one line and rc 2 before any work, or in the
write a user asked for, and the inputs stay as they were.

Commands run in this process (``bytepair.cli.main``, its output through capsys) where they read
no standard input, in a child process where they do.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading

import numpy as np
import pytest

import bytepair
from bytepair.cli import main

TEXT = "the cat sat on the mat. the hat is flat, the bat is fat.\n" * 20


def bytepair_process(*args, stdin):
    return subprocess.run(
        [sys.executable, "-m", "bytepair", *map(str, args)], input=stdin, capture_output=True, timeout=60, check=False
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("io")
    (folder / "text.txt").write_text(TEXT, encoding="utf-8")
    bytepair.train(TEXT, mode="byte", vocab_size=300, pattern="gpt2", progress=False).save(folder / "tok.json")
    return folder


def run(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- -t with --vocab-dir ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["inspect", "encode", "decode"])
def test_a_tokenizer_file_is_loaded_whatever_vocab_dir_says(files, tmp_path, capsys, command):
    arguments = {"inspect": ["{tok}"], "encode": ["-t", "{tok}", "{text}"], "decode": ["-t", "{tok}", "104", "105"]}
    filled = [a.format(tok=files / "tok.json", text=files / "text.txt") for a in arguments[command]]
    code, out, err = run(capsys, command, *filled, "--vocab-dir", tmp_path)  # a folder of published files
    assert code == 0, err
    assert out and not err
    assert bytepair.load(files / "tok.json", path=tmp_path).fingerprint == bytepair.load(files / "tok.json").fingerprint


# -- an output that is an input ---------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["train", "{text}", "--vocab-size", "60", "-o", "{text}"],
        ["train", "{folder}/*.txt", "--vocab-size", "60", "-o", "{text}"],  # found by a glob
        ["train", "{folder}", "--vocab-size", "60", "-o", "{tok}"],  # in a folder read whole
        ["encode", "-t", "{tok}", "-o", "{text}", "{text}"],
        ["encode", "-t", "{tok}", "-o", "{tok}", "{text}"],
        ["view", "-t", "{tok}", "-o", "{text}", "{text}"],
        ["compare", "-t", "{tok}", "--html", "{text}", "{text}"],
    ],
    ids=["train", "train-glob", "train-folder", "encode-text", "encode-tokenizer", "view", "compare"],
)
def test_an_output_that_is_an_input_is_refused_and_the_input_kept(files, capsys, command):
    before = {name: (files / name).read_bytes() for name in ("text.txt", "tok.json")}
    args = [a.format(text=files / "text.txt", tok=files / "tok.json", folder=files) for a in command]
    code, _, err = run(capsys, *args)
    assert code == 2 and "is also an input" in err
    assert {name: (files / name).read_bytes() for name in before} == before


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["encode", "-t", "{tok}", "{text}", "-o", "-"], "-o - would write a file named '-'"),
        (["train", "{text}", "--vocab-size", "60", "-o", "-"], "-o - would write a file named '-'"),
        (["view", "-t", "{tok}", "{text}", "-o", "-"], "-o - would write a file named '-'"),
        (["encode-corpus", "{text}", "-t", "{tok}", "-o", "-"], "-o - would make a folder named '-'"),
    ],
    ids=["encode", "train", "view", "encode-corpus"],
)
def test_a_dash_as_output_is_refused_not_written_as_a_file_named_dash(
    files, tmp_path, capsys, monkeypatch, command, message
):
    args = [a.format(text=files / "text.txt", tok=files / "tok.json") for a in command]
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, *args)
    assert code == 2 and message in err
    assert list(tmp_path.iterdir()) == []


def test_an_output_that_is_a_folder_is_refused_before_encoding(files, tmp_path, capsys):
    code, _, err = run(capsys, "encode", "-t", files / "tok.json", "-o", tmp_path, files / "text.txt")
    assert code == 2 and "is a folder" in err and ".tmp" not in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_as_output_is_written_into_and_stays_a_fifo(files, tmp_path, capsys):
    fifo = tmp_path / "ids"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text(encoding="utf-8")), daemon=True)
    reader.start()
    code, _, _ = run(capsys, "encode", "-t", files / "tok.json", "-o", fifo, files / "text.txt")
    reader.join(timeout=60)
    tokenizer = bytepair.Tokenizer.load(files / "tok.json")
    assert code == 0 and received[0].split() == [str(i) for i in tokenizer.encode(TEXT)]
    assert fifo.is_fifo()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pieces", "-o", "{tmp}/p.npy"], "--pieces prints a table"),
        (["--json", "--format", "bin"], "--json and --format bin disagree"),
        (["--format", "npy"], "--format npy writes a binary file; give -o FILE"),
    ],
)
def test_encode_refuses_options_that_contradict_each_other(files, tmp_path, capsys, args, message):
    args = [a.format(tmp=tmp_path) for a in args]
    code, out, err = run(capsys, "encode", "-t", files / "tok.json", *args, files / "text.txt")
    assert code == 2 and message in err and out == "" and not list(tmp_path.iterdir())


def test_a_special_token_string_in_encode_text_names_the_cli_flag(tmp_path, capsys):
    tokenizer = bytepair.train(TEXT, mode="byte", vocab_size=270, special_tokens=["<|end|>"], progress=False)
    tokenizer.save(tmp_path / "tok.json")
    (tmp_path / "text.txt").write_text("the cat<|end|>", encoding="utf-8")
    code, _, err = run(capsys, "encode", "-t", tmp_path / "tok.json", tmp_path / "text.txt")
    assert code == 2 and "pass --special '<|end|>'" in err
    code, out, _ = run(capsys, "encode", "-t", tmp_path / "tok.json", "--special", "<|end|>", tmp_path / "text.txt")
    assert code == 0 and out.split() == [str(i) for i in tokenizer.encode("the cat<|end|>", allowed_special="all")]


def test_view_serve_and_an_output_file_are_one_or_the_other(files, tmp_path):
    # a child with a time limit: were the flags taken, it would serve until stopped
    result = bytepair_process("view", "-t", files / "tok.json", "--serve", "-o", tmp_path / "page.html", stdin=b"")
    assert result.returncode == 2 and "give --serve or -o, not both" in result.stderr.decode()


# -- reading from pipes and devices ------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("command", ["compare", "view"])
def test_a_fifo_is_read_as_a_text_file(files, tmp_path, capsys, command):
    # what the shell's <(...) passes
    fifo = tmp_path / "text"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text("hello there", encoding="utf-8"), daemon=True)
    writer.start()
    extra = ["-o", tmp_path / "page.html"] if command == "view" else ["--json"]
    code, out, err = run(capsys, command, "-t", files / "tok.json", *extra, fifo)
    writer.join(timeout=60)
    assert code == 0
    if command == "view":
        assert "11 characters" in err  # the written page is reported on standard error
    else:
        assert json.loads(out)["texts"][0]["chars"] == 11


def test_a_device_as_tokenizer_is_named_as_such(capsys):
    code, _, err = run(capsys, "inspect", os.devnull)
    assert code == 2 and "is not a regular file" in err


@pytest.mark.parametrize("command", [["encode", "-t", "{tok}"], ["compare", "-t", "{tok}"], ["view", "-t", "{tok}"]])
def test_a_device_as_text_is_named_as_such(files, tmp_path, capsys, command):
    args = [a.format(tok=files / "tok.json") for a in command]
    code, _, err = run(capsys, *args, os.devnull, *(["-o", tmp_path / "page.html"] if command[0] == "view" else []))
    assert code == 2 and f"error: {os.devnull} is a device, not a text file" in err


# -- standard input ----------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["encode", "-t", "{tok}", "-"], ["compare", "-t", "{tok}", "-"]])
def test_bytes_on_standard_input_that_are_not_utf8_are_an_error(files, command):
    args = [a.format(tok=files / "tok.json") for a in command]
    result = bytepair_process(*args, stdin=b"hello \xff\xfe world")
    assert result.returncode == 2
    assert result.stderr.decode() == "error: standard input: not UTF-8 text (byte 6, line 1: b'\\xff')\n"


def test_standard_input_is_read_as_a_file_is_line_endings_kept(files):
    result = bytepair_process("encode", "-t", files / "tok.json", "--json", "-", stdin=b"a\r\nb")
    tokenizer = bytepair.Tokenizer.load(files / "tok.json")
    assert result.returncode == 0 and result.stdout.decode().strip() == str(tokenizer.encode("a\r\nb"))


# -- decode's ids ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ids", "1 2", "3"], "give the ids once"),
        (["--ids", "1_0"], "'1_0', not a token id"),
        (["١٢"], "'١٢', not a token id"),
        (["{bin}"], "a raw .bin holds no dtype"),
        (["--ids", "[1, [2, 3]]"], "the ids must be one flat list"),
        (["--ids", "[1, 2,"], "the ids start like a JSON list but are not one"),
        (["--ids", "[true]"], "'True', not a token id"),
        (["1.5"], "'1.5' is neither a token id nor a file of ids"),
        (["{missing}"], "is neither a token id nor a file of ids"),
    ],
)
def test_decode_refuses_what_only_looks_like_ids(files, tmp_path, capsys, args, message):
    np.arange(5, dtype=np.uint16).tofile(tmp_path / "ids.bin")
    args = [a.format(bin=tmp_path / "ids.bin", missing=tmp_path / "ids.txt") for a in args]
    code, _, err = run(capsys, "decode", "-t", files / "tok.json", *args)
    assert code == 2 and message in err and err.count("\n") == 1


def test_decode_reads_ids_saved_with_a_byte_order_mark(files, tmp_path, capsys):
    # an editor on Windows saves UTF-8 with a BOM first; it is no part of the first id
    ids = bytepair.Tokenizer.load(files / "tok.json").encode("hello there")
    (tmp_path / "ids.txt").write_text("\ufeff" + " ".join(map(str, ids)) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "decode", "-t", files / "tok.json", tmp_path / "ids.txt")
    assert (code, out) == (0, "hello there"), err


@pytest.mark.parametrize("flag", ["--special", "--allowed-special"])
def test_encode_names_the_flag_of_a_special_token_the_tokenizer_lacks(files, tmp_path, capsys, flag):
    tokenizer = bytepair.Tokenizer(mode="byte", special_tokens=["<|endoftext|>"])
    tokenizer.save(tmp_path / "special.json")
    code, out, err = run(capsys, "encode", "-t", tmp_path / "special.json", flag, "<|nope|>", files / "text.txt")
    assert code == 2 and out == ""
    assert err == (
        f"error: {flag} '<|nope|>' is not a special token of this tokenizer; its special tokens are ['<|endoftext|>']\n"
    )


def test_decode_reads_back_the_npy_that_encode_wrote(files, tmp_path, capsys):
    assert run(capsys, "encode", "-t", files / "tok.json", "-o", tmp_path / "ids.npy", files / "text.txt")[0] == 0
    code, out, _ = run(capsys, "decode", "-t", files / "tok.json", tmp_path / "ids.npy")
    assert code == 0 and out == TEXT


# -- output folders, numbers, ports ------------------------------------------------------------


@pytest.fixture
def splits(tmp_path):
    folder = tmp_path / "splits"
    folder.mkdir()
    for name in ("train", "val", "test"):
        (folder / f"{name}.txt").write_text(TEXT, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["prepare", "{splits}", "-o", "{file}"], "-o '{file}' is a file"),
        (["prepare", "{splits}", "-o", "{out}", "--write-text", "{file}"], "--write-text '{file}' is a file"),
        (["sweep", "{splits}", "-o", "{file}", "--no-plot"], "-o '{file}' is a file"),
        (["prepare", "--train", "{file}", "--val", "{splits}", "-o", "{out}"], "--val '{splits}' is a folder"),
        (["prepare", "{splits}", "-o", "{out}", "--max-chars", "-1"], "--max-chars must be 0"),
        (["prepare", "{splits}", "-o", "{out}", "--sha256", "ab12"], "--sha256 only apply with --download"),
        (["demo", "-o", "{file}"], "-o '{file}' is a file"),
        (["encode-corpus", "{splits}", "-t", "gpt2", "-o", "{file}/out"], "'{file}' is a file, not a folder"),
    ],
    ids=[
        "prepare-output",
        "write-text",
        "sweep-output",
        "split-folder",
        "max-chars",
        "sha256",
        "demo-output",
        "encode-corpus-output",
    ],
)
def test_commands_that_write_folders_refuse_bad_places_before_the_work(splits, tmp_path, capsys, args, message):
    names = {"splits": splits, "file": tmp_path / "file.txt", "out": tmp_path / "out"}
    (tmp_path / "file.txt").write_text(TEXT, encoding="utf-8")
    code, out, err = run(capsys, *[a.format(**names) for a in args])
    assert code == 2 and message.format(**names) in err
    assert "trained" not in out and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "command", [["train", "{folder}", "-o", "{out}"], ["encode-corpus", "{folder}", "-t", "{tok}", "-o", "{out}"]]
)
def test_an_unreadable_input_is_named_before_any_work(files, tmp_path, capsys, command):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text(TEXT, encoding="utf-8")
    (folder / "b.txt").write_text(TEXT, encoding="utf-8")
    (folder / "b.txt").chmod(0)
    args = [a.format(folder=folder, tok=files / "tok.json", out=tmp_path / "out") for a in command]
    if os.access(folder / "b.txt", os.R_OK):
        # root reads any file: the command runs without the capabilities that let it
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("this user reads a file whatever its mode says (root), and setpriv is missing to drop that")
        drop = "-dac_override,-dac_read_search"
        command = [setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}", sys.executable, "-m", "bytepair", *args]
        result = subprocess.run(command, capture_output=True, text=True, encoding="utf-8", timeout=300)
        code, err = result.returncode, result.stderr
    else:
        code, _, err = run(capsys, *args)
    assert code == 2
    assert err.endswith(
        f"error: input {str(folder / 'b.txt')!r}: cannot read it (permission denied); make it readable or leave it out\n"
    )
    assert not (tmp_path / "out").exists()


def test_inspect_refuses_a_negative_count(files, capsys):
    code, _, err = run(capsys, "inspect", files / "tok.json", "--top", "-3")
    assert code == 2 and "--top must be 0 or more" in err


def test_view_serve_names_a_bad_or_busy_port(files, capsys):
    code, _, err = run(capsys, "view", "-t", files / "tok.json", "--serve", "--port", "99999")
    assert code == 2 and "port must be an int from 0 to 65535" in err
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, _, err = run(capsys, "view", "-t", files / "tok.json", "--serve", "--port", port)
    assert code == 2 and f"cannot serve on 127.0.0.1:{port}" in err and "or 0 for any free one" in err


# -- train -------------------------------------------------------------------------------------


def test_train_with_max_chars_checks_the_characters_it_has(tmp_path, capsys):
    # char mode: '#' and '!' come after the first 600 characters, so the tokenizer lacks them
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT + "# the end!\n", encoding="utf-8")
    code, out, _ = run(capsys, "train", corpus, "--vocab-size", "60", "--max-chars", "600", "-o", tmp_path / "t.json")
    assert code == 0 and "round trip on mixed text: ok" in out
    assert "#" not in bytepair.Tokenizer.load(tmp_path / "t.json").base_tokens


# -- a reader that stops early -------------------------------------------------------------------


def read_ten_bytes_and_stop(*args):
    """``bytepair ARGS | head -c 10``: the command's exit status and standard error."""
    child = subprocess.Popen(
        [sys.executable, "-m", "bytepair", *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
    )
    child.stdout.read(10)
    child.stdout.close()
    stderr = child.stderr.read().decode()
    return child.wait(timeout=60), stderr


def test_a_closed_pipe_ends_the_command_quietly(files, tmp_path):
    # `bytepair encode --pieces ... | head`: the rest of the table (megabytes, more than a pipe
    # holds) has nowhere to go
    (tmp_path / "big.txt").write_text(TEXT * 500, encoding="utf-8")
    status, stderr = read_ten_bytes_and_stop("encode", "-t", files / "tok.json", "--pieces", tmp_path / "big.txt")
    assert status == 141 and stderr == ""


def test_decoded_text_that_a_closed_pipe_cuts_short_is_not_reported_as_written(files, tmp_path):
    # one write of megabytes: the pipe takes part of it before the reader goes, and the rest fails
    # (a disk that fills does the same); exit 0 would say that all of it was written
    tokenizer = bytepair.Tokenizer.load(files / "tok.json")
    np.save(tmp_path / "ids.npy", np.asarray(tokenizer.encode(TEXT * 2000), dtype=np.uint32))
    status, stderr = read_ten_bytes_and_stop("decode", "-t", files / "tok.json", tmp_path / "ids.npy")
    assert status == 141 and stderr == ""


def test_decode_writes_utf8_whatever_the_output_encoding(files, tmp_path):
    # as encode reads standard input: UTF-8 bytes, never an encoding error halfway
    text = "naïve café, 你好\n"
    tokenizer = bytepair.train(text * 5, mode="byte", vocab_size=270, progress=False)
    tokenizer.save(tmp_path / "tok.json")
    ids = " ".join(map(str, tokenizer.encode(text)))
    result = subprocess.run(
        [sys.executable, "-m", "bytepair", "decode", "-t", str(tmp_path / "tok.json"), "--ids", ids],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode("utf-8") == text


@pytest.mark.parametrize("command", [["inspect", "{tok}"], ["encode", "-t", "{tok}", "--pieces", "{text}"]])
def test_a_table_shows_what_the_output_encoding_lacks_as_escapes(tmp_path, command):
    (tmp_path / "text.txt").write_text("café café café\n", encoding="utf-8")
    bytepair.train("café café café\n" * 5, mode="byte", vocab_size=270, progress=False).save(tmp_path / "tok.json")
    args = [a.format(tok=tmp_path / "tok.json", text=tmp_path / "text.txt") for a in command]
    result = subprocess.run(
        [sys.executable, "-m", "bytepair", *args],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert "caf\\xe9" in result.stdout.decode("ascii")


# -- signals ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kill_signal", "line"), [(signal.SIGTERM, "terminated"), (signal.SIGINT, "interrupted")])
def test_a_signal_ends_any_command_with_one_line_and_the_shell_status(tmp_path, kill_signal, line):
    # train waits on standard input, which stays open: the signal comes while it reads
    child = subprocess.Popen(
        [sys.executable, "-m", "bytepair", "train", "-", "-o", str(tmp_path / "tok.json")],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        # a child started in the background may inherit Ctrl-C ignored; a user's command does not
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    child.stdin.write(TEXT.encode())
    child.stdin.flush()
    assert child.stderr.readline().startswith(b"training ")  # reading has begun
    child.send_signal(kill_signal)
    assert child.wait(timeout=60) == 128 + kill_signal
    assert child.stderr.read().decode() == line + "\n"
    child.stdin.close()
    assert list(tmp_path.iterdir()) == []


# The console script as pip writes it for the entry point pyproject.toml declares, run after
# a finder that stops the first import of a bytepair module (inside the package's __init__):
# it says so on standard output and waits on standard input, where Ctrl-C finds it.
CONSOLE_SCRIPT = """
import sys

class StopInside:
    def find_spec(self, name, path=None, target=None):
        if name.startswith("bytepair."):
            sys.meta_path.remove(self)
            print("importing", flush=True)
            sys.stdin.read()

sys.meta_path.insert(0, StopInside())
from {module} import {function}
sys.exit({function}())
"""


def test_ctrl_c_while_the_command_imports_the_package_is_one_line_and_the_shell_status():
    import tomllib
    from pathlib import Path

    from datafiles import package_env

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    module, function = pyproject["project"]["scripts"]["bytepair"].split(":")
    child = subprocess.Popen(
        [sys.executable, "-c", CONSOLE_SCRIPT.format(module=module, function=function), "train", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=package_env(),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert child.stdout.readline() == b"importing\n", child.communicate(timeout=60)
    child.send_signal(signal.SIGINT)
    assert child.wait(timeout=60) == 128 + signal.SIGINT
    assert child.stderr.read().decode() == "interrupted\n"
    child.stdin.close()
    child.stdout.close()
    child.stderr.close()


# -- a standard stream that is closed (`2>&-`, a service started without one) ------------------------


def bytepair_with_closed(redirect, *args):
    """The command in a child whose standard stream is closed by ``redirect`` (``<&-``, ``>&-``, ``2>&-``)."""
    script = f'exec "$0" -m bytepair "$@" {redirect}'
    return subprocess.run(
        ["sh", "-c", script, sys.executable, *map(str, args)], capture_output=True, timeout=60, check=False
    )


@pytest.mark.parametrize(
    "command",
    [
        ["encode", "-t", "{tok}", "-"],
        ["decode", "-t", "{tok}"],
        ["train", "-", "-o", "{out}/tok.json"],
        ["encode-corpus", "-", "-t", "{tok}", "-o", "{out}/corpus"],
        ["compare", "-t", "{tok}", "-"],
        ["view", "-t", "{tok}", "-", "-o", "{out}/page.html"],
    ],
    ids=lambda command: command[0],
)
def test_a_closed_standard_input_is_an_error_before_any_work(files, tmp_path, command):
    args = [a.format(tok=files / "tok.json", out=tmp_path) for a in command]
    result = bytepair_with_closed("<&-", *args)
    assert result.returncode == 2
    assert result.stderr.decode().endswith(
        "error: standard input is closed, so - has nothing to read; give a file instead\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["encode", "-t", "{tok}", "{text}"], ["decode", "-t", "{tok}", "104", "105"]])
def test_a_result_for_a_closed_standard_output_is_an_error(files, command):
    args = [a.format(text=files / "text.txt", tok=files / "tok.json") for a in command]
    result = bytepair_with_closed(">&-", *args)
    assert result.returncode == 2
    assert result.stderr.decode() == (
        "error: standard output is closed, so the result has nowhere to go; redirect it to a file\n"
    )


@pytest.mark.parametrize(
    "command",
    [
        ["train", "{text}", "--vocab-size", "60", "-o", "{out}/tok.json"],
        ["encode-corpus", "{text}", "-t", "{tok}", "-o", "{out}/corpus"],
    ],
    ids=["train", "encode-corpus"],
)
def test_a_closed_standard_error_hides_the_progress_bar_only(files, tmp_path, command):
    args = [a.format(text=files / "text.txt", tok=files / "tok.json", out=tmp_path) for a in command]
    result = bytepair_with_closed("2>&-", *args)
    assert result.returncode == 0, result.stdout
    assert (tmp_path / "tok.json").is_file() or (tmp_path / "corpus" / "meta.json").is_file()
