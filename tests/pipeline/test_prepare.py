"""``bytepair prepare`` end to end: the files it writes, what they decode to, and what it refuses.

Oracles: the split texts themselves (every stream must decode to exactly its text), the
characters' sorted set (the base alphabet and the character ids are derivable by hand),
``bytepair.reference`` (merge replay on a test slice), ``bytepair.train`` on the training
prefix alone (merges come from train only), and ``torch.load`` / ``np.memmap`` reading the
files back the way a training script does.
"""

from __future__ import annotations

import importlib.util
import json
import unicodedata

import numpy as np
import pytest

from bytepair import reference
from bytepair.cli import main
from bytepair.datasets import find_split_files
from bytepair.datasets.blocks import SplitSource, barrier_cut
from bytepair.datasets.encode import encode_text
from bytepair.datasets.errors import DatasetError
from bytepair.datasets.prepare import prepare
from bytepair.tokenizer import Tokenizer
from bytepair.train import train
from datafiles import data_file

SPLITS = ("train", "val", "test")
MAX_CHARS = 40_000
VOCAB = 400


def real_slice(folder):
    """The first lines of WikiText-2's train, valid and test (about 120k/30k/30k characters)."""
    source = data_file("wikitext-2/train.txt").parent
    sizes = {"train.txt": 120_000, "valid.txt": 30_000, "test.txt": 30_000}
    folder.mkdir(parents=True, exist_ok=True)
    for name, size in sizes.items():
        text = (source / name).read_text(encoding="utf-8")
        (folder / name).write_text(text[: text.index("\n", size) + 1], encoding="utf-8")
    return folder


def split_texts(folder):
    files = find_split_files(folder)
    return {name: path.read_bytes().decode("utf-8") for name, path in files.items()}


def read_stream(folder, name):
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    ids = np.memmap(folder / meta["splits"][name]["file"], dtype=meta["dtype"], mode="r")
    return meta, ids


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    root = tmp_path_factory.mktemp("prepare")
    corpus = real_slice(root / "corpus")
    out = root / "out"
    torch = importlib.util.find_spec("torch") is not None
    result = prepare(
        out,
        files=find_split_files(corpus),
        vocab_size=VOCAB,
        max_chars=MAX_CHARS,
        char_baseline=True,
        pt_files=torch,
        log=None,
        progress=False,
    )
    return corpus, out, result


# -- the files --------------------------------------------------------------------------------


