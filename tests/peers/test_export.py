"""Exported files give bytepair's ids in the libraries that read them.

Oracles: tiktoken (``tiktoken.Encoding`` over the written rank file), HF tokenizers
(``Tokenizer.from_file``) and transformers (``PreTrainedTokenizerFast``) on the written
``tokenizer.json``. Tokenizers are trained here on real text (WikiText-2, UDHR) in byte mode
with the gpt2, cl100k and llama3 patterns and special tokens, and in character mode. Where a
library's rule differs from replay (merge lists that rebuild a value), the exporter must refuse,
and the tests show the library really would give other ids.
"""

from __future__ import annotations

import hashlib
import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.bytelevel import bytes_to_readable
from bytepair.errors import FormatError
from bytepair.formats import load_tiktoken, to_huggingface, to_tiktoken
from bytepair.formats.export import huggingface_json
from bytepair.tokenizer import Tokenizer
from datafiles import data_file

tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")

pytestmark = pytest.mark.peers

from tiktoken.load import load_tiktoken_bpe  # noqa: E402

SPECIALS = ["<|endoftext|>", "<|pad|>"]
MIXED = "Hello, world! 你好世界 Hello 🌍 World\r\n\tdef foo(x): return x + 1  ¿Qué tal? ﬁ <|endoftext|> end<|pad|>"


def read_with_tiktoken(path):
    """tiktoken's own reader, with its cache off (it caches even local files, by path)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
        return load_tiktoken_bpe(str(path))


@pytest.fixture(scope="module")
def corpus(wikitext_valid):
    udhr = data_file("multilingual/udhr")
    languages = [
        (udhr / f"{name}.txt").read_text(encoding="utf-8") for name in ("eng", "fra", "rus", "cmn_hans", "arb", "hin")
    ]
    training = wikitext_valid[:400_000] + "\n".join(languages)
    held_out = [
        wikitext_valid[600_000:700_000],
        *(path.read_text(encoding="utf-8") for path in sorted(udhr.glob("*.txt"))[::23]),
        MIXED,
    ]
    return training, held_out


@pytest.fixture(scope="module", params=["gpt2", "cl100k", "llama3"])
def byte_tokenizer(request, corpus):
    training, _ = corpus
    return bytepair.train(training, mode="byte", vocab_size=1500, pattern=request.param, special_tokens=SPECIALS)


def tiktoken_encoding(tokenizer, path):
    info = to_tiktoken(tokenizer, path)
    return tiktoken.Encoding("exported", mergeable_ranks=read_with_tiktoken(path), **info)


@pytest.mark.data
def test_tiktoken_file_gives_our_ids(byte_tokenizer, corpus, tmp_path):
    encoding = tiktoken_encoding(byte_tokenizer, tmp_path / "mine.tiktoken")
    for text in corpus[1]:
        ours = byte_tokenizer.encode(text, allowed_special="all")
        assert encoding.encode(text, allowed_special="all") == ours
        assert encoding.decode(ours) == byte_tokenizer.decode(ours)


@pytest.mark.data
def test_huggingface_file_gives_our_ids(byte_tokenizer, corpus, tmp_path):
    path = tmp_path / "tokenizer.json"
    to_huggingface(byte_tokenizer, path)
    reference = tokenizers.Tokenizer.from_file(str(path))
    texts = corpus[1]
    theirs = [e.ids for e in reference.encode_batch(texts, add_special_tokens=False)]
    ours = [byte_tokenizer.encode(text, allowed_special="all") for text in texts]
    assert theirs == ours
    assert [reference.decode(ids, skip_special_tokens=False) for ids in ours] == texts


@pytest.mark.data
def test_transformers_reads_the_exported_file(byte_tokenizer, tmp_path):
    transformers = pytest.importorskip("transformers")
    path = tmp_path / "tokenizer.json"
    to_huggingface(byte_tokenizer, path)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    ours = byte_tokenizer.encode(MIXED, allowed_special="all")
    assert fast.encode(MIXED, add_special_tokens=False) == ours
    assert fast.decode(ours) == MIXED
    assert len(fast) == byte_tokenizer.vocab_size


@pytest.mark.data
def test_exported_files_load_back_with_the_same_ids(byte_tokenizer, corpus, tmp_path):
    to_huggingface(byte_tokenizer, tmp_path / "tokenizer.json")
    info = to_tiktoken(byte_tokenizer, tmp_path / "mine.tiktoken")
    from_hf = bytepair.load("mine", path=tmp_path / "tokenizer.json")
    from_tiktoken = load_tiktoken(
        tmp_path / "mine.tiktoken", pattern=info["pat_str"], special_tokens=info["special_tokens"]
    )
    text = corpus[1][0]
    ours = byte_tokenizer.encode(text)
    assert from_hf.encode(text) == from_tiktoken.encode(text) == ours
    assert from_hf.special_tokens == from_tiktoken.special_tokens == byte_tokenizer.special_tokens


@pytest.mark.data
def test_no_pattern_exports_the_whole_text_as_one_piece(corpus, tmp_path):
    tokenizer = bytepair.train(corpus[0][:100_000], mode="byte", vocab_size=400)
    encoding = tiktoken_encoding(tokenizer, tmp_path / "t.tiktoken")
    to_huggingface(tokenizer, tmp_path / "tokenizer.json")
    reference = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    text = corpus[1][0][:20_000]
    assert (
        encoding.encode_ordinary(text) == tokenizer.encode(text) == reference.encode(text, add_special_tokens=False).ids
    )


def assert_exported_files_split_alike(tokenizer, texts, tmp_path):
    """tiktoken and HF tokenizers on the exported files, and the HF file loaded back, cut each
    text into the tokenizer's own pieces and give its ids."""
    encoding = tiktoken_encoding(tokenizer, tmp_path / "t.tiktoken")
    to_huggingface(tokenizer, tmp_path / "tokenizer.json")
    reference = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    back = bytepair.load("mine", path=tmp_path / "tokenizer.json")
    for text in texts:
        ours = tokenizer.encode(text)
        pieces = [piece for piece, _ in reference.pre_tokenizer.pre_tokenize_str(text)]
        assert pieces == [bytes_to_readable(piece.encode()) for piece in tokenizer.split(text)], text
        assert reference.encode(text, add_special_tokens=False).ids == ours, text
        assert encoding.encode_ordinary(text) == ours, text
        assert back.encode(text) == ours, text
        assert encoding.decode(ours) == reference.decode(ours) == text


