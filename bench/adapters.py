"""The adapters that put every library on the same corpus, vocabulary size and pattern, for
``bench/run.py``. Benchmark tooling: not part of the installed package.

- training: ``train_bytepair``, ``train_rustbpe``, ``train_hf``, ``train_sentencepiece``, each
  on a list of documents, byte-level, with the same pre-tokenization pattern (sentencepiece has
  no pattern: it splits on whitespace only);
- encoding: ``tiktoken_encoding`` and ``hf_tokenizer`` build tiktoken's and HF tokenizers'
  tokenizer from one vocabulary; a published vocabulary such as cl100k_base loads into
  bytepair (``bytepair.load``), tiktoken and HF from one ``.tiktoken`` file
  (``published_tokenizers``); ``encoders_for`` builds bytepair's own trained vocabulary in every
  library; ``splitters`` run pre-tokenization alone, to time the scanner;
- ``encode_one`` / ``encode_many``: one call, or the batch API, through each library's fastest
  plain API.

The peers are imported only when used; none of them is a dependency of bytepair.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os

from bytepair import reference

# GPT-2's reversible map from bytes to printable characters (HF's ByteLevel alphabet).
from bytepair.bytelevel import bytes_to_readable, readable_to_bytes
from bytepair.formats.hf_regex import hf_regex

# {library: (module, distribution)}: the name a row shows, what to import, what pip installs.
PEERS = {
    "tiktoken": ("tiktoken", "tiktoken"),
    "tokenizers": ("tokenizers", "tokenizers"),
    "rustbpe": ("rustbpe", "rustbpe"),
    "sentencepiece": ("sentencepiece", "sentencepiece"),
    "quicktok": ("quicktok", "quicktok-v1"),
    "bpe-openai": ("bpe_openai", "bpe-openai"),
}
# Distributions whose module name another, unrelated package also uses ("quicktok" on PyPI is
# not quicktok-v1): these count as installed only when that distribution is.
_EXACT_DISTRIBUTION = {"quicktok", "bpe-openai"}


def installed_peers():
    """{library: version} of the peer libraries that can be imported here.

    Example:
        >>> sorted(installed_peers())  # doctest: +SKIP
        ['bpe-openai', 'quicktok', 'rustbpe', 'sentencepiece', 'tiktoken', 'tokenizers']
    """
    found = {}
    for library, (module, distribution) in PEERS.items():
        if importlib.util.find_spec(module) is not None:
            try:
                found[library] = importlib.metadata.version(distribution)
            except importlib.metadata.PackageNotFoundError:
                if library not in _EXACT_DISTRIBUTION:
                    found[library] = "?"
    return found


class Unavailable:
    """A peer that cannot load a given vocabulary: its rows say ``reason`` instead of a time.

    Example:
        >>> Unavailable("cannot load r50k_base").reason
        'cannot load r50k_base'
    """

    def __init__(self, reason):
        self.reason = reason

    def __repr__(self):
        return f"Unavailable({self.reason!r})"


def pattern_regex(pattern):
    """The regex string of a pattern name ("cl100k", "gpt2", ...) or of a custom regex."""
    from bytepair.patterns import resolve_pattern

    return resolve_pattern(pattern)[1]


def line_blocks(text, max_chars=1 << 16):
    """``text`` cut into documents of whole lines, each at most ``max_chars`` characters
    (a longer line stays whole), so every library gets the same list of strings.

    Example:
        >>> line_blocks("ab\\ncd\\nef\\n", max_chars=6)
        ['ab\\ncd\\n', 'ef\\n']
    """
    blocks, current, size = [], [], 0
    for line in text.splitlines(keepends=True):
        if current and size + len(line) > max_chars:
            blocks.append("".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line)
    if current:
        blocks.append("".join(current))
    return blocks


# -- training ---------------------------------------------------------------------------------


def train_bytepair(documents, vocab_size, pattern, min_frequency=2):
    """bytepair's byte-level trainer on a list of documents; returns the ``Tokenizer``."""
    from bytepair import train

    return train(
        documents,
        mode="byte",
        vocab_size=vocab_size,
        pattern=pattern,
        min_frequency=min_frequency,
        progress=False,
    )


