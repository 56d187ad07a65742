"""Documents out of corpus files: text files, JSON Lines, JSON arrays and Parquet, compressed or not.

``find_inputs`` turns what a user typed (files, folders, globs, ``-``) into ``Input`` records
(path, format, compression, size, modification time); ``read_documents`` yields the documents
of one input as strings, in file order, streamed (a JSON array is the one format read whole);
``read_sized_documents`` yields them with their size in UTF-8 bytes.
This module knows nothing about tokenizers or shards (``corpus.py``, ``shards.py``), so that a
distributed run can read one input per worker with the same function.

Formats, by file name (compression suffix ``.gz`` or ``.zst`` first)::

    .txt              one document per file, or documents cut by a separator regex (split_on)
    .jsonl, .ndjson   one JSON object per line; the document is its ``text_field``
    .json             a JSON array of objects, or JSON Lines (what HF ``to_json`` writes)
    .parquet          the ``text_field`` column, batch by batch (needs pyarrow)
    -                 standard input: JSON Lines if it starts with ``{``, else text

A bad document (invalid UTF-8, bad JSON, a missing or non-string field) raises
``DocumentError`` naming the file and the line (or row); with ``skip_bad`` it is counted in
``ReadStats`` and skipped instead. Empty documents are dropped and counted. A file that starts
with a UTF-16 or UTF-32 byte-order mark raises ``DocumentError`` for the whole file.

Example:
    >>> [source] = find_inputs(["corpus.jsonl"])                      # doctest: +SKIP
    >>> next(read_documents(source, text_field="text"))                # doctest: +SKIP
    'The first article ...'
"""

from __future__ import annotations

import codecs
import glob
import gzip
import importlib.util
import io
import json
import os
import zlib
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import regex

from bytepair._io import standard_input
from bytepair.errors import BadDocumentError, DocumentError, MissingDependencyError, UsageError

FORMATS = {".txt": "txt", ".text": "txt", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".parquet": "parquet"}
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd"}
# Text files cut by a separator are searched in windows of this many characters; a separator
# match is only trusted when it ends this far before the window's end (see ``_split_stream``).
SPLIT_WINDOW = 1 << 22
SPLIT_MARGIN = 1 << 16
PARQUET_BATCH_ROWS = 1024
# The byte-order marks of encodings that inputs are not in (UTF-32 first: its little-endian
# mark starts with UTF-16's). A UTF-8 one is text like any other, except before JSON.
OTHER_ENCODING_MARKS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)
# Bytes per read of a file: the default 8 KB makes every longer JSON line a join of reads
# (measured: 20 ms against 6 ms to iterate the lines of 20 MB of WikiText-2 articles).
READ_BUFFER = 1 << 20


@dataclass(frozen=True)
class Input:
    """One input: ``path`` (``"-"`` for standard input), ``format``, ``compression``, and the
    size and modification time of the file (``None`` for standard input)."""

    path: str
    format: str
    compression: str | None = None
    size: int | None = None
    mtime: float | None = None

    def describe(self):
        return {
            "path": self.path,
            "format": self.format,
            "compression": self.compression,
            "size": self.size,
            "mtime": self.mtime,
        }


@dataclass
class ReadStats:
    """What reading found besides documents: bad ones skipped (by reason) and empty ones."""

    skipped: dict = field(default_factory=dict)
    empty: int = 0

    def skip(self, reason):
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def input_format(name):
    """``(format, compression)`` from a file name, or ``(None, None)`` when it is not a corpus file."""
    suffixes = [s.lower() for s in Path(name).suffixes]
    compression = COMPRESSIONS.get(suffixes[-1]) if suffixes else None
    if compression:
        suffixes = suffixes[:-1]
    return (FORMATS.get(suffixes[-1]) if suffixes else None), compression


