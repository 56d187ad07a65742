"""WikiText-2 loading, cleaning and download; reading splits in blocks and where blocks may end.

Oracles: the files' own bytes (faithful loading), cleaning rules written out by hand on
hand-written lines, tiktoken's own pre-tokenization regexes and Llama 3's ``tokenizer.json``
(cutting a text must not change its pieces), ``unicodedata`` (nor its normalization), and
``hashlib`` (checksums). Downloads go to a small HTTP server on 127.0.0.1, never the internet.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import json
import threading
import unicodedata
import zipfile

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import reference
from bytepair.datasets import wikitext
from bytepair.datasets.blocks import SplitSource, barrier_cut, newline_cut, read_file_blocks, safe_cut
from bytepair.datasets.errors import ChecksumError, DatasetError, DownloadError
from bytepair.datasets.wikitext import (
    clean_text,
    download_wikitext,
    find_split_files,
    is_heading,
    load_wikitext,
    split_articles,
)
from bytepair.train import train
from datafiles import data_dir, data_file

# Three short "articles" in WikiText's own layout: blank lines, a leading space on every line,
# headings, @-@ markers, <unk>, spaced punctuation.
RAW = {
    "train": " \n = Homarus = \n \n Homarus is a <unk> lobster , 1 @,@ 000 km long . \n = = Life = = \n It is blue @-@ black . \n",
    "val": " \n = Valkyria = \n \n A role @-@ playing game from 2011 , 0 @.@ 7 ms . \n",
    "test": " \n = Robert = \n \n Robert was an actor . \n",
}


def write_split_files(folder, names, texts=RAW):
    folder.mkdir(parents=True, exist_ok=True)
    for split, name in names.items():
        (folder / name).write_bytes(texts[split].encode("utf-8"))
    return folder


# -- finding and loading ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["raw", "tokens", "txt"])
def test_each_wikitext_naming_is_found_and_mapped_to_train_val_test(tmp_path, kind):
    names = wikitext.WIKITEXT_FILES[kind]
    write_split_files(tmp_path, names)
    found = find_split_files(tmp_path)
    assert {split: path.name for split, path in found.items()} == names


def test_the_folders_the_zips_unpack_to_are_searched(tmp_path):
    write_split_files(tmp_path / "wikitext-2-raw", wikitext.WIKITEXT_FILES["raw"])
    found = find_split_files(tmp_path, variant="raw")
    assert found["train"] == tmp_path / "wikitext-2-raw" / "wiki.train.raw"


def test_variant_picks_raw_or_tokens_when_both_are_there(tmp_path):
    write_split_files(tmp_path, wikitext.WIKITEXT_FILES["raw"])
    write_split_files(tmp_path, wikitext.WIKITEXT_FILES["tokens"])
    assert find_split_files(tmp_path, variant="tokens")["val"].name == "wiki.valid.tokens"
    assert find_split_files(tmp_path, variant="raw")["val"].name == "wiki.valid.raw"
    assert find_split_files(tmp_path)["val"].name == "wiki.valid.raw"  # auto prefers the original text


@pytest.mark.parametrize(
    "names",
    [
        {"train": "train.txt", "val": "val.txt", "test": "test.txt"},
        {"train": "train.txt", "val": "validation.txt"},
        {"train": "wikitext2_train_clean.txt", "val": "wikitext2_val_clean.txt", "test": "wikitext2_test_clean.txt"},
    ],
)
def test_plain_corpus_folders_and_the_seeds_clean_files_are_found(tmp_path, names):
    write_split_files(tmp_path, names)
    found = find_split_files(tmp_path)
    assert {split: path.name for split, path in found.items()} == names


def test_a_folder_without_train_names_what_it_looked_for(tmp_path):
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"wiki\.train\.raw.*train\.txt"):
        find_split_files(tmp_path)


def test_a_missing_folder_and_an_unknown_variant_are_clear_errors(tmp_path):
    with pytest.raises(DatasetError, match="is not a folder"):
        find_split_files(tmp_path / "nowhere")
    with pytest.raises(DatasetError, match="'raw', 'tokens' or 'auto'"):
        find_split_files(tmp_path, variant="wikitext-103")


def test_loading_is_faithful_by_default_every_byte_kept(tmp_path):
    texts = dict(RAW, val=RAW["val"].replace("\n", "\r\n"))  # CRLF must survive too
    write_split_files(tmp_path, wikitext.WIKITEXT_FILES["raw"], texts)
    loaded = load_wikitext(tmp_path)
    assert loaded == texts


@pytest.mark.data
def test_real_wikitext2_loads_byte_for_byte():
    folder = data_file("wikitext-2/valid.txt").parent
    loaded = load_wikitext(folder)
    for split, name in (("train", "train.txt"), ("val", "valid.txt"), ("test", "test.txt")):
        assert loaded[split].encode("utf-8") == (folder / name).read_bytes()
    # MANIFEST.md: valid.txt is 1,121,681 bytes, test.txt 1,256,449, train.txt 10,797,148.
    assert [len(loaded[s].encode("utf-8")) for s in ("val", "test", "train")] == [1_121_681, 1_256_449, 10_797_148]
    assert loaded["val"].startswith(" \n = Homarus gammarus = \n")


def test_write_texts_uses_the_seeds_file_names(tmp_path):
    paths = wikitext.write_texts({"train": "a\n", "val": "b\n"}, tmp_path)
    assert paths["train"].name == "wikitext2_train_clean.txt"
    assert (tmp_path / "wikitext2_val_clean.txt").read_text(encoding="utf-8") == "b\n"
    assert find_split_files(tmp_path)["val"] == paths["val"]


# -- cleaning -----------------------------------------------------------------------------------


def test_clean_drops_blank_lines_strips_edges_joins_markers_keeps_unk_and_headings():
    assert clean_text(RAW["train"]) == (
        "= Homarus =\nHomarus is a <unk> lobster , 1,000 km long .\n= = Life = =\nIt is blue-black .\n"
    )


def test_clean_no_headings_also_drops_the_heading_lines():
    assert clean_text(RAW["val"], "clean-no-headings") == "A role-playing game from 2011 , 0.7 ms .\n"


def test_none_is_the_identity_and_unknown_cleanings_are_refused():
    assert clean_text(RAW["test"], "none") == RAW["test"]
    assert clean_text(RAW["test"], None) == RAW["test"]
    with pytest.raises(DatasetError, match="'detokenize'.*none, clean, clean-no-headings"):
        clean_text("x", "detokenize")


def test_clean_treats_crlf_as_a_line_end_and_keeps_other_separators_inside_lines():
    assert clean_text(" a \r\n \r\n b\u2028c \n") == "a\nb\u2028c\n"


@pytest.mark.parametrize(
    "line, heading",
    [
        (" = Title = ", True),
        (" = = Section = = ", True),
        (" = = = Sub section = = = ", True),
        (" a = b = c ", False),
        (" = = unbalanced = ", False),
        (" = = = = ", False),
        (" x = ", False),
    ],
)
def test_headings_are_balanced_runs_of_equal_signs(line, heading):
    assert is_heading(line) is heading


LINES = st.lists(
    st.sampled_from(
        [" ", "  ", " = A = ", " = = B = = ", " x @-@ y ", " 1 @,@ 0 ", " <unk> , . ", "", " \r", "é @.@ 5"]
    ),
    max_size=12,
)


@given(lines=LINES, cut=st.integers(0, 12), cleaning=st.sampled_from(wikitext.CLEANINGS))
def test_cleaning_in_blocks_cut_at_newlines_equals_cleaning_whole(lines, cut, cleaning):
    head, tail = "".join(line + "\n" for line in lines[:cut]), "".join(line + "\n" for line in lines[cut:])
    assert clean_text(head, cleaning) + clean_text(tail, cleaning) == clean_text(head + tail, cleaning)


@given(lines=LINES)
def test_cleaning_twice_changes_nothing_more(lines):
    once = clean_text("\n".join(lines))
    assert clean_text(once) == once


# -- articles -----------------------------------------------------------------------------------


def test_articles_start_at_top_level_headings_and_join_back_into_the_text():
    text = " \n = Alpha = \n one \n = = Part = = \n two \n = Beta = \n three \n a = b = c \n"
    articles = split_articles(text)
    assert articles == [" \n", " = Alpha = \n one \n = = Part = = \n two \n", " = Beta = \n three \n a = b = c \n"]
    sections = split_articles(text, sections=True)
    assert sections == [" \n", " = Alpha = \n one \n", " = = Part = = \n two \n", " = Beta = \n three \n a = b = c \n"]
    assert split_articles("") == [] and split_articles("no heading\n") == ["no heading\n"]


@pytest.mark.data
def test_wikitext2_train_cuts_into_its_629_articles_and_6211_sections():
    text = data_file("wikitext-2", "train.txt").read_text(encoding="utf-8")
    articles, sections = split_articles(text), split_articles(text, sections=True)
    assert "".join(articles) == text and "".join(sections) == text
    headings = [line for line in text.splitlines() if is_heading(line)]
    top_level = [line for line in headings if not line.strip().startswith("= =")]
    assert len(articles) == len(top_level) + 1 == 630  # and the blank line before the first
    assert len(sections) == len(headings) + 1 == 6_212


# -- blocks -------------------------------------------------------------------------------------

TEXT_ALPHABET = st.sampled_from(
    list("ab Z9.,'/\n\r\tsS") + ["é", "\u0301", "\u3000", "\x1f", "\x85", "ﬁ", "日", "!", "\u00a8", "\u037a", "⑴", "²"]
)
TEXTS = st.text(TEXT_ALPHABET, max_size=200)


@given(text=TEXTS, block=st.integers(1, 50), cut=st.sampled_from([safe_cut, newline_cut]))
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_blocks_concatenate_to_the_text(text, block, cut):
    blocks = list(SplitSource("train", text=text).blocks(block, cut=cut))
    assert "".join(blocks) == text
    assert all(blocks)


def test_blocks_of_a_file_keep_crlf_and_multibyte_characters(tmp_path):
    text = "première ligne\r\n日本語 . \n" * 500
    path = tmp_path / "train.txt"
    path.write_bytes(text.encode("utf-8"))
    blocks = list(read_file_blocks(path, 7))  # 7 bytes: cuts inside multi-byte characters
    assert "".join(blocks) == text
    source = SplitSource("train", path)
    assert source.text() == text and source.prefix(20) == text[:20]


def test_a_file_that_is_not_utf8_names_the_byte_and_line(tmp_path):
    path = tmp_path / "train.txt"
    path.write_bytes(b"good line\nsecond \xff line\n")
    with pytest.raises(DatasetError, match=r"byte 17, line 2: b'\\xff'"):
        SplitSource("train", path).text()


@functools.cache
def oracle_patterns():
    """The pre-tokenization regexes from their sources: tiktoken's package and Llama 3's file."""
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda *args, **kwargs: {}  # the regexes, not the ranks
    try:
        patterns = {
            "gpt2": openai_public.r50k_pat_str,
            "cl100k": openai_public.cl100k_base()["pat_str"],
            "o200k": openai_public.o200k_base()["pat_str"],
        }
    finally:
        openai_public.load_tiktoken_bpe = original
    llama3 = data_dir() / "vocab" / "hf" / "llama3" / "tokenizer.json"
    if llama3.is_file():
        split = json.loads(llama3.read_text(encoding="utf-8"))["pre_tokenizer"]["pretokenizers"][0]
        patterns["llama3"] = split["pattern"]["Regex"]
    return {name: regex.compile(p) for name, p in patterns.items()}


@pytest.mark.peers
@given(text=st.text(TEXT_ALPHABET, min_size=1, max_size=80))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_safe_cut_changes_no_piece_of_any_named_pattern(text):
    cut = safe_cut(text)
    if cut == 0:
        return
    head, tail = text[:cut], text[cut:]
    for name, pattern in oracle_patterns().items():
        assert pattern.findall(head) + pattern.findall(tail) == pattern.findall(text), name
    for form in ("NFC", "NFKC"):
        head_form, tail_form, whole = (unicodedata.normalize(form, t) for t in (head, tail, text))
        assert head_form + tail_form == whole
        for name, pattern in oracle_patterns().items():
            assert pattern.findall(head_form) + pattern.findall(tail_form) == pattern.findall(whole), (form, name)


@pytest.mark.parametrize(
    "text, before",
    [
        ("end . \n Next", "end ."),  # WikiText: cut before the spaces around the newline
        ("end.\nNext", "end.\n"),  # a lone newline before a letter: cut after it
        ("end.\n\nNext", ""),  # two newlines: cl100k joins them into one piece; no cut
        ("end . \n", "end ."),
        ("\n\n\n", ""),
        ("end . \n Next" + "\n" * 50_000, "end ."),  # a long run of newlines, looked at once
        ("end.\nNext\n\n" + "\n " * 20_000 + "x", "end.\n"),  # the run starts with a newline: no (a)
    ],
)
def test_where_safe_cut_cuts(text, before):
    assert text[: safe_cut(text)] == before


@pytest.mark.data
@pytest.mark.peers
def test_safe_cuts_keep_real_wikitext_pieces():
    text = data_file("wikitext-2/valid.txt").read_text(encoding="utf-8")[:300_000]
    blocks = list(SplitSource("val", text=text).blocks(20_000, cut=safe_cut))
    assert len(blocks) >= 8  # about 300,000 / 20,000, each grown to its cut
    for name, pattern in oracle_patterns().items():
        assert [p for b in blocks for p in pattern.findall(b)] == pattern.findall(text), name


@given(
    corpus=st.text(st.sampled_from("aab c\n"), min_size=20, max_size=120),
    text=st.text(st.sampled_from("aab c\n"), min_size=2, max_size=60),
    vocab=st.integers(5, 25),
    mode=st.sampled_from(["char", "byte"]),
)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_barrier_cut_changes_no_id_without_a_pattern(corpus, text, vocab, mode):
    if mode == "byte":
        vocab += 256
    try:
        tokenizer = train(
            corpus,
            mode=mode,
            vocab_size=vocab,
            min_frequency=1,
            base_tokens="ab c\n" if mode == "char" else None,
            progress=False,
        )
    except ValueError:
        return  # nothing to learn from this corpus
    cut = barrier_cut(tokenizer)(text)
    if cut == 0:
        return
    whole = tokenizer.encode_ordinary(text)
    assert tokenizer.encode_ordinary(text[:cut]) + tokenizer.encode_ordinary(text[cut:]) == whole
    # and the reference replay agrees that no merge crosses the cut
    pieces = reference.encode_piece(
        list(text) if mode == "char" else [bytes([b]) for b in text.encode()], tokenizer.merges
    )
    ends = set()
    length = 0
    for piece in pieces:
        length += len(piece)
        ends.add(length)
    assert (cut if mode == "char" else len(text[:cut].encode())) in ends


# -- download -----------------------------------------------------------------------------------


def build_zip(folder_name, names, texts=RAW):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        for split, name in names.items():
            zipped.writestr(f"{folder_name}/{name}", texts[split].encode("utf-8"))
    return buffer.getvalue()


@pytest.fixture
def server(tmp_path):
    """A small HTTP server on 127.0.0.1 serving tmp_path/www; counts the requests it gets."""
    root = tmp_path / "www"
    root.mkdir()
    requests = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def do_GET(self):
            requests.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{httpd.server_address[1]}", requests
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_download_checks_the_checksum_unpacks_and_is_cached(tmp_path, server):
    root, base, requests = server
    data = build_zip("wikitext-2-raw", wikitext.WIKITEXT_FILES["raw"])
    (root / "wt2.zip").write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    cache = tmp_path / "cache"
    folder = download_wikitext("raw", cache_dir=cache, url=f"{base}/wt2.zip", sha256=digest, progress=False)
    assert load_wikitext(folder, variant="raw") == RAW
    assert requests == ["/wt2.zip"]
    again = download_wikitext("raw", cache_dir=cache, url=f"{base}/wt2.zip", sha256=digest, progress=False)
    assert again == folder and requests == ["/wt2.zip"]  # the second call never asked the server
    assert not [p for p in cache.rglob("*") if p.name.endswith(".tmp")]


def test_a_wrong_checksum_is_refused_and_nothing_is_kept(tmp_path, server):
    root, base, _ = server
    (root / "wt2.zip").write_bytes(build_zip("wikitext-2", wikitext.WIKITEXT_FILES["tokens"]))
    cache = tmp_path / "cache"
    # A mirror must serve the published file: with no sha256 given, the published one is expected.
    with pytest.raises(ChecksumError, match=wikitext.DOWNLOADS["tokens"].sha256):
        download_wikitext("tokens", cache_dir=cache, url=f"{base}/wt2.zip", progress=False)
    assert [p for p in cache.rglob("*") if p.is_file()] == []


def test_a_zip_without_the_split_files_is_a_download_error(tmp_path, server):
    root, base, _ = server
    data = build_zip("wikitext-2-raw", {"train": "wiki.train.raw"})
    (root / "partial.zip").write_bytes(data)
    with pytest.raises(DownloadError, match="no 'wiki.valid.raw'"):
        download_wikitext(
            "raw",
            cache_dir=tmp_path,
            url=f"{base}/partial.zip",
            sha256=hashlib.sha256(data).hexdigest(),
            progress=False,
        )
    assert not (tmp_path / "datasets" / "wikitext-2-raw-v1").exists()


def test_a_server_error_is_a_download_error_that_says_what_to_do(tmp_path, server):
    _, base, _ = server
    with pytest.raises(DownloadError, match=r"404.*download the zip by hand"):
        download_wikitext("raw", cache_dir=tmp_path, url=f"{base}/missing.zip", progress=False)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_the_published_addresses_and_checksums_are_the_datasets_own():
    assert wikitext.DOWNLOADS["raw"].url.endswith("/wikitext-2-raw-v1.zip")
    assert wikitext.DOWNLOADS["tokens"].url.endswith("/wikitext-2-v1.zip")
    assert all(len(d.sha256) == 64 and int(d.sha256, 16) >= 0 for d in wikitext.DOWNLOADS.values())


def test_prepare_download_fetches_into_the_cache_and_prepares_from_it(tmp_path, server, capsys):
    from bytepair.cli import main

    root, base, requests = server
    texts = {split: text * 30 for split, text in RAW.items()}
    data = build_zip("wikitext-2-raw", wikitext.WIKITEXT_FILES["raw"], texts)
    (root / "wt2.zip").write_bytes(data)
    arguments = [
        "prepare",
        "--download",
        "--url",
        f"{base}/wt2.zip",
        "--sha256",
        hashlib.sha256(data).hexdigest(),
        "--cache-dir",
        str(tmp_path / "cache"),
        "-o",
        str(tmp_path / "out"),
        "--vocab-size",
        "60",
        "--cleaning",
        "clean",
        "--write-text",
        str(tmp_path / "text"),
        "--quiet",
        "--no-pt",
    ]
    assert main(arguments) == 0
    assert requests == ["/wt2.zip"]
    meta = json.loads((tmp_path / "out" / "encoded_bpe" / "meta.json").read_text(encoding="utf-8"))
    assert meta["splits"]["val"]["characters"] == len(clean_text(texts["val"]))
    assert (tmp_path / "text" / "wikitext2_val_clean.txt").read_text(encoding="utf-8") == clean_text(texts["val"])
    assert "wrote" in capsys.readouterr().out


def test_a_split_that_is_not_utf8_is_a_dataset_error_not_a_usage_error(tmp_path):
    from bytepair.errors import UsageError

    (tmp_path / "train.txt").write_bytes(b"fine\n\xff\n")
    with pytest.raises(DatasetError, match=r"train.txt: not UTF-8 text \(byte 5, line 2") as raised:
        load_wikitext(tmp_path)
    assert not isinstance(raised.value, UsageError)