def train_rustbpe(documents, vocab_size, pattern):
    """rustbpe's trainer (GPT-4 style, parallel counting); returns the ``rustbpe.Tokenizer``.

    NOTE: rustbpe has no minimum frequency; it merges until ``vocab_size`` or no pair is left.
    """
    import rustbpe

    tokenizer = rustbpe.Tokenizer()
    tokenizer.train_from_iterator(iter(documents), vocab_size, pattern=pattern_regex(pattern))
    return tokenizer


def onig_regex(regex):
    """``regex`` rewritten so that HF tokenizers' engine (Oniguruma, Ruby syntax) splits text
    as tiktoken and bytepair do: ``formats.hf_regex``, the one translation bytepair has.

    Example:
        >>> onig_regex("a{1,3}+|b")
        '(?>a{1,3})|b'
    """
    return hf_regex(regex)


def hf_pre_tokenizer(pattern):
    """HF's equivalent of a bytepair pattern: split with the regex, then map bytes to GPT-2's
    byte-level alphabet (no prefix space, no second regex)."""
    from tokenizers import Regex, pre_tokenizers

    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(onig_regex(pattern_regex(pattern))), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )


def train_hf(documents, vocab_size, pattern, min_frequency=2):
    """HF tokenizers' ``BpeTrainer`` with a byte-level alphabet; returns the ``Tokenizer``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = hf_pre_tokenizer(pattern)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
    )
    tokenizer.train_from_iterator(documents, trainer=trainer)
    return tokenizer


def train_sentencepiece(documents, vocab_size):
    """sentencepiece's BPE trainer with byte fallback, fed one line at a time; returns the
    ``SentencePieceProcessor``.

    NOTE: sentencepiece has no pre-tokenization regex (it splits on whitespace and marks word
    starts with U+2581), counts 3 control tokens and 256 byte tokens in ``vocab_size``, and
    skips lines longer than 4,192 bytes (its ``max_sentence_length``).
    """
    import io

    import sentencepiece

    model = io.BytesIO()
    lines = (line for document in documents for line in document.splitlines() if line.strip())
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=lines,
        model_writer=model,
        model_type="bpe",
        vocab_size=vocab_size,
        byte_fallback=True,
        hard_vocab_limit=False,
        num_threads=os.cpu_count() or 1,
        minloglevel=2,
    )
    return sentencepiece.SentencePieceProcessor(model_proto=model.getvalue())


def learned_bytes(model):
    """The byte values of a trained byte-level model's vocabulary (bytepair, rustbpe or HF),
    to compare what two trainers learned."""
    if hasattr(model, "token_bytes"):  # bytepair
        return {model.token_bytes(i) for i in range(model.vocab_size)}
    if hasattr(model, "get_mergeable_ranks"):  # rustbpe
        return {value for value, _ in model.get_mergeable_ranks()}
    if hasattr(model, "get_vocab"):  # HF tokenizers, byte-level alphabet
        return {readable_to_bytes(token) for token in model.get_vocab()}
    raise TypeError(f"no byte vocabulary for a {type(model).__name__}")


def vocab_reached(model):
    """How many tokens a trained model of any of the libraries has."""
    for name in ("vocab_size", "get_vocab_size", "get_piece_size"):
        value = getattr(model, name, None)
        if value is not None:
            return value() if callable(value) else value
    raise TypeError(f"no vocabulary size for a {type(model).__name__}")


# -- one vocabulary in every library ----------------------------------------------------------


def _hf_string(value):
    return bytes_to_readable(value)


def token_ranks(tokenizer):
    """{token bytes: id} of a byte-level bytepair tokenizer's learned tokens (no specials)."""
    special = set(tokenizer.special_tokens.values())
    return {tokenizer.token_bytes(i): i for i in range(tokenizer.vocab_size) if i not in special}


def tiktoken_encoding(ranks, pattern, name="bytepair", special_tokens=None):
    """A ``tiktoken.Encoding`` over ``ranks`` ({token bytes: rank}) with the same pattern."""
    import tiktoken

    return tiktoken.Encoding(
        name, pat_str=pattern_regex(pattern), mergeable_ranks=ranks, special_tokens=dict(special_tokens or {})
    )


