"""Policy that keeps bytepair safe inside someone else's job: patterns that cannot hang or lose
text, special tokens that are never split, one surrogate rule, bounded arguments, and files from
anywhere refused with one line instead of a traceback.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import bytepair
from bytepair.errors import (
    ArtifactError,
    SpecialTokenError,
    ThreadCountError,
    TokenIdError,
    TrainingError,
)
from bytepair.patterns import PATTERNS, pre_tokenize_str, resolve_pattern, split
from bytepair.tokenizer import Tokenizer

TEXT = "the cat sat on the mat. the hat is flat, the bat is fat.\n" * 20
CATASTROPHIC = r"(a|aa)+$"
HANGING_TEXT = "a" * 40 + "b"  # 2**40 ways to split the a's before the match fails


def python(code, timeout=120):
    """Run ``code`` in a fresh interpreter; a hang fails the test at ``timeout`` seconds."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def cli(*args, stdin=None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "bytepair", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# --- 4. a catastrophic custom regex ends with a PatternError -------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        "bytepair.Tokenizer(mode='byte', pattern=PATTERN).encode(TEXT)",
        "bytepair.Tokenizer(mode='byte', pattern=PATTERN).split(TEXT)",
        "bytepair.Tokenizer(mode='byte', pattern=PATTERN).encode_batch([TEXT])",
        "bytepair.train(TEXT, mode='byte', vocab_size=260, pattern=PATTERN)",
        "bytepair.patterns.split(TEXT, PATTERN)",
    ],
)
@pytest.mark.slow
def test_catastrophic_pattern_raises_instead_of_hanging(call):
    result = python(f"""
        import bytepair, bytepair.patterns
        from bytepair.errors import PatternError
        PATTERN, TEXT = {CATASTROPHIC!r}, {HANGING_TEXT!r}
        try:
            {call}
        except PatternError as error:
            print("PatternError:", error)
    """)
    assert result.returncode == 0, result.stderr
    assert "PatternError:" in result.stdout
    assert repr(CATASTROPHIC) in result.stdout  # names the pattern
    assert "at character 0" in result.stdout  # and where in the text


@pytest.mark.slow
def test_catastrophic_pattern_error_names_the_position_after_the_good_part():
    result = python(f"""
        import bytepair
        from bytepair.errors import PatternError
        try:
            bytepair.patterns.split("bb " + {HANGING_TEXT!r}, r"b+|\\s|(a|aa)+$")
        except PatternError as error:
            print(error)
    """)
    assert "at character 3 " in result.stdout, result.stdout + result.stderr


