"""Hugging Face ``tokenizer.json`` files for byte-level BPE: read them into a tokenizer.

Two shapes are understood, the ones byte-level BPE models ship with:

- GPT-2 style: ``pre_tokenizer`` is ``ByteLevel`` with ``use_regex: true`` (GPT-2's regex,
  which is equivalent to the ``gpt2`` pattern, as tiktoken's source notes);
- Llama 3 / GPT-4o style: ``Sequence[Split(Regex, Isolated), ByteLevel(use_regex: false)]``,
  the regex being the tokenizer's pattern: a named one when it is one, else the regex as HF's
  engine reads it (``hf_regex.from_hf_regex``). ``Split(..., Removed, invert: true)`` is read
  when its regex matches every character (a named one, or as ``to_huggingface`` writes it):
  HF drops the text that such a split leaves, bytepair never drops text.

The model must be ``BPE`` over GPT-2's byte-to-unicode alphabet (``bytelevel.py``),
with merges as ``"a b"`` strings or ``[a, b]`` lists; ``added_tokens`` become special tokens
with their ids. Encoding follows HF's BPE model: the pair with the lowest merge rank first,
leftmost on ties; with ``ignore_merges`` a piece that is a token is looked up whole first.

It does not read normalizers, other models (WordPiece, Unigram, character-level BPE), dropout,
subword prefixes or suffixes, or added tokens with ``lstrip``/``rstrip``/``single_word``: each
raises ``FormatError`` naming the field and value. The ``post_processor`` (which adds BOS/EOS
when HF is called with ``add_special_tokens=True``) is ignored: bytepair never adds tokens on
its own, so ids equal HF's ``encode(text, add_special_tokens=False)``. So are ``truncation`` and
``padding``, which ``tokenizers`` applies to every ``encode`` and ``transformers`` replaces with
the arguments of each call: bytepair gives every id, as ``transformers`` does when not asked to
truncate or pad.

Example:
    >>> tok = load_huggingface("hf/llama3/tokenizer.json")  # doctest: +SKIP
    >>> tok.encode("hello world")                          # doctest: +SKIP
    [15339, 1917]
"""

from __future__ import annotations

from pathlib import Path

from .. import bytelevel
from .._gc import gc_paused
from ..errors import FormatError, PatternError
from ..ids import check_defined_id, check_defined_ids
from ..model import RankModel
from ..patterns import PATTERNS, gaps_kept, keep_gaps, resolve_pattern
from ..tokenizer import Tokenizer
from .hf_regex import from_hf_regex, hf_regex

# Split behaviours that give exactly the regex's matches as pieces (HF's ``Isolated`` also
# keeps the text between matches as pieces; the named patterns match every character).
KEEP_MATCHES = {("Isolated", False), ("Removed", True)}


# Where a file is one that save_pretrained wrote for a character-level or normalized tokenizer.
OWN_FOLDER_HINT = (
    " (a folder that bytepair's save_pretrained wrote also holds tokenizer.bytepair.json, which "
    "bytepair.load(folder) reads instead)"
)

# The named patterns as they appear in files written by ``to_huggingface``.
_NAMES_BY_HF_REGEX = {hf_regex(regex_text): name for name, regex_text in PATTERNS.items()}


def load_huggingface(path, *, name=None):
    """A tokenizer that gives the ids of ``tokenizers.Tokenizer.from_file(path)``.

    Example:
        >>> tok = load_huggingface("tokenizer.json")  # doctest: +SKIP
    """
    from .._io import check_path, parse_json, read_tokenizer_text

    path = Path(check_path(path))
    text = read_tokenizer_text(path, FormatError, "tokenizer.json file")
    with gc_paused():
        data = parse_json(text, str(path), FormatError)
        return tokenizer_from_json(data, where=str(path), name=name or path.parent.name)


