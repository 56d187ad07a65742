"""GPT-2's byte alphabet: the 256 bytes as printable characters, and back.

Byte-level vocabularies are written in text files (HF's ``tokenizer.json``, GPT-2's
``encoder.json``/``vocab.bpe``, bytepair's own artifact) with each byte shown as one printable
character: the printable Latin-1 bytes as themselves, the others (space, controls, ...) shifted
above U+00FF, so that ``b" hi"`` reads ``"Ġhi"``. This module is that map's only home; it does
not know any file format.

Example:
    >>> bytes_to_readable(b" hi")
    'Ġhi'
    >>> readable_to_bytes("Ġhi")
    b' hi'
"""

from __future__ import annotations


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from the 256 bytes to printable characters.

    Example:
        >>> bytes_to_unicode()[ord(" ")]
        'Ġ'
    """
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    mapping = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + shifted)
            shifted += 1
    return mapping


BYTE_TO_CHAR: dict[int, str] = bytes_to_unicode()
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in BYTE_TO_CHAR.items()}

# str.translate tables. To bytes: alphabet character -> its byte as a code point below 256;
# the code points below 256 that are NOT in the alphabet (space, controls) -> one that latin-1
# cannot encode, so they fail like any other foreign character. About 5x faster than a
# generator of dict lookups on 200k tokens (measured on Llama 3's vocab).
_TO_LATIN1 = {**{b: "\U0010ffff" for b in range(256)}, **{ord(c): chr(b) for c, b in CHAR_TO_BYTE.items()}}
_FROM_LATIN1 = {b: c for b, c in BYTE_TO_CHAR.items()}


def bytes_to_readable(value: bytes) -> str:
    """``b" hi"`` -> ``"Ġhi"``."""
    return value.decode("latin-1").translate(_FROM_LATIN1)


def readable_to_bytes(text: str) -> bytes:
    """``"Ġhi"`` -> ``b" hi"``.

    Raises ``ValueError`` naming the first character outside the alphabet; callers that read
    a file catch it and name the file and field.

    Example:
        >>> readable_to_bytes("a b")
        Traceback (most recent call last):
        ...
        ValueError: 'a b' has ' ', which is not in GPT-2's byte-to-unicode alphabet
    """
    try:
        return text.translate(_TO_LATIN1).encode("latin-1")
    except (UnicodeEncodeError, AttributeError):
        if not isinstance(text, str):
            raise ValueError(f"{text!r} is not a string of GPT-2's byte-to-unicode alphabet") from None
        bad = next(c for c in text if c not in CHAR_TO_BYTE)
        raise ValueError(f"{text!r} has {bad!r}, which is not in GPT-2's byte-to-unicode alphabet") from None
