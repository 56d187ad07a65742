"""Hugging Face ``tokenizer.json`` files loaded by bytepair give HF tokenizers' ids.

Oracle: ``tokenizers.Tokenizer.from_file(...).encode(text, add_special_tokens=False).ids`` on
the same file. Files: Llama 3 and GPT-4o from ``$BYTEPAIR_DATA/vocab/hf``, and GPT-2 in HF's
own layout (``ByteLevel`` with GPT-2's regex), written by HF from GPT-2's encoder.json and
vocab.bpe. Unsupported features are refused with a ``FormatError`` naming the field.
"""

from __future__ import annotations

import copy
import json
import re
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given, settings

import bytepair
from bytepair.bytelevel import BYTE_TO_CHAR
from bytepair.errors import FormatError
from bytepair.formats.huggingface import tokenizer_from_json
from bytepair.patterns import PATTERNS, keep_gaps
from datafiles import data_file
from generated import code_point_texts, random_texts

tokenizers = pytest.importorskip("tokenizers")

pytestmark = pytest.mark.peers

NAMED_STRINGS = {
    "empty": "",
    "hello": "hello world",
    "spaces": "a  b   c    d   ",
    "crlf runs": "line\r\n\r\n\r\nnext\n\n\n \n",
    "tabs and nbsp": "\tx\t\ty\u00a0z\u3000w\u2009v",
    "contractions": "I'm sure they'll say it's what we'd've DONE'S",
    "numbers": "1 12 123 1234 12345 3.14159 ١٢٣ ½",
    "cjk": "人人生而自由，在尊严和权利上一律平等。",
    "emoji": "hi 😀😀 👍🏽 👨‍👩‍👧 ok",
    "code": "def f(x):\n    return x**2  # square\n\n\nprint(f(3))\r\n",
    "long run": "a" * 3000,
    "long spaces": " " * 2000 + "x",
}
PUBLISHED = {"llama3": [15339, 1917], "gpt4o": [24912, 2375]}


def hf_ids(reference, text):
    return reference.encode(text, add_special_tokens=False).ids


@pytest.fixture(scope="module")
def gpt2_hf_file(tmp_path_factory):
    """GPT-2 as HF lays it out: BPE from encoder.json + vocab.bpe, ByteLevel pre-tokenizer."""
    folder = data_file("vocab/gpt2")
    model = tokenizers.models.BPE.from_file(str(folder / "encoder.json"), str(folder / "vocab.bpe"))
    reference = tokenizers.Tokenizer(model)
    reference.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    reference.decoder = tokenizers.decoders.ByteLevel()
    reference.add_special_tokens(["<|endoftext|>"])
    path = tmp_path_factory.mktemp("gpt2-hf") / "tokenizer.json"
    reference.save(str(path))
    return path


@pytest.fixture(scope="module")
def pairs(gpt2_hf_file):
    """name -> (bytepair tokenizer, HF tokenizer), both from the same file."""
    files = {
        "llama3": data_file("vocab/hf/llama3/tokenizer.json"),
        "gpt4o": data_file("vocab/hf/gpt4o/tokenizer.json"),
        "gpt2-hf": gpt2_hf_file,
    }
    return {
        name: (bytepair.load(name, path=path), tokenizers.Tokenizer.from_file(str(path)))
        for name, path in files.items()
    }


def assert_same(tokenizer, reference, text, what):
    ours = tokenizer.encode_ordinary(text)
    theirs = hf_ids(reference, text)
    if ours != theirs:
        first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
        pytest.fail(
            f"{what}: ids differ at token {first}: ours {ours[first : first + 5]} vs HF {theirs[first : first + 5]}"
        )
    assert tokenizer.decode(ours) == reference.decode(theirs, skip_special_tokens=False)


NAMES = ["llama3", "gpt4o", "gpt2-hf"]


# -- published checks, shapes, small strings --------------------------------------------------


@pytest.mark.data
@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_hello_world(pairs, name):
    tokenizer, reference = pairs[name]
    assert tokenizer.encode("hello world") == PUBLISHED[name] == hf_ids(reference, "hello world")