def tokenizer_from_json(data, *, where="tokenizer.json", name=None):
    """The same as ``load_huggingface`` for already parsed JSON content."""
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise FormatError(f"{where}: not a Hugging Face tokenizer.json (no 'model' object)")
    # the model first: a WordPiece or Unigram file is refused for what it is, not for the
    # normalizer or pre-tokenizer that goes with it
    model = data["model"]
    _check_model(model, where)
    _check_normalizer(data.get("normalizer"), where)
    pattern = read_pre_tokenizer(data.get("pre_tokenizer"), where)
    _check_decoder(data.get("decoder"), where)
    added_tokens = data.get("added_tokens") or []
    if not isinstance(model.get("vocab"), dict):
        raise FormatError(f"{where}: field 'model.vocab' must map token strings to ids")
    if not isinstance(added_tokens, list):
        raise FormatError(f"{where}: field 'added_tokens' must be a list of objects, not {type(added_tokens).__name__}")
    # Every id is checked against the number of tokens before any table is sized by one.
    count = len(model["vocab"]) + len(added_tokens)
    specials = read_added_tokens(added_tokens, where, count=count)
    vocab = read_vocab(model["vocab"], specials, where)
    _check_all_bytes(vocab, where)
    pairs = read_merges(model.get("merges"), model["vocab"], where)
    ignore_merges = _flag(model, "ignore_merges", False, where, "model")
    try:
        rank_model = RankModel(vocab, rule="hf", pair_table=pairs, ignore_merges=ignore_merges)
        return Tokenizer(rank_model, pattern=pattern, special_tokens=specials, name=name)
    except ValueError as error:  # two tokens with one id, an added token on a vocab id
        raise FormatError(f"{where}: {error}") from None


def _check_normalizer(normalizer, where):
    if normalizer is not None:
        kind = normalizer.get("type") if isinstance(normalizer, dict) else normalizer
        raise FormatError(
            f"{where}: field 'normalizer' is {kind!r}; bytepair reads byte-level BPE files with no normalizer (null)"
            + OWN_FOLDER_HINT
        )


def _check_decoder(decoder, where):
    if decoder is not None and not (isinstance(decoder, dict) and decoder.get("type") == "ByteLevel"):
        kind = decoder.get("type") if isinstance(decoder, dict) else decoder
        raise FormatError(f"{where}: field 'decoder' is {kind!r}; a byte-level BPE file decodes with 'ByteLevel'")


def _check_model(model, where):
    kind = model.get("type", "BPE" if "merges" in model else None)
    if kind != "BPE":
        raise FormatError(f"{where}: field 'model.type' is {kind!r}; bytepair reads BPE models only")
    if model.get("dropout") not in (None, 0, 0.0):
        raise FormatError(
            f"{where}: field 'model.dropout' is {model['dropout']!r}; dropout makes encoding random, use null"
        )
    for field in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(field) not in (None, ""):
            raise FormatError(f"{where}: field 'model.{field}' is {model[field]!r}; byte-level BPE uses none (null)")
    if _flag(model, "byte_fallback", False, where, "model"):
        raise FormatError(
            f"{where}: field 'model.byte_fallback' is true; that is character-level BPE, not byte-level"
            + OWN_FOLDER_HINT
        )


def read_pre_tokenizer(pre_tokenizer, where):
    """The pattern (a name or a regex, or None) that a byte-level ``pre_tokenizer`` means.

    Example:
        >>> read_pre_tokenizer({"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}, "x")
        'gpt2'
    """
    if not isinstance(pre_tokenizer, dict):
        raise FormatError(
            f"{where}: field 'pre_tokenizer' is {pre_tokenizer!r}; byte-level BPE needs a 'ByteLevel' pre-tokenizer"
            + OWN_FOLDER_HINT
        )
    kind = pre_tokenizer.get("type")
    if kind == "ByteLevel":
        return "gpt2" if _byte_level(pre_tokenizer, where) else None
    if kind == "Sequence":
        steps = pre_tokenizer.get("pretokenizers") or []
        if not isinstance(steps, list):
            raise FormatError(
                f"{where}: field 'pre_tokenizer.pretokenizers' is {str(steps)[:100]}, not a list of pre-tokenizers"
            )
        if len(steps) == 2 and isinstance(steps[0], dict) and steps[0].get("type") == "Split":
            last = steps[1]
            if isinstance(last, dict) and last.get("type") == "ByteLevel" and not _byte_level(last, where):
                return _split_pattern(steps[0], where)
        shown = [step.get("type") if isinstance(step, dict) else step for step in steps]
        raise FormatError(
            f"{where}: field 'pre_tokenizer' is Sequence{shown!r}; bytepair reads "
            "Sequence[Split, ByteLevel(use_regex=false)] or ByteLevel alone"
        )
    raise FormatError(
        f"{where}: field 'pre_tokenizer.type' is {kind!r}; byte-level BPE needs 'ByteLevel'" + OWN_FOLDER_HINT
    )


