"""Reading files that may come from anywhere: bounded, and refused with one clear sentence.

A tokenizer file or a text file named on the command line can be anything: ``/dev/zero``,
a folder, a JSON document nested 100,000 levels deep, a 5,000-digit integer. This module
reads them so that each of those ends in the caller's error class (``ArtifactError``,
``FormatError``, ``UsageError``), naming the file and what is wrong, never in a
``MemoryError``, ``RecursionError`` or a traceback.

- ``read_limited(path, limit, error)``: the bytes of a regular file or a pipe, at most
  ``limit`` of them; devices and folders are refused before anything is read.
- ``parse_json(text, where, error)``: ``json.loads`` whose failures (syntax, nesting deeper
  than Python's recursion limit, integers beyond Python's digit limit) raise ``error``.

It does not know any file format; the format modules check the fields.

Example:
    >>> parse_json('{"a": [1, 2]}', "x.json", ValueError)
    {'a': [1, 2]}
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

# The largest tokenizer file read: 4x the largest published one we know (o200k's HF
# tokenizer.json with merges, about 30 MB; Llama 3's is 9 MB, cl100k's .tiktoken 1.7 MB).
MAX_TOKENIZER_BYTES = 128 << 20


def check_readable(path, error, what="file"):
    """Refuse a missing path, a folder or a device (``/dev/zero``) before reading it."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise error(f"{path}: no such {what}") from None
    except OSError as problem:
        raise error(f"{path}: cannot read it ({problem.strerror})") from None
    if stat.S_ISDIR(mode):
        raise error(f"{path} is a folder; give a {what}")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
        raise error(f"{path} is a device, not a {what}; give a regular file (or - for standard input where allowed)")


def read_limited(path, limit, error, what="file"):
    """The bytes of ``path``; more than ``limit`` bytes raises ``error`` naming the limit."""
    check_readable(path, error, what)
    try:
        with open(path, "rb") as file:
            data = file.read(limit + 1)
    except OSError as problem:
        raise error(f"{path}: cannot read it ({problem.strerror or problem})") from None
    if len(data) > limit:
        raise error(
            f"{path}: larger than {limit >> 20} MiB, which no {what} is; check the path"
        )
    return data


def read_tokenizer_text(path, error, what="tokenizer file"):
    """A tokenizer file's UTF-8 text, size-capped at ``MAX_TOKENIZER_BYTES``."""
    data = read_limited(path, MAX_TOKENIZER_BYTES, error, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as problem:
        raise error(
            f"{path}: not a {what} (not UTF-8 text: {problem.reason} at byte {problem.start})"
        ) from None


def parse_json(text, where, error):
    """``json.loads(text)``; any failure raises ``error`` with the place and the reason."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as problem:
        hint = "truncated" if problem.pos >= len(text.rstrip()) - 1 else "not valid JSON"
        raise error(f"{where}: {hint} (line {problem.lineno}, column {problem.colno}: {problem.msg})") from None
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply to be a tokenizer file") from None
    except ValueError as problem:  # an integer past Python's digit limit (4300 by default)
        raise error(f"{where}: not a usable JSON file ({_first_sentence(problem)})") from None


def _first_sentence(problem):
    return str(problem).split(";")[0]