@pytest.mark.parametrize("pattern", [r"\w+", r"[a-z]+|\d", r"(?i:[aeiou]+)"])
def test_text_a_custom_regex_leaves_between_matches_is_kept_in_both_files(pattern, tmp_path):
    # bytepair keeps that text as pieces of its own; tiktoken and HF keep only matches
    tokenizer = bytepair.train(
        "hello world, hello there! 42 Hello\n" * 40, mode="byte", vocab_size=280, pattern=pattern
    )
    assert_exported_files_split_alike(tokenizer, ["hello world, hi!", MIXED, "  \n\n 12 ab--cd ", "!!!"], tmp_path)


# Custom patterns whose anchors and sets Oniguruma (HF) and fancy-regex (tiktoken) read otherwise
# than the regex module: ^ and $ at every line there, \Z before a final newline in HF, a "[" or
# "&&" in a set as a nested set or an intersection.
ANCHORED_PATTERNS = [
    r"^\w\w|\w+$|\w|\s+|[^\w\s]+",
    r"\w+\Z|\w|\s+|[^\w\s]+",
    r"[[a-z]+|\s+|[^\s[a-z]]+",
    r"[a-z&&]+|\s+|[^a-z\s&]+",
]


@pytest.mark.parametrize("pattern", ANCHORED_PATTERNS)
def test_anchors_and_sets_of_a_custom_regex_split_alike_in_both_files(pattern, tmp_path):
    lines = "ab cd\nab\n[ab] x&&y ab\ncd ab\n"
    tokenizer = bytepair.train(lines * 40, mode="byte", vocab_size=290, pattern=pattern)
    assert_exported_files_split_alike(tokenizer, [lines, "ab\ncd\n", "ab\ncd", "[[ab&&cd]]\n\nab", "x\n"], tmp_path)