def test_by_default_only_the_tokenizer_and_the_bpe_streams_are_written(tmp_path):
    texts = {"train": "the cat sat on the mat . \n" * 50, "val": "the mat . \n" * 5}
    result = prepare(tmp_path / "out", texts=texts, vocab_size=30, log=None, progress=False)
    written = {p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert written == {
        "tokenizer.bytepair.json",
        "encoded_bpe/meta.json",
        "encoded_bpe/train.bin",
        "encoded_bpe/val.bin",
    }
    assert result.char_tokenizer is None and result.splits["train"].char_tokens is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging folder, no lock left


@pytest.mark.data
def test_every_file_of_the_layout_is_written(prepared):
    _, out, _ = prepared
    expected = {
        "tokenizer.bytepair.json",
        "encoded_bpe/meta.json",
        "encoded_char/meta.json",
        "encoded_char/tokenizer.bytepair.json",
    }
    expected |= {f"encoded_{kind}/{name}.bin" for kind in ("bpe", "char") for name in SPLITS}
    if importlib.util.find_spec("torch") is not None:
        expected |= {f"encoded_bpe/{name}_ids.pt" for name in SPLITS}
    written = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert written == expected


@pytest.mark.data
def test_each_stream_decodes_to_exactly_its_split(prepared):
    corpus, out, _ = prepared
    texts = split_texts(corpus)
    for kind in ("bpe", "char"):
        folder = out / f"encoded_{kind}"
        for name in SPLITS:
            meta, ids = read_stream(folder, name)
            tokenizer = Tokenizer.load(folder / meta["tokenizer"])
            assert tokenizer.fingerprint == meta["fingerprint"] and tokenizer.vocab_size == meta["vocab_size"]
            assert tokenizer.decode(ids) == texts[name], (kind, name)
            entry = meta["splits"][name]
            assert entry["tokens"] == len(ids)
            assert entry["characters"] == len(texts[name])
            assert entry["bytes"] == len(texts[name].encode("utf-8"))
            assert 0 <= int(ids.min()) and int(ids.max()) < meta["vocab_size"]


@pytest.mark.data
def test_streams_are_uint16_when_the_vocabulary_fits(prepared):
    _, out, _ = prepared
    meta, ids = read_stream(out / "encoded_bpe", "val")
    assert meta["dtype"] == "uint16" and ids.dtype == np.uint16
    assert (out / "encoded_bpe" / "val.bin").stat().st_size == 2 * meta["splits"]["val"]["tokens"]


@pytest.mark.data
def test_the_base_alphabet_comes_from_every_split_and_char_ids_are_its_indices(prepared):
    corpus, out, result = prepared
    texts = split_texts(corpus)
    alphabet = sorted(set("".join(texts.values())))
    assert list(result.tokenizer.base_tokens) == alphabet
    assert set(texts["test"]) - set(texts["train"][:MAX_CHARS])  # so the test below means something
    index = {character: i for i, character in enumerate(alphabet)}
    for name in SPLITS:
        _, ids = read_stream(out / "encoded_char", name)
        assert ids.tolist() == [index[c] for c in texts[name]]
    char_tokenizer = Tokenizer.load(out / "encoded_char" / "tokenizer.bytepair.json")
    assert list(char_tokenizer.base_tokens) == alphabet and char_tokenizer.merges == ()


@pytest.mark.data
def test_merges_come_from_the_training_prefix_only(prepared):
    corpus, _, result = prepared
    texts = split_texts(corpus)
    alphabet = sorted(set("".join(texts.values())))
    alone = train(texts["train"][:MAX_CHARS], vocab_size=VOCAB, base_tokens=alphabet, progress=False)
    assert result.tokenizer.fingerprint == alone.fingerprint
    assert result.train_characters == MAX_CHARS


@pytest.mark.data
def test_bpe_ids_equal_the_reference_replay_over_the_whole_split(prepared):
    corpus, out, result = prepared
    text = split_texts(corpus)["test"]
    values = reference.vocabulary(result.tokenizer.base_tokens, result.tokenizer.merges)
    index = {value: i for i, value in enumerate(values)}
    expected = [index[v] for v in reference.encode_piece(list(text), result.tokenizer.merges)]
    _, ids = read_stream(out / "encoded_bpe", "test")
    assert ids.tolist() == expected


@pytest.mark.data
def test_torch_files_hold_the_same_ids_as_long_tensors(prepared):
    torch = pytest.importorskip("torch")
    _, out, _ = prepared
    for name in SPLITS:
        tensor = torch.load(out / "encoded_bpe" / f"{name}_ids.pt")
        _, ids = read_stream(out / "encoded_bpe", name)
        assert tensor.dtype == torch.long and tensor.tolist() == ids.tolist()


@pytest.mark.data
def test_the_gpt_package_reads_the_layout(prepared):
    data = pytest.importorskip("bytepair.gpt.data")
    _, out, result = prepared
    encoded = data.load_encoded(out / "encoded_bpe")
    assert encoded.split("train").tokens == result.splits["train"].bpe_tokens
    assert encoded.split("val").characters == result.splits["val"].characters


def test_the_report_names_a_base_alphabet_in_char_mode_only(tmp_path):
    texts = {"train": "the cat sat on the mat . \n" * 50, "val": "the mat . \n" * 5}
    char = prepare(tmp_path / "char", texts=texts, vocab_size=30, log=None, progress=False)
    byte = prepare(tmp_path / "byte", texts=texts, mode="byte", vocab_size=260, log=None, progress=False)
    assert "base alphabet: 12 characters, from all splits" in char.report  # space . newline a c e h m n o s t
    assert not [line for line in byte.report if "alphabet" in line]  # its base is the 256 bytes


@pytest.mark.data
def test_the_report_has_the_seeds_figures(prepared):
    _, _, result = prepared
    report = "\n".join(result.report)
    train_split = result.splits["train"]
    assert f"character token count: {train_split.characters:,}" in report
    assert f"BPE token count:       {train_split.bpe_tokens:,}" in report
    assert f"{train_split.characters / train_split.bpe_tokens:.2f}x" in report
    assert "longest learned tokens" in report and "'Artificial intelligence and machine learning'" in report
    assert train_split.bpe_tokens < train_split.char_tokens == train_split.characters


# -- large splits, options ----------------------------------------------------------------------


@pytest.mark.data
def test_with_a_pattern_blocks_give_exactly_the_ids_of_encoding_whole(tmp_path, prepared):
    corpus, _, _ = prepared
    texts = split_texts(corpus)
    result = prepare(
        tmp_path,
        files=find_split_files(corpus),
        pattern="gpt2",
        vocab_size=450,
        max_chars=None,
        block_chars=5_000,
        whole_split_chars=10_000,
        log=None,
        progress=False,
        pt_files=False,
    )
    # training streamed the train split in blocks too, and learned exactly the whole text's merges
    alphabet = sorted(set("".join(texts.values())))
    whole = train(texts["train"], pattern="gpt2", vocab_size=450, base_tokens=alphabet, progress=False)
    assert result.tokenizer.fingerprint == whole.fingerprint
    for name in SPLITS:
        _, ids = read_stream(tmp_path / "encoded_bpe", name)
        assert ids.tolist() == whole.encode_ordinary(texts[name]), name


@pytest.mark.data
def test_without_a_pattern_blocks_cut_at_merge_barriers_give_exactly_the_whole_ids(tmp_path, prepared):
    corpus, _, fixture_result = prepared
    texts = split_texts(corpus)
    blocks = list(SplitSource("train", text=texts["train"]).blocks(5_000, cut=barrier_cut(fixture_result.tokenizer)))
    assert len(blocks) > 10 and "".join(blocks) == texts["train"]
    result = prepare(
        tmp_path,
        files=find_split_files(corpus),
        vocab_size=VOCAB,
        max_chars=MAX_CHARS,
        block_chars=5_000,
        log=None,
        progress=False,
        pt_files=False,
    )
    for name in SPLITS:
        _, ids = read_stream(tmp_path / "encoded_bpe", name)
        assert ids.tolist() == result.tokenizer.encode_ordinary(texts[name]), name


@pytest.mark.data
def test_no_pattern_with_normalization_past_the_memory_threshold_is_cut_at_newlines(tmp_path, prepared):
    corpus, _, _ = prepared
    texts = split_texts(corpus)
    result = prepare(
        tmp_path,
        files=find_split_files(corpus),
        vocab_size=VOCAB,
        normalization="NFC",
        block_chars=5_000,
        whole_split_chars=10_000,
        log=None,
        progress=False,
        pt_files=False,
    )
    for name in SPLITS:
        _, ids = read_stream(tmp_path / "encoded_bpe", name)
        assert result.tokenizer.decode(ids) == unicodedata.normalize("NFC", texts[name])


def test_cleaning_and_normalization_change_what_is_encoded_and_counted(tmp_path):
    raw = " = Title = \n \n The ﬁrst 1 @,@ 000 <unk> . \n"
    texts = {"train": raw * 50, "val": raw, "test": raw}
    result = prepare(
        tmp_path,
        texts=texts,
        cleaning="clean",
        normalization="NFKC",
        vocab_size=40,
        log=None,
        progress=False,
        pt_files=False,
    )
    expected = unicodedata.normalize("NFKC", "= Title =\nThe ﬁrst 1,000 <unk> .\n")
    meta, ids = read_stream(tmp_path / "encoded_bpe", "val")
    assert result.tokenizer.decode(ids) == expected
    assert meta["splits"]["val"]["characters"] == len(expected) and meta["cleaning"] == "clean"
    assert "ﬁ" not in result.tokenizer.base_tokens


def test_only_the_splits_given_are_written(tmp_path):
    prepare(tmp_path, texts={"train": "abc abd abe " * 30}, vocab_size=12, log=None, progress=False, pt_files=False)
    meta = json.loads((tmp_path / "encoded_bpe" / "meta.json").read_text(encoding="utf-8"))
    assert list(meta["splits"]) == ["train"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"texts": {"val": "abc"}}, "no 'train' split"),
        ({"texts": {"train": "abc", "dev": "abc"}}, r"unknown split name\(s\) \['dev'\]"),
        ({"texts": {"train": "abc"}, "files": {"train": "x.txt"}}, "either as files= or as texts="),
        ({"texts": {"train": "abc"}, "cleaning": "strip"}, "unknown cleaning 'strip'"),
        ({"files": {"train": "no/such/file.txt"}}, "does not exist"),
    ],
)
def test_bad_splits_are_refused_before_any_work(tmp_path, kwargs, message):
    with pytest.raises(DatasetError, match=message):
        prepare(tmp_path / "out", log=None, **kwargs)
    assert not (tmp_path / "out").exists()


