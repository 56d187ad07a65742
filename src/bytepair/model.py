"""Vocabulary models: what turns one pre-tokenized piece into ids, one class per kind.

- ``MergeModel``: base tokens (characters, or the 256 bytes) and an ordered merge list, as
  training learns it and as the seed-compatible artifact stores it. Encoding replays the
  merges by rank (seed 000's rule); an optional byte fallback gives unknown characters their
  UTF-8 bytes.
- ``RankModel``: token bytes with ids, and a pair table, as another library ships it:
  tiktoken's rule (a piece that is a token is that token; else merge the adjacent pair whose
  concatenation has the lowest rank) or HF's rule (lowest merge rank; with ``ignore_merges``
  a whole piece is looked up first).

Each model knows its token bytes (``token_bytes``), the arguments of the compiled encoder
(``engine_spec``), what enters its fingerprint (``fingerprint_payload`` / ``fingerprint``), and
which formats it can be written to (``exports``, ``export_refusal``). Models are immutable,
compare by content, and pickle by their minimal truth (merges, or token bytes and rule).

This module does not normalize, pre-tokenize or handle special tokens (``tokenizer.py``
composes those stages), and reads no files (``artifact.py``, ``formats/``).

Example:
    >>> model = MergeModel(mode="char", base_tokens="abcd", merges=[("a", "a"), ("aa", "a")])
    >>> model.values
    ('a', 'b', 'c', 'd', 'aa', 'aaa')
    >>> [column.tolist() for column in model.engine_spec()["pair_columns"]]  # left, right, rank, merged
    [[0, 4], [0, 0], [0, 1], [4, 5]]
"""

from __future__ import annotations

import hashlib
import json
import operator
from collections.abc import ItemsView, Iterable, Mapping, Sequence
from typing import Literal

import numpy as np

from .bytelevel import bytes_to_readable
from .ids import check_defined_ids

Mode = Literal["char", "byte"]
MODES = ("char", "byte")
RULES = ("replay", "tiktoken", "hf")
FORMATS = ("artifact", "tiktoken", "huggingface")


def _checked_merges(merges):
    """``merges`` as a tuple of pairs; a merge that is not a pair (a 2-character string would
    unpack as one) is a TypeError naming it."""
    if merges is None or isinstance(merges, (str, bytes)):
        raise TypeError(f"merges must be a sequence of (left, right) pairs, not {merges!r}")
    checked = []
    for number, merge in enumerate(merges):
        if not isinstance(merge, (tuple, list)) or len(merge) != 2:
            raise TypeError(f"merge {number} is {merge!r}; each merge is a (left, right) pair")
        checked.append((merge[0], merge[1]))
    return tuple(checked)


