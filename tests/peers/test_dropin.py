"""Drop-in use: code written for tiktoken or transformers gives the same results with a bytepair
tokenizer as with the original library, call by call, on cl100k, o200k, Llama 3 and a tokenizer
trained here (saved with ``save_pretrained`` and read back by ``AutoTokenizer``).
"""

from __future__ import annotations

import copy
import json
import re

import numpy as np
import pytest

import bytepair
from bytepair.chat import BUILTIN_TEMPLATES, encode_conversations, template_special_tokens
from bytepair.errors import ChatTemplateError
from datafiles import data_file

pytestmark = [pytest.mark.peers, pytest.mark.data]

tiktoken = pytest.importorskip("tiktoken")
openai_public = pytest.importorskip("tiktoken_ext.openai_public")
tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")

TEXTS = [
    "hello world",
    "",
    "hé! 🌍 你好 world",
    "  leading spaces\n\n\ttabs and\r\nCRLF   ",
    "def f(x):\n    return x**2  # square\n",
    "🌍🌍🌍 👋🏽 naïve café Привет مرحبا",
    "The year 2024 had 366 days; 1234567 is a number.",
]


@pytest.fixture(scope="module")
def wiki_lines():
    """300 lines of real text (WikiText-2 validation), blank lines left out."""
    lines = data_file("wikitext-2", "valid.txt").read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip()][:300]


@pytest.fixture(scope="module")
def tiktoken_pairs():
    """name -> (bytepair tokenizer, tiktoken Encoding) from the same local rank file."""
    from tiktoken.load import load_tiktoken_bpe

    folder = data_file("vocab")
    pairs = {}
    with pytest.MonkeyPatch.context() as monkeypatch:
        local = lambda url, expected_hash: load_tiktoken_bpe(str(folder / url.rsplit("/", 1)[-1]))  # noqa: E731
        monkeypatch.setattr(openai_public, "load_tiktoken_bpe", local)
        for name in ("cl100k_base", "o200k_base"):
            encoding = tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())
            pairs[name] = (bytepair.load(name, path=folder), encoding)
    return pairs


@pytest.fixture(scope="module")
def trained_folder(tmp_path_factory):
    """A byte-level tokenizer trained here, with settings, saved as an HF folder."""
    text = data_file("wikitext-2", "valid.txt").read_text(encoding="utf-8")[:300_000]
    specials = ["<|endoftext|>", "<|pad|>", *template_special_tokens("chatml")]
    tok = bytepair.train(text, mode="byte", vocab_size=600, pattern="gpt2", special_tokens=specials)
    tok.eos_token = "<|endoftext|>"
    tok.pad_token = "<|pad|>"
    tok.chat_template = "chatml"
    tok.model_max_length = 2048
    folder = tmp_path_factory.mktemp("trained")
    tok.save_pretrained(folder)
    return tok, folder


@pytest.fixture(scope="module")
def hf_pairs(trained_folder):
    """name -> (bytepair tokenizer, transformers fast tokenizer) for the same files."""
    vocab = data_file("vocab")
    pairs = {}
    for name in ("llama3", "gpt4o"):
        folder = vocab / "hf" / name
        hf = transformers.PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
        pairs[name] = (bytepair.load(folder), hf)
    tok, folder = trained_folder
    pairs["trained"] = (bytepair.load(folder), transformers.AutoTokenizer.from_pretrained(str(folder)))
    return pairs


@pytest.fixture(scope="module")
def hf_folder_pairs(trained_folder):
    """name -> (bytepair tokenizer, AutoTokenizer) for a folder read with its tokenizer_config.json
    (Llama 3's, and one bytepair's save_pretrained wrote)."""
    llama3 = data_file("vocab") / "hf" / "llama3"
    _, folder = trained_folder
    return {
        name: (bytepair.load(path), transformers.AutoTokenizer.from_pretrained(str(path)))
        for name, path in (("llama3", llama3), ("trained", folder))
    }


def with_pad_token(pair, name):
    """Copies of a pair with the same pad token (the published files have none)."""
    ours, hf = copy.deepcopy(pair)
    if name != "trained":
        hf.pad_token = hf.convert_ids_to_tokens(0)
        ours.pad_token = ours.id_to_token(0)
    return ours, hf


def assert_same_encoding(mine, theirs):
    """The same keys and values, and the same kind of value (list, numpy array, torch tensor)."""
    assert set(mine) == set(theirs)
    for key in theirs:
        expected, actual = theirs[key], mine[key]
        assert type(actual) is type(expected), key
        if isinstance(expected, list):
            assert actual == expected, key
        else:
            assert str(actual.dtype) == str(expected.dtype), key
            assert np.array_equal(np.asarray(actual), np.asarray(expected)), key