@pytest.mark.data
def test_the_rules_each_file_asks_for(pairs):
    llama3, gpt4o, gpt2 = (pairs[name][0] for name in NAMES)
    assert (llama3.pattern_name, llama3.model.ignore_merges) == ("llama3", True)  # ignore_merges: whole piece first
    assert (gpt4o.pattern_name, gpt4o.model.ignore_merges) == ("o200k", False)
    assert (gpt2.pattern_name, gpt2.model.ignore_merges) == ("gpt2", False)
    assert all(tok.rule == "hf" for tok in (llama3, gpt4o, gpt2))


@pytest.mark.data
@pytest.mark.parametrize("name", NAMES)
def test_added_tokens_are_special_tokens_with_their_ids(pairs, name):
    tokenizer, reference = pairs[name]
    added = {token.content: token_id for token_id, token in reference.get_added_tokens_decoder().items()}
    assert tokenizer.special_tokens == added
    specials = sorted(added)[:6]
    text = "start " + " middle ".join(specials) + specials[0] + " end"
    ours = tokenizer.encode(text, allowed_special="all")
    assert ours == hf_ids(reference, text)
    assert tokenizer.decode(ours) == reference.decode(ours, skip_special_tokens=False) == text


@pytest.mark.data
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", list(NAMED_STRINGS))
def test_named_strings(pairs, name, case):
    tokenizer, reference = pairs[name]
    assert_same(tokenizer, reference, NAMED_STRINGS[case], case)


@pytest.mark.data
def test_gpt2_in_hf_layout_equals_gpt2_from_tiktoken_files(pairs):
    tokenizer, _ = pairs["gpt2-hf"]
    tiktoken_gpt2 = bytepair.load("gpt2", path=data_file("vocab/gpt2.tiktoken"))
    text = data_file("wikitext-2/valid.txt").read_text(encoding="utf-8")[:200_000]
    assert tokenizer.encode_ordinary(text) == tiktoken_gpt2.encode_ordinary(text)


# -- real corpora -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def udhr():
    folder = data_file("multilingual/udhr")
    files = sorted(folder.glob("*.txt"))
    assert len(files) >= 400, f"{folder}: expected the 460 UDHR files, found {len(files)}"
    return [(path.stem, path.read_text(encoding="utf-8")) for path in files]


def mismatches(tokenizer, reference, texts):
    ours = tokenizer.encode_batch([text for _, text in texts])
    theirs = [
        encoding.ids for encoding in reference.encode_batch([text for _, text in texts], add_special_tokens=False)
    ]
    return [name for (name, _), a, b in zip(texts, ours, theirs) if a != b]


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.parametrize("name", ["llama3", "gpt4o"])
def test_every_udhr_language(pairs, udhr, name):
    tokenizer, reference = pairs[name]
    bad = mismatches(tokenizer, reference, udhr)
    assert not bad, f"{len(bad)} of {len(udhr)} languages differ: {bad[:20]}"


@pytest.mark.data
@pytest.mark.parametrize("name", NAMES)
def test_wikitext2_valid(pairs, wikitext_valid, name):
    tokenizer, reference = pairs[name]
    assert_same(tokenizer, reference, wikitext_valid, "wikitext-2 valid")


@pytest.mark.data
@pytest.mark.parametrize("name", ["llama3", "gpt4o"])
def test_python_docs_slice(pairs, name):
    text = data_file("english/python-3.11-docs.txt").read_text(encoding="utf-8")
    tokenizer, reference = pairs[name]
    middle = len(text) // 2
    assert_same(tokenizer, reference, text[:400_000] + text[middle : middle + 400_000], "python docs (800k characters)")


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.parametrize("name", ["llama3", "gpt4o"])
def test_python_docs_whole(pairs, name):
    text = data_file("english/python-3.11-docs.txt").read_text(encoding="utf-8")
    tokenizer, reference = pairs[name]
    assert_same(tokenizer, reference, text, "python docs")