class MergeModel:
    """Base tokens plus ordered merges, encoded by replaying the merges (lowest rank first).

    - ``mode="char"``: ``base_tokens`` are single characters; ``byte_fallback=True`` adds 256
      byte tokens after the merged ones for characters outside the alphabet.
    - ``mode="byte"``: the base tokens are the 256 bytes (ids 0..255); merges are pairs of bytes.

    Ids: base tokens first, then each merge's new value in merge order; a merge that rebuilds
    an existing value reuses its id (seed 000's rule); then the byte-fallback tokens.

    Example:
        >>> MergeModel(mode="byte", merges=[(b"a", b"b")]).token_bytes[256]
        b'ab'
    """

    rule = "replay"
    ignore_merges = False  # replay never looks a whole piece up first

    def __init__(
        self,
        *,
        mode: Mode,
        merges: Iterable[tuple[str, str] | tuple[bytes, bytes]] = (),
        base_tokens: Iterable[str] | None = None,
        byte_fallback: bool = False,
    ) -> None:
        base_values = self._set_base(mode, base_tokens, byte_fallback)
        self._merges = _checked_merges(merges)
        self._set_values(*_vocabulary(base_values, self._merges, mode))

    @classmethod
    def _learned(cls, *, mode, base_tokens, byte_fallback, merges, values, merge_ids):
        """The model of what bytepair's trainer learned: ``merges`` with the ``values`` and
        ``merge_ids`` the trainer worked out, trusted rather than rebuilt (rebuilding them took
        a sixth of training at 32,768 on WikiText-2; tests compare the two)."""
        model = cls.__new__(cls)
        model._set_base(mode, base_tokens, byte_fallback)
        model._merges = tuple(merges)
        model._set_values(values, merge_ids)
        return model

    def _set_base(self, mode, base_tokens, byte_fallback):
        """Checks and keeps the mode and the base; returns the base tokens' values."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; use 'char' or 'byte'")
        self._mode = mode
        if not isinstance(byte_fallback, (bool, np.bool_)):  # "no" would be true
            raise TypeError(f"byte_fallback must be True or False, not {byte_fallback!r}")
        self._byte_fallback = bool(byte_fallback)
        if mode == "byte":
            if base_tokens is not None:
                raise ValueError("base_tokens apply to mode='char' only; byte mode starts from 256 bytes")
            if byte_fallback:
                raise ValueError("byte_fallback applies to mode='char' only; byte mode never fails")
            self._base_tokens: tuple[str, ...] = ()
            return [bytes([b]) for b in range(256)]
        try:
            self._base_tokens = tuple(base_tokens or ())
        except TypeError:
            raise TypeError(f"base_tokens must be a str or a list of single characters, not {base_tokens!r}") from None
        _check_base_tokens(self._base_tokens)
        return list(self._base_tokens)

    def _set_values(self, values, merge_ids):
        """Keeps the values in id order, each merge's ids (left, right, merged: an (n, 3)
        uint32 array) and each id's bytes, byte fallback included."""
        mode = self._mode
        self._merge_ids = merge_ids
        self._values = tuple(values)
        token_bytes = list(values) if mode == "byte" else [_as_bytes(v) for v in values]
        self._fallback_ids = None
        if self._byte_fallback:
            self._fallback_ids = tuple(range(len(token_bytes), len(token_bytes) + 256))
            token_bytes += [bytes([b]) for b in range(256)]
        self._token_bytes = tuple(token_bytes)

    # -- what it holds ---------------------------------------------------------------------

    @property
    def mode(self) -> Mode:
        return self._mode

    @property
    def merges(self) -> tuple:
        """The merges in rank order: pairs of str (char mode) or bytes (byte mode)."""
        return self._merges

    @property
    def base_tokens(self) -> tuple[str, ...]:
        """The base alphabet (char mode); empty in byte mode, whose base is the 256 bytes."""
        return self._base_tokens

    @property
    def byte_fallback(self) -> bool:
        return self._byte_fallback

    @property
    def values(self) -> tuple:
        """Token values in id order (str in char mode, bytes in byte mode), fallback excluded."""
        return self._values

    @property
    def token_bytes(self) -> tuple[bytes | None, ...]:
        """Each id's bytes, in id order, byte-fallback tokens included."""
        return self._token_bytes

    @property
    def fallback_ids(self) -> tuple[int, ...] | None:
        """The ids of bytes 0..255 when the model has byte fallback, else None."""
        return self._fallback_ids

    @property
    def size(self) -> int:
        """The number of ids the model uses (special tokens come after)."""
        return len(self._token_bytes)

    def learned_ids(self) -> range:
        """The ids built by merges (not base tokens, not byte fallback)."""
        return range(256 if self._mode == "byte" else len(self._base_tokens), len(self._values))

    def token_value(self, token_id: int) -> str | bytes | None:
        """The value of a learned or base id: str in char mode, bytes in byte mode; None for an
        id it does not have (a negative one included, never counted from the end)."""
        if _is_id(token_id) and 0 <= token_id < len(self._values):
            return self._values[token_id]
        return None

    # -- what the other layers need ----------------------------------------------------------

    def engine_spec(self) -> dict:
        """The keyword arguments of ``_engine.Encoder`` for this model (pattern excluded)."""
        # subtle: a merge list (from a file) can learn the same pair twice; replay applies it
        # at each of its ranks, so the engine gets a row per rank.
        left, right, merged = self._merge_ids.T
        ranks = np.arange(len(self._merges), dtype=np.uint32)
        if self._mode == "byte":
            base_ids: object = list(range(256))
        else:
            base_ids = {ord(c): i for i, c in enumerate(self._base_tokens)}
        return dict(
            mode=self._mode,
            token_bytes=list(self._token_bytes),
            base_ids=base_ids,
            pair_table=None,
            pair_columns=(left, right, ranks, merged),
            whole_piece=False,
            monotonic=True,
            fallback_ids=list(self._fallback_ids) if self._fallback_ids else None,
        )

    def merges_for_json(self) -> list[list[str]]:
        """The merges as the artifact writes them (byte tokens in GPT-2's alphabet)."""
        if self._mode == "byte":
            return [[bytes_to_readable(left), bytes_to_readable(right)] for left, right in self._merges]
        return [[left, right] for left, right in self._merges]

    def fingerprint_payload(self) -> dict:
        """The model's fields of the artifact fingerprint, in the artifact's field order.

        Seed 000's formula hashes ``{"base_tokens", "merges"}`` (char mode); byte mode adds
        ``"mode": "byte"`` and byte fallback ``"byte_fallback": true``. ``artifact.py`` puts
        the tokenizer's own fields (pattern, normalization, special tokens) in between.
        """
        payload: dict = {}
        if self._mode == "char":
            payload["base_tokens"] = list(self._base_tokens)
        payload["merges"] = self.merges_for_json()
        if self._mode == "byte":
            payload["mode"] = "byte"
        if self._byte_fallback:
            payload["byte_fallback"] = True
        return payload

    def merge_pairs(self) -> Sequence[tuple]:
        """The merges in rank order, as values (what an HF file lists)."""
        return self._merges

    @property
    def exports(self) -> tuple[str, ...]:
        """The formats this model can be written to (each may still refuse a merge list)."""
        return tuple(f for f in FORMATS if self.export_refusal(f) is None)

    def export_refusal(self, fmt: str) -> str | None:
        """Why this model cannot be written as ``fmt``, or None when it can be tried."""
        if fmt == "tiktoken" and self._mode != "byte":
            return (
                "a tiktoken rank file holds byte tokens with 256 single-byte ids; this tokenizer is "
                "character-level (its ids start from its own alphabet), so it cannot be written as "
                "one. Export it with to_huggingface, or train with mode='byte'"
            )
        return None if fmt in FORMATS else f"unknown format {fmt!r}; use one of {FORMATS}"

    # -- value semantics --------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MergeModel):
            return NotImplemented
        return (self._mode, self._base_tokens, self._merges, self._byte_fallback) == (
            other._mode,
            other._base_tokens,
            other._merges,
            other._byte_fallback,
        )

    def __hash__(self) -> int:
        return hash((self._mode, self._base_tokens, self._merges, self._byte_fallback))

    def __reduce__(self):
        # The minimal truth: values and ids are rebuilt on load.
        arguments = {"mode": self._mode, "merges": self._merges, "byte_fallback": self._byte_fallback}
        if self._mode == "char":
            arguments["base_tokens"] = self._base_tokens
        return (_rebuild, (MergeModel, arguments))

    def __repr__(self) -> str:
        return f"MergeModel(mode={self._mode!r}, merges={len(self._merges)}, size={self.size})"


