"""The benchmark corpora, built the same way on every run.

Each corpus is a list of documents (line-aligned blocks of at most 64 Ki characters, see
``adapters.line_blocks``), so every library trains and encodes exactly the same strings:

| name | what |
|---|---|
| ``wikitext-train``, ``wikitext-valid`` | WikiText-2 (tokenized variant), from the data folder |
| ``english-docs`` | the Python 3.11 documentation sources (11 MB of English prose with code) |
| ``stdlib-code`` | every ``.py`` file of this Python's standard library, sorted by path, tests and site-packages left out (about 12 MB) |
| ``udhr`` | the Universal Declaration of Human Rights in 460 languages, files in name order |
| ``cjk-emoji`` | 120,000 random words of 1-8 characters drawn from the CJK ideographs and the emoji blocks (seeded; 1.9 MB), almost no piece twice: every piece merged from bytes |
| ``mix-1mb``, ``mix-10mb``, ``mix-100mb`` | prefixes of the mix: the data folder's text plus installed packages' ``.py`` files (sorted), capped at 100 MB, its blocks shuffled with a fixed seed so every prefix has the same blend |

The data folder is ``$BYTEPAIR_DATA`` (default ``../shared/data`` beside the project). A corpus
whose files are missing raises ``CorpusUnavailable`` saying which file; the harness skips it.

Also here: the pathological inputs (a run of one character, random bytes read as Latin-1) and
1 MB of prose to compare them with. Nothing is written to disk; corpora are built in memory.
"""

from __future__ import annotations

import hashlib
import os
import random
import sysconfig
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from adapters import line_blocks

ROOT = Path(__file__).resolve().parent.parent
MB = 1_000_000
MIX_CAP = 100 * MB
MIX_SEED = 20240501


class CorpusUnavailable(Exception):
    """A corpus whose source files are not on this machine."""


