"""Other libraries' vocabularies: load GPT-2, r50k/p50k, cl100k, o200k, Llama 3, GPT-4o,
SentencePiece BPE models (Mistral 7B, Llama 2) and Mistral's tekken files byte-exact, and
export tokenizers trained here to tiktoken and Hugging Face files.

``load(name, path=...)`` finds a vocabulary by name in a local file or folder, or downloads the
published file once into a cache (tiktoken's files, checked against tiktoken's hashes). A folder
may hold any of::

    tokenizer.json (+ tokenizer_config.json)  a Hugging Face tokenizer folder (hf_folder.py)
    <name>.tiktoken                  tiktoken rank files (gpt2.tiktoken, cl100k_base.tiktoken ...)
    gpt2/encoder.json, gpt2/vocab.bpe GPT-2's original files
    hf/<name>/tokenizer.json         Hugging Face files (llama3, gpt4o ...)
    mistral/tokenizer.model.v1       SentencePiece BPE models (mistral; any *.model by path)
    mistral/tekken_240911.json       Mistral's tekken files (tekken)

The loaded tokenizer encodes with that library's own rule (tiktoken: whole piece first, then
lowest rank of the concatenation; HF: lowest merge rank), so its ids are the library's ids.

Modules: ``tiktoken_files`` (rank files), ``gpt2_files`` (encoder.json + vocab.bpe),
``huggingface`` (tokenizer.json), ``download`` (the cache), ``export`` (writing both formats),
``cli`` (``bytepair compare``).

Example:
    >>> tok = load("cl100k_base", path="vocab/")  # doctest: +SKIP
    >>> tok.encode("hello world")                 # doctest: +SKIP
    [15339, 1917]
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .._gc import gc_paused
from .._io import check_path, parse_json, read_tokenizer_text
from ..artifact import ARTIFACT_NAME
from ..errors import FormatError
from ..tokenizer import Tokenizer
from .download import vocabulary_file
from .export import to_huggingface, to_tiktoken
from .gpt2_files import load_gpt2_files
from .hf_folder import artifact_where_hf_expects_its_file, check_same_tokenizer, read_settings, save_pretrained
from .huggingface import load_huggingface, tokenizer_from_json
from .sentencepiece import load_sentencepiece
from .tekken import is_tekken, load_tekken, tokenizer_from_tekken
from .tiktoken_files import (
    ENCODINGS,
    load_tiktoken,
    read_rank_file,
    tokenizer_from_ranks,
)

# Published Hugging Face files: no download (Llama 3's is gated), so a path is needed.
HF_VOCABULARIES = ("llama3", "gpt4o")
# Mistral's files (a path is needed too): name -> file names in a folder, best first.
MISTRAL_VOCABULARIES = {
    "mistral": ("mistral/tokenizer.model.v1", "tokenizer.model.v1", "tokenizer.model"),
    "mistral-v3": ("mistral/mistral_instruct_tokenizer_240323.model.v3", "mistral_instruct_tokenizer_240323.model.v3"),
    "tekken": ("mistral/tekken_240911.json", "tekken_240911.json", "tekken.json"),
}
# gpt2 has the same ranks as r50k_base (tiktoken builds it from encoder.json + vocab.bpe).
TIKTOKEN_VOCABULARIES = {"gpt2": "r50k_base", **{name: name for name in ENCODINGS}}
ALIASES = {"r50k": "r50k_base", "p50k": "p50k_base", "cl100k": "cl100k_base", "o200k": "o200k_base"}
KNOWN = (*TIKTOKEN_VOCABULARIES, *HF_VOCABULARIES, *MISTRAL_VOCABULARIES)


def load(
    name: str | os.PathLike,
    *,
    path: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    base_url: str | None = None,
) -> Tokenizer:
    """Load a vocabulary by name, from ``path`` (a file or a folder) or the download cache.

    - ``name``: one of ``KNOWN`` ("gpt2", "r50k_base", "p50k_base", "cl100k_base",
      "o200k_base", "llama3", "gpt4o", "mistral" (Mistral 7B's SentencePiece model),
      "mistral-v3", "tekken"; aliases "cl100k", "o200k", ...) or a path to a file or folder.
    - ``path``: a file (``.tiktoken``, ``tokenizer.json``, a tekken ``.json``, a SentencePiece
      ``.model``, GPT-2's ``encoder.json``) or a folder laid out as in this module's docstring; default ``$BYTEPAIR_VOCAB_DIR``, then
      the cache, downloading tiktoken's files when missing. A local rank file loaded under a
      published name must be that name's published file (same SHA-256).
    - ``cache_dir`` / ``base_url``: see ``download.py``.

    Example:
        >>> load("gpt2", path="vocab/").encode("hello world")  # doctest: +SKIP
        [31373, 995]
    """
    if not isinstance(name, (str, os.PathLike)) or not str(name):
        raise FormatError(f"vocabulary name must be a non-empty string, not {name!r}; known names: {', '.join(KNOWN)}")
    path = None if path is None else check_path(path, "path")
    cache_dir = None if cache_dir is None else check_path(cache_dir, "cache_dir")
    canonical = ALIASES.get(str(name), str(name))
    # a file or folder named outright is loaded; a folder ``path`` is where published names are
    # found (the CLI passes --vocab-dir for every -t), a file ``path`` is what to load
    if canonical not in KNOWN and Path(name).exists() and (path is None or Path(path).is_dir()):
        return _load_path(Path(name), None)
    if path is not None:
        return _load_path(Path(path), canonical)
    if canonical not in KNOWN and _looks_like_a_path(str(name)):
        raise FormatError(f"{name}: no such tokenizer file or folder")
    if canonical not in KNOWN:
        raise FormatError(
            f"unknown vocabulary {str(name)!r}; use one of {', '.join(KNOWN)}, or a path to a "
            ".tiktoken file, a tokenizer.json, GPT-2's encoder.json, or a folder holding them"
        )
    vocab_dir = os.environ.get("BYTEPAIR_VOCAB_DIR")
    if vocab_dir and _find_in_folder(Path(vocab_dir), canonical):
        return _load_path(Path(vocab_dir), canonical)
    return _download(canonical, cache_dir, base_url)


def load_pretrained(folder: str | os.PathLike) -> Tokenizer:
    """A ``Tokenizer`` from a Hugging Face tokenizer folder (or one holding bytepair's
    ``tokenizer.bytepair.json``), with its ``bos_token``, ``eos_token``, ``pad_token``,
    ``unk_token``, ``chat_template`` and ``model_max_length`` (see ``hf_folder.py``).

    Raises ``FormatError`` when the folder's ``tokenizer.json`` is a bytepair artifact (HF
    cannot read it there), or when it holds neither file.

    Example:
        >>> load_pretrained("vocab/hf/llama3").eos_token  # doctest: +SKIP
        '<|end_of_text|>'
    """
    folder = Path(check_path(folder, "folder"))
    if not folder.is_dir():  # "no tokenizer.json in this folder" misled for a file or a typo
        if folder.exists():
            raise FormatError(
                f"{folder} is a file; load_pretrained takes a tokenizer folder (bytepair.load({str(folder)!r}) reads a file)"
            )
        raise FormatError(f"{folder}: no such folder")
    ours, theirs = folder / ARTIFACT_NAME, folder / "tokenizer.json"
    if ours.is_file():
        tokenizer = _json_file(ours, None)
        if theirs.is_file():
            check_same_tokenizer(tokenizer, theirs)
    elif theirs.is_file():
        text = read_tokenizer_text(theirs, FormatError)
        with gc_paused():
            data = parse_json(text, str(theirs), FormatError)
            refusal = artifact_where_hf_expects_its_file(theirs, data)
            if refusal is not None:
                raise refusal
            try:
                tokenizer = tokenizer_from_json(data, where=str(theirs), name=folder.name)
            except FormatError as error:
                sentencepiece = folder / "tokenizer.model"
                if not sentencepiece.is_file():
                    raise
                # Llama 2 and Mistral folders: a character-level tokenizer.json beside the model
                raise FormatError(
                    f"{error}. The folder also holds tokenizer.model, the SentencePiece model such a "
                    f"tokenizer.json is converted from: bytepair.load({str(sentencepiece)!r}) reads that"
                ) from None
    else:
        raise FormatError(f"{folder}: no tokenizer.json or {ARTIFACT_NAME} in this folder")
    for setting, value in read_settings(folder).items():
        setattr(tokenizer, setting, value)
    return tokenizer


def _looks_like_a_path(name):
    return os.sep in name or "/" in name or Path(name).suffix in (".json", ".tiktoken", ".bpe")


def _download(name, cache_dir, base_url):
    if name in HF_VOCABULARIES or name in MISTRAL_VOCABULARIES:
        raise FormatError(
            f"{name!r} is not downloaded automatically; pass path= to its file (or a folder holding "
            f"{_candidates(name)[0]}), or set BYTEPAIR_VOCAB_DIR"
        )
    encoding = ENCODINGS[TIKTOKEN_VOCABULARIES[name]]
    file = vocabulary_file(encoding, cache_dir=cache_dir, base_url=base_url, name=name)
    return _tiktoken(file, name)


def _candidates(name):
    """Relative paths in a vocabulary folder that can hold ``name``, best first."""
    if name in MISTRAL_VOCABULARIES:
        return list(MISTRAL_VOCABULARIES[name])
    if name in TIKTOKEN_VOCABULARIES:
        found = [f"{name}.tiktoken", f"{TIKTOKEN_VOCABULARIES[name]}.tiktoken"]
        if TIKTOKEN_VOCABULARIES[name] == "r50k_base":
            found += ["gpt2.tiktoken", "gpt2/encoder.json", "encoder.json"]
        return list(dict.fromkeys(found))
    found = [f"hf/{name}/tokenizer.json", f"{name}/tokenizer.json"]
    return found + (["tokenizer.json"] if name in HF_VOCABULARIES else [f"{name}.tiktoken"])


def _find_in_folder(folder, name):
    for relative in _candidates(name):
        if (folder / relative).is_file():
            return folder / relative
    return None


def is_tokenizer_folder(path):
    """Whether ``path`` is a folder ``load`` reads as one tokenizer (``save_pretrained``'s, or
    one holding a tokenizer.json), rather than a folder of vocabularies to name one from."""
    path = Path(path)
    return (path / "tokenizer.json").is_file() or (path / ARTIFACT_NAME).is_file()


def _folder_without_one_tokenizer(path):
    """What to say of a folder that holds no one tokenizer: the vocabularies it holds, and how to
    load one of them."""

    def is_vocabulary(entry):
        if entry.is_dir():
            return is_tokenizer_folder(entry) or (entry / "encoder.json").is_file()
        return entry.suffix in (".tiktoken", ".json") or ".model" in entry.name

    held = sorted(entry.name + ("/" if entry.is_dir() else "") for entry in path.iterdir() if is_vocabulary(entry))
    if not held:
        return f"{path} is a folder with no tokenizer in it (no tokenizer.json, .tiktoken, .model or .json file)"
    shown = ", ".join(held[:6]) + (f" and {len(held) - 6} more" if len(held) > 6 else "")
    named = [Path(h).stem for h in held if h.endswith(".tiktoken") and Path(h).stem in TIKTOKEN_VOCABULARIES]
    by_name = f"load({named[0]!r}, path={str(path)!r}), or " if named else ""
    return (
        f"{path} is a folder of vocabularies ({shown}), not one tokenizer; load one of them, e.g. "
        f"{by_name}load({str(path / held[0].rstrip('/'))!r})"
    )


def _load_path(path, name):
    if path.is_dir():
        if name is None and is_tokenizer_folder(path):
            return load_pretrained(path)
        if name is None and (path / "encoder.json").is_file() and (path / "vocab.bpe").is_file():
            return load_gpt2_files(path / "encoder.json", path / "vocab.bpe", name="gpt2")  # OpenAI's GPT-2 folder
        if name is None:
            raise FormatError(_folder_without_one_tokenizer(path))
        file = _find_in_folder(path, name)
        if file is None:
            raise FormatError(f"{path}: no file for {name!r}; looked for {', '.join(_candidates(name))}")
        path = file
    if not path.exists():
        raise FormatError(f"{path}: no such file or folder")
    if not path.is_file():
        raise FormatError(f"{path} is not a regular file (a device or a pipe?); give a tokenizer file or folder")
    return _load_file(path, name)


def _load_file(path, name):
    if ".model" in path.suffixes or path.suffix == ".model":
        return load_sentencepiece(path, name=name)
    if path.suffix == ".tiktoken":
        return _tiktoken(path, name)
    if path.name in ("encoder.json", "vocab.bpe"):
        return load_gpt2_files(path.parent / "encoder.json", path.parent / "vocab.bpe", name=name or "gpt2")
    if path.suffix == ".json":
        return _json_file(path, name)
    raise FormatError(
        f"{path}: unknown vocabulary format; expected a .tiktoken file, a tokenizer.json, a tekken .json, "
        "a SentencePiece .model or GPT-2's encoder.json"
    )


def _tiktoken(path, name):
    known = name if name in TIKTOKEN_VOCABULARIES else ALIASES.get(path.stem, path.stem)
    if known not in TIKTOKEN_VOCABULARIES:
        raise FormatError(
            f"{path}: a tiktoken rank file holds no pattern or special tokens, and {path.stem!r} "
            f"is not a published encoding ({', '.join(TIKTOKEN_VOCABULARIES)}); load it with "
            "bytepair.formats.load_tiktoken(path, pattern=..., special_tokens=...)"
        )
    encoding = ENCODINGS[TIKTOKEN_VOCABULARIES[known]]
    data, ranks = read_rank_file(path)
    _check_published(path, data, encoding, known)
    return tokenizer_from_ranks(ranks, pattern=encoding.pattern, special_tokens=encoding.special_tokens, name=known)


def _check_published(path, data, encoding, name):
    """A file read under a published name must be that name's file: its ids, pattern and
    special tokens are then the ones ``ENCODINGS`` gives it."""
    actual = hashlib.sha256(data).hexdigest()
    if actual != encoding.sha256:
        raise FormatError(
            f"{path}: loaded as {name!r}, but its sha256 is {actual}, not the published "
            f"{encoding.sha256}; the file is corrupt or another vocabulary. Replace it with the "
            "published file, or load it with bytepair.formats.load_tiktoken(path, pattern=..., "
            "special_tokens=...) under a name of its own"
        )


def _json_file(path, name):
    text = read_tokenizer_text(path, FormatError)
    with gc_paused():
        data = parse_json(text, str(path), FormatError)
        if isinstance(data, dict) and "model" in data:
            return tokenizer_from_json(data, where=str(path), name=name or path.parent.name)
        if is_tekken(data):
            return tokenizer_from_tekken(data, where=str(path), name=name or path.stem)
    if isinstance(data, dict) and data.get("type") in ("character_bpe", "byte_bpe"):
        return Tokenizer.from_dict(data, where=str(path))
    raise FormatError(f"{path}: neither a Hugging Face tokenizer.json (no 'model') nor a bytepair tokenizer")


__all__ = [
    "KNOWN",
    "load",
    "load_gpt2_files",
    "load_huggingface",
    "load_pretrained",
    "load_sentencepiece",
    "load_tekken",
    "load_tiktoken",
    "save_pretrained",
    "to_huggingface",
    "to_tiktoken",
]
