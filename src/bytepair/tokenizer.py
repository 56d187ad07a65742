"""The ``Tokenizer``: a vocabulary model and the pipeline stages around it.

The pipeline, written out once::

    text -> 1. normalize          (normalize.py: none, NFC or NFKC)
         -> 2. split out specials (special.py: exact match, fixed ids, never merged)
         -> 3. pre-tokenize       (patterns.py, or the engine's scanner for named patterns)
         -> 4. BPE model          (model.py: MergeModel or RankModel, run by bytepair._engine)
         -> 5. ids
    ids  -> bytes (or characters) -> text

This module owns policy: argument checks, special-token rules, id bookkeeping. The loops live
in the compiled engine; the vocabulary kinds in ``model.py``; the artifact format in
``artifact.py``; training in ``train.py``.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any, Literal

import numpy as np

from . import _engine, artifact
from ._io import check_path
from .dropin import DropInMixin, hf_named_tokens, listed
from .errors import (
    ArtifactError,
    DisallowedSpecialTokenError,
    SpecialTokenError,
    TokenIdError,
    TrainingError,
    UnknownCharactersError,
)
from .ids import check_defined_id, checked_id, checked_ids, plain_int
from .model import MODES, RULES, MergeModel, RankModel
from .normalize import check_normalization, clean_surrogates, normalize
from .patterns import UNICODE_BY_RULE, resolve_pattern
from .patterns import split as regex_split
from .special import check_disallowed, resolve_special, special_regex, special_token_list, split_on_special
from .threads import check_num_threads

__all__ = ["MODES", "RULES", "SCANNED_PATTERNS", "Tokenizer"]

# Patterns the compiled scanner implements; any other regex is split by the `regex` module.
# The engine is the authority; this is its list of names.
SCANNED_PATTERNS: tuple[str, ...] = tuple(_engine.SCANNED_PATTERNS)
# encode's default allowed_special
_NONE_ALLOWED: frozenset[str] = frozenset()

Model = MergeModel | RankModel
SpecialTokens = Iterable[str] | Mapping[str, int]


class Tokenizer(DropInMixin):
    """A BPE tokenizer: a vocabulary model composed with normalization, special tokens and a
    pre-tokenization pattern (Hugging Face's shape: ``Tokenizer(model, ...)``).

    Build one with ``bytepair.train(...)``, ``bytepair.load(name or path)``, or from a model:

    - ``Tokenizer(model, pattern=..., normalization=..., special_tokens=...)`` where ``model``
      is a ``MergeModel`` or a ``RankModel`` (``bytepair.model``);
    - the keyword form ``Tokenizer(mode=..., merges=..., base_tokens=..., byte_fallback=...,
      pattern=..., ...)``, kept for code written before models existed: it builds the
      ``MergeModel(mode=, merges=, base_tokens=, byte_fallback=)`` for you.

    Example:
        >>> tok = Tokenizer(mode="char", base_tokens="abcd", merges=[("a", "a"), ("aa", "a")])
        >>> tok.encode("aaabd")
        [5, 1, 3]
        >>> tok.decode([5, 1, 3])
        'aaabd'
        >>> Tokenizer(tok.model).encode("aaabd")
        [5, 1, 3]

    It also answers to the names code written for tiktoken and Hugging Face calls (``n_vocab``,
    ``eot_token``, ``decode_with_offsets``, ``get_vocab``, ``tok(texts, padding=True)``...; see
    ``bytepair.dropin``), and carries HF's settings (``bos_token``, ``eos_token``,
    ``pad_token``, ``chat_template``, ``model_max_length``) as attributes.

    NOTE: ids are the model's (for a MergeModel: base tokens first, then each merge's new value
    in merge order, a merge that rebuilds an existing value reusing its id, then byte-fallback
    tokens), then special tokens.
    """

    # The model kinds this class composes; a subclass for another kind names its own.
    _model_types: tuple[type, ...] = (MergeModel, RankModel)

    def __init__(
        self,
        model: Model | None = None,
        *,
        pattern: str | None = None,
        normalization: str | None = None,
        special_tokens: SpecialTokens | None = None,
        name: str | None = None,
        mode: Literal["char", "byte"] | None = None,
        merges: Iterable[tuple[Any, Any]] = (),
        base_tokens: Iterable[str] | None = None,
        byte_fallback: bool = False,
    ) -> None:
        if model is None:
            if mode is None:
                raise TypeError("Tokenizer() needs a model (MergeModel or RankModel), or mode=... and merges=...")
            if mode not in MODES:
                raise ValueError(f"unknown mode {mode!r}; use 'char' or 'byte'")
            model = MergeModel(mode=mode, merges=merges, base_tokens=base_tokens, byte_fallback=byte_fallback)
        elif not isinstance(model, self._model_types):
            raise TypeError(f"model must be a MergeModel or a RankModel, not {type(model).__name__}")
        elif mode is not None or merges or base_tokens is not None or byte_fallback:
            raise TypeError("give either a model or mode/merges/base_tokens/byte_fallback, not both")
        self._model = model
        self._name = name  # the published name of a loaded vocabulary ("cl100k_base", ...)
        self._normalization = check_normalization(normalization)
        self._pattern_name, self._pattern = _resolve(pattern)
        self._special_tokens: dict[str, int] = {}
        self._install_special(special_tokens)
        self._build_engine()
        self._init_settings()

    # -- construction helpers -----------------------------------------------------------

    def _install_special(self, special_tokens):
        """Give special tokens their ids (next free ids, or the ids asked for) and rebuild the
        decode table; the encoder is the model's and the pattern's, and stays."""
        special_tokens = special_token_list(special_tokens)
        learned_size = self._model.size
        if special_tokens:
            if isinstance(special_tokens, dict):
                wanted = dict(special_tokens)
            else:
                wanted = {}
                next_id = max([learned_size - 1, *self._special_tokens.values()]) + 1
                for token in special_tokens:
                    if token not in self._special_tokens and token not in wanted:
                        wanted[token] = next_id
                        next_id += 1
            # Tables are sized by the largest id: bound it by the number of tokens (ids.py).
            count = learned_size + len(self._special_tokens) + len(wanted)
            for token, token_id in wanted.items():
                self._check_special(token, token_id, count)
                self._special_tokens[token] = int(token_id)
        self._special_by_id = {i: t for t, i in self._special_tokens.items()}
        self._special_regex = special_regex(self._special_tokens) if self._special_tokens else None
        size = max([learned_size - 1, *self._special_tokens.values()]) + 1
        token_bytes = self._model.token_bytes
        self._decode_table = list(token_bytes) + [None] * (size - len(token_bytes))
        for token, token_id in self._special_tokens.items():
            self._decode_table[token_id] = token.encode("utf-8")
        self._decoder = _engine.Decoder(self._decode_table)
        self._fingerprint = None  # computed on first use, then kept

    def _check_special(self, token, token_id, count):
        if not isinstance(token, str) or not token:
            raise SpecialTokenError(f"a special token must be a non-empty string, not {token!r}")
        if not isinstance(token_id, int) or isinstance(token_id, bool) or token_id < 0:
            raise SpecialTokenError(f"special token {token!r} needs a non-negative integer id, not {token_id!r}")
        try:
            token.encode("utf-8")
        except UnicodeEncodeError as error:
            raise SpecialTokenError(
                f"special token {token!r} holds a surrogate at {error.start}, which is not text (UTF-8 has "
                "no form for it); join a surrogate pair into its character, e.g. with "
                "token.encode('utf-16', 'surrogatepass').decode('utf-16')"
            ) from None
        if self._normalization is not None and normalize(token, self._normalization) != token:
            # text is normalized before special tokens are matched, so this one never would be
            raise SpecialTokenError(
                f"special token {token!r} is {normalize(token, self._normalization)!r} after "
                f"{self._normalization} normalization, which encoding applies first, so it could never "
                "be matched; use the normalized form"
            )
        check_defined_id(token_id, count=count, what=f"special token {token[:50]!r}", error=SpecialTokenError)
        token_bytes = self._model.token_bytes
        if token_id < len(token_bytes) and token_bytes[token_id] is not None:
            raise SpecialTokenError(
                f"special token {token!r} asks for id {token_id}, which is already the learned "
                f"token {token_bytes[token_id]!r}; use an id of {len(token_bytes)} or more"
            )
        clash = [t for t, i in self._special_tokens.items() if i == token_id and t != token]
        if clash:
            raise SpecialTokenError(f"special tokens {clash[0]!r} and {token!r} both ask for id {token_id}")

    def prefix(self, vocab_size: int) -> Tokenizer:
        """The tokenizer made of this one's first merges: those that reach ``vocab_size``
        distinct tokens (base alphabet + merged values; special and byte-fallback tokens not
        counted, as in ``train``). Pattern, normalization, byte fallback and special tokens are kept;
        special tokens take the ids right after the smaller vocabulary.

        BPE training is greedy and its choice of merge never depends on the size asked for, so the
        prefix is the tokenizer a separate ``train(..., vocab_size=vocab_size)`` on the same text
        gives, with the same fingerprint; one training run at the largest size gives every smaller
        size (``bytepair sweep`` uses this and checks it).

        Example:
            >>> tok = Tokenizer(mode="char", base_tokens="abcd", merges=[("a", "a"), ("aa", "a")])
            >>> small = tok.prefix(5)
            >>> small.merges, small.vocab_size
            ((('a', 'a'),), 5)
        """
        if self.rule != "replay":
            raise TrainingError(
                f"prefix needs a tokenizer trained here (an ordered merge list); {self.name or 'this vocabulary'!r} "
                "was loaded from another library's ranks, whose ids are not built by merges in order"
            )
        vocab_size = plain_int(vocab_size)
        if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
            raise TrainingError(f"vocab_size must be an integer, not {vocab_size!r}")
        values = [bytes([b]) for b in range(256)] if self.mode == "byte" else list(self.base_tokens)
        floor, seen = len(values), set(values)
        kept = 0
        for left, right in self.merges:
            if len(seen) >= vocab_size:
                break
            seen.add(left + right)
            kept += 1
        if vocab_size < floor or len(seen) < vocab_size:
            ceiling = len(set(values).union(left + right for left, right in self.merges))
            raise TrainingError(
                f"vocab_size {vocab_size} is outside what this tokenizer's merges give: from {floor} "
                f"(the base alphabet) to {ceiling} (all {len(self.merges)} merges); train a larger one to go further"
            )
        by_id = sorted(self.special_tokens.items(), key=lambda item: item[1])
        return Tokenizer(
            mode=self.mode,
            merges=self.merges[:kept],
            base_tokens=self.base_tokens if self.mode == "char" else None,
            pattern=self.pattern_name or self.pattern,
            normalization=self.normalization,
            special_tokens=[token for token, _ in by_id] or None,
            byte_fallback=self.byte_fallback,
        )

    def add_special_tokens(self, special_tokens: SpecialTokens) -> Tokenizer:
        """Add special tokens after training: a list (next free ids) or a dict token -> id.

        transformers' form, ``{"pad_token": "<|pad|>", "additional_special_tokens": [...]}``,
        adds its tokens (next free ids) and sets the named ones (``tok.pad_token``...); it
        returns the tokenizer, where transformers returns the number of tokens added.

        The fingerprint changes, since special tokens change behaviour.
        """
        named = hf_named_tokens(special_tokens)
        if named is not None:
            tokens, settings = named
            self._install_special(tokens)
            for name, value in settings.items():
                setattr(self, name, value)
            return self
        self._install_special(special_tokens)
        return self

    def _build_engine(self):
        scanner = self._pattern_name if self._pattern_name in SCANNED_PATTERNS else None
        # A custom regex is split in Python by the `regex` module; named ones by the engine.
        self._regex_pattern = self._pattern if self._pattern is not None and scanner is None else None
        # The scanner's Unicode tables: the emulated library's (patterns.UNICODE_BY_RULE).
        unicode = UNICODE_BY_RULE.get(self._model.rule, "regex")
        self._engine = _engine.Encoder(pattern=scanner, unicode=unicode, **self._model.engine_spec())
        # Whether encode_ordinary is the engine's alone: no normalization, no regex split, and
        # no subclass's own _encode_ordinary (SentencePiece's pieces).
        self._engine_direct = (
            self._normalization is None
            and self._regex_pattern is None
            and type(self)._encode_ordinary is Tokenizer._encode_ordinary
        )

    # -- pickling ------------------------------------------------------------------------

    def __reduce__(self):
        # By content: the model (its minimal truth) and the stages; the engine, tables and
        # fingerprint are rebuilt on load. A named pattern travels by name.
        pattern = self._pattern_name or self._pattern
        stages = (pattern, self._normalization, dict(self._special_tokens), self._name, self._settings())
        return (_rebuild_tokenizer, (self._model, stages))

    def __deepcopy__(self, memo):
        # Models are immutable and shared; the rest is rebuilt (the engine cannot be copied).
        copy = _rebuild_tokenizer(self._model, self.__reduce__()[1][1])
        memo[id(self)] = copy
        return copy

    # -- what it is made of --------------------------------------------------------------

    @property
    def model(self) -> Model:
        """The vocabulary model: a ``MergeModel`` or a ``RankModel``."""
        return self._model

    @property
    def mode(self) -> str:
        """``"char"`` or ``"byte"``."""
        return self._model.mode

    @property
    def rule(self) -> str:
        """Whose merge rule the model follows: ``"replay"``, ``"tiktoken"`` or ``"hf"``."""
        return self._model.rule

    @property
    def merges(self) -> tuple:
        """A MergeModel's merges in rank order; empty for a loaded RankModel."""
        return self._model.merges

    @property
    def base_tokens(self) -> tuple[str, ...]:
        """A character-level model's alphabet; empty otherwise."""
        return self._model.base_tokens

    @property
    def byte_fallback(self) -> bool:
        return self._model.byte_fallback

    @property
    def name(self) -> str | None:
        """The published name of a loaded vocabulary (``"cl100k_base"``), else None."""
        return self._name

    @property
    def pattern(self) -> str | None:
        """The pre-tokenization regex, or None (the text is one piece)."""
        return self._pattern

    @property
    def pattern_name(self) -> str | None:
        """The pattern's name when it is a named one (``"cl100k"``), else None."""
        return self._pattern_name

    @property
    def normalization(self) -> str | None:
        return self._normalization

    @property
    def special_tokens(self) -> dict[str, int]:
        """``{special token: id}`` (a copy: change them with ``add_special_tokens``)."""
        return dict(self._special_tokens)

    def is_special(self, token_id: int) -> bool:
        """Whether ``token_id`` is a special token's id."""
        return checked_id(token_id) in self._special_by_id

    # -- properties ----------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """The number of ids, i.e. one more than the largest id (the embedding table's size)."""
        return len(self._decode_table)

    @property
    def fingerprint(self) -> str:
        """SHA-256 of what defines this tokenizer's behaviour, computed once.

        A ``MergeModel``'s is the artifact's fingerprint (seed 000's formula, see
        ``artifact.py``); a ``RankModel``'s hashes its rule, tokens and pair table with the
        pattern and special tokens (``RankModel.fingerprint``).
        """
        if self._fingerprint is None:
            if isinstance(self._model, MergeModel):
                self._fingerprint = artifact.to_dict(self)["fingerprint"]
            else:
                self._fingerprint = self._model.fingerprint(self._pattern, self._special_tokens)
        return self._fingerprint

    def __repr__(self) -> str:
        pattern = self._pattern_name or ("custom" if self._pattern else None)
        return (
            f"Tokenizer(mode={self.mode!r}, vocab_size={self.vocab_size}, pattern={pattern!r}, "
            f"normalization={self._normalization!r}, special_tokens={len(self._special_tokens)})"
        )

    # -- encoding ------------------------------------------------------------------------

    def encode(
        self,
        text: str,
        *,
        allowed_special: AbstractSet[str] | str = _NONE_ALLOWED,
        disallowed_special: Collection[str] | str = "all",
        num_threads: int | None = None,
    ) -> list[int]:
        """Text to ids, with tiktoken's special-token rules. In char mode without a pattern a
        long text is spread over ``num_threads`` threads (default: all cores; the same ids);
        other texts take one thread.

        Example:
            >>> tok = Tokenizer(mode="char", base_tokens="abcd", merges=[("a", "a"), ("aa", "a")],
            ...                 special_tokens=["<|end|>"])
            >>> tok.encode("aaab<|end|>", allowed_special="all")
            [5, 1, 6]

        WARNING: by default a special token's string in the text raises
        ``DisallowedSpecialTokenError``, so user text cannot forge structure.
        """
        if allowed_special == _NONE_ALLOWED and disallowed_special == "all" and self._normalization is None:
            # The defaults: any special token's string is an error, the rest is ordinary text
            # (resolving the switches each call cost 1.2 us, tiktoken's whole call on "a").
            if isinstance(text, str) and self._special_regex is not None:
                match = self._special_regex.search(text)
                if match:
                    raise DisallowedSpecialTokenError(match.group())
            return self.encode_ordinary(text, num_threads=num_threads)
        threads = None if num_threads is None else check_num_threads(num_threads)
        text = self._normalized(text)
        allowed, disallowed = resolve_special(self._special_tokens, allowed_special, disallowed_special)
        check_disallowed(text, disallowed)
        if not allowed:
            return self._encode_ordinary(text, threads)
        ids = []
        for segment, is_special in split_on_special(text, allowed):
            if is_special:
                ids.append(self._special_tokens[segment])
            else:
                ids.extend(self._encode_ordinary(segment, threads))
        return ids

    def encode_ordinary(self, text: str, *, num_threads: int | None = None) -> list[int]:
        """Text to ids, treating special-token strings as ordinary text (the fast path);
        threads as in ``encode``."""
        if num_threads is None and self._engine_direct:
            # The common case straight to the engine (which checks the type alike): the four
            # Python calls of the general path cost 340 ns, more than the engine's whole
            # call on a short text (210 ns for "a", cl100k).
            try:
                return self._engine.encode_ordinary(text)
            except _engine.UnknownCharacters as error:
                raise UnknownCharactersError(error.characters) from None
        threads = None if num_threads is None else check_num_threads(num_threads)
        return self._encode_ordinary(self._normalized(text), threads)

    def encode_batch(
        self,
        texts: Iterable[str],
        *,
        num_threads: int | None = None,
        allowed_special: AbstractSet[str] | str = frozenset(),
        disallowed_special: Collection[str] | str = "all",
    ) -> list[list[int]]:
        """``[encode(t) for t in texts]``, on ``num_threads`` threads (default: all cores).

        NOTE: text under a named pattern (or none) runs on the threads, its allowed special
        tokens cut out first; with a custom regex the texts are encoded one after the other on the
        calling thread (the same ids, at ``encode``'s speed).
        """
        threads = check_num_threads(num_threads)
        texts = [self._normalized(t) for t in text_list(texts)]
        allowed, disallowed = resolve_special(self._special_tokens, allowed_special, disallowed_special)
        for text in texts:
            check_disallowed(text, disallowed)
        if self._regex_pattern is not None:
            return [self.encode(t, allowed_special=allowed, disallowed_special=()) for t in texts]
        if allowed:
            segments, layouts = self._special_layouts(texts, allowed)
            lists = self._engine_call(self._engine.encode_batch, segments, threads)
            return [[i for part in layout for i in (lists[part] if part >= 0 else (~part,))] for layout in layouts]
        return self._engine_call(self._engine.encode_batch, texts, threads)

    def encode_batch_to_array(
        self,
        texts: Iterable[str],
        *,
        num_threads: int | None = None,
        dtype: Any = None,
        allowed_special: AbstractSet[str] | str = frozenset(),
        disallowed_special: Collection[str] | str = "all",
    ) -> tuple[np.ndarray, np.ndarray]:
        """``encode_batch(texts)`` as one flat id array and where each text starts in it:
        ``(ids, offsets)``, text k's ids being ``ids[offsets[k]:offsets[k + 1]]`` (``offsets`` is
        int64, ``len(texts) + 1`` items). ``dtype``: as ``encode_to_array`` (default
        ``array_dtype``). The same rules as ``encode_batch``; ordinary text under a named pattern
        (or none) goes from the threads straight into the array, without Python ints.

        Example:
            >>> tok = Tokenizer(mode="char", base_tokens="abcd", merges=[("a", "a"), ("aa", "a")])
            >>> ids, offsets = tok.encode_batch_to_array(["aaabd", "d"])
            >>> ids[offsets[0]:offsets[1]].tolist(), offsets.tolist()
            ([5, 1, 3], [0, 3, 4])
        """
        threads = check_num_threads(num_threads)
        dtype = self._array_dtype(dtype)
        if type(self)._encode_ordinary is not Tokenizer._encode_ordinary:
            # a subclass's own encoding (SentencePiece's spaces as "▁") is not the engine's batch;
            # its encode_batch normalizes and checks the texts itself
            lists = self.encode_batch(
                text_list(texts),
                num_threads=threads,
                allowed_special=allowed_special,
                disallowed_special=disallowed_special,
            )
            return self._flat_array(lists, dtype)
        texts = [self._normalized(t) for t in text_list(texts)]
        allowed, disallowed = resolve_special(self._special_tokens, allowed_special, disallowed_special)
        for text in texts:
            check_disallowed(text, disallowed)
        if self._regex_pattern is not None:
            lists = [self.encode(t, allowed_special=allowed, disallowed_special=()) for t in texts]
            return self._flat_array(lists, dtype)
        if allowed:
            segments, layouts = self._special_layouts(texts, allowed)
            ids, starts = self._engine_call(self._engine.encode_batch_to_array, segments, threads, dtype.name)
            if len(segments) == len(texts) and all(layout == [k] for k, layout in enumerate(layouts)):
                return ids, starts  # no special token in any text: the ordinary batch as it is
            return self._joined_layouts(ids, starts, layouts, dtype)
        return self._engine_call(self._engine.encode_batch_to_array, texts, threads, dtype.name)

    def _special_layouts(self, texts, allowed):
        """The texts cut at their allowed special tokens: the ordinary segments of all of them (to
        encode as one batch on the threads), and for each text its parts in order, a segment's
        index or ``~id`` for a special token (so ``encode``'s ids are the parts' ids end to end)."""
        segments, layouts = [], []
        for text in texts:
            layout = []
            for segment, is_special in split_on_special(text, allowed):
                if is_special:
                    layout.append(~self._special_tokens[segment])
                else:
                    layout.append(len(segments))
                    segments.append(segment)
            layouts.append(layout)
        return segments, layouts

    @staticmethod
    def _joined_layouts(ids, starts, layouts, dtype):
        """Each text's segments' ids (``ids[starts[k]:starts[k + 1]]``) and special ids, end to end,
        as ``encode_batch_to_array``'s ``(ids, offsets)``."""
        lengths = np.diff(starts)
        offsets = np.zeros(len(layouts) + 1, dtype=np.int64)
        np.cumsum([sum(int(lengths[p]) if p >= 0 else 1 for p in layout) for layout in layouts], out=offsets[1:])
        out = np.empty(int(offsets[-1]), dtype=dtype)
        at = 0
        for layout in layouts:
            for part in layout:
                if part >= 0:
                    n = int(lengths[part])
                    out[at : at + n] = ids[starts[part] : starts[part] + n]
                    at += n
                else:
                    out[at] = ~part
                    at += 1
        return out, offsets

    @staticmethod
    def _flat_array(lists, dtype):
        """Id lists as ``encode_batch_to_array``'s ``(ids, offsets)``."""
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum([len(ids) for ids in lists], out=offsets[1:])
        return np.fromiter((i for ids in lists for i in ids), dtype=dtype, count=int(offsets[-1])), offsets

    def encode_to_array(self, text: str, *, dtype: Any = None, num_threads: int | None = None) -> np.ndarray:
        """Ordinary text to a numpy id array: ``uint16`` when every id fits, else ``uint32``;
        threads as in ``encode``."""
        threads = None if num_threads is None else check_num_threads(num_threads)
        dtype = self._array_dtype(dtype)
        text = self._normalized(text)
        if self._regex_pattern is not None:
            return np.asarray(self._encode_ordinary(text), dtype=dtype)
        return self._engine_call(self._engine.encode_to_array, text, dtype.name, threads)

    @property
    def array_dtype(self) -> str:
        """The smallest unsigned dtype that holds every id: uint16 or uint32."""
        return "uint16" if self.vocab_size <= 2**16 else "uint32"

    def _array_dtype(self, dtype):
        """``dtype`` (default ``array_dtype``) as a numpy dtype that holds every id, or ValueError."""
        try:
            dtype = np.dtype(dtype or self.array_dtype)
        except TypeError:  # numpy's "data type 'x' not understood" named no argument
            raise ValueError(f"dtype must be uint16 or uint32, not {dtype!r}") from None
        if dtype.name not in ("uint16", "uint32"):
            raise ValueError(f"dtype must be uint16 or uint32, not {dtype}")
        if dtype.itemsize * 8 < 32 and self.vocab_size > 2**16:
            raise ValueError(f"vocab_size {self.vocab_size} does not fit in {dtype}; use uint32")
        return dtype

    def encode_tokens(
        self,
        text: str,
        *,
        allowed_special: AbstractSet[str] | str = frozenset(),
        disallowed_special: Collection[str] | str = "all",
    ) -> list[str]:
        """The pieces of ``text`` as strings, one per id (byte tokens that split a character show
        U+FFFD).

        Example:
            >>> tok = Tokenizer(mode="char", base_tokens="abcd", merges=[("a", "a"), ("aa", "a")])
            >>> tok.encode_tokens("aaabd")
            ['aaa', 'b', 'd']
        """
        ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return [self.token_string(i) for i in ids]

    def split(self, text: str) -> list[str]:
        """Stage 3 on its own: the pre-tokenization pieces of ``text`` (after normalization)."""
        text = self._normalized(text)
        if self._regex_pattern is not None:
            return regex_split(clean_surrogates(text), self._pattern)
        if self._pattern is None:
            return [text] if text else []
        return self._engine.split(text)

    def _normalized(self, text):
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        # surrogates first, as tiktoken does: a pair is its character before normalization
        # folds it and before special tokens are matched (a scan of the str when it has none)
        return normalize(clean_surrogates(text), self._normalization)

    def _encode_ordinary(self, text, num_threads=None):
        if self._regex_pattern is not None:
            # The engine's surrogate rule, applied before the regex sees a pair as two pieces.
            return self._engine_call(self._engine.encode_pieces, regex_split(clean_surrogates(text), self._pattern))
        return self._engine_call(self._engine.encode_ordinary, text, num_threads)

    def _engine_call(self, function, *args):
        try:
            return function(*args)
        except _engine.UnknownCharacters as error:
            raise UnknownCharactersError(error.characters) from None

    # -- decoding ------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int] | np.ndarray) -> bytes:
        """Ids to the exact bytes they stand for (no UTF-8 decoding).

        ``ids``: a list or tuple of ints (numpy integers too), a 1-D numpy integer array, or
        any other ordered iterable of ints (not a set or a dict); anything else, or an id with
        no token, raises ``TokenIdError`` naming the id and its position.
        """
        data = self._decoder.decode_bytes(ids)
        return self._decode_checked(ids) if data is None else data

    def decode(
        self, ids: Iterable[int] | np.ndarray, errors: str = "replace", *, skip_special_tokens: bool = False
    ) -> str:
        """Ids to text. ``errors="replace"`` (default) shows invalid UTF-8 as U+FFFD;
        ``errors="strict"`` raises ``UnicodeDecodeError``. ``ids`` may also be a 1-D PyTorch
        tensor; ``skip_special_tokens=True`` leaves special tokens out (as transformers does).
        """
        check_errors(errors)
        if skip_special_tokens:
            ids = self._without_special(ids)
        data = self._decoder.decode_bytes(ids)
        return (self._decode_checked(ids) if data is None else data).decode("utf-8", errors=errors)

    def _decode_checked(self, ids):
        # The engine decodes lists, tuples and arrays of valid ids; everything else comes here,
        # for the checks (and the errors) of bytepair/ids.py, or to be made a list of ints.
        ids = self._checked_ids(ids)
        data = self._decoder.decode_bytes(ids)
        if data is not None:
            return data
        table = self._decode_table
        for position, token_id in enumerate(ids):
            if not 0 <= token_id < len(table) or table[token_id] is None:
                raise TokenIdError(
                    f"token id {token_id} at position {position} is not in the vocabulary "
                    f"(ids run from 0 to {len(table) - 1}{self._holes_note()})"
                )
        raise AssertionError("unreachable")  # pragma: no cover

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token id (special tokens: their UTF-8 string)."""
        return self.decode_bytes([checked_id(token_id)])

    def token_string(self, token_id: int) -> str:
        """A readable form of one token: its text, or U+FFFD where its bytes split a character."""
        token_id = checked_id(token_id)  # a negative id must not index from the end
        if self._model.mode == "char" and token_id < len(self._model.values):
            return self._model.values[token_id]
        return self.token_bytes(token_id).decode("utf-8", errors="replace")

    def _checked_ids(self, ids):
        return checked_ids(ids)

    def _without_special(self, ids):
        """The ids, checked, without the special tokens' (``decode(skip_special_tokens=True)``)."""
        special = set(self._special_tokens.values())
        return [token_id for token_id in self._checked_ids(ids) if token_id not in special]

    def _holes_note(self):
        return ", some unused" if any(v is None for v in self._decode_table) else ""

    # -- files ---------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Write the tokenizer as a JSON artifact (staged beside ``path``, then renamed); name it
        ``tokenizer.bytepair.json`` (``artifact.ARTIFACT_NAME``) or anything but HF's
        ``tokenizer.json``, which ``save_pretrained`` writes.

        Raises ``ArtifactError`` for a vocabulary loaded from another library (write it back
        with ``to_tiktoken`` / ``to_huggingface``).
        """
        artifact.save(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Tokenizer:
        """Read a JSON artifact written by ``save`` (or by seed 000's script), verifying it.

        NOTE: ``bytepair.load`` is the primary loading verb (a published name, or a path to an
        artifact, a ``.tiktoken`` file, a ``tokenizer.json`` ...); this is its alias for
        bytepair's own artifact files, and gives the same tokenizer for them.
        """
        path = check_path(path)
        return cls.from_dict(artifact.read_json(path), where=str(Path(path)))

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "tokenizer") -> Tokenizer:
        """A tokenizer from parsed artifact content, every field and the fingerprint checked."""
        content = artifact.from_dict(data, where=where)
        try:
            tokenizer = cls(
                content.model,
                pattern=content.pattern,
                normalization=content.normalization,
                special_tokens=content.special_tokens,
            )
        except ValueError as error:
            raise ArtifactError(f"{where}: {error}") from None
        if tokenizer.fingerprint != content.fingerprint:
            raise ArtifactError(f"{where}: the file's content does not rebuild the tokenizer it describes")
        if content.vocab_size is not None and content.vocab_size != tokenizer.vocab_size:
            raise ArtifactError(
                f"{where}: vocab_size says {content.vocab_size} but the merges and tokens give "
                f"{tokenizer.vocab_size}; the file was edited"
            )
        return tokenizer

    def to_tiktoken(self, path: str | os.PathLike) -> dict:
        """Write the vocabulary as a tiktoken rank file; see ``bytepair.formats.to_tiktoken``."""
        from .formats.export import to_tiktoken

        return to_tiktoken(self, path)

    def to_huggingface(self, path: str | os.PathLike, *, drop_unknown: bool = False) -> None:
        """Write an HF ``tokenizer.json``; see ``bytepair.formats.to_huggingface``."""
        from .formats.export import to_huggingface

        return to_huggingface(self, path, drop_unknown=drop_unknown)

    def save_pretrained(self, folder: str | os.PathLike, *, drop_unknown: bool = False) -> list[Path]:
        """Write a Hugging Face tokenizer folder (``tokenizer.json``, ``tokenizer_config.json``,
        ``special_tokens_map.json``) that ``transformers.AutoTokenizer.from_pretrained(folder)``
        reads with this tokenizer's ids and settings; see ``bytepair.formats.hf_folder``.

        Example:
            >>> tok.eos_token = tok.pad_token = "<|endoftext|>"  # doctest: +SKIP
            >>> tok.save_pretrained("my-tokenizer")              # doctest: +SKIP
        """
        from .formats.hf_folder import save_pretrained

        return save_pretrained(self, folder, drop_unknown=drop_unknown)

    def apply_chat_template(self, messages, **options):
        """Format chat messages with a chat template and encode them, as transformers 5's
        ``apply_chat_template`` does (see ``bytepair.chat.apply_chat_template``)."""
        from .chat import apply_chat_template

        return apply_chat_template(self, messages, **options)


def check_errors(errors):
    """``decode``'s ``errors``: a codec error handler's name. Checked up front, since Python looks
    the name up only at the first invalid byte: a typo would pass on valid text, then fail."""
    if errors == "replace" or errors == "strict":
        return
    try:
        codecs.lookup_error(errors)
    except (LookupError, TypeError):
        raise ValueError(
            f"errors must be the name of an error handler such as 'replace', 'strict' or 'ignore', not {errors!r}"
        ) from None


def _rebuild_tokenizer(model, stages):
    pattern, normalization, special_tokens, name, *settings = stages  # no settings: older pickles
    tokenizer = Tokenizer(model, pattern=pattern, normalization=normalization, special_tokens=special_tokens, name=name)
    tokenizer._init_settings(settings[0] if settings else None)
    return tokenizer


def _resolve(pattern):
    """(name or None, regex or None) for a pattern name, a custom regex, or None."""
    return (None, None) if pattern is None else resolve_pattern(pattern)


def text_list(texts, name="texts"):
    """``texts`` as a list; one str (which would be taken character by character) or a
    non-iterable is a TypeError saying what to pass."""
    if isinstance(texts, str):
        raise TypeError(f"{name} must be a list of texts, not one str; pass [text], or use encode for one text")
    if isinstance(texts, (bytes, bytearray)):
        # iterated, bytes are ints: the error named an int, not what was passed
        raise TypeError(f"{name} must be a list of texts (str), not {type(texts).__name__}; decode it first")
    if isinstance(texts, Mapping):  # a dataset row or batch: iterated, only its keys would be encoded
        raise TypeError(
            f"{name} must be a list of texts, not a {type(texts).__name__} (its keys would be taken as "
            f"the texts: {_keys(texts)}); pass its column of texts, e.g. batch['text']"
        )
    return listed(texts, f"{name} must be a list of texts")


def _keys(mapping):
    keys = [repr(k) for k in list(mapping)[:3]]
    return ", ".join(keys) + (", ..." if len(mapping) > 3 else "")