# -- interruption ---------------------------------------------------------------------------------


def files_in(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_an_interrupted_prepare_leaves_no_partial_file_and_the_old_output_intact(tmp_path, monkeypatch):
    texts = {"train": "the cat sat on the mat . \n" * 200, "val": "the mat . \n" * 20, "test": "the cat . \n" * 20}
    out = tmp_path / "out"
    prepare(out, texts=texts, vocab_size=30, log=None, progress=False, pt_files=False)
    before = files_in(out)
    calls = []
    original = Tokenizer.encode_to_array

    def failing(self, text, **kwargs):
        calls.append(len(text))
        if len(calls) == 3:
            raise RuntimeError("simulated crash while encoding")
        return original(self, text, **kwargs)

    monkeypatch.setattr(Tokenizer, "encode_to_array", failing)
    with pytest.raises(RuntimeError, match="simulated crash"):
        prepare(
            out,
            texts={**texts, "val": "a different mat . \n" * 20},
            vocab_size=30,
            log=None,
            progress=False,
            pt_files=False,
        )
    assert files_in(out) == before  # nothing new, nothing half-written, no temporary file


def test_an_interrupted_first_prepare_leaves_no_file_at_all(tmp_path, monkeypatch):
    def failing(self, text, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Tokenizer, "encode_to_array", failing)
    with pytest.raises(KeyboardInterrupt):
        prepare(
            tmp_path,
            texts={"train": "abc abd " * 40, "val": "abc "},
            vocab_size=10,
            log=None,
            progress=False,
            pt_files=False,
        )
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


# -- command line -----------------------------------------------------------------------------------


@pytest.mark.data
def test_the_prepare_command_writes_the_layout_and_prints_the_report(tmp_path, capsys, prepared):
    corpus, _, _ = prepared
    status = main(
        [
            "prepare",
            str(corpus),
            "-o",
            str(tmp_path),
            "--vocab-size",
            "300",
            "--max-chars",
            "20000",
            "--quiet",
            "--char-baseline",
        ]
    )
    output = capsys.readouterr().out
    assert status == 0
    assert "character token count:" in output and "compression factor:" in output and "sample:" in output
    meta = json.loads((tmp_path / "encoded_bpe" / "meta.json").read_text(encoding="utf-8"))
    assert meta["vocab_size"] == 300 and meta["train_characters"] == 20_000
    assert not list(tmp_path.rglob("*.pt"))
    char_meta = json.loads((tmp_path / "encoded_char" / "meta.json").read_text(encoding="utf-8"))
    assert char_meta["splits"]["val"]["characters"] == meta["splits"]["val"]["characters"]


def test_the_prepare_command_takes_explicit_files_and_max_chars_zero_means_all(tmp_path, capsys):
    train_file = tmp_path / "a.txt"
    train_file.write_text("low lower lowest newer newest\n" * 20, encoding="utf-8")
    status = main(
        [
            "prepare",
            "--train",
            str(train_file),
            "-o",
            str(tmp_path / "out"),
            "--vocab-size",
            "20",
            "--max-chars",
            "0",
            "--quiet",
            "--no-pt",
        ]
    )
    assert status == 0
    meta = json.loads((tmp_path / "out" / "encoded_bpe" / "meta.json").read_text(encoding="utf-8"))
    assert meta["train_characters"] == len(train_file.read_text(encoding="utf-8"))
    assert "trained on" in capsys.readouterr().out


def test_the_prepare_command_refuses_two_corpora_with_one_error_line(tmp_path, capsys):
    status = main(["prepare", str(tmp_path), "--train", str(tmp_path / "x.txt"), "-o", str(tmp_path / "out")])
    error = capsys.readouterr().err
    assert status == 2
    assert error.startswith("error: give the corpus one way") and "SOURCE and --train/--val/--test" in error


@pytest.mark.data
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"pattern": "gpt2"},
        {"pattern": "cl100k", "normalization": "NFKC"},
        {"normalization": "NFC"},
        {"mode": "byte"},
    ],
)
def test_encoding_in_parallel_blocks_equals_encoding_whole(prepared, options):
    corpus, _, _ = prepared
    texts = split_texts(corpus)
    vocab = 300 if options.get("mode") == "byte" else VOCAB
    base = sorted(set("".join(texts.values()))) if options.get("mode") != "byte" else None
    tokenizer = train(texts["train"][:MAX_CHARS], vocab_size=vocab, base_tokens=base, progress=False, **options)
    ids = encode_text(tokenizer, texts["val"], num_threads=3, block_chars=2_000)
    assert ids.tolist() == tokenizer.encode_ordinary(texts["val"])


