"""Mistral's vocabularies give their own libraries' ids: SentencePiece BPE ``.model`` files
against ``sentencepiece``, the tekken file against a ``tiktoken.Encoding`` built as
``mistral_common``'s ``Tekkenizer`` builds it (first ``default_vocab_size - k`` ranks, the
file's pattern, ids shifted by ``k`` special tokens), and ``Tekkenizer`` itself when
``mistral_common`` is installed (the test extra has it).

Files: ``$BYTEPAIR_DATA/vocab/mistral/``. Texts: WikiText-2 validation, the Python docs and the
UDHR in 460 languages (a slice in the data tier, whole in ``slow``).
"""

from __future__ import annotations

import base64
import copy
import json

import pytest

import bytepair
from bytepair.errors import FormatError
from datafiles import data_file

spm = pytest.importorskip("sentencepiece")
tiktoken = pytest.importorskip("tiktoken")

pytestmark = [pytest.mark.peers, pytest.mark.data]

SP_MODELS = ["tokenizer.model.v1", "mistral_instruct_tokenizer_240323.model.v3"]
NAMED_STRINGS = {
    "empty": "",
    "one space": " ",
    "hello": "Hello world",
    "leading spaces": "   indented  twice   ",
    "newlines and tabs": "a\nb\r\n\tc\n\n\n  d",
    "cjk": "人人生而自由，在尊严和权利上一律平等。",
    "emoji": "hi 😀😀 👍🏽 👨‍👩‍👧 ok",
    "rare script": "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ ᐃᓄᒃᑎᑐᑦ",
    "code": "def f(x):\n    return x**2  # square\n\n\nprint(f(3))\r\n",
    "control look-alikes": "[INST] <s> </s> [REFERENCE_DOC_1] [/INST]",
    "digits": "1 12 123 1234 3.14159 ١٢٣",
    "long run": "a" * 3000 + " " * 500 + "▁▁x",
}


@pytest.fixture(scope="module", params=SP_MODELS)
def sp_pair(request):
    path = data_file("vocab", "mistral", request.param)
    return bytepair.load(path), spm.SentencePieceProcessor(model_file=str(path))