def all_splits(ranks):
    """Every split of every token into two tokens (``reference.tiktoken_pair_ranks``), ordered
    by the rank of the whole token, then of its halves.

    This is tiktoken's rule written as merges: merging the adjacent pair whose concatenation
    has the lowest rank is lowest-merge-first over this list.

    Example:
        >>> all_splits({b"a": 0, b"b": 1, b"ab": 2, b"aab": 3, b"aa": 4})
        [(b'a', b'b'), (b'a', b'ab'), (b'aa', b'b'), (b'a', b'a')]
    """
    pairs = reference.tiktoken_pair_ranks(ranks)
    return sorted(pairs, key=lambda pair: (pairs[pair], ranks[pair[0]], ranks[pair[1]]))


def hf_tokenizer(ranks, merges, pattern, *, ignore_merges):
    """An HF tokenizers ``Tokenizer`` over a byte-level vocabulary.

    ``ranks``: {token bytes: id}; ``merges``: (left bytes, right bytes) in priority order.
    ``ignore_merges=True`` looks a whole piece up first (tiktoken's rule, with ``all_splits``).
    """
    from tokenizers import Tokenizer, decoders, models

    model = models.BPE(
        vocab={_hf_string(value): i for value, i in ranks.items()},
        merges=[(_hf_string(left), _hf_string(right)) for left, right in merges],
        ignore_merges=ignore_merges,
    )
    tokenizer = Tokenizer(model)
    tokenizer.pre_tokenizer = hf_pre_tokenizer(pattern)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def hf_from_bytepair(tokenizer):
    """HF tokenizers over a trained bytepair tokenizer: same vocabulary, same merges in order
    (lowest merge rank first, which is bytepair's replay rule)."""
    return hf_tokenizer(token_ranks(tokenizer), tokenizer.merges, tokenizer.pattern, ignore_merges=False)


def read_tiktoken_file(path):
    """{token bytes: rank} from a ``.tiktoken`` file (base64 token, space, rank, per line)."""
    from bytepair.formats.tiktoken_files import read_ranks

    with open(path, "rb") as file:
        return read_ranks(file.read(), str(path))


def bytepair_from_ranks(ranks, pattern, special_tokens=None, name=None):
    """A bytepair tokenizer that follows tiktoken's rule over ``ranks`` ({token bytes: id})."""
    from bytepair.formats.tiktoken_files import tokenizer_from_ranks

    return tokenizer_from_ranks(ranks, pattern=pattern, special_tokens=special_tokens or {}, name=name)


# quicktok compiles each pre-tokenization grammar by hand: {bytepair pattern name: its scanner}.
QUICKTOK_SCANNERS = {"cl100k": "cl100k", "o200k": "o200k"}


def quicktok_tokenizer(ranks, pattern, special_tokens=None):
    """quicktok over ``ranks`` ({token bytes: rank}), written to its own file format in a
    temporary folder (its importer's ``write_files``) and loaded from there; an
    ``Unavailable`` when quicktok has no scanner for ``pattern``."""
    import tempfile

    import quicktok

    if pattern not in QUICKTOK_SCANNERS:
        return Unavailable(f"cannot load: no {pattern} scanner")
    with tempfile.TemporaryDirectory() as folder:
        write_quicktok_files(folder, ranks, pattern, special_tokens)
        return quicktok.Tokenizer("bench", folder)  # reads every file now


def write_quicktok_files(folder, ranks, pattern, special_tokens=None):
    """quicktok's files for ``ranks`` in ``folder``, as the encoding "bench"."""
    import quicktok
    from quicktok import _import_core

    scanner = QUICKTOK_SCANNERS[pattern]
    _import_core.write_files(folder, "bench", ranks, dict(special_tokens or {}), scanner, False)
    _import_core.ensure_tables(folder, os.path.join(os.path.dirname(quicktok.__file__), "data"), scanner, False)


