"""Corpora larger than memory: read a split block by block, and cut blocks where cutting is safe.

A ``SplitSource`` is one split, from a file or from a string, with its cleaning. It gives the
split whole (``text``), its first characters (``prefix``), or blocks of about ``block_chars``
characters (``blocks``) whose concatenation is exactly the whole text.

Where a block may end matters, because each block is then encoded (or counted) on its own,
and the ids must be exactly those of encoding the split whole. Three ways to cut:

- ``safe_cut``: with a pre-tokenization pattern, where the pattern's pieces end anyway;
- ``barrier_cut(tokenizer)``: with no pattern (seed 000's character mode, where a split is
  one long sequence), between two characters that no learned token contains side by side,
  so that no merge can cross the cut;
- ``newline_cut``: after a newline, for a tokenizer without merges (one id per character,
  wherever the cut), and as the last resort where neither of the others applies (no
  pattern, and normalization, on a split too large for memory), where the ids near a cut
  can differ from encoding whole; ``prepare`` encodes such splits whole up to
  ``WHOLE_SPLIT_CHARS``.

This module reads and cuts text; it does not tokenize (it needs no tokenizer at all).

Example:
    >>> source = SplitSource("val", text="one\\ntwo\\nthree\\n")
    >>> list(source.blocks(4, cut=newline_cut))
    ['one\\n', 'two\\n', 'three\\n']
"""

from __future__ import annotations

import codecs
from pathlib import Path

from ..patterns import CUT_SEARCH, safe_cut
from .errors import DatasetError
from .wikitext import clean_text

# Splits up to this many characters are read into memory once; larger ones are streamed from
# their files. 256 Mi characters is 256 MiB to 1 GiB of str, within a machine that trains
# small GPTs.
WHOLE_SPLIT_CHARS = 1 << 28
# The largest block encoded at once. Small blocks are faster, not only more parallel: the
# engine merges one long piece (no pattern) at about 1.6M characters/s, 100k-character pieces
# about 2.6x faster (cache-friendly heaps). Measured on WikiText-2 train, vocab 500, 2 cores:
# encode CPU 3.7 s with 4 Mi-character blocks, 2.6 s with 256 Ki, 2.5 s with 64 Ki.
# (Training counts in larger blocks, ``train.COUNT_BLOCK_CHARS``: counting has no long-piece
# merge whose cost grows with the block.)
ENCODE_BLOCK_CHARS = 1 << 18
# How much of a file is read at a time.
READ_CHARS = 1 << 20


