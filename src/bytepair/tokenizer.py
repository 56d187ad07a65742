"""The ``Tokenizer``: a trained or loaded BPE vocabulary and the pipeline that runs it.

The pipeline, written out once::

    text -> 1. normalize          (normalize.py: none, NFC or NFKC)
         -> 2. split out specials (special.py: exact match, fixed ids, never merged)
         -> 3. pre-tokenize       (patterns.py, or the engine's scanner for named patterns)
         -> 4. BPE merges         (bytepair._engine, rule "replay", "tiktoken" or "hf")
         -> 5. ids
    ids  -> bytes (or characters) -> text

This module owns policy: argument checks, special-token rules, id bookkeeping. The loops live
in the compiled engine; the artifact format lives in ``artifact.py``; training in ``train.py``.
"""

from __future__ import annotations

import os

import numpy as np

from . import _engine
from .errors import SpecialTokenError, TokenIdError, UnknownCharactersError
from .normalize import check_normalization, normalize
from .patterns import resolve_pattern
from .patterns import split as regex_split
from .special import check_disallowed, resolve_special, split_on_special

MODES = ("char", "byte")
RULES = ("replay", "tiktoken", "hf")
# Patterns the compiled scanner implements; any other regex is split by the `regex` module.
SCANNED_PATTERNS = ("gpt2", "cl100k", "o200k", "llama3")


