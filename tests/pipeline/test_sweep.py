"""``bytepair sweep``: one row per vocabulary size, the character baseline, the JSON and the PNG.

Oracles: facts derivable by hand (the baseline has one token per character and covers exactly
``context`` characters; embedding size is vocab x dim; the pieces of a word spell the word;
more merges never lengthen a sequence), the PNG file signature, and ``json``.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from bytepair.cli import main
from bytepair.datasets import find_split_files
from bytepair.datasets.errors import DatasetError, MissingDependencyError
from bytepair.datasets.sweep import check_plotting, sweep, table, write_outputs
from datafiles import data_file

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
WORDS = ("electromagnetism", "uncharacteristically")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The first lines of WikiText-2's train (60k characters) and valid (20k)."""
    folder = tmp_path_factory.mktemp("sweep")
    source = data_file("wikitext-2/train.txt").parent
    for name, size in (("train.txt", 60_000), ("valid.txt", 20_000)):
        text = (source / name).read_text(encoding="utf-8")
        (folder / name).write_text(text[: text.index("\n", size) + 1], encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def result(corpus):
    return sweep(
        files=find_split_files(corpus), vocab_sizes=[300, 200, 250], dim=64, context=100, words=WORDS, max_chars=30_000
    )


@pytest.mark.data
def test_one_row_per_size_in_order_after_the_character_baseline(result):
    assert [row.requested for row in result.rows] == [None, 200, 250, 300]
    assert [row.vocab_size for row in result.rows[1:]] == [200, 250, 300]
    assert result.rows[0].merges == 0 and result.rows[0].longest == []


@pytest.mark.data
def test_the_baseline_has_one_token_per_character(corpus, result):
    train_text = (corpus / "train.txt").read_text(encoding="utf-8")
    baseline = result.rows[0]
    assert baseline.train_tokens == baseline.train_characters == len(train_text)
    assert baseline.compression == 1.0
    assert baseline.context_characters == 100
    val_text = (corpus / "valid.txt").read_text(encoding="utf-8")
    assert baseline.vocab_size == len(set(train_text + val_text))


@pytest.mark.data
def test_more_merges_mean_shorter_sequences_and_more_context(result):
    tokens = [row.train_tokens for row in result.rows]
    covered = [row.context_characters for row in result.rows]
    assert tokens == sorted(tokens, reverse=True) and tokens[-1] < tokens[0]
    assert covered == sorted(covered) and covered[-1] > 100
    for row in result.rows:
        assert row.compression == pytest.approx(row.train_characters / row.train_tokens, abs=1e-4)


@pytest.mark.data
def test_embedding_size_is_vocab_times_dim(result):
    assert [row.embedding_parameters for row in result.rows] == [row.vocab_size * 64 for row in result.rows]


@pytest.mark.data
def test_rare_words_split_into_pieces_that_spell_them(result):
    for row in result.rows:
        for word in WORDS:
            assert "".join(row.words[word]) == word
    assert len(result.rows[0].words["electromagnetism"]) == len("electromagnetism")
    assert len(result.rows[-1].words["electromagnetism"]) < len("electromagnetism")


@pytest.mark.data
def test_longest_tokens_are_learned_tokens_longest_first(result):
    row = result.rows[-1]
    lengths = [len(token) for _, token in row.longest]
    assert lengths == sorted(lengths, reverse=True) and lengths[0] > 1
    base = result.rows[0].vocab_size
    assert all(token_id >= base for token_id, _ in row.longest)


@pytest.mark.data
def test_json_and_png_are_written(tmp_path, result):
    pytest.importorskip("matplotlib")
    paths = write_outputs(result, tmp_path)
    assert paths["png"].read_bytes()[:8] == PNG_SIGNATURE
    data = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert [row["vocab_size"] for row in data["rows"]] == [row.vocab_size for row in result.rows]
    assert data["config"]["dim"] == 64 and data["config"]["train_characters"] == 30_000
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.data
def test_the_table_shows_every_size_and_word(result):
    lines = table(result)
    assert "embedding x64" in lines[0] and "chars in 100 val tokens" in lines[0]
    rows = lines[1 : 1 + len(result.rows)]
    assert [line.split()[0] for line in rows] == [f"{result.rows[0].vocab_size}*", "200", "250", "300"]
    assert "'electromagnetism':" in lines and "'uncharacteristically':" in lines


def test_without_matplotlib_the_error_says_what_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    with pytest.raises(MissingDependencyError, match=r"pip install 'bytepair\[plot\]'"):
        check_plotting()


@pytest.mark.data
@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"vocab_sizes": []}, "vocab_sizes must be positive integers"),
        ({"vocab_sizes": [300, -1]}, r"\[300, -1\]"),
        ({"dim": 0}, "dim must be a positive integer, not 0"),
    ],
)
def test_bad_settings_are_refused(corpus, kwargs, message):
    with pytest.raises(DatasetError, match=message):
        sweep(files=find_split_files(corpus), **kwargs)


