"""Bits per byte in ``bytepair gpt eval`` and ``gpt compare``, with special tokens left out.

bits per byte = summed negative log-likelihood over a span / (its UTF-8 bytes x ln 2). Oracles:
uniform logits (every token costs ln V, by hand), one full forward pass of a tiny model, and the
byte counts of the text itself. Special tokens (document separators) stand for no text: their
loss is not summed, their bytes are not counted, and they are reported as ``special_tokens``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="bytepair.gpt needs PyTorch (pip install 'bytepair[gpt]')")

from tinygpt import UniformModel, one_torch_thread  # noqa: E402, F401 (one_torch_thread: autouse fixture)

import bytepair  # noqa: E402 (after the torch check)
from bytepair import gpt  # noqa: E402 (after the torch check)
from bytepair.gpt.cli import main as gpt_main  # noqa: E402 (after the torch check)
from bytepair.gpt.data import TokenLengths, aligned_spans  # noqa: E402 (after the torch check)
from bytepair.gpt.evaluation import evaluate_span, summed_nll  # noqa: E402 (after the torch check)

TINY = {"block_size": 16, "embedding_dim": 32, "num_heads": 2, "num_layers": 1, "dropout": 0.0}
SEPARATOR = "<|sep|>"
# Multi-byte text, so bytes and characters differ: accents (2 bytes), CJK (3), emoji (4).
DOCUMENTS = [f"Café número {i}: naïve façade — 東京 {'🌍' * (i % 3)} élan.\n" for i in range(120)]


@pytest.fixture(scope="module")
def tokenizer():
    tok = bytepair.train("".join(DOCUMENTS), mode="byte", vocab_size=300, pattern="gpt2", progress=False)
    return tok.add_special_tokens([SEPARATOR])


def joined(tokenizer, documents):
    """Documents encoded one by one, a separator token between them (as a corpus encoder writes)."""
    ids = []
    for number, document in enumerate(documents):
        if number:
            ids.append(tokenizer.special_tokens[SEPARATOR])
        ids += tokenizer.encode(document)
    return np.asarray(ids, dtype=np.uint16)


def test_uniform_logits_give_tokens_times_log2_v_over_bytes():
    # id 0 = "a" (1 byte), id 1 = "bb" (2 bytes), id 2 = "é" (1 character, 2 bytes)
    lengths = TokenLengths(bytes=np.array([1, 2, 2]), characters=np.array([1, 2, 1]))
    ids = np.array([0, 1, 1, 2, 0, 1, 2, 2, 0, 0, 1, 0, 2, 1, 1, 0, 2, 0, 1, 1, 0, 2, 1], dtype=np.uint16)
    (span,) = aligned_spans([(ids, lengths)])
    size = sum([1, 2, 2][i] for i in ids[1:])  # the first token is context only
    result = evaluate_span(UniformModel(vocab_size=3, block_size=4), ids, span, batch_size=2)
    assert result.bytes == size and result.special_tokens == 0
    assert result.bits_per_byte == pytest.approx((len(ids) - 1) * math.log2(3) / size, rel=1e-6)
    assert result.bits_per_byte * result.bytes == pytest.approx(result.bits_per_character * result.characters)


def test_special_tokens_are_counted_not_scored(tokenizer):
    ids = joined(tokenizer, DOCUMENTS[:10])
    lengths = TokenLengths.of(tokenizer)
    (span,) = aligned_spans([(ids, lengths)])
    assert span.special_tokens == 9
    text = "".join(DOCUMENTS[:10])
    first = tokenizer.token_bytes(int(ids[0]))
    assert span.bytes == len(text.encode("utf-8")) - len(first)
    result = evaluate_span(UniformModel(tokenizer.vocab_size, 16), ids, span, special=lengths.special)
    scored = len(ids) - 1 - 9
    assert (result.tokens, result.special_tokens) == (scored, 9)
    assert result.nats == pytest.approx(scored * math.log(tokenizer.vocab_size), rel=1e-6)
    assert result.bits_per_byte == pytest.approx(scored * math.log2(tokenizer.vocab_size) / span.bytes, rel=1e-6)


def test_masked_sum_is_the_full_sum_less_the_special_targets(tokenizer):
    torch.manual_seed(0)
    model = gpt.GPT(gpt.GPTConfig(vocab_size=tokenizer.vocab_size, **{**TINY, "block_size": 256})).eval()
    ids = joined(tokenizer, DOCUMENTS[:3])
    lengths = TokenLengths.of(tokenizer)
    (span,) = aligned_spans([(ids, lengths)])
    assert span.end - span.start < 256  # one window: one forward pass is the oracle
    inputs = torch.from_numpy(ids.astype(np.int64))
    with torch.no_grad():
        losses = torch.nn.functional.cross_entropy(model(inputs[None, :-1])[0], inputs[1:], reduction="none")
    keep = torch.from_numpy(~lengths.special[ids[1:]])
    got = summed_nll(model, ids, span, special=lengths.special)
    assert got == pytest.approx(float(losses[keep].sum()), rel=1e-5)
    assert got < float(losses.sum())


def write_encoded(folder, tokenizer, tokenizer_path, documents_by_split):
    """A folder in ``bytepair prepare``'s layout; splits hold separators between documents."""
    folder.mkdir(parents=True, exist_ok=True)
    splits = {}
    for name, documents in documents_by_split.items():
        ids = joined(tokenizer, documents)
        ids.tofile(folder / f"{name}.bin")
        text = "".join(documents)
        splits[name] = {
            "tokens": len(ids),
            "characters": len(text),
            "bytes": len(text.encode("utf-8")),
            "file": f"{name}.bin",
        }
    meta = {
        "tokenizer": tokenizer_path,
        "fingerprint": tokenizer.fingerprint,
        "vocab_size": tokenizer.vocab_size,
        "dtype": "uint16",
        "splits": splits,
    }
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, tokenizer):
    root = tmp_path_factory.mktemp("prepared")
    by_split = {"train": DOCUMENTS[:100], "val": DOCUMENTS[100:110], "test": DOCUMENTS[110:]}
    char = bytepair.train("".join(DOCUMENTS), mode="char", vocab_size=len(set("".join(DOCUMENTS))), progress=False)
    char.add_special_tokens([SEPARATOR])
    tokenizer.save(root / "tokenizer.json")
    (root / "encoded_char").mkdir()
    char.save(root / "encoded_char" / "tokenizer.json")
    write_encoded(root / "encoded_bpe", tokenizer, "../tokenizer.json", by_split)
    write_encoded(root / "encoded_char", char, "tokenizer.json", by_split)
    return root


