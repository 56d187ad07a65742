"""The one atomic writer (``bytepair._io``): staged beside the target, usual permissions,
nothing left behind on failure, symbolic links written through."""

from __future__ import annotations

import os
import stat

import pytest

import bytepair
from bytepair import _io


def umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_write_replaces_the_file_with_the_usual_mode(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    _io.write_text_atomic(target, "one\n")
    _io.write_text_atomic(target, "two\r\n")
    assert target.read_bytes() == b"two\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask()
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.txt"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.bin"
    _io.write_bytes_atomic(target, b"old")

    def failing(file):
        file.write(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _io.write_atomic(target, failing)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_a_folder_that_takes_no_new_file_names_the_target_not_the_staging_file(tmp_path):
    # a file of /proc can be opened, but no file can be made beside it; a read-only folder
    # would do too, but root writes into those
    target = "/proc/version"
    if not os.path.isfile(target):
        pytest.skip("needs Linux's /proc/version, a file in a folder that takes no new file")
    with pytest.raises(OSError) as caught:
        _io.write_text_atomic(target, "x")
    assert str(caught.value).endswith(": '/proc/version'") and ".tmp" not in str(caught.value)
    assert "writing it takes a new file beside it" in str(caught.value)


def test_a_file_where_a_folder_is_needed_is_named(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(FileExistsError) as caught:
        _io.write_text_atomic(tmp_path / "afile" / "out.json", "x")
    assert str(caught.value) == f"[Errno 17] File exists: '{tmp_path / 'afile'}'"


def test_a_full_device_names_itself():
    if not os.path.exists("/dev/full"):
        pytest.skip("needs Linux's /dev/full, a device whose every write fails with ENOSPC")
    with pytest.raises(OSError) as caught:
        _io.write_text_atomic("/dev/full", "x" * 100_000)
    assert str(caught.value) == "[Errno 28] No space left on device: '/dev/full'"


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path):
    real = tmp_path / "store" / "tokenizer.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "current.json"
    link.symlink_to(real)
    _io.write_text_atomic(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"
    assert sorted(p.name for p in real.parent.iterdir()) == ["tokenizer.json"]


def test_save_through_a_symlink_keeps_the_link(tmp_path):
    tok = bytepair.train("low lower newest widest " * 20, mode="char", vocab_size=20)
    real = tmp_path / "real.json"
    link = tmp_path / "link.json"
    link.symlink_to(real)  # dangling until the first save
    tok.save(link)
    assert link.is_symlink() and real.is_file()
    assert bytepair.Tokenizer.load(link).fingerprint == tok.fingerprint


def test_read_text_names_the_file_line_and_byte(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"ok\nbad \xff here\n")
    with pytest.raises(ValueError, match=r"bad.txt: not UTF-8 text \(byte 7, line 2: b'\\xff'\)"):
        _io.read_text(path)