# -- tiktoken's names ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_tiktoken_properties_match(tiktoken_pairs, name):
    ours, theirs = tiktoken_pairs[name]
    assert ours.n_vocab == theirs.n_vocab
    assert ours.max_token_value == theirs.max_token_value
    assert ours.eot_token == theirs.eot_token
    assert ours.special_tokens_set == theirs.special_tokens_set
    for token_id in (0, 100, theirs.eot_token, theirs.n_vocab - 1):
        assert ours.is_special_token(token_id) == theirs.is_special_token(token_id)
    assert ours.token_byte_values() == theirs.token_byte_values()


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_tiktoken_single_tokens_match(tiktoken_pairs, name):
    ours, theirs = tiktoken_pairs[name]
    for value in ("hello", " world", b"\xf0\x9f", "<|endoftext|>", b"!"):
        assert ours.encode_single_token(value) == theirs.encode_single_token(value)
    for value in ("hello world", b"\xff\xfe\xfd\xfc"):
        with pytest.raises(KeyError):
            theirs.encode_single_token(value)
        with pytest.raises(KeyError):
            ours.encode_single_token(value)
    ids = theirs.encode("hé 🌍")
    assert [ours.decode_single_token_bytes(i) for i in ids] == [theirs.decode_single_token_bytes(i) for i in ids]
    assert ours.decode_tokens_bytes(ids) == theirs.decode_tokens_bytes(ids)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_an_id_outside_the_vocabulary_is_a_key_error_as_in_tiktoken(tiktoken_pairs, name):
    # tiktoken code catches KeyError around decoding; ours is also a sentence naming the id
    ours, theirs = tiktoken_pairs[name]
    bad = 10**7
    calls = [
        lambda enc: enc.decode([1, bad]),
        lambda enc: enc.decode_single_token_bytes(bad),
        lambda enc: enc.decode_tokens_bytes([bad]),
        lambda enc: enc.decode_batch([[bad]]),
    ]
    for call in calls:
        with pytest.raises(KeyError):
            call(theirs)
        with pytest.raises(KeyError) as raised:
            call(ours)
        assert str(raised.value).startswith(f"token id {bad} at position ")


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_tiktoken_batches_offsets_and_arrays_match(tiktoken_pairs, name):
    ours, theirs = tiktoken_pairs[name]
    batch = ours.encode_ordinary_batch(TEXTS)
    assert batch == theirs.encode_ordinary_batch(TEXTS)
    assert ours.decode_batch(batch) == theirs.decode_batch(batch)
    for text, ids in zip(TEXTS, batch):
        assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)
        ours_array, theirs_array = ours.encode_to_numpy(text), theirs.encode_to_numpy(text)
        assert ours_array.dtype == theirs_array.dtype
        assert np.array_equal(ours_array, theirs_array)
    special = "a<|endoftext|>b"
    assert np.array_equal(
        ours.encode_to_numpy(special, allowed_special="all"), theirs.encode_to_numpy(special, allowed_special="all")
    )
    with pytest.raises(ValueError):
        ours.encode_to_numpy(special)


# -- HF's names ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["llama3", "gpt4o", "trained"])
def test_vocabulary_views_match_hf(hf_pairs, name):
    ours, hf = hf_pairs[name]
    backend = hf.backend_tokenizer
    assert ours.get_vocab() == hf.get_vocab()
    assert len(ours) == len(hf)
    for token in ("Ġthe", "hello", "<|endoftext|>", "no such token"):
        assert ours.token_to_id(token) == backend.token_to_id(token)
    for token_id in (0, 255, 256, len(hf) - 1, len(hf) + 5):
        assert ours.id_to_token(token_id) == backend.id_to_token(token_id)
    assert ours.convert_ids_to_tokens([0, 1, 2]) == hf.convert_ids_to_tokens([0, 1, 2])


@pytest.mark.parametrize("name", ["llama3", "gpt4o", "trained"])
def test_offsets_equal_hf_encoding_offsets(hf_pairs, name):
    ours, hf = hf_pairs[name]
    for text in TEXTS:
        encoding = hf.backend_tokenizer.encode(text, add_special_tokens=False)
        assert ours.encode_with_offsets(text) == (encoding.ids, encoding.offsets), text


@pytest.mark.parametrize("name", ["llama3", "gpt4o", "trained"])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"padding": True},
        {"padding": True, "truncation": True, "max_length": 5},
        {"padding": "max_length", "truncation": True, "max_length": 24, "return_tensors": "np"},
        {"padding": True, "return_tensors": "pt"},
        {"max_length": 5},
        {"padding": True, "pad_to_multiple_of": 8, "padding_side": "left", "return_tensors": "pt"},
        {"padding": "max_length", "max_length": 20, "pad_to_multiple_of": 8},
        {"padding": True, "truncation": True, "max_length": 16, "pad_to_multiple_of": 8},
        {"pad_to_multiple_of": 8},
    ],
)
def test_batch_call_matches_transformers(hf_pairs, name, options):
    ours, hf = with_pad_token(hf_pairs[name], name)
    texts = [t for t in TEXTS if t] + ["<|endoftext|> after a special"]
    theirs = hf(texts, **options)
    mine = ours(texts, **options)
    assert set(mine) == set(theirs)
    for key in theirs:
        expected, actual = theirs[key], mine[key]
        if options.get("return_tensors"):
            assert np.array_equal(np.asarray(expected), np.asarray(actual)), key
        else:
            assert actual == expected, key
    assert ours("one text")["input_ids"] == hf("one text")["input_ids"]
    if options.get("return_tensors"):  # one text comes back as a batch of one
        assert_same_encoding(ours("one text", **options), hf("one text", **options))