@pytest.mark.parametrize(
    ("pattern", "named"),
    [
        (r"\w*", "matches the empty string"),
        (r"\w+|(?=,)", "matches the empty string"),
        (r"\h+|\S+", repr("\\h")),
        (r"[[:alpha:]]+|\s+", repr("[:alpha:]")),
        (r"(?s)\w.|\s", repr("(?s)")),
        (r"(?m)^\w+|\W", repr("(?m)")),
        (r"\m\w+|\W", repr("\\m")),
        (r"\X", repr("\\X")),
        (r"(?P<a>\w)(?P=a)|\w|\W", repr("(?P=")),
        (r"\g<1>|(\w)|\W", repr("\\g")),
        (r"(?i)\p{Lu}+|\W", repr("\\p{Lu}")),
        (r"(?i:[\p{Lt}]+)|\w|\W", repr("\\p{Lt}")),
    ],
)
def test_a_custom_regex_the_files_would_read_otherwise_is_refused_by_name(pattern, named, tmp_path):
    tokenizer = bytepair.train("ab cd, ef\n" * 40, mode="byte", vocab_size=270, pattern=pattern)
    for export in (to_huggingface, to_tiktoken):
        with pytest.raises(FormatError, match=re.escape(named)):
            export(tokenizer, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_full_case_folding_exports_to_hf_and_is_refused_for_tiktoken(tmp_path):
    # what bytepair reads an HF tokenizer.json's (?i) as; tiktoken's engine refuses the flag
    pattern = r"(?fi:'s|'t)|\w+|\s+|[^\w\s]+"
    tokenizer = bytepair.train("It's Tom's STRASSE straße 'S\n" * 40, mode="byte", vocab_size=280, pattern=pattern)
    with pytest.raises(FormatError, match=re.escape("'(?fi:'") + ".*full case folding.*save_pretrained"):
        to_tiktoken(tokenizer, tmp_path / "t.tiktoken")
    assert not (tmp_path / "t.tiktoken").exists()
    to_huggingface(tokenizer, tmp_path / "tokenizer.json")
    reference = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in ["IT'S", "ſ's 'T straße", "Tom'S"]:
        assert reference.encode(text, add_special_tokens=False).ids == tokenizer.encode(text), text


# Escapes and groups of the regex module that HF (Oniguruma) or tiktoken spell otherwise: HF
# read \U0001F300 and \N{..} as letters, split text at \p{\AL} and could not read (?P<w>.
SPELLED_PATTERNS = [
    r"[\U0001F300-\U0001FAFF]+|\w+|\s+",
    r"\U0001F600+|\N{GREEK SMALL LETTER ALPHA}+|\w+|\s+",
    r"\p{^L}+|\p{L}+",
    r"\pL+|\P{^N}+",
    r"(?P<word>\w+)|\s+",
    r"(?i:'s|'t)|\p{Lu}?\p{Ll}+|\p{N}+",
    r"(?i:(?-i:\p{Lu})+|\w+)|\W",
]


@pytest.mark.parametrize("pattern", SPELLED_PATTERNS)
def test_code_points_properties_and_named_groups_of_a_custom_regex_split_alike_in_both_files(pattern, tmp_path):
    text = "Hello wörld 😀😀🌍 🪐x αααβγ ΑΒ 12 x\r\ny's 'T\n"
    tokenizer = bytepair.train(text * 30, mode="byte", vocab_size=300, pattern=pattern)
    assert_exported_files_split_alike(tokenizer, [text, "😀a🌍", "ααα😀", "Ab12 🪐"], tmp_path)


@pytest.mark.parametrize("pattern", [r"\w+|\s+|[^\w\s]+", r"[^\W\d]+|\d+|\W"])
def test_zero_width_joiners_are_word_characters_in_the_exported_regex_too(pattern, tmp_path):
    # Oniguruma's \w leaves out U+200C and U+200D, which the regex module's and tiktoken's keep
    # in words (Persian, Malayalam, emoji sequences); the file spells them out
    words = "می\u200cخواهم ab\u200dcd കേരള\u200dം 👩\u200d💻 x\u200cy 42"
    tokenizer = bytepair.train((words + "\n") * 30, mode="byte", vocab_size=300, pattern=pattern)
    assert_exported_files_split_alike(tokenizer, [words, "ab\u200dcd", "\u200c\u200d!", "ab \u200d"], tmp_path)


@pytest.fixture(scope="module")
def exported(byte_tokenizer, tmp_path_factory):
    """(tiktoken Encoding, HF Tokenizer) read from the files written for ``byte_tokenizer``."""
    folder = tmp_path_factory.mktemp("exported")
    info = to_tiktoken(byte_tokenizer, folder / "t.tiktoken")
    ranks = read_with_tiktoken(folder / "t.tiktoken")
    to_huggingface(byte_tokenizer, folder / "tokenizer.json")
    return tiktoken.Encoding("exported", mergeable_ranks=ranks, **info), tokenizers.Tokenizer.from_file(
        str(folder / "tokenizer.json")
    )


ODD = list(" \t\n\r\x0b\x0c\x85\xa0\u2000\u2028\u3000\u200b'sStdmlLvreE1234567890.,!?/\\-") + [
    "\r\n",
    "  ",
    "\n\n",
    "'s",
    "'ll",
    "\U0001f600",
    "é",
    "e\u0301",
    "人",
    "<|pad|>",
    "<|endoftext|>",
]
# Cn excluded: HF's regex engine has older Unicode tables than tiktoken and bytepair, so
# characters assigned since (e.g. the digits U+11DE0..) split differently there.
random_text = st.lists(
    st.one_of(st.sampled_from(ODD), st.characters(blacklist_categories=("Cs", "Cn"))), max_size=50
).map("".join)


@pytest.mark.data
@settings(max_examples=200, deadline=None)
@given(text=random_text)
def test_random_text_in_both_exported_files(byte_tokenizer, exported, text):
    encoding, reference = exported
    ours = byte_tokenizer.encode(text, allowed_special="all")
    assert encoding.encode(text, allowed_special="all") == ours
    assert reference.encode(text, add_special_tokens=False).ids == ours


# -- character mode and normalization --------------------------------------------------------------


@pytest.fixture(scope="module")
def char_tokenizers(wikitext_valid):
    text = wikitext_valid[:200_000]
    alphabet = wikitext_valid + "|"
    return {
        "seed 000 (no pattern)": bytepair.train(text, mode="char", vocab_size=600, base_text=alphabet),
        "gpt2 pattern, specials": bytepair.train(
            text, mode="char", vocab_size=600, pattern="gpt2", special_tokens=SPECIALS, base_text=alphabet
        ),
        "byte fallback": bytepair.train(text, mode="char", vocab_size=600, pattern="llama3", byte_fallback=True),
    }


@pytest.mark.data
@pytest.mark.parametrize("case", ["seed 000 (no pattern)", "gpt2 pattern, specials", "byte fallback"])
def test_character_level_exports_to_huggingface(char_tokenizers, wikitext_valid, tmp_path, case):
    tokenizer = char_tokenizers[case]
    to_huggingface(tokenizer, tmp_path / "tokenizer.json", drop_unknown=not tokenizer.byte_fallback)
    reference = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    texts = [wikitext_valid[300_000:330_000], "the  cat\n\n sat = 3 @,@ 000 <|pad|>"]
    if tokenizer.byte_fallback:
        texts.append("unknown: 你好 🌍 ﬁ")
    for text in texts:
        allowed = "all" if tokenizer.special_tokens else set()
        ours = tokenizer.encode(text, allowed_special=allowed)
        assert reference.encode(text, add_special_tokens=False).ids == ours
        assert reference.decode(ours, skip_special_tokens=False) == text


@pytest.mark.data
def test_character_level_without_byte_fallback_is_not_exported_silently_lossy(char_tokenizers, tmp_path):
    tokenizer = char_tokenizers["seed 000 (no pattern)"]
    with pytest.raises(FormatError, match="silently drop every other character"):
        to_huggingface(tokenizer, tmp_path / "tokenizer.json")
    assert not (tmp_path / "tokenizer.json").exists()
    with pytest.raises(FormatError, match="silently drop"):
        tokenizer.save_pretrained(tmp_path / "folder")
    tokenizer.save_pretrained(tmp_path / "folder", drop_unknown=True)
    reference = tokenizers.Tokenizer.from_file(str(tmp_path / "folder" / "tokenizer.json"))
    assert reference.encode("the cat", add_special_tokens=False).ids == tokenizer.encode("the cat")


@pytest.mark.data
def test_character_level_cannot_be_a_tiktoken_file(char_tokenizers, tmp_path):
    with pytest.raises(FormatError, match="character-level"):
        to_tiktoken(char_tokenizers["seed 000 (no pattern)"], tmp_path / "t.tiktoken")
    assert not (tmp_path / "t.tiktoken").exists()


@pytest.mark.data
def test_normalization_exports_to_huggingface_but_not_tiktoken(corpus, tmp_path):
    tokenizer = bytepair.train(corpus[0][:100_000], mode="byte", vocab_size=400, pattern="cl100k", normalization="NFKC")
    with pytest.raises(FormatError, match="NFKC"):
        to_tiktoken(tokenizer, tmp_path / "t.tiktoken")
    to_huggingface(tokenizer, tmp_path / "tokenizer.json")
    reference = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    text = "ﬁne ｆｕｌｌ width ² and e\u0301 " + corpus[1][0][:5000]
    assert reference.encode(text, add_special_tokens=False).ids == tokenizer.encode(text)


# -- vocabularies loaded from the libraries' files ----------------------------------------------------


@pytest.mark.data
def test_a_loaded_tiktoken_vocabulary_writes_back_the_published_file(tmp_path):
    tokenizer = bytepair.load("cl100k_base", path=data_file("vocab"))
    to_tiktoken(tokenizer, tmp_path / "cl100k_base.tiktoken")
    expected = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"  # tiktoken's hash
    assert hashlib.sha256((tmp_path / "cl100k_base.tiktoken").read_bytes()).hexdigest() == expected
    with pytest.raises(FormatError, match="tiktoken's rule"):
        to_huggingface(tokenizer, tmp_path / "tokenizer.json")


@pytest.mark.slow
@pytest.mark.data
def test_a_loaded_hf_vocabulary_writes_back_a_file_with_the_same_ids(tmp_path):
    tokenizer = bytepair.load("llama3", path=data_file("vocab"))
    to_huggingface(tokenizer, tmp_path / "tokenizer.json")
    original = tokenizers.Tokenizer.from_file(str(data_file("vocab/hf/llama3/tokenizer.json")))
    written = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    text = MIXED + data_file("wikitext-2/valid.txt").read_text(encoding="utf-8")[:50_000]
    assert written.encode(text, add_special_tokens=False).ids == original.encode(text, add_special_tokens=False).ids
    with pytest.raises(FormatError, match="HF's rule"):
        to_tiktoken(tokenizer, tmp_path / "t.tiktoken")


# -- where the libraries' rules differ from replay ------------------------------------------------------


def hand_made(*merges, pattern=None):
    return Tokenizer(mode="byte", merges=[(a.encode(), b.encode()) for a, b in merges], pattern=pattern)


def strings(alphabet, longest):
    return ["".join(p) for n in range(1, longest + 1) for p in itertools.product(alphabet, repeat=n)]


def hf_ids_of(tokenizer, texts, tmp_path):
    """What HF gives for a file written WITHOUT the exporter's check."""
    import json

    path = tmp_path / "unchecked.json"
    path.write_text(json.dumps(huggingface_json(tokenizer)), encoding="utf-8")
    reference = tokenizers.Tokenizer.from_file(str(path))
    return [e.ids for e in reference.encode_batch(texts, add_special_tokens=False)]


def test_a_pair_learned_twice_is_refused_for_hf_which_keeps_the_last_rank(tmp_path):
    tokenizer = hand_made(("b", "a"), ("a", "b"), ("b", "a"))
    # Replay: "b"+"a" first -> [a, ba]; HF ranks ("b","a") at its last line, after ("a","b").
    assert tokenizer.encode("aba") == [97, 256]
    assert hf_ids_of(tokenizer, ["aba"], tmp_path) == [[257, 97]]
    with pytest.raises(FormatError, match="merge 2 .*repeats an earlier merge"):
        to_huggingface(tokenizer, tmp_path / "tokenizer.json")
    assert not (tmp_path / "tokenizer.json").exists()


def test_a_rebuilt_value_used_as_a_half_before_is_refused_for_hf(tmp_path):
    # "aaa" is built by merge 1, used by merges 2 and 3, then rebuilt by merge 4: after merge 4
    # HF merges ("b", "aaa") again (rank 2), which replay has already passed.
    tokenizer = hand_made(("a", "a"), ("a", "aa"), ("b", "aaa"), ("aaa", "aaa"), ("aa", "a"))
    assert tokenizer.encode("bbaaa") == [98, 98, 257]
    assert hf_ids_of(tokenizer, ["bbaaa"], tmp_path) == [[98, 258]]
    with pytest.raises(FormatError, match="merge 4 .*builds b'aaa' again.*merge 2"):
        to_huggingface(tokenizer, tmp_path / "tokenizer.json")


def test_a_harmless_rebuilt_value_exports_to_hf(tmp_path):
    # "abc" is built twice, but nothing used it as a half in between: HF agrees everywhere.
    tokenizer = hand_made(("a", "b"), ("b", "c"), ("ab", "c"), ("a", "bc"), ("abc", "a"))
    to_huggingface(tokenizer, tmp_path / "tokenizer.json")
    reference = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    texts = strings("abc", 7)
    assert [e.ids for e in reference.encode_batch(texts, add_special_tokens=False)] == [
        tokenizer.encode(t) for t in texts
    ]


def test_a_rebuilt_value_is_refused_for_tiktoken(tmp_path):
    tokenizer = hand_made(("b", "b"), ("b", "bb"), ("bb", "b"), ("b", "bbb"))
    ranks = {value: i for i, value in enumerate(tokenizer.model.token_bytes)}
    encoding = tiktoken.Encoding("unchecked", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={})
    # tiktoken finds "bbbb" whole; replay never builds it from ["bb", "bb"].
    assert tokenizer.encode("bbbb") == [256, 256]
    assert encoding.encode("bbbb") == [258]
    with pytest.raises(FormatError, match="merge 2 .*builds b'bbb' again"):
        to_tiktoken(tokenizer, tmp_path / "t.tiktoken")
    assert not (tmp_path / "t.tiktoken").exists()


def test_special_tokens_where_one_begins_another_are_refused_for_tiktoken_but_fine_for_hf(tmp_path):
    # bytepair takes the longest special token at a place; tiktoken tries them in a hash map's
    # order, so "<a><b>" may come out as "<a>" and text
    tokenizer = hand_made(("a", "b"))
    tokenizer.add_special_tokens(["<a>", "<a><b>"])
    assert tokenizer.encode("<a><b>", allowed_special="all") == [tokenizer.special_tokens["<a><b>"]]
    with pytest.raises(FormatError, match="special tokens '<a>' and '<a><b>': the first begins the second"):
        to_tiktoken(tokenizer, tmp_path / "t.tiktoken")
    assert not (tmp_path / "t.tiktoken").exists()
    tokenizer.save_pretrained(tmp_path / "hf")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    assert hf.encode("<a><b>x<a>").ids == tokenizer.encode("<a><b>x<a>", allowed_special="all")


def test_a_token_that_replay_cannot_reach_is_refused_for_tiktoken_but_fine_for_hf(tmp_path):
    tokenizer = hand_made(("a", "a"), ("a", "aa"))
    ranks = {value: i for i, value in enumerate(tokenizer.model.token_bytes)}
    encoding = tiktoken.Encoding("unchecked", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={})
    assert tokenizer.encode("aaa") == [256, 97]  # replay: ("a","a") first, then ("a","aa") never meets
    assert encoding.encode("aaa") == [257]  # tiktoken: the whole piece is a token
    with pytest.raises(FormatError, match="token 257 .*b'aaa'"):
        to_tiktoken(tokenizer, tmp_path / "t.tiktoken")
    to_huggingface(tokenizer, tmp_path / "tokenizer.json")
    reference = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    texts = strings("ab", 8)
    assert [e.ids for e in reference.encode_batch(texts, add_special_tokens=False)] == [
        tokenizer.encode(t) for t in texts
    ]


@pytest.mark.data
def test_trained_tokenizers_pass_both_checks(byte_tokenizer, tmp_path):
    to_tiktoken(byte_tokenizer, tmp_path / "t.tiktoken")
    to_huggingface(byte_tokenizer, tmp_path / "tokenizer.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.tiktoken", "tokenizer.json"]  # no temporary files left
