"""``bytepair.distributed``: training and encoding on a local 2-CPU Ray give exactly what one
machine gives (the same fingerprint, byte-identical shards), also when a worker is killed.

One Ray for the whole module (starting it takes about 15 s); skipped when Ray is not installed.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

import bytepair
from bytepair.datasets import shards as shards_module
from bytepair.datasets import split_articles
from bytepair.datasets.corpus import encode_corpus
from bytepair.errors import RayConnectionError
from datafiles import data_file
from generated import wikitext_like

pytestmark = pytest.mark.peers

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'bytepair[ray]')")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install 'bytepair[ray]')")

from bytepair import distributed  # noqa: E402 - after the skip: it needs Ray


@pytest.fixture(scope="module")
def local_ray():
    distributed.connect(num_cpus=2)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray
    ray.shutdown()


def write_shards(folder, documents, count):
    """``documents`` as ``count`` JSON Lines files, consecutive documents in each, in file order."""
    folder.mkdir()
    per = -(-len(documents) // count)
    for number in range(count):
        with open(folder / f"part_{number:02d}.jsonl", "w", encoding="utf-8") as file:
            for document in documents[number * per : (number + 1) * per]:
                file.write(json.dumps({"text": document}) + "\n")
    return folder


def same_output(left, right):
    names = sorted(p.name for p in left.iterdir())
    assert names == sorted(p.name for p in right.iterdir())
    for name in names:
        assert (left / name).read_bytes() == (right / name).read_bytes(), name


def quiet():
    return {"progress": False, "log": None}


# -- small generated corpus -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    text = wikitext_like(60_000, seed=3)
    documents = split_articles(text)
    folder = write_shards(tmp_path_factory.mktemp("small") / "shards", documents, 4)
    return folder, documents


def test_small_train_matches_one_machine(local_ray, small):
    folder, documents = small
    options = {"mode": "char", "vocab_size": 300, "pattern": "gpt2", "special_tokens": ["<|endoftext|>"]}
    assert distributed.train([str(folder)], **options).fingerprint == bytepair.train(documents, **options).fingerprint
    dataset = ray.data.from_items([{"text": d} for d in documents], override_num_blocks=3)
    assert distributed.train(dataset, **options).fingerprint == bytepair.train(documents, **options).fingerprint


def test_small_encode_and_resume_match_one_machine(local_ray, small, tmp_path, monkeypatch):
    folder, documents = small
    tokenizer = bytepair.train(documents, mode="byte", vocab_size=400, pattern="gpt2", special_tokens=["<|endoftext|>"])
    options = {"val_fraction": 0.2, "shard_tokens": 4_000, "chunk_bytes": 8_000}
    encode_corpus([str(folder)], tokenizer, tmp_path / "one", **options, **quiet())
    distributed.encode_corpus([str(folder)], tokenizer, tmp_path / "ray", **options, **quiet())
    same_output(tmp_path / "one", tmp_path / "ray")

    # interrupted after two complete shards, then resumed: still the same bytes
    record = shards_module.record_shard
    recorded = []

    def interrupt_after_two(partial, shard):
        if len(recorded) == 2:
            raise KeyboardInterrupt
        recorded.append(shard.file)
        record(partial, shard)

    monkeypatch.setattr(shards_module, "record_shard", interrupt_after_two)
    with pytest.raises(KeyboardInterrupt):
        distributed.encode_corpus([str(folder)], tokenizer, tmp_path / "resumed", **options, **quiet())
    monkeypatch.setattr(shards_module, "record_shard", record)
    lines = []
    distributed.encode_corpus(
        [str(folder)], tokenizer, tmp_path / "resumed", resume=True, **options, progress=False, log=lines.append
    )
    assert any(line.startswith("resuming: 2 complete shard(s)") for line in lines)
    same_output(tmp_path / "one", tmp_path / "resumed")


def test_cli_ray_flags(local_ray, small, tmp_path, capsys):
    from bytepair.cli import main

    folder, documents = small
    assert (
        main(
            [
                "train",
                str(folder),
                "--mode",
                "byte",
                "--vocab-size",
                "300",
                "--pattern",
                "gpt2",
                "--quiet",
                "-o",
                str(tmp_path / "tok.json"),
                "--ray",
            ]
        )
        == 0
    )
    trained = bytepair.Tokenizer.load(tmp_path / "tok.json")
    assert trained.fingerprint == bytepair.train(documents, mode="byte", vocab_size=300, pattern="gpt2").fingerprint
    assert (
        main(
            [
                "encode-corpus",
                str(folder),
                "-t",
                str(tmp_path / "tok.json"),
                "-o",
                str(tmp_path / "ray"),
                "--quiet",
                "--ray",
            ]
        )
        == 0
    )
    encode_corpus([str(folder)], str(tmp_path / "tok.json"), tmp_path / "one", **quiet())
    same_output(tmp_path / "one", tmp_path / "ray")


def test_quiet_cli_run_on_a_ray_started_here_writes_nothing_on_stderr(small, tmp_path):
    """In a process of its own, as a user runs it: Ray's warnings and its once-per-process lines
    (token authentication, actor set-up in the object store) must not reach a --quiet run."""
    import subprocess
    import sys

    from datafiles import package_env

    folder, documents = small
    bytepair.train(documents, mode="byte", vocab_size=300, pattern="gpt2").save(tmp_path / "tok.json")
    command = [sys.executable, "-m", "bytepair", "encode-corpus", folder, "-t", tmp_path / "tok.json"]
    env = package_env()
    env.pop("RAY_AUTH_MODE", None)  # Ray's default, which it warns about
    result = subprocess.run(
        [*map(str, command), "-o", str(tmp_path / "ray"), "--quiet", "--ray"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.startswith("encoded ")
    encode_corpus([str(folder)], str(tmp_path / "tok.json"), tmp_path / "one", **quiet())
    same_output(tmp_path / "one", tmp_path / "ray")


def test_on_a_terminal_the_only_progress_bar_is_ours(small, tmp_path):
    """Ray Data draws bars of its own on a terminal; they must not redraw over encode-corpus's."""
    import fcntl
    import select
    import struct
    import subprocess
    import sys
    import termios

    from datafiles import package_env

    folder, documents = small
    bytepair.train(documents, mode="byte", vocab_size=300, pattern="gpt2").save(tmp_path / "tok.json")
    command = [sys.executable, "-m", "bytepair", "encode-corpus", folder, "-t", tmp_path / "tok.json"]
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a terminal's width
    process = subprocess.Popen(
        [*map(str, command), "-o", str(tmp_path / "ray"), "--ray"],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=package_env(),
    )
    os.close(follower)
    shown, deadline = b"", time.monotonic() + 300
    while time.monotonic() < deadline:
        if select.select([leader], [], [], 1)[0]:
            try:
                data = os.read(leader, 1 << 16)
            except OSError:  # the terminal closed: the command is over
                break
            if not data:
                break
            shown += data
    os.close(leader)
    assert process.wait(timeout=60) == 0, shown
    text = shown.decode(errors="replace")
    assert "encoding: " in text and "encoded " in text
    assert "Running Dataset" not in text and "MapBatches" not in text, text


