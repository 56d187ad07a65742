"""SentencePiece BPE models (Llama 2, Mistral 7B and their fine-tunes), encoded exactly as the
``sentencepiece`` library does, through the compiled engine.

- ``SentencePieceModel``: the vocabulary model (pieces with scores and types, and the
  normalizer and trainer options that change encoding). Its engine spec is character mode:
  single-character pieces are the base ids, every split of a piece into two pieces is a pair
  whose rank orders the merged piece by score (highest first, equal scores equal rank, so the
  leftmost pair wins as in sentencepiece), and byte fallback goes to the ``<0xXX>`` pieces.
- ``SentencePieceTokenizer``: a ``Tokenizer`` whose ordinary text first goes through
  sentencepiece's normalization (spaces to ``▁``, the dummy prefix), whose user-defined pieces
  are cut out whole, and whose decoding follows sentencepiece (the dummy prefix dropped,
  control pieces invisible, invalid UTF-8 one U+FFFD per byte piece).

The plain statement of the algorithm, and the oracle of every path here, is
``reference_sentencepiece.SentencePieceBPE``. A model the engine cannot run exactly (no byte
fallback, "unused" pieces, a piece holding a character that is not itself a piece) is encoded
by that reference instead: the same ids, at Python speed.

Control pieces (``<s>``, ``</s>``, ``[INST]``...) are the tokenizer's special tokens:
``encode(text, allowed_special="all")`` turns them into their ids, and each stretch of text
between them is encoded on its own, with its own dummy prefix (what ``mistral_common`` does
when it assembles ``<s>[INST] ...`` from pieces).

It reads no files (``formats/sentencepiece.py``) and supports the identity normalizer only
(no ``precompiled_charsmap``).

Example:
    >>> tok = bytepair.load("mistral", path="tokenizer.model.v1")  # doctest: +SKIP
    >>> tok.encode("Hello world")  # doctest: +SKIP
    [22557, 1526]
    >>> tok.decode([22557, 1526])  # doctest: +SKIP
    'Hello world'
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable

import numpy as np

from .ids import checked_id
from .normalize import clean_surrogates
from .reference_sentencepiece import (
    BYTE,
    CONTROL,
    DEFAULT_UNK_SURFACE,
    SPACE,
    UNKNOWN,
    UNUSED,
    USER_DEFINED,
    SentencePieceBPE,
    byte_piece,
)
from .special import check_disallowed, resolve_special, split_on_special
from .threads import check_num_threads
from .tokenizer import Tokenizer, check_errors, text_list

FORMATS = ("artifact", "tiktoken", "huggingface")

# Where no merge can cross: before a run of ▁ that follows another character. Valid when no
# mergeable piece holds a ▁ after a non-▁ character (checked per model).
_WORDS = re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+")


class SentencePieceModel:
    """A SentencePiece BPE vocabulary: ``pieces`` as ``(piece, score, type)`` in id order.

    Options (the model file's fields of the same names): ``byte_fallback``,
    ``add_dummy_prefix``, ``remove_extra_whitespaces``, ``escape_whitespaces``,
    ``treat_whitespace_as_suffix``, ``unk_surface``.

    Example:
        >>> model = SentencePieceModel([("<unk>", 0, 2), ("a", -1, 1), ("b", -2, 1), ("ab", -3, 1)])
        >>> model.engine_spec()["pair_table"]
        {(1, 2): (0, 3)}
    """

    mode = "char"
    rule = "sentencepiece"
    ignore_merges = False
    merges = ()
    base_tokens = ()

    def __init__(
        self,
        pieces: Iterable[tuple[str, float, int]],
        *,
        byte_fallback: bool = False,
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = False,
        escape_whitespaces: bool = True,
        treat_whitespace_as_suffix: bool = False,
        unk_surface: str = DEFAULT_UNK_SURFACE,
    ) -> None:
        self._pieces = tuple((str(p), float(s), int(k)) for p, s, k in pieces)
        self._options = dict(
            byte_fallback=bool(byte_fallback),
            add_dummy_prefix=bool(add_dummy_prefix),
            remove_extra_whitespaces=bool(remove_extra_whitespaces),
            escape_whitespaces=bool(escape_whitespaces),
            treat_whitespace_as_suffix=bool(treat_whitespace_as_suffix),
            unk_surface=str(unk_surface),
        )
        self.reference = SentencePieceBPE(self._pieces, **self._options)
        if self.reference.unk_id is None:
            raise ValueError("the model has no unknown piece (<unk>); sentencepiece needs one")
        self._fallback_ids = None
        if byte_fallback:
            ids = [self.reference.reserved.get(byte_piece(b)) for b in range(256)]
            missing = [byte_piece(b) for b, i in enumerate(ids) if i is None]
            if missing:
                raise ValueError(f"byte_fallback is on but the byte pieces {missing[:4]} are missing")
            self._fallback_ids = tuple(ids)
        self._token_bytes = tuple(self._bytes_of(p, k) for p, _, k in self._pieces)
        self._engine_reason = self._why_not_engine()
        self._fingerprint_core = None

    def _bytes_of(self, piece, kind):
        if kind == CONTROL:
            return None  # the tokenizer's special tokens
        if kind == BYTE:
            return bytes([int(piece[3:5], 16)])
        if kind == UNKNOWN:
            return self._options["unk_surface"].encode("utf-8")
        return piece.replace(SPACE, " ").encode("utf-8")

    # -- what it holds ---------------------------------------------------------------------

    @property
    def pieces(self) -> tuple[tuple[str, float, int], ...]:
        return self._pieces

    @property
    def options(self) -> dict:
        return dict(self._options)

    @property
    def byte_fallback(self) -> bool:
        return self._options["byte_fallback"]

    @property
    def fallback_ids(self) -> tuple[int, ...] | None:
        return self._fallback_ids

    @property
    def values(self) -> tuple[str, ...]:
        """Each id's piece as sentencepiece shows it (``▁the``, ``<0x0A>``, ``<s>``)."""
        return tuple(p for p, _, _ in self._pieces)

    @property
    def token_bytes(self) -> tuple[bytes | None, ...]:
        """Each id's bytes (``▁`` as a space); None for control pieces (special tokens)."""
        return self._token_bytes

    @property
    def size(self) -> int:
        return len(self._pieces)

    def learned_ids(self) -> range:
        return range(len(self._pieces))

    def token_value(self, token_id: int) -> str | None:
        return self._pieces[token_id][0] if 0 <= token_id < len(self._pieces) else None

    def control_tokens(self) -> dict[str, int]:
        """``{piece: id}`` of the control pieces: the tokenizer's special tokens."""
        return {p: i for i, (p, _, k) in enumerate(self._pieces) if k == CONTROL}

    def user_defined(self) -> dict[str, int]:
        return {p: i for i, (p, _, k) in enumerate(self._pieces) if k == USER_DEFINED}

    @property
    def engine_reason(self) -> str | None:
        """Why the compiled engine cannot encode this model exactly, or None when it can."""
        return self._engine_reason

    def splits_at_spaces(self) -> bool:
        """Whether no mergeable piece holds ``▁`` after another character, so the text can be
        cut before each run of ``▁`` without changing the ids."""
        return not any(SPACE in piece.lstrip(SPACE) for piece in self.reference.mergeable)

    def _why_not_engine(self):
        kinds = {k for _, _, k in self._pieces}
        if not self.byte_fallback:
            return "no byte fallback (runs of unknown characters become one <unk>)"
        if UNUSED in kinds:
            return "it has unused pieces (split back after merging)"
        mergeable = self.reference.mergeable
        if any(len(p) == 1 for p in self.reference.reserved):
            return "a control, unknown or byte piece is a single character"
        for piece in mergeable:
            for char in piece:
                if char not in mergeable:
                    return f"the piece {piece!r} holds {char!r}, which is not a piece of its own"
        return None

    # -- what the other layers need ----------------------------------------------------------

    def engine_spec(self) -> dict:
        """The keyword arguments of ``_engine.Encoder`` (character mode; pattern excluded)."""
        mergeable = self.reference.mergeable
        user_defined = self.user_defined()
        base_ids = {ord(p): i for p, i in mergeable.items() if len(p) == 1}
        # Rank = position of the merged piece's score, best first; equal scores share a rank
        # so that the leftmost pair wins, as sentencepiece's agenda does.
        scores = sorted({self._pieces[i][1] for p, i in mergeable.items() if len(p) > 1}, reverse=True)
        rank_of = {score: rank for rank, score in enumerate(scores)}
        pair_table = {}
        for piece, merged_id in mergeable.items():
            rank = rank_of.get(self._pieces[merged_id][1])
            for cut in range(1, len(piece)):
                left, right = piece[:cut], piece[cut:]
                # A user-defined piece is frozen: never a half of a merge.
                if left in user_defined or right in user_defined:
                    continue
                left_id, right_id = mergeable.get(left), mergeable.get(right)
                if left_id is not None and right_id is not None:
                    pair_table[(left_id, right_id)] = (rank, merged_id)
        return dict(
            mode="char",
            token_bytes=[piece.encode("utf-8") for piece, _, _ in self._pieces],
            base_ids=base_ids,
            pair_table=pair_table,
            whole_piece=False,
            monotonic=False,
            fallback_ids=list(self._fallback_ids) if self._fallback_ids else None,
        )

    def fingerprint(self, pattern: str | None, special_tokens) -> str:
        """SHA-256 of the options, the tokenizer's specials, and every piece, score and type."""
        if self._fingerprint_core is None:
            digest = hashlib.sha256()
            for piece, score, kind in self._pieces:
                digest.update(json.dumps([piece, score, kind]).encode())
            self._fingerprint_core = digest.hexdigest()
        head = json.dumps(
            [self.rule, self._options, pattern, sorted(dict(special_tokens).items()), self._fingerprint_core]
        )
        return hashlib.sha256(head.encode()).hexdigest()

    @property
    def exports(self) -> tuple[str, ...]:
        return ()

    def export_refusal(self, fmt: str) -> str | None:
        if fmt not in FORMATS:
            return f"unknown format {fmt!r}; use one of {FORMATS}"
        return (
            "this is a SentencePiece model, which merges by piece score rather than by a merge list or "
            "ranks; keep using its .model file (bytepair.load reads it)"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SentencePieceModel):
            return NotImplemented
        return (self._pieces, self._options) == (other._pieces, other._options)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self):
        return (_rebuild_model, (self._pieces, self._options))

    def __repr__(self) -> str:
        return f"SentencePieceModel(size={self.size}, byte_fallback={self.byte_fallback})"