def find_inputs(items, *, other_files_as_text=False):
    """The inputs named by ``items`` (files, folders searched recursively, globs, ``-``, or
    ``Input`` records, kept as they are), in the order given; inside a folder or glob, in sorted path order. Hidden files are left out of
    folders. Raises ``UsageError`` for a name that matches nothing usable, or a file it may not
    read. ``other_files_as_text``: a file named explicitly whose name is no corpus format
    (``input``, ``notes.md``) is UTF-8 text instead of an error (``bytepair train``, which always
    read any file as text).

    Example:
        >>> [i.path for i in find_inputs(["docs/"])]  # doctest: +SKIP
        ['docs/a.txt', 'docs/sub/b.jsonl.gz']
    """
    if isinstance(items, (str, os.PathLike)):
        items = [items]
    found, named_by = [], []  # each input, and the item that named it
    for item in items:
        inputs = [item] if isinstance(item, Input) else _named(str(item), other_files_as_text)
        found.extend(inputs)
        named_by.extend([item.path if isinstance(item, Input) else str(item)] * len(inputs))
    for source in found:  # said before any work, rather than as an errno halfway through the inputs
        if source.path != "-" and not os.access(source.path, os.R_OK):
            raise UsageError(
                f"input {source.path!r}: cannot read it (permission denied); make it readable or leave it out"
            )
    _check_named_once(found, named_by)
    return found


def _named(item, other_files_as_text):
    """The inputs one item names: a file, a folder's or a glob's corpus files, or ``-``."""
    if item == "-":
        standard_input(UsageError)  # closed: said now, before any work
        return [Input("-", "auto")]
    path = Path(item)
    if path.is_file():
        if other_files_as_text and input_format(path.name)[0] is None:
            stat = path.stat()
            return [Input(str(path), "txt", None, stat.st_size, stat.st_mtime)]
        return [_file_input(path, explicit=True)]
    if path.is_dir():
        files = sorted(
            p for p in path.rglob("*") if p.is_file() and not _hidden(p.relative_to(path)) and input_format(p.name)[0]
        )
        if not files:
            raise UsageError(f"folder {item!r} holds no corpus file ({', '.join(FORMATS)}, optionally .gz/.zst)")
        return [_file_input(p) for p in files]
    if glob.has_magic(item):
        files = sorted(Path(p) for p in glob.glob(item, recursive=True) if Path(p).is_file() and input_format(p)[0])
        if not files:
            raise UsageError(f"pattern {item!r} matches no corpus file ({', '.join(FORMATS)}, optionally .gz/.zst)")
        return [_file_input(p) for p in files]
    if path.exists():
        raise UsageError(
            f"input {item!r} is not a regular file or folder (a device or a pipe); give files, folders, "
            "globs or - for standard input"
        )
    raise UsageError(f"input {item!r}: no such file or folder; give files, folders, globs or - for standard input")


def _check_named_once(found, named_by):
    """Refuse a file that two items name (``data/`` and ``data/a.jsonl``, a link and its target,
    ``-`` twice): its documents would be encoded twice, and a model trained on them sees them twice."""
    seen = {}
    for source, item in zip(found, named_by):
        if source.path == "-":
            key = "-"
        else:
            stat = os.stat(source.path)
            key = (stat.st_dev, stat.st_ino)
        if key in seen:
            first, earlier = seen[key]
            how = f"by {earlier!r} and by {item!r}" if earlier != item else f"twice by {item!r}"
            same = f" ({first.path!r} is the same file)" if first.path != source.path else ""
            raise UsageError(
                f"input {source.path!r} is named {how}{same}, so its documents would be encoded twice; "
                "name each input once"
            )
        seen[key] = (source, item)


def _hidden(relative):
    return any(part.startswith(".") for part in relative.parts)