class RankModel:
    """Token bytes with ids and a pair table, encoded by tiktoken's or HF's rule.

    - ``rule="tiktoken"``: ``token_bytes`` are tiktoken's ranks (id = rank = merge priority);
      the pair table (every split of every token into two tokens) is derived by the engine
      from the token bytes, and here only on first use of ``pair_table`` (the fingerprint, an
      export). A piece that is a token is that token.
    - ``rule="hf"``: ``pair_table`` maps ``(left_id, right_id) -> (merge rank, merged id)``,
      read from the file's merge list; ``ignore_merges=True`` looks a whole piece up first.

    The model is byte-level; every single byte must be a token.

    Example:
        >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
        >>> RankModel(ranks, rule="tiktoken").pair_table[(97, 98)]
        (256, 256)
    """

    mode = "byte"
    byte_fallback = False
    fallback_ids = None
    merges = ()
    base_tokens = ()

    def __init__(
        self,
        token_bytes: Mapping[bytes, int],
        *,
        rule: Literal["tiktoken", "hf"],
        pair_table: Mapping[tuple[int, int], tuple[int, int]] | None = None,
        ignore_merges: bool = False,
    ) -> None:
        if rule not in ("tiktoken", "hf"):
            raise ValueError(f"unknown rule {rule!r}; a RankModel encodes by 'tiktoken' or 'hf'")
        if not isinstance(token_bytes, Mapping):
            raise TypeError(f"token_bytes must be a dict of token bytes -> id, not {type(token_bytes).__name__}")
        if set(map(type, token_bytes)) - {bytes}:  # a str key failed in the engine, after the checks
            key = next(k for k in token_bytes if type(k) is not bytes)
            raise TypeError(f"token_bytes keys must be bytes, not {type(key).__name__} {key!r:.60}")
        missing = [b for b in range(256) if bytes([b]) not in token_bytes]
        if missing:
            raise ValueError(
                f"single-byte token(s) {[bytes([b]) for b in missing[:8]]!r} are missing; "
                "a byte-level vocabulary needs all 256 bytes"
            )
        self._rule = rule
        self._ranks = token_bytes
        self._token_bytes = _id_table(token_bytes)
        if rule == "tiktoken":
            self._whole_piece = True
            # None: derived on first use (the fingerprint, an export), since the engine derives
            # its own copy from the token bytes (``token_splits``): a load never builds it here.
            self._pair_table = dict(pair_table) if pair_table is not None else None
            self._derives_pairs = pair_table is None
        else:
            if pair_table is None:
                raise ValueError("an HF-rule RankModel needs its pair_table (the file's merges)")
            self._whole_piece = bool(ignore_merges)
            self._pair_table = pair_table
            self._derives_pairs = False

    @property
    def rule(self) -> str:
        """``"tiktoken"`` or ``"hf"``: whose merge rule this model follows."""
        return self._rule

    @property
    def ignore_merges(self) -> bool:
        """Whether a piece that is a token is that token before any merging."""
        return self._whole_piece

    @property
    def token_bytes(self) -> tuple[bytes | None, ...]:
        """Each id's bytes, in id order; None where an id is unused."""
        return self._token_bytes

    @property
    def ranks(self) -> Mapping[bytes, int]:
        """``{token bytes: id}``."""
        return self._ranks

    @property
    def pair_table(self) -> Mapping[tuple[int, int], tuple[int, int]]:
        """``(left_id, right_id) -> (rank, merged_id)``; tiktoken's rule derives it on first use."""
        if self._pair_table is None:
            self._pair_table = PairTable(*_tiktoken_pairs(self._ranks))
        return self._pair_table

    @property
    def values(self) -> tuple[bytes | None, ...]:
        return self._token_bytes

    @property
    def size(self) -> int:
        return len(self._token_bytes)

    def learned_ids(self) -> range:
        return range(256, len(self._token_bytes))

    def token_value(self, token_id: int) -> bytes | None:
        return self._token_bytes[token_id] if _is_id(token_id) and 0 <= token_id < len(self._token_bytes) else None

    def engine_spec(self) -> dict:
        """The keyword arguments of ``_engine.Encoder`` for this model (pattern excluded)."""
        return dict(
            mode="byte",
            token_bytes=list(self._token_bytes),
            base_ids=[self._ranks[bytes([b])] for b in range(256)],
            pair_table=None if self._derives_pairs else self._pair_table,
            whole_piece=self._whole_piece,
            monotonic=False,
            fallback_ids=None,
            token_splits=self._derives_pairs,
        )

    def merge_pairs(self) -> list[tuple[bytes, bytes]]:
        """The pair table's merges in rank order, as byte pairs (what an HF file lists)."""
        values = self._token_bytes
        ordered = sorted(self.pair_table.items(), key=lambda item: item[1][0])
        return [(values[left], values[right]) for (left, right), _ in ordered]

    def fingerprint(self, pattern: str | None, special_tokens: Mapping[str, int]) -> str:
        """SHA-256 of the rule, the tokenizer's pattern and specials, every token and pair.

        What is hashed: the JSON of ``[rule, pattern, sorted specials]``; each id's bytes after
        a 2-byte little-endian length (``b"\\x00"`` for an unused id; a token of 65,535 bytes
        or more after ``b"\\xff\\xff"`` and an 8-byte length); ``repr(ignore_merges)``; then
        ``repr(((left, right), (rank, merged)))`` for each pair in sorted order. The text is
        built in C-level passes (numpy sort, one ``%`` format): 0.1 s on cl100k, not 1.1 s.
        """
        digest = hashlib.sha256()
        digest.update(json.dumps([self._rule, pattern, sorted(special_tokens.items())]).encode())
        digest.update(b"".join(map(_length_prefixed, self._token_bytes)))
        digest.update(repr(self._whole_piece).encode())
        left, right, rank, merged = _pair_columns(self.pair_table)
        order = np.lexsort((right, left))
        flat = np.stack([left[order], right[order], rank[order], merged[order]], axis=1).ravel().tolist()
        digest.update((("((%d, %d), (%d, %d))" * len(order)) % tuple(flat)).encode())
        return digest.hexdigest()

    @property
    def exports(self) -> tuple[str, ...]:
        return tuple(f for f in FORMATS if self.export_refusal(f) is None)

    def export_refusal(self, fmt: str) -> str | None:
        """Why this model cannot be written as ``fmt``, or None when it can."""
        if fmt == "artifact":
            return (
                "this tokenizer was loaded from another library's vocabulary; save it back with "
                "bytepair.formats (to_tiktoken / to_huggingface) instead"
            )
        if fmt == "tiktoken" and self._rule == "hf":
            return (
                "this vocabulary was loaded from a Hugging Face file and encodes with HF's rule (lowest "
                "merge rank), which tiktoken's rule (lowest rank of the concatenation) does not "
                "reproduce; export it with to_huggingface instead"
            )
        if fmt == "huggingface" and self._rule == "tiktoken":
            return (
                "this vocabulary encodes with tiktoken's rule (whole piece first, then lowest rank of "
                "the concatenation); HF's rule (lowest merge rank) can tie differently between splits "
                "that build the same token, so the file could give other ids. Export it with to_tiktoken"
            )
        return None if fmt in FORMATS else f"unknown format {fmt!r}; use one of {FORMATS}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RankModel):
            return NotImplemented
        return (self._rule, self._whole_piece, self._token_bytes) == (
            other._rule,
            other._whole_piece,
            other._token_bytes,
        ) and (self._rule == "tiktoken" or self.pair_table == other.pair_table)

    __hash__ = None  # type: ignore[assignment]  # equal by content, too big to hash usefully

    def __reduce__(self):
        # tiktoken's rule: the token bytes are the whole truth; the pair table is derived again.
        # HF's rule: the merges are part of the truth, kept as one int32 array of (left, right,
        # rank); the merged id is the id of the concatenation, looked up again on load.
        if self._rule == "tiktoken":
            return (_rebuild_rank_model, ("tiktoken", self._token_bytes, None, True))
        merges = np.fromiter(
            (x for (left, right), (rank, _) in self.pair_table.items() for x in (left, right, rank)),
            dtype=np.int32,
            count=3 * len(self.pair_table),
        )
        return (_rebuild_rank_model, ("hf", self._token_bytes, merges, self._whole_piece))

    def __repr__(self) -> str:
        return f"RankModel(rule={self._rule!r}, size={self.size}, ignore_merges={self._whole_piece})"