def _rebuild_model(pieces, options):
    return SentencePieceModel(pieces, **options)


class SentencePieceTokenizer(Tokenizer):
    """A ``Tokenizer`` for a ``SentencePieceModel``: sentencepiece's normalization, splitting
    and decoding around the compiled engine; control pieces are its special tokens.

    Example:
        >>> tok = SentencePieceTokenizer(model)  # doctest: +SKIP
        >>> tok.encode("<s>[INST]Hi", allowed_special="all")  # doctest: +SKIP
        [1, 3, 16127]
    """

    _model_types = (SentencePieceModel,)

    def __init__(self, model: SentencePieceModel, *, name: str | None = None) -> None:
        if not isinstance(model, SentencePieceModel):
            raise TypeError(f"model must be a SentencePieceModel, not {type(model).__name__}")
        self._sp = model
        self._reference = model.reference
        self._user_defined = model.user_defined()
        # Matched leftmost-longest, as sentencepiece's prefix matcher does.
        self._user_pieces = frozenset(self._user_defined)
        self._split_words = model.splits_at_spaces()
        super().__init__(model, special_tokens=model.control_tokens() or None, name=name)

    # -- pickling: by model and name ---------------------------------------------------

    def __reduce__(self):
        return (SentencePieceTokenizer, (self._sp,), {"_name": self._name})

    def __setstate__(self, state):
        self._name = state["_name"]

    def __deepcopy__(self, memo):
        copy = SentencePieceTokenizer(self._sp, name=self._name)
        memo[id(self)] = copy
        return copy

    # -- encoding --------------------------------------------------------------------------

    def normalize_text(self, text: str) -> str:
        """Stage 1 on its own: sentencepiece's normalized text (``"▁Hello▁world"``)."""
        # Without remove_extra_whitespaces every space becomes ▁, inside user-defined pieces
        # too: a plain replace is the reference's normalization.
        reference = self._reference
        if reference.remove_extra_whitespaces:
            return reference.normalize(text)
        if not text:
            return ""
        space = SPACE if reference.escape_whitespaces else " "
        body = text.replace(" ", space)
        if not reference.add_dummy_prefix:
            return body
        return body + space if reference.suffix else space + body

    def split(self, text: str) -> list[str]:
        """The pieces merged one by one (user-defined pieces whole), after normalization."""
        return [piece for piece, _ in self._segments(self.normalize_text(clean_surrogates(text)))]

    def _segments(self, normalized):
        """``(piece, id)``: id is a user-defined piece's own id, else None (to be merged)."""
        parts = [
            (part, self._user_defined[part] if is_user else None)
            for part, is_user in split_on_special(normalized, self._user_pieces)
        ]
        if not self._split_words:
            return parts
        return [
            (word, token_id)
            for part, token_id in parts
            for word in ([part] if token_id is not None else _WORDS.findall(part))
        ]

    def _encode_ordinary(self, text, num_threads=None):  # pieces: one thread (threads are for a batch)
        text = clean_surrogates(text)
        if self._sp.engine_reason is not None:
            return self._reference.encode(text)
        normalized = self.normalize_text(text)
        if not self._user_pieces:
            pieces = _WORDS.findall(normalized) if self._split_words else ([normalized] if normalized else [])
            return self._engine_call(self._engine.encode_pieces, pieces)
        ids, pending = [], []
        for piece, token_id in self._segments(normalized):
            if token_id is None:
                pending.append(piece)
                continue
            ids.extend(self._engine_call(self._engine.encode_pieces, pending))
            ids.append(token_id)
            pending = []
        ids.extend(self._engine_call(self._engine.encode_pieces, pending))
        return ids

    def encode_batch(self, texts, *, num_threads=None, allowed_special=frozenset(), disallowed_special="all"):
        """``[encode(t) for t in texts]``; ordinary texts run on ``num_threads`` threads.

        NOTE: each text is merged as one piece on the threads (sentencepiece's own unit), so a
        batch of many texts is fast; one huge text is faster through ``encode``.
        """
        threads = check_num_threads(num_threads)
        texts = text_list(texts)  # None, one str or bytes named, not taken item by item
        if allowed_special or self._sp.engine_reason is not None or self._user_pieces:
            return [
                self.encode(t, allowed_special=allowed_special, disallowed_special=disallowed_special) for t in texts
            ]
        _, disallowed = resolve_special(self._special_tokens, allowed_special, disallowed_special)
        normalized = []
        for text in texts:
            text = self._normalized(text)
            check_disallowed(text, disallowed)
            normalized.append(self.normalize_text(clean_surrogates(text)))
        return self._engine_call(self._engine.encode_batch, normalized, threads)

    def encode_to_array(self, text: str, *, dtype=None, num_threads=None) -> np.ndarray:
        dtype = self._array_dtype(dtype)  # uint16 or uint32, as Tokenizer's: not numpy's overflow error
        return np.asarray(self.encode_ordinary(text, num_threads=num_threads), dtype=dtype)

    # -- decoding --------------------------------------------------------------------------

    def decode(self, ids, errors: str = "replace", *, skip_special_tokens: bool = False) -> str:
        """Ids to text as ``sentencepiece`` decodes them: the dummy prefix dropped, control
        pieces invisible, ``<unk>`` as `` ⁇ ``, each invalid byte piece as U+FFFD.

        ``errors="strict"`` raises ``UnicodeDecodeError`` where byte pieces are not UTF-8, and
        another handler (``"ignore"``...) treats them as ``bytes.decode`` does;
        ``skip_special_tokens`` as in ``Tokenizer.decode``.
        """
        check_errors(errors)
        ids = self._without_special(ids) if skip_special_tokens else self._checked_ids(ids)
        size = self._sp.size
        for position, token_id in enumerate(ids):
            if not 0 <= token_id < size:
                raise self._id_error(token_id, position)
        if errors == "strict":
            self.decode_bytes(ids).decode("utf-8")
        elif errors != "replace":  # "ignore", "backslashreplace"...: Python's handler, on the same bytes
            return self.decode_bytes(ids).decode("utf-8", errors)
        return self._reference.decode(ids)

    def decode_bytes(self, ids) -> bytes:
        """The bytes ``decode`` stands for (byte pieces raw; control pieces give nothing)."""
        ids = self._checked_ids(ids)
        out, text_so_far, dropped = [], False, False
        pieces, table = self._sp.pieces, self._sp.token_bytes
        strip = self._reference.add_dummy_prefix or self._reference.remove_extra_whitespaces
        for position, token_id in enumerate(ids):
            if not 0 <= token_id < len(pieces):
                raise self._id_error(token_id, position)
            piece, _, kind = pieces[token_id]
            if kind == CONTROL:
                continue
            value = table[token_id]
            if not text_so_far and not dropped and strip and kind != BYTE and piece.startswith(SPACE):
                value, dropped = value[1:], True
            out.append(value)
            text_so_far = text_so_far or bool(value)
        return b"".join(out)

    def _text_pieces(self, ids):
        # The ids' bytes are the text's plus the dummy prefix, a space at the start of each run
        # of ordinary ids (each text between special tokens is encoded apart), which covers no
        # character: "Hello world" -> "▁Hello" (0, 5), "▁world" (5, 11).
        reference = self._reference
        if reference.remove_extra_whitespaces or not reference.escape_whitespaces or reference.suffix:
            raise ValueError("this model's normalization moves or removes whitespace; its ids have no character spans")
        pieces = list(self.decode_tokens_bytes(ids))
        if reference.add_dummy_prefix:
            specials, starts = set(self._special_tokens.values()), True
            for index, token_id in enumerate(ids):
                if token_id in specials:
                    starts = True
                    continue
                if starts and pieces[index][:1] == b" ":
                    pieces[index] = pieces[index][1:]
                starts = False
        return pieces

    def token_bytes(self, token_id: int) -> bytes:
        """One piece's bytes with ``▁`` as a space (``b" world"`` for ``▁world``), as it stands in
        the text sentencepiece encodes (its dummy prefix included); a control piece's own string.
        (``decode_bytes([id])`` drops a leading space: the dummy prefix of a text that starts there.)
        """
        token_id = checked_id(token_id)
        value = self._sp.token_value(token_id)
        if value is None:
            raise self._id_error(token_id, 0)
        data = self._sp.token_bytes[token_id]
        return value.encode("utf-8") if data is None else data

    def token_string(self, token_id: int) -> str:
        """The piece as sentencepiece shows it (``▁the``, ``<0x0A>``, ``<s>``)."""
        token_id = checked_id(token_id)
        value = self._sp.token_value(token_id)
        if value is None:
            raise self._id_error(token_id, 0)
        return value

    def _id_error(self, token_id, position):
        from .errors import TokenIdError

        return TokenIdError(
            f"token id {token_id} at position {position} is not in the vocabulary (ids run from 0 to {self._sp.size - 1})"
        )