class BpeOpenAI:
    """bpe-openai's Rust tokenizer for a vocabulary it ships (it loads no file): ``encode_ordinary``
    and ``decode`` call its binding directly, as its own ``Encoding`` does, without the
    ``Encoding``'s refusal of texts of 1,000,000 characters or more; ``decode`` falls back to
    the ``Encoding`` (bytes joined in Python, ``errors="replace"``) where the binding refuses
    ids whose bytes are not UTF-8. The batch API is the ``Encoding``'s (a thread pool)."""

    def __init__(self, name):
        import bpe_openai
        from bpe_openai import _bindings

        self.binding = _bindings.tokenizer_for_encoding(name)
        self.encoding = bpe_openai.get_encoding(name)

    def encode_ordinary(self, text):
        return self.binding.encode(text)

    def encode_ordinary_batch(self, texts, num_threads):
        return self.encoding.encode_ordinary_batch(texts, num_threads=num_threads)

    def decode(self, ids):
        try:
            return self.binding.decode(ids)
        except ValueError:  # bytes that are not UTF-8: tiktoken's rule, replacement characters
            return self.encoding.decode(ids)


def bpe_openai_tokenizer(name):
    """bpe-openai's own copy of the published vocabulary ``name``, or an ``Unavailable``."""
    from bpe_openai import _bindings

    if name not in _bindings.supported_encodings():
        return Unavailable(f"cannot load: ships no {name}")
    return BpeOpenAI(name)


def published_tokenizers(name, path):
    """A published tiktoken encoding ("r50k_base", "cl100k_base", "o200k_base") from one
    ``.tiktoken`` file in every installed library: {library: tokenizer or ``Unavailable``}, all
    with the encoding's own pattern and special tokens.

    NOTE: bpe-openai cannot load a file: it gets its own copy of the vocabulary, and the ids it
    gives are checked against bytepair's like every peer's.
    """
    from bytepair import load
    from bytepair.formats.tiktoken_files import ENCODINGS

    encoding = ENCODINGS[name]
    ranks = read_tiktoken_file(path)
    found = {"bytepair": load(name, path=path)}
    peers = installed_peers()
    if "tiktoken" in peers:
        found["tiktoken"] = tiktoken_encoding(ranks, encoding.pattern, name, encoding.special_tokens)
    if "tokenizers" in peers:
        found["tokenizers"] = hf_tokenizer(ranks, all_splits(ranks), encoding.pattern, ignore_merges=True)
    if "quicktok" in peers:
        found["quicktok"] = quicktok_tokenizer(ranks, encoding.pattern, encoding.special_tokens)
    if "bpe-openai" in peers:
        found["bpe-openai"] = bpe_openai_tokenizer(name)
    return found


def splitters(pattern):
    """{library: function(text) -> piece lengths in characters} for a named pattern: bytepair's
    compiled scanner, the ``regex`` module (the oracle, ``bytepair.patterns.split``), and HF's
    ``Split`` pre-tokenizer when installed."""
    from bytepair import Tokenizer
    from bytepair.patterns import split

    scanner = Tokenizer(mode="byte", pattern=pattern)
    found = {
        "bytepair scanner": lambda text: [len(p) for p in scanner.split(text)],
        "regex module": lambda text: [len(p) for p in split(text, pattern)],
    }
    if "tokenizers" in installed_peers():
        from tokenizers import Regex, pre_tokenizers

        hf_split = pre_tokenizers.Split(Regex(onig_regex(pattern_regex(pattern))), behavior="isolated")
        found["tokenizers Split"] = lambda text: [end - start for _, (start, end) in hf_split.pre_tokenize_str(text)]
    return found


# -- encoding, one call per library -----------------------------------------------------------


def encode_one(library, tokenizer, text):
    """Ids of ``text`` in one call on one thread, through each library's fastest plain API."""
    if library == "tokenizers":
        return tokenizer.encode(text, add_special_tokens=False).ids
    return tokenizer.encode_ordinary(text)


