"""Small generated corpora for the fast tier: deterministic, WikiText-like, no data folder.

Words are made of syllables by a seeded generator and drawn with Zipf-like weights, so BPE
has frequent pairs to learn and rare words to split; the lines follow WikiText-2's tokenized
layout (`` = Heading = ``, blank lines, spaced punctuation, ``@-@``/``@,@``, ``<unk>``), with a
few non-ASCII words (accents, CJK, emoji) so byte and character modes differ.
"""

from __future__ import annotations

import random
from pathlib import Path

SYLLABLES = ["ta", "ro", "en", "mi", "ka", "lo", "ne", "sa", "di", "vu", "or", "an", "the", "ing", "st", "qu"]
FOREIGN = ["café", "naïve", "Zürich", "東京", "人工", "😀", "São", "Ångström"]


def words(seed=0, count=600):
    """``count`` distinct words, the same for the same seed."""
    rng = random.Random(seed)
    found = []
    seen = set()
    while len(found) < count:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4)))
        if word not in seen:
            seen.add(word)
            found.append(word)
    return found


def wikitext_like(characters, seed=0):
    """About ``characters`` characters of WikiText-2-like text (whole lines, ends with a newline).

    Example:
        >>> text = wikitext_like(2_000, seed=1)
        >>> text == wikitext_like(2_000, seed=1) and text.endswith("\\n") and len(text) >= 2_000
        True
    """
    rng = random.Random(seed)
    vocabulary = words(seed)
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    lines = []
    size = 0
    while size < characters:
        if rng.random() < 0.08:
            title = " ".join(rng.choices(vocabulary, weights, k=rng.randint(1, 3))).title()
            line = f" = {title} = \n"
            lines += [" \n", line, " \n"]
            size += len(line) + 4
            continue
        tokens = []
        for _ in range(rng.randint(5, 25)):
            draw = rng.random()
            if draw < 0.03:
                tokens.append("<unk>")
            elif draw < 0.05:
                tokens.append(rng.choice(FOREIGN))
            elif draw < 0.08:
                tokens.append(f"{rng.randint(1, 99)} @,@ {rng.randint(100, 999)}")
            elif draw < 0.10:
                tokens.append(f"{rng.choice(vocabulary)} @-@ {rng.choice(vocabulary)}")
            elif draw < 0.18:
                tokens.append(rng.choice([",", ";", "(", ")", "'s", '"']))
            else:
                tokens.extend(rng.choices(vocabulary, weights))
        sentence = " ".join(tokens)
        line = " " + sentence[:1].upper() + sentence[1:] + " . \n"
        lines.append(line)
        size += len(line)
    return "".join(lines)


def write_wikitext_folder(folder, sizes=(30_000, 6_000, 6_000), seed=0):
    """A folder with WikiText-2's ``train.txt``/``valid.txt``/``test.txt``; returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for offset, (name, size) in enumerate(zip(("train.txt", "valid.txt", "test.txt"), sizes)):
        (folder / name).write_text(wikitext_like(size, seed=seed + offset), encoding="utf-8")
    return folder


def assigned_code_points():
    """Every code point the installed ``regex`` module (the newest Unicode here) assigns, but
    the private-use planes 15 and 16 (131,068 code points of one kind, Co, in every version;
    the private-use block of the BMP stays) and the surrogates (no peer takes them)."""
    import regex

    everything = "".join(chr(c) for c in range(0xD800)) + "".join(chr(c) for c in range(0xE000, 0xF0000))
    return [ord(m.group()) for m in regex.finditer(r"[^\p{Cn}\p{Cs}]", everything)]


def code_point_texts(contexts, per_text=4096):
    """Texts that show each assigned code point in each context: ``contexts`` are format
    strings with one ``{}`` (``"a{}"``: after a letter), the variants joined by newlines,
    ``per_text`` code points to a text. Returns ``[(code points, text)]``."""
    points = assigned_code_points()
    out = []
    for start in range(0, len(points), per_text):
        chunk = points[start : start + per_text]
        out.append((chunk, "\n".join(context.format(chr(c)) for c in chunk for context in contexts)))
    return out


# -- random text for property tests against the peers -------------------------------------------

# Characters where the patterns and the merge loop are easy to get wrong, drawn often.
ODD_CHARACTERS = list(
    " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000\u200b\ufeff'sStdmlLvreE\u017f1234567890.,!?/\\-"
) + [
    "\r\n",
    "  ",
    "\n\n",
    "'s",
    "'ll",
    "\U0001f600",
    "\U0001f3fd",
    "é",
    "e\u0301",
    "人",
    "한",
    "ا",
    "\u0939\u093f",
]


def random_texts(max_size=60):
    """A hypothesis strategy: texts of up to ``max_size`` draws, each an odd character (above) or
    any code point but a surrogate, unassigned ones included."""
    from hypothesis import strategies as st

    return st.lists(
        st.one_of(st.sampled_from(ODD_CHARACTERS), st.characters(blacklist_categories=("Cs",))), max_size=max_size
    ).map("".join)


def texts_for_vocabularies(alphabet, lengths, vocabularies=8):
    """A hypothesis strategy: (which of ``vocabularies`` small vocabularies, a text): a seeded
    random text over ``alphabet`` of one of ``lengths`` characters or of 1-120."""
    from hypothesis import strategies as st

    @st.composite
    def cases(draw):
        seed = draw(st.integers(0, 2**32 - 1))
        length = draw(st.sampled_from(lengths) | st.integers(1, 120))
        rng = random.Random(seed)
        return seed % vocabularies, "".join(rng.choice(alphabet) for _ in range(length))

    return cases()