def test_ctrl_c_interrupts_a_catastrophic_match():
    # The child restores Python's SIGINT handler (a background child may start with it ignored)
    # and reports KeyboardInterrupt; the match itself would run for hours.
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import signal, sys, bytepair.patterns
            signal.signal(signal.SIGINT, signal.default_int_handler)
            bytepair.patterns.MATCH_TIMEOUT = 3600.0
            print("ready", flush=True)
            try:
                bytepair.Tokenizer(mode="byte", pattern={CATASTROPHIC!r}).encode("a" * 60 + "b")
            except KeyboardInterrupt:
                print("interrupted", flush=True)
                sys.exit(3)
        """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "ready"
        import time

        time.sleep(1.0)  # let the match start
        child.send_signal(signal.SIGINT)
        output, _ = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 3 and "interrupted" in output


@pytest.mark.slow
def test_custom_patterns_split_long_text_exactly_as_one_finditer():
    # The time limit restarts the search every STRETCH_CHARS characters; the pieces must not change.
    import regex

    text = (TEXT + "x" * 100 + " ünïcode 123 ") * 400
    pattern = r"\w+|[^\w\s]+|\s+(?!\S)|\s"
    assert split(text, pattern) == [m.group() for m in regex.finditer(pattern, text)]


# --- 11. pattern names, and text a custom regex does not match ---------------------------------


@pytest.mark.parametrize(
    "spelling, name",
    [
        ("cl100k_base", "cl100k"),
        ("CL100K", "cl100k"),
        ("Cl100k_Base", "cl100k"),
        ("gpt4", "cl100k"),
        ("GPT2", "gpt2"),
        ("r50k_base", "gpt2"),
        ("p50k_base", "gpt2"),
        ("o200k_base", "o200k"),
        ("gpt4o", "o200k"),
        ("O200K", "o200k"),
        ("LLAMA3", "llama3"),
        ("gpt-2", "gpt2"),  # hyphens and underscores as people write them
        ("llama-3", "llama3"),
        ("o200k-base", "o200k"),
        ("cl100k-base", "cl100k"),
        ("GPT_4o", "o200k"),
    ],
)
def test_vocabulary_names_and_any_case_name_a_pattern(spelling, name):
    assert resolve_pattern(spelling) == (name, PATTERNS[name])
    tok = Tokenizer(mode="byte", pattern=spelling)
    assert tok.pattern_name == name
    assert tok.decode(tok.encode("hello world")) == "hello world"
    assert tok.split("hello world") == ["hello", " world"]


def test_training_with_a_vocabulary_name_as_pattern_trains_on_the_text():
    tok = bytepair.train(TEXT, mode="byte", vocab_size=270, pattern="cl100k_base")
    assert tok.pattern_name == "cl100k"
    assert tok.merges


@pytest.mark.parametrize(
    ("pattern", "suggestion"),
    [("cl100k_bas", "cl100k_base"), ("gpt-4o-mini", "gpt-4o"), ("o200", "o200k"), ("bogus", None)],
)
def test_a_misspelt_pattern_name_is_refused_not_taken_as_a_regex_for_that_word(tmp_path, pattern, suggestion):
    # taken as a regex, "cl100k_bas" matched nothing in the text: a tokenizer without the pattern asked for
    from bytepair.errors import PatternError
    from bytepair.formats import load_tiktoken, to_tiktoken

    hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
    message = re.escape(f"pattern {pattern!r} is not a pattern name{hint}; the names are 'gpt2', ")
    with pytest.raises(PatternError, match=message):
        bytepair.train(TEXT, mode="byte", vocab_size=270, pattern=pattern)
    to_tiktoken(bytepair.train(TEXT, mode="byte", vocab_size=270), tmp_path / "mine.tiktoken")
    with pytest.raises(PatternError, match=message):
        load_tiktoken(tmp_path / "mine.tiktoken", pattern=pattern)
    assert bytepair.train(TEXT, mode="byte", vocab_size=270, pattern=f"(?:{pattern})").pattern == f"(?:{pattern})"


@pytest.mark.parametrize("pattern", [r"\w+", r"[a-z]", r"cat|mat", r"x*"])
def test_text_outside_a_custom_regex_is_kept_as_its_own_pieces(pattern):
    text = "the cat, sat on 7 mats! ünï"
    tok = Tokenizer(mode="byte", pattern=pattern)
    pieces = tok.split(text)
    assert "".join(pieces) == text
    assert tok.decode(tok.encode(text)) == text
    assert "".join(split(text, pattern)) == text
    spans = [span for _, span in pre_tokenize_str(text, pattern)]
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))


def test_gaps_are_pieces_between_matches():
    assert split("hello, world!", r"\w+") == ["hello", ", ", "world", "!"]


def test_training_sees_the_gaps_too():
    # Before, a regex matching only letters dropped every space and comma from training.
    tok = bytepair.train("ab, ab, ab, ab, ab, ab", mode="char", vocab_size=8, pattern=r"[a-z]+")
    assert tok.decode(tok.encode("ab, ab")) == "ab, ab"
    assert (",", " ") in tok.merges


# --- 12. a bare string of special tokens is one token --------------------------------------------


def test_special_tokens_as_a_string_is_one_token():
    tok = Tokenizer(mode="byte", special_tokens="<|eot|>")
    assert list(tok.special_tokens) == ["<|eot|>"]
    trained = bytepair.train(TEXT + "<|eot|>", mode="byte", vocab_size=260, special_tokens="<|eot|>")
    assert list(trained.special_tokens) == ["<|eot|>"]
    assert trained.encode("<|eot|>", allowed_special="<|eot|>") == [trained.special_tokens["<|eot|>"]]
    tok.add_special_tokens("<|pad|>")
    assert list(tok.special_tokens) == ["<|eot|>", "<|pad|>"]


def test_allowed_and_disallowed_special_as_a_string_name_one_token():
    tok = Tokenizer(mode="byte", special_tokens=["<|eot|>", "<|pad|>"])
    # A string is not a set of its characters: "<" alone must stay ordinary text.
    assert tok.encode("a<b", disallowed_special="<|eot|>") == list(b"a<b")
    assert tok.encode("<|pad|>", allowed_special="<|pad|>") == [tok.special_tokens["<|pad|>"]]
    with pytest.raises(SpecialTokenError):
        tok.encode("x", allowed_special="<|nope|>")


@pytest.mark.parametrize("switch", ["allowed_special", "disallowed_special"])
@pytest.mark.parametrize("bad", [b"<|eot|>", {5}, {"<|eot|>", 5}, None])
def test_special_switches_that_are_not_strings_name_the_switch(switch, bad):
    # bytes are a set of ints: they failed inside the matching, or named no token at all
    tok = Tokenizer(mode="byte", special_tokens=["<|eot|>"])
    for call in (lambda: tok.encode("a", **{switch: bad}), lambda: tok.encode_batch(["a"], **{switch: bad})):
        with pytest.raises(SpecialTokenError, match=f"^{switch} must be 'all', a special token or a set of"):
            call()


@pytest.mark.parametrize("bad", [[""], [5], b"<|eot|>", {"<|a|>": -1}, {"<|a|>": "1"}, 7])
def test_bad_special_tokens_are_refused_clearly(bad):
    with pytest.raises(SpecialTokenError):
        Tokenizer(mode="byte", special_tokens=bad)
    with pytest.raises(SpecialTokenError):
        bytepair.train(TEXT, mode="byte", vocab_size=260, special_tokens=bad)


@pytest.mark.parametrize(
    ("token", "normalization", "message"),
    [
        ("<\ud800>", None, "holds a surrogate at 1"),
        ("<\ud83d\ude00>", None, "holds a surrogate at 1"),
        ("＜eot＞", "NFKC", "is '<eot>' after NFKC normalization"),
        ("<e\u0301>", "NFC", "after NFC normalization"),
    ],
)
def test_a_special_token_that_could_never_match_is_refused(token, normalization, message):
    # text is normalized before special tokens are matched, and a surrogate is not text
    with pytest.raises(SpecialTokenError, match=re.escape(message)):
        bytepair.train(TEXT, mode="byte", vocab_size=260, normalization=normalization, special_tokens=[token])
    tok = Tokenizer(mode="byte", normalization=normalization)
    with pytest.raises(SpecialTokenError, match=re.escape(message)):
        tok.add_special_tokens([token])
    assert tok.special_tokens == {}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"merges": [("a", "b", "c")]}, "merge 0 is ('a', 'b', 'c')"),
        ({"merges": ["ab"]}, "merge 0 is 'ab'"),
        ({"merges": None}, "merges must be a sequence"),
        ({"byte_fallback": "no"}, "byte_fallback must be True or False, not 'no'"),
        ({"base_tokens": ["\ud800", "a"]}, "is a lone surrogate"),
        ({"base_tokens": 3}, "base_tokens must be a str or a list of single characters, not 3"),
    ],
)
def test_a_model_given_by_hand_is_checked_item_by_item(options, message):
    arguments = {"mode": "char", "base_tokens": "abcd", "merges": [("a", "b")], **options}
    with pytest.raises((TypeError, ValueError), match=re.escape(message)):
        Tokenizer(**arguments)


def test_training_names_base_tokens_that_are_no_list_of_characters():
    with pytest.raises(TrainingError, match=r"^base_tokens must be a str or a list of single characters, not 3$"):
        bytepair.train(TEXT, mode="char", vocab_size=40, base_tokens=3)


BYTES = {bytes([b]): b for b in range(256)}


@pytest.mark.parametrize(
    ("token_bytes", "message"),
    [
        (None, "token_bytes must be a dict of token bytes -> id, not NoneType"),
        ([b"a"], "token_bytes must be a dict of token bytes -> id, not list"),
        ({**BYTES, "ab": 256}, "token_bytes keys must be bytes, not str 'ab'"),  # failed in the engine
    ],
)
def test_a_rank_model_given_by_hand_names_what_is_wrong(token_bytes, message):
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        Tokenizer(bytepair.RankModel(token_bytes, rule="tiktoken"))


def test_cli_special_is_one_token_per_flag_value(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT + "<|eot|>", encoding="utf-8")
    out = tmp_path / "tok.json"
    result = cli("train", corpus, "--mode", "byte", "--vocab-size", 260, "--special", "<|eot|>", "-o", out, "--quiet")
    assert result.returncode == 0, result.stderr
    assert list(Tokenizer.load(out).special_tokens) == ["<|eot|>"]


# --- 14. one surrogate policy, bounded sizes, decode arguments, options checked first -------------


@pytest.mark.parametrize(
    "options",
    [dict(mode="byte"), dict(mode="char"), dict(mode="byte", pattern="gpt2"), dict(mode="byte", pattern=r"\w+|\W")],
)
def test_training_treats_lone_surrogates_as_encoding_does(options):
    text = "hello \ud800 world \ud83d\ude00 " * 20
    tok = bytepair.train(text, vocab_size=280, min_frequency=2, **options)
    # Encoding turns a lone surrogate into U+FFFD and a pair into its character; training saw the same.
    assert tok.decode(tok.encode(text)) == text.replace("\ud800", "\ufffd").replace("\ud83d\ude00", "😀")


@pytest.mark.parametrize(
    "options",
    [
        dict(vocab_size=2**63),
        dict(vocab_size=2**31),
        dict(vocab_size=0),
        dict(vocab_size=True),
        dict(vocab_size=300, min_frequency=2**64),
        dict(vocab_size=300, min_frequency=True),
        dict(vocab_size=300, max_chars=0),
        dict(vocab_size=300, max_chars=2.5),
        dict(vocab_size=300, mode="byte", byte_fallback=True),
        dict(vocab_size=300, base_tokens=["ab"]),
        dict(vocab_size=300, base_text=[5]),
        dict(vocab_size=300, base_text=5),
    ],
)
def test_out_of_range_training_options_are_training_errors(options):
    with pytest.raises(TrainingError):
        bytepair.train(TEXT, **options)


def test_training_on_bytes_names_the_text_not_an_int():
    with pytest.raises(TrainingError, match=re.escape("training text must be a str or an iterable of str, not bytes")):
        bytepair.train(TEXT.encode(), mode="byte", vocab_size=260)


def test_training_options_are_checked_before_the_text_is_read():
    def text():
        raise AssertionError("the text was read before the options were checked")
        yield ""  # pragma: no cover

    with pytest.raises(TrainingError, match="byte_fallback"):
        bytepair.train(text(), mode="byte", vocab_size=300, byte_fallback=True)
    # each reached the model only after training, as a TypeError or a ValueError
    with pytest.raises(TrainingError, match="byte_fallback must be True or False, not 'yes'"):
        bytepair.train(text(), mode="char", vocab_size=300, byte_fallback="yes")
    with pytest.raises(TrainingError, match="lone surrogate"):
        bytepair.train(text(), mode="char", vocab_size=300, base_tokens=["\ud800"])
    # the 256 bytes are byte mode's alphabet whatever the text: a corpus read whole only to learn that
    with pytest.raises(TrainingError, match="below the base alphabet's 256 tokens; ask for at least 256"):
        bytepair.train(text(), mode="byte", vocab_size=100)
    # so are its ids: a special token given id 5 was refused only after the whole training
    with pytest.raises(SpecialTokenError, match=re.escape("asks for id 5, which in byte mode is the byte b'\\x05'")):
        bytepair.train(text(), mode="byte", vocab_size=300, special_tokens={"<|end|>": 5})


@pytest.mark.parametrize("threads", [0, -1, 2.5, True, "4", 10**12])
def test_num_threads_out_of_range_is_an_error(threads):
    tok = Tokenizer(mode="byte")
    with pytest.raises(ThreadCountError):
        tok.encode_batch(["a"], num_threads=threads)
    with pytest.raises(ThreadCountError):
        bytepair.train(TEXT, mode="byte", vocab_size=260, num_threads=threads)


def test_num_threads_may_be_a_numpy_integer_as_token_ids_may():
    tok = bytepair.train(TEXT, mode="byte", vocab_size=280, pattern="gpt2")
    texts = TEXT.splitlines()
    assert tok.encode_batch(texts, num_threads=np.int64(2)) == tok.encode_batch(texts, num_threads=1)
    trained = bytepair.train(TEXT, mode="byte", vocab_size=280, pattern="gpt2", num_threads=np.int32(2))
    assert trained.fingerprint == tok.fingerprint
    with pytest.raises(ThreadCountError):
        tok.encode_batch(texts, num_threads=np.bool_(True))


def test_sizes_and_special_ids_may_be_numpy_integers_as_token_ids_may():
    # vocab_size from a numpy sweep (np.arange(...)) was "must be an integer, not np.int64(280)"
    from bytepair.chat import encode_conversations, template_special_tokens

    sizes = np.arange(270, 290, 10)
    plain = bytepair.train(
        TEXT, mode="byte", vocab_size=280, min_frequency=2, max_chars=500, special_tokens={"<|e|>": 300}
    )
    trained = bytepair.train(
        TEXT,
        mode="byte",
        vocab_size=sizes[1],
        min_frequency=np.int32(2),
        max_chars=np.uint32(500),
        special_tokens={"<|e|>": np.int64(300)},
    )
    assert trained.fingerprint == plain.fingerprint
    assert trained.prefix(sizes[0]).fingerprint == plain.prefix(270).fingerprint
    chat = bytepair.train(TEXT, mode="byte", vocab_size=280, special_tokens=template_special_tokens("chatml"))
    conversation = [[{"role": "user", "content": "the cat"}, {"role": "assistant", "content": "sat"}]]
    as_numpy = encode_conversations(chat, conversation, template="chatml", max_length=np.int64(100))
    assert as_numpy == encode_conversations(chat, conversation, template="chatml", max_length=100)
    with pytest.raises(TrainingError, match="not np.True_"):
        bytepair.train(TEXT, mode="byte", vocab_size=np.bool_(True))


def test_num_threads_on_train_gives_the_same_tokenizer():
    one = bytepair.train(TEXT * 5, mode="byte", vocab_size=300, pattern="gpt2", num_threads=1)
    three = bytepair.train(TEXT * 5, mode="byte", vocab_size=300, pattern="gpt2", num_threads=3)
    assert one.fingerprint == three.fingerprint


@pytest.mark.parametrize(
    "ids",
    [
        np.array([1.0, 2.0]),
        np.array([[1, 2], [3, 4]]),
        np.array(["1", "2"]),
        np.array([True, False]),
        np.array([1, 2], dtype=object),
        [True, 1],
        [1.0],
        "12",
        b"\x01",
        {200, 5},
        frozenset([1]),
        {1: 2},
    ],
)
def test_decode_refuses_what_is_not_a_sequence_of_integer_ids(ids):
    tok = Tokenizer(mode="byte")
    with pytest.raises(TokenIdError):
        tok.decode(ids)


def test_decode_still_takes_integer_arrays_of_every_width():
    tok = Tokenizer(mode="byte")
    for dtype in (np.uint8, np.uint16, np.int32, np.uint32, np.int64):
        assert tok.decode(np.array([104, 105], dtype=dtype)) == "hi"


def test_cli_byte_fallback_in_byte_mode_fails_before_training(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "tok.json"
    result = cli("train", corpus, "--mode", "byte", "--byte-fallback", "-o", out)
    assert result.returncode == 2
    assert "byte_fallback" in result.stderr and "Traceback" not in result.stderr
    assert "training" not in result.stderr  # it stopped before printing the configuration
    assert not out.exists()


@pytest.mark.parametrize(
    "flags",
    [
        ["--vocab-size", "99999999999999999999"],
        ["--num-threads", "0"],
        ["--min-frequency", "0"],
        ["--max-chars", "-3"],
        ["--pattern", "(unclosed"],
    ],
)
def test_cli_train_refuses_bad_flags_at_once(tmp_path, flags):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    result = cli("train", corpus, *flags, "-o", tmp_path / "tok.json")
    assert result.returncode == 2, result.stdout
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr


def test_cli_train_refuses_a_folder_as_output_before_training(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    result = cli("train", corpus, "-o", tmp_path)
    assert result.returncode == 2 and "is a folder" in result.stderr
    assert "training" not in result.stderr


def test_prepare_keeps_workers_as_a_deprecated_name(tmp_path):
    from bytepair.datasets.prepare import prepare

    texts = {"train": TEXT * 3, "val": TEXT}
    with pytest.warns(DeprecationWarning, match="num_threads"):
        old = prepare(
            tmp_path / "old",
            texts=texts,
            vocab_size=40,
            workers=2,
            pt_files=False,
            log=lambda line: None,
            progress=False,
        )
    new = prepare(
        tmp_path / "new",
        texts=texts,
        vocab_size=40,
        num_threads=2,
        pt_files=False,
        log=lambda line: None,
        progress=False,
    )
    assert old.tokenizer.fingerprint == new.tokenizer.fingerprint
    with pytest.raises(ThreadCountError):
        prepare(tmp_path / "bad", texts=texts, vocab_size=40, num_threads=0, pt_files=False, log=lambda line: None)


# --- 15. a str subclass is text ------------------------------------------------------------------


class _Cell(str):
    """A str subclass, as a data library hands out (numpy.str_ is another)."""


@pytest.mark.parametrize("mode", ["byte", "char"])
def test_str_subclasses_are_encoded_and_trained_on_as_their_text(mode):
    texts = [np.array(["the cat sat"])[0], _Cell("on the mat")]
    plain = [str(t) for t in texts]
    trained = bytepair.train(texts * 20, mode=mode, vocab_size=270 if mode == "byte" else 20, progress=False)
    assert trained.merges == bytepair.train(plain * 20, mode=mode, vocab_size=270 if mode == "byte" else 20).merges
    expected = [trained.encode(t) for t in plain]
    assert [trained.encode(t) for t in texts] == [trained.encode_ordinary(t) for t in texts] == expected
    assert trained.encode_batch(texts) == expected
    assert [trained.encode_to_array(t).tolist() for t in texts] == expected
    ids, offsets = trained.encode_batch_to_array(texts)
    assert [ids[offsets[k] : offsets[k + 1]].tolist() for k in range(2)] == expected


def test_saving_to_a_folder_or_an_empty_path_names_the_problem(tmp_path):
    tokenizer = bytepair.train(TEXT, mode="char", vocab_size=40)
    with pytest.raises(IsADirectoryError, match="is a folder; give a file name"):
        tokenizer.save(tmp_path)
    with pytest.raises(FileNotFoundError, match="the path is empty"):
        tokenizer.save("")
    with pytest.raises(TypeError, match=r"^path must be a str or os.PathLike naming a file or folder, not None$"):
        tokenizer.save(None)
    assert list(tmp_path.iterdir()) == []  # no staged file left behind


@pytest.mark.parametrize("threads", [0, -5, "x"])
def test_decode_batch_checks_num_threads_as_encode_batch_does(threads):
    tokenizer = bytepair.train(TEXT, mode="char", vocab_size=40)
    with pytest.raises(ThreadCountError):
        tokenizer.decode_batch([[1]], num_threads=threads)
    with pytest.raises(ThreadCountError):
        tokenizer.decode_bytes_batch([[1]], num_threads=threads)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda tok: tok(None), "text must be a str or a list of str, not NoneType"),
        (lambda tok: tok.encode_batch(None), "texts must be a list of texts, not NoneType"),
        (lambda tok: tok.encode_batch("hello"), "not one str; pass [text]"),
        (lambda tok: tok.encode_batch_to_array("hello"), "not one str; pass [text]"),
        (lambda tok: tok.encode_batch(b"hello"), "texts must be a list of texts (str), not bytes; decode it first"),
        (lambda tok: tok.encode_batch_to_array(b"hello"), "texts must be a list of texts (str), not bytes"),
        # a dataset batch: only its keys were encoded
        (
            lambda tok: tok.encode_batch({"text": ["a b"], "id": [1]}),
            "not a dict (its keys would be taken as the texts",
        ),
        (lambda tok: tok.encode_batch_to_array({"text": ["a b"]}), "pass its column of texts, e.g. batch['text']"),
        (lambda tok: tok.decode_batch(None), "batch must be a list of id sequences, not NoneType"),
        (lambda tok: tok.encode_single_token(None), "takes a str or bytes, not NoneType"),
    ],
)
def test_a_batch_call_given_none_or_one_str_names_what_it_takes(call, message):
    # one str would be taken character by character; None failed deep inside
    tok = bytepair.train(TEXT, mode="byte", vocab_size=260)
    with pytest.raises(TypeError, match=re.escape(message)):
        call(tok)


def test_training_on_a_dict_is_refused_rather_than_on_its_keys():
    from bytepair.errors import TrainingError

    with pytest.raises(TrainingError, match="not a dict, whose keys alone would be trained on"):
        bytepair.train({"hello world": 3, "goodbye": 2}, mode="byte", vocab_size=260)


def test_encode_conversations_given_none_is_a_chat_template_error():
    from bytepair.chat import encode_conversations
    from bytepair.errors import ChatTemplateError

    tok = bytepair.train(TEXT, mode="byte", vocab_size=260)
    with pytest.raises(
        ChatTemplateError,
        match=re.escape("conversations must be a list of conversations (each a list of messages), not NoneType"),
    ):
        encode_conversations(tok, None, template="chatml")


# --- 9. files that cannot be tokenizers or texts: one line, no traceback -------------------------


def _deep_json(path):
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")


def _huge_int_json(path):
    path.write_text(
        '{"type": "character_bpe", "base_tokens": ["a"], "merges": [], "vocab_size": '
        + "9" * 5000
        + ', "fingerprint": "x"}',
        encoding="utf-8",
    )


def _wrong_types_json(path):
    path.write_text(
        json.dumps({"type": "character_bpe", "base_tokens": 5, "merges": [], "fingerprint": 3}), encoding="utf-8"
    )


def _wrong_merges_json(path):
    path.write_text(json.dumps({"type": "byte_bpe", "merges": {"a": 1}, "fingerprint": "x"}), encoding="utf-8")


BAD_TOKENIZERS = {
    "deep": _deep_json,
    "huge_int": _huge_int_json,
    "wrong_types": _wrong_types_json,
    "wrong_merges": _wrong_merges_json,
}


@pytest.fixture
def bad_tokenizer(tmp_path, request):
    maker = BAD_TOKENIZERS[request.param]
    path = tmp_path / f"{request.param}.json"
    maker(path)
    return path


@pytest.mark.parametrize("bad_tokenizer", sorted(BAD_TOKENIZERS), indirect=True)
def test_broken_tokenizer_files_are_artifact_errors(bad_tokenizer):
    with pytest.raises(ArtifactError):
        Tokenizer.load(bad_tokenizer)


@pytest.mark.parametrize("bad_tokenizer", sorted(BAD_TOKENIZERS), indirect=True)
@pytest.mark.parametrize("command", ["encode", "decode", "inspect", "compare"])
def test_cli_refuses_broken_tokenizer_files_in_one_line(tmp_path, bad_tokenizer, command):
    text = tmp_path / "text.txt"
    text.write_text("1 2 3", encoding="utf-8")
    if command == "inspect":
        result = cli("inspect", bad_tokenizer)
    elif command == "compare":
        result = cli("compare", text, "-t", bad_tokenizer)
    else:
        result = cli(command, text, "-t", bad_tokenizer)
    assert result.returncode in (1, 2)
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") and str(bad_tokenizer.name) in result.stderr


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize(
    "args",
    [
        ["encode", "-t", "/dev/zero", "TEXT"],
        ["decode", "-t", "/dev/zero", "TEXT"],
        ["inspect", "/dev/zero"],
        ["encode", "-t", "TOK", "/dev/zero"],
        ["decode", "-t", "TOK", "/dev/zero"],
        ["train", "/dev/zero", "-o", "OUT"],
        ["train", "TEXT", "--base-text", "/dev/zero", "-o", "OUT"],
        ["compare", "/dev/zero", "-t", "TOK"],
        ["compare", "TEXT", "-t", "/dev/zero"],
    ],
)
def test_dev_zero_is_refused_at_once(tmp_path, args):
    text = tmp_path / "text.txt"
    text.write_text(TEXT, encoding="utf-8")
    tok = tmp_path / "tok.json"
    bytepair.train(TEXT, mode="char", vocab_size=40).save(tok)
    names = {"TEXT": text, "TOK": tok, "OUT": tmp_path / "out.json"}
    result = cli(*[names.get(a, a) for a in args], timeout=60)
    assert result.returncode in (1, 2)
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") and ("/dev/zero" in result.stderr)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_formats_loaders_refuse_devices():
    from bytepair.errors import FormatError
    from bytepair.formats import load_huggingface, load_tiktoken

    with pytest.raises(FormatError, match="device"):
        load_tiktoken("/dev/zero", pattern="gpt2")
    with pytest.raises(FormatError, match="device"):
        load_huggingface("/dev/zero")


def test_oversized_tokenizer_file_is_refused_without_reading_it_all(tmp_path, monkeypatch):
    import bytepair._io

    path = tmp_path / "big.json"
    path.write_text(" " * 5000 + "{}", encoding="utf-8")
    monkeypatch.setattr(bytepair._io, "MAX_TOKENIZER_BYTES", 1000)
    with pytest.raises(ArtifactError, match="larger than"):
        Tokenizer.load(path)


def test_decode_of_a_5000_digit_id_is_one_line(tmp_path):
    tok = tmp_path / "tok.json"
    bytepair.train(TEXT, mode="char", vocab_size=40).save(tok)
    result = cli("decode", "-t", tok, stdin="9" * 5000)
    assert result.returncode == 2 and "Traceback" not in result.stderr


# --- 16. a public call given the wrong kind of argument names it, as a notebook user meets it ------


@pytest.mark.parametrize("export", ["to_tiktoken", "to_huggingface", "save_pretrained"])
@pytest.mark.parametrize("not_a_tokenizer", [None, "gpt2", object()])
def test_exporting_what_is_not_a_tokenizer_names_what_was_passed(tmp_path, export, not_a_tokenizer):
    from bytepair import formats

    with pytest.raises(
        TypeError, match=rf"tokenizer must be a bytepair Tokenizer .*, not {type(not_a_tokenizer).__name__}$"
    ):
        getattr(formats, export)(not_a_tokenizer, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_a_download_cache_that_is_a_file_is_named_before_any_download(tmp_path):
    from bytepair.datasets.wikitext import download_wikitext
    from bytepair.errors import UsageError

    cache = tmp_path / "cache"
    cache.write_text("not a folder", encoding="utf-8")
    # nothing listens on port 9: were the cache not checked first, the error would be the download's
    with pytest.raises(UsageError, match=rf"the download cache '{re.escape(str(cache))}' is a file; give a folder"):
        bytepair.load("gpt2", cache_dir=cache, base_url="http://127.0.0.1:9")
    with pytest.raises(UsageError, match=rf"'{re.escape(str(cache))}' is a file, not a folder"):
        download_wikitext(cache_dir=cache, url="http://127.0.0.1:9/wikitext.zip")
    assert cache.read_text(encoding="utf-8") == "not a folder"


def test_a_base_url_that_is_not_a_str_is_named(tmp_path):
    with pytest.raises(TypeError, match=r"^base_url must be a str such as 'https://host/path', not 3$"):
        bytepair.load("gpt2", cache_dir=tmp_path, base_url=3)


def test_load_tiktoken_takes_special_tokens_as_a_tokenizer_does(tmp_path):
    from bytepair.errors import SpecialTokenError
    from bytepair.formats import load_tiktoken, to_tiktoken

    trained = bytepair.train(TEXT, mode="byte", vocab_size=270, pattern="gpt2")
    to_tiktoken(trained, tmp_path / "mine.tiktoken")
    loaded = load_tiktoken(tmp_path / "mine.tiktoken", pattern="gpt2", special_tokens=["<|end|>"])
    assert loaded.special_tokens == {"<|end|>": trained.vocab_size}
    assert loaded.encode("the cat<|end|>", allowed_special="all")[-1] == trained.vocab_size
    with pytest.raises(SpecialTokenError, match="special_tokens must be a string, a list of strings or a dict"):
        load_tiktoken(tmp_path / "mine.tiktoken", pattern="gpt2", special_tokens=3)


PATH_CALLS = {
    "save": (lambda tok, p: tok.save(p), "path"),
    "Tokenizer.load": (lambda tok, p: Tokenizer.load(p), "path"),
    "load path=": (lambda tok, p: bytepair.load("gpt2", path=p), "path"),
    "load cache_dir=": (lambda tok, p: bytepair.load("gpt2", cache_dir=p, base_url="http://127.0.0.1:9"), "cache_dir"),
    "to_tiktoken": (lambda tok, p: tok.to_tiktoken(p), "path"),
    "to_huggingface": (lambda tok, p: tok.to_huggingface(p), "path"),
    "save_pretrained": (lambda tok, p: tok.save_pretrained(p), "folder"),
    "load_pretrained": (lambda tok, p: bytepair.formats.load_pretrained(p), "folder"),
    "load_huggingface": (lambda tok, p: bytepair.formats.load_huggingface(p), "path"),
    "load_tiktoken": (lambda tok, p: bytepair.formats.load_tiktoken(p, pattern="gpt2"), "path"),
    "load_sentencepiece": (lambda tok, p: bytepair.formats.load_sentencepiece(p), "path"),
    "load_tekken": (lambda tok, p: bytepair.formats.load_tekken(p), "path"),
    "load_gpt2_files": (lambda tok, p: bytepair.formats.load_gpt2_files(p, "vocab.bpe"), "encoder_path"),
}


@pytest.mark.parametrize(
    ("call", "not_a_path"),
    [
        (call, value)
        for call in sorted(PATH_CALLS)
        for value in (None, 3, 1.5, b"tok.json", ["tok.json"])
        if not (value is None and call.endswith("="))  # None is that keyword's default (the usual cache)
    ],
)
def test_a_path_argument_that_is_no_path_is_named(call, not_a_path):
    # pathlib's own error ("expected str, bytes or os.PathLike object") names no argument
    function, name = PATH_CALLS[call]
    tok = bytepair.train(TEXT, mode="byte", vocab_size=260, pattern="gpt2")
    message = f"{name} must be a str or os.PathLike naming a file or folder, not {not_a_path!r}"
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        function(tok, not_a_path)


@pytest.mark.parametrize("call", sorted(PATH_CALLS))
def test_a_path_with_a_nul_character_is_named(tmp_path, call):
    function, name = PATH_CALLS[call]
    tok = bytepair.train(TEXT, mode="byte", vocab_size=260, pattern="gpt2")
    with pytest.raises(ValueError, match=rf"^{name} '.*\\x00b' holds a NUL character"):
        function(tok, f"{tmp_path}/a\0b")


@pytest.mark.parametrize("call", ["decode_tokens_bytes", "decode_with_offsets", "batch_decode"])
@pytest.mark.parametrize("ids", [{104, 105}, {104: 105}, b"hi", "104", None])
def test_the_dropin_decoders_refuse_what_decode_refuses(call, ids):
    # a set or dict was decoded in hash order, bytes as their byte values: wrong text, no error
    tok = Tokenizer(mode="byte")
    with pytest.raises(TokenIdError if ids is not None or call != "batch_decode" else TypeError):
        getattr(tok, call)(ids)


def test_id_to_token_takes_numpy_ids_and_refuses_what_is_no_id():
    tok = bytepair.train(TEXT, mode="byte", vocab_size=270)
    assert tok.id_to_token(np.int64(104)) == tok.id_to_token(104) == "h"  # was None: not a Python int
    assert tok.convert_ids_to_tokens(np.array([104, 105])) == ["h", "i"]
    assert tok.id_to_token(10**9) is None  # past the vocabulary: None, as in HF
    for bad in (None, 1.5, "104", -1):
        with pytest.raises(TokenIdError, match=re.escape(f"token id {bad!r} ")):
            tok.id_to_token(bad)


def test_encode_single_token_of_a_lone_surrogate_is_not_a_token():
    tok = bytepair.train(TEXT, mode="byte", vocab_size=270)
    with pytest.raises(SpecialTokenError, match=r"'a\\ud800' is not a single token of this vocabulary"):
        tok.encode_single_token("a\ud800")


@pytest.mark.parametrize("errors", ["bogus", "Replace", None, 3])
def test_decode_names_an_errors_value_that_is_no_error_handler_even_on_valid_text(errors):
    # Python looks the handler up only at the first invalid byte: valid text hid the typo
    tok = Tokenizer(mode="byte")
    for call in (lambda: tok.decode([104, 105], errors=errors), lambda: tok.decode_batch([[104]], errors=errors)):
        with pytest.raises(
            ValueError, match=rf"errors must be the name of an error handler .*, not {re.escape(repr(errors))}$"
        ):
            call()
    assert tok.decode([104, 0xE2], errors="ignore") == "h"
    assert tok.decode([104, 0xE2], errors="backslashreplace") == "h\\xe2"


def test_padding_to_transformers_no_limit_model_max_length_asks_for_max_length(tmp_path):
    # Llama 3's tokenizer_config.json holds model_max_length 1e30: padding to it failed in list()
    from bytepair.errors import UsageError

    tok = bytepair.train(TEXT, mode="byte", vocab_size=270, special_tokens=["<|pad|>"])
    tok.pad_token = "<|pad|>"
    tok.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["model_max_length"] = 1000000000000000019884624838656
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    loaded = bytepair.formats.load_pretrained(tmp_path)
    with pytest.raises(UsageError, match=r"padding='max_length' needs max_length=\.\.\.: .* 'no limit'"):
        loaded(["the cat", "the"], padding="max_length")
    assert loaded(["the cat", "the"], padding="max_length", max_length=8)["attention_mask"][1][-1] == 0


@pytest.mark.parametrize(
    "call",
    [
        lambda tok: tok(["the cat"], padding="max_length", max_length=10**12),
        lambda tok: tok.pad({"input_ids": [[1, 2]]}, pad_to_multiple_of=10**12),
        lambda tok: tok.pad({"input_ids": [[1, 2]] * 30_000}, padding="max_length", max_length=100_000),
    ],
)
def test_padding_to_a_bogus_width_is_refused_before_building_the_lists(call):
    from bytepair.errors import UsageError

    tok = bytepair.train(TEXT, mode="byte", vocab_size=270, special_tokens=["<|pad|>"])
    tok.pad_token = "<|pad|>"
    with pytest.raises(UsageError, match=r"ids, more than the 2,147,483,648 a padded batch may hold"):
        call(tok)


def test_load_and_save_pretrained_name_a_path_that_is_no_folder(tmp_path, monkeypatch):
    from bytepair.errors import FormatError
    from bytepair.formats import load_pretrained

    tok = bytepair.train(TEXT, mode="byte", vocab_size=270)
    tok.save(tmp_path / "tok.json")
    with pytest.raises(FormatError, match=r"tok\.json is a file; load_pretrained takes a tokenizer folder"):
        load_pretrained(tmp_path / "tok.json")  # was "no tokenizer.json ... in this folder"
    with pytest.raises(FormatError, match=r"missing: no such folder$"):
        load_pretrained(tmp_path / "missing")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="the folder is empty; give a folder name"):
        tok.save_pretrained("")  # was written into the current folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok.json"]


@pytest.mark.parametrize("dtype", ["bogus", 5, "uint8", np.float32, "int64"])
def test_an_array_dtype_that_cannot_hold_the_ids_is_named(dtype):
    tok = bytepair.train(TEXT, mode="byte", vocab_size=270)
    for call in (
        lambda: tok.encode_to_array("the cat", dtype=dtype),
        lambda: tok.encode_batch_to_array(["the"], dtype=dtype),
    ):
        with pytest.raises(ValueError, match=r"^dtype must be uint16 or uint32, not "):
            call()


@pytest.mark.parametrize("ids", ["104", [104.0], [True], None, {104, 105}])
def test_convert_ids_to_tokens_checks_ids_as_decode_does(ids):
    # int() took "104" as three ids and 104.0 as one; a set went in hash order
    tok = bytepair.train(TEXT, mode="byte", vocab_size=270)
    with pytest.raises(TokenIdError):
        tok.convert_ids_to_tokens(ids)
    assert tok.convert_ids_to_tokens(np.array([104, 105])) == tok.convert_ids_to_tokens([104, 105]) == ["h", "i"]


@pytest.mark.parametrize("tokens", [None, b"ab", 3])
def test_convert_tokens_to_ids_names_what_is_no_list_of_token_strings(tokens):
    tok = bytepair.train(TEXT, mode="byte", vocab_size=270)
    with pytest.raises(
        TypeError, match=f"^tokens must be a token string or a list of them, not {type(tokens).__name__}$"
    ):
        tok.convert_tokens_to_ids(tokens)