def _length_prefixed(value):
    if value is None:
        return b"\x00"
    if len(value) < 0xFFFF:
        return len(value).to_bytes(2, "little") + value
    return b"\xff\xff" + len(value).to_bytes(8, "little") + value  # too long for 2 bytes


def _pair_columns(pair_table):
    """A pair table as four int64 arrays: left, right, rank, merged id."""
    if isinstance(pair_table, PairTable):
        return tuple(np.asarray(column, dtype=np.int64) for column in pair_table.columns)
    flat = [x for (left, right), (rank, merged) in pair_table.items() for x in (left, right, rank, merged)]
    return tuple(np.asarray(flat, dtype=np.int64).reshape(-1, 4).T)


class PairTable(Mapping):
    """A read-only pair table ``(left_id, right_id) -> (rank, merged_id)`` held as columns.

    The engine only iterates ``items()``, which streams from the columns; the dict is built on
    the first lookup. On cl100k this skips building a 233k-entry dict of tuples on every load
    (0.12 s) that nothing else reads. Keys must be unique (each split of each token is).

    Example:
        >>> table = PairTable([97], [98], [256], [256])
        >>> dict(table.items()), table[(97, 98)]
        ({(97, 98): (256, 256)}, (256, 256))
    """

    def __init__(self, left, right, rank, merged):
        self.columns = (left, right, rank, merged)
        self._dict = None

    def _table(self):
        if self._dict is None:
            left, right, rank, merged = self.columns
            self._dict = dict(zip(zip(left, right), zip(rank, merged)))
        return self._dict

    def __getitem__(self, key):
        return self._table()[key]

    def __iter__(self):
        return iter(self._table())

    def __len__(self):
        return len(self.columns[0])

    def items(self):
        return _StreamedItems(self)

    def __repr__(self):
        return f"PairTable({len(self)} pairs)"