@dataclass
class Corpus:
    """A named list of documents."""

    name: str
    description: str
    documents: list

    @cached_property
    def text(self):
        return "".join(self.documents)

    @cached_property
    def nbytes(self):
        return sum(len(d.encode("utf-8", "surrogatepass")) for d in self.documents)

    @cached_property
    def sha256(self):
        digest = hashlib.sha256()
        for document in self.documents:
            digest.update(document.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def prefix(self, max_bytes, name=None):
        """The first whole documents that fit in ``max_bytes`` UTF-8 bytes (at least one),
        named after the base corpus and the size kept unless ``name`` is given."""
        kept, size = [], 0
        for document in self.documents:
            length = len(document.encode("utf-8"))
            if kept and size + length > max_bytes:
                break
            kept.append(document)
            size += length
        base = self.name.split("[")[0]
        return Corpus(name or f"{base}[:{size / MB:.2g}MB]", self.description, kept)


def data_dir():
    """The shared data folder: $BYTEPAIR_DATA, default ../shared/data beside the project."""
    return Path(os.environ.get("BYTEPAIR_DATA", ROOT.parent / "shared" / "data"))


def _data_file(relative):
    path = data_dir() / relative
    if not path.is_file():
        raise CorpusUnavailable(f"{path} is missing (set BYTEPAIR_DATA to the data folder)")
    return path


def _read(path):
    return Path(path).read_text(encoding="utf-8")


def read_data_text(relative):
    """A UTF-8 file of the data folder, or ``CorpusUnavailable`` saying which is missing."""
    return _read(_data_file(relative))


def _udhr_text():
    folder = data_dir() / "multilingual" / "udhr"
    files = sorted(folder.glob("*.txt"))
    if not files:
        raise CorpusUnavailable(f"{folder} has no .txt files (set BYTEPAIR_DATA to the data folder)")
    return "".join(_read(f) for f in files)


def cjk_emoji_text(words=120_000, seed=0):
    """Random words of CJK ideographs (U+4E00-U+9FFE) and emoji (U+1F300-U+1FAFE), 1-8
    characters each, joined by spaces: a text whose pieces are nearly all new."""
    rng = random.Random(seed)
    chars = [chr(c) for c in range(0x4E00, 0x9FFF)] + [chr(c) for c in range(0x1F300, 0x1FAFF)]
    return " ".join("".join(rng.choice(chars) for _ in range(rng.randint(1, 8))) for _ in range(words))


def space_blocks(text, max_chars=1 << 16):
    """``text`` (one line) cut after a space into documents of at most ``max_chars`` characters."""
    blocks, start = [], 0
    while start < len(text):
        end = len(text) if len(text) - start <= max_chars else text.rindex(" ", start, start + max_chars) + 1
        blocks.append(text[start:end])
        start = end
    return blocks


def _python_files(root, skip):
    """UTF-8 text of the ``.py`` files under ``root`` in sorted path order, except ``skip``."""
    for path in sorted(Path(root).rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if skip(relative) or not path.is_file():
            continue
        try:
            yield path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue  # a few files declare another encoding; leaving them out keeps it exact


def _is_stdlib_extra(relative):
    parts = relative.split("/")
    return parts[0] in ("site-packages", "dist-packages") or any(
        p in ("test", "tests", "idle_test") for p in parts[:-1]
    )


def stdlib_code():
    root = sysconfig.get_paths()["stdlib"]
    return "".join(_python_files(root, _is_stdlib_extra))


def _mix_sources():
    """The mix's texts in a fixed order: the data folder's prose, then packages' code."""
    for relative in (
        "wikitext-2/train.txt",
        "wikitext-2/valid.txt",
        "wikitext-2/test.txt",
        "english/python-3.11-docs.txt",
        "tinyshakespeare/input.txt",
    ):
        yield read_data_text(relative)
    yield _udhr_text()
    site = sysconfig.get_paths()["purelib"]
    # bytepair's own files are left out, so the mix does not change with its version.
    yield from _python_files(site, lambda relative: relative.startswith("bytepair/"))


def mix_blocks(cap=MIX_CAP):
    """The mix, capped at ``cap`` UTF-8 bytes, as line blocks shuffled with a fixed seed."""
    blocks, size = [], 0
    for block in (b for text in _mix_sources() for b in line_blocks(text)):
        length = len(block.encode("utf-8"))
        if size + length > cap:
            break
        blocks.append(block)
        size += length
    random.Random(MIX_SEED).shuffle(blocks)
    return blocks


_BUILDERS = {
    "wikitext-train": ("WikiText-2 train", lambda: read_data_text("wikitext-2/train.txt")),
    "wikitext-valid": ("WikiText-2 validation", lambda: read_data_text("wikitext-2/valid.txt")),
    "english-docs": ("Python 3.11 documentation sources", lambda: read_data_text("english/python-3.11-docs.txt")),
    "stdlib-code": ("standard library .py files", stdlib_code),
    "udhr": ("UDHR, 460 languages", _udhr_text),
    "cjk-emoji": ("random CJK + emoji words", cjk_emoji_text),
}
# Corpora of one line, cut into documents at spaces rather than at line ends.
_ONE_LINE = {"cjk-emoji"}
MIX_SIZES = {"mix-1mb": 1 * MB, "mix-10mb": 10 * MB, "mix-100mb": 100 * MB}
NAMES = (*_BUILDERS, *MIX_SIZES)

_cache = {}


def corpus(name):
    """The corpus called ``name`` (one of ``NAMES``), built once per process."""
    if name not in _cache:
        if name in MIX_SIZES:
            if "mix" not in _cache:
                _cache["mix"] = mix_blocks()
            documents = Corpus(name, "", _cache["mix"]).prefix(MIX_SIZES[name]).documents
            description = "mix: data-folder text + site-packages .py, shuffled blocks"
        elif name in _BUILDERS:
            description, build = _BUILDERS[name]
            documents = space_blocks(build()) if name in _ONE_LINE else line_blocks(build())
        else:
            raise KeyError(f"unknown corpus {name!r}; choose from {', '.join(NAMES)}")
        _cache[name] = Corpus(name, description, documents)
    return _cache[name]


# -- pathological inputs ------------------------------------------------------------------------


def run_of_one_character(characters, character="x"):
    """``character`` repeated: a single pre-token piece of ``characters`` characters."""
    return character * characters


def random_latin1(characters, seed=0):
    """Random bytes read as Latin-1: every code point U+0000-U+00FF, no structure to merge."""
    return random.Random(seed).randbytes(characters).decode("latin-1")


def prose(characters):
    """The first ``characters`` characters of WikiText-2 validation."""
    return corpus("wikitext-valid").text[:characters]
