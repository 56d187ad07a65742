"""bytepair.gpt: the model, bits per character, checkpoints tied to tokenizers, the comparison.

Tiny configurations on the CPU (2 layers, 32 dims, 16 tokens of context, a few steps), on
prepared folders built here in ``tmp_path`` with real tokenizers, in the layout that
``bytepair prepare`` writes. Oracles: hand-derived formulas (parameter count, uniform logits,
the learning-rate schedule), a single full forward pass, the tokenizers' own decoding.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="bytepair.gpt needs PyTorch (pip install 'bytepair[gpt]')")

from tinygpt import UniformModel, one_torch_thread  # noqa: E402, F401 (one_torch_thread: autouse fixture)

import bytepair  # noqa: E402
from bytepair import gpt  # noqa: E402
from bytepair.errors import UsageError  # noqa: E402
from bytepair.gpt.checkpoint import read_checkpoint, restore_model, save_checkpoint  # noqa: E402
from bytepair.gpt.cli import main as gpt_main  # noqa: E402
from bytepair.gpt.data import Span, TokenLengths, aligned_spans, sample_batch  # noqa: E402
from bytepair.gpt.evaluation import evaluate_span, summed_nll  # noqa: E402
from bytepair.gpt.model import cgroup_memory_limit, training_step_bytes  # noqa: E402
from datafiles import data_dir  # noqa: E402

TINY = dict(block_size=16, embedding_dim=32, num_heads=2, num_layers=2, dropout=0.0)
TINY_RECIPE = dict(batch_size=8, warmup_steps=2, learning_rate=3e-3, min_learning_rate=3e-4)


# -- prepared folders, in bytepair prepare's layout ------------------------------------------


def corpus_text(size=6000):
    """A few KB of TinyShakespeare, or of the standard library's docstrings when it is absent."""
    path = data_dir() / "tinyshakespeare" / "input.txt"
    if path.exists():
        return path.read_text(encoding="utf-8")[:size]
    import argparse  # any stdlib modules will do
    import json as json_module
    import pathlib

    docs = [obj.__doc__ or "" for module in (argparse, json_module, pathlib) for obj in vars(module).values()]
    return "".join(docs)[:size]


def write_encoded(folder: Path, tokenizer, tokenizer_path: str, texts: dict):
    """``folder/{split}.bin`` + ``meta.json`` for ``texts`` (split name -> text)."""
    folder.mkdir(parents=True, exist_ok=True)
    splits = {}
    for name, text in texts.items():
        ids = np.asarray(tokenizer.encode(text), dtype=np.uint16)
        ids.tofile(folder / f"{name}.bin")
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
    return folder


def write_prepared(root: Path, text: str, extra_merges=40):
    """``root/tokenizer.json``, ``root/encoded_bpe/``, ``root/encoded_char/`` from one text."""
    cut1, cut2 = int(len(text) * 0.8), int(len(text) * 0.9)
    texts = {"train": text[:cut1], "val": text[cut1:cut2], "test": text[cut2:]}
    alphabet = len(set(text))
    bpe = bytepair.train(texts["train"], mode="char", vocab_size=alphabet + extra_merges, base_text=text)
    char = bytepair.train(texts["train"], mode="char", vocab_size=alphabet, base_text=text)
    root.mkdir(parents=True, exist_ok=True)
    bpe.save(root / "tokenizer.json")
    (root / "encoded_char").mkdir()
    char.save(root / "encoded_char" / "tokenizer.json")
    write_encoded(root / "encoded_bpe", bpe, "../tokenizer.json", texts)
    write_encoded(root / "encoded_char", char, "tokenizer.json", texts)
    return root, bpe, char


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    return write_prepared(tmp_path_factory.mktemp("prepared"), corpus_text())


@pytest.fixture(scope="module")
def trained(prepared, tmp_path_factory):
    """A tiny BPE model trained for 6 steps (checkpoint folder, result)."""
    out = tmp_path_factory.mktemp("checkpoints") / "bpe"
    result = gpt.train(
        prepared[0] / "encoded_bpe", out, max_steps=6, eval_interval=3, progress=False, **TINY, **TINY_RECIPE
    )
    return out, result


# -- package ----------------------------------------------------------------------------------


def run_python(code):
    """Run ``code`` in a fresh interpreter that finds bytepair where this one does."""
    path = os.pathsep.join(entry for entry in sys.path if entry)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": path, "PATH": ""},
        timeout=120,
    )


