"""The engine's C++ on its own: tests/native/test_engine.cpp, built with the engine's flags.

The native program checks the structures beside the loops (pair table with duplicate ranks,
map growth, the rank-bucket walk stepping back, hashing of 8-25-byte keys, the thread helper,
the worker pool's budget); this file builds it into ``tmp_path`` and runs it, and checks that
every engine header compiles on its own (so none leans on another's includes) without a
warning under ``-Wall -Wextra``.
"""

import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "src" / "bytepair" / "engine"
PROGRAM = ROOT / "tests" / "native" / "test_engine.cpp"
FLAGS = ["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-pthread", f"-I{ENGINE}"]

COMPILER = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
pytestmark = pytest.mark.skipif(COMPILER is None, reason="no C++ compiler (c++, g++, clang++) on PATH")


def _build(tmp_path, extra=()):
    binary = tmp_path / "test_engine"
    command = [COMPILER, *FLAGS, *extra, str(PROGRAM), "-o", str(binary)]
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
    return binary, result


@pytest.mark.slow
def test_native_program_passes(tmp_path):
    binary, build = _build(tmp_path)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(binary)], capture_output=True, text=True, check=False, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ok" in run.stdout


@pytest.mark.slow
def test_native_program_passes_under_sanitizers(tmp_path):
    binary, build = _build(tmp_path, ["-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"])
    if build.returncode != 0:
        pytest.skip(f"this compiler cannot build with sanitizers: {build.stderr.strip()[:200]}")
    run = subprocess.run([str(binary)], capture_output=True, text=True, check=False, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.slow
@pytest.mark.parametrize("header", sorted(path.name for path in ENGINE.glob("*.hpp")))
def test_each_header_compiles_alone(tmp_path, header):
    source = tmp_path / "only.cpp"
    source.write_text(f'#include "{header}"\n#include "{header}"\nint main() {{ return 0; }}\n')
    includes = [f"-I{sysconfig.get_paths()['include']}"] if header in ("py_lists.hpp", "py_ids.hpp") else []
    result = subprocess.run(
        [COMPILER, *FLAGS, *includes, "-fsyntax-only", str(source)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, f"{header}: {result.stderr}"


def test_no_cpp_in_cython_strings():
    """The engine's C++ lives in engine/, not in string literals of the Cython sources."""
    for path in sorted((ROOT / "src" / "bytepair").glob("_*.p*")):
        if path.suffix in (".pyx", ".pxi", ".pxd"):
            assert "cdef extern from *" not in path.read_text(), f"{path.name} holds C++ in a string"