@pytest.mark.data
@pytest.mark.slow  # HF itself needs about 10 s per vocabulary here
@pytest.mark.parametrize("name", ["llama3", "gpt4o"])
def test_stdlib_code(pairs, name):
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts)[::10]
    texts = [(str(p.relative_to(root)), p.read_text(encoding="utf-8", errors="replace")) for p in files]
    tokenizer, reference = pairs[name]
    bad = mismatches(tokenizer, reference, texts)
    assert not bad, f"{len(bad)} of {len(texts)} files differ: {bad[:20]}"


# -- random text --------------------------------------------------------------------------------

# Any character, unassigned ones included: the scanner takes HF's (Oniguruma's) Unicode tables
# for its files (test_every_assigned_code_point_encodes_like_hf checks them all).
random_text = random_texts()


@pytest.mark.data
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300, deadline=None)
@given(text=random_text)
def test_random_unicode(pairs, name, text):
    tokenizer, reference = pairs[name]
    assert_same(tokenizer, reference, text, "random text")


@pytest.mark.data
def test_digits_newer_than_oniguruma_split_like_hf(pairs):
    tokenizer, reference = pairs["llama3"]
    text = " \U00011de0"  # a space, then a digit of Unicode 17, unassigned in Oniguruma's 16.0
    assert tokenizer.encode(text) == hf_ids(reference, text)
    assert tokenizer.split(text) == [text]  # not a number: ?[^\s\p{L}\p{N}]+ takes the space too


# Each code point alone, after a letter, a digit and a space, and before "'s" and "123", tokens
# that a wrong class splits (so that ids show it; see test_against_tiktoken.CONTEXTS).
CONTEXTS = ["{}", "a{}", "1{}", " {}", "{}'s", "{}123"]


@pytest.mark.data
@pytest.mark.slow
def test_every_assigned_code_point_encodes_like_hf(pairs):
    tokenizer, reference = pairs["llama3"]
    bad = []
    for points, text in code_point_texts(CONTEXTS):
        if tokenizer.encode(text) != hf_ids(reference, text):
            bad += [
                f"U+{c:04X} in {context!r}"
                for c in points
                for context in CONTEXTS
                if tokenizer.encode(context.format(chr(c))) != hf_ids(reference, context.format(chr(c)))
            ]
    assert not bad, f"{len(bad)} code points in context differ from HF tokenizers: {bad[:20]}"


# -- what is refused ------------------------------------------------------------------------------


def small_file():
    """A minimal byte-level BPE tokenizer.json, in the Llama 3 layout."""
    vocab = {BYTE_TO_CHAR[b]: b for b in range(256)}
    vocab.update({"Ġt": 256, "he": 257, "Ġthe": 258})
    return {
        "version": "1.0",
        "added_tokens": [
            {
                "id": 259,
                "content": "<|end|>",
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": r"\s?\w+|\s+|[^\s\w]+"},
                    "behavior": "Isolated",
                    "invert": False,
                },
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": ["Ġ t", "h e", "Ġt he"],
        },
    }


def test_a_small_custom_file_matches_hf(tmp_path):
    content = small_file()
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    tokenizer = bytepair.load("small", path=path)
    reference = tokenizers.Tokenizer.from_file(str(path))
    for text in ["the cat, then the end", " the  the\n\nthe", "x<|end|>y the<|end|>"]:
        assert tokenizer.encode(text, allowed_special="all") == hf_ids(reference, text)


def test_merges_as_lists_read_like_strings():
    content = small_file()
    as_lists = copy.deepcopy(content)
    as_lists["model"]["merges"] = [merge.split(" ") for merge in content["model"]["merges"]]
    a, b = tokenizer_from_json(content), tokenizer_from_json(as_lists)
    assert a.encode("the theme") == b.encode("the theme") == [116, 257, 258, 109, 101]  # "t"+"he", " the"+"m"+"e"


# -- custom Split regexes: read as HF's engine (Oniguruma) reads them ---------------------------

