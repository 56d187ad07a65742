"""Write a tokenizer as a tiktoken rank file or a Hugging Face ``tokenizer.json``.

Both libraries must then give bytepair's ids, so each export first checks that the library's
merge rule agrees with bytepair's replay rule on every input, and raises ``FormatError`` where
it cannot (the file would encode differently):

- tiktoken merges the adjacent pair whose *concatenation* has the lowest rank, and looks a
  whole piece up first. That equals replaying the merges when (a) no two merges build the same
  value, and (b) replaying a token's own bytes gives that token (no counterexample in 590,000
  strings over 9,800 random merge lists that pass both checks). Merges learned by training
  satisfy both (no trained tokenizer we tried, on real or random text, rebuilt a value); a
  merge list given by hand may not.
- HF merges the pair with the lowest merge rank with no notion of "already passed": when a
  merge rebuilds a value that an earlier merge used as a half, the new adjacency lets HF apply
  that earlier merge again where replay never would; and HF keeps only the last rank of a pair
  listed twice. Both are refused; other rebuilt values are harmless and exported.

Character-level tokenizers export to HF (a character vocabulary with ``Fuse`` decoding, and
``<0xXX>`` tokens when they have byte fallback); tiktoken files hold bytes only.

It does not read these formats (``tiktoken_files.py``, ``huggingface.py``), and it uses only
the tokenizer's public surface and its model (``model.py``), so it never imports ``tokenizer.py``.

Example:
    >>> info = to_tiktoken(tok, "mine.tiktoken")                              # doctest: +SKIP
    >>> enc = tiktoken.Encoding("mine", mergeable_ranks=load_tiktoken_bpe("mine.tiktoken"), **info)  # doctest: +SKIP
    >>> to_huggingface(tok, "tokenizer.json")                                 # doctest: +SKIP
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from typing import Any

from .._io import write_text_atomic
from ..bytelevel import bytes_to_readable
from ..errors import FormatError
from ..model import MergeModel, RankModel
from ..patterns import empty_match, keep_gaps
from .hf_regex import hf_regex, portable_regex, tiktoken_regex

# tiktoken needs a regex; a tokenizer without a pattern treats the whole text as one piece.
WHOLE_TEXT = r"[\s\S]+"


def to_tiktoken(tokenizer: Any, path: str | os.PathLike) -> dict:
    """Write ``tokenizer`` as a tiktoken rank file; return the rest of ``tiktoken.Encoding``'s
    arguments, ``{"pat_str": ..., "special_tokens": ...}`` (the file holds neither).

    Raises ``FormatError`` for character-level tokenizers, normalization, HF-rule vocabularies,
    and merge lists that tiktoken's rule would encode differently (see the module docstring).
    """
    check_tokenizer(tokenizer)
    _check_tiktoken(tokenizer)
    model = tokenizer.model
    if isinstance(model, MergeModel):
        _check_replay_matches_tiktoken(model)
    pattern = _exported_pattern(tokenizer)  # may refuse: before anything is written
    if pattern is not None:
        pattern = tiktoken_regex(pattern)
    ranks = {value: token_id for token_id, value in enumerate(model.token_bytes) if value is not None}
    write_ranks(ranks, path)
    return {"pat_str": pattern or WHOLE_TEXT, "special_tokens": dict(tokenizer.special_tokens)}


def check_tokenizer(tokenizer):
    """A TypeError naming what was passed where a bytepair tokenizer belongs (a tiktoken
    ``Encoding`` or an HF tokenizer would fail on a missing attribute deep inside)."""
    if not isinstance(getattr(tokenizer, "model", None), (MergeModel, RankModel)):
        raise TypeError(
            f"tokenizer must be a bytepair Tokenizer (from bytepair.train or bytepair.load), not {type(tokenizer).__name__}"
        )


def _exported_pattern(tokenizer):
    """The tokenizer's regex for a library that keeps only its matches: a custom regex's gaps
    are pieces here, and would be dropped there without a match of their own; its anchors and
    sets are spelled as those libraries read them (``portable_regex``)."""
    pattern = tokenizer.pattern
    if pattern is None or tokenizer.pattern_name is not None:
        return pattern
    where = empty_match(pattern)
    if where is not None:
        raise FormatError(
            f"pattern {pattern[:200]!r} matches the empty string (in {where}); tiktoken and HF skip the "
            "character after an empty match, so the file would drop text that bytepair keeps. Make every "
            "alternative take at least one character (+ instead of *)"
        )
    return keep_gaps(portable_regex(pattern))


def _check_tiktoken(tokenizer):
    refusal = tokenizer.model.export_refusal("tiktoken")
    if refusal:
        raise FormatError(refusal)
    if tokenizer.normalization is not None:
        raise FormatError(
            f"tiktoken does not normalize text, and this tokenizer applies {tokenizer.normalization!r}; "
            "ids would differ on unnormalized text. Train without normalization to export to tiktoken"
        )
    # tiktoken tries its special tokens in a hash map's order, so of two that start at the same
    # place either may win; bytepair takes the longest
    tokens = sorted(tokenizer.special_tokens)
    for shorter, longer in zip(tokens, tokens[1:]):
        if longer.startswith(shorter):
            raise FormatError(
                f"special tokens {shorter!r} and {longer!r}: the first begins the second, and tiktoken "
                "matches special tokens in no fixed order (bytepair takes the longest), so ids could "
                "differ; rename one to export to tiktoken (save_pretrained keeps bytepair's ids)"
            )


def write_ranks(ranks: Mapping[bytes, int], path: str | os.PathLike) -> None:
    """Write ``{token bytes: rank}`` as a tiktoken rank file, by rank, atomically.

    Example:
        >>> write_ranks({b"!": 0}, "tok.tiktoken")  # doctest: +SKIP
    """
    lines = [
        f"{base64.b64encode(token).decode('ascii')} {rank}\n"
        for token, rank in sorted(ranks.items(), key=lambda item: item[1])
    ]
    write_text_atomic(path, "".join(lines))


def _check_replay_matches_tiktoken(model):
    ids = {value: token_id for token_id, value in enumerate(model.values)}
    first_builder = {}
    for index, (left, right) in enumerate(model.merges):
        value = left + right
        if value in first_builder:
            earlier = first_builder[value]
            raise FormatError(
                f"merge {index} {(left, right)!r} builds {value!r} again (merge {earlier} "
                f"{model.merges[earlier]!r} built it first); a tiktoken file gives each "
                "value one rank, so tiktoken would merge where replay does not. Retrain (a smaller "
                "vocab_size stops before the rebuild) or export with to_huggingface"
            )
        first_builder[value] = index
    ranks = {(ids[left], ids[right]): ids[left + right] for left, right in model.merges}
    for value, token_id in ids.items():
        if len(value) > 1 and _merge_by_rank(value, ranks) != [token_id]:
            raise FormatError(
                f"token {token_id} ({value!r}) is not what replaying the merges gives for its own "
                "bytes; tiktoken looks whole pieces up first, so it would give other ids. These "
                "merges were not learned by training; export with to_huggingface"
            )


def _merge_by_rank(value, ranks):
    """Ids of ``value`` by lowest-rank-first merging (the replay rule without rebuilt values)."""
    parts = list(value)
    while len(parts) > 1:
        candidates = [(ranks.get((a, b)), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
        candidates = [c for c in candidates if c[0] is not None]
        if not candidates:
            break
        rank, i = min(candidates)
        parts[i : i + 2] = [rank]
    return parts


def to_huggingface(tokenizer: Any, path: str | os.PathLike, *, drop_unknown: bool = False) -> None:
    """Write ``tokenizer`` as a Hugging Face ``tokenizer.json`` that gives bytepair's ids.

    Loads in ``tokenizers.Tokenizer.from_file(path)`` and
    ``transformers.PreTrainedTokenizerFast(tokenizer_file=path)``; special tokens become
    ``added_tokens`` (HF always matches them, like ``encode(..., allowed_special="all")``).

    A character-level tokenizer without byte fallback is refused: it raises on characters
    outside its alphabet, where HF's BPE would drop them without a word, so the model would be
    fed text with holes. Retrain with ``byte_fallback=True`` (its ``<0xXX>`` tokens export, and
    HF then encodes such characters as bytepair does), or pass ``drop_unknown=True`` to accept
    HF's dropping.

    WARNING: HF's regex engine has older Unicode tables, so characters assigned in recent
    Unicode versions may split differently there.
    """
    check_tokenizer(tokenizer)
    refusal = tokenizer.model.export_refusal("huggingface")
    if refusal:
        raise FormatError(refusal)
    model = tokenizer.model
    if model.mode == "char" and not model.fallback_ids and not drop_unknown:
        alphabet = "".join(sorted(model.base_tokens))
        raise FormatError(
            f"this character-level tokenizer knows only its {len(alphabet)} base characters "
            f"({alphabet[:40]!r}{'...' if len(alphabet) > 40 else ''}); HF would silently drop every "
            "other character. Retrain with byte_fallback=True, or pass drop_unknown=True to accept that"
        )
    if isinstance(tokenizer.model, MergeModel):
        _check_replay_matches_hf(tokenizer.model)
    content = huggingface_json(tokenizer)
    write_text_atomic(path, json.dumps(content, ensure_ascii=False, indent=2))


def _check_replay_matches_hf(model):
    first_builder, seen_pairs, halves = {}, set(), {}
    for index, (left, right) in enumerate(model.merges):
        if (left, right) in seen_pairs:
            raise FormatError(
                f"merge {index} {(left, right)!r} repeats an earlier merge; HF keeps only the last "
                "rank of a repeated pair, so it would merge in another order than replay. Retrain "
                "with a smaller vocab_size, or keep the bytepair artifact"
            )
        value = left + right
        if value in first_builder and value in halves:
            raise FormatError(
                f"merge {index} {(left, right)!r} builds {value!r} again, and merge {halves[value]} "
                f"{model.merges[halves[value]]!r} already used it as a half; HF would apply "
                "that earlier merge again after this one, where replay does not. Retrain with a "
                "smaller vocab_size, or keep the bytepair artifact"
            )
        first_builder.setdefault(value, index)
        seen_pairs.add((left, right))
        for half in (left, right):
            halves.setdefault(half, index)


def huggingface_json(tokenizer: Any) -> dict:
    """The ``tokenizer.json`` content (a dict) for ``tokenizer``."""
    model = tokenizer.model
    byte_level = model.mode == "byte"
    show = bytes_to_readable if byte_level else (lambda value: value)
    vocab = {show(value): token_id for token_id, value in enumerate(model.values) if value is not None}
    if model.fallback_ids:
        vocab.update(_fallback_vocab(model, vocab))
    vocab.update(_special_vocab(tokenizer.special_tokens, vocab))
    merges = [_merge_entry(show(left), show(right), byte_level) for left, right in model.merge_pairs()]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            _added_token(token, token_id, normalized=tokenizer.normalization is not None)
            for token, token_id in sorted(tokenizer.special_tokens.items(), key=lambda item: item[1])
        ],
        "normalizer": {"type": tokenizer.normalization} if tokenizer.normalization else None,
        "pre_tokenizer": _pre_tokenizer(_exported_pattern(tokenizer), byte_level),
        "post_processor": None,
        "decoder": _decoder(model, byte_level),
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": bool(model.fallback_ids),
            "ignore_merges": model.ignore_merges,
            "vocab": vocab,
            "merges": merges,
        },
    }


def _merge_entry(left, right, byte_level):
    # Byte-level halves never hold a space (it is shown as "Ġ"), so the older "a b" form that
    # every HF version reads is safe; characters can be spaces, so they need [a, b].
    return f"{left} {right}" if byte_level else [left, right]


def _fallback_vocab(model, vocab):
    names = {f"<0x{b:02X}>": token_id for b, token_id in enumerate(model.fallback_ids)}
    clash = sorted(set(names) & set(vocab))
    if clash:
        raise FormatError(
            f"learned token {clash[0]!r} has the name HF gives a byte-fallback token; it cannot be exported to HF"
        )
    return names


def _special_vocab(special_tokens, vocab):
    """Each special token under its own content in ``model.vocab``, as HF's own files have them:
    HF gives an added token the id its content has in the vocabulary, and one it lacks the next
    free id, whatever ``added_tokens`` says (a special token at 310 above 300 tokens became 301)."""
    clash = sorted(token for token in special_tokens if token in vocab)
    if clash:
        raise FormatError(
            f"special token {clash[0]!r} is written like a token of the vocabulary (id {vocab[clash[0]]}); "
            "HF would give both one id, so it cannot be exported to HF. Rename the special token"
        )
    return dict(special_tokens)


def _added_token(token, token_id, *, normalized):
    # bytepair finds special tokens in normalized text (tokenizer.py); "normalized": true
    # makes HF match them after its normalizer too, not in the raw text.
    return {
        "id": token_id,
        "content": token,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": normalized,
        "special": True,
    }


def _pre_tokenizer(pattern, byte_level):
    split = (
        {"type": "Split", "pattern": {"Regex": hf_regex(pattern)}, "behavior": "Removed", "invert": True}
        if pattern
        else None
    )
    if not byte_level:
        return split
    byte_step = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    return {"type": "Sequence", "pretokenizers": [split, byte_step]} if split else byte_step


def _decoder(model, byte_level):
    if byte_level:
        return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    if model.fallback_ids:
        return {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]}
    return {"type": "Fuse"}