class _StreamedItems(ItemsView):
    def __iter__(self):
        left, right, rank, merged = self._mapping.columns
        return zip(zip(left, right), zip(rank, merged))


def _is_id(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _rebuild(cls, arguments):
    return cls(**arguments)


def _rebuild_rank_model(rule, token_bytes, merges, ignore_merges):
    ranks = {value: i for i, value in enumerate(token_bytes) if value is not None}
    pair_table = None
    if merges is not None:
        flat = merges.tolist()
        lefts, rights, ranks_ = flat[0::3], flat[1::3], flat[2::3]
        merged = map(
            ranks.__getitem__,
            map(bytes.__add__, map(token_bytes.__getitem__, lefts), map(token_bytes.__getitem__, rights)),
        )
        pair_table = dict(zip(zip(lefts, rights), zip(ranks_, merged)))
    return RankModel(ranks, rule=rule, pair_table=pair_table, ignore_merges=ignore_merges)


def _id_table(ranks):
    """``{token bytes: id}`` as a tuple indexed by id (None for unused ids), every id checked.

    Raises ``ValueError`` naming the token for an id that is not an int, negative, given twice,
    or so far past the number of tokens that the table would be huge (``ids.MAX_ID_GAP``).
    """
    check_defined_ids(ranks, count=len(ranks), what=lambda value: f"token {value[:50]!r}", error=ValueError)
    if list(ranks.values()) == list(range(len(ranks))):
        return tuple(ranks)  # ids 0..n-1 in order, as published rank files list them
    table: list = [None] * (max(ranks.values()) + 1)
    for value, token_id in ranks.items():
        if table[token_id] is not None:
            raise ValueError(
                f"tokens {table[token_id][:50]!r} and {value[:50]!r} both have id {token_id}; give each its own"
            )
        table[token_id] = value
    return tuple(table)


def _check_base_tokens(base_tokens):
    for token in base_tokens:
        if not isinstance(token, str) or len(token) != 1:
            raise ValueError(f"base tokens must be single characters, not {token!r}")
        if "\ud800" <= token <= "\udfff":
            raise ValueError(f"base token {token!r} is a lone surrogate, not a character; leave it out")
    if len(set(base_tokens)) != len(base_tokens):
        raise ValueError("base tokens contain duplicates; give each character once")


def _vocabulary(base_values, merges, mode):
    """Token values in id order: base, then each new merged value once (seed 000's rule); and
    each merge's ids, a ``(len(merges), 3)`` uint32 array of left, right and merged id."""
    values = list(base_values)
    ids = {value: i for i, value in enumerate(values)}
    kind = str if mode == "char" else bytes
    merge_ids: list[int] = []
    get, add_ids = ids.get, merge_ids.extend  # bound once: a training run gives 32K merges and more
    for left, right in merges:
        left_id, right_id = get(left), get(right)
        if left_id is None or right_id is None or type(left) is not kind or type(right) is not kind:
            _check_merge(left, right, left_id, right_id, kind, mode)
        merged = left + right
        merged_id = get(merged)
        if merged_id is None:
            merged_id = ids[merged] = len(values)
            values.append(merged)
        add_ids((left_id, right_id, merged_id))
    return values, np.array(merge_ids, dtype=np.uint32).reshape(-1, 3)


def _check_merge(left, right, left_id, right_id, kind, mode):
    """Raises the error a merge deserves: its parts are not ``kind``, or not built yet."""
    if not (isinstance(left, kind) and isinstance(right, kind)):
        raise ValueError(f"merge {(left, right)!r} must be a pair of {kind.__name__} in mode={mode!r}")
    if left_id is None or right_id is None:
        missing = left if left_id is None else right
        raise ValueError(f"merge {(left, right)!r} uses {missing!r}, which no earlier token builds")


def _as_bytes(value):
    return value.encode("utf-8") if isinstance(value, str) else value


# -- tiktoken's pair table ---------------------------------------------------------------------


def tiktoken_pair_table(ranks: Mapping[bytes, int]) -> dict[tuple[int, int], tuple[int, int]]:
    """Every split of every token into two tokens: ``(id(a), id(b)) -> (rank(a+b), id(a+b))``.

    tiktoken merges any adjacent pair whose concatenation is a token, so the table needs every
    split, not only the one that created the token. Ids are ranks.

    Example:
        >>> sorted(tiktoken_pair_table({b"a": 0, b"b": 1, b"ab": 2, b"bab": 3}).items())
        [((0, 1), (2, 2)), ((1, 2), (3, 3))]

    NOTE: vectorized with numpy (``_split_candidates``), with time and memory linear in the
    file's bytes: a plain loop of dict lookups took 3.6 s on o200k, and a loop over byte
    positions took 29 s for a file holding one 1 MB token.
    """
    return dict(PairTable(*_tiktoken_pairs(ranks)).items())


def _tiktoken_pairs(ranks):
    """The columns of ``tiktoken_pair_table``: left, right, rank and merged ids (lists)."""
    tokens = list(ranks)
    rank_of = np.fromiter(ranks.values(), dtype=np.int64, count=len(tokens))
    left, right, whole = _split_candidates(tokens)
    merged = rank_of[whole].tolist()
    return rank_of[left].tolist(), rank_of[right].tolist(), merged, merged


_HASH_BASE = 0x100000001B3  # odd, so it is invertible mod 2**64
_HASH_INVERSE = pow(_HASH_BASE, -1, 2**64)
_LOW_BITS = 12  # a power is looked up as high[p >> 12] * low[p & 4095]: two small tables
_CHUNK = 1 << 20  # bytes hashed per step, so that temporaries stay a few MB


def _split_candidates(tokens):
    """(left, right, whole) token indices where both halves of a split hash like tokens.

    Each token's bytes are hashed as a polynomial mod 2**64 whose lowest power goes with the
    first byte, so the hash of any slice of the joined tokens comes from one cumulative sum:
    ``hash(s, e) = (G[e] - G[s]) * BASE**-s`` with ``G[k] = sum(digit[j] * BASE**j, j < k)``.
    A token of ``n`` bytes can only split after byte ``i`` when some token has ``i`` bytes and
    some token ``n - i``, so only those cuts are tried: at most one per byte of the file, and
    far fewer for a long token (one 1 MB token has a handful). Memory: about 9 bytes per
    byte of the tokens, plus the candidates.
    """
    count = len(tokens)
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=count)
    starts = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    raw = np.frombuffer(b"".join(tokens), dtype=np.uint8)
    total = len(raw)
    with np.errstate(over="ignore"):
        powers, inverses = _power_tables(_HASH_BASE, total), _power_tables(_HASH_INVERSE, total)
        cumulative = np.zeros(total + 1, dtype=np.uint64)
        for begin in range(0, total, _CHUNK):
            end = min(begin + _CHUNK, total)
            # Digits 1..256, never 0, so that b"\x00a" and b"a" do not hash alike.
            terms = (raw[begin:end].astype(np.uint64) + np.uint64(1)) * _power(powers, np.arange(begin, end))
            np.cumsum(terms, out=cumulative[begin + 1 : end + 1])
            cumulative[begin + 1 : end + 1] += cumulative[begin]

        def slice_hash(begin, end):
            return (cumulative[end] - cumulative[begin]) * _power(inverses, begin)

        index = _HashIndex(slice_hash(starts[:-1], starts[1:]))
        if index.has_duplicates:
            return _split_candidates_exact(tokens, lengths)
        whole, cut = _cuts(lengths)
        begin = starts[whole]
        # The tail only where the head is a token: a third fewer lookups on cl100k.
        head_hit, left = index.lookup(slice_hash(begin, begin + cut))
        whole, cut, begin, left = whole[head_hit], cut[head_hit], begin[head_hit], left[head_hit]
        tail_hit, right = index.lookup(slice_hash(begin + cut, starts[whole + 1]))
    left, right, whole = left[tail_hit], right[tail_hit], whole[tail_hit]
    # A hash can collide in principle; keep only the splits that rebuild the token.
    keep = _rebuilds(tokens, raw, starts, lengths, left, right, whole)
    return left[keep], right[keep], whole[keep]


