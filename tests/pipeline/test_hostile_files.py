"""Hostile or broken vocabulary files are refused quickly, with a message naming file and field.

- Huge ids (a rank, a vocab id, an added or special token's id of 3e8 or 2**31) once sized
  dense tables by the id: gigabytes, or ``MemoryError``. They are refused before any table is
  built; the cases run in a subprocess whose memory is capped, so a regression fails here
  instead of taking the machine's memory.
- Negative, bool and float ids are refused, never used to index a table from its end.
- One long token in a ``.tiktoken`` file loads in time linear in its length (it took a loop
  per byte), and the pair table stays exact, even for tokens whose hashes collide.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from bytepair import MergeModel, Tokenizer, artifact
from bytepair.bytelevel import bytes_to_readable
from bytepair.errors import ArtifactError, FormatError, SpecialTokenError, TokenIdError
from bytepair.formats.huggingface import load_huggingface, read_merges
from bytepair.formats.tiktoken_files import load_tiktoken, read_ranks
from bytepair.ids import MAX_ID_GAP
from bytepair.model import PairTable, RankModel, _HashIndex, _split_candidates_exact, tiktoken_pair_table
from datafiles import package_env

HUGE = 3 * 10**8
MEMORY_CAP = 512 << 20  # far below a table of HUGE entries (2.4 GB of pointers)


# -- file builders ---------------------------------------------------------------------------


def rank_file(path, extra=(), *, bytes_first=True):
    """A .tiktoken file: the 256 bytes at ranks 0..255, then ``extra`` (token, rank) lines."""
    lines = [(bytes([b]), b) for b in range(256)] if bytes_first else []
    lines += list(extra)
    path.write_bytes(b"".join(base64.b64encode(token) + b" %d\n" % rank for token, rank in lines))
    return path


def hf_file(path, *, vocab_extra=None, added=(), merges=("a b",)):
    """A GPT-2-style tokenizer.json over the 256 bytes and "ab", plus what a case adds."""
    vocab = {bytes_to_readable(bytes([b])): b for b in range(256)}
    vocab["ab"] = 256
    vocab.update(vocab_extra or {})
    data = {
        "model": {"type": "BPE", "vocab": vocab, "merges": list(merges)},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "decoder": {"type": "ByteLevel"},
        "added_tokens": [{"id": token_id, "content": content} for content, token_id in added],
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def artifact_file(path, special_tokens):
    """A byte_bpe artifact with these special tokens and a fingerprint that matches them."""
    data = artifact.to_dict(Tokenizer(mode="byte", merges=[(b"a", b"b")], special_tokens=["<|x|>"]))
    data["special_tokens"] = special_tokens
    data["vocab_size"] = max(special_tokens.values()) + 1
    data["fingerprint"] = artifact.fingerprint_of(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def gpt2_folder(folder, endoftext_id):
    folder.mkdir()
    encoder = {bytes_to_readable(bytes([b])): b for b in range(256)}
    encoder["<|endoftext|>"] = endoftext_id
    (folder / "encoder.json").write_text(json.dumps(encoder), encoding="utf-8")
    (folder / "vocab.bpe").write_text("#version: 0.2\n", encoding="utf-8")
    return folder / "encoder.json"


# -- huge ids, each refused in a process that cannot allocate a huge table -------------------

HUGE_ID_CASES = {
    # case: (statement run in the capped process, error class, what the message must name)
    "tiktoken rank 3e8": (
        "load_tiktoken(path('rank_3e8.tiktoken'), pattern='gpt2')",
        "FormatError",
        ["rank_3e8.tiktoken", "line 257", str(HUGE)],
    ),
    "tiktoken rank 2**31": (
        "load_tiktoken(path('rank_2_31.tiktoken'), pattern='gpt2')",
        "FormatError",
        ["rank_2_31.tiktoken", "line 257", str(2**31)],
    ),
    "hf vocab id": (
        "load_huggingface(path('vocab_id.json'))",
        "FormatError",
        ["vocab_id.json", "model.vocab", "'zzqq'", str(HUGE)],
    ),
    "hf added token id": (
        "load_huggingface(path('added_id.json'))",
        "FormatError",
        ["added_id.json", "added_tokens[0]", "'<x>'", str(HUGE)],
    ),
    "artifact special token id": (
        "Tokenizer.load(path('artifact.json'))",
        "ArtifactError",
        ["artifact.json", "'<|x|>'", str(HUGE)],
    ),
    "bytepair.load of the artifact": (
        "bytepair.load(path('artifact.json'))",
        "ArtifactError",
        ["artifact.json", "'<|x|>'", str(HUGE)],
    ),
    "gpt2 encoder.json special id": (
        "load_gpt2_files(path('gpt2/encoder.json'), path('gpt2/vocab.bpe'))",
        "FormatError",
        ["encoder.json", "'<|endoftext|>'", str(HUGE)],
    ),
    "Tokenizer(special_tokens=...)": (
        f"Tokenizer(mode='byte', special_tokens={{'x': {HUGE}}})",
        "SpecialTokenError",
        ["'x'", str(HUGE)],
    ),
    "add_special_tokens": (
        f"Tokenizer(mode='char', base_tokens='ab').add_special_tokens({{'x': {HUGE}}})",
        "SpecialTokenError",
        ["'x'", str(HUGE)],
    ),
    "RankModel": (
        f"RankModel({{bytes([b]): b for b in range(255)}} | {{b'\\xff': {HUGE}}}, rule='tiktoken')",
        "ValueError",
        ["b'\\xff'", str(HUGE)],
    ),
}

CAPPED_SCRIPT = textwrap.dedent(
    """
    import json, pathlib, resource, sys
    resource.setrlimit(resource.RLIMIT_DATA, ({cap}, {cap}))
    import bytepair
    from bytepair import Tokenizer
    from bytepair.formats import load_gpt2_files, load_huggingface, load_tiktoken
    from bytepair.model import RankModel

    def path(name):
        return pathlib.Path(sys.argv[1]) / name

    results = {{}}
    for case, statement in json.loads(sys.argv[2]).items():
        try:
            eval(statement)
            results[case] = ["no error", ""]
        except BaseException as error:
            results[case] = [type(error).__name__, str(error)]
    print(json.dumps(results))
    """
)


@pytest.fixture(scope="module")
def huge_id_results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("huge")
    rank_file(folder / "rank_3e8.tiktoken", [(b"ab", HUGE)])
    rank_file(folder / "rank_2_31.tiktoken", [(b"ab", 2**31)])
    hf_file(folder / "vocab_id.json", vocab_extra={"zzqq": HUGE})
    hf_file(folder / "added_id.json", added=[("<x>", HUGE)])
    artifact_file(folder / "artifact.json", {"<|x|>": HUGE})
    gpt2_folder(folder / "gpt2", HUGE)
    statements = {case: statement for case, (statement, _, _) in HUGE_ID_CASES.items()}
    result = subprocess.run(
        [sys.executable, "-c", CAPPED_SCRIPT.format(cap=MEMORY_CAP), str(folder), json.dumps(statements)],
        capture_output=True,
        text=True,
        env=package_env(),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


@pytest.mark.parametrize("case", list(HUGE_ID_CASES))
def test_a_huge_id_is_refused_naming_file_field_and_id(case, huge_id_results):
    _, expected_error, named = HUGE_ID_CASES[case]
    error, message = huge_id_results[case]
    assert error == expected_error, message
    for part in named:
        assert part in message
    assert "\n" not in message


def test_the_id_limit_is_the_documented_gap_past_the_number_of_tokens(tmp_path):
    # The last id allowed (a vocabulary padded to a round size keeps its specials) ...
    count = 257
    last = count + MAX_ID_GAP - 1
    tok = Tokenizer(mode="byte", special_tokens={"<|pad|>": last})
    assert tok.vocab_size == last + 1
    assert tok.decode([last]) == "<|pad|>"
    # ... and the first refused, in a rank file and through the API.
    with pytest.raises(FormatError, match=f"line 257.*{last + 1}"):
        load_tiktoken(rank_file(tmp_path / "x.tiktoken", [(b"ab", last + 1)]), pattern="gpt2")
    assert load_tiktoken(rank_file(tmp_path / "y.tiktoken", [(b"ab", last)]), pattern="gpt2").vocab_size == last + 1
    with pytest.raises(SpecialTokenError, match=str(last + 1)):
        Tokenizer(mode="byte", special_tokens={"<|pad|>": last + 1})


def test_published_vocabularies_keep_their_unused_ids():
    # cl100k leaves ids 100261..100275 unused between its specials; such gaps are fine.
    ranks = {bytes([b]): b for b in range(256)}
    tok = Tokenizer(RankModel(ranks, rule="tiktoken"), special_tokens={"<|a|>": 256, "<|b|>": 300})
    assert tok.vocab_size == 301
    with pytest.raises(TokenIdError, match="not in the vocabulary"):
        tok.decode([299])


# -- negative, bool and float ids -----------------------------------------------------------


@pytest.mark.parametrize(
    ("vocab_extra", "added", "named"),
    [
        ({"zzqq": -4}, (), ["model.vocab", "'zzqq'", "negative id -4"]),
        ({}, [("<x>", -4)], ["added_tokens[0]", "'<x>'", "negative id -4"]),
        ({"zzqq": True}, (), ["model.vocab", "'zzqq'", "True", "not an integer"]),
        ({"zzqq": 1.5}, (), ["model.vocab", "'zzqq'", "1.5", "not an integer"]),
        ({"zzqq": "7"}, (), ["model.vocab", "'zzqq'", "'7'", "not an integer"]),
        ({}, [("<x>", True)], ["added_tokens[0]", "True"]),
    ],
)
def test_hf_ids_that_are_not_non_negative_integers_are_refused(tmp_path, vocab_extra, added, named):
    path = hf_file(tmp_path / "tokenizer.json", vocab_extra=vocab_extra, added=added)
    with pytest.raises(FormatError) as caught:
        load_huggingface(path)
    for part in [str(path), *named]:
        assert part in str(caught.value)


def test_hf_two_tokens_with_one_id_are_refused(tmp_path):
    # A second token at id 252 would silently replace b"\xfc" in the id table.
    path = hf_file(tmp_path / "tokenizer.json", vocab_extra={"zzqq": 252})
    with pytest.raises(FormatError, match=r"tokenizer\.json.*both have id 252"):
        load_huggingface(path)
    path = hf_file(tmp_path / "added.json", added=[("<x>", 300), ("<x>", 301)])
    with pytest.raises(FormatError, match="listed twice"):
        load_huggingface(path)


def test_a_negative_rank_is_refused(tmp_path):
    with pytest.raises(FormatError, match="line 257"):
        load_tiktoken(rank_file(tmp_path / "x.tiktoken", [(b"ab", -1)]), pattern="gpt2")


@pytest.fixture(scope="module", params=["char", "byte"])
def tok(request):
    if request.param == "char":
        return Tokenizer(mode="char", base_tokens="abc", merges=[("a", "b")], special_tokens=["<|x|>"])
    return Tokenizer(mode="byte", merges=[(b"a", b"b")], special_tokens=["<|x|>"])


BAD_IDS = [-1, -2, True, False, 1.0, np.int64(-1), np.bool_(True), "1", None]


@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_every_method_taking_an_id_refuses_a_bad_one(tok, bad):
    # Before: token_string(-1) gave the last token in char mode, token_string(True) id 1.
    for method in (tok.token_string, tok.token_bytes, tok.is_special):
        with pytest.raises(TokenIdError):
            method(bad)
    for method in (tok.decode, tok.decode_bytes):
        with pytest.raises(TokenIdError):
            method([0, bad])
    assert tok.model.token_value(bad) is None


def test_ids_past_the_vocabulary_are_refused(tok):
    for token_id in (tok.vocab_size, 10**30, np.uint64(2**64 - 1)):
        for method in (tok.token_string, tok.token_bytes):
            with pytest.raises(TokenIdError, match="not in the vocabulary"):
                method(token_id)
        assert not tok.is_special(token_id)
    last = tok.vocab_size - 1
    assert tok.token_string(last) == "<|x|>" and tok.is_special(np.int64(last))
    assert tok.token_string(np.int64(0)) == ("a" if tok.mode == "char" else "\x00")


def test_char_model_values_never_index_from_the_end():
    model = MergeModel(mode="char", base_tokens="abc", merges=[("a", "b")])
    assert model.token_value(-1) is None and model.token_value(3) == "ab"


# -- empty and mixed merge lists --------------------------------------------------------------


def test_hf_file_without_merges_loads_and_encodes_bytes(tmp_path):
    # Was AssertionError("unreachable"). HF merges nothing: each byte is its own token.
    tok = load_huggingface(hf_file(tmp_path / "tokenizer.json", merges=[]))
    assert tok.encode("ab ab") == [97, 98, 32, 97, 98]
    assert read_merges([], {"a": 0}, "x") == {}


def test_hf_merges_mixing_strings_and_lists_are_refused(tmp_path):
    path = hf_file(tmp_path / "tokenizer.json", merges=["a b", ["a", "b"]])
    with pytest.raises(FormatError, match=r"model\.merges.*mixes"):
        load_huggingface(path)


# -- long tokens and the pair table ---------------------------------------------------------


def brute_force_pair_table(ranks):
    """Every split of every token into two tokens, by slicing (the definition)."""
    table = {}
    for token, rank in ranks.items():
        for cut in range(1, len(token)):
            left, right = ranks.get(token[:cut]), ranks.get(token[cut:])
            if left is not None and right is not None:
                table[(left, right)] = (rank, rank)
    return table


def test_a_one_megabyte_token_loads_and_is_one_id(tmp_path):
    # Was 29 s and 842 MB (a numpy step per byte of the longest token).
    long = b"a" * (1 << 20)
    path = rank_file(tmp_path / "long.tiktoken", [(b"aa", 256), (long, 257), (long + b"a", 258)])
    tok = load_tiktoken(path, pattern=None)
    assert tok.encode_ordinary("a" * (1 << 20)) == [257]
    assert tok.encode_ordinary("a" * ((1 << 20) + 1)) == [258]
    assert tok.encode_ordinary("aaa") in ([256, 97], [97, 256])
    assert tok.model.pair_table[(257, 97)] == (258, 258)
    assert tok.model.pair_table[(97, 257)] == (258, 258)


def test_a_long_token_in_the_capped_process(tmp_path):
    # Memory stays linear too: 16 MB of tokens load under the same cap as the huge ids.
    long = b"ab" * (1 << 22)
    rank_file(tmp_path / "long.tiktoken", [(long, 256), (long + b"a", 257), (b"ab", 258)])
    script = (
        f"import resource; resource.setrlimit(resource.RLIMIT_DATA, ({MEMORY_CAP}, {MEMORY_CAP}))\n"
        "import sys; from bytepair.formats import load_tiktoken\n"
        "tok = load_tiktoken(sys.argv[1], pattern=None)\n"
        "print(tok.vocab_size, tok.model.pair_table[(256, 97)])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "long.tiktoken")],
        capture_output=True,
        text=True,
        env=package_env(),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["259", "(257,", "257)"]


def test_pair_table_of_long_and_repeated_tokens_is_every_split():
    ranks = {bytes([b]): b for b in range(256)}
    for token in (
        b"aa",
        b"aaa",
        b"a" * 1000,
        b"a" * 1001,
        b"a" * 2001,
        b"ab" * 700,
        b"b" + b"ab" * 700,
        b"\x00a",
        b"\x00",
    ):
        ranks.setdefault(token, len(ranks))
    assert tiktoken_pair_table(ranks) == brute_force_pair_table(ranks)


def thue_morse(n):
    return bytes(ord("ab"[bin(i).count("1") % 2]) for i in range(n))


def test_pair_table_is_exact_when_hashes_collide():
    # A Thue-Morse string of 2**11 bytes and its complement have the same polynomial hash
    # mod 2**64 for every odd base: a crafted file can make hashes collide, and the table must
    # still hold exactly the real splits.
    first = thue_morse(2048)
    second = first.translate(bytes.maketrans(b"ab", b"ba"))
    ranks = {bytes([b]): b for b in range(256)}
    for token in (first, second, first + b"c", second + b"c", first[:1024], first[1024:]):
        ranks.setdefault(token, len(ranks))
    assert tiktoken_pair_table(ranks) == brute_force_pair_table(ranks)
    # A prefix that only hashes like a token is no split: the complement + "c" without the
    # complement as a token must not pair the Thue-Morse token with "c".
    ranks = {bytes([b]): b for b in range(256)}
    for token in (first, second + b"c"):
        ranks[token] = len(ranks)
    table = tiktoken_pair_table(ranks)
    assert table == brute_force_pair_table(ranks)
    assert (ranks[first], ord("c")) not in table


def test_exact_split_candidates_agree_with_the_definition():
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257, b"bc": 258}
    tokens = list(ranks)
    lengths = np.fromiter(map(len, tokens), dtype=np.int64)
    left, right, whole = _split_candidates_exact(tokens, lengths)
    found = {(ranks[tokens[a]], ranks[tokens[b]]): (ranks[tokens[w]],) * 2 for a, b, w in zip(left, right, whole)}
    assert found == brute_force_pair_table(ranks)


def test_rank_file_errors_name_the_line():
    with pytest.raises(FormatError, match="line 2: token b'a' appears twice"):
        read_ranks(b"YQ== 0\nYQ== 1\n", "x.tiktoken")
    with pytest.raises(FormatError, match="line 2: rank 0 appears twice"):
        read_ranks(b"YQ== 0\nYg== 0\n", "x.tiktoken")
    with pytest.raises(FormatError, match="line 2: 'Yg=x 1'"):
        read_ranks(b"YQ== 0\nYg=x 1\n", "x.tiktoken")
    with pytest.raises(FormatError, match="line 3: 'YQ== 1 2'"):
        read_ranks(b"YQ== 0\n\nYQ== 1 2\n", "x.tiktoken")
    with pytest.raises(FormatError, match="no tokens"):
        read_ranks(b"\n\n", "x.tiktoken")
    assert read_ranks(b"YQ== 0\r\n\r\nYg== 1", "x.tiktoken") == {b"a": 0, b"b": 1}


def test_the_memory_cap_stops_a_table_sized_by_a_huge_id():
    # What makes the capped cases above meaningful: under the cap, such a table cannot be made.
    script = (
        f"import resource; resource.setrlimit(resource.RLIMIT_DATA, ({MEMORY_CAP}, {MEMORY_CAP}))\n"
        f"try:\n    [None] * {HUGE}\nexcept MemoryError:\n    print('refused')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "refused"


def test_an_artifact_special_token_with_a_negative_id_is_refused():
    data = {"type": "byte_bpe", "version": 1, "merges": [], "special_tokens": {"<|x|>": -1}}
    data["fingerprint"] = artifact.fingerprint_of(data)
    with pytest.raises(ArtifactError, match=r"x\.json.*'<\|x\|>'.*-1"):
        Tokenizer.from_dict(data, where="x.json")


def test_hash_index_finds_exactly_the_hashes_it_holds():
    # Both lookups: buckets by top bits (random hashes) and binary search (crowded buckets,
    # as crafted hashes would make them); hashes of short tokens are small numbers.
    rng = np.random.default_rng(0)
    held = np.unique(
        np.concatenate([np.arange(1, 300, dtype=np.uint64), rng.integers(0, 2**63, 5000, dtype=np.uint64)])
    )
    rng.shuffle(held)
    queries = np.concatenate(
        [held, rng.integers(0, 2**63, 5000, dtype=np.uint64), np.arange(300, 600, dtype=np.uint64)]
    )
    position = {int(h): i for i, h in enumerate(held)}
    expected = [position.get(int(q), -1) for q in queries]
    index = _HashIndex(held)
    for crowded in (False, True):
        index.crowded = crowded
        found, at = index.lookup(queries)
        assert np.where(found, at, -1).tolist() == expected


def test_a_token_longer_than_64_kb_has_a_fingerprint():
    # The fingerprint wrote each length in 2 bytes: OverflowError for a token this long.
    ranks = {bytes([b]): b for b in range(256)} | {b"a" * 70_000: 256}
    tok = Tokenizer(RankModel(ranks, rule="tiktoken"))
    other = Tokenizer(RankModel(ranks | {b"b" * 70_000: 257}, rule="tiktoken"))
    assert len(tok.fingerprint) == 64 and tok.fingerprint != other.fingerprint


def test_the_fingerprint_does_not_depend_on_how_the_pair_table_is_held():
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257, b"bc": 258}
    derived = RankModel(ranks, rule="tiktoken")
    given = RankModel(ranks, rule="tiktoken", pair_table=tiktoken_pair_table(ranks))
    assert isinstance(derived.pair_table, PairTable) and dict(derived.pair_table) == dict(given.pair_table)
    assert derived.fingerprint("gpt2", {}) == given.fingerprint("gpt2", {})
