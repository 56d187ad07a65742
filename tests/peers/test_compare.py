"""``bytepair compare`` as a user runs it: a real process, real texts, real vocabularies.

Oracles for the counts: tiktoken (GPT-2, built from the local rank file and tiktoken's own
pattern constant) and HF tokenizers (Llama 3's tokenizer.json); bytes and characters are
counted from the files themselves.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import bytepair
from datafiles import data_file

tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")

pytestmark = pytest.mark.peers


def bytepair_cli(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "bytepair", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
    )


@pytest.fixture(scope="module")
def gpt2_encoding():
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext.openai_public import r50k_pat_str

    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
        ranks = load_tiktoken_bpe(str(data_file("vocab/r50k_base.tiktoken")))
    return tiktoken.Encoding(
        "gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 50256}
    )


@pytest.fixture(scope="module")
def ours(tmp_path_factory, wikitext_valid):
    path = tmp_path_factory.mktemp("compare") / "wiki-byte.json"
    bytepair.train(wikitext_valid[:300_000], mode="byte", vocab_size=2000, pattern="gpt2").save(path)
    return path


@pytest.fixture(scope="module")
def udhr_report(ours):
    """The JSON report over the whole UDHR folder (460 languages), four tokenizers."""
    result = bytepair_cli(
        "compare",
        data_file("multilingual/udhr"),
        "-t",
        "gpt2",
        "-t",
        "o200k_base",
        "-t",
        "llama3",
        "-t",
        ours,
        "--vocab-dir",
        data_file("vocab"),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.data
def test_one_row_per_language_and_a_total(udhr_report):
    files = sorted(data_file("multilingual/udhr").glob("*.txt"))
    assert [row["name"] for row in udhr_report["texts"]] == [p.stem for p in files]
    assert [t["label"] for t in udhr_report["tokenizers"]] == ["gpt2", "o200k_base", "llama3", "wiki-byte"]
    total = udhr_report["total"]
    assert total["texts"] == len(files) and total["skipped"] == 0
    for label in ("gpt2", "llama3"):
        assert total["results"][label]["tokens"] == sum(row["results"][label]["tokens"] for row in udhr_report["texts"])


@pytest.mark.data
@pytest.mark.parametrize("language", ["eng", "cmn_hans", "arb", "hin", "rus", "jpn"])
def test_counts_and_ratios_match_the_libraries(udhr_report, gpt2_encoding, language):
    text = data_file(f"multilingual/udhr/{language}.txt").read_text(encoding="utf-8")
    row = next(row for row in udhr_report["texts"] if row["name"] == language)
    assert (row["chars"], row["bytes"]) == (len(text), len(text.encode("utf-8")))
    llama3 = tokenizers.Tokenizer.from_file(str(data_file("vocab/hf/llama3/tokenizer.json")))
    expected = {
        "gpt2": len(gpt2_encoding.encode_ordinary(text)),
        "llama3": len(llama3.encode(text, add_special_tokens=False).ids),
    }
    for label, count in expected.items():
        result = row["results"][label]
        assert result["tokens"] == count
        assert result["bytes_per_token"] == pytest.approx(row["bytes"] / count, abs=1e-4)
        assert result["chars_per_token"] == pytest.approx(row["chars"] / count, abs=1e-4)


@pytest.mark.data
def test_bigger_vocabularies_carry_more_bytes_per_token_on_chinese(udhr_report):
    # GPT-2 has few CJK tokens: well under 2 bytes (one character is 3) per token; o200k more.
    row = next(row for row in udhr_report["texts"] if row["name"] == "cmn_hans")["results"]
    assert row["gpt2"]["bytes_per_token"] < 2 < row["o200k_base"]["bytes_per_token"]


@pytest.mark.data
def test_the_table_shows_every_tokenizer_and_the_total(ours, tmp_path):
    folder = tmp_path / "texts"
    folder.mkdir()
    for language in ("eng", "fra", "cmn_hans"):
        (folder / f"{language}.txt").symlink_to(data_file(f"multilingual/udhr/{language}.txt"))
    result = bytepair_cli("compare", folder, "-t", "gpt2", "-t", ours, "--vocab-dir", data_file("vocab"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "gpt2" in lines[0] and "wiki-byte" in lines[0]
    assert lines[1].split()[:3] == ["text", "chars", "bytes"] and lines[1].count("B/tok") == 2
    assert [line.split()[0] for line in lines[2:]] == ["cmn_hans", "eng", "fra", "total"]
    assert "comparing 3 text(s)" in result.stderr


@pytest.mark.data
def test_standard_input(gpt2_encoding):
    text = "Machine learning is powerful. 机器学习很强大。 L'apprentissage automatique est puissant. 🤖💪"
    result = bytepair_cli("compare", "-", "-t", "gpt2", "--vocab-dir", data_file("vocab"), "--json", stdin=text)
    assert result.returncode == 0, result.stderr
    row = json.loads(result.stdout)["texts"][0]
    assert row["name"] == "stdin"
    assert row["results"]["gpt2"]["tokens"] == len(gpt2_encoding.encode_ordinary(text))


@pytest.mark.data
def test_a_character_level_tokenizer_shows_na_where_it_cannot_encode(tmp_path):
    path = tmp_path / "char.json"
    bytepair.train("the quick brown fox jumps over the lazy dog " * 30, mode="char", vocab_size=40).save(path)
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "a.txt").write_text("the dog", encoding="utf-8")
    (tmp_path / "texts" / "b.txt").write_text("der Hund 犬", encoding="utf-8")
    result = bytepair_cli(
        "compare", tmp_path / "texts", "-t", path, "-t", "gpt2", "--vocab-dir", data_file("vocab"), "--json"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    rows = {row["name"]: row["results"]["char"] for row in report["texts"]}
    assert rows["a"]["tokens"] > 0 and rows["b"]["tokens"] is None and "犬" in rows["b"]["error"]
    assert (report["total"]["texts"], report["total"]["skipped"]) == (1, 1)
    table = bytepair_cli("compare", tmp_path / "texts", "-t", path, "-t", "gpt2", "--vocab-dir", data_file("vocab"))
    assert "n/a" in table.stdout and "total (1 of 2 texts)" in table.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.txt", "-t", "gpt2"], "no such file or folder"),
        (["-", "-t", "gpt5"], "unknown vocabulary 'gpt5'"),
    ],
)
def test_mistakes_are_one_error_line(args, message):
    result = bytepair_cli("compare", *args, stdin="text")
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_rows_of_files_with_the_same_stem_are_named_by_their_paths(tmp_path):
    path = tmp_path / "tok.json"
    bytepair.train("the quick brown fox jumps over the lazy dog " * 30, mode="byte", vocab_size=300).save(path)
    for folder, name, text in (("one", "x.txt", "the fox"), ("one", "x.md", "the dog"), ("two", "x.txt", "a fox")):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / name).write_text(text, encoding="utf-8")
    (tmp_path / "y.txt").write_text("the", encoding="utf-8")
    result = bytepair_cli("compare", tmp_path / "one", tmp_path / "two", tmp_path / "y.txt", "-t", path, "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row["chars"] for row in json.loads(result.stdout)["texts"]}
    assert rows == {
        str(tmp_path / "one" / "x.md"): 7,
        str(tmp_path / "one" / "x.txt"): 7,
        str(tmp_path / "two" / "x.txt"): 5,
        "y": 3,
    }