@pytest.fixture(scope="module")
def tekken_pair():
    path = data_file("vocab", "mistral", "tekken_240911.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    config = data["config"]
    k = config["default_num_special_tokens"]
    inner = config["default_vocab_size"] - k
    ranks = {base64.b64decode(entry["token_bytes"]): entry["rank"] for entry in data["vocab"][:inner]}
    encoding = tiktoken.Encoding("tekken", pat_str=config["pattern"], mergeable_ranks=ranks, special_tokens={})
    return bytepair.load("tekken", path=path), encoding, k


def tekken_ids(encoding, k, text):
    return [i + k for i in encoding.encode_ordinary(text)]


def corpus_texts(which, limit=None):
    if which == "udhr":
        files = sorted(data_file("multilingual", "udhr").glob("*.txt"))
        return [(f.stem, f.read_text(encoding="utf-8")[:limit]) for f in files]
    path = {"wikitext": ("wikitext-2", "valid.txt"), "pydocs": ("english", "python-3.11-docs.txt")}[which]
    return [(which, data_file(*path).read_text(encoding="utf-8")[:limit])]


# -- SentencePiece .model files -------------------------------------------------------------


@pytest.mark.parametrize("name", list(NAMED_STRINGS))
def test_sentencepiece_named_strings(sp_pair, name):
    tok, sp = sp_pair
    text = NAMED_STRINGS[name]
    ids = tok.encode_ordinary(text)
    assert ids == sp.encode(text)
    assert tok.decode(ids) == sp.decode(ids)
    assert tok.model.reference.encode(text) == ids  # the oracle agrees with the engine path


def test_sentencepiece_wikitext_slice(sp_pair):
    tok, sp = sp_pair
    ((_, text),) = corpus_texts("wikitext", 200_000)
    ids = tok.encode_ordinary(text)
    assert ids == sp.encode(text)
    assert tok.decode(ids) == sp.decode(ids)
    lines = text.splitlines()[:300]
    assert tok.encode_batch(lines, num_threads=2) == sp.encode(lines)


def test_sentencepiece_batch_arrays_and_corpus_shards_hold_sentencepieces_ids(sp_pair, tmp_path):
    from bytepair.datasets.corpus import encode_corpus
    from bytepair.datasets.shards import open_shards

    tok, sp = sp_pair
    ((_, text),) = corpus_texts("wikitext", 50_000)
    lines = [line for line in text.splitlines() if line.strip()][:100]
    ids, offsets = tok.encode_batch_to_array(lines, num_threads=2)
    assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == sp.encode(lines)
    corpus = tmp_path / "lines.jsonl"
    corpus.write_text("".join(json.dumps({"text": line}) + "\n" for line in lines), encoding="utf-8")
    encode_corpus([corpus], tok, tmp_path / "out", eot=None, progress=False, log=None)
    (shard,) = open_shards(tmp_path / "out", "train", tokenizer=tok)
    assert shard.tolist() == [i for ids in sp.encode(lines) for i in ids]


def test_sentencepiece_token_bytes_are_the_pieces_with_spaces_and_the_viewer_shows_them(sp_pair):
    from bytepair.view import token_spans

    tok, sp = sp_pair
    world = sp.piece_to_id("▁world")
    assert tok.token_bytes(world) == b" world"  # decode_bytes([world]) drops it as a dummy prefix
    assert tok.token_bytes(sp.piece_to_id("<0x0A>")) == b"\n" and tok.token_bytes(1) == b"<s>"
    text = "Hello  world\nline two"
    spans = token_spans(tok, text)
    assert [span.id for span in spans] == sp.encode(text)
    # the spans index the text itself; the dummy prefix of "▁Hello" covers no character
    assert b"".join(span.bytes for span in spans) == text.encode()
    assert [text[span.start : span.end] for span in spans][:3] == ["Hello", " ", " world"]


def test_sentencepiece_offsets_cover_the_text_and_assistant_masks_work(sp_pair):
    tok, sp = sp_pair
    text = "Hello  world\nline 🌍 two<s>after"
    ids, spans = tok.encode_with_offsets(text)
    assert ids == tok.encode(text, allowed_special="all")
    pieces = [tok.token_bytes(i) for i in ids]
    # each token covers its own characters; the dummy prefix (the first "▁" of a run) none
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert [text[a:b] for a, b in spans][:2] == ["Hello", " "] and pieces[0] == b" Hello"
    assert all(s[1] <= t[0] or s == t for s, t in zip(spans, spans[1:]))  # in order, no overlap
    tok = copy.deepcopy(tok)  # the fixture's is shared
    tok.chat_template = (
        "{% for m in messages %}{% if m['role'] == 'user' %}[INST] {{ m['content'] }} [/INST]"
        "{% else %}{% generation %}{{ m['content'] }}{% endgeneration %}</s>{% endif %}{% endfor %}"
    )
    messages = [{"role": "user", "content": "Hello there"}, {"role": "assistant", "content": "Hi, how are you?"}]
    out = tok.apply_chat_template(messages, return_assistant_tokens_mask=True, return_dict=True)
    masked = [i for i, keep in zip(out["input_ids"], out["assistant_masks"]) if keep]
    assert tok.decode(masked) == "Hi, how are you?"


def test_sentencepiece_udhr_slices(sp_pair):
    tok, sp = sp_pair
    for name, text in corpus_texts("udhr", 400):
        assert tok.encode_ordinary(text) == sp.encode(text), name


@pytest.mark.slow
@pytest.mark.parametrize("which", ["wikitext", "pydocs", "udhr"])
def test_sentencepiece_whole_corpora(sp_pair, which):
    tok, sp = sp_pair
    for name, text in corpus_texts(which):
        ids = tok.encode_ordinary(text)
        assert ids == sp.encode(text), name
        assert tok.decode(ids) == sp.decode(ids), name


def test_sentencepiece_decodes_what_sentencepiece_decodes(sp_pair):
    tok, sp = sp_pair
    cases = [
        [sp.piece_to_id("▁Hello")],  # the dummy prefix is dropped
        [1, sp.piece_to_id("▁Hello"), 2],  # control pieces are invisible, the rule still applies
        [sp.piece_to_id("<0xE2>"), sp.piece_to_id("<0x96>")],  # a truncated character: one U+FFFD per byte
        [sp.piece_to_id("<0x0A>"), sp.piece_to_id("▁Hello")],  # text before: the space stays
        [0, sp.piece_to_id("▁a")],  # <unk> shows as ' ⁇ '
    ]
    for ids in cases:
        assert tok.decode(ids) == sp.decode(ids), ids
    # other handlers than sentencepiece's U+FFFD act on the same bytes as bytes.decode does
    truncated = [sp.piece_to_id("▁Hello"), sp.piece_to_id("<0xE2>"), sp.piece_to_id("<0x96>")]
    assert tok.decode(truncated, errors="ignore") == "Hello"
    assert tok.decode(truncated, errors="backslashreplace") == "Hello\\xe2\\x96"
    for ids in cases:
        assert tok.decode(ids, errors="ignore") == sp.decode(ids).replace("\ufffd", ""), ids


def test_control_pieces_are_special_tokens(sp_pair):
    tok, sp = sp_pair
    for piece, token_id in tok.special_tokens.items():
        assert sp.piece_to_id(piece) == token_id and sp.is_control(token_id)
    ids = tok.encode("<s>Hello</s>", allowed_special="all")
    assert ids == [1, *sp.encode("Hello"), 2]
    with pytest.raises(bytepair.errors.DisallowedSpecialTokenError):
        tok.encode("<s>")
    assert tok.encode_ordinary("<s>") == sp.encode("<s>")


def test_sentencepiece_refuses_wrong_arguments_as_every_tokenizer_does(sp_pair):
    # its own encode_batch, encode_to_array, token_string and decode skipped the Tokenizer's checks
    tok, _ = sp_pair
    with pytest.raises(TypeError, match=r"texts must be a list of texts, not one str; pass \[text\]"):
        tok.encode_batch("Hello")  # was encoded character by character
    with pytest.raises(TypeError, match="texts must be a list of texts, not NoneType"):
        tok.encode_batch(None)
    with pytest.raises(ValueError, match="dtype must be uint16 or uint32, not uint8"):
        tok.encode_to_array("Hello", dtype="uint8")  # was numpy's OverflowError
    for bad in (None, 1.5, "3"):
        with pytest.raises(bytepair.errors.TokenIdError, match=f"token id {bad!r} is not an integer"):
            tok.token_string(bad)
    with pytest.raises(ValueError, match="errors must be the name of an error handler"):
        tok.decode([1], errors="bogus")


def test_a_hf_folder_of_a_sentencepiece_model_points_to_its_tokenizer_model(tmp_path):
    # transformers saves Mistral 7B as a character-level tokenizer.json beside tokenizer.model
    transformers = pytest.importorskip("transformers")
    model = tmp_path / "tokenizer.model"
    model.write_bytes(data_file("vocab", "mistral", "tokenizer.model.v1").read_bytes())
    transformers.LlamaTokenizerFast(vocab_file=str(model), from_slow=True).save_pretrained(str(tmp_path))
    with pytest.raises(
        FormatError, match=r"byte_fallback.*holds tokenizer.model.*bytepair.load\('.*tokenizer.model'\)"
    ):
        bytepair.load(tmp_path)
    text = "Hello world, 人人生而自由"
    assert bytepair.load(model).encode(text) == spm.SentencePieceProcessor(model_file=str(model)).encode(text)


def test_v3_user_defined_pieces_stay_whole():
    path = data_file("vocab", "mistral", SP_MODELS[1])
    tok, sp = bytepair.load(path), spm.SentencePieceProcessor(model_file=str(path))
    text = "see [REFERENCE_DOC_1] and[REFERENCE_DOC_12]x [REFERENCE_DOC_"
    assert tok.encode_ordinary(text) == sp.encode(text)
    assert tok.model.reference.encode(text) == sp.encode(text)


# -- tekken ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(NAMED_STRINGS))
def test_tekken_named_strings(tekken_pair, name):
    tok, encoding, k = tekken_pair
    text = NAMED_STRINGS[name]
    ids = tok.encode_ordinary(text)
    assert ids == tekken_ids(encoding, k, text)
    assert tok.decode(ids) == encoding.decode([i - k for i in ids])


def test_tekken_corpus_slices(tekken_pair):
    tok, encoding, k = tekken_pair
    for name, text in corpus_texts("wikitext", 200_000) + corpus_texts("udhr", 400):
        assert tok.encode_ordinary(text) == tekken_ids(encoding, k, text), name


@pytest.mark.slow
@pytest.mark.parametrize("which", ["wikitext", "pydocs", "udhr"])
def test_tekken_whole_corpora(tekken_pair, which):
    tok, encoding, k = tekken_pair
    for name, text in corpus_texts(which):
        ids = tok.encode_ordinary(text)
        assert ids == tekken_ids(encoding, k, text), name
        assert tok.decode(ids) == encoding.decode([i - k for i in ids]), name


def test_tekken_special_tokens_at_mistral_ids(tekken_pair):
    tok, _, k = tekken_pair
    assert len(tok.special_tokens) == k == 1000
    # mistral_common's built-in list for files that carry none (Tekkenizer.DEPRECATED_SPECIAL_TOKENS)
    expected = {
        "<unk>": 0,
        "<s>": 1,
        "</s>": 2,
        "[INST]": 3,
        "[/INST]": 4,
        "[TOOL_CALLS]": 9,
        "<pad>": 11,
        "<SPECIAL_999>": 999,
    }
    assert {t: tok.special_tokens[t] for t in expected} == expected
    ids = tok.encode("<s>[INST] Hi[/INST]", allowed_special="all")
    assert ids[:2] == [1, 3] and ids[-1] == 4


def test_tekken_against_mistral_common(tekken_pair):
    tekken_module = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    tok, _, _ = tekken_pair
    reference = tekken_module.Tekkenizer.from_file(str(data_file("vocab", "mistral", "tekken_240911.json")))
    for name, text in [*NAMED_STRINGS.items(), *corpus_texts("udhr", 400)[:50]]:
        assert tok.encode_ordinary(text) == reference.encode(text, bos=False, eos=False), name
    for token in ("<s>", "[INST]", "[/INST]", "[IMG]", "<SPECIAL_500>"):
        assert tok.special_tokens[token] == reference.get_special_token(token)


def test_compare_shows_the_three_families(tmp_path, capsys):
    from bytepair.cli import main

    paragraph = tmp_path / "paragraph.txt"
    paragraph.write_text(
        "Todos los seres humanos nacen libres. Все люди рождаются свободными. 人人生而自由。", encoding="utf-8"
    )
    vocab = data_file("vocab")
    assert (
        main(
            [
                "compare",
                str(paragraph),
                "-t",
                "llama3",
                "-t",
                "cl100k_base",
                "-t",
                "mistral",
                "-t",
                "tekken",
                "--vocab-dir",
                str(vocab),
                "--json",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert [t["label"] for t in report["tokenizers"]] == ["llama3", "cl100k_base", "mistral", "tekken"]
    assert all(r["tokens"] > 0 for r in report["texts"][0]["results"].values())