def test_bad_document_is_one_clear_error(local_ray, tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "a.jsonl").write_text('{"text": "fine"}\n{"body": "no text field"}\n', encoding="utf-8")
    with pytest.raises(bytepair.errors.DocumentError, match=r"a\.jsonl, line 2: no field 'text'") as caught:
        distributed.train([str(folder)], mode="byte", vocab_size=300)
    assert "Traceback" not in str(caught.value)


def run_on_ray(tmp_path, address, command="encode-corpus"):
    """``bytepair COMMAND`` on a small corpus with ``--ray ADDRESS``, in a child process, its
    output to ``tmp_path / "out"``: the finished process (text)."""
    import subprocess
    import sys

    from datafiles import package_env

    (tmp_path / "a.txt").write_text("some text", encoding="utf-8")
    bytepair.train("some text " * 20, mode="byte", vocab_size=260).save(tmp_path / "tok.json")
    arguments = ["-t", tmp_path / "tok.json"] if command == "encode-corpus" else ["--vocab-size", "300", "--quiet"]
    return subprocess.run(
        [sys.executable, "-m", "bytepair", command, str(tmp_path / "a.txt"), *map(str, arguments)]
        + ["-o", str(tmp_path / "out"), "--ray", address],
        capture_output=True,
        text=True,
        env=package_env(),
        timeout=300,
    )


def test_a_cluster_address_where_nothing_answers_is_one_clear_error_at_once(tmp_path):
    """Ray itself would try to reach it for minutes, logging each try."""
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = run_on_ray(tmp_path, f"127.0.0.1:{port}")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: could not connect to Ray at '127.0.0.1:{port}' (nothing answers at 127.0.0.1:{port}: Connection "
        "refused); give 'auto' for the cluster this machine belongs to, HOST:6379 for a cluster's head, or "
        "ray://HOST:10001 for a remote one"
    ]
    assert not (tmp_path / "out").exists()