def test_import_bytepair_does_not_import_torch():
    result = run_python("import sys, bytepair; print('torch' in sys.modules)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_gpt_without_torch_says_how_to_install():
    result = run_python("""
        import sys
        class NoTorch:
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ModuleNotFoundError("No module named 'torch'", name="torch")
        sys.meta_path.insert(0, NoTorch())
        try:
            import bytepair.gpt
        except ImportError as error:
            print(type(error).__name__, error)
    """)
    assert result.returncode == 0, result.stderr
    assert "pip install 'bytepair[gpt]'" in result.stdout


def test_cli_module_loads_without_importing_torch():
    result = run_python("import sys, bytepair.gpt.cli; print('torch' in sys.modules)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


# -- model ------------------------------------------------------------------------------------


def test_logits_shape_and_tied_weights():
    config = gpt.GPTConfig(vocab_size=37, **TINY)
    model = gpt.GPT(config)
    logits = model(torch.zeros(3, 16, dtype=torch.long))
    assert logits.shape == (3, 16, 37)
    assert model.lm_head.weight is model.token_embedding.weight
    c, v, t, layers = 32, 37, 16, 2
    per_layer = 2 * (2 * c) + (c * 3 * c + 3 * c) + (c * c + c) + (c * 4 * c + 4 * c) + (4 * c * c + c)
    expected = v * c + t * c + layers * per_layer + 2 * c  # the (V, C) matrix counted once
    assert sum(p.numel() for p in model.parameters()) == expected


def test_position_t_sees_only_the_past():
    model = gpt.GPT(gpt.GPTConfig(vocab_size=20, **TINY)).eval()
    ids = torch.randint(20, (1, 16), generator=torch.Generator().manual_seed(0))
    changed = ids.clone()
    changed[0, 10] = (ids[0, 10] + 1) % 20
    before, after = model(ids), model(changed)
    assert torch.allclose(before[:, :10], after[:, :10])
    assert not torch.allclose(before[:, 10:], after[:, 10:])


def test_longer_than_block_size_is_refused():
    model = gpt.GPT(gpt.GPTConfig(vocab_size=20, **TINY))
    with pytest.raises(gpt.GPTSettingError, match="17"):
        model(torch.zeros(1, 17, dtype=torch.long))


@pytest.mark.parametrize(
    "settings, named",
    [
        (dict(embedding_dim=30, num_heads=4), "num_heads=4"),
        (dict(num_layers=0), "num_layers=0"),
        (dict(dropout=1.0), "dropout=1.0"),
    ],
)
def test_bad_model_settings_name_the_value(settings, named):
    with pytest.raises(gpt.GPTSettingError) as error:
        gpt.GPTConfig(vocab_size=10, **settings)
    assert named in str(error.value)


def test_learning_rate_warms_up_then_follows_a_cosine():
    config = gpt.TrainConfig(max_steps=110, warmup_steps=10, learning_rate=1e-3, min_learning_rate=1e-4)
    assert gpt.learning_rate_at(0, config) == pytest.approx(1e-4)  # 1/10 of the peak
    assert gpt.learning_rate_at(9, config) == pytest.approx(1e-3)
    assert gpt.learning_rate_at(60, config) == pytest.approx((1e-3 + 1e-4) / 2)  # half way: cos = 0
    assert gpt.learning_rate_at(110, config) == pytest.approx(1e-4)


def test_top_k_1_is_greedy_whatever_the_seed():
    model = gpt.GPT(gpt.GPTConfig(vocab_size=20, **TINY)).eval()
    start = torch.tensor([[3, 4]])
    runs = [model.generate(start, 30, top_k=1, generator=torch.Generator().manual_seed(s)) for s in (0, 1, 2)]
    assert all(torch.equal(runs[0], other) for other in runs[1:])
    ids = start
    for _ in range(30):  # the oracle: argmax, one token at a time, context cropped to block_size
        next_id = model(ids[:, -16:])[:, -1].argmax(-1, keepdim=True)
        ids = torch.cat([ids, next_id], dim=1)
    assert torch.equal(runs[0], ids)


@pytest.mark.parametrize("temperature, top_k", [(0.0, None), (-1.0, None), (1.0, 0)])
def test_bad_sampling_settings_are_refused(temperature, top_k):
    model = gpt.GPT(gpt.GPTConfig(vocab_size=20, **TINY))
    with pytest.raises(gpt.GPTSettingError):
        model.generate(torch.tensor([[1]]), 3, temperature=temperature, top_k=top_k)


# -- bits per character -----------------------------------------------------------------------


def test_uniform_logits_give_tokens_times_log2_v_over_characters():
    # id 0 = "a" (1 character), id 1 = "bb" (2), id 2 = "é" (1 character, 2 bytes)
    lengths = TokenLengths(bytes=np.array([1, 2, 2]), characters=np.array([1, 2, 1]))
    ids = np.array([0, 1, 1, 2, 0, 1, 2, 2, 0, 0, 1, 0, 2, 1, 1, 0, 2, 0, 1, 1, 0, 2, 1], dtype=np.uint16)
    (span,) = aligned_spans([(ids, lengths)])
    assert (span.start, span.end) == (1, len(ids))  # the first token is context only
    characters = sum([1, 2, 1][i] for i in ids[1:])
    assert span.characters == characters
    result = evaluate_span(UniformModel(vocab_size=3, block_size=4), ids, span, batch_size=2)
    # rel 1e-6: the loss is computed in float32 (ln 3 has ~7 significant digits there)
    assert result.bits_per_character == pytest.approx((len(ids) - 1) * math.log2(3) / characters, rel=1e-6)
    assert result.perplexity == pytest.approx(3.0)


def test_summed_nll_equals_one_full_forward_pass():
    model = gpt.GPT(gpt.GPTConfig(vocab_size=11, **{**TINY, "block_size": 64})).eval()
    ids = np.random.default_rng(0).integers(0, 11, size=40).astype(np.uint16)
    inputs = torch.from_numpy(ids.astype(np.int64))
    with torch.no_grad():
        expected = torch.nn.functional.cross_entropy(model(inputs[None, :-1])[0], inputs[1:], reduction="sum")
    got = summed_nll(model, ids, Span(1, 40, 39, 39))
    assert got == pytest.approx(float(expected), rel=1e-5)


def test_summed_nll_is_the_sum_over_its_windows():
    model = gpt.GPT(gpt.GPTConfig(vocab_size=11, **TINY)).eval()  # block_size 16
    ids = np.random.default_rng(1).integers(0, 11, size=50).astype(np.uint16)
    inputs = torch.from_numpy(ids.astype(np.int64))
    expected = 0.0
    with torch.no_grad():
        for first_target in (5, 21, 37):  # targets 5..20, 21..36, 37..44, each after its inputs
            last = min(first_target + 16, 45)
            logits = model(inputs[None, first_target - 1 : last - 1])[0]
            expected += float(torch.nn.functional.cross_entropy(logits, inputs[first_target:last], reduction="sum"))
    assert summed_nll(model, ids, Span(5, 45, 40, 40), batch_size=2) == pytest.approx(expected, rel=1e-5)


def test_aligned_spans_cover_the_same_text(prepared):
    root, bpe, char = prepared
    val_text = bytepair.Tokenizer.load(root / "tokenizer.json").decode(
        np.fromfile(root / "encoded_bpe" / "val.bin", dtype=np.uint16).tolist()
    )
    streams = [(np.asarray(tok.encode(val_text)), TokenLengths.of(tok)) for tok in (char, bpe)]
    for budget in (None, 50, 200):
        char_span, bpe_span = aligned_spans(streams, budget)
        char_text = char.decode(streams[0][0][char_span.start : char_span.end].tolist())
        bpe_text = bpe.decode(streams[1][0][bpe_span.start : bpe_span.end].tolist())
        assert char_text == bpe_text
        assert char_span.characters == bpe_span.characters == len(char_text)
        assert bpe_span.tokens < char_span.tokens
        if budget is not None:
            assert budget <= len(char_text) < budget + 20  # ends at the first common boundary after it
        else:
            assert val_text.endswith(char_text)


def test_sample_batch_targets_are_inputs_shifted_by_one():
    ids = np.arange(1000, dtype=np.uint16)
    x, y = sample_batch(ids, 5, 7, torch.Generator().manual_seed(3))
    assert x.shape == y.shape == (5, 7)
    assert torch.equal(y, x + 1)  # consecutive ids: the next token is the id plus one


# -- training, checkpoints, fingerprints ------------------------------------------------------


@pytest.mark.slow
def test_loss_decreases_on_repetitive_text(tmp_path):
    root, _, _ = write_prepared(tmp_path / "prepared", "the cat sat on the mat. " * 300, extra_merges=10)
    result = gpt.train(
        root / "encoded_char",
        tmp_path / "out",
        max_steps=60,
        eval_interval=30,
        progress=False,
        **TINY,
        **{**TINY_RECIPE, "learning_rate": 1e-2, "warmup_steps": 5},
    )
    first, last = result.history[0], result.history[-1]
    assert first["step"] == 0 and last["step"] == 60
    assert last["val_bits_per_character"] < 0.5 * first["val_bits_per_character"]
    assert last["train_loss_per_token"] < result.history[1]["train_loss_per_token"]


def test_checkpoint_holds_the_run(trained, prepared):
    out, result = trained
    content = read_checkpoint(out)  # torch.load(weights_only=True) inside
    assert content["step"] == result.step == 6
    assert content["tokenizer_fingerprint"] == prepared[1].fingerprint
    assert content["model_config"] == {"vocab_size": prepared[1].vocab_size, **TINY, "expansion_factor": 4}
    assert content["train_config"]["max_steps"] == 6
    assert content["optimizer"]["state"], "the optimizer state must be saved to resume"
    assert [entry["step"] for entry in content["history"]] == [0, 3, 6]
    assert content["tokens"] == 6 * 8 * 16


def test_save_and_load_give_equal_weights(tmp_path, trained):
    content = read_checkpoint(trained[0])
    model = restore_model(content)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.5)  # make it differ from what was loaded
    save_checkpoint(tmp_path / "copy", {**content, "model": model.state_dict()})
    again = restore_model(read_checkpoint(tmp_path / "copy"))
    for (name, a), (_, b) in zip(model.state_dict().items(), again.state_dict().items()):
        assert torch.equal(a, b), name
    assert again.lm_head.weight is again.token_embedding.weight
    assert not list(tmp_path.glob("copy/.*.tmp")), "no temporary file is left behind"


def test_train_and_eval_read_encode_corpus_shards_as_compare_does(prepared, tmp_path):
    # an encode-corpus folder (a tokenizer file beside it, documents with end-of-text tokens)
    from bytepair.datasets.corpus import encode_corpus

    tokenizer = bytepair.train(corpus_text(), mode="byte", vocab_size=300, special_tokens=["<|endoftext|>"])
    tokenizer.save(tmp_path / "tok.json")
    documents = [corpus_text()[k : k + 500] for k in range(0, 6000, 500)]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps({"text": d}) + "\n" for d in documents), "utf-8")
    encode_corpus(
        [tmp_path / "docs.jsonl"],
        str(tmp_path / "tok.json"),
        tmp_path / "shards",
        val_fraction=0.3,
        progress=False,
        log=None,
    )
    result = gpt.train(
        tmp_path / "shards", tmp_path / "run", max_steps=3, eval_interval=3, progress=False, **TINY, **TINY_RECIPE
    )
    again = gpt.evaluate_checkpoint(tmp_path / "run", tmp_path / "shards", eval_characters=100_000)
    assert (again.characters, again.bytes) == (result.validation.characters, result.validation.bytes)
    assert again.bits_per_character == pytest.approx(result.validation.bits_per_character)


