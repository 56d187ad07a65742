"""The production pipeline of seed 003, end to end through the public API.

normalize -> special tokens -> pre-tokenize -> BPE -> ids, and back: multilingual round trips with
every named pattern, tiktoken's special-token rules, NFC/NFKC, byte fallback in character mode,
patterns and normalization in the artifact and the fingerprint, and inspection from Python and
from the command line.

Oracles: ``bytepair.reference`` (vocabulary order, merge replay), tiktoken's own GPT-2 regex
(``tiktoken_ext.openai_public``), the regex in the real Llama 3 ``tokenizer.json``,
``unicodedata``, and facts derivable by hand (UTF-8 lengths, substrings of the training text).
"""

from __future__ import annotations

import ast
import bisect
import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import regex

import bytepair
from bytepair import reference
from datafiles import data_file

# Seed 003's training corpus and its five test texts (data, copied from the lesson).
SEED_CORPUS = (
    "The quick brown fox jumps over the lazy dog. "
    "The quick brown fox runs through the forest. "
    "Machine learning models process natural language. "
    "Deep learning transforms how we build software. "
    "def train(model, data): return model.fit(data) "
    "def predict(model, x): return model(x) "
)
SEED_TEXTS = [
    "The quick brown fox.",
    "你好世界",
    "Hello 🌍 World",
    "def foo(x): return x + 1",
    "<|begin|>Hello<|end|>",
]
SPECIALS = ["<|begin|>", "<|end|>"]
PATTERNS = ["gpt2", "cl100k", "gpt4", "o200k", "llama3", None]
SEED_MERGES = 50  # the lesson's num_merges


@pytest.fixture(scope="module")
def real_corpus():
    """About 50,000 characters of real text: English prose with code, plus Chinese."""
    english = data_file("english/python-3.11-docs.txt").read_text(encoding="utf-8")[:45_000]
    chinese = data_file("multilingual/udhr/cmn_hans.txt").read_text(encoding="utf-8")[:5_000]
    return [english, chinese]


CORPORA = {
    "seed": lambda request: (SEED_CORPUS, 256 + SEED_MERGES, 1),
    "real": lambda request: (request.getfixturevalue("real_corpus"), 512, 2),
}
CORPUS_NAMES = [pytest.param("real", marks=pytest.mark.data), "seed"]


@pytest.fixture(scope="module")
def trained():
    """``trained(corpus_name, pattern, request)``: byte-level tokenizers, trained once each."""
    cache = {}

    def get(corpus_name, pattern, request):
        if (corpus_name, pattern) not in cache:
            text, vocab_size, min_frequency = CORPORA[corpus_name](request)
            cache[corpus_name, pattern] = bytepair.train(
                text,
                mode="byte",
                vocab_size=vocab_size,
                min_frequency=min_frequency,
                pattern=pattern,
                special_tokens=SPECIALS,
            )
        return cache[corpus_name, pattern]

    return get


def learned_values(tok):
    """Token values in id order, from the reference (base, then each new merged value once)."""
    base = reference.BYTE_TOKENS if tok.mode == "byte" else list(tok.base_tokens)
    return reference.vocabulary(base, tok.merges)


def gpt2_regex():
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    return regex.compile(openai_public.r50k_pat_str)


def llama3_regex():
    tokenizer_json = json.loads(data_file("vocab/hf/llama3/tokenizer.json").read_text(encoding="utf-8"))
    split = tokenizer_json["pre_tokenizer"]["pretokenizers"][0]
    return regex.compile(split["pattern"]["Regex"])


# --- seed 003's multilingual round trip ---------------------------------------------------------


@pytest.mark.parametrize("corpus_name", CORPUS_NAMES)
@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p or "none")
def test_seed_texts_round_trip_with_every_pattern(trained, request, corpus_name, pattern):
    tok = trained(corpus_name, pattern, request)
    special_ids = set(tok.special_tokens.values())
    for text in SEED_TEXTS[:-1]:
        ids = tok.encode(text)
        assert tok.decode(ids) == text
        assert tok.decode_bytes(ids) == text.encode("utf-8")
        assert not special_ids & set(ids)
    marked = SEED_TEXTS[-1]
    ids = tok.encode(marked, allowed_special="all")
    assert tok.decode(ids) == marked
    assert ids[0] == tok.special_tokens["<|begin|>"] and ids[-1] == tok.special_tokens["<|end|>"]
    assert tok.decode(ids[1:-1]) == "Hello"
    assert not special_ids & set(ids[1:-1])


