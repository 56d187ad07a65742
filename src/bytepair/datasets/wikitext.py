"""WikiText-2 from a local folder or its public zips: find the split files, clean them, download.

Two variants of the same articles exist (Merity et al., 2016):

- ``raw``: ``wiki.train.raw``, ``wiki.valid.raw``, ``wiki.test.raw`` (zip ``wikitext-2-raw-v1``),
  the text with its original words;
- ``tokens``: ``wiki.train.tokens`` ... (zip ``wikitext-2-v1``), the same text with rare words
  replaced by ``<unk>``; PyTorch's examples ship it as ``train.txt``, ``valid.txt``, ``test.txt``.

Both are read faithfully by default: every byte of the file, including the blank lines, the
leading space WikiText puts on each line, the `` = Heading = `` lines and the ``@-@`` markers.
``cleaning="clean"`` is the documented alternative (see ``clean_text``). The splits are called
``train``, ``val`` and ``test`` here, whatever their file names.

This module does not tokenize or encode anything (``prepare.py`` does), and it only touches the
network in ``download_wikitext``.

Example:
    >>> texts = load_wikitext("data/wikitext-2")                       # doctest: +SKIP
    >>> sorted(texts), len(texts["val"])                               # doctest: +SKIP
    (['test', 'train', 'val'], 1120192)
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .._io import (
    cache_folder,
    check_output_folder,
    download,
    file_sha256,
    read_text,
    size_cap,
    write_text_atomic,
)
from .errors import DatasetError, DownloadError

SPLITS = ("train", "val", "test")

# File names per variant and split; ``txt`` is PyTorch's naming of the tokens variant.
WIKITEXT_FILES = {
    "raw": {"train": "wiki.train.raw", "val": "wiki.valid.raw", "test": "wiki.test.raw"},
    "tokens": {"train": "wiki.train.tokens", "val": "wiki.valid.tokens", "test": "wiki.test.tokens"},
    "txt": {"train": "train.txt", "val": "valid.txt", "test": "test.txt"},
}
# Folders the zips unpack to, searched below the folder given.
ZIP_FOLDERS = ("wikitext-2-raw", "wikitext-2")
# Other names a split file may have in a plain corpus folder (seed 000's clean files last).
OTHER_NAMES = {
    "train": ("train.txt", "train", "wikitext2_train_clean.txt"),
    "val": ("val.txt", "valid.txt", "validation.txt", "val", "wikitext2_val_clean.txt"),
    "test": ("test.txt", "test", "wikitext2_test_clean.txt"),
}
# What ``write_texts`` names the files: seed 000's ``data/processed`` names.
SEED_NAMES = {split: f"wikitext2_{split}_clean.txt" for split in SPLITS}

CLEANINGS = ("none", "clean", "clean-no-headings")


@dataclass(frozen=True)
class Download:
    """One public zip: where it is, its SHA-256, and the folder it unpacks to."""

    url: str
    sha256: str
    folder: str
    size: int


# The zips as published by the dataset's author; the checksums are those of the original files
# (4,721,645 and 4,475,746 bytes), identical on every mirror.
DOWNLOADS = {
    "raw": Download(
        "https://wikitext.smerity.com/wikitext-2-raw-v1.zip",
        "ef7edb566e3e2b2d31b29c1fdb0c89a4cc683597484c3dc2517919c615435a11",
        "wikitext-2-raw",
        4_721_645,
    ),
    "tokens": Download(
        "https://wikitext.smerity.com/wikitext-2-v1.zip",
        "92675f1d63015c1c8b51f1656a52d5bdbc33aafa60cc47a218a66e7ee817488c",
        "wikitext-2",
        4_475_746,
    ),
}


# -- finding and reading ------------------------------------------------------------------


def find_split_files(folder, *, variant="auto"):
    """The split files in ``folder``: ``{"train": Path, "val": Path, "test": Path}``.

    ``variant``: ``"raw"``, ``"tokens"`` (``wiki.*.tokens`` or PyTorch's ``train.txt`` ...), or
    ``"auto"``: the first found of raw, tokens, then any plain corpus names (``train.txt``,
    ``val.txt``/``valid.txt``/``validation.txt``, ``test.txt``, seed 000's
    ``wikitext2_*_clean.txt``). The unzipped folders ``wikitext-2-raw/`` and ``wikitext-2/``
    are searched too. ``val`` and ``test`` may be missing; ``train`` may not.

    Example:
        >>> find_split_files("data/wikitext-2")["val"].name            # doctest: +SKIP
        'valid.txt'
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetError(f"{str(folder)!r} is not a folder; pass the folder that holds the split files")
    if variant not in ("auto", "raw", "tokens"):
        raise DatasetError(f"unknown WikiText variant {variant!r}; use 'raw', 'tokens' or 'auto'")
    candidates = [folder] + [folder / name for name in ZIP_FOLDERS if (folder / name).is_dir()]
    # auto ends with the plain names, which include PyTorch's train.txt/valid.txt/test.txt
    naming = {"raw": ["raw"], "tokens": ["tokens", "txt"], "auto": ["raw", "tokens"]}[variant]
    for place in candidates:
        for kind in naming:
            found = _existing(place, {split: [name] for split, name in WIKITEXT_FILES[kind].items()})
            if "train" in found:
                return found
    if variant == "auto":
        for place in candidates:
            found = _existing(place, OTHER_NAMES)
            if "train" in found:
                return found
    tried = [WIKITEXT_FILES[kind]["train"] for kind in naming]
    if variant == "auto":
        tried += [name for name in OTHER_NAMES["train"] if name not in tried]
    raise DatasetError(
        f"no training split in {str(folder)!r} (looked for {', '.join(tried)}); pass the folder "
        "that holds them, give the files with --train/--val/--test, or use --download"
    )


def _existing(place, names_by_split):
    found = {}
    for split, names in names_by_split.items():
        for name in names:
            if (place / name).is_file():
                found[split] = place / name
                break
    return found


def load_wikitext(folder, *, variant="auto", cleaning="none"):
    """Every split of ``folder`` as text, cleaned by ``cleaning`` (default: faithful).

    Returns ``{"train": str, "val": str, "test": str}`` (only the splits present).
    """
    files = find_split_files(folder, variant=variant)
    return {split: clean_text(read_text(path, error=DatasetError), cleaning) for split, path in files.items()}


def write_texts(texts, folder, *, names=SEED_NAMES):
    """Write ``{"train": str, ...}`` as one UTF-8 file per split, atomically; returns the paths.

    The default names are seed 000's (``wikitext2_train_clean.txt`` ...), so its
    ``data/processed`` folder can be rebuilt with ``write_texts(load_wikitext(f, cleaning="clean"), "data/processed")``.
    """
    paths = {}
    for split, text in texts.items():
        paths[split] = Path(folder) / names[split]
        write_text_atomic(paths[split], text)
    return paths


# -- cleaning -----------------------------------------------------------------------------

# WikiText's tokenizer split numbers and hyphenated words around these markers: "1 @,@ 000",
# "0 @.@ 7", "role @-@ playing".
AT_MARKERS = ((" @-@ ", "-"), (" @,@ ", ","), (" @.@ ", "."))


def clean_text(text, cleaning="clean"):
    """Apply one of ``CLEANINGS`` to WikiText text (any text, line by line).

    - ``"none"`` (or ``None``): the text unchanged, the default everywhere.
    - ``"clean"``: drop empty and whitespace-only lines; strip the spaces WikiText puts at the
      start and end of every line; join the ``@-@``, ``@,@`` and ``@.@`` markers
      (``"1 @,@ 000"`` -> ``"1,000"``, ``"role @-@ playing"`` -> ``"role-playing"``); keep heading
      lines, stripped (``"= = Description = ="``); keep ``<unk>`` and the spaces around
      punctuation as they are. Every kept line ends with ``"\\n"`` (also where it ended with
      ``"\\r\\n"``); only ``"\\n"`` ends a line.
    - ``"clean-no-headings"``: ``"clean"``, and drop the heading lines too.

    Lines are cleaned one at a time, so cleaning a text in blocks that end at newlines gives
    the same result as cleaning it whole.

    Example:
        >>> clean_text(" \\n = Title = \\n The 1 @,@ 000 <unk> . \\n")
        '= Title =\\nThe 1,000 <unk> .\\n'
    """
    if cleaning in (None, "none"):
        return text
    if cleaning not in CLEANINGS:
        raise DatasetError(f"unknown cleaning {cleaning!r}; use one of {', '.join(CLEANINGS)}")
    drop_headings = cleaning == "clean-no-headings"
    kept = []
    for line in text.split("\n"):
        line = line.removesuffix("\r").strip(" ")
        if not line.strip():
            continue
        if drop_headings and is_heading(line):
            continue
        for marker, joined in AT_MARKERS:
            line = line.replace(marker, joined)
        kept.append(line + "\n")
    return "".join(kept)


def is_heading(line):
    """Whether a WikiText line is a heading: ``= Title =``, ``= = Section = =``, ...

    Example:
        >>> is_heading(" = = Description = = "), is_heading(" a = b = c ")
        (True, False)
    """
    words = line.split()
    if len(words) < 3 or words[0] != "=" or words[-1] != "=":
        return False
    level = next((i for i, word in enumerate(words) if word != "="), len(words))
    return level < len(words) - level and words[-level:] == ["="] * level


_ARTICLE_HEADING = re.compile(r"^ = [^=\n].* = \n", re.MULTILINE)
_ANY_HEADING = re.compile(r"^ = .* = \n", re.MULTILINE)


def split_articles(text, *, sections=False):
    """WikiText cut into documents before each top-level heading line (`` = Title = ``), or
    before every heading (`` = = Section = = `` too) with ``sections=True``. Nothing is lost:
    the parts join back into ``text``, and what comes before the first heading is a part.
    WikiText-2 train: 630 parts (its 629 articles after the blank line before the first), or
    6,212 sections.

    Example:
        >>> split_articles(" = A = \\n x \\n = = B = = \\n y \\n = C = \\n z \\n")
        [' = A = \\n x \\n = = B = = \\n y \\n', ' = C = \\n z \\n']
    """
    heading = _ANY_HEADING if sections else _ARTICLE_HEADING
    starts = [match.start() for match in heading.finditer(text)]
    return [text[a:b] for a, b in zip([0, *starts], [*starts, len(text)]) if a < b]


# -- download -----------------------------------------------------------------------------


def download_wikitext(variant="raw", *, cache_dir=None, url=None, sha256=None, progress=None):
    """Download one WikiText-2 zip once, check its SHA-256, unpack it; returns its folder.

    ``url`` replaces the public address (a mirror must serve the same file, so the checksum
    stays the published one unless ``sha256`` is given too). Files live in
    ``cache_dir/datasets/`` (``_io.cache_folder()``); a second call finds them and does not
    touch the network. The zip is streamed to disk while hashing, capped at about its published
    size (unless ``sha256`` names another file) and bounded by one deadline (``_io.download``);
    every file is written under a temporary name and renamed when complete.

    Raises ``DownloadError`` when the machine is offline or the server fails, and
    ``ChecksumError`` when the file is not the expected one (it is then not kept).

    Example:
        >>> folder = download_wikitext("raw")                         # doctest: +SKIP
        >>> sorted(p.name for p in folder.iterdir())                  # doctest: +SKIP
        ['wiki.test.raw', 'wiki.train.raw', 'wiki.valid.raw']
    """
    if variant not in DOWNLOADS:
        raise DatasetError(f"unknown WikiText variant {variant!r}; use 'raw' or 'tokens'")
    known = DOWNLOADS[variant]
    url = url or known.url
    expected = (sha256 or known.sha256).lower()
    cache = cache_folder(cache_dir) / "datasets"
    stem = Path(known.url).stem  # "wikitext-2-raw-v1"
    target = cache / stem
    marker = target / ".sha256"
    if marker.is_file() and marker.read_text().strip() == expected and _has_splits(target, variant):
        return target
    archive = cache / f"{stem}.zip"
    if not (archive.is_file() and file_sha256(archive) == expected):
        check_output_folder(cache, flag="the download cache")  # a file there: mkdir's "File exists"
        hint = "; check the network connection, or download the zip by hand, unpack it and pass its folder instead"
        limit = size_cap(known.size) if expected == known.sha256 else None
        download(url, archive, sha256=expected, max_bytes=limit, progress=progress, offline_hint=hint)
    _unpack(archive, target, variant, expected)
    return target


def _has_splits(folder, variant):
    return all((folder / name).is_file() for name in WIKITEXT_FILES[variant].values())


def _unpack(archive, target, variant, sha256):
    """Extract the three split files into ``target`` (a temporary folder, then a rename)."""
    names = WIKITEXT_FILES[variant]
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        try:
            with zipfile.ZipFile(archive) as zipped:
                members = {Path(m).name: m for m in zipped.namelist() if not m.endswith("/")}
                for name in names.values():
                    if name not in members:
                        raise DownloadError(
                            f"{str(archive)!r} has no {name!r}; it is not the WikiText-2 "
                            f"{variant} zip (delete it and download again)"
                        )
                    with zipped.open(members[name]) as source, open(staging / name, "wb") as out:
                        shutil.copyfileobj(source, out)
        except zipfile.BadZipFile as error:
            raise DownloadError(
                f"{str(archive)!r} is not a valid zip ({error}); delete it and download again"
            ) from None
        (staging / ".sha256").write_text(sha256 + "\n")
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