def _file_input(path, explicit=False):
    fmt, compression = input_format(path.name)
    if fmt is None:
        if not explicit:
            raise AssertionError(path)  # folders and globs keep only known formats
        raise UsageError(
            f"input {str(path)!r}: unknown format; name it .txt, .jsonl, .json or .parquet "
            "(optionally followed by .gz or .zst)"
        )
    if fmt == "parquet" and compression:
        raise UsageError(f"input {str(path)!r}: Parquet compresses its columns itself; decompress the file first")
    stat = path.stat()
    return Input(str(path), fmt, compression, stat.st_size, stat.st_mtime)


def check_readers(inputs):
    """Raise ``MissingDependencyError`` before any work if an input needs a missing optional package."""
    if any(i.format == "parquet" for i in inputs) and importlib.util.find_spec("pyarrow") is None:
        raise MissingDependencyError("reading .parquet files needs pyarrow: pip install 'bytepair[parquet]'")
    if any(i.compression == "zstd" for i in inputs) and importlib.util.find_spec("zstandard") is None:
        raise MissingDependencyError("reading .zst files needs the zstandard package: pip install zstandard")


def check_read_options(inputs, *, text_field="text", split_on=None):
    """Refuse a reading option that no input uses, rather than ignore it: ``split_on`` cuts
    text, and each JSON record or Parquet row is one document already; ``text_field`` (other
    than the default) names a JSON field or Parquet column, and text files have none."""
    named = [i.path for i in inputs if i.path != "-"]
    if not named or len(named) < len(inputs):
        return  # standard input may be either
    shown = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
    if split_on is not None and all(i.format != "txt" for i in inputs):
        raise UsageError(
            f"--split-on cuts text files into documents, but every input is JSON or Parquet ({shown}), "
            "where each record is one document already; leave --split-on out"
        )
    if text_field != "text" and all(i.format == "txt" for i in inputs):
        raise UsageError(
            f"--text-field {text_field!r} names a JSON field or Parquet column, but every input is text "
            f"({shown}); leave it out (--split-on cuts text into documents)"
        )


# -- reading ------------------------------------------------------------------------------------


def read_documents(source, *, text_field="text", split_on=None, skip_bad=False, stats=None, check=None):
    """The non-empty documents of one ``Input``, as strings, in file order.

    - ``text_field``: the field (JSON) or column (Parquet) holding the text.
    - ``split_on``: a regex (string or compiled); a text file is then cut into the documents
      between its matches (e.g. ``r"\\n\\s*\\n"``: blank lines). Default: a file is one document.
    - ``skip_bad``: skip bad documents (counted in ``stats``) instead of raising ``DocumentError``.
    - ``check``: ``check(text)``, what else is wrong with a document (a sentence) or None; such
      a document is bad, named by file and line like the others (e.g. ``MissingCharacters``).

    NOTE: a separator is searched in windows of 4M characters; a pattern whose match depends on
    text more than 64K characters away is not supported.
    """
    for text, _ in read_sized_documents(
        source, text_field=text_field, split_on=split_on, skip_bad=skip_bad, stats=stats, check=check
    ):
        yield text


def read_sized_documents(source, *, text_field="text", split_on=None, skip_bad=False, stats=None, check=None):
    """``read_documents``, each document with its size in UTF-8 bytes: ``(text, size)`` pairs.

    The size is a by-product of checking that the document is valid UTF-8 (the bytes read, or
    the one encoding that finds lone surrogates), so nothing encodes a document twice.

    Example:
        >>> next(read_sized_documents(source))  # doctest: +SKIP
        ('naïve', 6)
    """
    stats = stats if stats is not None else ReadStats()
    reader = _Reader(source, text_field, compiled_split_on(split_on), skip_bad, stats, check)
    for text, size in reader.documents():
        if text:
            yield text, size
        else:
            stats.empty += 1


def compiled_split_on(split_on):
    """``split_on`` compiled (a ``UsageError`` naming it when it is not a valid regex), or None."""
    if split_on is None or hasattr(split_on, "finditer"):
        return split_on
    try:
        return regex.compile(split_on)
    except regex.error as error:
        raise UsageError(f"--split-on {split_on!r} is not a valid regex: {error}") from None