def test_seed_corpus_learns_the_lessons_fifty_merges(trained, request):
    tok = trained("seed", "gpt2", request)
    assert len(tok.merges) == SEED_MERGES
    # The lesson's tokenizer: 256 bytes + 50 merges, then its two special tokens.
    assert len(learned_values(tok)) <= 256 + SEED_MERGES
    assert tok.vocab_size == len(learned_values(tok)) + len(SPECIALS)


@pytest.mark.peers
@pytest.mark.parametrize("text", [*SEED_TEXTS[:-1], SEED_CORPUS[:120]])
def test_gpt2_encoding_equals_the_reference_replay_over_tiktokens_pieces(trained, request, text):
    tok = trained("seed", "gpt2", request)
    values = learned_values(tok)
    ids_of = {value: token_id for token_id, value in enumerate(values)}
    expected = []
    for piece in gpt2_regex().findall(text):
        symbols = [bytes([b]) for b in piece.encode("utf-8")]
        expected.extend(ids_of[v] for v in reference.encode_piece(symbols, tok.merges))
    assert tok.encode_ordinary(text) == expected


# --- special tokens -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def special_tok():
    return bytepair.train(SEED_CORPUS, mode="byte", vocab_size=300, pattern="gpt2", special_tokens=SPECIALS)


def test_disallowed_special_in_user_text_raises_naming_the_token(special_tok):
    with pytest.raises(ValueError, match=regex.escape("'<|end|>'")):
        special_tok.encode("user says <|end|> here")


def test_encode_ordinary_treats_special_strings_as_text(special_tok):
    text = "user says <|end|> here"
    ids = special_tok.encode_ordinary(text)
    assert special_tok.decode(ids) == text
    assert special_tok.special_tokens["<|end|>"] not in ids
    assert len(ids) > 1


def test_allowing_one_special_still_refuses_the_other(special_tok):
    text = "<|begin|>Hello<|end|>"
    with pytest.raises(ValueError) as caught:
        special_tok.encode(text, allowed_special={"<|end|>"})
    assert "'<|begin|>'" in str(caught.value)
    assert "'<|end|>'" not in str(caught.value).split("allowed_special")[0]


def test_allowed_special_gives_only_the_allowed_ids(special_tok):
    ids = special_tok.encode("Hello<|end|>", allowed_special={"<|end|>"})
    assert ids[-1] == special_tok.special_tokens["<|end|>"]
    assert special_tok.decode(ids) == "Hello<|end|>"


def test_disallowed_special_empty_encodes_specials_as_text(special_tok):
    text = "<|begin|>Hello<|end|>"
    ids = special_tok.encode(text, disallowed_special=())
    assert ids == special_tok.encode_ordinary(text)
    assert not set(special_tok.special_tokens.values()) & set(ids)
    assert special_tok.decode(ids) == text


def test_a_special_token_added_later_is_refused_by_default_too():
    tok = bytepair.train(SEED_CORPUS, mode="byte", vocab_size=300, pattern="gpt2")
    text = "user says <|later|> here"
    assert tok.encode(text) == tok.encode_ordinary(text)  # not special yet: ordinary text
    tok.add_special_tokens(["<|later|>"])
    with pytest.raises(ValueError, match=regex.escape("'<|later|>'")):
        tok.encode(text)
    ids = tok.encode(text, allowed_special="all")
    assert tok.special_tokens["<|later|>"] in ids
    assert tok.decode(ids) == text


def test_an_empty_set_of_allowed_specials_is_the_default(special_tok):
    with pytest.raises(ValueError, match=regex.escape("'<|end|>'")):
        special_tok.encode("a <|end|>", allowed_special=set())
    assert special_tok.encode("plain text", allowed_special=set()) == special_tok.encode_ordinary("plain text")


@pytest.mark.parametrize("normalization, pattern", [("NFKC", "gpt2"), (None, r"\w+|\s+|[^\w\s]+")])
def test_normalizing_and_regex_tokenizers_encode_through_their_own_steps(normalization, pattern):
    tok = bytepair.train(
        SEED_CORPUS,
        mode="byte",
        vocab_size=300,
        pattern=pattern,
        normalization=normalization,
        special_tokens=["<|end|>"],
    )
    text = "ﬁne ＡＢＣ, done"  # NFKC: "fine ABC, done"
    expected = tok.encode_ordinary(text, num_threads=1)  # the general path
    assert tok.encode_ordinary(text) == expected
    assert tok.encode(text) == expected
    if normalization:
        assert tok.decode(expected) == "fine ABC, done"
    with pytest.raises(ValueError, match=regex.escape("'<|end|>'")):
        tok.encode(text + "<|end|>")


