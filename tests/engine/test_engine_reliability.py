"""The engine inside someone else's job: fork, refused threads, out of memory, idle caches.

Each test here failed (hung, aborted the process, or found no bound) before the fix it guards:
- fork: a child forked while other threads were in ``encode_batch`` could find the worker
  pool's mutex locked forever (engine/worker_pool.hpp takes it across fork());
- threads: a refused std::thread aborted the process with ``terminate called`` (exit 134);
  now the batch runs on the threads that started (engine/threads.hpp);
- memory: std::bad_alloc in ``split`` (and in worker threads) aborted; now MemoryError; and a
  worker whose first exception found no memory for its thread-local state ended the process
  (exit 127); now that state is made when the thread starts;
- idle caches: a burst of threads left every worker's cache resident; now the total is bounded.
The subprocess tests run the engine in a fresh interpreter, so that a limit or an abort there
cannot take the test run down.
"""

import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from bytepair import _engine
from datafiles import package_env

MALLOC_SHIM = Path(__file__).resolve().parents[1] / "native" / "fail_in_threads.c"
C_COMPILER = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")

# A small byte-level vocabulary with a few merges (including runs of "x", so that a long run is
# a huge piece with work for every merge strategy), and varied text: shared by this process
# and the subprocesses.
SETUP = textwrap.dedent(
    """
    import random

    from bytepair._engine import Encoder, count_pieces


    def make_encoder():
        token_bytes = [bytes([b]) for b in range(256)]
        pairs = {}

        def merge(left, right):
            token_bytes.append(token_bytes[left] + token_bytes[right])
            pairs[(left, right)] = (len(pairs), len(token_bytes) - 1)
            return len(token_bytes) - 1

        t_h = merge(ord("t"), ord("h"))
        the = merge(t_h, ord("e"))
        merge(ord(" "), the)
        x2 = merge(ord("x"), ord("x"))
        x4 = merge(x2, x2)
        merge(x4, x4)
        merge(ord("i"), ord("n"))
        return Encoder(mode="byte", token_bytes=token_bytes, base_ids=list(range(256)),
                       pair_table=pairs, whole_piece=False, monotonic=True, pattern="gpt2",
                       fallback_ids=None)


    def make_texts(count, words, seed=0):
        rng = random.Random(seed)
        alphabet = "etaoinshrdlu xyzé漢"
        return [" ".join("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))
                         for _ in range(words)) + " the thin xxxxxxxx" for _ in range(count)]
    """
)
_helpers = {}
exec(SETUP, _helpers)  # noqa: S102 - the same helpers here as in the subprocesses
make_encoder, make_texts, count_pieces = _helpers["make_encoder"], _helpers["make_texts"], _helpers["count_pieces"]


