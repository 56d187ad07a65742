"""Finding vocabularies: local paths, the download cache, hash checks, offline errors.

``bytepair.formats.load`` takes ``base_url=``; ``bytepair.load`` reads it from the environment.
Downloads are served by an ``http.server`` on 127.0.0.1 in a thread, from a folder laid out
like the real server; the internet is never used. The served file is the real r50k_base rank
file, so its hash is tiktoken's published one.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import socket
import threading

import pytest

import bytepair
from bytepair import formats
from bytepair.errors import BytepairError, FormatError
from bytepair.formats.download import DownloadError
from bytepair.formats.tiktoken_files import ENCODINGS
from datafiles import data_file

R50K_SHA256 = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"  # tiktoken's


@pytest.fixture(autouse=True)
def no_user_settings(monkeypatch):
    # The caller's own vocabulary folder, cache or mirror must not change what is tested.
    for name in ("BYTEPAIR_VOCAB_DIR", "BYTEPAIR_CACHE", "BYTEPAIR_DOWNLOAD_URL"):
        monkeypatch.delenv(name, raising=False)


class Server:
    """A local HTTP server over ``root``; ``requests`` lists the paths asked for."""

    def __init__(self, root):
        self.requests = []
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):
                server.requests.append(self.path)
                super().do_GET()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
        self.httpd.handle_error = lambda request, address: None  # a client that stops reading
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def served(tmp_path):
    """A server whose encodings/r50k_base.tiktoken is the real file, and an empty cache."""
    root = tmp_path / "www"
    (root / "encodings").mkdir(parents=True)
    (root / "encodings" / "r50k_base.tiktoken").symlink_to(data_file("vocab/r50k_base.tiktoken"))
    server = Server(root)
    yield server, root, tmp_path / "cache"
    server.close()


def closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.data
def test_first_use_downloads_then_the_cache_is_used(served):
    server, _, cache = served
    tokenizer = formats.load("gpt2", cache_dir=cache, base_url=server.url)
    assert tokenizer.encode("hello world") == [31373, 995]
    assert server.requests == ["/encodings/r50k_base.tiktoken"]
    assert hashlib.sha256((cache / "r50k_base.tiktoken").read_bytes()).hexdigest() == R50K_SHA256
    again = formats.load("r50k_base", cache_dir=cache, base_url=server.url)
    assert again.encode("hello world") == [31373, 995]
    assert len(server.requests) == 1  # served from the cache
    assert sorted(p.name for p in cache.iterdir()) == ["r50k_base.tiktoken"]  # no temporary files


@pytest.mark.peers
def test_the_expected_hashes_are_tiktokens():
    from tiktoken_ext import openai_public

    source = open(openai_public.__file__, encoding="utf-8").read()
    for encoding in ENCODINGS.values():
        assert f'"{encoding.sha256}"' in source, encoding.name


@pytest.mark.data
def test_environment_variables_set_the_cache_and_the_base_url(served, monkeypatch):
    server, _, cache = served
    monkeypatch.setenv("BYTEPAIR_CACHE", str(cache))
    monkeypatch.setenv("BYTEPAIR_DOWNLOAD_URL", server.url)
    assert bytepair.load("r50k").encode("hello world") == [31373, 995]
    assert (cache / "r50k_base.tiktoken").is_file()


@pytest.mark.data
def test_a_wrong_hash_names_both_hashes_and_caches_nothing(served):
    server, root, cache = served
    served_file = root / "encodings" / "r50k_base.tiktoken"
    data = served_file.read_bytes()
    served_file.unlink()
    served_file.write_bytes(data[:-10] + b"QUJD 50255\n")  # an edited last line
    actual = hashlib.sha256(served_file.read_bytes()).hexdigest()
    with pytest.raises(DownloadError) as raised:
        formats.load("gpt2", cache_dir=cache, base_url=server.url)
    assert R50K_SHA256 in str(raised.value) and actual in str(raised.value)
    assert not cache.exists() or not any(cache.iterdir())


@pytest.mark.data
def test_a_corrupt_cached_file_is_downloaded_again(served):
    server, _, cache = served
    cache.mkdir()
    (cache / "r50k_base.tiktoken").write_bytes(b"IQ== 0\n")
    assert formats.load("gpt2", cache_dir=cache, base_url=server.url).encode("hello world") == [31373, 995]
    assert len(server.requests) == 1
    assert hashlib.sha256((cache / "r50k_base.tiktoken").read_bytes()).hexdigest() == R50K_SHA256


def test_offline_says_to_pass_a_path(tmp_path):
    with pytest.raises(DownloadError, match=r"path=") as raised:
        formats.load("cl100k_base", cache_dir=tmp_path, base_url=f"http://127.0.0.1:{closed_port()}")
    assert isinstance(raised.value, OSError) and isinstance(raised.value, BytepairError)
    assert not any(tmp_path.iterdir())


@pytest.mark.data
def test_a_missing_file_on_the_server_is_an_http_error(served):
    server, _, cache = served
    with pytest.raises(DownloadError, match="HTTP 404"):
        formats.load("o200k_base", cache_dir=cache, base_url=server.url)


# -- local files and folders -------------------------------------------------------------------------


def test_hf_vocabularies_are_not_downloaded_and_say_so(tmp_path):
    with pytest.raises(FormatError, match="'llama3' is not downloaded automatically; pass path="):
        bytepair.load("llama3", cache_dir=tmp_path)


def test_unknown_names_list_the_known_ones():
    with pytest.raises(FormatError, match="unknown vocabulary 'gpt5'.*cl100k_base"):
        bytepair.load("gpt5")


@pytest.mark.data
def test_a_folder_with_gpt2_files_only(tmp_path):
    source = data_file("vocab/gpt2")
    (tmp_path / "gpt2").mkdir()
    for name in ("encoder.json", "vocab.bpe"):
        (tmp_path / "gpt2" / name).symlink_to(source / name)
    assert bytepair.load("gpt2", path=tmp_path).encode("hello world") == [31373, 995]


@pytest.mark.data
def test_gpt2s_own_folder_loads_without_a_name(tmp_path):
    # OpenAI's GPT-2 folder (encoder.json and vocab.bpe) is one tokenizer, as a folder with a
    # tokenizer.json is; it was refused as a folder to name a vocabulary from
    source = data_file("vocab/gpt2")
    for name in ("encoder.json", "vocab.bpe"):
        (tmp_path / name).symlink_to(source / name)
    assert bytepair.load(tmp_path).encode("hello world") == [31373, 995]


def test_a_folder_of_vocabularies_names_them_and_how_to_load_one(tmp_path):
    for name in ("cl100k_base.tiktoken", "tekken.json"):
        (tmp_path / name).write_text("", encoding="utf-8")
    (tmp_path / "llama" / "tokenizer.json").parent.mkdir()
    (tmp_path / "llama" / "tokenizer.json").write_text("{}", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("", encoding="utf-8")
    with pytest.raises(FormatError) as raised:
        bytepair.load(tmp_path)
    message = str(raised.value)
    assert "(cl100k_base.tiktoken, llama/, tekken.json), not one tokenizer" in message
    assert (
        f"load('cl100k_base', path={str(tmp_path)!r}), or load({str(tmp_path / 'cl100k_base.tiktoken')!r})" in message
    )
    (tmp_path / "empty").mkdir()
    with pytest.raises(FormatError, match="is a folder with no tokenizer in it"):
        bytepair.load(tmp_path / "empty")


@pytest.mark.data
def test_the_vocab_dir_variable_is_searched_before_downloading(monkeypatch, tmp_path):
    monkeypatch.setenv("BYTEPAIR_VOCAB_DIR", str(data_file("vocab")))
    tokenizer = formats.load("cl100k", cache_dir=tmp_path, base_url=f"http://127.0.0.1:{closed_port()}")
    assert tokenizer.encode("hello world") == [15339, 1917]
    assert not any(tmp_path.iterdir())


def test_a_folder_without_the_vocabulary_lists_what_was_looked_for(tmp_path):
    with pytest.raises(FormatError, match=r"no file for 'o200k_base'; looked for o200k_base.tiktoken"):
        bytepair.load("o200k_base", path=tmp_path)


@pytest.mark.data
def test_a_rank_file_of_unknown_origin_needs_its_pattern(tmp_path):
    (tmp_path / "mine.tiktoken").write_bytes(data_file("vocab/r50k_base.tiktoken").read_bytes()[:2000])
    with pytest.raises(FormatError, match="load_tiktoken"):
        bytepair.load(str(tmp_path / "mine.tiktoken"))


@pytest.mark.data
def test_a_corrupt_rank_file_names_the_line(tmp_path):
    lines = data_file("vocab/r50k_base.tiktoken").read_bytes().splitlines()
    lines[7] = b"not-base64!! 7"
    (tmp_path / "r50k_base.tiktoken").write_bytes(b"\n".join(lines))
    with pytest.raises(FormatError, match="line 8"):
        bytepair.load("r50k_base", path=tmp_path)


@pytest.mark.data
def test_gpt2_files_that_disagree_are_refused(tmp_path):
    source = data_file("vocab/gpt2")
    encoder = json.loads((source / "encoder.json").read_text(encoding="utf-8"))
    encoder["Ġthe"], encoder["Ġa"] = encoder["Ġa"], encoder["Ġthe"]
    (tmp_path / "encoder.json").write_text(json.dumps(encoder), encoding="utf-8")
    (tmp_path / "vocab.bpe").symlink_to(source / "vocab.bpe")
    with pytest.raises(FormatError, match="do not belong together"):
        bytepair.load("gpt2", path=tmp_path / "encoder.json")


def test_our_own_artifact_loads_by_path(tmp_path):
    tokenizer = bytepair.train("low lower newest widest " * 20, mode="byte", vocab_size=270)
    tokenizer.save(tmp_path / "tok.json")
    loaded = bytepair.load(str(tmp_path / "tok.json"))
    assert loaded.fingerprint == tokenizer.fingerprint


# -- the one download: size cap, deadline, published hashes of local files --------------------


@pytest.mark.data
def test_a_file_far_larger_than_the_known_one_is_stopped(served):
    from bytepair import _io

    server, root, cache = served
    served_file = root / "encodings" / "r50k_base.tiktoken"
    served_file.unlink()
    served_file.write_bytes(b"QUJD 1\n" * 200_000)  # 1.4 MB, the known file is 0.8 MB
    with pytest.raises(DownloadError, match="more than the") as raised:
        formats.load("gpt2", cache_dir=cache, base_url=server.url)
    assert f"{_io.size_cap(ENCODINGS['r50k_base'].size):,}" in str(raised.value)
    assert not cache.exists() or not any(cache.iterdir())


def test_the_deadline_covers_the_whole_transfer(tmp_path, monkeypatch):
    from bytepair import _io

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(1 << 20))
            self.end_headers()
            try:
                for _ in range(1 << 6):  # every read well inside the per-read timeout
                    self.wfile.write(b"x" * (1 << 14))
                    self.wfile.flush()
                    threading.Event().wait(0.05)
            except OSError:
                pass

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/slow"
        with pytest.raises(DownloadError, match=r"did not finish within 0.2 s"):
            _io.download(url, tmp_path / "slow.bin", sha256="0" * 64, deadline=0.2)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
    assert not any(tmp_path.iterdir())


@pytest.mark.data
def test_the_download_streams_to_disk_and_hashes_on_the_way(served, monkeypatch):
    from bytepair import _io

    server, _, cache = served
    reads = []
    real_copy = _io._copy

    def spy(url, file, digest, limit, deadline, progress):
        real_write = file.write
        file.write = lambda block: reads.append(len(block)) or real_write(block)
        return real_copy(url, file, digest, limit, deadline, progress)

    monkeypatch.setattr(_io, "_copy", spy)
    formats.load("gpt2", cache_dir=cache, base_url=server.url)
    assert len(reads) > 1 and max(reads) <= 1 << 16  # in blocks, never the whole body at once
    assert sum(reads) == ENCODINGS["r50k_base"].size


@pytest.mark.data
def test_a_local_file_under_a_published_name_must_be_the_published_file(tmp_path):
    lines = data_file("vocab/cl100k_base.tiktoken").read_bytes().splitlines(keepends=True)
    lines[1000], lines[1001] = lines[1000].split()[0] + b" 1001\n", lines[1001].split()[0] + b" 1000\n"
    (tmp_path / "cl100k_base.tiktoken").write_bytes(b"".join(lines))
    with pytest.raises(
        FormatError, match=r"loaded as 'cl100k_base', but its sha256 is [0-9a-f]{64}, not the published 2239"
    ) as raised:
        bytepair.load("cl100k_base", path=tmp_path)
    assert "load_tiktoken" in str(raised.value)
    # The same file under a name of its own loads, with the pattern the caller gives.
    tok = formats.load_tiktoken(tmp_path / "cl100k_base.tiktoken", pattern="cl100k", name="mine")
    assert tok.vocab_size == 100256


@pytest.mark.data
def test_the_published_sizes_are_those_of_the_files():
    for encoding in ENCODINGS.values():
        path = data_file(f"vocab/{encoding.file}")
        assert path.stat().st_size == encoding.size, encoding.name