def test_ids_that_do_not_decode_to_their_text_are_caught_and_nothing_is_written(tmp_path, monkeypatch):
    from bytepair.datasets.errors import PrepareError

    original = Tokenizer.encode_to_array

    def corrupt(self, text, **kwargs):
        ids = original(self, text, **kwargs).copy()
        if len(ids) > 3:
            ids[3] = (ids[3] + 1) % self.vocab_size  # one wrong id, as a faulty encoder would give
        return ids

    monkeypatch.setattr(Tokenizer, "encode_to_array", corrupt)
    with pytest.raises(PrepareError, match="round trip failed"):
        prepare(
            tmp_path,
            texts={"train": "the cat sat on the mat\n" * 30},
            vocab_size=20,
            log=None,
            progress=False,
            pt_files=False,
        )
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


# -- an existing tokenizer ----------------------------------------------------------------------


def test_an_existing_tokenizer_file_encodes_the_splits_and_nothing_is_trained(tmp_path, capsys):
    texts = {"train": "the cat sat on the mat . \n" * 80, "val": "the mat sat . \n" * 8, "test": "a cat . \n" * 8}
    tokenizer = train("the cat sat on the mat and the dog . \n" * 20, vocab_size=40, progress=False)
    tokenizer.save(tmp_path / "mine.json")
    result = prepare(tmp_path / "out", texts=texts, tokenizer=tmp_path / "mine.json", log=None, progress=False)
    assert result.tokenizer.fingerprint == tokenizer.fingerprint and result.train_characters is None
    for name in SPLITS:
        meta, ids = read_stream(tmp_path / "out" / "encoded_bpe", name)
        assert ids.tolist() == tokenizer.encode_ordinary(texts[name])
    assert meta["train_characters"] is None and meta["tokenizer_source"] == "mine.json"
    assert Tokenizer.load(tmp_path / "out" / "tokenizer.bytepair.json").fingerprint == tokenizer.fingerprint
    # the command: only typed training flags count, and they are refused with one line
    (tmp_path / "t.txt").write_text(texts["train"], encoding="utf-8")
    status = main(
        [
            "prepare",
            "--train",
            str(tmp_path / "t.txt"),
            "-o",
            str(tmp_path / "cli"),
            "-t",
            str(tmp_path / "mine.json"),
            "--quiet",
        ]
    )
    assert status == 0 and "nothing trained" in capsys.readouterr().out
    status = main(
        [
            "prepare",
            "--train",
            str(tmp_path / "t.txt"),
            "-o",
            str(tmp_path / "cli2"),
            "-t",
            str(tmp_path / "mine.json"),
            "--vocab-size",
            "300",
            "--max-chars",
            "0",
        ]
    )
    error = capsys.readouterr().err
    assert status == 2 and "--max-chars, --vocab-size" in error and len(error.strip().splitlines()) == 1
    assert not (tmp_path / "cli2").exists()