@contextlib.contextmanager
def a_server(kind):
    """A server on a local port that is not a Ray head: a web server, one that accepts and says
    nothing, one that greets with an SSH banner, one that answers HTTP/2 as Ray's GCS does (and
    nothing more). Yields its port."""
    if kind == "http":
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield server.server_address[1]
        finally:
            server.shutdown()
            server.server_close()
        return
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def serve():
        with contextlib.suppress(OSError):  # the listener closed: the test is over
            while True:
                connection, _ = listener.accept()
                accepted.append(connection)
                if kind == "ssh":
                    connection.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
                if kind == "http2":  # answers the preface as a gRPC server does: an empty SETTINGS frame
                    connection.sendall(b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()
        for connection in accepted:
            connection.close()


@pytest.mark.parametrize(
    "kind, scheme, said",
    [
        ("http", "", "it answered '"),
        ("silent", "", "it accepted the connection but sent nothing back within"),
        ("ssh", "", "it answered 'SSH-2.0-OpenSSH_9.6'"),
        ("ssh", "ray://", "it answered 'SSH-2.0-OpenSSH_9.6'"),
    ],
)
def test_a_cluster_address_where_another_server_answers_is_one_clear_error_at_once(tmp_path, kind, scheme, said):
    """Ray itself would wait for its GCS there for minutes (a Ray Client for 30 s); the head's
    GCS and its Ray Client server speak HTTP/2."""
    # Ray Client: train's (encode-corpus refuses it before connecting)
    command = "train" if scheme == "ray://" else "encode-corpus"
    with a_server(kind) as port:
        result = run_on_ray(tmp_path, f"{scheme}127.0.0.1:{port}", command)
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(
        f"error: could not connect to Ray at '{scheme}127.0.0.1:{port}' (127.0.0.1:{port} did not answer as a Ray "
        f"cluster: {said}"
    ), line
    assert not (tmp_path / "out").exists()


def test_a_ray_heads_own_address_passes_the_check(local_ray):
    """The check before connecting lets a real head through: its GCS answers the HTTP/2 preface."""
    address = ray.get_runtime_context().gcs_address
    assert distributed._check_answers(address) is True


def test_a_cluster_that_answers_but_refuses_the_driver_suggests_token_authentication(monkeypatch):
    # Ray 2.60's heads make a token by default: a driver without RAY_AUTH_MODE=token is refused
    # after Ray's retries with "Failed to connect", the cause only in Ray's log. The refusal is
    # stood in for (ray.init raising as Ray does), so as not to wait through the retries.
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)

    def refused(*args, **kwargs):
        raise ConnectionError("Failed to connect to Ray cluster at the address")

    monkeypatch.setattr(ray, "init", refused)
    with a_server("http2") as port:
        with pytest.raises(RayConnectionError, match="set RAY_AUTH_MODE=token$"):
            distributed.connect(f"127.0.0.1:{port}")
        monkeypatch.setenv("RAY_AUTH_MODE", "token")
        with pytest.raises(RayConnectionError) as raised:
            distributed.connect(f"127.0.0.1:{port}")
        assert "RAY_AUTH_MODE" not in str(raised.value)


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux's /proc/self/mem")
def test_an_input_a_worker_cannot_read_is_one_clear_error(local_ray, small, tmp_path):
    """Its OSError would come back inside Ray's remote traceback, its file name replaced by Ray
    Data's retry note; /proc/self/mem opens but fails to read (EIO), as a failing disk does."""
    folder, documents = small
    tokenizer = bytepair.train(documents, mode="byte", vocab_size=300)
    (tmp_path / "disk.txt").symlink_to("/proc/self/mem")
    message = r"disk\.txt: cannot read it \(Input/output error\); every input must stay readable"
    with pytest.raises(bytepair.errors.DocumentError, match=message) as caught:
        distributed.encode_corpus([str(tmp_path / "disk.txt")], tokenizer, tmp_path / "out", **quiet())
    assert "\n" not in str(caught.value)
    with pytest.raises(bytepair.errors.DocumentError, match=message):
        distributed.train([str(folder), str(tmp_path / "disk.txt")], mode="byte", vocab_size=300)


def test_a_ray_address_that_is_not_one_is_one_clear_error(tmp_path):
    result = run_on_ray(tmp_path, "bogus")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: could not connect to Ray at 'bogus' (Invalid address format: bogus); give 'auto' for the cluster "
        "this machine belongs to, HOST:6379 for a cluster's head, or ray://HOST:10001 for a remote one"
    ]
    assert not (tmp_path / "out").exists()


def test_encode_corpus_through_ray_client_is_refused_before_connecting(tmp_path):
    # Ray Data does not run under Ray Client: it failed with Ray's traceback from inside
    result = run_on_ray(tmp_path, "ray://127.0.0.1:10001")
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: encode-corpus cannot run through Ray Client ('ray://127.0.0.1:10001')")
    assert "--ray HOST:6379" in line
    assert not (tmp_path / "out").exists()