@pytest.mark.data
def test_sentencepiece_shards_are_scored_with_the_space_before_each_document(tmp_path):
    # encode-corpus records the documents' text; Mistral's ids also stand for a dummy-prefix
    # space before each one, which train and eval count instead of refusing the shards
    from bytepair.datasets.corpus import encode_corpus
    from bytepair.gpt.data import load_data
    from bytepair.gpt.errors import PreparedDataError
    from datafiles import data_file

    model = data_file("vocab/mistral/tokenizer.model.v1")
    (tmp_path / model.name).symlink_to(model)
    documents = [corpus_text()[k : k + 500] for k in range(0, 6000, 500)]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps({"text": d}) + "\n" for d in documents), "utf-8")
    for name, tokenizer in (
        ("shards", str(tmp_path / model.name)),
        ("gpt2", bytepair.load("gpt2", path=data_file("vocab"))),
    ):
        encode_corpus([tmp_path / "docs.jsonl"], tokenizer, tmp_path / name, val_documents=3, progress=False, log=None)
    meta = json.loads((tmp_path / "shards" / "meta.json").read_text("utf-8"))["splits"]["val"]
    val = load_data(tmp_path / "shards").split("val")
    assert (val.characters, val.bytes) == (meta["characters"] + 3, meta["bytes"] + 3)
    gpt.train(
        tmp_path / "shards", tmp_path / "run", max_steps=1, eval_interval=1, progress=False, **TINY, **TINY_RECIPE
    )
    result = gpt.evaluate_checkpoint(tmp_path / "run", tmp_path / "shards")
    assert result.bits_per_byte == pytest.approx(result.nats / (result.bytes * math.log(2)))
    with pytest.raises(PreparedDataError, match="dummy prefix"):
        gpt.compare(
            [tmp_path / "gpt2", tmp_path / "shards"], tmp_path / "both", vocab_dir=data_file("vocab"), characters=1000
        )