def fitting_block(block_chars, size, num_threads):
    """A block size for a split of ``size`` characters: at most ``block_chars``, and small
    enough for two blocks per thread, but not under 64 Ki characters (calls cost something).
    """
    return min(block_chars, max(size // (2 * num_threads), 1 << 16))


class SplitSource:
    """One split of a corpus: a UTF-8 file (read faithfully, CRLF kept) or a string.

    Give exactly one of ``path`` and ``text``; ``cleaning`` is one of ``wikitext.CLEANINGS``.
    """

    def __init__(self, name, path=None, *, text=None, cleaning=None):
        if (path is None) == (text is None):
            raise TypeError("give a SplitSource either a path or a text, not both")
        self.name = name
        self.path = Path(path) if path is not None else None
        self.text_value = text
        self.cleaning = cleaning

    def describe(self):
        """Where the split comes from, for reports and ``meta.json``."""
        return str(self.path) if self.path is not None else f"<text, {len(self.text_value):,} characters>"

    def size_bound(self):
        """An upper bound of the split's length in characters, known without reading it."""
        if self.path is None:
            return len(self.text_value)
        try:
            return self.path.stat().st_size  # UTF-8: never fewer bytes than characters
        except FileNotFoundError:
            raise DatasetError(f"split file {str(self.path)!r} does not exist") from None

    def text(self):
        """The whole split, cleaned."""
        if self.path is None:
            return clean_text(self.text_value, self.cleaning)
        return "".join(self._line_blocks(READ_CHARS * 16))

    def prefix(self, count):
        """The first ``count`` characters of the cleaned split."""
        parts, total = [], 0
        for block in self._line_blocks(READ_CHARS):
            parts.append(block)
            total += len(block)
            if total >= count:
                break
        return "".join(parts)[:count]

    def blocks(self, block_chars, *, cut):
        """Cleaned blocks of at least ``block_chars`` characters (the last may be shorter),
        each ending where ``cut(text)`` says (``safe_cut``, ``barrier_cut(...)``, ``newline_cut``).

        NOTE: a block grows past ``block_chars`` until a cut is found, so a text where ``cut``
        finds none is one block.
        """
        carry = ""
        for block in self._line_blocks(min(block_chars, READ_CHARS)):
            carry += block
            if len(carry) < block_chars:
                continue
            position = cut(carry)
            if position > 0:
                yield carry[:position]
                carry = carry[position:]
        if carry:
            yield carry

    def _line_blocks(self, read_chars):
        """Cleaned blocks that end after a newline (cleaning works line by line)."""
        if self.path is None:
            text = self.text_value
            raw = (text[i : i + read_chars] for i in range(0, len(text), read_chars))
        else:
            raw = read_file_blocks(self.path, read_chars)
        carry = ""
        for block in raw:
            block = carry + block
            cut = block.rfind("\n") + 1
            carry = block[cut:]
            if cut:
                yield clean_text(block[:cut], self.cleaning)
        if carry:
            yield clean_text(carry, self.cleaning)


def read_file_blocks(path, read_chars):
    """A UTF-8 file as str blocks of ``read_chars`` bytes' worth, line endings kept as they are.

    Raises ``DatasetError`` naming the byte offset and line of the first invalid byte.
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, line = 0, 1
    try:
        with open(path, "rb") as file:
            for data in iter(lambda: file.read(read_chars), b""):
                try:
                    text = decoder.decode(data)
                except UnicodeDecodeError as error:
                    bad = offset + error.start - len(decoder.getstate()[0])
                    where = line + data[: max(error.start, 0)].count(b"\n")
                    raise DatasetError(
                        f"{str(path)!r} is not UTF-8 text (byte {bad}, line {where}: "
                        f"{data[error.start : error.start + 1]!r}); convert it to UTF-8 first"
                    ) from None
                offset += len(data)
                line += data.count(b"\n")
                if text:
                    yield text
            tail = decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise DatasetError(f"{str(path)!r} ends in the middle of a UTF-8 character; the file is truncated") from None
    except FileNotFoundError:
        raise DatasetError(f"split file {str(path)!r} does not exist") from None
    if tail:
        yield tail


def cut_for(tokenizer):
    """The cut function that keeps ``tokenizer``'s ids exactly those of the whole text, or
    None when only the whole text is exact (no pattern, merges, and a normalization).

    Example:
        >>> from bytepair.tokenizer import Tokenizer
        >>> cut_for(Tokenizer(mode="byte", pattern="gpt2")) is safe_cut
        True
    """
    if tokenizer.pattern is not None:
        return safe_cut
    if not tokenizer.merges:
        return newline_cut
    if tokenizer.normalization is None:
        return barrier_cut(tokenizer)
    return None


def newline_cut(text):
    """Just after the last newline of ``text``, or 0."""
    return text.rfind("\n") + 1


def barrier_cut(tokenizer):
    """A cut function for a tokenizer without a pattern: the last position where the two
    characters around it appear side by side in no token of the vocabulary (0 if none).

    Why it is exact: a merge that crossed the cut would build a token holding those two
    characters side by side, and there is none; so every merge, and every left-to-right pass
    of merge replay, stays on one side, and each side encodes as it would alone. Positions
    after a newline are tried first, then any position in the last ``CUT_SEARCH``
    characters. Byte-level vocabularies are checked on the UTF-8 bytes at the cut.

    NOTE: it assumes no normalization (normalizing can join characters across a cut).

    Example:
        >>> from bytepair.tokenizer import Tokenizer
        >>> cut = barrier_cut(Tokenizer(mode="char", base_tokens="ab ", merges=[("a", "b")]))
        >>> text = "ab ab"
        >>> text[: cut(text)]   # ' ' then 'a': no token holds " a"
        'ab '
    """
    byte_level = tokenizer.mode == "byte"
    pairs = set()
    for token_id in range(tokenizer.vocab_size):
        if tokenizer.is_special(token_id):
            continue
        try:
            value = tokenizer.token_bytes(token_id) if byte_level else tokenizer.token_string(token_id)
        except ValueError:
            continue  # an unused id
        pairs.update(value[i : i + 2] for i in range(len(value) - 1))

    def crossable(text, position):
        if byte_level:
            return text[position - 1].encode("utf-8")[-1:] + text[position].encode("utf-8")[:1] in pairs
        return text[position - 1 : position + 1] in pairs

    def cut(text):
        newline = len(text)
        for _ in range(64):
            newline = text.rfind("\n", 0, newline)
            if newline < 0:
                break
            if newline + 1 < len(text) and not crossable(text, newline + 1):
                return newline + 1
        for position in range(len(text) - 1, max(0, len(text) - CUT_SEARCH), -1):
            if not crossable(text, position):
                return position
        return 0

    return cut
