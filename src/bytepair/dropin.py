"""The names that code written for tiktoken or Hugging Face calls, on every ``Tokenizer``.

People port training scripts from ``tiktoken`` (``enc.n_vocab``, ``enc.eot_token``,
``enc.encode_ordinary_batch``, ``enc.decode_with_offsets`` ...) and from ``transformers``
(``tok(texts, padding=True, truncation=True, max_length=...)``, ``tok.get_vocab()``,
``tok.eos_token_id`` ...). ``DropInMixin`` gives ``Tokenizer`` those names with the original
library's semantics, built only on the tokenizer's own public calls (``encode``,
``encode_batch``, ``decode_bytes``, ``special_tokens``, ``model``...), so it adds no encoding
rule of its own: the ids are always bytepair's, which equal the library's for its vocabularies.

The Hugging Face settings a ``tokenizer_config.json`` carries (``bos_token``, ``eos_token``,
``pad_token``, ``unk_token``, ``chat_template``, ``model_max_length``) are plain attributes,
set by ``bytepair.load`` from an HF folder and written by ``save_pretrained``; like in
``transformers`` they can be set by hand (``tok.pad_token = tok.eos_token``).

It does not implement HF's post-processors (a ``TemplateProcessing`` that adds BOS/EOS):
bytepair never adds tokens on its own, so ``tok(text)`` equals HF's for tokenizers whose
post-processor adds nothing (Llama 3's, GPT-4o's, and every file ``to_huggingface`` writes).

Example:
    >>> enc = bytepair.load("cl100k_base", path="vocab/")    # doctest: +SKIP
    >>> enc.n_vocab, enc.eot_token                            # doctest: +SKIP
    (100277, 100257)
    >>> enc.decode_with_offsets(enc.encode("hé!"))            # doctest: +SKIP
    ('hé!', [0, 1, 2])
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

import numpy as np

from .bytelevel import bytes_to_readable
from .errors import SpecialTokenError, UsageError
from .ids import checked_id
from .special import check_disallowed, resolve_special
from .threads import check_num_threads

__all__ = ["BatchEncoding", "DropInMixin", "HF_SETTINGS", "hf_named_tokens", "token_char_spans"]

# The tokenizer_config.json settings a tokenizer carries, with their defaults.
HF_SETTINGS = {
    "bos_token": None,
    "eos_token": None,
    "pad_token": None,
    "unk_token": None,
    "chat_template": None,
    "model_max_length": None,
    "padding_side": "right",
    "truncation_side": "right",
}

# transformers' "no limit" model_max_length (int(1e30)), used when a file gives none.
VERY_LARGE_INTEGER = int(1e30)

# The most ids a padded batch may hold: 2**31 (16,384 rows of 131,072 tokens) is already 32 GB
# of Python list slots for the ids and the mask. More comes from a width typed wrong
# (max_length=10**12) and would only end in a MemoryError, or the machine swapping as lists fill.
MAX_PADDED_IDS = 1 << 31

# The named special tokens a tokenizer carries, in the order of transformers'
# SPECIAL_TOKENS_ATTRIBUTES (bos, eos, unk, sep, pad, cls, mask), which its lists follow.
NAMED_TOKENS = ("bos_token", "eos_token", "unk_token", "pad_token")

# The columns besides input_ids and attention_mask that transformers' pad pads, with their fill.
PADDED_COLUMNS = {"token_type_ids": 0, "special_tokens_mask": 1}


class BatchEncoding(dict):
    """What ``tok(texts, ...)`` returns: a dict that also reads its keys as attributes, as
    ``transformers.BatchEncoding`` does (``enc["input_ids"]``, ``enc.input_ids``).

    ``to(device)`` moves PyTorch tensors (after ``return_tensors="pt"``) in place and returns this
    same encoding, as transformers does, so ``inputs.to(device)`` without an assignment moves them.
    """

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def to(self, device, *, non_blocking=False):
        if not isinstance(device, (str, int)) and type(device).__name__ != "device":
            # a dtype (code calling .to(torch.float16) on every input) would cast the ids; as in
            # transformers, only devices move them
            warnings.warn(
                f"BatchEncoding.to({device!r}): only a device moves the tensors; left as they are", stacklevel=2
            )
            return self
        for key, value in self.items():
            if hasattr(value, "to"):
                self[key] = value.to(device=device, non_blocking=non_blocking)
        return self


class DropInMixin:
    """tiktoken's and Hugging Face's conveniences for ``Tokenizer`` (see the module docstring)."""

    # -- Hugging Face settings ----------------------------------------------------------

    def _init_settings(self, settings=None):
        for name, default in HF_SETTINGS.items():
            setattr(self, name, default)
        for name, value in (settings or {}).items():
            if name not in HF_SETTINGS:
                raise UsageError(f"unknown tokenizer setting {name!r}; the settings are {', '.join(HF_SETTINGS)}")
            setattr(self, name, value)

    def _settings(self):
        return {name: getattr(self, name) for name in HF_SETTINGS if getattr(self, name) != HF_SETTINGS[name]}

    @property
    def bos_token_id(self) -> int | None:
        return None if self.bos_token is None else self.token_to_id(self.bos_token)

    @property
    def eos_token_id(self) -> int | None:
        return None if self.eos_token is None else self.token_to_id(self.eos_token)

    @property
    def pad_token_id(self) -> int | None:
        return None if self.pad_token is None else self.token_to_id(self.pad_token)

    @property
    def unk_token_id(self) -> int | None:
        return None if self.unk_token is None else self.token_to_id(self.unk_token)

    # -- tiktoken -----------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        """tiktoken's name for ``vocab_size``: the largest id plus one."""
        return self.vocab_size

    @property
    def max_token_value(self) -> int:
        """The largest id, special tokens included (tiktoken): ``n_vocab - 1``."""
        return self.vocab_size - 1

    @property
    def eot_token(self) -> int:
        """The end-of-text id: ``<|endoftext|>``'s (tiktoken), else the ``eos_token``'s.

        Raises ``SpecialTokenError`` (a ``KeyError`` as in tiktoken) when there is neither.
        """
        special = self.special_tokens
        if "<|endoftext|>" in special:
            return special["<|endoftext|>"]
        if self.eos_token is not None and self.eos_token in special:
            return special[self.eos_token]
        raise _NoToken(
            "this tokenizer has no '<|endoftext|>' special token and no eos_token; add one with "
            "add_special_tokens(['<|endoftext|>']) or set tok.eos_token"
        )

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens' strings (tiktoken)."""
        return set(self.special_tokens)

    def is_special_token(self, token: int) -> bool:
        """Whether the id ``token`` is a special token's (tiktoken)."""
        return self.is_special(token)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of a value that is one token, ordinary or special (tiktoken).

        Example:
            >>> enc.encode_single_token("hello")  # doctest: +SKIP
            15339

        Raises ``SpecialTokenError`` (also a ``KeyError``, as tiktoken raises) when it is not
        exactly one token.
        """
        if not isinstance(text_or_bytes, (str, bytes, bytearray, memoryview)):
            raise TypeError(f"encode_single_token takes a str or bytes, not {type(text_or_bytes).__name__}")
        # a lone surrogate is no token's text: "not a single token" below, not a UnicodeEncodeError
        value = (
            text_or_bytes.encode("utf-8", "surrogatepass") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        )
        token_id = self._ids_by_bytes().get(value)
        if token_id is None:
            raise _NoToken(f"{text_or_bytes!r} is not a single token of this vocabulary; use encode() for text")
        return token_id

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one id (tiktoken); ``token_bytes`` under tiktoken's name."""
        return self.token_bytes(token)

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        """Each id's bytes, one entry per id (tiktoken)."""
        table = self._decode_table_view()
        # decode's rules: a set or dict (no order), a str or bytes (not ids) is refused
        tokens = self._checked_ids(tokens)
        self.decode_bytes(tokens)  # checks every id, naming the first bad one
        return [table[token] for token in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text of ``tokens`` and, per token, the index in that text of the character where
        it starts (tiktoken's semantics).

        A token that starts in the middle of a character (its first byte is a UTF-8
        continuation byte) gets that character's index.

        Example:
            >>> enc.decode_with_offsets(enc.encode("hé!"))  # doctest: +SKIP
            ('hé!', [0, 1, 2])

        Raises ``UnicodeDecodeError`` when the tokens do not decode to valid UTF-8.
        """
        pieces = self.decode_tokens_bytes(tokens)
        offsets = []
        characters = 0  # characters started so far: bytes that are not continuation bytes
        for piece in pieces:
            starts_inside = bool(piece) and 0x80 <= piece[0] < 0xC0
            offsets.append(max(0, characters - starts_inside))
            characters += sum(1 for byte in piece if not 0x80 <= byte < 0xC0)
        return b"".join(pieces).decode("utf-8", errors="strict"), offsets

    def encode_ordinary_batch(self, text: Iterable[str], *, num_threads: int | None = None) -> list[list[int]]:
        """``[encode_ordinary(t) for t in text]`` on threads (tiktoken)."""
        return self.encode_batch(text, num_threads=num_threads, disallowed_special=())

    def decode_batch(
        self, batch: Iterable[Iterable[int]], *, errors: str = "replace", num_threads: int | None = None
    ) -> list[str]:
        """``[decode(ids) for ids in batch]`` (tiktoken). ``num_threads`` is checked and accepted
        for tiktoken's signature; decoding is a table lookup and runs on the calling thread."""
        if num_threads is not None:
            check_num_threads(num_threads)
        return [self.decode(ids, errors=errors) for ids in listed(batch, "batch must be a list of id sequences")]

    def decode_bytes_batch(self, batch: Iterable[Iterable[int]], *, num_threads: int | None = None) -> list[bytes]:
        """``[decode_bytes(ids) for ids in batch]`` (tiktoken); ``num_threads`` as in ``decode_batch``."""
        if num_threads is not None:
            check_num_threads(num_threads)
        return [self.decode_bytes(ids) for ids in listed(batch, "batch must be a list of id sequences")]

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary (non-special) token, sorted (tiktoken)."""
        specials = set(self.special_tokens.values())
        table = self._decode_table_view()
        return sorted({value for token_id, value in enumerate(table) if value is not None and token_id not in specials})

    def encode_to_numpy(self, text: str, *, allowed_special=frozenset(), disallowed_special="all") -> np.ndarray:
        """``encode`` as a ``uint32`` numpy array, as tiktoken's ``encode_to_numpy`` returns.

        NOTE: ``encode_to_array`` is bytepair's own call (the smallest dtype that holds every id,
        ordinary text); this one keeps tiktoken's dtype and special-token arguments.
        """
        allowed, disallowed = resolve_special(self.special_tokens, allowed_special, disallowed_special)
        if not allowed:
            check_disallowed(self._normalized(text), disallowed)
            return self.encode_to_array(text, dtype=np.uint32)
        ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return np.asarray(ids, dtype=np.uint32)

    # -- Hugging Face: vocabulary -------------------------------------------------------

    def get_vocab(self) -> dict[str, int]:
        """``{token string: id}`` as Hugging Face shows it: byte-level tokens in GPT-2's
        readable alphabet (``"Ġthe"``), characters as themselves, byte-fallback tokens as
        ``"<0xE2>"``, special tokens as their strings."""
        return dict(self._ids_by_string())

    def token_to_id(self, token: str) -> int | None:
        """The id of a token string as ``get_vocab`` shows it, or None (HF ``tokenizers``)."""
        return self._ids_by_string().get(token)

    def id_to_token(self, token_id: int) -> str | None:
        """The token string of an id as ``get_vocab`` shows it, or None (HF ``tokenizers``)."""
        token_id = checked_id(token_id)  # numpy integers are ids; None, a float or -1 is no id
        strings = self._strings_by_id()
        return strings[token_id] if token_id < len(strings) else None

    def convert_tokens_to_ids(self, tokens: str | Iterable[str]) -> int | None | list[int | None]:
        """``token_to_id`` over one token string or a list (``transformers``): a string that is
        no token gives ``unk_token``'s id, or None when there is no ``unk_token``."""
        unknown = self.unk_token_id

        def known(token):
            token_id = self.token_to_id(token)
            return unknown if token_id is None else token_id

        if isinstance(tokens, str):
            return known(tokens)
        if isinstance(tokens, (bytes, bytearray)):  # iterated, its bytes would be ints: all None
            raise TypeError(f"tokens must be a token string or a list of them, not {type(tokens).__name__}")
        return [known(token) for token in listed(tokens, "tokens must be a token string or a list of them")]

    def convert_ids_to_tokens(self, ids: int | Iterable[int]) -> str | None | list[str | None]:
        """``id_to_token`` over one id or a list (``transformers``)."""
        if isinstance(ids, (int, np.integer)):
            return self.id_to_token(ids)
        # decode's checks, not int(): "123" was three ids, 1.5 the id 1
        return [self.id_to_token(token_id) for token_id in self._checked_ids(ids)]

    # -- Hugging Face: special tokens, token strings, decoding ---------------------------

    @property
    def special_tokens_map(self) -> dict[str, str]:
        """``{"bos_token": ..., "eos_token": ...}``: the named special tokens that are set
        (``bos_token``, ``eos_token``, ``unk_token``, ``pad_token``), as ``transformers`` 5
        gives them.

        NOTE: transformers 4 also put ``additional_special_tokens`` here; bytepair does not read
        those from ``tokenizer_config.json`` (see ``all_special_tokens``).
        """
        return {name: getattr(self, name) for name in NAMED_TOKENS if getattr(self, name) is not None}

    @property
    def all_special_tokens(self) -> list[str]:
        """The named special tokens, each once (``transformers``): not every special token.
        Llama 3's are ``['<|begin_of_text|>', '<|end_of_text|>']``, without its other 254
        (``special_tokens`` has them all).

        NOTE: transformers also lists the ``extra_special_tokens`` (``additional_special_tokens``)
        a ``tokenizer_config.json`` declares; bytepair does not read them, so for such a folder
        this list is shorter than HF's. Folders that ``save_pretrained`` writes declare none.
        """
        return list(dict.fromkeys(self.special_tokens_map.values()))

    @property
    def all_special_ids(self) -> list[int | None]:
        """The ids of ``all_special_tokens`` (``transformers``)."""
        return self.convert_tokens_to_ids(self.all_special_tokens)

    def tokenize(self, text: str, *, add_special_tokens: bool = False, split_special_tokens: bool = False) -> list[str]:
        """The token strings of ``text`` as ``transformers``' ``tokenize`` gives them: those of its
        ids, as ``convert_ids_to_tokens`` shows them (``"Ġthe"`` for byte-level vocabularies).

        Special-token strings in the text are matched, as HF matches added tokens;
        ``split_special_tokens=True`` encodes them as ordinary text. ``add_special_tokens`` is
        accepted for HF's signature; nothing is ever added.

        Example:
            >>> tok.tokenize("hello world")  # doctest: +SKIP
            ['hello', 'Ġworld']
        """
        allowed = frozenset() if split_special_tokens else "all"
        return self.convert_ids_to_tokens(self.encode(text, allowed_special=allowed, disallowed_special=()))

    def batch_decode(
        self, sequences, skip_special_tokens: bool = False, clean_up_tokenization_spaces: bool | None = None
    ) -> list[str]:
        """The text of each sequence of ids (``transformers``): ``sequences`` is a list of id
        lists, a 2-D numpy array or a PyTorch tensor (one flat sequence gives a list of one, as
        in HF). ``skip_special_tokens=True`` leaves the special tokens' ids out (e.g. padding).

        Example:
            >>> tok.batch_decode([[15339, 1917], [128001]], skip_special_tokens=True)  # doctest: +SKIP
            ['hello world', '']

        ``clean_up_tokenization_spaces`` is accepted and ignored, as transformers 5 ignores it for
        BPE tokenizers (transformers 4 applied it where a file sets it, as Llama 3's does, and
        removed spaces before punctuation).

        NOTE: equal to HF for byte-level vocabularies and for every folder ``save_pretrained``
        writes, except: (1) every added token of an HF ``tokenizer.json`` is a special token
        here, so ``skip_special_tokens`` also drops added tokens the file marks
        ``"special": false``, which HF keeps; (2) where byte-fallback tokens (``<0xE2>``) hold
        invalid UTF-8, HF writes one U+FFFD per token of the run, bytepair one per invalid
        sequence (Python's ``errors="replace"``).
        """
        if isinstance(sequences, (str, bytes, bytearray, AbstractSet, Mapping)):
            self._checked_ids(sequences)  # decode's error: not ids, or no order of their own
        rows = (
            sequences.tolist()
            if hasattr(sequences, "tolist")
            else listed(sequences, "sequences must be a list of id lists")
        )
        rows = [row.tolist() if hasattr(row, "tolist") else row for row in rows]
        if rows and isinstance(rows[0], int):
            rows = [rows]  # one sequence, which transformers decodes as a batch of one
        return [self.decode(ids, skip_special_tokens=skip_special_tokens) for ids in rows]

    def __len__(self) -> int:
        """The number of tokens, as ``len(hf_tokenizer)`` counts them: special tokens included,
        unused ids not (o200k has ids up to 200018 but 200000 tokens). ``vocab_size`` and
        ``n_vocab`` are the largest id plus one, the embedding table's size."""
        return len(self._ids_by_string())

    # -- Hugging Face: offsets and the batch call ---------------------------------------

    def encode_with_offsets(
        self, text: str, *, allowed_special="all", disallowed_special=()
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """Ids and, per id, the ``(start, end)`` character span of ``text`` it covers: HF's
        ``Encoding.offsets`` for byte-level vocabularies.

        A token holding part of a character's bytes covers that whole character, so the tokens
        of one emoji split in two both span it. Special tokens are matched in the text, as HF
        matches added tokens (``allowed_special="all"``); pass ``allowed_special=set(),
        disallowed_special="all"`` for ``encode``'s safe default.

        Example:
            >>> tok.encode_with_offsets("hi 🌍")  # doctest: +SKIP
            ([6151, 11410, 234, 235], [(0, 2), (2, 4), (3, 4), (3, 4)])

        NOTE: with a normalization (NFC, NFKC) the spans index the normalized text.
        """
        ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return ids, self._char_spans(self._normalized(text) if self.normalization else text, ids)

    def _char_spans(self, text, ids):
        """Per id, the ``(start, end)`` characters of ``text`` (what ``ids`` encode) it covers;
        ``ValueError`` when the ids' bytes are not the text's."""
        return token_char_spans(text, self._text_pieces(ids))

    def _text_pieces(self, ids):
        """Per id, the bytes it stands for in the text it was encoded from: its token's bytes
        (SentencePiece's leave out its dummy prefix, which is in no text)."""
        return self.decode_tokens_bytes(ids)

    def __call__(
        self,
        text: str | Sequence[str],
        *,
        padding: bool | str = False,
        truncation: bool | str | None = None,
        max_length: int | None = None,
        pad_to_multiple_of: int | None = None,
        padding_side: str | None = None,
        return_tensors: str | None = None,
        return_attention_mask: bool = True,
        add_special_tokens: bool = True,
        split_special_tokens: bool = False,
        num_threads: int | None = None,
    ) -> BatchEncoding:
        """Encode a text or a batch for a training loop, as ``PreTrainedTokenizerFast(...)``
        does: ``{"input_ids": ..., "attention_mask": ...}``, padded and truncated on request.

        This is ``__call__`` rather than ``encode_batch(..., padding=...)`` because code ported
        from ``transformers`` calls the tokenizer object itself (``tok(texts, padding=True,
        truncation=True, max_length=512, return_tensors="pt")``), and ``encode_batch`` keeps one
        return type (a list of id lists), as tiktoken's does.

        - ``padding``: ``False``/``"do_not_pad"``, ``True``/``"longest"`` (to the longest in the
          batch), ``"max_length"`` (to ``max_length``); pads with ``pad_token`` on
          ``padding_side`` (the argument, else ``tok.padding_side``), to a multiple of
          ``pad_to_multiple_of`` when given.
        - ``truncation``: ``True``/``"longest_first"``/``"only_first"`` cuts each sequence to
          ``max_length`` (default ``model_max_length``) on ``truncation_side``. Left out, it is
          on when ``max_length`` is given without ``padding``, as in HF.
        - ``return_tensors``: None (lists), ``"np"`` (int64 arrays) or ``"pt"`` (PyTorch); one
          text gives a batch of one then, as in HF.
        - ``split_special_tokens=True`` encodes special-token strings in the text as ordinary
          text; by default they are matched, as HF matches added tokens.
        - ``add_special_tokens`` is accepted for HF's signature; nothing is ever added.

        Example:
            >>> tok(["a b", "a"], padding=True)  # doctest: +SKIP
            {'input_ids': [[64, 293], [64, 0]], 'attention_mask': [[1, 1], [1, 0]]}

        WARNING: special-token strings in the text become special tokens, as in HF. Use
        ``split_special_tokens=True`` for untrusted text.
        """
        single = isinstance(text, str)
        texts = [text] if single else listed(text, "text must be a str or a list of str")
        if not all(isinstance(t, str) for t in texts):
            raise TypeError("text must be a str or a list of str")
        allowed = frozenset() if split_special_tokens else "all"
        batch = self.encode_batch(texts, allowed_special=allowed, disallowed_special=(), num_threads=num_threads)
        if truncation is None:  # transformers truncates when given only a max_length
            truncation = max_length is not None and padding is False
        columns = {"input_ids": batch, "attention_mask": [[1] * len(ids) for ids in batch]}
        columns = self._shaped(
            columns,
            padding=padding,
            truncation=truncation,
            max_length=max_length,
            pad_to_multiple_of=pad_to_multiple_of,
            padding_side=padding_side,
        )
        if not return_attention_mask:
            del columns["attention_mask"]
        unwrap = single and return_tensors is None  # tensors keep the batch axis, as in HF
        return BatchEncoding(
            {key: _as_tensor(value[0] if unwrap else value, return_tensors) for key, value in columns.items()}
        )

    def _shaped(self, columns, *, padding, truncation, max_length, pad_to_multiple_of=None, padding_side=None):
        """Per-token ``columns`` (``input_ids``, ``attention_mask`` and any others, one row per
        sequence) cut and padded as ``tok(...)`` cuts and pads them; the other columns are cut
        alike and padded with 0. Shared by ``__call__`` and ``apply_chat_template``."""
        if pad_to_multiple_of is not None:
            _check_length("pad_to_multiple_of", pad_to_multiple_of, minimum=1)
        truncating = truncation not in (False, None, "do_not_truncate")
        if truncating and padding not in (False, None, "do_not_pad") and pad_to_multiple_of:
            limit = max_length if max_length is not None else self.model_max_length
            if limit is not None and limit % pad_to_multiple_of:
                # padding up to the multiple would undo the cut, as transformers refuses too
                raise UsageError(
                    f"truncation to max_length={limit} and padding to a multiple of "
                    f"pad_to_multiple_of={pad_to_multiple_of} disagree; make max_length a multiple of it"
                )
        columns = {key: self._truncated(rows, truncation, max_length) for key, rows in columns.items()}
        batch = columns["input_ids"]
        padded, masks = self._padded(
            batch, columns["attention_mask"], padding, max_length, multiple=pad_to_multiple_of, side=padding_side
        )
        side = padding_side or self.padding_side
        shaped = {"input_ids": padded, "attention_mask": masks}
        for key, rows in columns.items():
            if key not in shaped:
                shaped[key] = [
                    _pad_row(row, len(full) - len(ids), 0, side) for row, full, ids in zip(rows, padded, batch)
                ]
        return shaped

    def encode_plus(self, text: str, **options) -> BatchEncoding:
        """``tok(text, **options)`` for one text: the name transformers 4's ``__call__`` handed a
        single text to, with the same arguments (transformers 5 removed it)."""
        if not isinstance(text, str):
            raise TypeError("encode_plus takes one text (a str); use batch_encode_plus or tok(texts) for a list")
        return self(text, **options)

    def batch_encode_plus(self, batch_text_or_text_pairs: Sequence[str], **options) -> BatchEncoding:
        """``tok(texts, **options)`` for a list of texts: the name transformers 4's ``__call__``
        handed a batch to, with the same arguments (transformers 5 removed it). Pairs of texts
        are refused, as ``tok(...)`` refuses them."""
        if isinstance(batch_text_or_text_pairs, str):
            raise TypeError("batch_encode_plus takes a list of texts; use encode_plus or tok(text) for one")
        return self(batch_text_or_text_pairs, **options)

    def pad(
        self,
        encoded_inputs,
        padding: bool | str = True,
        max_length: int | None = None,
        pad_to_multiple_of: int | None = None,
        padding_side: str | None = None,
        return_attention_mask: bool | None = None,
        return_tensors: str | None = None,
        verbose: bool = True,
    ) -> BatchEncoding:
        """Pad encodings made earlier, as ``transformers``' ``pad`` does (a DataLoader's
        ``collate_fn``, say): ``encoded_inputs`` is one encoding (``{"input_ids": [...]}``), a
        batch (``{"input_ids": [[...], ...], ...}``) or a list of encodings.

        ``input_ids`` are padded with ``pad_token`` on ``padding_side`` (default
        ``tok.padding_side``) to the longest (``padding=True``) or to ``max_length``
        (``"max_length"``), rounded up to a multiple of ``pad_to_multiple_of``; nothing is cut.
        The ``attention_mask`` is padded with 0, or made when absent (unless
        ``return_attention_mask=False``, which leaves a given one as it is); ``token_type_ids``
        and ``special_tokens_mask`` are padded as HF pads them; other keys (``labels``...) come
        back unchanged, as in HF (so for tensors pad ``labels`` first, with -100). Numpy arrays or PyTorch tensors in give the same kind out,
        unless ``return_tensors`` says otherwise. ``verbose`` is accepted for HF's signature.

        Example:
            >>> tok.pad([{"input_ids": [5, 6, 7]}, {"input_ids": [8]}])  # doctest: +SKIP
            {'input_ids': [[5, 6, 7], [8, 0, 0]], 'attention_mask': [[1, 1, 1], [1, 0, 0]]}
        """
        if isinstance(encoded_inputs, (list, tuple)) and encoded_inputs and isinstance(encoded_inputs[0], Mapping):
            encoded_inputs = {key: [example[key] for example in encoded_inputs] for key in encoded_inputs[0]}
        if not isinstance(encoded_inputs, Mapping) or "input_ids" not in encoded_inputs:
            raise UsageError("pad takes an encoding with 'input_ids', a batch of them, or a list of encodings")
        if return_tensors is None:
            return_tensors = _tensor_kind(encoded_inputs["input_ids"])
        columns = {key: _as_lists(value) for key, value in encoded_inputs.items()}
        if not columns["input_ids"]:
            if return_attention_mask:
                columns["attention_mask"] = []
            return BatchEncoding(columns)
        single = not isinstance(columns["input_ids"][0], list)
        if single:
            columns = {key: [value] for key, value in columns.items()}
        batch = columns["input_ids"]
        if any(len(value) != len(batch) for value in columns.values()):
            raise UsageError("pad: every key needs one entry per sequence of 'input_ids'")
        masks = columns.get("attention_mask") or [[1] * len(ids) for ids in batch]
        padded, masks = self._padded(batch, masks, padding, max_length, multiple=pad_to_multiple_of, side=padding_side)
        columns["input_ids"] = padded
        if return_attention_mask is not False:
            columns["attention_mask"] = masks
        for key, fill in PADDED_COLUMNS.items():
            if key in columns:
                columns[key] = [
                    _pad_row(row, len(full) - len(ids), fill, padding_side or self.padding_side)
                    for row, full, ids in zip(columns[key], padded, batch)
                ]
        if return_tensors is not None and not single:
            _check_unpadded_columns(columns)
        return BatchEncoding(
            {key: _as_tensor(value[0] if single else value, return_tensors) for key, value in columns.items()}
        )

    def _truncated(self, batch, truncation, max_length):
        if truncation in (False, None, "do_not_truncate"):
            return batch
        if truncation not in (True, "longest_first", "only_first"):
            raise UsageError(f"truncation={truncation!r}; use True, False, 'longest_first' or 'only_first'")
        limit = max_length if max_length is not None else self.model_max_length
        if limit is None:
            raise UsageError("truncation needs max_length=..., or tok.model_max_length set")
        _check_length("max_length", limit)
        _check_side("truncation_side", self.truncation_side)
        if self.truncation_side == "left":
            return [ids[max(0, len(ids) - limit) :] for ids in batch]
        return [ids[:limit] for ids in batch]

    def _padded(self, batch, masks, padding, max_length, *, multiple=None, side=None):
        if padding in (False, None, "do_not_pad"):
            return batch, masks
        if padding in (True, "longest"):
            width = max((len(ids) for ids in batch), default=0)
        elif padding == "max_length":
            width = max_length if max_length is not None else self.model_max_length
            if width is None:
                raise UsageError("padding='max_length' needs max_length=..., or tok.model_max_length set")
            if max_length is None and isinstance(width, int) and width >= VERY_LARGE_INTEGER:
                # transformers warns and pads nothing; padding to 1e30 would fail inside list()
                raise UsageError(
                    f"padding='max_length' needs max_length=...: this tokenizer's model_max_length is {width}, "
                    "transformers' 'no limit' (tokenizer_config.json gives no real one)"
                )
        else:
            raise UsageError(f"padding={padding!r}; use True, False, 'longest' or 'max_length'")
        _check_length("max_length", width)
        if multiple is not None:
            _check_length("pad_to_multiple_of", multiple, minimum=1)
        _check_side("padding_side", side or self.padding_side)
        if multiple and width % multiple:
            width += multiple - width % multiple
        if width * len(batch) > MAX_PADDED_IDS:
            raise UsageError(
                f"padding {len(batch)} sequence(s) to {width:,} tokens makes {width * len(batch):,} ids, more than "
                f"the {MAX_PADDED_IDS:,} a padded batch may hold; check max_length and pad_to_multiple_of"
            )
        pad = self.pad_token_id
        if pad is None and any(len(ids) < width for ids in batch):
            raise SpecialTokenError(
                "asked to pad, but the tokenizer has no pad_token; set one, e.g. tok.pad_token = tok.eos_token"
            )
        side = side or self.padding_side
        padded_ids = [_pad_row(ids, width - len(ids), pad, side) for ids in batch]
        padded_masks = [_pad_row(mask, width - len(ids), 0, side) for ids, mask in zip(batch, masks)]
        return padded_ids, padded_masks

    # -- tables, built on first use -----------------------------------------------------

    def _decode_table_view(self):
        # Tokenizer's id -> bytes table (None for unused ids); read, never changed.
        return self._decode_table

    def _lookup_tables(self):
        # Rebuilt whenever the special tokens change (add_special_tokens resets _fingerprint).
        key = (self.vocab_size, tuple(sorted(self.special_tokens.items())))
        tables = getattr(self, "_dropin_tables", None)
        if tables is None or tables[0] != key:
            tables = (key, _tables(self))
            self._dropin_tables = tables
        return tables[1]

    def _ids_by_bytes(self):
        return self._lookup_tables()["by_bytes"]

    def _ids_by_string(self):
        return self._lookup_tables()["by_string"]

    def _strings_by_id(self):
        return self._lookup_tables()["strings"]


class _NoToken(SpecialTokenError, KeyError):
    """A value that is not one token: a ``KeyError`` too, as tiktoken raises."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


def _tables(tokenizer):
    """``by_bytes`` (token bytes -> id, lowest id first), ``by_string`` and ``strings`` (HF's
    readable token strings both ways)."""
    model = tokenizer.model
    table = tokenizer._decode_table_view()
    special_ids = {token_id: token for token, token_id in tokenizer.special_tokens.items()}
    fallback = {token_id: byte for byte, token_id in enumerate(model.fallback_ids or ())}
    by_bytes = {}
    for token_id, value in enumerate(table):
        if value is not None and token_id not in fallback:
            by_bytes.setdefault(value, token_id)
    for token_id, byte in fallback.items():
        by_bytes.setdefault(bytes([byte]), token_id)
    strings: list[str | None] = [None] * len(table)
    for token_id, value in enumerate(table):
        if value is None:
            continue
        if token_id in special_ids:
            strings[token_id] = special_ids[token_id]
        elif token_id in fallback:
            strings[token_id] = f"<0x{fallback[token_id]:02X}>"
        elif model.mode == "char":
            strings[token_id] = model.values[token_id]
        else:
            strings[token_id] = bytes_to_readable(value)
    by_string = {}
    for token_id, string in enumerate(strings):
        if string is not None:
            by_string.setdefault(string, token_id)
    return {"by_bytes": by_bytes, "by_string": by_string, "strings": strings}


_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def token_char_spans(text: str, pieces: Sequence[bytes]) -> list[tuple[int, int]]:
    """Per token, the ``(start, end)`` characters of ``text`` its bytes ``pieces`` cover; a token
    holding part of a character's bytes covers that whole character (HF's offsets).

    Example:
        >>> token_char_spans("hé", [b"h\\xc3", b"\\xa9"])
        [(0, 2), (1, 2)]

    Raises ``ValueError`` when the pieces do not add up to the text's UTF-8 bytes.
    """
    # The character each byte belongs to, as encoding sees the text: a lone surrogate becomes
    # U+FFFD (three bytes, as surrogatepass gives), a pair the character it encodes (four
    # bytes, on its first code unit; a span that ends there takes in the second too).
    widths = [len(character.encode("utf-8", "surrogatepass")) for character in text]
    ends = np.arange(1, len(text) + 1)  # where a span whose last byte is in code unit i ends
    for pair in _SURROGATE_PAIR.finditer(text):
        first = pair.start()
        widths[first], widths[first + 1], ends[first] = 4, 0, first + 2
    character_of = np.repeat(np.arange(len(text), dtype=np.int64), widths)
    if sum(len(piece) for piece in pieces) != len(character_of):
        raise ValueError("the tokens' bytes do not add up to the text's")
    spans = []
    position = 0
    for piece in pieces:
        if not piece:
            spans.append((spans[-1][1],) * 2 if spans else (0, 0))
            continue
        spans.append((int(character_of[position]), int(ends[character_of[position + len(piece) - 1]])))
        position += len(piece)
    return spans


def hf_named_tokens(value):
    """``(tokens, settings)`` when ``value`` is transformers' argument to ``add_special_tokens``
    (``{"pad_token": "<|pad|>", "additional_special_tokens": ["<|a|>"]}``): the tokens to add,
    in order, and the named ones to set; None for bytepair's own forms (a list, or token -> id).

    Example:
        >>> hf_named_tokens({"pad_token": "<|pad|>", "additional_special_tokens": ["<|a|>"]})
        (['<|pad|>', '<|a|>'], {'pad_token': '<|pad|>'})
    """
    # ids are integers, so a string or a list as a value can only be transformers' form
    if not isinstance(value, Mapping) or not any(isinstance(item, (str, list, tuple)) for item in value.values()):
        return None
    unknown = [key for key in value if key not in (*NAMED_TOKENS, "additional_special_tokens")]
    if unknown:
        raise SpecialTokenError(
            f"add_special_tokens got {unknown[0]!r}: in transformers' form the keys are "
            f"{', '.join(NAMED_TOKENS)} and additional_special_tokens (bytepair carries no other "
            "named token); add other tokens in additional_special_tokens, or as a list"
        )
    settings = {key: item for key, item in value.items() if key != "additional_special_tokens"}
    extra = value.get("additional_special_tokens") or []
    extra = [extra] if isinstance(extra, str) else list(extra)
    for key, item in [*settings.items(), *(("additional_special_tokens", token) for token in extra)]:
        if not isinstance(item, str) or not item:
            raise SpecialTokenError(f"add_special_tokens: {key} is {item!r}; a special token is a non-empty string")
    return list(dict.fromkeys([*settings.values(), *extra])), settings


def listed(value, what):
    """``list(value)``, or a TypeError ``"{what}, not <type>"`` (``list(None)`` would say
    "'NoneType' object is not iterable" from inside bytepair)."""
    try:
        return list(value)
    except TypeError:
        raise TypeError(f"{what}, not {type(value).__name__}") from None


def _check_length(name, value, minimum=0):
    # a negative length would slice from the end, silently (transformers raises too)
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < minimum:
        raise UsageError(f"{name} must be an integer of at least {minimum}, not {value!r}")


def _check_unpadded_columns(columns):
    """A column ``pad`` leaves as it is (``labels``...) whose rows differ in length cannot be one
    tensor; say which, since padding the ids did not help it."""
    for key, rows in columns.items():
        if key in ("input_ids", "attention_mask", *PADDED_COLUMNS):
            continue
        lengths = {len(row) for row in rows if isinstance(row, list)}
        if len(lengths) > 1:
            raise UsageError(
                f"pad does not pad {key!r} (transformers' pad leaves it as it is too), and its rows "
                f"have {min(lengths)} to {max(lengths)} items, so they cannot be one tensor; pad "
                f"{key!r} to the length of the padded input_ids first (labels with -100, which the "
                "loss ignores), or leave return_tensors out"
            )


def _check_side(name, side):
    if side not in ("left", "right"):
        raise UsageError(f"{name} must be 'left' or 'right', not {side!r}")


def _pad_row(row, count, fill, side):
    # count <= 0 adds nothing: a row longer than the width is left whole, as in HF.
    return [fill] * count + row if side == "left" else row + [fill] * count


def _tensor_kind(value):
    # "np" or "pt" when the ids come as numpy arrays or PyTorch tensors (or a list of them),
    # the kind transformers' pad gives back.
    if isinstance(value, (list, tuple)) and value:
        value = value[0]
    if isinstance(value, np.ndarray):
        return "np"
    return "pt" if type(value).__module__ == "torch" else None


def _as_lists(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_as_lists(item) for item in value]
    return value


def _as_tensor(value, return_tensors):
    if return_tensors is None:
        return value
    if return_tensors not in ("np", "pt"):
        raise UsageError(f"return_tensors={return_tensors!r}; use None, 'np' or 'pt'")
    if value and isinstance(value[0], list) and len({len(row) for row in value}) > 1:
        raise UsageError(
            f"return_tensors={return_tensors!r} needs sequences of one length; pass padding=True "
            "(and truncation=True) to make them so"
        )
    array = np.asarray(value, dtype=np.int64)
    if return_tensors == "np":
        return array
    try:
        import torch
    except ImportError:
        from .errors import MissingDependencyError

        raise MissingDependencyError("return_tensors='pt' needs PyTorch; pip install torch") from None
    return torch.from_numpy(array)