@pytest.mark.data
def test_sample_takes_a_published_name_with_vocab_dir_as_train_and_eval_do(tmp_path, monkeypatch, capsys):
    # a model trained on encode-corpus shards made with gpt2 is sampled offline with -t gpt2
    from bytepair.datasets.corpus import encode_corpus
    from datafiles import data_file

    monkeypatch.delenv("BYTEPAIR_VOCAB_DIR", raising=False)
    monkeypatch.setenv("BYTEPAIR_CACHE", str(tmp_path / "empty-cache"))
    vocab = data_file("vocab")
    documents = [corpus_text()[k : k + 500] for k in range(0, 6000, 500)]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps({"text": d}) + "\n" for d in documents), "utf-8")
    encode_corpus(
        [tmp_path / "docs.jsonl"],
        bytepair.load("gpt2", path=vocab),
        tmp_path / "shards",
        val_fraction=0.3,
        progress=False,
        log=None,
    )
    gpt.train(
        tmp_path / "shards",
        tmp_path / "run",
        vocab_dir=vocab,
        max_steps=1,
        eval_interval=1,
        progress=False,
        **TINY,
        **TINY_RECIPE,
    )
    args = ["sample", str(tmp_path / "run"), "-t", "gpt2", "--vocab-dir", str(vocab), "--prompt", "The"]
    assert gpt_main([*args, "--max-new-tokens", "3", "--top-k", "1"]) == 0
    assert capsys.readouterr().out.startswith("The")