def test_truncating_to_a_length_padding_would_round_up_is_refused_as_in_transformers(hf_pairs):
    ours, hf = hf_pairs["trained"]
    options = {"padding": True, "truncation": True, "max_length": 10, "pad_to_multiple_of": 8}
    with pytest.raises(ValueError, match="multiple of pad_to_multiple_of"):
        hf(TEXTS, **options)
    with pytest.raises(bytepair.errors.UsageError, match="make max_length a multiple of it"):
        ours(TEXTS, **options)
    with pytest.raises(bytepair.errors.UsageError, match="pad_to_multiple_of must be an integer of at least 1"):
        ours(TEXTS, **{**options, "pad_to_multiple_of": -8})


@pytest.mark.parametrize("name", ["llama3", "trained"])
@pytest.mark.parametrize(
    "options",
    [{}, {"max_length": 8}, {"padding": True, "truncation": True, "max_length": 16, "return_tensors": "np"}],
)
def test_encode_plus_and_batch_encode_plus_equal_the_transformers_call(hf_pairs, wiki_lines, name, options):
    # transformers 4's __call__ hands one text to encode_plus and a list to batch_encode_plus,
    # with its arguments unchanged; transformers 5 removed both, so its call is the reference.
    ours, hf = with_pad_token(hf_pairs[name], name)
    texts = wiki_lines[:64]
    assert_same_encoding(ours.batch_encode_plus(texts, **options), hf(texts, **options))
    assert_same_encoding(ours.encode_plus(texts[3], **options), hf(texts[3], **options))
    with pytest.raises(TypeError):
        ours.encode_plus(texts)
    with pytest.raises(TypeError):
        ours.batch_encode_plus(texts[0])


@pytest.mark.parametrize("name", ["llama3", "trained"])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"padding": False},
        {"padding": "max_length", "max_length": 96},
        {"pad_to_multiple_of": 8, "padding_side": "left"},
        {"return_attention_mask": False},
        {"return_tensors": "pt"},
    ],
)
def test_pad_matches_transformers(hf_pairs, wiki_lines, name, options):
    ours, hf = with_pad_token(hf_pairs[name], name)
    features = [dict(hf(line)) for line in wiki_lines[:32]]  # as a DataLoader hands them to collate_fn
    assert_same_encoding(ours.pad(copy.deepcopy(features), **options), hf.pad(copy.deepcopy(features), **options))


def test_pad_takes_what_transformers_pad_takes(hf_pairs, wiki_lines):
    torch = pytest.importorskip("torch")
    ours, hf = hf_pairs["trained"]
    rows = [hf(line)["input_ids"] for line in wiki_lines[:16]]
    forms = [
        {"input_ids": rows},  # a batch as one dict
        {"input_ids": rows[5]},  # one encoding, padded to a multiple below
        {"input_ids": rows, "labels": rows},  # other keys come back unchanged
        {"input_ids": rows, "token_type_ids": [[0] * len(r) for r in rows], "special_tokens_mask": rows},
        [{"input_ids": torch.tensor(r)} for r in rows],  # a Dataset in torch format
        [{"input_ids": np.array(r), "attention_mask": np.ones(len(r), dtype=np.int64)} for r in rows],
    ]
    for form in forms:
        theirs = hf.pad(copy.deepcopy(form), pad_to_multiple_of=8)
        assert_same_encoding(ours.pad(copy.deepcopy(form), pad_to_multiple_of=8), theirs)


def test_pad_names_a_column_it_leaves_ragged(hf_pairs):
    pytest.importorskip("torch")
    ours, hf = hf_pairs["trained"]
    batch = encode_conversations(ours, CHATS, template="chatml")
    features = [dict(zip(batch, row)) for row in zip(*batch.values())]  # as a DataLoader hands them
    with pytest.raises(ValueError, match="labels"):
        hf.pad(copy.deepcopy(features), return_tensors="pt")
    with pytest.raises(bytepair.errors.UsageError, match="pad does not pad 'labels'.*-100"):
        ours.pad(copy.deepcopy(features), return_tensors="pt")
    width = max(len(ids) for ids in batch["input_ids"])
    for feature in features:
        feature["labels"] = feature["labels"] + [-100] * (width - len(feature["labels"]))
    assert_same_encoding(ours.pad(copy.deepcopy(features), return_tensors="pt"), hf.pad(features, return_tensors="pt"))


