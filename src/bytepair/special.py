"""Stage 2: special tokens, matched exactly before anything else, never split or merged.

The rules are tiktoken's, so that code written for tiktoken behaves the same here:

- ``allowed_special``: the special tokens that may appear in the text and become their ids
  (a set, or ``"all"``); default none.
- ``disallowed_special``: the special tokens whose strings must not appear in the text (a set,
  or ``"all"`` = every special token not allowed); finding one raises
  ``DisallowedSpecialTokenError`` naming it. Pass ``()`` to treat them as ordinary text.

This module does not know about ids or BPE; it only finds the strings.

Example:
    >>> split_on_special("a<|end|>b", {"<|end|>"})
    [('a', False), ('<|end|>', True), ('b', False)]
"""

from __future__ import annotations

import functools

import regex

from .errors import DisallowedSpecialTokenError, SpecialTokenError
from .ids import plain_int


@functools.lru_cache(maxsize=64)
def _special_regex(tokens):
    # Longest first, so that a special token that is a prefix of another never wins.
    ordered = sorted(tokens, key=lambda t: (-len(t), t))
    return regex.compile("|".join(regex.escape(t) for t in ordered))


def special_regex(tokens):
    """One compiled pattern that finds any of ``tokens`` (the longest where two start alike)."""
    return _special_regex(frozenset(tokens))


def special_token_list(special_tokens, where="special_tokens"):
    """The caller's special tokens as a list of strings, or a dict token -> id as given.

    A bare string is one token, never its characters: ``"<|eot|>"`` means ``["<|eot|>"]``.
    ``None`` means none.

    Example:
        >>> special_token_list("<|eot|>")
        ['<|eot|>']
        >>> special_token_list(("<|a|>", "<|b|>"))
        ['<|a|>', '<|b|>']
    """
    if special_tokens is None:
        return []
    if isinstance(special_tokens, str):
        special_tokens = [special_tokens]
    elif isinstance(special_tokens, (bytes, bytearray)):
        raise SpecialTokenError(f"{where} must be strings, not bytes {special_tokens!r}; decode them first")
    elif isinstance(special_tokens, dict):
        special_tokens = {token: plain_int(token_id) for token, token_id in special_tokens.items()}
    else:
        try:
            special_tokens = list(special_tokens)
        except TypeError:
            raise SpecialTokenError(
                f"{where} must be a string, a list of strings or a dict string -> id, not {special_tokens!r}"
            ) from None
    for token in special_tokens:
        if not isinstance(token, str) or not token:
            raise SpecialTokenError(f"{where} holds {token!r}; a special token must be a non-empty string")
    if isinstance(special_tokens, dict):
        for token, token_id in special_tokens.items():
            if not isinstance(token_id, int) or isinstance(token_id, bool) or not 0 <= token_id < 2**31:
                raise SpecialTokenError(
                    f"special token {token!r} asks for id {token_id!r}; ids are integers from 0 to {2**31 - 1}"
                )
    return special_tokens


def _token_set(value, known, name):
    """``allowed_special`` / ``disallowed_special`` as a frozenset; a bare str is one token."""
    if isinstance(value, str):
        return frozenset([value])
    # bytes would be taken as a set of ints, which fail later, deep inside the matching
    if not isinstance(value, (bytes, bytearray)):
        try:
            tokens = frozenset(value)
        except TypeError:
            pass
        else:
            if all(isinstance(token, str) for token in tokens):
                return tokens
    raise SpecialTokenError(f"{name} must be 'all', a special token or a set of special-token strings, not {value!r}")


def resolve_special(special_tokens, allowed_special, disallowed_special):
    """Turn the caller's switches into two frozensets: (allowed, disallowed).

    A bare string other than ``"all"`` names one token (tiktoken would split it into
    characters, which can only be a mistake).
    """
    known = frozenset(special_tokens)
    if allowed_special == "all":
        allowed = known
    else:
        allowed = _token_set(allowed_special, known, "allowed_special")
        unknown = sorted(allowed - known)
        if unknown:
            raise SpecialTokenError(
                f"allowed_special names {unknown!r}, which are not special tokens of this "
                f"tokenizer; its special tokens are {sorted(known)!r}"
            )
    if disallowed_special == "all":
        disallowed = known - allowed
    else:
        disallowed = _token_set(disallowed_special, known, "disallowed_special")
    return allowed, disallowed


def check_disallowed(text, disallowed):
    """Raise ``DisallowedSpecialTokenError`` if ``text`` contains a disallowed special token."""
    if disallowed:
        match = special_regex(disallowed).search(text)
        if match:
            raise DisallowedSpecialTokenError(match.group())


def split_on_special(text, allowed):
    """Split ``text`` into ``(segment, is_special)`` parts, special tokens matched exactly."""
    if not allowed or not text:
        return [(text, False)] if text else []
    parts = []
    position = 0
    for match in special_regex(allowed).finditer(text):
        if match.start() > position:
            parts.append((text[position : match.start()], False))
        parts.append((match.group(), True))
        position = match.end()
    if position < len(text):
        parts.append((text[position:], False))
    return parts


def strip_special(text, special_tokens):
    """The ordinary segments of ``text``, for training: special tokens are boundaries."""
    return [segment for segment, is_special in split_on_special(text, frozenset(special_tokens)) if not is_special]
