"""``bytepair prepare`` killed at any moment: OUT is the complete old output or the complete new
one, and the next run leaves no hidden file behind.

A ``python -m bytepair prepare`` child replaces an earlier output; a small wrapper script
(``PAUSER`` below, run in the child only) makes it stop at a chosen moment and say so by
writing a marker file; the test then sends SIGKILL or SIGTERM. Oracles: byte-for-byte copies
of the old and the new output, each written by an uninterrupted run, and the folder listing
beside OUT (the staging folder, the lock, the old copy of a switch).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bytepair.datasets import find_split_files
from bytepair.datasets.files import FolderLock, remove_stale
from bytepair.datasets.prepare import prepare
from datafiles import package_env
from generated import write_wikitext_folder

pytestmark = pytest.mark.slow

SETTINGS = {"vocab_size": 120, "max_chars": None, "block_chars": 3_000}
FLAGS = ["--vocab-size", "120", "--max-chars", "0", "--block-chars", "3000", "--num-threads", "2", "--quiet"]

# Runs `bytepair prepare` with one moment made to wait: it writes the marker file, then sleeps.
# Moments: "encode" (a worker thread, while the .bin files are half written), "before-switch"
# (everything staged), "after-exchange" (the folders exchanged, the old one not yet removed),
# "between-renames" (the two-rename switch of systems without an atomic exchange, cut after
# the first rename). The sleeps inside held regions are short: there a signal waits for them.
PAUSER = r"""
import os, sys, time, shutil
from pathlib import Path

moment, marker = os.environ["PAUSE_AT"], Path(os.environ["PAUSE_MARKER"])

def pause(seconds):
    if not marker.exists():
        marker.write_text(moment)
        time.sleep(seconds)

from bytepair.datasets import encode, files, prepare

if moment == "encode":
    original_block, calls = encode._encode_block, []
    def slow_block(*args):
        calls.append(1)
        if len(calls) == 4:
            pause(3)
        return original_block(*args)
    encode._encode_block = slow_block
elif moment == "before-switch":
    original_sync = prepare.sync_tree
    def sync_then_wait(folder):
        original_sync(folder)
        pause(60)
    prepare.sync_tree = sync_then_wait
elif moment == "after-exchange":
    original_rmtree = shutil.rmtree
    def wait_then_remove(path, *args, **kwargs):
        if sys._getframe(1).f_code.co_name == "switch_folder":
            pause(3)
        return original_rmtree(path, *args, **kwargs)
    shutil.rmtree = wait_then_remove
elif moment == "between-renames":
    files._exchange = lambda first, second: False
    original_rename = os.rename
    def rename_then_wait(source, target):
        original_rename(source, target)
        if ".old-" in Path(target).name:
            pause(3)
    os.rename = rename_then_wait