@pytest.mark.parametrize("name", ["llama3", "gpt4o", "trained"])
def test_tokenize_matches_transformers(hf_pairs, wiki_lines, name):
    ours, hf = hf_pairs[name]
    texts = [*TEXTS, *wiki_lines, "a<|endoftext|>b <|eot_id|> c"]
    assert [ours.tokenize(text) for text in texts] == [hf.tokenize(text) for text in texts]
    special = texts[-1]
    assert ours.tokenize(special, split_special_tokens=True) == hf.tokenize(special, split_special_tokens=True)


@pytest.mark.parametrize("name", ["llama3", "gpt4o", "trained"])
def test_batch_decode_matches_transformers(hf_pairs, wiki_lines, name):
    ours, hf = hf_pairs[name]
    texts = [*TEXTS, *(line + " <|endoftext|> <|eot_id|>" for line in wiki_lines[:50]), *wiki_lines[50:]]
    batch = hf(texts)["input_ids"]
    for skip in (False, True):
        assert ours.batch_decode(batch, skip_special_tokens=skip) == hf.batch_decode(batch, skip_special_tokens=skip)
    # cut to one length (some cuts split a character's bytes), as arrays and tensors
    cut = [ids[:3] for ids in batch if len(ids) >= 3]
    assert ours.batch_decode(np.array(cut)) == hf.batch_decode(np.array(cut))
    torch = pytest.importorskip("torch")
    assert ours.batch_decode(torch.tensor(cut)) == hf.batch_decode(torch.tensor(cut))
    assert ours.batch_decode([]) == hf.batch_decode([])
    assert ours.batch_decode(batch[7]) == hf.batch_decode(batch[7])  # one sequence: a list of one


@pytest.mark.parametrize("name", ["llama3", "gpt4o", "trained"])
def test_decode_of_one_tensor_row_matches_transformers(hf_pairs, wiki_lines, name):
    # tok.decode(batch["input_ids"][0]): a row of a tensor, with or without the special tokens
    torch = pytest.importorskip("torch")
    ours, hf = hf_pairs[name]
    texts = [line + " <|endoftext|> <|eot_id|>" for line in wiki_lines[:40]]
    for ids in hf(texts)["input_ids"]:
        row = torch.tensor(ids)
        for skip in (False, True):
            assert ours.decode(row, skip_special_tokens=skip) == hf.decode(row, skip_special_tokens=skip)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"truncation": True, "max_length": -2}, "max_length must be an integer of at least 0, not -2"),
        ({"truncation": True, "max_length": 2.5}, "max_length must be an integer of at least 0, not 2.5"),
        ({"padding": "max_length", "max_length": -2}, "max_length must be an integer of at least 0, not -2"),
        ({"padding": True, "pad_to_multiple_of": 0}, "pad_to_multiple_of must be an integer of at least 1"),
    ],
)
def test_lengths_that_would_slice_from_the_end_are_refused(hf_pairs, options, message):
    ours, _ = with_pad_token(hf_pairs["llama3"], "llama3")
    with pytest.raises(ValueError, match=re.escape(message)):
        if "pad_to_multiple_of" in options:
            ours.pad([{"input_ids": [1, 2, 3]}, {"input_ids": [4]}], **options)
        else:
            ours(["one two three four"], **options)


def test_a_padding_or_truncation_side_other_than_left_or_right_is_refused(hf_pairs):
    ours, _ = with_pad_token(hf_pairs["llama3"], "llama3")
    ours.padding_side = "middle"
    with pytest.raises(ValueError, match="padding_side must be 'left' or 'right', not 'middle'"):
        ours(["one two", "one"], padding=True)
    ours.padding_side, ours.truncation_side = "right", "center"
    with pytest.raises(ValueError, match="truncation_side must be 'left' or 'right', not 'center'"):
        ours(["one two"], truncation=True, max_length=1)


@pytest.mark.parametrize("name", ["llama3", "trained"])
def test_special_token_lists_match_transformers(hf_folder_pairs, name):
    ours, hf = copy.deepcopy(hf_folder_pairs[name])
    assert ours.special_tokens_map == hf.special_tokens_map
    assert ours.all_special_tokens == hf.all_special_tokens
    assert ours.all_special_ids == hf.all_special_ids
    ours.pad_token, hf.pad_token = ours.eos_token, hf.eos_token  # one token in two roles is listed once
    ours.unk_token, hf.unk_token = ours.bos_token, hf.bos_token
    assert ours.special_tokens_map == hf.special_tokens_map
    assert ours.all_special_tokens == hf.all_special_tokens
    assert ours.all_special_ids == hf.all_special_ids


@pytest.mark.parametrize("name", ["llama3", "trained"])
def test_token_strings_to_ids_match_transformers_with_and_without_an_unk_token(hf_folder_pairs, name):
    ours, hf = copy.deepcopy(hf_folder_pairs[name])
    tokens = [hf.convert_ids_to_tokens(300), "no such token", ours.eos_token]
    assert ours.convert_tokens_to_ids(tokens) == hf.convert_tokens_to_ids(tokens)
    ours.unk_token, hf.unk_token = ours.eos_token, hf.eos_token
    assert ours.convert_tokens_to_ids(tokens) == hf.convert_tokens_to_ids(tokens)
    assert ours.convert_tokens_to_ids("no such token") == hf.convert_tokens_to_ids("no such token") == hf.unk_token_id