def _power_tables(base, limit):
    """``(low, high)``: ``base**p`` for p below 4096, and ``base**(4096 k)`` for p up to limit."""
    low = np.full(1 << _LOW_BITS, base, dtype=np.uint64)
    low[0] = 1
    np.cumprod(low, out=low)
    high = np.full((limit >> _LOW_BITS) + 1, pow(base, 1 << _LOW_BITS, 2**64), dtype=np.uint64)
    high[0] = 1
    np.cumprod(high, out=high)
    return low, high


def _power(tables, positions):
    """``base ** positions`` mod 2**64, element-wise."""
    low, high = tables
    return high[positions >> _LOW_BITS] * low[positions & ((1 << _LOW_BITS) - 1)]


_SHORT = 64  # tokens up to this many bytes are compared in numpy, longer ones one by one


def _rebuilds(tokens, raw, starts, lengths, left, right, whole):
    """Whether ``tokens[left] + tokens[right] == tokens[whole]``, for each candidate split.

    The lengths add up already, so comparing the bytes position by position is the whole
    check. Tokens of up to 8 bytes (most) are compared as 64-bit words; those up to
    ``_SHORT`` bytes in one gather; the few long ones with ``bytes.startswith`` / ``endswith``,
    which never copy a long token.
    """
    keep = np.ones(len(whole), dtype=bool)
    size = lengths[whole]
    word = np.flatnonzero(size <= 8)
    if len(word):
        value = _words(raw, starts, lengths)
        shift = (lengths[left[word]] * 8).astype(np.uint64)
        keep[word] = value[whole[word]] == value[left[word]] | (value[right[word]] << shift)
    short = np.flatnonzero((size > 8) & (size <= _SHORT))
    if len(short):
        n = size[short]
        first = np.zeros(len(short), dtype=np.int64)
        np.cumsum(n[:-1], out=first[1:])
        offset = np.arange(int(n.sum()), dtype=np.int64) - np.repeat(first, n)  # 0..n-1 per split
        owner = np.repeat(short, n)
        cut = np.repeat(lengths[left[short]], n)
        expected = raw[starts[whole[owner]] + offset]
        from_left = offset < cut
        source = np.where(from_left, starts[left[owner]] + offset, starts[right[owner]] + offset - cut)
        differs = (raw[source] != expected).view(np.uint8)
        keep[short] = np.add.reduceat(differs, first) == 0 if len(differs) else True
    long = np.flatnonzero(size > _SHORT).tolist()
    if long:
        get = tokens.__getitem__
        wholes = [tokens[whole[k]] for k in long]
        keep[long] = list(
            map(
                operator.and_,
                map(bytes.startswith, wholes, map(get, left[long].tolist())),
                map(bytes.endswith, wholes, map(get, right[long].tolist())),
            )
        )
    return keep