def _flag(step, field, default, where, what):
    """A true/false field; HF refuses any other value, and "false" or 0 must not read as true."""
    value = step.get(field, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise FormatError(f"{where}: field '{what}.{field}' is {value!r:.100}; it must be true or false")
    return value


def _byte_level(step, where):
    """Whether a ``ByteLevel`` step splits with GPT-2's regex; a prefix space is refused."""
    if _flag(step, "add_prefix_space", False, where, "ByteLevel"):
        raise FormatError(
            f"{where}: ByteLevel 'add_prefix_space' is true; bytepair encodes text exactly as given (use false)"
        )
    return _flag(step, "use_regex", True, where, "ByteLevel")


def _split_pattern(split, where):
    pattern = split.get("pattern")
    regex_text = pattern.get("Regex") if isinstance(pattern, dict) else None
    if not isinstance(regex_text, str):
        raise FormatError(f"{where}: Split 'pattern' is {str(pattern)[:100]}; bytepair reads {{'Regex': ...}} patterns")
    behaviour = (split.get("behavior"), _flag(split, "invert", False, where, "Split"))
    if not isinstance(behaviour[0], str) or behaviour not in KEEP_MATCHES:
        raise FormatError(
            f"{where}: Split behavior {behaviour[0]!r:.50} with invert={behaviour[1]} is not supported; "
            "use 'Isolated' (invert false) or 'Removed' (invert true)"
        )
    name = _NAMES_BY_HF_REGEX.get(regex_text)
    if name is None:
        try:
            # HF reads the regex with Oniguruma, bytepair with the regex module
            name, regex_text = resolve_pattern(from_hf_regex(regex_text))
        except (PatternError, FormatError) as error:
            raise FormatError(f"{where}: pre_tokenizer Split: {error}") from None
    if name is not None:
        return name
    if behaviour == ("Removed", True):
        # HF drops the text between matches, bytepair never drops text: only a regex whose
        # matches hold every character (as to_huggingface writes them) gives HF's ids
        inner = gaps_kept(regex_text)
        if inner is None:
            raise FormatError(
                f"{where}: Split behavior 'Removed' with invert=true drops the text that its regex "
                f"{split['pattern']['Regex'][:200]!r} does not match, and bytepair never drops text; if the "
                "regex matches every character, use behavior 'Isolated' with invert=false (the same pieces)"
            )
        return inner
    # subtle: Isolated keeps the text between matches as pieces too; a custom regex may not
    # match every character, so the gaps become matches of a second alternative.
    return keep_gaps(regex_text)


def read_added_tokens(added_tokens, where, *, count):
    """``added_tokens`` as special tokens ``{content: id}``; stripping options are refused.

    ``count`` is the number of tokens in the file (vocab and added); an id must be below
    ``count + ids.MAX_ID_GAP``, and neither negative nor a bool.
    """
    specials = {}
    for index, token in enumerate(added_tokens):
        if (
            not isinstance(token, dict)
            or not isinstance(token.get("content"), str)
            or not isinstance(token.get("id"), int)
        ):
            raise FormatError(
                f"{where}: added_tokens[{index}] is {str(token)[:200]}, not an object with 'id' and 'content'"
            )
        check_defined_id(
            token["id"],
            count=count,
            what=f"{where}: added_tokens[{index}] {token['content'][:50]!r}",
            error=FormatError,
        )
        if token["content"] in specials and specials[token["content"]] != token["id"]:
            raise FormatError(
                f"{where}: added token {token['content'][:50]!r} is listed twice, with ids "
                f"{specials[token['content']]} and {token['id']}; the file is corrupt"
            )
        for option in ("lstrip", "rstrip", "single_word"):
            if token.get(option):
                raise FormatError(
                    f"{where}: added token {token['content']!r} has {option!r} true; bytepair's special "
                    "tokens match exactly, without stripping"
                )
        specials[token["content"]] = token["id"]
    return specials


def read_vocab(vocab, specials, where):
    """The model's vocabulary as ``{bytes: id}``; entries that are added tokens are left out.

    Example:
        >>> read_vocab({"Ġa": 0}, {}, "x")
        {b' a': 0}
    """
    if not isinstance(vocab, dict):
        raise FormatError(f"{where}: field 'model.vocab' must map token strings to ids")
    check_defined_ids(
        vocab,
        count=len(vocab) + len(specials),
        what=lambda token: f"{where}: model.vocab entry {token[:50]!r}",
        error=FormatError,
    )
    special_ids = {token_id: token for token, token_id in specials.items()}
    result = {}
    for token, token_id in vocab.items():
        if token_id in special_ids:
            if special_ids[token_id] == token:
                continue  # an added token: HF matches it before the model, never by merging
            raise FormatError(
                f"{where}: id {token_id} is both {token!r} in the vocab and added token {special_ids[token_id]!r}"
            )
        value = readable_to_bytes(token, where, "vocab entry")
        if value in result:
            raise FormatError(f"{where}: vocab has {token!r} twice (ids {result[value]} and {token_id})")
        result[value] = token_id
    return result


def _check_all_bytes(vocab, where):
    missing = [b for b in range(256) if bytes([b]) not in vocab]
    if missing:
        raise FormatError(
            f"{where}: vocab lacks single-byte token(s) for byte(s) {missing[:8]!r}; a byte-level vocab needs all 256"
        )


def readable_to_bytes(token, where, what):
    """GPT-2's byte-to-unicode string -> bytes; ``"Ġa"`` -> ``b" a"``, a ``FormatError`` naming
    the file and entry otherwise."""
    try:
        return bytelevel.readable_to_bytes(token)
    except ValueError:
        raise FormatError(
            f"{where}: {what} {token!r} is not in GPT-2's byte-to-unicode alphabet; bytepair reads byte-level BPE only"
        ) from None


def read_merges(merges, vocab, where):
    """Merges as the pair table ``(left_id, right_id) -> (rank, merged_id)``, rank = line.

    ``vocab`` is the model's own ``{token string: id}`` (the strings the merges are written in).

    Example:
        >>> read_merges(["Ġ a"], {"Ġ": 0, "a": 1, "Ġa": 2}, "x")
        {(0, 1): (0, 2)}
    """
    if not isinstance(merges, list):
        raise FormatError(f"{where}: field 'model.merges' must be a list")
    if not merges:
        return {}  # a vocabulary of single bytes (and tokens only reached whole)
    try:
        return _pair_table(merges, vocab)
    except (KeyError, TypeError, ValueError):
        pass
    for rank, merge in enumerate(merges):
        _check_merge(merge, rank, vocab, where)
    # Each merge is fine on its own: what failed is their mix (strings and lists).
    raise FormatError(f"{where}: field 'model.merges' mixes 'a b' strings and [a, b] lists; use one form")


def _pair_table(merges, vocab):
    """The table built with C-level loops only (map, zip): 3x faster than a Python loop."""
    if all(type(merge) is str for merge in merges):
        halves = " ".join(merges).split(" ")
    elif all(type(merge) is list for merge in merges):
        halves = [half for merge in merges for half in merge]
    else:
        raise ValueError("merges mix strings and lists")
    lefts, rights = halves[0::2], halves[1::2]
    if len(halves) != 2 * len(merges) or not all(map(str.__len__, halves)):
        raise ValueError("a merge is not two non-empty halves")
    get = vocab.__getitem__
    merged_ids = list(map(get, map(str.__add__, lefts, rights)))
    pairs = zip(map(get, lefts), map(get, rights))
    # subtle: HF collects merges into a hash map, so a pair listed twice keeps its LAST
    # rank; dict() keeps the last value of a repeated key the same way.
    return dict(zip(pairs, zip(range(len(merges)), merged_ids)))


def _check_merge(merge, rank, vocab, where):
    parts = merge.split(" ") if isinstance(merge, str) else merge
    if not isinstance(parts, list) or len(parts) != 2 or not all(isinstance(p, str) and p for p in parts):
        raise FormatError(f"{where}: merge {rank} is {merge!r}, not 'a b' or ['a', 'b']")
    left, right = parts
    missing = [part for part in (left, right, left + right) if part not in vocab]
    if missing:
        raise FormatError(f"{where}: merge {rank} ({left!r}, {right!r}) uses {missing[0]!r}, which is not in the vocab")