def test_a_tokenizer_with_training_options_is_refused(tmp_path):
    from bytepair.errors import UsageError

    with pytest.raises(UsageError, match="nothing is trained.*--pattern"):
        prepare(tmp_path / "out", texts={"train": "abc"}, tokenizer="gpt2", pattern="gpt2", log=None)
    assert not (tmp_path / "out").exists()


@pytest.mark.data
def test_a_sentencepiece_model_is_refused_before_any_text_is_read_with_encode_corpus_named(tmp_path):
    from bytepair.errors import UsageError

    model = data_file("vocab/mistral/tokenizer.model.v1")
    with pytest.raises(UsageError, match=r"SentencePiece model.*bytepair encode-corpus FILES -t TOKENIZER"):
        prepare(tmp_path / "out", texts={"train": "abc"}, tokenizer=model, log=None)
    assert not (tmp_path / "out").exists()


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.parametrize("name, written", [("gpt2", "gpt2.tiktoken"), ("llama3", "tokenizer.json")])
def test_a_published_tokenizer_encodes_wikitext_and_the_gpt_package_reads_it(tmp_path, prepared, name, written):
    import bytepair

    corpus, _, _ = prepared
    texts = split_texts(corpus)
    vocab = data_file("vocab")
    expected = bytepair.load(name, path=vocab)
    out = tmp_path / "out"
    result = prepare(
        out,
        files=find_split_files(corpus),
        tokenizer=name,
        vocab_dir=vocab,
        char_baseline=True,
        log=None,
        progress=False,
    )
    assert sorted(p.name for p in out.iterdir()) == sorted(["encoded_bpe", "encoded_char", written])
    assert bytepair.load(out / written).fingerprint == expected.fingerprint == result.tokenizer.fingerprint
    assert any(line.startswith(f"wrote {out / written}, ") for line in result.report)  # names the file it wrote
    for split in SPLITS:
        meta, ids = read_stream(out / "encoded_bpe", split)
        assert meta["tokenizer"] == f"../{written}" and meta["tokenizer_source"] == name
        assert ids.tolist() == expected.encode_ordinary(texts[split]), split
        assert meta["splits"][split]["characters"] == len(texts[split])
    data = pytest.importorskip("bytepair.gpt.data")
    assert data.load_encoded(out / "encoded_bpe").fingerprint == expected.fingerprint