def _words(raw, starts, lengths):
    """Each token of up to 8 bytes as a little-endian 64-bit word (0 for longer tokens)."""
    value = np.zeros(len(lengths), dtype=np.uint64)
    fits = lengths <= 8
    for j in range(8):
        at = np.flatnonzero(fits & (lengths > j))
        value[at] |= raw[starts[at] + j].astype(np.uint64) << np.uint64(8 * j)
    return value


def _cuts(lengths):
    """(token index, cut) for every cut of every token whose two sides are token lengths."""
    present = np.zeros(int(lengths.max()) + 1, dtype=bool)
    present[lengths] = True
    distinct = np.flatnonzero(present)
    order = np.argsort(lengths, kind="stable")
    bounds = np.searchsorted(lengths[order], distinct, side="left").tolist() + [len(order)]
    wholes, cuts = [], []
    for k, size in enumerate(distinct.tolist()):
        cut = distinct[:k]  # the lengths below this one
        cut = cut[present[size - cut]]
        if len(cut):
            block = order[bounds[k] : bounds[k + 1]]
            wholes.append(np.repeat(block, len(cut)))
            cuts.append(np.tile(cut, len(block)))
    if not wholes:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(wholes), np.concatenate(cuts)


class _HashIndex:
    """The tokens' hashes, sorted and bucketed by their top bits, to look many up at once.

    A lookup reads its bucket's first hash, then the next for the few that missed, and so on:
    about as many rounds as the fullest bucket has hashes (a handful for random hashes), each
    a numpy gather, where ``searchsorted`` costs a binary search per query (3x slower on
    cl100k's 900k lookups). Buckets crowded by crafted hashes fall back to ``searchsorted``.
    """

    MAX_ROUNDS = 32
    # Hashes of short tokens are small numbers (a byte's is the byte + 1), so their top bits
    # are all zero; multiplying by an odd constant (Knuth's) spreads them and keeps them apart.
    MIX = np.uint64(0x9E3779B97F4A7C15)

    def __init__(self, hashes):
        with np.errstate(over="ignore"):
            hashes = hashes * self.MIX
        self.order = np.argsort(hashes, kind="stable")
        self.sorted = hashes[self.order]
        self.has_duplicates = bool(np.any(self.sorted[1:] == self.sorted[:-1]))
        bits = len(hashes).bit_length() + 2  # a quarter of a hash per bucket, on average
        self.shift = np.uint64(64 - bits)
        counts = np.bincount((self.sorted >> self.shift).astype(np.int64), minlength=1 << bits)
        self.starts = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=self.starts[1:])
        self.crowded = int(counts.max()) > self.MAX_ROUNDS

    def lookup(self, hashes):
        """(found, token index) for each hash; the index is meaningless where not found."""
        with np.errstate(over="ignore"):
            hashes = hashes * self.MIX
        if self.crowded:
            position = np.minimum(np.searchsorted(self.sorted, hashes), len(self.sorted) - 1)
            return self.sorted[position] == hashes, self.order[position]
        bucket = (hashes >> self.shift).astype(np.int64)
        position, end = self.starts[bucket], self.starts[bucket + 1]
        found = np.full(len(hashes), -1, dtype=np.int64)
        active = np.flatnonzero(position < end)
        while len(active):
            at = position[active]
            match = self.sorted[at] == hashes[active]
            found[active[match]] = at[match]
            active = active[~match]
            position[active] += 1
            active = active[position[active] < end[active]]
        hit = found >= 0
        return hit, self.order[np.maximum(found, 0)]


def _split_candidates_exact(tokens, lengths):
    """The same candidates by dict lookups of the real bytes, for a file whose tokens hash
    alike (never seen in a real vocabulary; a crafted one can do it)."""
    index = {token: i for i, token in enumerate(tokens)}
    whole, cut = _cuts(lengths)
    left, right, kept = [], [], []
    for w, i in zip(whole.tolist(), cut.tolist()):
        token = tokens[w]
        a, b = index.get(token[:i]), index.get(token[i:])
        if a is not None and b is not None:
            left.append(a), right.append(b), kept.append(w)
    return tuple(np.asarray(x, dtype=np.int64) for x in (left, right, kept))