# Text that Oniguruma and the regex module split differently under the patterns below: joiners
# in Persian, Malayalam and emoji words, "²" and "½" (word characters to Oniguruma outside a
# set), several lines, "ß" against "ss", the Turkish I's, Arabic-Indic digits.
ONIGURUMA_TEXT = (
    "x²y ab¹ ½c می\u200cخواهم കേരള\u200dം 👩\u200d💻\nab\ncd  \nef\n İstanbul ıi STRASSE straße ß 'S\n"
    "xY 12345 1234567 deadBEEF ١٢٣ a-b, [x] (y)!\t\x1b e\u0301 end\n"
)
# Each pattern means something else to the regex module, for the reason its name gives.
ONIGURUMA_PATTERNS = {
    "\\w without joiners, with ²": r"\w+|\s+|[^\w\s]+",
    "\\W in a set": r"[^\W\d_]+|\d+|\s+|.",
    "\\b": r"\b\w+\b|\S|\s+",
    "$ at each line": r" ?\w+| ?[^\s\w]+|\s+$|\s+",
    "^ and \\Z": r"^.|\w+\Z|\w|\W",
    "{1,3}+ repeated": r"\p{N}{1,3}+|\p{L}+|\s+|.",
    "(?m) is dotall": r"(?m)\w.{1,3}|\s",
    "(?i) folds ß and I": r"(?i)ss|[a-z]+|\s+|\S",
    "(?i) to the group's end": r"(?:x(?i)y|ab)|\w+|\W",
    "(?i) leaves \\p{Lu}": r"(?i)\p{Lu}+|\w+|\W",
    "\\h is hexadecimal": r"\h+|\H",
    "POSIX classes": r"[[:digit:]]+|[[:punct:]]+|[[:alnum:]]+|\s+|.",
    "a set in a set": r" ?[^(\s|[.,!?…])]+|\s+|.",
    "\\p{Word}": r"\p{Word}+|\p{XDigit}|\s+|.",
}


def custom_file(regex_text, folder, **split):
    """``small_file`` with ``regex_text`` as its Split regex, written to ``folder``."""
    content = small_file()
    content["pre_tokenizer"]["pretokenizers"][0].update(pattern={"Regex": regex_text}, **split)
    path = folder / "tokenizer.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    return path


def hf_pieces(reference, text):
    return [text[start:end] for _, (start, end) in reference.pre_tokenizer.pre_tokenize_str(text)]