def test_ragged_tensors_are_refused_where_transformers_gives_an_object_array(hf_pairs):
    ours, _ = hf_pairs["trained"]
    with pytest.raises(ValueError, match="padding=True"):
        ours(["a long text of many words", "a"], padding="max_length", max_length=2, return_tensors="np")


def test_trained_folder_is_read_by_transformers_with_our_ids_and_settings(trained_folder, hf_pairs):
    tok, folder = trained_folder
    hf = transformers.AutoTokenizer.from_pretrained(str(folder))
    assert hf.eos_token == "<|endoftext|>" and hf.eos_token_id == tok.eos_token_id
    assert hf.pad_token_id == tok.pad_token_id
    assert hf.model_max_length == 2048
    for text in TEXTS:
        assert hf.encode(text, add_special_tokens=False) == tok.encode(text)
    loaded = bytepair.load(folder)
    assert (loaded.eos_token, loaded.pad_token, loaded.model_max_length) == ("<|endoftext|>", "<|pad|>", 2048)
    assert loaded.chat_template == BUILTIN_TEMPLATES["chatml"]
    assert loaded.eos_token_id == tok.eos_token_id
    assert loaded.encode_batch(TEXTS) == tok.encode_batch(TEXTS)


def test_a_folder_saved_by_transformers_loads_with_its_settings(hf_pairs, tmp_path):
    _, hf = hf_pairs["llama3"]
    config = data_file("vocab", "hf", "llama3", "tokenizer_config.json")
    chat_template = json.loads(config.read_text(encoding="utf-8"))["chat_template"]
    hf.chat_template = chat_template
    hf.bos_token, hf.eos_token = "<|begin_of_text|>", "<|eot_id|>"
    hf.save_pretrained(str(tmp_path))
    loaded = bytepair.load(tmp_path)
    assert (loaded.bos_token, loaded.eos_token) == ("<|begin_of_text|>", "<|eot_id|>")
    assert loaded.chat_template == chat_template
    messages = [{"role": "user", "content": " hi "}, {"role": "assistant", "content": "hello"}]
    assert (
        loaded.apply_chat_template(messages, return_dict=False)
        == hf.apply_chat_template(messages, return_dict=True)["input_ids"]
    )


def test_a_bytepair_artifact_where_hf_expects_tokenizer_json_is_named(trained_folder, tmp_path):
    tok, _ = trained_folder
    tok.save(tmp_path / "tokenizer.json")
    with pytest.raises(bytepair.errors.FormatError, match="bytepair artifact.*tokenizer.bytepair.json"):
        bytepair.load(tmp_path)
    assert bytepair.load(tmp_path / "tokenizer.json").fingerprint == tok.fingerprint  # old name still loads


@pytest.fixture(scope="module")
def wiki_text():
    return data_file("wikitext-2", "valid.txt").read_text(encoding="utf-8")[:100_000]


def test_special_tokens_apart_from_the_vocabulary_keep_their_ids_in_transformers(wiki_text, tmp_path):
    tok = bytepair.train(wiki_text, mode="byte", vocab_size=300, pattern="gpt2")
    tok.add_special_tokens({"<|endoftext|>": 310, "<|pad|>": 305})
    tok.save_pretrained(tmp_path / "trained")
    hf = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "trained"))
    text = "hi<|endoftext|><|pad|>"
    assert tok.encode(text, allowed_special="all")[-2:] == [310, 305]
    assert hf.encode(text, add_special_tokens=False) == tok.encode(text, allowed_special="all")
    assert hf.convert_ids_to_tokens([305, 310]) == ["<|pad|>", "<|endoftext|>"]
    # GPT-4o's file has an unused id (199998) below its end-of-text token
    gpt4o = bytepair.load(data_file("vocab", "hf", "gpt4o", "tokenizer.json"))
    gpt4o.save_pretrained(tmp_path / "gpt4o")
    again = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "gpt4o"))
    assert again.encode("a<|endoftext|>", add_special_tokens=False) == gpt4o.encode(
        "a<|endoftext|>", allowed_special="all"
    )
    assert gpt4o.special_tokens["<|endoftext|>"] == 199999


def test_add_special_tokens_takes_the_transformers_form_of_named_tokens(trained_folder):
    _, folder = trained_folder
    ours, hf = bytepair.load(folder), transformers.AutoTokenizer.from_pretrained(str(folder))
    added = {"bos_token": "<|bos|>", "pad_token": "<|pad2|>", "additional_special_tokens": ["<|tool|>"]}
    hf.add_special_tokens(added)
    assert ours.add_special_tokens(added) is ours
    assert (ours.bos_token_id, ours.pad_token_id) == (hf.bos_token_id, hf.pad_token_id)
    texts = ["call <|tool|> now", "x"]
    assert dict(ours(texts, padding=True)) == dict(hf(texts, padding=True, add_special_tokens=False))
    with pytest.raises(bytepair.errors.SpecialTokenError, match="'sep_token'.*additional_special_tokens"):
        ours.add_special_tokens({"sep_token": "[SEP]"})