def test_decoding_special_ids_gives_their_strings(special_tok):
    for token, token_id in special_tok.special_tokens.items():
        assert special_tok.decode([token_id]) == token
        assert special_tok.token_bytes(token_id) == token.encode("utf-8")


def test_special_ids_follow_the_learned_vocabulary_in_order_given(special_tok):
    learned = len(learned_values(special_tok))
    assert special_tok.special_tokens == {"<|begin|>": learned, "<|end|>": learned + 1}
    assert special_tok.vocab_size == learned + 2


def test_special_ids_survive_save_and_load(special_tok, tmp_path):
    path = tmp_path / "tok.json"
    special_tok.save(path)
    loaded = bytepair.Tokenizer.load(path)
    assert loaded.special_tokens == special_tok.special_tokens
    assert loaded.fingerprint == special_tok.fingerprint
    text = SEED_TEXTS[-1]
    assert loaded.encode(text, allowed_special="all") == special_tok.encode(text, allowed_special="all")
    assert json.loads(path.read_text(encoding="utf-8"))["special_tokens"] == special_tok.special_tokens


SEGMENTS = ["hello world", "goodbye moon", "hello moon"]
TEXT_FULL_OF_END = "<|end|>".join(SEGMENTS * 60) + "<|end|>"


def test_special_tokens_never_take_part_in_merges():
    tok = bytepair.train(TEXT_FULL_OF_END, mode="byte", vocab_size=330, special_tokens=["<|end|>"])
    learned = learned_values(tok)[256:]
    assert learned, "training should learn merges from the segments"
    for value in learned:
        # Cut at the special token, the training text is only the segments, so every merge
        # lies inside one of them: nothing of "<|end|>" and nothing across it.
        assert any(value in segment.encode("utf-8") for segment in SEGMENTS), value
        assert b"<|end|>" not in value


def test_without_the_special_the_same_text_merges_across_it():
    # The control for the test above: the text does invite merges through "<|end|>".
    tok = bytepair.train(TEXT_FULL_OF_END, mode="byte", vocab_size=330)
    learned = learned_values(tok)[256:]
    assert any(b"<|" in value or b"|>" in value for value in learned)


# --- normalization ------------------------------------------------------------------------------

COMPATIBILITY_TEXT = "ﬁ ｆｕｌｌ ²"


@pytest.mark.parametrize("mode", ["byte", "char"])
def test_nfkc_round_trip_gives_the_normalized_text(mode):
    options = {"base_text": "0123456789"} if mode == "char" else {}
    vocab_size = 300 if mode == "byte" else 80
    tok = bytepair.train(SEED_CORPUS, mode=mode, vocab_size=vocab_size, normalization="NFKC", **options)
    expected = unicodedata.normalize("NFKC", COMPATIBILITY_TEXT)
    assert expected != COMPATIBILITY_TEXT
    assert tok.decode(tok.encode(COMPATIBILITY_TEXT)) == expected == "fi full 2"


def test_nfc_is_stable_and_composes():
    tok = bytepair.train(SEED_CORPUS, mode="byte", vocab_size=300, normalization="NFC")
    composed = "café naïve Ångström 你好"
    assert unicodedata.is_normalized("NFC", composed)
    assert tok.decode(tok.encode(composed)) == composed
    decomposed = unicodedata.normalize("NFD", composed)
    assert decomposed != composed
    assert tok.decode(tok.encode(decomposed)) == composed
    assert tok.encode(decomposed) == tok.encode(composed)


def test_no_normalization_keeps_text_exactly():
    tok = bytepair.train(SEED_CORPUS, mode="byte", vocab_size=300)
    for text in (COMPATIBILITY_TEXT, unicodedata.normalize("NFD", "café")):
        assert tok.decode(tok.encode(text)) == text