def test_resuming_continues_from_the_saved_step(prepared, tmp_path):
    data = prepared[0] / "encoded_bpe"
    first = gpt.train(data, tmp_path / "run", max_steps=3, eval_interval=2, progress=False, **TINY, **TINY_RECIPE)
    resumed = gpt.train(data, tmp_path / "run", max_steps=6, resume=True, eval_interval=2, progress=False)
    assert (first.step, resumed.step) == (3, 6)
    assert [entry["step"] for entry in resumed.history] == [0, 2, 3, 4, 6]
    assert resumed.tokens == 6 * TINY_RECIPE["batch_size"] * TINY["block_size"]
    assert resumed.model_config == first.model_config  # the checkpoint's settings, not the defaults


def test_an_interrupted_run_resumes_bit_identically(prepared, tmp_path):
    from bytepair.gpt.data import load_encoded
    from bytepair.gpt.training import new_run, train_step

    data_dir = prepared[0] / "encoded_bpe"
    recipe = dict(max_steps=6, **TINY_RECIPE)
    model = {**TINY, "dropout": 0.2}  # dropout draws random numbers: their state must resume too
    straight = gpt.train(data_dir, tmp_path / "straight", eval_interval=6, progress=False, **model, **recipe)
    data = load_encoded(data_dir)  # the same run, stopped after 3 of its 6 steps
    run = new_run(data, gpt.GPTConfig(vocab_size=data.vocab_size, **model), gpt.TrainConfig(**recipe), "cpu")
    for _ in range(3):
        train_step(run, data.split("train").ids)
    save_checkpoint(tmp_path / "stopped", run.checkpoint_content())
    resumed = gpt.train(data_dir, tmp_path / "stopped", resume=True, eval_interval=6, progress=False)
    a, b = read_checkpoint(straight.checkpoint), read_checkpoint(resumed.checkpoint)
    assert b["step"] == 6
    for name in a["model"]:
        assert torch.equal(a["model"][name], b["model"][name]), name


def test_a_checkpoint_is_refused_with_another_tokenizer_of_the_same_size(tmp_path):
    text = corpus_text(3000)
    root, bpe, _ = write_prepared(tmp_path / "one", text)
    other_root, other, _ = write_prepared(tmp_path / "other", text[::-1])  # same characters, other merges
    assert other.vocab_size == bpe.vocab_size and other.fingerprint != bpe.fingerprint
    result = gpt.train(
        root / "encoded_bpe", tmp_path / "ckpt", max_steps=1, eval_interval=1, progress=False, **TINY, **TINY_RECIPE
    )
    with pytest.raises(gpt.FingerprintMismatchError) as error:
        gpt.load_checkpoint(result.checkpoint, tokenizer_fingerprint=other.fingerprint)
    assert bpe.fingerprint in str(error.value) and other.fingerprint in str(error.value)
    assert isinstance(error.value, ValueError)
    with pytest.raises(gpt.FingerprintMismatchError):
        gpt.train(other_root / "encoded_bpe", tmp_path / "ckpt", resume=True, max_steps=2, progress=False)
    with pytest.raises(gpt.FingerprintMismatchError):
        gpt.sample(tmp_path / "ckpt", other_root / "tokenizer.json", prompt=text[:5])
    with pytest.raises(gpt.FingerprintMismatchError):
        gpt.evaluate_checkpoint(tmp_path / "ckpt", other_root / "encoded_bpe")