def test_an_ordinary_token_as_a_settings_token_is_refused_by_save_pretrained(wiki_text, tmp_path):
    tok = bytepair.train(wiki_text, mode="byte", vocab_size=300, pattern="gpt2")
    tok.pad_token = "."  # transformers would make "." special and cut it out of "Wait... what."
    with pytest.raises(bytepair.errors.FormatError, match="pad_token is '.', an ordinary token"):
        tok.save_pretrained(tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_padding_and_truncation_sides_go_with_the_folder_and_with_pickles(trained_folder, tmp_path):
    import pickle

    tok, _ = trained_folder
    tok = copy.deepcopy(tok)
    tok.padding_side = tok.truncation_side = "left"
    tok.save_pretrained(tmp_path)
    hf = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    texts = ["a longer text here", "a"]
    for loaded in (bytepair.load(tmp_path), pickle.loads(pickle.dumps(tok)), copy.copy(tok)):
        assert (loaded.padding_side, loaded.truncation_side) == ("left", "left")
        assert loaded(texts, padding=True)["input_ids"] == hf(texts, padding=True)["input_ids"]
        cut = loaded(texts, truncation=True, max_length=2)["input_ids"]
        assert cut == hf(texts, truncation=True, max_length=2)["input_ids"]
    assert (
        hf.padding_side == "left"
        and bytepair.load(tmp_path)(texts, padding=True)["input_ids"][1][0] == tok.pad_token_id
    )


def test_a_normalizing_tokenizer_finds_special_tokens_after_normalization_in_transformers(wiki_text, tmp_path):
    tok = bytepair.train(
        wiki_text, mode="byte", vocab_size=300, pattern="cl100k", normalization="NFKC", special_tokens=["<|endoftext|>"]
    )
    tok.save_pretrained(tmp_path)
    hf = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    text = "a\uff1c\uff5cendoftext\uff5c\uff1eb"  # full-width: NFKC makes it the special token's string
    assert tok(text)["input_ids"] == hf(text)["input_ids"] == [97, tok.special_tokens["<|endoftext|>"], 98]


@pytest.mark.parametrize(
    "options",
    [
        {"mode": "char", "vocab_size": 400, "byte_fallback": True},
        {"mode": "byte", "vocab_size": 300, "pattern": "cl100k", "normalization": "NFKC"},
    ],
    ids=["char", "nfkc"],
)
def test_folders_that_save_pretrained_writes_load_back_as_the_same_tokenizer(wiki_text, tmp_path, options):
    tok = bytepair.train(wiki_text, special_tokens=["<|endoftext|>"], **options)
    tok.save_pretrained(tmp_path)
    assert bytepair.load(tmp_path).fingerprint == tok.fingerprint
    hf_file = tmp_path / "tokenizer.json"
    data = json.loads(hf_file.read_text(encoding="utf-8"))
    data["added_tokens"].append({**data["added_tokens"][0], "id": 999, "content": "<|new|>"})
    hf_file.write_text(json.dumps(data), encoding="utf-8")  # as if changed by transformers since
    with pytest.raises(bytepair.errors.FormatError, match="special tokens differ"):
        bytepair.load(tmp_path)
    data["added_tokens"].pop()
    data["pre_tokenizer"] = {"type": "Whitespace"}
    hf_file.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(bytepair.errors.FormatError, match="their pre_tokenizer differ"):
        bytepair.load(tmp_path)


def test_a_folder_written_again_for_a_loaded_vocabulary_drops_the_earlier_artifact(trained_folder, hf_pairs, tmp_path):
    tok, _ = trained_folder
    tok.save_pretrained(tmp_path)
    llama3, _ = hf_pairs["llama3"]
    llama3.save_pretrained(tmp_path)  # no artifact for a vocabulary loaded from HF's file
    assert not (tmp_path / "tokenizer.bytepair.json").exists()
    assert bytepair.load(tmp_path).encode("hello world") == llama3.encode("hello world")


# -- chat fine-tuning -----------------------------------------------------------------------------

# A template in the Hub's style that marks assistant turns for masks.
GENERATION_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n"
    "{% if message['role'] == 'assistant' %}"
    "{% generation %}{{ message['content'] | trim }}<|eot_id|>{% endgeneration %}"
    "{% else %}{{ message['content'] | trim }}<|eot_id|>{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)

CHATS = [
    [{"role": "user", "content": "hi 🌍"}, {"role": "assistant", "content": " Hello, 世界! "}],
    [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "4."},
        {"role": "user", "content": "and  this?\n\n"},
        {"role": "assistant", "content": "Still 4.\n"},
    ],
]


