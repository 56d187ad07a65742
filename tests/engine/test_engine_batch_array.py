"""``encode_batch_to_array``: a batch's ids end to end in one numpy array, with each text's
start, equal to ``encode_batch`` on every thread count, in both dtypes; ``OverflowError`` when
an id does not fit in uint16; the Tokenizer's rules (normalization, special tokens, a custom
regex) the same as ``encode_batch``'s.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import _engine
from bytepair.errors import DisallowedSpecialTokenError
from datafiles import data_file
from generated import wikitext_like

CORPUS = wikitext_like(20_000, seed=3)
TOKENIZERS = {
    "byte gpt2": bytepair.train(CORPUS, mode="byte", vocab_size=400, pattern="gpt2", special_tokens=["<|end|>"]),
    "char none": bytepair.train(CORPUS, mode="char", vocab_size=120, byte_fallback=True, normalization="NFC"),
    "byte custom regex": bytepair.train(CORPUS, mode="byte", vocab_size=300, pattern=r"\w+|\s+|[^\w\s]+"),
}


def split_back(ids, offsets):
    assert offsets.dtype == np.int64 and offsets[0] == 0 and offsets[-1] == len(ids)
    assert np.all(np.diff(offsets) >= 0)
    return [ids[offsets[k] : offsets[k + 1]].tolist() for k in range(len(offsets) - 1)]


texts = st.lists(
    st.one_of(
        st.sampled_from(CORPUS.splitlines()),
        st.text(st.sampled_from("ab é東😀 \n\t<|end|>x"), max_size=40),
        st.just(""),
    ),
    max_size=30,
)


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
@settings(max_examples=60, deadline=None)
@given(batch=texts, num_threads=st.sampled_from([1, 2, 3, 8]), dtype=st.sampled_from(["uint16", "uint32", None]))
def test_equals_encode_batch(name, batch, num_threads, dtype):
    tokenizer = TOKENIZERS[name]
    batch = [text.replace("<|end|>", "<|end|") for text in batch]  # disallowed by default
    ids, offsets = tokenizer.encode_batch_to_array(batch, num_threads=num_threads, dtype=dtype)
    assert ids.dtype == np.dtype(dtype or tokenizer.array_dtype) and len(offsets) == len(batch) + 1
    assert split_back(ids, offsets) == tokenizer.encode_batch(batch, num_threads=num_threads)


# texts of ordinary parts and special tokens, the tokens anywhere (start, end, side by side)
texts_with_specials = st.lists(
    st.lists(
        st.one_of(st.just("<|end|>"), st.sampled_from(CORPUS.splitlines()), st.text(st.sampled_from("ab é東😀 \n"))),
        max_size=6,
    ).map("".join),
    max_size=20,
)


@settings(max_examples=80, deadline=None)
@given(batch=texts_with_specials, num_threads=st.sampled_from([1, 2, 3]), dtype=st.sampled_from(["uint16", "uint32"]))
def test_allowed_special_tokens_give_encodes_ids_on_the_threads(batch, num_threads, dtype):
    # the texts are cut at their special tokens and the ordinary segments encoded as one batch;
    # `encode` on each text, which cuts and encodes one text at a time, is the twin
    tokenizer = TOKENIZERS["byte gpt2"]
    expected = [tokenizer.encode(text, allowed_special="all") for text in batch]
    assert tokenizer.encode_batch(batch, num_threads=num_threads, allowed_special="all") == expected
    ids, offsets = tokenizer.encode_batch_to_array(batch, num_threads=num_threads, dtype=dtype, allowed_special="all")
    assert ids.dtype == np.dtype(dtype) and split_back(ids, offsets) == expected


def test_allowed_special_tokens_at_the_edges_of_texts():
    tokenizer = TOKENIZERS["byte gpt2"]
    end = tokenizer.encode("<|end|>", allowed_special="all")
    assert len(end) == 1
    batch = ["<|end|>", "", "<|end|><|end|>", "a<|end|>", "<|end|>b c", "no special here"]
    expected = [tokenizer.encode(text, allowed_special="all") for text in batch]
    assert expected[0] == end and expected[1] == [] and expected[2] == end * 2
    assert tokenizer.encode_batch(batch, allowed_special={"<|end|>"}) == expected
    assert split_back(*tokenizer.encode_batch_to_array(batch, allowed_special={"<|end|>"})) == expected


def test_special_tokens_follow_encode_batchs_rules():
    tokenizer = TOKENIZERS["byte gpt2"]
    batch = ["a <|end|> b", "", "<|end|>"]
    with pytest.raises(DisallowedSpecialTokenError):
        tokenizer.encode_batch_to_array(batch)
    for options in ({"allowed_special": "all"}, {"disallowed_special": ()}):
        ids, offsets = tokenizer.encode_batch_to_array(batch, num_threads=2, **options)
        assert split_back(ids, offsets) == tokenizer.encode_batch(batch, num_threads=2, **options)


def test_bad_arguments_are_refused():
    tokenizer = TOKENIZERS["byte gpt2"]
    with pytest.raises(ValueError, match="dtype must be uint16 or uint32"):
        tokenizer.encode_batch_to_array(["a"], dtype="int64")
    with pytest.raises(ValueError, match="^dtype must be uint16 or uint32, not float64$"):  # the caller's name
        tokenizer.encode_to_array("a", dtype="float64")
    with pytest.raises(ValueError, match="num_threads"):
        tokenizer.encode_batch_to_array(["a"], num_threads=0)
    with pytest.raises(TypeError, match="text must be a str"):
        tokenizer.encode_batch_to_array(["a", b"b"])


def test_an_id_past_uint16_is_an_overflow_error():
    encoder = _engine.Encoder(
        mode="byte",
        token_bytes=[bytes([b]) for b in range(256)],
        base_ids=list(range(256)),
        pair_table={(97, 98): (0, 70_000)},
        whole_piece=False,
        monotonic=True,
        pattern="gpt2",
        fallback_ids=None,
    )
    batch = ["xyz", "cab", "b"]
    ids, offsets = encoder.encode_batch_to_array(batch, 2, "uint32")
    assert split_back(ids, offsets) == [[120, 121, 122], [99, 70_000], [98]]
    with pytest.raises(OverflowError, match="token id 70000 does not fit in uint16"):
        encoder.encode_batch_to_array(batch, 2, "uint16")
    with pytest.raises(ValueError, match="out_dtype"):
        encoder.encode_batch_to_array(batch, 2, "int32")


@pytest.mark.data
@pytest.mark.slow
def test_cl100k_on_wikitext_articles_equals_encode_batch():
    tokenizer = bytepair.load("cl100k_base", path=data_file("vocab/cl100k_base.tiktoken"))
    text = data_file("wikitext-2/valid.txt").read_text(encoding="utf-8")
    articles = text.split("\n = ")
    want = tokenizer.encode_batch(articles, num_threads=2)
    for num_threads in (1, 2, 4):
        ids, offsets = tokenizer.encode_batch_to_array(articles, num_threads=num_threads)
        assert ids.dtype == np.uint32
        assert split_back(ids, offsets) == want
    with pytest.raises(ValueError, match="does not fit in uint16"):
        tokenizer.encode_batch_to_array(articles, dtype="uint16")