@pytest.mark.parametrize("case", list(ONIGURUMA_PATTERNS))
def test_a_custom_split_regex_splits_as_hf_reads_it(case, tmp_path):
    path = custom_file(ONIGURUMA_PATTERNS[case], tmp_path)
    tokenizer, reference = bytepair.load("custom", path=path), tokenizers.Tokenizer.from_file(str(path))
    assert tokenizer.split(ONIGURUMA_TEXT) == hf_pieces(reference, ONIGURUMA_TEXT)
    assert tokenizer.encode(ONIGURUMA_TEXT) == hf_ids(reference, ONIGURUMA_TEXT)
    # and written back, HF reads the same pattern again
    (tmp_path / "again").mkdir()
    tokenizer.to_huggingface(tmp_path / "again" / "tokenizer.json")
    again = tokenizers.Tokenizer.from_file(str(tmp_path / "again" / "tokenizer.json"))
    assert hf_pieces(again, ONIGURUMA_TEXT) == hf_pieces(reference, ONIGURUMA_TEXT)


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.parametrize(
    "regex_text",
    [r"\w+|\s+|[^\w\s]+", r" ?\w+| ?[^\s\w]+|\s+$|\s+", r"\p{N}{1,3}+| ?\p{L}+| ?[^\s\p{L}\p{N}]+|\s+"],
)
def test_llama3_with_a_custom_split_regex_gives_hf_ids_in_every_udhr_language(udhr, regex_text, tmp_path):
    # 4, 1 and 162 of the 460 texts differed when the regex module read these patterns as its own
    content = json.loads(data_file("vocab/hf/llama3/tokenizer.json").read_text(encoding="utf-8"))
    content["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {"Regex": regex_text}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    bad = mismatches(bytepair.load("custom", path=path), tokenizers.Tokenizer.from_file(str(path)), udhr)
    assert not bad, f"{len(bad)} of {len(udhr)} languages differ: {bad[:20]}"


@pytest.mark.data
def test_cl100k_converted_by_transformers_gives_hf_ids(wikitext_valid, tmp_path):
    # transformers writes tiktoken's own cl100k regex, whose \p{N}{1,3}+ HF reads as runs of
    # any length ("1234" is one piece): read as tiktoken's cl100k, 161 of 460 UDHR texts differed
    convert = pytest.importorskip("transformers.convert_slow_tokenizer")
    vocab = data_file("vocab/cl100k_base.tiktoken")
    converter = convert.TikTokenConverter(vocab_file=str(vocab), pattern=PATTERNS["cl100k"])
    converter.converted().save(str(tmp_path / "tokenizer.json"))
    tokenizer = bytepair.load("converted", path=tmp_path / "tokenizer.json")
    reference = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in ["1234", "2024-01-15", "x 1644 y", wikitext_valid]:
        assert_same(tokenizer, reference, text, text[:20])


# Constructs that HF reads and bytepair does not translate for the regex module: refused, named.
UNTRANSLATED = {
    "extended mode": (r"(?x) \w+ | \s+", "(?x)"),
    "named backreference": (r"(?<a>\w)\k<a>|\w|\s", r"\k"),
    "absent operator": (r"(?~ab)|\s", "(?~"),
    "set intersection": (r"[\w&&[^\d]]+|\s|.", "&&"),
    "grapheme clusters": (r"\X", r"\X"),
    "a property named otherwise": (r"\p{IDC}+|.", r"\p{IDC}"),
    "a class folded in a set": (r"(?i)[\p{Lu}x]+|.", r"\p{Lu}"),
}


@pytest.mark.parametrize("case", list(UNTRANSLATED))
def test_split_regex_constructs_without_a_translation_are_refused_naming_them(case, tmp_path):
    regex_text, construct = UNTRANSLATED[case]
    path = custom_file(regex_text, tmp_path)
    tokenizers.Tokenizer.from_file(str(path))  # HF reads it
    with pytest.raises(FormatError, match=f"pre_tokenizer Split: pattern .* uses {re.escape(repr(construct))}"):
        bytepair.load("custom", path=path)


@pytest.mark.parametrize("regex_text", [r"\w+", keep_gaps(r"\w*")])
def test_a_removed_split_that_drops_text_is_refused(regex_text, tmp_path):
    # HF keeps only the matches: "," and " " have no ids there; keep_gaps(\w*) leaves them too
    path = custom_file(regex_text, tmp_path, behavior="Removed", invert=True)
    reference = tokenizers.Tokenizer.from_file(str(path))
    assert reference.decode(hf_ids(reference, "the cat, the end")) == "thecattheend"
    with pytest.raises(FormatError, match="Removed.*drops the text.*'Isolated'"):
        bytepair.load("custom", path=path)


REFUSED = {
    "normalizer": (lambda c: c.update(normalizer={"type": "NFC"}), "normalizer.*NFC"),
    "model type": (lambda c: c["model"].update(type="WordPiece"), "model.type.*WordPiece"),
    "dropout": (lambda c: c["model"].update(dropout=0.1), "dropout.*0.1"),
    "prefix": (lambda c: c["model"].update(continuing_subword_prefix="##"), "continuing_subword_prefix.*##"),
    "byte fallback": (lambda c: c["model"].update(byte_fallback=True), "byte_fallback"),
    "pre-tokenizer": (lambda c: c.update(pre_tokenizer={"type": "Whitespace"}), "pre_tokenizer.type.*Whitespace"),
    "prefix space": (
        lambda c: c["pre_tokenizer"]["pretokenizers"][1].update(add_prefix_space=True),
        "add_prefix_space",
    ),
    "split behaviour": (
        lambda c: c["pre_tokenizer"]["pretokenizers"][0].update(behavior="MergedWithNext"),
        "MergedWithNext",
    ),
    "lstrip": (lambda c: c["added_tokens"][0].update(lstrip=True), "<\\|end\\|>.*lstrip"),
    "char vocab": (lambda c: c["model"]["vocab"].update({"中": 300}), "'中'.*byte-to-unicode"),
    "missing byte": (lambda c: c["model"]["vocab"].pop("Ā"), "single-byte"),
    "merge outside vocab": (lambda c: c["model"]["merges"].append("Ġthe Ġthe"), "merge 3.*not in the vocab"),
    "bad merge": (lambda c: c["model"]["merges"].append("a b c"), "merge 3 is 'a b c'"),
    "bad split regex": (
        lambda c: c["pre_tokenizer"]["pretokenizers"][0].update(pattern={"Regex": "(unclosed"}),
        "^tokenizer.json: pre_tokenizer Split: pattern '\\(unclosed'",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_unsupported_features_raise_format_error_naming_them(case):
    change, message = REFUSED[case]
    content = small_file()
    change(content)
    with pytest.raises(FormatError, match=message):
        tokenizer_from_json(content)


def other_model(kind):
    """A small tokenizer of another kind, with the normalizer, pre-tokenizer and decoder that
    its kind ships with (BERT's WordPiece, a Metaspace Unigram, a whitespace WordLevel)."""
    models, normalizers, pre, decoders = (
        tokenizers.models,
        tokenizers.normalizers,
        tokenizers.pre_tokenizers,
        tokenizers.decoders,
    )
    if kind == "WordPiece":
        reference = tokenizers.Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, unk_token="[UNK]"))
        reference.normalizer, reference.pre_tokenizer = normalizers.BertNormalizer(), pre.BertPreTokenizer()
        reference.decoder = decoders.WordPiece()
    elif kind == "Unigram":
        reference = tokenizers.Tokenizer(models.Unigram([("<unk>", 0.0), ("\u2581a", -1.0), ("b", -2.0)], unk_id=0))
        reference.pre_tokenizer, reference.decoder = pre.Metaspace(), decoders.Metaspace()
    else:
        reference = tokenizers.Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
        reference.pre_tokenizer = pre.Whitespace()
    return reference


@pytest.mark.parametrize("kind", ["WordPiece", "Unigram", "WordLevel"])
def test_other_models_are_refused_for_their_model_not_their_normalizer(kind, tmp_path):
    path = tmp_path / "tokenizer.json"
    other_model(kind).save(str(path))
    with pytest.raises(FormatError, match=f"model.type' is '{kind}'; bytepair reads BPE models only$"):
        bytepair.load("other", path=path)


WRONG_TYPES = {
    "pretokenizers not a list": (lambda c: c["pre_tokenizer"].update(pretokenizers=1), "pretokenizers' is 1"),
    "split pattern a string": (
        lambda c: c["pre_tokenizer"]["pretokenizers"][0].update(pattern="x"),
        "Split 'pattern' is x",
    ),
    "split behavior a list": (
        lambda c: c["pre_tokenizer"]["pretokenizers"][0].update(behavior=[]),
        "behavior \\[\\] with",
    ),
    # "false" and 0 are not false to HF, which refuses them: they must not read as true here
    "invert a string": (
        lambda c: c["pre_tokenizer"]["pretokenizers"][0].update(invert="false"),
        "Split.invert' is 'false'",
    ),
    "use_regex a string": (
        lambda c: c["pre_tokenizer"]["pretokenizers"][1].update(use_regex="false"),
        "ByteLevel.use_regex' is 'false'",
    ),
    "ignore_merges a number": (lambda c: c["model"].update(ignore_merges=1), "model.ignore_merges' is 1"),
    "byte_fallback a string": (lambda c: c["model"].update(byte_fallback="false"), "model.byte_fallback' is 'false'"),
}


@pytest.mark.parametrize("case", list(WRONG_TYPES))
def test_fields_of_the_wrong_type_raise_format_error_naming_them(case):
    change, message = WRONG_TYPES[case]
    content = small_file()
    change(content)
    with pytest.raises(FormatError, match=f"^tokenizer.json: .*{message}"):
        tokenizer_from_json(content)


def test_truncated_file_is_a_format_error(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(small_file())[:-40], encoding="utf-8")
    with pytest.raises(FormatError, match="not valid JSON"):
        bytepair.load("x", path=path)