@pytest.mark.parametrize("chat", range(len(CHATS)))
@pytest.mark.parametrize("template", ["generation", "llama3"])
def test_assistant_masks_match_transformers_token_by_token(hf_pairs, chat, template):
    ours, hf = hf_pairs["llama3"]
    source = GENERATION_TEMPLATE if template == "generation" else BUILTIN_TEMPLATES["llama3"]
    messages = CHATS[chat]
    theirs = hf.apply_chat_template(
        messages,
        chat_template=source,
        bos_token="<|begin_of_text|>",
        return_dict=True,
        return_assistant_tokens_mask=True,
    )
    mine = ours.apply_chat_template(
        messages, template=source, bos_token="<|begin_of_text|>", return_dict=True, return_assistant_tokens_mask=True
    )
    assert mine["input_ids"] == theirs["input_ids"]
    assert mine["attention_mask"] == theirs["attention_mask"]
    assert mine["assistant_masks"] == theirs["assistant_masks"]
    assert sum(mine["assistant_masks"]) > 0


def test_a_transformers_call_runs_unchanged_with_chat_template(hf_pairs):
    ours, hf = hf_pairs["llama3"]
    call = dict(
        chat_template=GENERATION_TEMPLATE,
        bos_token="<|begin_of_text|>",
        return_dict=True,
        return_assistant_tokens_mask=True,
    )
    assert dict(ours.apply_chat_template(CHATS[1], **call)) == dict(hf.apply_chat_template(CHATS[1], **call))
    with pytest.raises(ChatTemplateError, match="once"):
        ours.apply_chat_template(CHATS[1], template="llama3", chat_template=GENERATION_TEMPLATE, return_dict=False)


@pytest.mark.parametrize("tensors", [None, "pt"])
def test_a_batch_of_conversations_gives_what_transformers_gives(hf_pairs, tensors):
    if tensors == "pt":
        pytest.importorskip("torch")
    ours, hf = hf_pairs["llama3"]
    batch = CHATS if tensors is None else [CHATS[1], CHATS[1]]
    call = dict(chat_template=GENERATION_TEMPLATE, bos_token="<|begin_of_text|>", return_tensors=tensors)
    texts = hf.apply_chat_template(batch, tokenize=False, **call)
    assert ours.apply_chat_template(batch, tokenize=False, **call) == texts
    ids = hf.apply_chat_template(batch, return_dict=False, **call)
    assert_same_encoding({"ids": ours.apply_chat_template(batch, return_dict=False, **call)}, {"ids": ids})
    theirs = hf.apply_chat_template(batch, return_dict=True, return_assistant_tokens_mask=True, **call)
    mine = ours.apply_chat_template(batch, return_dict=True, return_assistant_tokens_mask=True, **call)
    assert_same_encoding(mine, dict(theirs))


# Calls written for transformers 5, each made unchanged on both tokenizers.
PREFILLED = [*CHATS[1][:-1], {"role": "assistant", "content": "Still "}]
TRANSFORMERS_5_CALLS = {
    "defaults": (CHATS[1], {}),
    "generation prompt, tensors": (CHATS[0][:1], dict(add_generation_prompt=True, return_tensors="np")),
    "continue the final message": (PREFILLED, dict(continue_final_message=True)),
    "continue, as text": (PREFILLED, dict(continue_final_message=True, tokenize=False)),
    "batch padded left, masks": (
        CHATS,
        dict(padding=True, tokenizer_kwargs={"padding_side": "left"}, return_assistant_tokens_mask=True),
    ),
    "batch cut and padded, tensors": (
        CHATS,
        dict(padding="max_length", truncation=True, max_length=16, return_tensors="np", return_dict=True),
    ),
    "batch to a multiple, ids only": (
        CHATS,
        dict(padding=True, tokenizer_kwargs={"pad_to_multiple_of": 8}, return_dict=False),
    ),
}


@pytest.mark.parametrize("template", ["generation", "llama3"])
@pytest.mark.parametrize("case", sorted(TRANSFORMERS_5_CALLS))
def test_transformers_5_chat_calls_give_what_transformers_gives(hf_pairs, case, template):
    ours, hf = with_pad_token(hf_pairs["llama3"], "llama3")
    messages, call = TRANSFORMERS_5_CALLS[case]
    source = GENERATION_TEMPLATE if template == "generation" else BUILTIN_TEMPLATES["llama3"]
    call = dict(call, chat_template=source, bos_token="<|begin_of_text|>")
    theirs = hf.apply_chat_template(messages, **call)
    mine = ours.apply_chat_template(messages, **call)
    if isinstance(theirs, (str, list)):
        assert mine == theirs
    else:
        assert_same_encoding(mine, dict(theirs))


def test_a_final_message_continued_without_trimming_matches_transformers(hf_pairs):
    ours, hf = hf_pairs["trained"]  # chatml: content written as it is
    for tail in ("Still ", "Still", "Still\n"):
        messages = [*CHATS[0][:1], {"role": "assistant", "content": tail}]
        theirs = hf.apply_chat_template(messages, continue_final_message=True, return_dict=False)
        assert ours.apply_chat_template(messages, continue_final_message=True, return_dict=False) == theirs
        assert ours.decode(theirs).endswith(tail)


