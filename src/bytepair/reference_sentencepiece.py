"""SentencePiece's BPE, written out plainly: the oracle for ``bytepair.sentencepiece``.

This mirrors, step by step, what the ``sentencepiece`` library does for a BPE model
(``normalizer.cc``, ``bpe_model.cc``, ``sentencepiece_processor.cc``):

1. **normalize**: with an identity normalizer only spaces change. A space becomes ``▁``
   (U+2581), a ``▁`` is put in front of the text (``add_dummy_prefix``), and with
   ``remove_extra_whitespaces`` leading, trailing and repeated spaces go. Empty text stays empty.
2. **symbols**: the normalized text splits into characters, except that a user-defined piece
   is one symbol, found leftmost-longest, and never merged ("frozen").
3. **merge**: repeatedly merge the adjacent pair of symbols whose concatenation is a piece
   with the *highest score*, the leftmost pair on ties; stop when no adjacent pair is a piece.
   There is no merge list: the score of the merged piece decides.
4. **ids**: a symbol that is a piece gives its id; a symbol that is an "unused" piece is split
   back into the two symbols that made it; any other symbol is unknown. With byte fallback an
   unknown symbol becomes its UTF-8 bytes as ``<0xXX>`` pieces; without it a run of unknown
   symbols becomes one ``<unk>``.

Decoding joins the pieces, ``▁`` back to a space, drops the first leading space (the dummy
prefix), shows control pieces as nothing and ``<unk>`` as `` ⁇ ``, and turns runs of byte
pieces back into text, each byte that is not part of a valid UTF-8 character as U+FFFD.

Example:
    >>> pieces = [("<unk>", 0.0, UNKNOWN), ("▁", -1.0, NORMAL), ("a", -2.0, NORMAL),
    ...           ("b", -3.0, NORMAL), ("ab", -4.0, NORMAL), ("▁ab", -5.0, NORMAL)]
    >>> model = SentencePieceBPE(pieces)
    >>> model.encode("ab ab")
    [5, 5]
    >>> model.decode([5, 5])
    'ab ab'
"""

from __future__ import annotations

import heapq

# SentencePiece.Type (sentencepiece_model.proto)
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
SPACE = "\u2581"  # ▁, what a space becomes
DEFAULT_UNK_SURFACE = " \u2047 "


def byte_piece(byte: int) -> str:
    """The piece of one byte under byte fallback: ``<0x41>`` (upper-case hex)."""
    return f"<0x{byte:02X}>"