def test_training_over_an_existing_checkpoint_is_refused(trained, prepared):
    with pytest.raises(gpt.CheckpointError, match="resume"):
        gpt.train(prepared[0] / "encoded_bpe", trained[0], max_steps=2, progress=False)


def test_resuming_with_other_settings_names_them(trained, prepared):
    with pytest.raises(gpt.CheckpointError, match=r"num_layers=3 \(checkpoint: 2\)"):
        gpt.train(prepared[0] / "encoded_bpe", trained[0], resume=True, num_layers=3, progress=False)


def test_a_truncated_checkpoint_is_a_clear_error(trained, tmp_path):
    damaged = tmp_path / "damaged.pt"
    damaged.write_bytes((trained[0] / "checkpoint.pt").read_bytes()[:1000])
    with pytest.raises(gpt.CheckpointError, match="damaged.pt"):
        read_checkpoint(damaged)
    with pytest.raises(gpt.CheckpointError, match="no checkpoint"):
        read_checkpoint(tmp_path / "nowhere")


def test_sampling_with_top_k_1_is_deterministic(trained, prepared):
    tokenizer = prepared[1]
    texts = {gpt.sample(trained[0], tokenizer, prompt="The ", max_new_tokens=20, top_k=1, seed=s) for s in (1, 2)}
    assert len(texts) == 1
    (text,) = texts
    assert tokenizer.decode(tokenizer.encode(text)) == text and text  # real vocabulary text
    random_texts = {gpt.sample(trained[0], tokenizer, prompt="The ", max_new_tokens=20, seed=s) for s in (1, 1)}
    assert len(random_texts) == 1  # seeded: the same seed gives the same sample


# -- prepared data errors ---------------------------------------------------------------------


def copy_prepared(prepared, tmp_path):
    import shutil

    return Path(shutil.copytree(prepared[0], tmp_path / "copy"))


def test_a_truncated_bin_file_is_named(prepared, tmp_path):
    root = copy_prepared(prepared, tmp_path)
    path = root / "encoded_bpe" / "val.bin"
    path.write_bytes(path.read_bytes()[:-2])
    with pytest.raises(gpt.PreparedDataError, match="val.bin"):
        gpt.load_encoded(root / "encoded_bpe")


