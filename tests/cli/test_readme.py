"""The README runs as written: its shell and Python blocks, in order, in a scratch folder.

Every ```sh / ```bash / ```console (``$`` lines) and ```python block of README.md runs in the
order it appears, from one scratch folder, as a reader following the page would run it: shell
blocks by bash (``set -e -o pipefail``, so any failing line fails the test), Python blocks in
one namespace (later blocks use the names earlier ones made). The data is small: the files
the README names (``train.txt``, ``corpus.txt``, ``udhr/``, ``path/to/wikitext-2``...) are
slices of the real corpora, and ``vocab/`` is the data folder's vocabularies, so nothing is
downloaded. ``SUBSTITUTIONS`` shrinks what would take minutes (GPT training) and names the data;
``SKIPPED`` lists the few lines that cannot run here, each with its reason. Both tables must
match the README: a line they name that is gone fails the test, as does a stale README line.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from datafiles import ROOT, data_file, package_env

pytestmark = [pytest.mark.slow, pytest.mark.data]

README = ROOT / "README.md"

TINY_GPT = "--batch-size 4 --block-size 32 --embedding-dim 32 --num-heads 2 --num-layers 1 --no-progress"

# (README text, what runs instead): each must occur in the README.
SUBSTITUTIONS = [
    ("path/to/wikitext-2", "wikitext-2"),  # the small slices made below
    (
        "bytepair gpt train prepared/encoded_bpe --out checkpoints/bpe ",
        f"bytepair gpt train prepared/encoded_bpe --out checkpoints/bpe --max-steps 20 --eval-interval 10 {TINY_GPT} ",
    ),
    ("--characters 600000 --out comparison", f"--characters 30000 --out comparison --eval-characters 2000 {TINY_GPT}"),
    ('bytepair.load("path/to/hf-folder")', 'bytepair.load("vocab/hf/llama3")'),  # a folder with both files
]

# README lines that do not run here, and why.
SKIPPED = {
    "python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/bytepair demo": "installs the package (the tests run on the checkout)",
    'python3 -m venv .venv && .venv/bin/pip install -q torch==2.13.0 && .venv/bin/pip install -q ".[test,gpt]"': "installs the package and its extras",
    ".venv/bin/python -m pytest -q                                      # fast tier, one worker per core": "runs the test suite this test is part of",
    '.venv/bin/python -m pytest -q -p no:cacheprovider -m "" -n 0 tests # every tier in one process, as CI runs it': "runs the test suite this test is part of",
    "bytepair train corpus/ --mode byte --pattern cl100k --vocab-size 32768 -o tok.json --ray auto": "needs a Ray cluster to join",
    "bytepair encode-corpus corpus/ -t tok.json -o shards --shard-tokens 100000000 --ray auto": "needs a Ray cluster to join",
    "bytepair view -t cl100k_base -t tok.json --vocab-dir vocab/ --serve   # type text, see tokens live": "serves a page until stopped",
    'pip install ".[bench]" && python bench/run.py --quick     # or, in the checkout: bytepair bench --quick': "installs the benchmark extras and runs the benchmarks",
}

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def readme_blocks(text):
    """``(language, code, line number)`` of the runnable blocks, in order."""
    blocks = []
    for match in FENCE.finditer(text):
        language, code = match.group(1), match.group(2)
        line = text.count("\n", 0, match.start()) + 2
        if language == "console":
            code = "".join(row[2:] + "\n" for row in code.splitlines() if row.startswith("$ "))
            language = "sh"
        if language in ("sh", "bash", "python"):
            blocks.append((language, code, line))
    return blocks


def without_skipped(code):
    return "".join(row + "\n" for row in code.splitlines() if row not in SKIPPED)


def make_scratch(folder: Path):
    """The files and folders the README's commands read, small."""
    train = data_file("wikitext-2", "train.txt").read_text(encoding="utf-8")[:300_000]
    valid = data_file("wikitext-2", "valid.txt").read_text(encoding="utf-8")[:40_000]
    test = data_file("wikitext-2", "test.txt").read_text(encoding="utf-8")[:40_000]
    wikitext = folder / "wikitext-2"
    wikitext.mkdir()
    for directory in (folder, wikitext):
        for name, text in (("train.txt", train), ("valid.txt", valid), ("test.txt", test)):
            (directory / name).write_text(text, encoding="utf-8")
    (folder / "corpus.txt").write_text(train, encoding="utf-8")
    documents = folder / "data"
    documents.mkdir()
    for index in range(4):
        (documents / f"part{index}.txt").write_text(train[index * 50_000 : (index + 1) * 50_000], encoding="utf-8")
    # a .txt file is one document: enough documents besides them that --val-fraction 0.005 draws one
    lines = [json.dumps({"text": line}) + "\n" for line in valid.splitlines() if line.strip()]
    (documents / "lines.jsonl").write_text("".join(lines), encoding="utf-8")
    udhr = folder / "udhr"
    udhr.mkdir()
    for language in ("eng", "fra", "rus", "cmn_hans", "arb", "hin"):
        (udhr / f"{language}.txt").symlink_to(data_file("multilingual", "udhr", f"{language}.txt"))
    (folder / "notes.txt").write_text(valid[:3_000], encoding="utf-8")
    (folder / "vocab").symlink_to(data_file("vocab"))
    tools = folder / ".bin"
    tools.mkdir()
    for name, command in (("bytepair", f'"{sys.executable}" -m bytepair'), ("python", f'"{sys.executable}"')):
        (tools / name).write_text(f'#!/bin/sh\nexec {command} "$@"\n', encoding="utf-8")
        (tools / name).chmod(0o755)
    return tools