@pytest.mark.slow
def test_cli_eval_reports_bits_per_byte(prepared, tmp_path, capsys):
    data = str(prepared / "encoded_bpe")
    out = str(tmp_path / "bpe")
    assert (
        gpt_main(
            [
                "train",
                data,
                "--out",
                out,
                "--max-steps",
                "2",
                "--eval-interval",
                "1",
                "--batch-size",
                "4",
                "--block-size",
                "16",
                "--embedding-dim",
                "32",
                "--num-heads",
                "2",
                "--num-layers",
                "1",
                "--no-progress",
            ]
        )
        == 0
    )
    assert "bits/byte" in capsys.readouterr().out
    assert gpt_main(["eval", out, data]) == 0
    printed = capsys.readouterr().out
    assert "bits/byte" in printed and "special tokens not scored" in printed
    assert gpt_main(["eval", out, data, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    val_text = "".join(DOCUMENTS[100:110])
    assert report["special_tokens"] == 9
    # the whole split but its first token (context only), separators not counted
    assert len(val_text) - 5 < report["characters"] < len(val_text)
    assert len(val_text.encode("utf-8")) - 5 * 4 < report["bytes"] < len(val_text.encode("utf-8"))
    assert report["bytes"] > report["characters"]  # multi-byte text
    assert report["bits_per_byte"] == pytest.approx(report["nats"] / (report["bytes"] * math.log(2)))
    assert report["bits_per_character"] == pytest.approx(report["nats"] / (report["characters"] * math.log(2)))
    assert report["tokens"] > 0


@pytest.mark.slow
def test_compare_reports_bits_per_byte_over_the_same_bytes(prepared, tmp_path):
    result = gpt.compare(
        prepared, tmp_path, characters=2000, batch_size=4, eval_points=1, eval_characters=None, progress=False, **TINY
    )
    models = result.to_dict()["models"]
    for split in ("val", "test"):
        char, bpe = models["char"][split], models["bpe"][split]
        assert char["bytes"] == bpe["bytes"] and char["characters"] == bpe["characters"]
        assert char["bytes"] > char["characters"]
        assert char["special_tokens"] == bpe["special_tokens"] > 0
        for model in (char, bpe):
            assert model["bits_per_byte"] == pytest.approx(model["nats"] / (model["bytes"] * math.log(2)))
    table = result.table()
    assert "val bits / byte" in table and "test bits / byte" in table
