"""Hugging Face tokenizer folders, both ways: what ``save_pretrained`` writes and
``AutoTokenizer.from_pretrained`` reads.

A folder holds::

    tokenizer.json            the vocabulary, merges, pattern and special tokens (export.py)
    tokenizer_config.json     bos/eos/pad/unk tokens, chat_template, model_max_length,
                              tokenizer_class "PreTrainedTokenizerFast"
    special_tokens_map.json   bos/eos/pad/unk tokens again (older transformers read them here)
    chat_template.jinja       (written by newer transformers instead of the config's field)

``save_pretrained(tokenizer, folder)`` writes the first three so that
``transformers.AutoTokenizer.from_pretrained(folder)`` gives bytepair's ids, pads with the
tokenizer's ``pad_token`` and knows its ``eos_token``. ``read_settings(folder)`` reads the
settings back; ``formats.load_pretrained(folder)`` (``bytepair.load(folder)``) builds the
tokenizer of such a folder, written here or by transformers, with them. (This module never
imports the tokenizer, so that ``Tokenizer.save_pretrained`` can call it without a cycle.)
``save_pretrained`` also writes bytepair's own artifact, ``tokenizer.bytepair.json``, for a
tokenizer trained here: ``bytepair.load`` reads it instead of ``tokenizer.json`` (it keeps what
HF's file cannot, e.g. a replay merge list, and is the only one bytepair reads for character-level
or normalized tokenizers), after checking that ``tokenizer.json`` still says the same.

It does not read slow-tokenizer files (``vocab.json`` + ``merges.txt``, ``tokenizer.model``).

Example:
    >>> save_pretrained(tok, "my-tokenizer")                      # doctest: +SKIP
    >>> AutoTokenizer.from_pretrained("my-tokenizer")("hi")       # doctest: +SKIP
    >>> read_settings("my-tokenizer")["eos_token"]                # doctest: +SKIP
    '<|endoftext|>'
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

from .._io import check_path, parse_json, read_tokenizer_text, write_text_atomic
from ..artifact import ARTIFACT_NAME
from ..errors import FormatError
from .export import check_tokenizer, huggingface_json, to_huggingface

__all__ = ["HF_FILES", "artifact_where_hf_expects_its_file", "check_same_tokenizer", "read_settings", "save_pretrained"]

HF_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
TOKEN_SETTINGS = ("bos_token", "eos_token", "pad_token", "unk_token")


def save_pretrained(tokenizer: Any, folder: str | os.PathLike, *, drop_unknown: bool = False) -> list[Path]:
    """Write ``tokenizer`` as a Hugging Face tokenizer folder; return the files written.

    ``drop_unknown``: see ``to_huggingface`` (character-level tokenizers without byte fallback).

    Raises ``FormatError`` where HF's file would encode differently (``to_huggingface``), or
    where a ``*_token`` setting names no token of this vocabulary.
    """
    check_tokenizer(tokenizer)
    folder = check_path(folder, "folder")
    if not folder:  # Path("") is the current folder, which no one asking for a folder meant
        raise FileNotFoundError(errno.ENOENT, "the folder is empty; give a folder name (it is made if missing)")
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise FormatError(f"{folder} is a file; save_pretrained needs a folder")
    settings = _checked_settings(tokenizer)
    folder.mkdir(parents=True, exist_ok=True)
    to_huggingface(tokenizer, folder / "tokenizer.json", drop_unknown=drop_unknown)
    tokens = {name: settings[name] for name in TOKEN_SETTINGS if settings.get(name) is not None}
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        **tokens,
        "clean_up_tokenization_spaces": False,
        "model_input_names": ["input_ids", "attention_mask"],
        "padding_side": tokenizer.padding_side,
        "truncation_side": tokenizer.truncation_side,
    }
    if settings.get("model_max_length") is not None:
        config["model_max_length"] = settings["model_max_length"]
    if settings.get("chat_template") is not None:
        config["chat_template"] = _template_source(settings["chat_template"])
    _write_json(folder / "tokenizer_config.json", config)
    _write_json(folder / "special_tokens_map.json", tokens)
    files = [folder / name for name in HF_FILES]
    ours = folder / ARTIFACT_NAME
    if tokenizer.model.export_refusal("artifact") is None:
        # bytepair.load(folder) then gives this very tokenizer (its fingerprint too), also
        # where HF's file is one bytepair does not read (character level, a normalizer)
        tokenizer.save(ours)
        files.append(ours)
    else:
        ours.unlink(missing_ok=True)  # an earlier save's would be read instead of this one
    return files


def check_same_tokenizer(tokenizer: Any, hf_file: Path) -> None:
    """Raise ``FormatError`` unless ``hf_file`` (a folder's ``tokenizer.json``) has the vocab,
    merges, special tokens, normalizer, pre-tokenizer and decoder that ``tokenizer`` (read from the folder's
    ``tokenizer.bytepair.json``) exports to: an HF file changed after ``save_pretrained`` wrote
    both would otherwise be ignored without a word."""
    theirs = _parsed(hf_file)
    try:
        ours = huggingface_json(tokenizer)
    except FormatError:
        ours = None
    differ = [
        key
        for key in ("vocab", "merges", "special tokens", "normalizer", "pre_tokenizer", "decoder")
        if _hf_part(ours, key) != _hf_part(theirs, key)
    ]
    if differ:
        raise FormatError(
            f"{hf_file} and {ARTIFACT_NAME} beside it describe different tokenizers (their {', '.join(differ)} "
            f"differ): {hf_file.name} was changed after bytepair wrote the folder. Delete {ARTIFACT_NAME} to "
            f"load {hf_file.name}, or write the folder again with tok.save_pretrained"
        )


def _hf_part(data, key):
    if not isinstance(data, dict):
        return None
    model = data.get("model") if isinstance(data.get("model"), dict) else {}
    if key == "vocab":
        return model.get("vocab")
    if key == "merges":  # "a b" and ["a", "b"] are the same merge
        merges = model.get("merges")
        if not isinstance(merges, list):
            return merges
        return [merge.split(" ") if isinstance(merge, str) else merge for merge in merges]
    if key == "special tokens":
        added = data.get("added_tokens")
        if not isinstance(added, list):
            return added
        return sorted((str(t.get("content")), str(t.get("id"))) for t in added if isinstance(t, dict))
    return data.get(key)  # normalizer, pre_tokenizer, decoder


def _checked_settings(tokenizer):
    settings = {name: getattr(tokenizer, name, None) for name in (*TOKEN_SETTINGS, "chat_template", "model_max_length")}
    for name in TOKEN_SETTINGS:
        value = settings[name]
        if value is None or value in tokenizer.special_tokens:
            continue
        if tokenizer.token_to_id(value) is None:
            raise FormatError(
                f"{name} is {value!r}, which is not a token of this tokenizer; set it to one of its "
                "special tokens (e.g. tok.add_special_tokens([...]) first) or to None"
            )
        # transformers makes every *_token of the config a special token, cut out of text
        # before encoding: "Wait... what." would lose its merged "..." to three pad ids.
        raise FormatError(
            f"{name} is {value!r}, an ordinary token of this vocabulary; transformers would make it a "
            "special token and match it inside text, so its ids would differ from bytepair's. Set it to "
            "one of the special tokens (add one with tok.add_special_tokens([...]) first) or to None"
        )
    return settings


def _template_source(template):
    from ..chat import BUILTIN_TEMPLATES, builtin_name

    return BUILTIN_TEMPLATES.get(builtin_name(template), template)


def _write_json(path, content):
    write_text_atomic(path, json.dumps(content, ensure_ascii=False, indent=2) + "\n")


def artifact_where_hf_expects_its_file(path: Path, data: Any) -> FormatError | None:
    """The error for a bytepair artifact named ``tokenizer.json`` inside a folder (transformers
    would fail on it there), or None when ``data`` is not one."""
    if isinstance(data, dict) and data.get("type") in ("character_bpe", "byte_bpe"):
        return FormatError(
            f"{path} is a bytepair artifact ({data['type']}), not a Hugging Face tokenizer.json, "
            f"so transformers cannot read this folder; rename it to {ARTIFACT_NAME} (or load the "
            "file itself with bytepair.load), and write HF's files with tok.save_pretrained(folder)"
        )
    return None


def _parsed(path):
    return parse_json(read_tokenizer_text(path, FormatError), str(path), FormatError)


def read_settings(folder: str | os.PathLike) -> dict:
    """The settings (``bos_token`` ... ``model_max_length``, ``padding_side``,
    ``truncation_side``) a folder's tokenizer_config.json, special_tokens_map.json and
    chat_template.jinja give; absent files give none."""
    folder = Path(folder)
    settings = {}
    for name in ("special_tokens_map.json", "tokenizer_config.json"):  # the config wins
        path = folder / name
        if not path.is_file():
            continue
        data = _parsed(path)
        if not isinstance(data, dict):
            raise FormatError(f"{path}: expected a JSON object, not {type(data).__name__}")
        for key in TOKEN_SETTINGS:
            if key in data:
                settings[key] = _token_content(data[key], path, key)
        if "chat_template" in data:
            settings["chat_template"] = _chat_template(data["chat_template"], path)
        for key in ("padding_side", "truncation_side"):
            if data.get(key) is not None:  # null: the default
                if data[key] not in ("left", "right"):
                    raise FormatError(f"{path}: {key} is {data[key]!r}; expected 'left' or 'right'")
                settings[key] = data[key]
        if "model_max_length" in data:
            length = data["model_max_length"]
            if not isinstance(length, int) or isinstance(length, bool) or length < 1:
                raise FormatError(f"{path}: model_max_length is {length!r}; expected a positive integer")
            settings["model_max_length"] = length
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        settings["chat_template"] = read_tokenizer_text(jinja, FormatError, "chat template")
    return settings


def _token_content(value, path, key):
    # transformers writes a token as its string or as an AddedToken dict {"content": ...}.
    if isinstance(value, dict):
        value = value.get("content")
    if value is not None and not isinstance(value, str):
        raise FormatError(f'{path}: {key} is {value!r}; expected a string or {{"content": ...}}')
    return value


def _chat_template(value, path):
    # A string, or a list of {"name", "template"} of which "default" is the chat template.
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, list):
        named = {item.get("name"): item.get("template") for item in value if isinstance(item, dict)}
        if isinstance(named.get("default"), str):
            return named["default"]
    raise FormatError(
        f"{path}: chat_template is {str(value)[:80]!r}; expected a string or a list with a 'default' entry"
    )