class _Reader:
    def __init__(self, source, text_field, split_on, skip_bad, stats, check=None):
        self.source, self.field, self.split_on, self.skip_bad, self.stats, self.check = (
            source,
            text_field,
            split_on,
            skip_bad,
            stats,
            check,
        )
        self.name = "standard input" if source.path == "-" else source.path

    def bad(self, where, problem, reason):
        if self.skip_bad:
            self.stats.skip(reason)
            return
        raise BadDocumentError(
            f"{self.name}, {where}: {problem}; fix or remove it, or pass --skip-bad (skip_bad=True) to skip bad documents"
        )

    def accepted(self, sized, where):
        """``sized`` (text, size), or None when it is None or ``check`` finds a problem (reported);
        ``where`` may be a function, called only then."""
        if sized is None or self.check is None:
            return sized
        problem = self.check(sized[0])
        if problem is None:
            return sized
        self.bad(where() if callable(where) else where, problem, "missing characters")
        return None

    def documents(self):
        try:
            yield from self._documents()
        except (EOFError, zlib.error, gzip.BadGzipFile) as error:
            raise DocumentError(
                f"{self.name}: cannot decompress it ({error or type(error).__name__}); is the file complete?"
            ) from None
        except Exception as error:
            if type(error).__module__ == "zstd" or "Zstd" in type(error).__name__:
                raise DocumentError(f"{self.name}: cannot decompress it ({error}); is the file complete?") from None
            if isinstance(error, OSError):
                # found when the run began, gone or failing since: a read error's own message names
                # no file, and a Ray worker's comes back inside its remote traceback
                raise DocumentError(
                    f"{self.name}: cannot read it ({error.strerror or error}); every input must stay readable, "
                    "at the same path, until the run ends"
                ) from None
            raise

    def _documents(self):
        if self.source.format == "parquet":
            yield from self._parquet()
            return
        with self._open() as (binary, fmt):
            if fmt == "txt":
                yield from self._text(binary)
            elif fmt == "jsonl":
                yield from self._json_lines(binary)
            else:
                yield from self._json(binary)

    # -- opening

    def _open(self):
        return _Opened(self.source)

    # -- text

    def _text(self, binary):
        if self.split_on is None:
            data = binary.read()
            text = self._decoded(data)
            sized = self.accepted(None if text is None else (text, len(data)), "the file")
            if sized is not None:
                yield sized
            return
        yield from self._split_stream(binary)

    def _decoded(self, data):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = data[: error.start].count(b"\n") + 1
            byte = data[error.start : error.start + 1]
            self.bad(f"line {line}", f"not UTF-8 (byte {byte!r} at offset {error.start})", "invalid UTF-8")
            return None

    def _split_stream(self, binary):
        """Documents between separator matches, read window by window.

        subtle: a match is only trusted when it ends ``SPLIT_MARGIN`` characters before the end
        of what has been read (more text could extend it); the rest is carried into the next window,
        behind up to ``SPLIT_MARGIN`` characters already cut, which the search starts after
        (``pos``), so that ``^``, ``\\b`` and lookbehinds see the text before a window as in the
        whole file. Bytes that are not UTF-8 are read as lone surrogates (``surrogateescape``),
        so that only the document holding them is bad (``_cut``), not the rest of the file.
        """
        decoder = io.TextIOWrapper(binary, encoding="utf-8", errors="surrogateescape", newline="")
        carry, start, line_base, eof = "", 0, 1, False  # carry[:start]: context only; line_base: carry[0]'s line
        while not eof:
            block = decoder.read(SPLIT_WINDOW)
            eof = not block
            text = carry + block
            limit = len(text) if eof else len(text) - SPLIT_MARGIN
            for match in self.split_on.finditer(text, pos=start):
                if match.end() > limit or match.end() == match.start():
                    if match.end() > limit:
                        break
                    continue
                sized = self._cut(text, start, match.start(), line_base)
                if sized is not None:
                    yield sized
                # a separator can match bytes that were not UTF-8 too ([^\n] takes their surrogates)
                self._utf8_size(text, match.start(), match.end(), line_base, ", in a separator")
                start = match.end()
            if eof:
                sized = self._cut(text, start, len(text), line_base)
                if sized is not None:
                    yield sized
            else:
                context = max(0, start - SPLIT_MARGIN)
                line_base += text.count("\n", 0, context)
                carry, start = text[context:], start - context

    def _cut(self, text, start, end, line_base):
        """``text[start:end]`` as an accepted ``(text, size)``, or None (reported) when it holds
        bytes that were not UTF-8, named by the line of the first (``text[0]`` is on ``line_base``)."""
        size = self._utf8_size(text, start, end, line_base)
        if size is None:
            return None
        return self.accepted((text[start:end], size), partial(_line_of, line_base, text, start))

    def _utf8_size(self, text, start, end, line_base, where=""):
        """UTF-8 bytes of ``text[start:end]``, or None (reported) when it holds a lone surrogate:
        a byte that was not UTF-8, read with ``surrogateescape``."""
        part = text[start:end]
        if part.isascii():
            return len(part)
        try:
            return len(part.encode("utf-8"))
        except UnicodeEncodeError as error:
            line = line_base + text.count("\n", 0, start + error.start)
            byte = bytes([ord(part[error.start]) - 0xDC00])
            self.bad(f"line {line}", f"not UTF-8 (byte {byte!r}{where})", "invalid UTF-8")
            return None

    # -- JSON

    def _json_lines(self, binary):
        offset = 0  # of the line in the file (decompressed), for the byte that is not UTF-8
        for number, line in enumerate(binary, 1):
            start, offset = offset, offset + len(line)
            if line.isspace():  # not line.strip(): that copies every line
                continue
            try:
                record = json.loads(line)
            except UnicodeDecodeError as error:
                byte = line[error.start : error.start + 1]
                self.bad(
                    f"line {number}", f"not UTF-8 (byte {byte!r} at offset {start + error.start})", "invalid UTF-8"
                )
                continue
            except (ValueError, RecursionError) as error:
                problem = f"not valid JSON ({error})" if isinstance(error, ValueError) else "JSON nested too deeply"
                self.bad(f"line {number}", problem, "bad JSON")
                continue
            sized = self._field(record, f"line {number}")
            if sized is not None:
                yield sized

    def _json(self, binary):
        head = binary.peek(64)[:64] if hasattr(binary, "peek") else b""
        if head.removeprefix(codecs.BOM_UTF8).lstrip()[:1] != b"[":  # json.loads skips the mark too
            yield from self._json_lines(binary)
            return
        data = binary.read()
        try:
            records = json.loads(data)
        except UnicodeDecodeError:
            self.bad("the file", "not UTF-8", "invalid UTF-8")
            return
        except (ValueError, RecursionError) as error:
            raise DocumentError(
                f"{self.name}: not valid JSON ({error}); a .json input is a JSON array of objects or JSON Lines"
            ) from None
        for number, record in enumerate(records):
            sized = self._field(record, f"item {number}")
            if sized is not None:
                yield sized

    def _field(self, record, where):
        """``(text, size)`` of the record's text field, or None when it is bad (and skipped)."""
        if not isinstance(record, dict):
            self.bad(where, f"a JSON {_json_type(record)}, not an object with a {self.field!r} field", "not an object")
            return None
        if self.field not in record:
            self.bad(
                where,
                f"no field {self.field!r} (fields: {', '.join(map(repr, list(record)[:10]))}); choose it with --text-field",
                "missing field",
            )
            return None
        text = record[self.field]
        if text is None:  # as a null in a Parquet column
            self.bad(where, f"field {self.field!r} is null", "null")
            return None
        if not isinstance(text, str):
            shown = _short(json.dumps(text, ensure_ascii=False))  # as the file spells it
            self.bad(where, f"field {self.field!r} is a JSON {_json_type(text)} {shown}, not a string", "not a string")
            return None
        return self.accepted(_no_surrogates(text, self, where), where)

    # -- Parquet

    def _parquet(self):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            parquet = pq.ParquetFile(self.source.path)
        except (pa.ArrowException, OSError) as error:
            raise DocumentError(f"{self.name}: not a readable Parquet file ({error})") from None
        schema = parquet.schema_arrow
        if self.field not in schema.names:
            raise DocumentError(
                f"{self.name}: no column {self.field!r} (columns: {', '.join(map(repr, schema.names))}); choose it with --text-field"
            )
        kind = schema.field(self.field).type
        if pa.types.is_dictionary(kind):  # strings stored once each (a pandas Categorical): read as strings
            kind = kind.value_type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or _is_string_view(pa, kind)):
            raise DocumentError(
                f"{self.name}: column {self.field!r} holds {kind}, not strings; choose the text column with --text-field"
            )
        row = 0
        # Batches rather than whole row groups: a FineWeb row group can hold a gigabyte of text.
        batches = parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=[self.field])
        while True:
            try:
                batch = next(batches, None)
            except (pa.ArrowException, OSError) as error:  # a corrupt page ("Corrupt snappy compressed data")
                reason = " ".join(str(error).split())  # pyarrow's can run over several lines
                raise DocumentError(
                    f"{self.name}: cannot read it from row {row} on ({reason}); is the file complete?"
                ) from None
            if batch is None:
                break
            for text in batch.column(0).to_pylist():
                if text is None:
                    self.bad(f"row {row}", f"column {self.field!r} is null", "null")
                else:
                    sized = self.accepted(_no_surrogates(text, self, f"row {row}"), f"row {row}")
                    if sized is not None:
                        yield sized
                row += 1