@pytest.mark.data
def test_the_sweep_command_prints_the_table_and_writes_the_png(tmp_path, capsys, corpus):
    pytest.importorskip("matplotlib")
    status = main(
        ["sweep", str(corpus), "--vocab-sizes", "200", "260", "--max-chars", "20000", "-o", str(tmp_path), "--quiet"]
    )
    output = capsys.readouterr().out
    assert status == 0
    assert "compression" in output and "'neurocomputational':" in output
    assert (tmp_path / "sweep.png").read_bytes()[:8] == PNG_SIGNATURE


@pytest.mark.data
def test_the_sweep_command_prints_json_on_request(tmp_path, capsys, corpus):
    status = main(
        [
            "sweep",
            str(corpus),
            "--vocab-sizes",
            "200",
            "--max-chars",
            "20000",
            "-o",
            str(tmp_path),
            "--json",
            "--no-plot",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert status == 0 and [row["requested"] for row in data["rows"]] == [None, 200]
    assert not (tmp_path / "sweep.png").exists()


@pytest.mark.data
def test_the_sweep_command_points_from_vocab_size_to_vocab_sizes(tmp_path, capsys, corpus):
    status = main(["sweep", str(corpus), "--vocab-size", "500", "-o", str(tmp_path)])
    assert status == 2
    assert "use --vocab-sizes 500" in capsys.readouterr().err


def test_a_small_sweep_needs_no_real_data(tmp_path):
    texts = {"train": "low lower lowest newer newest wider widest\n" * 40, "val": "lower newest\n" * 30}
    result = sweep(texts=texts, vocab_sizes=[20, 30], dim=8, context=10, words=["lowest"])
    assert [row.vocab_size for row in result.rows] == [len(set(texts["train"])), 20, 30]
    assert result.rows[0].context_characters == 10 < result.rows[-1].context_characters
    assert result.rows[-1].words["lowest"] != list("lowest") and "".join(result.rows[-1].words["lowest"]) == "lowest"
    paths = write_outputs(result, tmp_path, plot=importlib.util.find_spec("matplotlib") is not None)
    assert json.loads(paths["json"].read_text(encoding="utf-8"))["config"]["context"] == 10
    if "png" in paths:
        assert paths["png"].read_bytes()[:8] == PNG_SIGNATURE


@pytest.mark.parametrize(("mode", "floor"), [("char", 12), ("byte", 256)])
def test_a_size_below_the_base_alphabet_is_refused_before_training(mode, floor):
    texts = {"train": "low lower lowest newer newest wider widest\n" * 40, "val": "lower newest\n" * 30}
    assert len(set(texts["train"] + texts["val"])) == 12
    with pytest.raises(DatasetError, match=f"vocab size 10 is below the {floor} tokens of the base alphabet") as caught:
        sweep(texts=texts, vocab_sizes=[10, 300], mode=mode)
    assert f"give sizes of at least {floor}" in str(caught.value)