class SentencePieceBPE:
    """A SentencePiece BPE model: pieces ``(piece, score, type)`` in id order, and its options.

    The options are the model file's normalizer and trainer fields of the same names; the
    normalizer is the identity (no precompiled character map).
    """

    def __init__(
        self,
        pieces,
        *,
        byte_fallback=False,
        add_dummy_prefix=True,
        remove_extra_whitespaces=False,
        escape_whitespaces=True,
        treat_whitespace_as_suffix=False,
        unk_surface=DEFAULT_UNK_SURFACE,
    ):
        self.pieces = [tuple(p) for p in pieces]
        self.byte_fallback = byte_fallback
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.suffix = treat_whitespace_as_suffix
        self.unk_surface = unk_surface
        # Pieces that merges can build (sentencepiece's `pieces_`), and the others
        # (control, unknown and byte pieces: `reserved_id_map_`), each looked up by text.
        self.mergeable = {}
        self.reserved = {}
        self.unk_id = None
        for token_id, (piece, _, kind) in enumerate(self.pieces):
            table = self.mergeable if kind in (NORMAL, USER_DEFINED, UNUSED) else self.reserved
            table.setdefault(piece, token_id)
            if kind == UNKNOWN:
                self.unk_id = token_id
        self.user_defined = sorted((p for p, _, k in self.pieces if k == USER_DEFINED), key=len, reverse=True)

    # -- 1. normalize ------------------------------------------------------------------

    def normalize(self, text: str) -> str:
        """The text the model splits: spaces as ``▁``, with the dummy prefix.

        Example: ``"Hello world"`` -> ``"▁Hello▁world"``.
        """
        space = SPACE if self.escape_whitespaces else " "
        units = self._scan(text)  # user-defined pieces whole, else one character each
        start = 0
        if self.remove_extra_whitespaces:
            while start < len(units) and units[start] == " ":
                start += 1
        if start == len(units):
            return ""  # subtle: empty (or all-space) text gets no dummy prefix
        out = [space] if self.add_dummy_prefix and not self.suffix else []
        is_prev_space = self.remove_extra_whitespaces
        for unit in units[start:]:
            while is_prev_space and unit.startswith(" "):
                unit = unit[1:]
            if unit:
                out.append(unit.replace(" ", space))
                is_prev_space = unit.endswith(" ")
            if not self.remove_extra_whitespaces:
                is_prev_space = False
        normalized = "".join(out)
        if self.remove_extra_whitespaces:
            while normalized.endswith(space):
                normalized = normalized[: -len(space)]
        if self.add_dummy_prefix and self.suffix:
            normalized += space
        return normalized

    def _scan(self, text):
        """Units of ``text``: at each position the longest user-defined piece, else one character."""
        units, position = [], 0
        while position < len(text):
            match = next((p for p in self.user_defined if text.startswith(p, position)), None)
            step = len(match) if match else 1
            units.append(text[position : position + step])
            position += step
        return units

    # -- 2. and 3. symbols and merges ----------------------------------------------------

    def split_merged(self, normalized: str) -> list[str]:
        """The symbols of ``normalized`` after merging (bpe_model.cc's ``Encode``)."""
        symbols = self._scan(normalized)
        frozen = [len(s) > 1 or s in self.user_defined for s in symbols]
        alive = list(symbols)  # "" once merged into its left neighbour
        prev = list(range(-1, len(symbols) - 1))
        nxt = list(range(1, len(symbols) + 1))
        if nxt:
            nxt[-1] = -1
        agenda = []  # heap of (-score, left index, right index, merged piece)
        unused_parts = {}  # unused piece -> the two symbols that made it (for step 4)

        def push(left, right):
            if left == -1 or right == -1 or frozen[left] or frozen[right]:
                return
            piece = alive[left] + alive[right]
            token_id = self.mergeable.get(piece)
            if token_id is None:
                return
            _, score, kind = self.pieces[token_id]
            heapq.heappush(agenda, (-score, left, right, piece))
            if kind == UNUSED:
                unused_parts[piece] = (alive[left], alive[right])

        for i in range(1, len(symbols)):
            push(i - 1, i)
        while agenda:
            _, left, right, piece = heapq.heappop(agenda)
            # subtle: the pair is stale if either side has changed since it was pushed.
            if not alive[left] or not alive[right] or alive[left] + alive[right] != piece:
                continue
            alive[left], alive[right] = piece, ""
            nxt[left] = nxt[right]
            if nxt[right] != -1:
                prev[nxt[right]] = left
            push(prev[left], left)
            push(left, nxt[left])

        merged = []
        index = 0 if symbols else -1
        while index != -1:
            self._resegment(alive[index], unused_parts, merged)
            index = nxt[index]
        return merged

    def _resegment(self, piece, unused_parts, out):
        token_id = self.piece_to_id(piece)
        if token_id is not None and self.pieces[token_id][2] == UNUSED and piece in unused_parts:
            left, right = unused_parts[piece]
            self._resegment(left, unused_parts, out)
            self._resegment(right, unused_parts, out)
        else:
            out.append(piece)

    def piece_to_id(self, piece: str) -> int | None:
        """The id of a piece (reserved pieces first, as sentencepiece looks them up), else the
        unknown id."""
        token_id = self.reserved.get(piece)
        if token_id is None:
            token_id = self.mergeable.get(piece, self.unk_id)
        return token_id

    # -- 4. ids ----------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        """Text to ids, as ``SentencePieceProcessor.encode(text)`` gives them."""
        ids = []
        prev_unknown = False
        for piece in self.split_merged(self.normalize(text)):
            token_id = self.piece_to_id(piece)
            unknown = token_id == self.unk_id
            if unknown and self.byte_fallback:
                ids.extend(self.piece_to_id(byte_piece(b)) for b in piece.encode("utf-8"))
            elif not (unknown and prev_unknown):
                ids.append(token_id)  # a run of unknown symbols is one <unk>
            prev_unknown = unknown
        return ids

    def decode(self, ids) -> str:
        """Ids to text, as ``SentencePieceProcessor.decode(ids)`` gives it."""
        text, pending = [], bytearray()
        is_bos_ws, bos_ws_seen = True, False
        for token_id in ids:
            piece, _, kind = self.pieces[token_id]
            if kind == BYTE:
                pending.append(int(piece[3:5], 16))
                continue
            text.append(decode_utf8_like_sentencepiece(bytes(pending)))
            pending.clear()
            if bos_ws_seen or any(text):
                is_bos_ws = False
            bos_ws_seen = False
            if kind == CONTROL:
                continue
            if kind == UNKNOWN:
                text.append(self.unk_surface)
                continue
            if is_bos_ws and (self.add_dummy_prefix or self.remove_extra_whitespaces) and piece.startswith(SPACE):
                piece = piece[1:]
                bos_ws_seen = not self.remove_extra_whitespaces
            text.append(piece.replace(SPACE, " "))
        text.append(decode_utf8_like_sentencepiece(bytes(pending)))
        return "".join(text)


def decode_utf8_like_sentencepiece(data: bytes) -> str:
    """UTF-8 to text, one U+FFFD for *each* byte that does not start a valid character.

    Python's ``errors="replace"`` gives one U+FFFD for a truncated sequence such as
    ``b"\\xe2\\x96"``; sentencepiece gives two, one per byte piece.
    """
    out, position = [], 0
    while position < len(data):
        for size in (1, 2, 3, 4):
            try:
                out.append(data[position : position + size].decode("utf-8"))
                position += size
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append("\ufffd")
            position += 1
    return "".join(out)