def _is_string_view(pa, kind):
    # string_view (pyarrow 16 and later) holds strings too; older pyarrow has no such type
    test = getattr(pa.types, "is_string_view", None)
    return test is not None and test(kind)


def _no_surrogates(text, reader, where):
    """``(text, size in UTF-8 bytes)``, or None for a text with a lone surrogate (reported)."""
    # JSON escapes can spell lone surrogates ("\ud800"), which are not text and cannot be encoded.
    if text.isascii():
        return text, len(text)
    try:
        return text, len(text.encode("utf-8"))
    except UnicodeEncodeError as error:
        reader.bad(where, f"a lone surrogate {text[error.start]!r} at character {error.start}", "invalid UTF-8")
        return None


def _line_of(line_base, text, start):
    """Where the document at ``text[start]`` begins, ``text[0]`` being on line ``line_base``."""
    return f"the document at line {line_base + text.count(chr(10), 0, start)}"


def _sized(text):
    """``(text, size in UTF-8 bytes)`` of a text decoded from UTF-8 (so it has no lone surrogate)."""
    return text, len(text) if text.isascii() else len(text.encode("utf-8"))


def _json_type(value):
    """What JSON calls the type of a value ``json.loads`` gave."""
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string"}.get(type(value), "number")


def _short(shown):
    return shown if len(shown) <= 40 else shown[:37] + "..."