def run_shell(code, line, folder, env):
    script = "set -e -o pipefail\ntrap 'echo \"README command failed: $BASH_COMMAND\" >&2' ERR\n" + code
    result = subprocess.run(
        ["bash", "-c", script],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=600,
    )
    assert result.returncode == 0, (
        f"README.md's shell block at line {line} failed (exit {result.returncode}):\n{code}\n"
        f"--- stderr (end) ---\n{result.stderr[-3000:]}\n--- stdout (end) ---\n{result.stdout[-2000:]}"
    )


def run_python(code, line, namespace):
    try:
        exec(compile(code, f"README.md:{line}", "exec"), namespace)
    except Exception as error:
        pytest.fail(
            f"README.md's Python block at line {line} failed: {type(error).__name__}: {error}\n{code}", pytrace=False
        )


def test_the_tables_name_readme_lines():
    text = README.read_text(encoding="utf-8")
    for old, _ in SUBSTITUTIONS:
        assert old in text, f"SUBSTITUTIONS names {old!r}, which the README no longer has"
    lines = set(text.splitlines())
    for skipped in SKIPPED:
        assert skipped in lines, f"SKIPPED names {skipped!r}, which the README no longer has"


def test_every_readme_block_runs_in_order(tmp_path, monkeypatch):
    pytest.importorskip("torch", reason="the README's GPT section needs bytepair[gpt]")
    pytest.importorskip("matplotlib", reason="the README's GPT comparison and sweep plot need matplotlib")
    text = README.read_text(encoding="utf-8")
    for old, new in SUBSTITUTIONS:
        text = text.replace(old, new)
    tools = make_scratch(tmp_path)
    env = package_env(
        PATH=f"{tools}{os.pathsep}{os.environ.get('PATH', '')}",
        BYTEPAIR_VOCAB_DIR=str(tmp_path / "vocab"),
        BYTEPAIR_CACHE=str(tmp_path / ".cache"),
    )
    for name in ("BYTEPAIR_VOCAB_DIR", "BYTEPAIR_CACHE"):
        monkeypatch.setenv(name, env[name])
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__readme__"}
    blocks = readme_blocks(text)
    assert sum(language == "python" for language, _, _ in blocks) >= 5 and len(blocks) >= 15
    for language, code, line in blocks:
        code = without_skipped(textwrap.dedent(code))
        if not code.strip() or all(row.lstrip().startswith("#") or not row.strip() for row in code.splitlines()):
            continue
        if language == "python":
            run_python(code, line, namespace)
        else:
            run_shell(code, line, tmp_path, env)


def test_the_compare_table_shown_is_what_its_command_prints(tmp_path):
    # the ```text block after the paragraph comparison is that command's output, figure for figure
    text = README.read_text(encoding="utf-8")
    shown = re.search(
        r"```sh\n(printf [^\n]*> paragraph\.txt\nbytepair compare paragraph\.txt[^\n]*)\n```\n```text\n(.*?)```",
        text,
        re.DOTALL,
    )
    assert shown, "README.md no longer shows the paragraph comparison with its output"
    tools = make_scratch(tmp_path)
    env = package_env(PATH=f"{tools}{os.pathsep}{os.environ.get('PATH', '')}")
    result = subprocess.run(
        ["bash", "-c", "set -e\n" + shown.group(1)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert [row.rstrip() for row in result.stdout.splitlines()] == shown.group(2).splitlines()