class Tokenizer:
    """A BPE tokenizer: character-level (``mode="char"``) or byte-level (``mode="byte"``).

    Build one with ``bytepair.train(...)``, ``Tokenizer.load(path)`` or ``bytepair.load(name)``.

    Example:
        >>> tok = Tokenizer(mode="char", base_tokens="abcd", merges=[("a", "a"), ("aa", "a")])
        >>> tok.encode("aaabd")
        [5, 1, 3]
        >>> tok.decode([5, 1, 3])
        'aaabd'

    NOTE: ids are base tokens first, then each merge's new value in merge order; a merge that
    rebuilds an existing value reuses its id (seed 000's rule), then byte-fallback tokens, then
    special tokens.
    """

    def __init__(
        self,
        *,
        mode,
        merges=(),
        base_tokens=None,
        pattern=None,
        normalization=None,
        special_tokens=None,
        byte_fallback=False,
    ):
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; use 'char' or 'byte'")
        self.mode = mode
        self.name = None  # the published name of a loaded vocabulary ("cl100k_base", ...)
        self.normalization = check_normalization(normalization)
        self.pattern_name, self.pattern = _resolve(pattern)
        self.rule = "replay"
        self.byte_fallback = bool(byte_fallback)
        if mode == "byte":
            if base_tokens is not None:
                raise ValueError("base_tokens apply to mode='char' only; byte mode starts from 256 bytes")
            if byte_fallback:
                raise ValueError("byte_fallback applies to mode='char' only; byte mode never fails")
            self.base_tokens = ()
            base_values = [bytes([b]) for b in range(256)]
        else:
            self.base_tokens = tuple(base_tokens or ())
            _check_base_tokens(self.base_tokens)
            base_values = list(self.base_tokens)
        self.merges = tuple((left, right) for left, right in merges)
        values = _vocabulary(base_values, self.merges)
        self._values = values
        self._token_bytes = [_as_bytes(v) for v in values]
        self._fallback_ids = None
        if self.byte_fallback:
            self._fallback_ids = list(range(len(values), len(values) + 256))
            self._token_bytes += [bytes([b]) for b in range(256)]
        self._learned_size = len(self._token_bytes)
        self.special_tokens = {}
        self._install_special(special_tokens)

    # -- construction helpers -----------------------------------------------------------

    @classmethod
    def _from_vocabulary(
        cls, *, token_bytes, pair_table, rule, whole_piece, pattern, special_tokens, name=None
    ):
        """A byte-level tokenizer over a foreign vocabulary (tiktoken ranks, HF merges).

        ``token_bytes``: dict bytes -> id; ``pair_table``: (left_id, right_id) -> (rank, id).
        Used by ``bytepair.formats``; merges are then the library's, not replayable ones.
        """
        self = cls.__new__(cls)
        self.mode = "byte"
        self.normalization = None
        self.pattern_name, self.pattern = _resolve(pattern)
        self.rule = rule
        self.name = name
        self.byte_fallback = False
        self.base_tokens = ()
        self.merges = ()
        size = max(token_bytes.values()) + 1
        table = [None] * size
        for value, token_id in token_bytes.items():
            table[token_id] = value
        self._values = table
        self._token_bytes = list(table)
        self._fallback_ids = None
        self._learned_size = size
        self._foreign = (token_bytes, pair_table, whole_piece)
        self.special_tokens = {}
        self._install_special(special_tokens)
        return self

    def _install_special(self, special_tokens):
        """Give special tokens their ids (next free ids, or the ids asked for) and rebuild."""
        if special_tokens:
            if isinstance(special_tokens, dict):
                wanted = dict(special_tokens)
            else:
                wanted = {}
                next_id = max([self._learned_size - 1, *self.special_tokens.values()]) + 1
                for token in special_tokens:
                    if token not in self.special_tokens and token not in wanted:
                        wanted[token] = next_id
                        next_id += 1
            for token, token_id in wanted.items():
                self._check_special(token, token_id)
                self.special_tokens[token] = int(token_id)
        self._special_by_id = {i: t for t, i in self.special_tokens.items()}
        size = max([self._learned_size - 1, *self.special_tokens.values()]) + 1
        self._decode_table = list(self._token_bytes) + [None] * (size - len(self._token_bytes))
        for token, token_id in self.special_tokens.items():
            self._decode_table[token_id] = token.encode("utf-8")
        self._build_engine()

    def _check_special(self, token, token_id):
        if not isinstance(token, str) or not token:
            raise SpecialTokenError(f"a special token must be a non-empty string, not {token!r}")
        if not isinstance(token_id, int) or token_id < 0:
            raise SpecialTokenError(f"special token {token!r} needs a non-negative integer id, not {token_id!r}")
        if token_id < self._learned_size and self._token_bytes[token_id] is not None:
            raise SpecialTokenError(
                f"special token {token!r} asks for id {token_id}, which is already the learned "
                f"token {self._token_bytes[token_id]!r}; use an id of {self._learned_size} or more"
            )
        clash = [t for t, i in self.special_tokens.items() if i == token_id and t != token]
        if clash:
            raise SpecialTokenError(f"special tokens {clash[0]!r} and {token!r} both ask for id {token_id}")

    def prefix(self, vocab_size):
        """The tokenizer of this one's first merges up to ``vocab_size`` tokens; see ``train.prefix``."""
        from .train import prefix

        return prefix(self, vocab_size)

    def add_special_tokens(self, special_tokens):
        """Add special tokens after training: a list (next free ids) or a dict token -> id.

        The fingerprint changes, since special tokens change behaviour.
        """
        self._install_special(special_tokens)
        return self

    def _build_engine(self):
        scanner = self.pattern_name if self.pattern_name in SCANNED_PATTERNS else None
        # A custom regex is split in Python by the `regex` module; named ones by the engine.
        self._regex_pattern = self.pattern if self.pattern is not None and scanner is None else None
        if self.rule != "replay":
            token_bytes, pair_table, whole_piece = self._foreign
            base_ids = [token_bytes[bytes([b])] for b in range(256)]
            monotonic, fallback_ids = False, None
        else:
            ids = {value: i for i, value in enumerate(self._values)}
            pair_table = {}
            for rank, (left, right) in enumerate(self.merges):
                # subtle: a merge list (from a file) can learn the same pair twice; replay
                # applies it at each of its ranks, so the engine gets every rank.
                ranks, _ = pair_table.setdefault((ids[left], ids[right]), ([], ids[left + right]))
                ranks.append(rank)
            if self.mode == "byte":
                base_ids = list(range(256))
            else:
                base_ids = {ord(c): i for i, c in enumerate(self.base_tokens)}
            whole_piece, monotonic, fallback_ids = False, True, self._fallback_ids
        self._engine = _engine.Encoder(
            mode=self.mode,
            token_bytes=self._token_bytes,
            base_ids=base_ids,
            pair_table=pair_table,
            whole_piece=whole_piece,
            monotonic=monotonic,
            pattern=scanner,
            fallback_ids=fallback_ids,
        )

    # -- properties ----------------------------------------------------------------------

    @property
    def vocab_size(self):
        """The number of ids, i.e. one more than the largest id (the embedding table's size)."""
        return len(self._decode_table)

    @property
    def fingerprint(self):
        """SHA-256 of what defines this tokenizer's behaviour (see ``artifact.py``)."""
        from .artifact import fingerprint

        return fingerprint(self)

    def __repr__(self):
        pattern = self.pattern_name or ("custom" if self.pattern else None)
        return (
            f"Tokenizer(mode={self.mode!r}, vocab_size={self.vocab_size}, pattern={pattern!r}, "
            f"normalization={self.normalization!r}, special_tokens={len(self.special_tokens)})"
        )

    # -- encoding ------------------------------------------------------------------------

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """Text to ids, with tiktoken's special-token rules.

        Example:
            >>> tok.encode("<|end|>", allowed_special="all")  # doctest: +SKIP
            [512]

        WARNING: by default a special token's string in the text raises
        ``DisallowedSpecialTokenError``, so user text cannot forge structure.
        """
        text = self._normalized(text)
        allowed, disallowed = resolve_special(self.special_tokens, allowed_special, disallowed_special)
        check_disallowed(text, disallowed)
        if not allowed:
            return self._encode_ordinary(text)
        ids = []
        for segment, is_special in split_on_special(text, allowed):
            if is_special:
                ids.append(self.special_tokens[segment])
            else:
                ids.extend(self._encode_ordinary(segment))
        return ids

    def encode_ordinary(self, text):
        """Text to ids, treating special-token strings as ordinary text (the fast path)."""
        return self._encode_ordinary(self._normalized(text))

    def encode_batch(self, texts, *, num_threads=None, allowed_special=frozenset(), disallowed_special="all"):
        """``[encode(t) for t in texts]``, on ``num_threads`` threads (default: all cores)."""
        texts = [self._normalized(t) for t in texts]
        allowed, disallowed = resolve_special(self.special_tokens, allowed_special, disallowed_special)
        for text in texts:
            check_disallowed(text, disallowed)
        if allowed or self._regex_pattern is not None:
            return [self.encode(t, allowed_special=allowed, disallowed_special=()) for t in texts]
        threads = num_threads or os.cpu_count() or 1
        return self._engine_call(self._engine.encode_batch, texts, threads)

    def encode_to_array(self, text, *, dtype=None):
        """Ordinary text to a numpy id array: ``uint16`` when every id fits, else ``uint32``."""
        dtype = dtype or self.array_dtype
        if np.dtype(dtype).itemsize * 8 < 32 and self.vocab_size > 2**16:
            raise ValueError(f"vocab_size {self.vocab_size} does not fit in {dtype}; use uint32")
        text = self._normalized(text)
        if self._regex_pattern is not None:
            return np.asarray(self._encode_ordinary(text), dtype=dtype)
        return self._engine_call(self._engine.encode_to_array, text, np.dtype(dtype).name)

    @property
    def array_dtype(self):
        """The smallest unsigned dtype that holds every id: uint16 or uint32."""
        return "uint16" if self.vocab_size <= 2**16 else "uint32"

    def encode_tokens(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """The pieces of ``text`` as strings, one per id (byte tokens that split a character show
        U+FFFD).

        Example:
            >>> tok.encode_tokens("aaabd")  # doctest: +SKIP
            ['aaa', 'b', 'd']
        """
        ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return [self.token_string(i) for i in ids]

    def split(self, text):
        """Stage 3 on its own: the pre-tokenization pieces of ``text`` (after normalization)."""
        text = self._normalized(text)
        if self._regex_pattern is not None:
            return regex_split(text, self.pattern)
        if self.pattern is None:
            return [text] if text else []
        return self._engine.split(text)

    def _normalized(self, text):
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        return normalize(text, self.normalization)

    def _encode_ordinary(self, text):
        if self._regex_pattern is not None:
            return self._engine_call(self._engine.encode_pieces, regex_split(text, self.pattern))
        return self._engine_call(self._engine.encode_ordinary, text)

    def _engine_call(self, function, *args):
        try:
            return function(*args)
        except _engine.UnknownCharacters as error:
            raise UnknownCharactersError(error.characters) from None

    # -- decoding ------------------------------------------------------------------------

    def decode_bytes(self, ids):
        """Ids to the exact bytes they stand for (no UTF-8 decoding)."""
        table = self._decode_table
        ids = self._checked_ids(ids)
        try:
            return b"".join([table[i] for i in ids])
        except (TypeError, IndexError):
            pass
        for position, token_id in enumerate(ids):
            if not 0 <= token_id < len(table) or table[token_id] is None:
                raise TokenIdError(
                    f"token id {token_id} at position {position} is not in the vocabulary "
                    f"(ids run from 0 to {len(table) - 1}{self._holes_note()})"
                )
        raise AssertionError("unreachable")  # pragma: no cover

    def decode(self, ids, errors="replace"):
        """Ids to text. ``errors="replace"`` (default) shows invalid UTF-8 as U+FFFD;
        ``errors="strict"`` raises ``UnicodeDecodeError``.
        """
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def token_bytes(self, token_id):
        """The bytes of one token id (special tokens: their UTF-8 string)."""
        return self.decode_bytes([token_id])

    def token_string(self, token_id):
        """A readable form of one token: its text, or U+FFFD where its bytes split a character."""
        if self.mode == "char" and token_id < len(self._values):
            return self._values[token_id]
        return self.token_bytes(token_id).decode("utf-8", errors="replace")

    def _checked_ids(self, ids):
        if isinstance(ids, np.ndarray):
            if ids.size and (ids.min() < 0):
                bad = int(np.flatnonzero(ids < 0)[0])
                raise TokenIdError(f"token id {int(ids[bad])} at position {bad} is negative")
            return ids.tolist()
        ids = list(ids)
        for position, token_id in enumerate(ids):
            if not isinstance(token_id, (int, np.integer)) or isinstance(token_id, bool):
                raise TokenIdError(f"token id {token_id!r} at position {position} is not an integer")
        if ids and min(ids) < 0:
            bad = next(p for p, i in enumerate(ids) if i < 0)
            raise TokenIdError(f"token id {ids[bad]} at position {bad} is negative")
        return [int(i) for i in ids]

    def _holes_note(self):
        return ", some unused" if any(v is None for v in self._decode_table) else ""

    # -- files ---------------------------------------------------------------------------

    def save(self, path):
        """Write the tokenizer as a JSON artifact (temporary file, then rename)."""
        from .artifact import save

        save(self, path)

    @classmethod
    def load(cls, path):
        """Read a JSON artifact written by ``save`` (or by seed 000's script), verifying it."""
        from .artifact import load

        return load(path)

    def to_tiktoken(self, path):
        """Write the vocabulary as a tiktoken rank file; see ``bytepair.formats.to_tiktoken``."""
        from .formats import to_tiktoken

        return to_tiktoken(self, path)

    def to_huggingface(self, path):
        """Write an HF ``tokenizer.json``; see ``bytepair.formats.to_huggingface``."""
        from .formats import to_huggingface

        return to_huggingface(self, path)

    def apply_chat_template(self, messages, **options):
        """Format chat messages with a chat template (see ``bytepair.chat``)."""
        from .chat import apply_chat_template

        return apply_chat_template(self, messages, **options)


def _resolve(pattern):
    """(name or None, regex or None) for a pattern name, a custom regex, or None."""
    return (None, None) if pattern is None else resolve_pattern(pattern)


def _check_base_tokens(base_tokens):
    for token in base_tokens:
        if not isinstance(token, str) or len(token) != 1:
            raise ValueError(f"base tokens must be single characters, not {token!r}")
    if len(set(base_tokens)) != len(base_tokens):
        raise ValueError("base tokens contain duplicates; give each character once")


def _vocabulary(base_values, merges):
    """Token values in id order: base, then each new merged value once (seed 000's rule)."""
    values = list(base_values)
    seen = set(values)
    for left, right in merges:
        if left not in seen or right not in seen:
            missing = left if left not in seen else right
            raise ValueError(f"merge {(left, right)!r} uses {missing!r}, which no earlier token builds")
        merged = left + right
        if merged not in seen:
            seen.add(merged)
            values.append(merged)
    return values


def _as_bytes(value):
    return value.encode("utf-8") if isinstance(value, str) else value