def run_python(code, timeout=300, extra_env=None):
    """Runs ``code`` after SETUP in a fresh interpreter; returns the completed process."""
    env = {**package_env(), **(extra_env or {})}
    return subprocess.run(
        [sys.executable, "-c", SETUP + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


# -- fork -----------------------------------------------------------------------------------


class Load:
    """Threads that keep encoding (batches on several threads, and single calls) until stopped."""

    def __init__(self, encoder, texts, threads=2):
        self.stop = threading.Event()
        self.errors = []
        self.threads = [threading.Thread(target=self._run, args=(encoder, texts), daemon=True) for _ in range(threads)]

    def _run(self, encoder, texts):
        # many short calls: each borrows a worker from the pool and gives it back, so a fork
        # often finds the pool's mutex held (with long calls the window is rare)
        short = [text[:40] for text in texts]
        try:
            while not self.stop.is_set():
                encoder.encode_batch(texts, num_threads=3)
                for _ in range(200):
                    encoder.encode_ordinary(short[0])
                    encoder.encode_batch(short[:2], num_threads=1)
        except BaseException as error:  # noqa: BLE001 - reported by the test
            self.errors.append(error)

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for thread in self.threads:
            thread.join()
        assert not self.errors, self.errors


def wait_child(pid, deadline_s):
    """The child's exit status, or None if it did not end within ``deadline_s`` (then killed)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.0005)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None


def fork_many(encoder, texts, forks):
    """Forks ``forks`` children while Load runs; each encodes; returns (hung, failed) counts."""
    expected_batch = encoder.encode_batch(texts[:4], num_threads=1)
    expected_one = encoder.encode_ordinary(texts[0])
    hung = failed = 0
    with Load(encoder, texts):
        for _ in range(forks):
            pid = os.fork()
            if pid == 0:  # the child: one single call and one batch on threads
                code = 1
                try:
                    ok = encoder.encode_ordinary(texts[0]) == expected_one
                    ok = ok and encoder.encode_batch(texts[:4], num_threads=2) == expected_batch
                    code = 0 if ok else 1
                finally:
                    os._exit(code)
            status = wait_child(pid, deadline_s=60)
            hung += status is None
            failed += status not in (None, 0)
    return hung, failed


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")
def test_fork_while_other_threads_encode():
    encoder = make_encoder()
    texts = make_texts(24, 800)
    hung, failed = fork_many(encoder, texts, forks=300)
    assert (hung, failed) == (0, 0)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")
def test_thousands_of_forks_under_load():
    encoder = make_encoder()
    texts = make_texts(24, 800)
    hung, failed = fork_many(encoder, texts, forks=2000)
    assert (hung, failed) == (0, 0)


_POOL_ENCODER = None
_POOL_TEXTS = None


def _pool_task(index):
    return _POOL_ENCODER.encode_batch(_POOL_TEXTS[index : index + 3], num_threads=2)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")
def test_multiprocessing_fork_pools_under_load():
    import multiprocessing

    global _POOL_ENCODER, _POOL_TEXTS
    _POOL_ENCODER, _POOL_TEXTS = make_encoder(), make_texts(24, 400)
    expected = [_POOL_ENCODER.encode_batch(_POOL_TEXTS[i : i + 3], num_threads=1) for i in range(8)]
    context = multiprocessing.get_context("fork")
    with Load(_POOL_ENCODER, _POOL_TEXTS):
        for _ in range(60):  # 120 forked workers
            with context.Pool(2) as pool:
                assert pool.map_async(_pool_task, range(8)).get(timeout=120) == expected


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")
def test_torch_dataloader_workers_under_load():
    torch_data = pytest.importorskip("torch.utils.data")

    encoder, texts = make_encoder(), make_texts(16, 400)
    expected = [encoder.encode_ordinary(text) for text in texts]

    class Texts(torch_data.Dataset):
        def __len__(self):
            return len(texts)

        def __getitem__(self, index):
            return index, encoder.encode_batch([texts[index]] * 2, num_threads=2)[0]

    with Load(encoder, texts):
        for _ in range(10):  # 20 forked workers
            loader = torch_data.DataLoader(
                Texts(), batch_size=None, num_workers=2, multiprocessing_context="fork", timeout=120
            )
            for index, ids in loader:
                assert ids == expected[int(index)]


# -- threads refused ------------------------------------------------------------------------


@pytest.mark.parametrize("num_threads", [0, -1, 1.5, "2", True, None.__class__])
def test_num_threads_must_be_a_positive_int(num_threads):
    encoder = make_encoder()
    with pytest.raises(ValueError, match="num_threads"):
        encoder.encode_batch(["a b"], num_threads=num_threads)
    with pytest.raises(ValueError, match="num_threads"):
        count_pieces(["a b"], "gpt2", num_threads=num_threads)


def test_tokenizer_refuses_zero_threads():
    from bytepair.train import train

    tokenizer = train("the thin thing " * 50, vocab_size=270, mode="byte", pattern="gpt2")
    with pytest.raises(ValueError, match="num_threads"):
        tokenizer.encode_batch(["a b"], num_threads=0)


@pytest.mark.slow
def test_refused_threads_fall_back_without_abort():
    # RLIMIT_NPROC counts the threads of the user: with a limit of 3, a batch that asks for
    # 64 gets two at most and must run on those (and count_pieces the same)
    code = """
    import os, resource
    encoder = make_encoder()
    texts = make_texts(80, 2500)  # 80 texts of ~15K characters: 64 threads are worth starting
    expected = encoder.encode_batch(texts, num_threads=1)
    expected_counts = count_pieces(texts, "gpt2", num_threads=1)
    if os.geteuid() == 0:  # root ignores RLIMIT_NPROC: count as nobody
        os.setgid(65534)
        os.setuid(65534)
    resource.setrlimit(resource.RLIMIT_NPROC, (3, 3))
    assert encoder.encode_batch(texts, num_threads=64) == expected
    assert count_pieces(texts, "gpt2", num_threads=64) == expected_counts
    print("ok")
    """
    result = run_python(code)
    if result.returncode != 0 and "PermissionError" in result.stderr:
        pytest.skip("cannot drop to an unprivileged user to apply RLIMIT_NPROC")
    assert (result.returncode, result.stdout.strip()) == (0, "ok"), result.stderr[-2000:]


# -- out of memory --------------------------------------------------------------------------


@pytest.mark.slow
def test_allocation_failure_is_memory_error_and_the_process_lives():
    code = """
    import resource
    from bytepair import _engine
    encoder = make_encoder()
    text = "a " * 25_000_000                           # 50 MB of one-character pieces
    numbers = " ".join(map(str, range(2_000_000)))     # 2M distinct pieces
    with open("/proc/self/status") as status:
        vm = next(int(line.split()[1]) for line in status if line.startswith("VmSize:")) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + (96 << 20), resource.RLIM_INFINITY))
    calls = {
        "Encoder.split": lambda: encoder.split(text),
        "engine split": lambda: _engine.split(text, "gpt2"),
        "encode_ordinary": lambda: encoder.encode_ordinary(text),
        "encode_to_array": lambda: encoder.encode_to_array(text),
        "encode_pieces": lambda: encoder.encode_pieces([text]),
        "encode_batch": lambda: encoder.encode_batch([text] * 4, num_threads=4),
        "count_pieces": lambda: count_pieces([numbers[i::4] for i in range(4)], "gpt2", num_threads=4),
    }
    for name, call in calls.items():
        try:
            call()
            print(name, "no error")
        except MemoryError:
            print(name, "MemoryError")
    print("alive")
    """
    result = run_python(code)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.split("\n")
    assert lines[-2:] == ["alive", ""]
    for line in lines[:-2]:
        assert line.endswith("MemoryError"), result.stdout


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the malloc shim is loaded with LD_PRELOAD (Linux)")
@pytest.mark.skipif(C_COMPILER is None, reason="no C compiler (cc, gcc, clang) on PATH to build the malloc shim")
def test_a_worker_with_no_memory_for_its_first_exception_gives_memory_error(tmp_path):
    # A worker thread's C++ exception state lives in thread-local storage that glibc makes on
    # the thread's first exception; when that is std::bad_alloc and nothing is left, glibc
    # ended the process ("cannot allocate memory for thread-local data", exit 127) until the
    # state was made at the thread's start (engine/threads.hpp, ready_for_exceptions).
    shim = tmp_path / "fail_in_threads.so"
    build = subprocess.run(
        [C_COMPILER, "-O2", "-shared", "-fPIC", str(MALLOC_SHIM), "-o", str(shim), "-ldl"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert build.returncode == 0, build.stderr
    code = """
    encoder = make_encoder()
    texts = make_texts(64, 4000)  # enough that the calling thread cannot take every text first
    expected = encoder.encode_batch(texts, num_threads=1)  # the main thread's memory is not limited
    for name, call in {
        "count_pieces": lambda: count_pieces(texts, "gpt2", num_threads=4),
        "encode_batch": lambda: encoder.encode_batch(texts, num_threads=4),
    }.items():
        for _ in range(3):
            try:
                call()
                print(name, "no error")
            except MemoryError:
                print(name, "MemoryError")
    assert encoder.encode_batch(texts, num_threads=1) == expected
    print("alive")
    """
    result = run_python(code, extra_env={"LD_PRELOAD": str(shim)})
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert lines[-1] == "alive"
    # a worker that took a text ran out of memory: a MemoryError at least once for each call
    for name in ("count_pieces", "encode_batch"):
        outcomes = {line.split(" ", 1)[1] for line in lines[:-1] if line.startswith(name)}
        assert "MemoryError" in outcomes and outcomes <= {"MemoryError", "no error"}, result.stdout


# -- idle caches ----------------------------------------------------------------------------


@pytest.mark.slow
def test_idle_caches_stay_under_the_budget_after_a_burst_of_threads():
    code = """
    from bytepair import _engine
    budget = 8 << 20
    _engine._set_cache_budget(budget)
    encoder = make_encoder()
    # 64 texts with a huge piece each (buffers of several MB per worker) and many distinct words
    texts = [make_texts(1, 3000, seed=k)[0] + " " + "x" * 400_000 for k in range(64)]
    encoder.encode_batch(texts, num_threads=64)
    held = _engine.cache_bytes()
    assert 0 < held <= budget, held
    encoder.encode_ordinary("x" * 2_000_000)      # one huge piece: its buffers are given back
    assert _engine.cache_bytes() <= budget
    del encoder                                  # an Encoder's idle workers go with it
    assert _engine.cache_bytes() == 0, _engine.cache_bytes()
    print("ok")
    """
    result = run_python(code)
    assert (result.returncode, result.stdout.strip()) == (0, "ok"), result.stderr[-2000:]


def test_default_cache_budget_is_a_bound_in_bytes():
    assert 0 < _engine.CACHE_BUDGET <= 1 << 30
    assert _engine.cache_bytes() <= _engine.CACHE_BUDGET