def test_data_encoded_by_another_tokenizer_is_refused(prepared, tmp_path):
    root = copy_prepared(prepared, tmp_path)
    meta = json.loads((root / "encoded_bpe" / "meta.json").read_text())
    meta["fingerprint"] = "0" * 64
    (root / "encoded_bpe" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(gpt.PreparedDataError, match="0" * 64):
        gpt.load_encoded(root / "encoded_bpe")


def test_the_prepare_root_instead_of_an_encoded_folder_gets_a_hint(prepared):
    with pytest.raises(gpt.PreparedDataError, match="encoded_bpe"):
        gpt.load_encoded(prepared[0])


# -- comparison and command line --------------------------------------------------------------


COMPARE = dict(
    characters=4000, batch_size=4, eval_points=2, eval_characters=300, progress=False, learning_rate=3e-3, **TINY
)


@pytest.fixture(scope="module")
def compared(prepared, tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    return out, gpt.compare(prepared[0], out, **COMPARE)


@pytest.mark.slow
def test_compare_writes_table_json_and_png(compared, prepared):
    out, comparison = compared
    assert (out / "comparison.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = json.loads((out / "comparison.json").read_text())
    assert set(report["models"]) == {"char", "bpe"}
    char, bpe = report["models"]["char"], report["models"]["bpe"]
    assert char["val"]["characters"] == bpe["val"]["characters"] >= 300
    assert char["test"]["characters"] == bpe["test"]["characters"]
    assert bpe["characters_per_token"] > 1.0 == char["characters_per_token"]
    assert bpe["steps"] < char["steps"]
    for model in (char, bpe):  # the character budget, to within one step
        assert abs(model["characters_processed"] - 4000) <= 4 * 16 * model["characters_per_token"]
        assert model["val"]["bits_per_character"] == pytest.approx(
            model["val"]["nats"] / (model["val"]["characters"] * math.log(2))
        )
        assert model["train_seconds"] > 0 and model["wall_seconds"] >= model["train_seconds"]
    table = (out / "comparison.txt").read_text()
    assert "bits / character" in table and "does not compare across tokenizers" in table
    assert table == comparison.table()
    assert (out / "char" / "checkpoint.pt").exists() and (out / "bpe" / "checkpoint.pt").exists()
    with pytest.raises(gpt.CheckpointError, match="overwrite"):
        gpt.compare(prepared[0], out, characters=4000, progress=False)


def test_compare_without_the_character_baseline_says_how_to_write_it(prepared, tmp_path, capsys):
    import shutil

    from bytepair.cli import main

    root = copy_prepared(prepared, tmp_path)
    shutil.rmtree(root / "encoded_char")  # what `bytepair prepare` writes without --char-baseline
    with pytest.raises(gpt.PreparedDataError, match="--char-baseline"):
        gpt.compare(root, tmp_path / "out", **COMPARE)
    assert not (tmp_path / "out").exists()
    assert main(["gpt", "compare", str(root), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and "--char-baseline" in error and len(error.strip().splitlines()) == 1


@pytest.mark.slow
def test_compare_is_reproducible(compared, prepared, tmp_path):
    first = compared[1].to_dict()["models"]
    again = gpt.compare(prepared[0], tmp_path, **COMPARE).to_dict()["models"]
    for name in ("char", "bpe"):
        assert again[name]["val"] == first[name]["val"] and again[name]["test"] == first[name]["test"]
        assert [e["val_nats"] for e in again[name]["curve"]] == [e["val_nats"] for e in first[name]["curve"]]


def test_compare_without_matplotlib_says_what_to_install(prepared, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # makes the import fail
    with pytest.raises(gpt.MissingDependencyError, match=r"pip install 'bytepair\[gpt\]'"):
        gpt.compare(prepared[0], tmp_path, **COMPARE)
    assert not list(tmp_path.iterdir()), "it fails before training, leaving nothing behind"


def test_cli_compare_json(prepared, tmp_path, capsys):
    args = [
        "compare",
        str(prepared[0]),
        "--out",
        str(tmp_path),
        "--characters",
        "2,000",
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
        "--eval-points",
        "1",
        "--eval-characters",
        "200",
        "--json",
        "--no-progress",
    ]
    assert gpt_main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["budget_characters"] == 2000 and set(report["models"]) == {"char", "bpe"}
    assert "perplexity" in report["note"]


def test_cli_train_eval_sample(prepared, tmp_path, capsys):
    data = str(prepared[0] / "encoded_bpe")
    out = str(tmp_path / "cli")
    code = gpt_main(
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
    printed = capsys.readouterr().out
    assert code == 0 and "checkpoint:" in printed and "bits/character" in printed
    assert gpt_main(["eval", out, data, "--json"]) == 0
    evaluation = json.loads(capsys.readouterr().out)
    assert evaluation["bits_per_character"] > 0 and evaluation["split"] == "val"
    assert (
        gpt_main(
            [
                "sample",
                out,
                "--tokenizer",
                str(prepared[0] / "tokenizer.json"),
                "--prompt",
                "The ",
                "--max-new-tokens",
                "5",
                "--top-k",
                "1",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.startswith("The ")


def test_cli_user_mistakes_are_one_line(tmp_path, capsys):
    assert gpt_main(["train", str(tmp_path / "missing"), "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and error.count("\n") == 1
    assert f"{str(tmp_path / 'missing')!r}: no such folder" in error
    (tmp_path / "empty").mkdir()
    assert gpt_main(["train", str(tmp_path / "empty"), "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and error.count("\n") == 1 and "has no meta.json" in error


@pytest.mark.parametrize("batch_size", [0, -1])
def test_eval_refuses_a_batch_size_below_one(trained, prepared, capsys, batch_size):
    with pytest.raises(gpt.GPTSettingError, match=f"batch_size={batch_size}"):
        gpt.evaluate_checkpoint(trained[0], prepared[0] / "encoded_bpe", batch_size=batch_size)
    args = ["eval", str(trained[0]), str(prepared[0] / "encoded_bpe"), "--batch-size", str(batch_size)]
    assert gpt_main(args) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and error.count("\n") == 1 and f"batch_size={batch_size}" in error


def test_running_out_of_memory_in_eval_is_one_line_naming_the_sizes(trained, prepared, capsys, monkeypatch):
    import torch

    import bytepair.gpt.evaluation as evaluation

    def out_of_memory(*args, **kwargs):  # what torch raises when the CPU allocator fails
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:119] DefaultCPUAllocator: can't allocate memory")

    monkeypatch.setattr(evaluation, "evaluate_checkpoint", out_of_memory)
    args = ["eval", str(trained[0]), str(prepared[0] / "encoded_bpe"), "--batch-size", "4096", "--device", "cpu"]
    assert gpt_main(args) == 2
    assert capsys.readouterr().err == "error: out of memory on cpu; use a smaller --batch-size\n"
    monkeypatch.setattr(
        evaluation, "evaluate_checkpoint", lambda *a, **k: (_ for _ in ()).throw(torch.OutOfMemoryError())
    )
    assert gpt_main(args) == 2 and capsys.readouterr().err.startswith("error: out of memory on cpu")


@pytest.mark.parametrize("setting", ["batch_size", "block_size", "eval_batch_size"])
def test_compare_refuses_a_size_of_zero_before_training(prepared, tmp_path, setting):
    with pytest.raises(gpt.GPTSettingError, match=f"{setting}=0"):
        gpt.compare(prepared[0], tmp_path, **{**COMPARE, setting: 0})
    assert not list(tmp_path.iterdir())


def test_train_refuses_a_model_that_cannot_fit_in_memory(prepared, tmp_path, capsys):
    # 10**12 tokens of context: petabytes, so no machine fits it and nothing may be allocated
    with pytest.raises(gpt.GPTSettingError, match=r"block_size=1000000000000 .* GB of memory on cpu"):
        gpt.train(prepared[0] / "encoded_bpe", tmp_path / "big", device="cpu", progress=False, block_size=10**12)
    args = ["train", str(prepared[0] / "encoded_bpe"), "--out", str(tmp_path / "big"), "--block-size", str(10**12)]
    assert gpt_main([*args, "--device", "cpu", "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and error.count("\n") == 1 and "block_size=1000000000000" in error
    assert not (tmp_path / "big").exists()


def test_training_memory_estimate_counts_the_model_and_its_logits():
    config = gpt.GPTConfig(vocab_size=50, **TINY)
    model, activations = training_step_bytes(config, 4)
    # float32 weights, gradients and AdamW's two moments; the (B, T, V) logits and their gradient
    assert model == 4 * 4 * sum(p.numel() for p in gpt.GPT(config).parameters())
    assert activations >= 2 * 4 * (4 * 16 * 50)


def _cgroup_tree(tmp_path, membership, files):
    (tmp_path / "fs").mkdir(parents=True)
    for name, value in files.items():
        (tmp_path / "fs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "fs" / name).write_text(value, encoding="ascii")
    (tmp_path / "cgroup").write_text(membership, encoding="ascii")
    return cgroup_memory_limit(root=str(tmp_path / "fs"), membership=str(tmp_path / "cgroup"))


def test_memory_limit_of_a_container_is_read_from_its_cgroup(tmp_path):
    # a container sees the host's RAM through sysconf; its own limit is in its control group
    v2 = _cgroup_tree(tmp_path / "v2", "0::/docker/abc\n", {"docker/abc/memory.max": "2147483648\n"})
    assert v2 == 2 * 1024**3
    v1 = "12:pids:/\n4:memory:/docker/abc\n1:cpu,cpuacct:/\n"
    assert _cgroup_tree(tmp_path / "v1", v1, {"memory/docker/abc/memory.limit_in_bytes": "536870912\n"}) == 2**29
    # inside the container only its own tree is mounted, at the root
    assert _cgroup_tree(tmp_path / "own", "0::/docker/abc\n", {"memory.max": "1073741824\n"}) == 2**30
    # no limit: "max" (v2), a page-rounded 2**63 (v1), or nothing readable
    assert _cgroup_tree(tmp_path / "max", "0::/\n", {"memory.max": "max\n"}) is None
    assert _cgroup_tree(tmp_path / "huge", v1, {"memory/memory.limit_in_bytes": "9223372036854771712\n"}) is None
    assert _cgroup_tree(tmp_path / "none", "0::/a\n", {}) is None
    assert cgroup_memory_limit(membership=str(tmp_path / "missing")) is None


@pytest.mark.parametrize("out", ["small.txt", "small.txt/run", "small.txt/checkpoint.pt"])
def test_train_out_that_is_a_file_is_refused_before_training(prepared, tmp_path, monkeypatch, capsys, out):
    monkeypatch.chdir(tmp_path)
    Path("small.txt").write_text("notes\n", encoding="utf-8")
    args = ["train", str(prepared[0] / "encoded_bpe"), "--out", out, "--max-steps", "1", "--no-progress"]
    assert gpt_main(args) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: --out ") and error.count("\n") == 1 and "'small.txt' is a file" in error
    assert Path("small.txt").read_text(encoding="utf-8") == "notes\n"
    with pytest.raises(UsageError, match=r"out_dir 'small.txt.*' is a file"):  # the same from Python
        gpt.train(prepared[0] / "encoded_bpe", out, max_steps=1, progress=False)


def test_compare_out_that_is_a_file_is_refused(prepared, tmp_path, capsys):
    (tmp_path / "small.txt").write_text("notes\n", encoding="utf-8")
    assert gpt_main(["compare", str(prepared[0]), "--out", str(tmp_path / "small.txt"), "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: --out ") and error.count("\n") == 1 and "is a file" in error
