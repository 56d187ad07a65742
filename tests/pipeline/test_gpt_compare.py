"""``bytepair gpt compare`` on several tokenizations of one text: one budget, the same yardstick.

Three tokenizations of a small generated corpus (a character baseline and two BPE sizes), each
written by ``bytepair prepare`` itself, and two ``encode-corpus`` shard folders; tiny models on
the CPU. Oracles: the decoded text of each evaluated span, a plain window-by-window forward
pass of each saved checkpoint (its nats, divided by the span's UTF-8 bytes x ln 2), and the
budget arithmetic (steps x tokens per step x text per token).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="bytepair.gpt needs PyTorch (pip install 'bytepair[gpt]')")
pytest.importorskip("matplotlib", reason="the comparison plot needs matplotlib (pip install 'bytepair[gpt]')")

from tinygpt import one_torch_thread  # noqa: E402, F401 (autouse fixture)

import bytepair  # noqa: E402
from bytepair import gpt  # noqa: E402
from bytepair.datasets.corpus import encode_corpus  # noqa: E402
from bytepair.datasets.prepare import prepare  # noqa: E402
from bytepair.gpt.checkpoint import load_checkpoint, restore_model  # noqa: E402
from bytepair.gpt.cli import main as gpt_main  # noqa: E402
from generated import wikitext_like  # noqa: E402

TINY = dict(
    batch_size=4,
    block_size=16,
    embedding_dim=32,
    num_heads=2,
    num_layers=1,
    dropout=0.0,
    learning_rate=3e-3,
    eval_points=2,
    eval_characters=300,
    progress=False,
)
TOKENS_PER_STEP = TINY["batch_size"] * TINY["block_size"]


def texts(seed=0):
    return {
        "train": wikitext_like(12_000, seed=seed),
        "val": wikitext_like(2_000, seed=seed + 1),
        "test": wikitext_like(2_000, seed=seed + 2),
    }


def prepared(folder, split_texts, **options):
    return prepare(folder, texts=split_texts, progress=False, log=lambda *args: None, **options).out


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """``small/`` (encoded_char/ and a BPE of 150 ids) and ``large/`` (a BPE of 400 ids)."""
    root = tmp_path_factory.mktemp("prepared")
    split_texts = texts()
    small = prepared(root / "small", split_texts, vocab_size=150, char_baseline=True)
    large = prepared(root / "large", split_texts, vocab_size=400)
    return small, large


@pytest.fixture(scope="module")
def compared(folders, tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    return out, gpt.compare(list(folders), out, characters=6000, **TINY)


def plain_nats(model, ids, start, end, block_size):
    """Summed -ln p of targets ``start:end``, in windows of ``block_size`` targets, each window's
    first target predicted from the token just before it (one forward pass per window)."""
    total = 0.0
    with torch.inference_mode():
        for first in range(start, end, block_size):
            last = min(first + block_size, end)
            inputs = torch.tensor(ids[first - 1 : last - 1].astype(np.int64))[None]
            log_probs = torch.log_softmax(model(inputs)[0].float(), dim=-1)
            targets = torch.tensor(ids[first:last].astype(np.int64))
            total -= float(log_probs[torch.arange(len(targets)), targets].sum())
    return total


@pytest.mark.slow
def test_three_tokenizations_one_budget_one_yardstick(compared, folders):
    out, comparison = compared
    report = json.loads((out / "comparison.json").read_text())
    models = report["models"]
    assert list(models) == ["char", "bpe-150", "bpe-400"]  # named apart by vocabulary size
    assert report["budget"] == {"unit": "characters", "value": 6000}
    for split in ("val", "test"):  # the same text for every model
        assert len({(m[split]["characters"], m[split]["bytes"]) for m in models.values()}) == 1
        assert min(m[split]["characters"] for m in models.values()) >= 300
    split_texts = texts()
    evaluated = set()
    for name, model in models.items():
        folder = {
            "char": folders[0] / "encoded_char",
            "bpe-150": folders[0] / "encoded_bpe",
            "bpe-400": folders[1] / "encoded_bpe",
        }[name]
        meta = json.loads((folder / "meta.json").read_text())
        tokenizer = bytepair.load(folder / meta["tokenizer"])
        ids = np.fromfile(folder / "val.bin", dtype=meta["dtype"])
        span = model["spans"]["val"]
        text = tokenizer.decode(ids[span["start"] : span["end"]].tolist())
        assert text in split_texts["val"]
        evaluated.add(text)
        assert (len(text), len(text.encode("utf-8"))) == (model["val"]["characters"], model["val"]["bytes"])
        # the checkpoint, evaluated here by plain forward passes, gives the reported figure
        saved = load_checkpoint(out / name / "checkpoint.pt", tokenizer_fingerprint=tokenizer.fingerprint)
        network = restore_model(saved).eval()
        nats = plain_nats(network, ids, span["start"], span["end"], TINY["block_size"])
        assert model["val"]["nats"] == pytest.approx(nats, rel=1e-4)
        assert model["val"]["bits_per_byte"] == pytest.approx(
            nats / (len(text.encode("utf-8")) * math.log(2)), rel=1e-4
        )
        assert model["val"]["bits_per_character"] == pytest.approx(nats / (len(text) * math.log(2)), rel=1e-4)
        # the budget: steps x tokens per step x characters per token = 6,000 to within half a step
        assert (
            abs(model["steps"] * TOKENS_PER_STEP * model["characters_per_token"] - 6000)
            <= TOKENS_PER_STEP * model["characters_per_token"] / 2
        )
        assert model["curve"][-1]["bytes"] == pytest.approx(model["bytes_processed"])
    assert len(evaluated) == 1, "every model is scored on the same text"
    steps = [models[name]["steps"] for name in ("char", "bpe-150", "bpe-400")]
    assert steps[0] > steps[1] > steps[2]  # more text per token, fewer steps
    table = (out / "comparison.txt").read_text()
    assert table == comparison.table() and "bits / byte" in table and "bpe-400" in table
    assert (out / "comparison.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_a_budget_in_bytes_and_one_in_seconds(folders, tmp_path):
    small, large = folders
    by_bytes = gpt.compare([small / "encoded_bpe", large], tmp_path / "bytes", bytes=5000, **TINY).to_dict()
    assert by_bytes["budget"] == {"unit": "bytes", "value": 5000} and by_bytes["budget_characters"] is None
    for model in by_bytes["models"].values():
        assert abs(model["bytes_processed"] - 5000) <= TOKENS_PER_STEP * model["bytes_per_token"] / 2
    by_time = gpt.compare([small / "encoded_bpe", large], tmp_path / "seconds", seconds=0.5, **TINY).to_dict()
    assert by_time["budget"] == {"unit": "seconds", "value": 0.5}
    assert all(model["steps"] >= 1 for model in by_time["models"].values())


def test_different_text_is_refused_naming_the_folder(folders, tmp_path):
    small = folders[0]
    other = texts()
    swapped = other["train"].replace("ta", "ro", 1)  # same characters and bytes, different text
    assert len(swapped) == len(other["train"]) and swapped != other["train"]
    changed = prepared(tmp_path / "changed", {**other, "train": swapped}, vocab_size=300)
    with pytest.raises(gpt.PreparedDataError, match=r"changed.*does not encode the same text.*'train'"):
        gpt.compare([small, changed], tmp_path / "out", characters=1000, **TINY)
    shorter = prepared(tmp_path / "shorter", {**other, "val": other["val"][:-40]}, vocab_size=300)
    with pytest.raises(gpt.PreparedDataError, match=r"shorter.*'val'"):
        gpt.compare([small, shorter], tmp_path / "out", characters=1000, **TINY)
    assert not (tmp_path / "out").exists()


def test_two_budgets_are_refused(folders, tmp_path, capsys):
    with pytest.raises(gpt.GPTSettingError, match="one budget"):
        gpt.compare(list(folders), tmp_path / "out", characters=1000, bytes=1000, **TINY)
    with pytest.raises(SystemExit) as stopped:
        gpt_main(["compare", *map(str, folders), "--characters", "1000", "--seconds", "5"])
    assert stopped.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_budget_must_be_a_positive_count(folders, tmp_path, capsys):
    for flag, value, message in [
        ("--characters", "0", "--characters: '0' must be a positive number of characters"),
        ("--bytes", "ten", "--bytes: 'ten' is not a number of bytes"),
    ]:
        with pytest.raises(SystemExit) as stopped:
            gpt_main(["compare", *map(str, folders), flag, value, "--out", str(tmp_path / "out")])
        assert stopped.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_one_tokenization_is_refused(folders, tmp_path):
    with pytest.raises(gpt.PreparedDataError, match="two or more"):
        gpt.compare([folders[1]], tmp_path / "out", characters=1000, **TINY)


@pytest.mark.slow
def test_encode_corpus_shards_compare_on_train_and_val(tmp_path):
    documents = tmp_path / "docs"
    documents.mkdir()
    for index in range(12):
        (documents / f"{index:02d}.txt").write_text(wikitext_like(1_500, seed=10 + index), encoding="utf-8")
    sample = "".join(path.read_text(encoding="utf-8") for path in sorted(documents.iterdir()))
    tokenizers = tmp_path / "tokenizers"
    tokenizers.mkdir()
    char = bytepair.train(sample, mode="byte", vocab_size=256, special_tokens=["<|endoftext|>"])
    bpe = bytepair.train(sample, mode="byte", vocab_size=400, pattern="gpt2", special_tokens=["<|endoftext|>"])
    folders = []
    for name, tokenizer in (("bytes", char), ("bpe", bpe)):
        tokenizer.save(tokenizers / f"{name}.json")
        out = tokenizers / f"shards-{name}"  # the tokenizer file beside the shards, where compare looks
        encode_corpus(
            [documents], tokenizers / f"{name}.json", out, val_documents=2, progress=False, log=lambda *args: None
        )
        folders.append(out)
    result = gpt.compare(folders, tmp_path / "out", characters=4000, **TINY).to_dict()
    assert list(result["models"]) == ["bytes", "bpe"]
    for model in result["models"].values():
        assert model["test"] is None and model["val"]["bytes"] == result["models"]["bytes"]["val"]["bytes"]
        assert model["val"]["special_tokens"] >= 0
    assert "test bits" not in (tmp_path / "out" / "comparison.txt").read_text()