def test_characters_outside_a_char_alphabet_are_skipped_as_on_one_machine(local_ray, small, tmp_path, capfd):
    folder, documents = small
    tokenizer = bytepair.train(documents, mode="char", vocab_size=200, special_tokens=["<|endoftext|>"])
    bad = tmp_path / "bad"
    bad.mkdir()
    lines = [json.dumps({"text": text}) + "\n" for text in ("fine", "naïve ☃", "fine again")]
    (bad / "a.jsonl").write_text("".join(lines), encoding="utf-8")
    capfd.readouterr()
    with pytest.raises(bytepair.errors.DocumentError, match=r"a\.jsonl, line 2: characters missing .*'☃'") as caught:
        distributed.encode_corpus([str(bad)], tokenizer, tmp_path / "ray", **quiet())
    # one line: without the retry advice Ray Data appends, and without its tracebacks on stderr
    assert "\n" not in str(caught.value) and "Traceback" not in capfd.readouterr().err
    options = {"skip_bad": True, "val_fraction": 0.5}
    encode_corpus([str(bad), str(folder)], tokenizer, tmp_path / "one", **options, **quiet())
    distributed.encode_corpus([str(bad), str(folder)], tokenizer, tmp_path / "ray", **options, **quiet())
    same_output(tmp_path / "one", tmp_path / "ray")
    meta = json.loads((tmp_path / "ray" / "meta.json").read_text(encoding="utf-8"))
    assert meta["documents"]["bad_skipped"] == {"missing characters": 1}


# -- WikiText-2 train in 16 shards ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wikitext(tmp_path_factory):
    text = data_file("wikitext-2", "train.txt").read_text(encoding="utf-8")
    documents = split_articles(text)
    return write_shards(tmp_path_factory.mktemp("wikitext") / "shards", documents, 16), documents


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.parametrize(
    "options",
    [
        {"mode": "char", "vocab_size": 500},
        {"mode": "byte", "vocab_size": 1000, "pattern": "cl100k"},
    ],
    ids=["char-no-pattern", "byte-cl100k"],
)
def test_wikitext_train_gives_the_fingerprint_of_one_machine(local_ray, wikitext, options):
    folder, documents = wikitext
    assert distributed.train([str(folder)], **options).fingerprint == bytepair.train(documents, **options).fingerprint


@pytest.fixture(scope="module")
def cl100k(wikitext):
    return bytepair.load("cl100k_base", path=data_file("vocab"))


@pytest.mark.slow
@pytest.mark.data
def test_wikitext_encode_is_byte_identical_even_with_a_worker_killed(local_ray, wikitext, cl100k, tmp_path):
    folder, _ = wikitext
    options = {"val_fraction": 0.05, "shard_tokens": 500_000, "chunk_bytes": 1 << 19}
    encode_corpus([str(folder)], cl100k, tmp_path / "one", **options, **quiet())
    distributed.encode_corpus([str(folder)], cl100k, tmp_path / "ray", **options, **quiet())
    same_output(tmp_path / "one", tmp_path / "ray")

    # A run can end before the killer has found its worker (the largest input's task takes about
    # half a second on two cores): such a run proves nothing and is tried again, up to five times.
    for attempt in range(5):
        killed, stop = [], threading.Event()
        killer = threading.Thread(target=_kill_an_encoder, args=(killed, stop), daemon=True)
        killer.start()
        distributed.encode_corpus([str(folder)], cl100k, tmp_path / f"killed-{attempt}", **options, **quiet())
        finished = time.monotonic()
        stop.set()
        killer.join(timeout=5)
        if killed and killed[0] < finished:
            break
    assert killed and killed[0] < finished, "no encoding worker was killed while a run went, in five runs"
    same_output(tmp_path / "one", tmp_path / f"killed-{attempt}")


def _kill_an_encoder(killed, stop, timeout=120):
    """SIGKILL the first Ray worker process running an encoding task (its title names
    ``_read_and_encode``) once it has worked for a moment, unless ``stop`` is set first (the
    run is over); the time of the kill goes into ``killed``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not stop.is_set():
        for pid in _encoder_pids():
            if stop.wait(0.1):  # let it encode its first chunks (a chunk of 512 KB takes ~20 ms)
                return
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
            killed.append(time.monotonic())
            return
        time.sleep(0.1)


def _encoder_pids():
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if command.startswith(b"ray::") and b"MapBatches(_read_and_encode)" in command:
            pids.append(int(entry.name))
    return pids