class _ZstdFrames(io.RawIOBase):
    """A ``.zst`` stream decompressed frame after frame (``zstd`` writes one, ``pzstd`` and
    ``cat a.zst b.zst`` several); ``EOFError`` when it ends inside a frame.

    zstandard's ``stream_reader`` reads a cut file as a shorter one without a word, so a
    download stopped half-way would lose the rest of a corpus in silence.
    """

    def __init__(self, raw, zstandard):
        self._raw, self._new_frame = raw, zstandard.ZstdDecompressor().decompressobj
        self._frame, self._out, self._at = None, b"", 0

    def readable(self):
        return True

    def readinto(self, buffer):
        while self._at == len(self._out):
            if not self._decompress_more():
                return 0
        count = min(len(buffer), len(self._out) - self._at)
        buffer[:count] = memoryview(self._out)[self._at : self._at + count]
        self._at += count
        return count

    def _decompress_more(self):
        # 64 KB in at a time: what one call gives back grows with the compression ratio
        data = self._raw.read(1 << 16)
        if not data:
            if self._frame is not None and not self._frame.eof:
                raise EOFError("Compressed file ended before the end of its last frame")
            return False
        out = []
        while data:
            if self._frame is None or self._frame.eof:
                self._frame = self._new_frame()
            out.append(self._frame.decompress(data))
            data = self._frame.unused_data if self._frame.eof else b""
        self._out, self._at = b"".join(out), 0
        return True