def test_normalization_is_stored_and_enters_the_fingerprint(tmp_path):
    # ASCII training text: the three normalizations learn the very same merges.
    tokenizers = {
        form: bytepair.train(SEED_CORPUS, mode="byte", vocab_size=300, pattern="gpt2", normalization=form)
        for form in (None, "NFC", "NFKC")
    }
    merges = {form: tok.merges for form, tok in tokenizers.items()}
    assert merges[None] == merges["NFC"] == merges["NFKC"]
    fingerprints = {tok.fingerprint for tok in tokenizers.values()}
    assert len(fingerprints) == 3
    path = tmp_path / "nfkc.json"
    tokenizers["NFKC"].save(path)
    assert json.loads(path.read_text(encoding="utf-8"))["normalization"] == "NFKC"
    loaded = bytepair.Tokenizer.load(path)
    assert loaded.normalization == "NFKC"
    assert loaded.fingerprint == tokenizers["NFKC"].fingerprint
    assert loaded.decode(loaded.encode(COMPATIBILITY_TEXT)) == "fi full 2"


# --- byte fallback in character mode ------------------------------------------------------------

UNSEEN_TEXT = "The fox said 你好 🌍 in a café, 你好!"
UNSEEN_CHARACTERS = sorted(set(UNSEEN_TEXT) - set(SEED_CORPUS))


def test_unseen_text_really_has_unseen_characters():
    assert UNSEEN_CHARACTERS == sorted(["你", "好", "🌍", "é", "!"])


def test_byte_fallback_encodes_unknown_characters_as_bytes_and_decodes_exactly():
    tok = bytepair.train(SEED_CORPUS, mode="char", vocab_size=80, byte_fallback=True)
    assert tok.decode(tok.encode(UNSEEN_TEXT)) == UNSEEN_TEXT
    learned = len(learned_values(tok))
    for character in UNSEEN_CHARACTERS:
        ids = tok.encode(character)
        # One token per UTF-8 byte, each a fallback id beyond the learned vocabulary.
        assert len(ids) == len(character.encode("utf-8"))
        assert all(token_id >= learned for token_id in ids)
        assert [tok.token_bytes(i) for i in ids] == [bytes([b]) for b in character.encode("utf-8")]


def test_byte_fallback_is_stored_and_survives_save_and_load(tmp_path):
    tok = bytepair.train(SEED_CORPUS, mode="char", vocab_size=80, byte_fallback=True)
    path = tmp_path / "fallback.json"
    tok.save(path)
    loaded = bytepair.Tokenizer.load(path)
    assert loaded.encode(UNSEEN_TEXT) == tok.encode(UNSEEN_TEXT)
    assert loaded.fingerprint == tok.fingerprint
    plain = bytepair.train(SEED_CORPUS, mode="char", vocab_size=80)
    assert plain.merges == tok.merges and plain.fingerprint != tok.fingerprint


def test_without_fallback_unknown_characters_are_listed_once_each_sorted():
    tok = bytepair.train(SEED_CORPUS, mode="char", vocab_size=80)
    with pytest.raises(ValueError) as caught:
        tok.encode(UNSEEN_TEXT * 3)
    message = str(caught.value)
    positions = []
    for character in UNSEEN_CHARACTERS:
        assert message.count(repr(character)) == 1, (character, message)
        positions.append(message.index(repr(character)))
    assert positions == sorted(positions)


# --- patterns -----------------------------------------------------------------------------------


@pytest.mark.peers
def test_pattern_is_stored_in_the_artifact(tmp_path, trained, request):
    tok = trained("seed", "gpt2", request)
    path = tmp_path / "gpt2.json"
    tok.save(path)
    stored = json.loads(path.read_text(encoding="utf-8"))["pattern"]
    assert stored["regex"] == gpt2_regex().pattern
    loaded = bytepair.Tokenizer.load(path)
    assert loaded.encode_ordinary(SEED_CORPUS) == tok.encode_ordinary(SEED_CORPUS)


def test_pattern_enters_the_fingerprint(trained, request):
    merges = trained("seed", None, request).merges
    fingerprints = {
        bytepair.Tokenizer(mode="byte", merges=merges, pattern=pattern).fingerprint
        for pattern in ("gpt2", "cl100k", "o200k", "llama3", None)
    }
    assert len(fingerprints) == 5


def piece_boundaries(text, splitter):
    """Byte offsets where the pre-tokenizer's pieces start (the pieces cover the whole text)."""
    pieces = splitter.findall(text)
    assert "".join(pieces) == text
    offsets, position = [], 0
    for piece in pieces:
        offsets.append(position)
        position += len(piece.encode("utf-8"))
    return offsets


def assert_tokens_inside_pieces(tok, text, splitter):
    boundaries = piece_boundaries(text, splitter)
    position = 0
    for token_id in tok.encode_ordinary(text):
        end = position + len(tok.token_bytes(token_id))
        # No piece starts strictly inside this token's byte span.
        inside = bisect.bisect_right(boundaries, position)
        assert inside == len(boundaries) or boundaries[inside] >= end, (position, end, text[:80])
        position = end
    assert position == len(text.encode("utf-8"))