def encode_many(library, tokenizer, texts, threads):
    """Ids of each text, through each library's batch API on ``threads`` threads.

    NOTE: HF tokenizers takes its thread count from the environment (``RAYON_NUM_THREADS``,
    ``TOKENIZERS_PARALLELISM``) before its first parallel call; the caller sets it. quicktok's
    batch API returns every text's ids in one flat array (the same ids in the same order: its
    digest equals that of the lists).
    """
    if library == "bytepair":  # special-token strings as text, as tiktoken's ordinary batch
        return tokenizer.encode_batch(texts, num_threads=threads, disallowed_special=())
    if library == "bytepair arrays":  # one flat array and offsets, as quicktok's batch
        ids, _offsets = tokenizer.encode_batch_to_array(
            texts, num_threads=threads, dtype="uint32", disallowed_special=()
        )
        return ids
    if library == "tiktoken":
        return tokenizer.encode_ordinary_batch(texts, num_threads=threads)
    if library == "tokenizers":
        fast = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)
        return [encoding.ids for encoding in fast(texts, add_special_tokens=False)]
    if library == "quicktok":  # one flat uint32 array and the offsets of each text's ids
        ids, _offsets = tokenizer.encode_batch(texts, threads)
        return ids
    if library == "bpe-openai":
        return tokenizer.encode_ordinary_batch(texts, threads)
    raise ValueError(f"unknown library {library!r}")


def decode_ids(library, tokenizer, ids):
    """The text of ``ids`` (a list or a numpy array) through each library's plain API.

    bytepair takes a numpy array as it is; the peers take sequences of Python ints, so an array
    is first made a list (``tolist``, the fastest way there, and timed with
    the call): tiktoken reads an array item by item at a fifth of its list speed. HF's decode
    keeps special tokens, as the others do.
    """
    if library == "bytepair":
        return tokenizer.decode(ids)
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    if library in ("tiktoken", "quicktok", "bpe-openai"):
        return tokenizer.decode(ids)
    if library == "tokenizers":
        return tokenizer.decode(ids, skip_special_tokens=False)
    raise ValueError(f"unknown library {library!r}")


# -- running --------------------------------------------------------------------------------


def warm_up(patterns, peers):
    """Import every peer and build one small bytepair tokenizer per pattern, so that no timed
    call pays for an import or for the engine's one-time set-up (the scanner's character
    tables, about 0.2 s per process)."""
    from bytepair import Tokenizer

    for library in peers:
        importlib.import_module(PEERS[library][0])
    for pattern in patterns:
        Tokenizer(mode="byte", pattern=pattern).encode_ordinary("warm up")


def encoders_for(tokenizer, peers):
    """{label: (library, encoder, label of the bytepair row it must equal)} for a trained
    byte-level tokenizer: bytepair itself, bytepair under tiktoken's rule over the same
    vocabulary (what tiktoken computes), tiktoken, HF tokenizers over the same merges, and
    quicktok over the same ranks where it has a scanner for the pattern."""
    encoders = {"bytepair": ("bytepair", tokenizer, None)}
    if "tiktoken" in peers:
        ranks = token_ranks(tokenizer)
        encoders["bytepair, tiktoken rule"] = (
            "bytepair",
            bytepair_from_ranks(ranks, tokenizer.pattern_name or tokenizer.pattern),
            None,
        )
        encoders["tiktoken"] = ("tiktoken", tiktoken_encoding(ranks, tokenizer.pattern), "bytepair, tiktoken rule")
    if "tokenizers" in peers:
        encoders["tokenizers"] = ("tokenizers", hf_from_bytepair(tokenizer), "bytepair")
    if "quicktok" in peers and (tokenizer.pattern_name or "") in QUICKTOK_SCANNERS:
        quicktok = quicktok_tokenizer(token_ranks(tokenizer), tokenizer.pattern_name)
        encoders["quicktok"] = ("quicktok", quicktok, "bytepair, tiktoken rule")
    return encoders


def format_table(header, rows):
    """Lines of a plain, right-aligned text table (first column left-aligned).

    Example:
        >>> format_table(["a", "bb"], [["x", "1"]])
        ['a  bb', 'x   1']
    """
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = []
    for row in [header, *rows]:
        cells = [str(row[0]).ljust(widths[0])] + [str(c).rjust(w) for c, w in zip(row[1:], widths[1:])]
        lines.append("  ".join(cells).rstrip())
    return lines