def _other_encoding(head):
    """``(encoding, why)`` for a file start in UTF-16 or UTF-32, else None: one with a byte-order
    mark, or one without, whose ASCII characters then carry NUL bytes (valid UTF-8 that would be
    read as text; a UTF-8 corpus with a third of its bytes NUL is not text either way)."""
    for mark, encoding in OTHER_ENCODING_MARKS:
        if head.startswith(mark):
            return encoding, f"{encoding} text (it starts with a {encoding} byte-order mark)"
    zeros = head.count(0)
    if len(head) < 16 or zeros * 3 < len(head):
        return None
    if zeros * 3 >= len(head) * 2:
        encoding = "UTF-32LE" if head[0] else "UTF-32BE"
    else:
        encoding = "UTF-16LE" if head[1::2].count(0) > head[0::2].count(0) else "UTF-16BE"
    return (
        encoding,
        f"looks like {encoding} text without a byte-order mark ({zeros} of its first {len(head)} bytes are NUL)",
    )


class _Opened:
    """``with _Opened(source) as (binary, format)``: a buffered binary stream, decompressed."""

    def __init__(self, source):
        self.source = source
        self.closing = []

    def __enter__(self):
        source = self.source
        if source.path == "-":
            raw = standard_input(UsageError)
        else:
            raw = open(source.path, "rb", buffering=READ_BUFFER)
            self.closing.append(raw)
        # by content too (a .jsonl that is gzip data): neither magic number starts UTF-8 text
        head = raw.peek(4)[:4] if hasattr(raw, "peek") else b""
        sniffed = "gzip" if head[:2] == b"\x1f\x8b" else "zstd" if head == b"\x28\xb5\x2f\xfd" else None
        compression = source.compression or sniffed
        if compression == "gzip":
            raw = gzip.GzipFile(fileobj=raw, mode="rb")
            self.closing.append(raw)
        elif compression == "zstd":
            if importlib.util.find_spec("zstandard") is None:
                raise MissingDependencyError("reading .zst files needs the zstandard package: pip install zstandard")
            import zstandard

            raw = _ZstdFrames(raw, zstandard)
            self.closing.append(raw)
        binary = raw if hasattr(raw, "peek") else io.BufferedReader(raw, buffer_size=READ_BUFFER)
        head = binary.peek(256)[:256]
        other = _other_encoding(head)
        if other:  # said once for the file, not as every line's bad UTF-8
            self.__exit__()
            name = "standard input" if source.path == "-" else source.path
            encoding, why = other
            raise DocumentError(f"{name}: {why}, and inputs are UTF-8; convert it, e.g. iconv -f {encoding} -t UTF-8")
        fmt = source.format
        if fmt == "auto":
            fmt = "jsonl" if head.removeprefix(codecs.BOM_UTF8).lstrip()[:1] == b"{" else "txt"
        return binary, fmt

    def __exit__(self, *exc_info):
        for stream in reversed(self.closing):
            stream.close()
        return False