@pytest.mark.peers
@pytest.mark.parametrize("corpus_name", CORPUS_NAMES)
def test_gpt2_training_never_merges_across_pieces(trained, request, corpus_name):
    tok = trained(corpus_name, "gpt2", request)
    text, _, _ = CORPORA[corpus_name](request)
    for document in [text] if isinstance(text, str) else text:
        assert_tokens_inside_pieces(tok, document, gpt2_regex())


@pytest.mark.data
def test_llama3_training_never_merges_across_pieces(trained, request, real_corpus):
    splitter = llama3_regex()
    tok = trained("real", "llama3", request)
    for document in real_corpus:
        assert_tokens_inside_pieces(tok, document, splitter)


def test_without_a_pattern_merges_do_cross_word_boundaries(trained, request):
    # The control: GPT-2's pieces only carry a space at their start (or are all spaces), so a
    # token with a space after other bytes ("e ", "The q") can only come from unsplit text.
    def crosses_a_word(value):
        return b" " in value.lstrip(b" ")

    assert any(crosses_a_word(v) for v in learned_values(trained("seed", None, request))[256:])
    assert not any(crosses_a_word(v) for v in learned_values(trained("seed", "gpt2", request))[256:])


# --- inspection ---------------------------------------------------------------------------------


def test_token_bytes_of_base_merged_and_special_ids(special_tok):
    tok = special_tok
    for b in (0, 32, 65, 0xE4, 255):
        assert tok.token_bytes(b) == bytes([b])
    values = learned_values(tok)
    for token_id in range(256, len(values)):
        assert tok.token_bytes(token_id) == values[token_id]
    first_left, first_right = tok.merges[0]
    assert tok.token_bytes(256) == first_left + first_right
    assert tok.token_bytes(tok.special_tokens["<|end|>"]) == b"<|end|>"


def run_cli(*arguments, cwd):
    """``python -m bytepair ...`` with the same bytepair this test imported."""
    package_root = str(Path(bytepair.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "bytepair", *arguments],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )


def test_cli_inspect_vocab_lists_every_token(special_tok, tmp_path):
    path = tmp_path / "tok.json"
    special_tok.save(path)
    result = run_cli("inspect", "--vocab", str(path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = {}
    for line in result.stdout.splitlines():
        fields = line.split("\t")
        rows[int(fields[0])] = fields
    values = learned_values(special_tok)
    expected = {token_id: value for token_id, value in enumerate(values)}
    expected.update({i: t.encode("utf-8") for t, i in special_tok.special_tokens.items()})
    assert sorted(rows) == sorted(expected)
    for token_id, value in expected.items():
        assert rows[token_id][1] == value.hex()
    for token_id in special_tok.special_tokens.values():
        assert "special" in rows[token_id][3:]


@pytest.mark.parametrize(
    "text, arguments",
    [("The quick brown fox.", ()), ("<|begin|>Hello world<|end|>", ("--allowed-special", "all"))],
)
def test_cli_encode_pieces_shows_each_id_with_its_text(special_tok, tmp_path, text, arguments):
    path = tmp_path / "tok.json"
    special_tok.save(path)
    source = tmp_path / "input.txt"
    source.write_text(text, encoding="utf-8")
    result = run_cli("encode", str(source), "-t", str(path), "--pieces", *arguments, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = [line.split(None, 1) for line in result.stdout.splitlines() if line.strip()]
    ids = [int(token_id) for token_id, _ in rows]
    pieces = [ast.literal_eval(piece) for _, piece in rows]
    assert ids == special_tok.encode(text, allowed_special="all" if arguments else frozenset())
    # ASCII text: every piece is whole characters, so the pieces spell the text.
    assert "".join(pieces) == text
    assert pieces == [special_tok.token_bytes(i).decode("utf-8") for i in ids]


def test_cli_encode_refuses_a_disallowed_special_with_a_clear_error(special_tok, tmp_path):
    path = tmp_path / "tok.json"
    special_tok.save(path)
    source = tmp_path / "input.txt"
    source.write_text("Hello<|end|>", encoding="utf-8")
    result = run_cli("encode", "-t", str(path), str(source), cwd=tmp_path)
    assert result.returncode != 0
    assert "'<|end|>'" in result.stderr
    assert "Traceback" not in result.stderr