def test_a_final_message_the_template_escapes_is_not_continued_as_in_transformers(hf_pairs):
    ours, hf = hf_pairs["llama3"]
    # a tool result written as JSON: its newline becomes "\\n", so the text is not in the render
    template = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] | tojson }}\n{% endfor %}"
    messages = [CHATS[0][0], {"role": "tool", "content": "line one\nline two"}]
    call = dict(chat_template=template, continue_final_message=True, tokenize=False)
    with pytest.raises(ValueError, match="does not appear"):
        hf.apply_chat_template(messages, **call)
    for tokenize in (False, True):
        with pytest.raises(ChatTemplateError, match="does not appear"):
            ours.apply_chat_template(messages, **dict(call, tokenize=tokenize))
    # text that JSON leaves as it is appears, and is continued as there
    messages[-1]["content"] = "line one"
    assert ours.apply_chat_template(messages, **call) == hf.apply_chat_template(messages, **call)


def test_tools_and_documents_reach_only_templates_that_read_them_as_in_transformers(hf_pairs):
    ours, hf = hf_pairs["llama3"]
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    documents = [{"title": "Paris", "text": "Sunny."}]
    # the same call is made for every model; a template without tool support leaves them out
    for template in (BUILTIN_TEMPLATES["llama3"], "{{ messages[0]['content'] }}"):
        for extra in (dict(tools=tools), dict(documents=documents), dict(tools=[], documents=documents)):
            call = dict(chat_template=template, add_generation_prompt=True, **extra)
            assert dict(ours.apply_chat_template(CHATS[0], **call)) == dict(hf.apply_chat_template(CHATS[0], **call))
    with pytest.raises(ChatTemplateError, match="unknown keyword 'tool'"):
        ours.apply_chat_template(CHATS[0], chat_template=BUILTIN_TEMPLATES["llama3"], tool=tools)


def test_sanitize_control_tokens_is_refused_where_it_cannot_hold(hf_pairs):
    ours, hf = hf_pairs["llama3"]
    call = dict(chat_template=BUILTIN_TEMPLATES["llama3"], sanitize_control_tokens=True)
    assert dict(ours.apply_chat_template(CHATS[0], **call)) == dict(hf.apply_chat_template(CHATS[0], **call))
    # the text cannot keep the caller's special-token strings ordinary: transformers refuses it too
    with pytest.raises(ValueError, match="requires `tokenize=True`"):
        hf.apply_chat_template(CHATS[0], tokenize=False, **call)
    with pytest.raises(ChatTemplateError, match="needs tokenize=True"):
        ours.apply_chat_template(CHATS[0], tokenize=False, **call)
    with pytest.raises(ChatTemplateError, match="contradict"):
        ours.apply_chat_template(CHATS[0], allow_special_in_content=True, **call)


def test_reasoning_under_any_name_reaches_the_template_as_in_transformers(hf_pairs):
    ours, hf = hf_pairs["llama3"]
    template = (
        "{% for m in messages %}{{ m['role'] }}:{% if m.reasoning_content %}<think>{{ m.reasoning_content }}"
        "</think>{% endif %}{{ m['content'] }}\n{% endfor %}"
    )
    for name in ("reasoning", "thinking", "reasoning_content"):
        messages = [CHATS[0][0], {"role": "assistant", name: "two and two", "content": "4"}]
        theirs = hf.apply_chat_template(messages, chat_template=template, tokenize=False)
        assert "<think>two and two</think>" in theirs
        assert ours.apply_chat_template(messages, chat_template=template, tokenize=False) == theirs
        prefilled = [CHATS[0][0], {"role": "assistant", name: "two and", "content": ""}]
        call = dict(chat_template=template, continue_final_message=name, tokenize=False)
        assert ours.apply_chat_template(prefilled, **call) == hf.apply_chat_template(prefilled, **call)


def test_builtin_chatml_masks_match_transformers_on_the_trained_folder(hf_pairs):
    ours, hf = hf_pairs["trained"]
    messages = CHATS[0] + [{"role": "user", "content": "more"}, {"role": "assistant", "content": "ok"}]
    theirs = hf.apply_chat_template(messages, return_dict=True, return_assistant_tokens_mask=True)
    mine = ours.apply_chat_template(messages, return_dict=True, return_assistant_tokens_mask=True)
    assert dict(theirs) == mine


def test_encode_conversations_labels_are_the_assistant_tokens(hf_pairs):
    ours, hf = hf_pairs["llama3"]
    batch = encode_conversations(ours, CHATS[:1], template="llama3")
    theirs = hf.apply_chat_template(
        CHATS[0], chat_template=BUILTIN_TEMPLATES["llama3"], return_dict=True, return_assistant_tokens_mask=True
    )
    expected = [t if m else -100 for t, m in zip(theirs["input_ids"], theirs["assistant_masks"])]
    assert batch["labels"][0] == expected
    assert ours.decode([t for t in batch["labels"][0] if t != -100]) == "Hello, 世界!<|eot_id|>"