from bytepair.cli import main
sys.exit(main(["prepare"] + sys.argv[1:]))
"""


def files_in(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in Path(folder).rglob("*") if p.is_file()}


def hidden_beside(out):
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith("."))


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """Two corpora and the complete output of each (written once, uninterrupted)."""
    root = tmp_path_factory.mktemp("staging")
    corpora = {
        name: write_wikitext_folder(root / name, sizes=(60_000, 8_000, 8_000), seed=seed)
        for name, seed in (("old", 1), ("new", 7))
    }
    expected = {}
    for name, folder in corpora.items():
        prepare(
            root / f"expected-{name}",
            files=find_split_files(folder),
            num_threads=2,
            log=None,
            progress=False,
            **SETTINGS,
        )
        expected[name] = files_in(root / f"expected-{name}")
    assert expected["old"] != expected["new"]
    return corpora, expected


def start_over(tmp_path, outputs):
    """OUT holding the old output, plus the hidden temporary files an earlier version of
    prepare could leave in it after a kill."""
    corpora, expected = outputs
    out = tmp_path / "work" / "out"
    prepare(out, files=find_split_files(corpora["old"]), num_threads=2, log=None, progress=False, **SETTINGS)
    assert files_in(out) == expected["old"]
    return out


def run_until_paused(out, corpus, moment, tmp_path):
    marker = tmp_path / f"paused-{moment}"
    marker.unlink(missing_ok=True)
    env = package_env(PAUSE_AT=moment, PAUSE_MARKER=str(marker))
    child = subprocess.Popen(
        [sys.executable, "-c", PAUSER, str(corpus), "-o", str(out), *FLAGS],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not marker.exists():
        if child.poll() is not None:
            pytest.fail(f"prepare ended before the moment {moment!r} (exit {child.returncode}): {child.stderr.read()}")
        if time.monotonic() > deadline:
            child.kill()
            pytest.fail(f"prepare never reached the moment {moment!r}")
        time.sleep(0.02)
    return child


def finish_with_a_new_run(out, outputs):
    corpora, expected = outputs
    prepare(out, files=find_split_files(corpora["new"]), num_threads=2, log=None, progress=False, **SETTINGS)
    assert files_in(out) == expected["new"]
    assert hidden_beside(out) == []  # no staging folder, no old copy, no lock
    assert not [p for p in out.rglob(".*")]  # no hidden temporary file inside


@pytest.mark.parametrize("moment", ["encode", "before-switch", "after-exchange"])
def test_sigkill_leaves_the_old_or_the_new_output_and_the_next_run_cleans_up(tmp_path, outputs, moment):
    corpora, expected = outputs
    out = start_over(tmp_path, outputs)
    child = run_until_paused(out, corpora["new"], moment, tmp_path)
    child.kill()
    child.wait(timeout=60)
    assert files_in(out) == (expected["new"] if moment == "after-exchange" else expected["old"])
    assert ".out.partial" in hidden_beside(out)  # what the kill left: the staging folder (or the old copy)
    finish_with_a_new_run(out, outputs)


@pytest.mark.parametrize("moment", ["encode", "before-switch", "after-exchange", "between-renames"])
def test_sigterm_cleans_up_like_ctrl_c(tmp_path, outputs, moment):
    corpora, expected = outputs
    out = start_over(tmp_path, outputs)
    child = run_until_paused(out, corpora["new"], moment, tmp_path)
    child.send_signal(signal.SIGTERM)
    _, error = child.communicate(timeout=120)
    assert child.returncode == 143, error
    assert "terminated" in error and "Traceback" not in error
    # Before the switch the run is undone; once it started, the switch completes first.
    switched = moment in ("after-exchange", "between-renames")
    assert files_in(out) == (expected["new"] if switched else expected["old"])
    assert hidden_beside(out) == []
    finish_with_a_new_run(out, outputs)


def test_sigkill_between_the_two_renames_is_undone_by_the_next_run(tmp_path, outputs):
    """Where the system has no atomic exchange: OUT is briefly missing; the old copy beside
    it is put back first thing by the next run (``remove_stale``, under the lock)."""
    corpora, expected = outputs
    out = start_over(tmp_path, outputs)
    child = run_until_paused(out, corpora["new"], "between-renames", tmp_path)
    child.kill()
    child.wait(timeout=60)
    assert not out.exists() and any(name.startswith(".out.old-") for name in hidden_beside(out))
    with FolderLock(out):
        remove_stale(out)
    assert files_in(out) == expected["old"]
    assert hidden_beside(out) == []
    finish_with_a_new_run(out, outputs)


def test_leftovers_of_earlier_versions_go_with_the_next_run(tmp_path, outputs):
    out = start_over(tmp_path, outputs)
    leftovers = [out / ".tokenizer.json.k2j3.tmp", out / "encoded_bpe" / ".train.bin.x9q1.tmp"]
    for path in leftovers:
        path.write_bytes(b"\0" * 1000)
    finish_with_a_new_run(out, outputs)


def test_a_folder_holding_other_files_is_refused_before_any_work(tmp_path, outputs):
    from bytepair.datasets.errors import DatasetError

    corpora, _ = outputs
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(DatasetError, match=r"notes\.txt.*choose another output folder"):
        prepare(out, files=find_split_files(corpora["new"]), log=None, progress=False, **SETTINGS)
    assert files_in(out) == {"notes.txt": b"keep me"} and hidden_beside(out) == []


def test_two_runs_on_one_folder_the_second_is_refused(tmp_path, outputs):
    corpora, expected = outputs
    out = start_over(tmp_path, outputs)
    child = run_until_paused(out, corpora["new"], "before-switch", tmp_path)
    try:
        with pytest.raises(OSError, match="another run is writing this folder"):
            prepare(out, files=find_split_files(corpora["new"]), log=None, progress=False, **SETTINGS)
    finally:
        child.kill()
        child.wait(timeout=60)
    assert files_in(out) == expected["old"]
    finish_with_a_new_run(out, outputs)


def test_the_current_folder_is_refused_as_the_output(tmp_path, outputs, monkeypatch):
    from bytepair.datasets.errors import DatasetError

    corpora, _ = outputs
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DatasetError, match="current folder.*-o prepared"):
        prepare(".", files=find_split_files(corpora["new"]), log=None, progress=False, **SETTINGS)
    assert list(tmp_path.iterdir()) == []
