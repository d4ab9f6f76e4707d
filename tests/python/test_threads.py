"""triton_metal under concurrency: launches from several Python threads at
once (different kernels, sizes, chips, checks, profiles and timed runs)
each get their own results, reports and errors; Ctrl-C stops the launches
in flight; compiles of the same kernel in several threads or processes
share one cache without tearing it. Results are checked against NumPy, and
the timed figures against the same launch made alone."""
import inspect
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import kernels
import triton_metal
import triton_metal.language as tl
from triton_metal import testing


@triton_metal.jit
def row_sum(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + offs, mask=offs < N, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


def run_threads(workers):
    """Runs each function on a thread of its own, all released at once;
    re-raises the first failure, naming the worker."""
    start = threading.Barrier(len(workers))
    failures = []

    def body(name, fn):
        start.wait()
        try:
            fn()
        except BaseException as e:  # noqa: B902 (reported below)
            failures.append((name, e))

    threads = [threading.Thread(target=body, args=item) for item in workers.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        lines = [f"{name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                 for name, e in failures]
        raise AssertionError(f"{len(failures)} of {len(workers)} workers failed:\n"
                             + "\n".join(lines)) from failures[0][1]


def copy_ms(n, chip):
    """do_bench of a copy of n floats on `chip`, in this thread."""
    src = np.ones(n, np.float32)
    dst = np.zeros(n, np.float32)
    with triton_metal.chip(chip):
        return testing.do_bench(
            lambda: kernels.copy_kernel[(triton_metal.cdiv(n, 256),)](src, dst, n, BLOCK=256))


def test_threads_launching_different_kernels_each_get_their_own_results():
    launches = 40
    # Timed figures of each launch alone, to compare with the same launches
    # made while the other threads run: the model is deterministic.
    alone = {chip: copy_ms(4096, chip) for chip in ("m1", "m3")}
    assert alone["m1"] != alone["m3"]

    def adder(seed):
        def work():
            rng = np.random.default_rng(seed)
            for i in range(launches):
                n = int(rng.integers(1, 70_000))
                x = rng.standard_normal(n).astype(np.float32)
                y = rng.standard_normal(n).astype(np.float32)
                out = np.full(n, np.nan, np.float32)
                kernels.add_kernel[(triton_metal.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
                np.testing.assert_array_equal(out, x + y, err_msg=f"launch {i}, n={n}")
        return work

    def scaler():
        rng = np.random.default_rng(3)
        for i in range(launches):
            m, n = (int(v) for v in rng.integers(1, 90, size=2))
            big = rng.standard_normal((m, 2 * n)).astype(np.float32)
            x = big[:, ::2]  # a strided view
            out = np.zeros((m, n), np.float32)
            grid = (triton_metal.cdiv(m, 16), triton_metal.cdiv(n, 16))
            kernels.scale_2d[grid](x, out, m, n, x.strides[0] // 4, x.strides[1] // 4,
                                   out.strides[0] // 4, out.strides[1] // 4, BM=16, BN=16)
            np.testing.assert_array_equal(out, x * 2.0, err_msg=f"launch {i}, {m}x{n}")

    def reducer():
        rng = np.random.default_rng(4)
        for i in range(launches):
            rows, n = int(rng.integers(1, 40)), int(rng.integers(1, 1000))
            x = rng.standard_normal((rows, n)).astype(np.float32)
            out = np.zeros(rows, np.float32)
            row_sum[(rows,)](x, out, n, BLOCK=1024)
            np.testing.assert_allclose(out, x.astype(np.float64).sum(axis=1),
                                       rtol=1e-5, atol=1e-4, err_msg=f"launch {i}")

    def checked():
        # Under the race check, in this thread only: the racy kernel's
        # finding every time, and a clean kernel's right result.
        with triton_metal.kernel_checks("race"):
            for i in range(launches // 2):
                out = np.zeros(16, np.float32)
                with pytest.raises(triton_metal.KernelError) as e:
                    kernels.folded_store[(1,)](out, BLOCK=128)
                assert e.value.kind == "check", str(e.value)
                assert "device-memory race" in str(e.value)
                src = np.arange(i + 8, dtype=np.float32)
                dst = np.zeros_like(src)
                kernels.copy_kernel[(1,)](src, dst, src.size, BLOCK=64)
                np.testing.assert_array_equal(dst, src)

    def profiled():
        expected = []
        with triton_metal.profile() as p:
            for i in range(launches // 4):
                n = 1024 * (i + 1)
                x = np.ones(n, np.float32)
                out = np.zeros(n, np.float32)
                kernels.add_kernel[(n // 1024,)](x, x, out, n, BLOCK=1024)
                kernels.copy_kernel[(n // 512,)](x, out, n, BLOCK=512)
                expected += [("add_kernel", (n // 1024, 1, 1)), ("copy_kernel", (n // 512, 1, 1))]
                assert np.all(out == 1.0)
        assert [(r["kernel"], r["grid"]) for r in p.reports] == expected
        assert all(r["cycles"] > 0 for r in p.reports)

    def timed(chip):
        def work():
            for _ in range(launches // 8):
                assert copy_ms(4096, chip) == alone[chip]
        return work

    def unchecked():
        # Launches of a racy kernel outside any check: never a finding,
        # whatever the checked thread does meanwhile.
        for _ in range(launches):
            out = np.zeros(16, np.float32)
            kernels.folded_store[(1,)](out, BLOCK=128)
            assert out[0] in range(0, 128, 16)

    run_threads({"add 1": adder(1), "add 2": adder(2), "scale": scaler, "reduce": reducer,
                 "checked": checked, "profiled": profiled, "timed m1": timed("m1"),
                 "timed m3": timed("m3"), "unchecked": unchecked})


def test_threads_replaying_the_corpus_match_real_triton():
    """Every recorded launch of the corpus (test_corpus.py) from four
    threads at once, each in an order of its own: each buffer as real
    Triton left it."""
    import test_corpus
    cases = test_corpus.CASES
    memory = "torch" if _have_torch() else "numpy"

    def work(t):
        def replay_all():
            order = cases[t * len(cases) // 4:] + cases[:t * len(cases) // 4]
            for case in (order if t % 2 == 0 else order[::-1]):
                test_corpus.replay(case, memory if t < 2 else "numpy")
        return replay_all

    run_threads({f"replay {t}": work(t) for t in range(4)})


def _have_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


def test_nested_and_concurrent_profiles_get_their_own_reports(tmp_path):
    x = np.ones(4096, np.float32)
    out = np.zeros(4096, np.float32)
    with triton_metal.profile(trace_dir=str(tmp_path / "outer")) as outer:
        kernels.copy_kernel[(4,)](x, out, 4096, BLOCK=1024)
        with triton_metal.profile(trace_dir=str(tmp_path / "inner")) as inner:
            kernels.add_kernel[(4,)](x, x, out, 4096, BLOCK=1024)
        kernels.copy_kernel[(8,)](x, out, 4096, BLOCK=512)
    # The outer block holds every launch made inside it, the inner one its own.
    assert [r["kernel"] for r in outer.reports] == ["copy_kernel", "add_kernel", "copy_kernel"]
    assert [r["kernel"] for r in inner.reports] == ["add_kernel"]
    assert outer.reports[1]["cycles"] == inner.reports[0]["cycles"]
    # Each keeps its traces in its own folder.
    assert [os.path.basename(r["trace"]) for r in outer.reports] == [
        "copy_kernel_0.json", "add_kernel_0.json", "copy_kernel_1.json"]
    assert os.path.dirname(outer.reports[1]["trace"]) == str(tmp_path / "outer")
    assert inner.reports[0]["trace"] == str(tmp_path / "inner" / "add_kernel_0.json")
    for r in outer.reports + inner.reports:
        assert os.path.getsize(r["trace"]) > 0

    # A profile in one thread sees none of another thread's launches.
    reports = {}

    def work(name, blocks):
        with triton_metal.profile() as p:
            for b in blocks:
                kernels.copy_kernel[(4096 // b,)](x, np.zeros(4096, np.float32), 4096, BLOCK=b)
        reports[name] = [r["grid"][0] for r in p.reports]

    run_threads({"a": lambda: work("a", [256] * 6), "b": lambda: work("b", [1024] * 9),
                 "none": lambda: [kernels.copy_kernel[(8,)](x, out, 4096, BLOCK=512)
                                  for _ in range(10)]})
    assert reports == {"a": [16] * 6, "b": [4] * 9}


def test_a_chip_set_in_a_block_is_the_blocks_alone():
    triton_metal.set_chip("m2")
    seen = {}

    def work(name, chip):
        if chip is None:
            seen[name] = triton_metal.get_chip()
            return
        with triton_metal.chip(chip):
            seen[name] = triton_metal.get_chip()

    run_threads({"m3": lambda: work("m3", "m3"), "default": lambda: work("default", None)})
    # set_chip is the process's; a block's chip is the block's alone.
    assert seen == {"m3": "m3", "default": "m2"}
    assert triton_metal.get_chip() == "m2"
    with pytest.raises(ValueError):
        with triton_metal.chip("m9"):
            pass


def test_autotune_tunes_each_key_once_per_chip(capfd, monkeypatch):
    configs = [triton_metal.Config({"BLOCK": b}) for b in (64, 256, 1024)]
    tuned = triton_metal.autotune(configs=configs, key=["n"])(kernels.copy_kernel)
    monkeypatch.setenv("TRITON_METAL_DEBUG", "1")
    capfd.readouterr()

    def work(chip):
        def launch():
            with triton_metal.chip(chip):
                for _ in range(3):
                    n = 8192
                    src = np.arange(n, dtype=np.float32)
                    dst = np.zeros(n, np.float32)
                    tuned[lambda m: (triton_metal.cdiv(n, m["BLOCK"]),)](src, dst, n)
                    np.testing.assert_array_equal(dst, src)
        return launch

    run_threads({f"{chip} {i}": work(chip) for chip in ("m1", "m3") for i in range(3)})
    tuned_lines = [l for l in capfd.readouterr().err.splitlines() if "autotune copy_kernel" in l]
    # Six threads, two chips, one key: two tunings.
    assert len(tuned_lines) == 2, tuned_lines
    autotune_dir = os.path.join(os.environ["TRITON_METAL_CACHE_DIR"], "autotune")
    assert len([f for f in os.listdir(autotune_dir) if f.endswith(".json")]) == 2


SPIN = '''
import sys, threading, time
import numpy as np
import triton_metal
import triton_metal.language as tl

@triton_metal.jit
def spin(x_ptr):
    v = tl.load(x_ptr)
    while v < 1.0:
        v = tl.load(x_ptr) * 0.5
    tl.store(x_ptr, v)

@triton_metal.jit
def one(x_ptr):
    tl.store(x_ptr, 1.0)

outcome = {}

def launch(name):
    try:
        spin[(64,)](np.zeros(4, np.float32))
        outcome[name] = "finished"
    except KeyboardInterrupt:
        outcome[name] = "KeyboardInterrupt"
    except Exception as e:
        outcome[name] = type(e).__name__ + ": " + str(e)

x = np.zeros(1, np.float32)
one[(1,)](x)  # compiled before the threads start
spin.warmup(x, grid=(1,))
workers = [threading.Thread(target=launch, args=(f"thread {i}",)) for i in range(3)]
for t in workers:
    t.start()
time.sleep(0.5)
print("launching", flush=True)
MAIN
for t in workers:
    t.join()
# A launch made after the Ctrl-C runs as usual.
x[0] = 0
one[(1,)](x)
print(sorted(outcome.items()), x[0], flush=True)
'''


@pytest.mark.parametrize("main", ["launches", "joins"])
def test_ctrl_c_stops_every_launch_in_flight(tmp_path, main):
    """Ctrl-C stops the launches of every thread: each raises
    KeyboardInterrupt in its own thread, and Python's main thread gets its
    KeyboardInterrupt as usual, whether it is in a launch or waiting."""
    # (Waiting on an event, not in join(): an interrupted join() may return
    # early from a later call, a bug of Python's own, gh-90882.)
    body = ('launch("main")' if main == "launches" else
            'try:\n    threading.Event().wait()\nexcept KeyboardInterrupt:\n'
            '    outcome["main"] = "KeyboardInterrupt"')
    script = tmp_path / "spin.py"
    script.write_text(SPIN.replace("MAIN", body))
    # SIGINT as a terminal gives it, also where this test runs with it
    # ignored (a shell's background job).
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert p.stdout.readline().strip() == "launching"
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    expected = [("main", "KeyboardInterrupt")] + [
        (f"thread {i}", "KeyboardInterrupt") for i in range(3)]
    assert out.strip() == f"{expected} 1.0"


DAEMONS = '''
import threading, time
import numpy as np
import triton_metal
import triton_metal.language as tl

@triton_metal.jit
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)

x = np.zeros(1 << 16, np.float32)
add_one[(64,)](x, x.size, BLOCK=1024)
assert np.all(x == 1.0)

def forever():
    y = np.zeros(1 << 16, np.float32)
    while True:
        add_one[(64,)](y, y.size, BLOCK=1024)

for _ in range(4):
    threading.Thread(target=forever, daemon=True).start()
time.sleep(0.3)
print("main done", flush=True)
'''


def test_daemon_threads_in_launches_let_the_process_exit(tmp_path):
    """Daemon threads still launching when the main thread ends: the process
    exits with the main thread's status (a thread coming back from a launch
    while Python shuts down waits for the end, as Python's own do)."""
    script = tmp_path / "daemons.py"
    script.write_text(DAEMONS)
    for _ in range(3):
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "main done"


def test_threads_compiling_the_same_kernel_compile_it_once(tmp_path, capfd, monkeypatch):
    # A kernel nobody has compiled in this process: defined here, fresh.
    source = inspect.cleandoc('''
        import triton_metal
        import triton_metal.language as tl

        @triton_metal.jit
        def triple(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)
        ''')
    path = str(tmp_path / "fresh_triple.py")
    with open(path, "w") as f:
        f.write(source + "\n")
    namespace = {"__file__": path}
    exec(compile(source, path, "exec"), namespace)
    triple = namespace["triple"]
    # A second JITFunction of the same function: the same module, compiled
    # by its own cache, into the same compile cache at the same moment.
    twin = triton_metal.jit(triple.fn)
    monkeypatch.setenv("TRITON_METAL_DEBUG", "1")
    monkeypatch.delenv("MTLEMU_CACHE_DIR", raising=False)
    capfd.readouterr()

    def work(kernel, seed):
        def launch():
            rng = np.random.default_rng(seed)
            for _ in range(5):
                n = 16 * int(rng.integers(1, 300))  # one specialization
                x = rng.standard_normal(n).astype(np.float32)
                out = np.zeros(n, np.float32)
                kernel[(triton_metal.cdiv(n, 256),)](x, out, n, BLOCK=256)
                np.testing.assert_array_equal(out, x * np.float32(3.0))
        return launch

    run_threads({f"{k} {i}": work(kernel, i) for i in range(4)
                 for k, kernel in (("triple", triple), ("twin", twin))})
    err = capfd.readouterr().err
    # Each JITFunction compiled its one specialization once.
    assert err.count("--- triple: ttir ---") == 2, err
    modules = os.path.join(os.environ["TRITON_METAL_CACHE_DIR"], "modules")
    assert not [f for f in os.listdir(modules) if ".tmp" in f]


CACHED = '''
import sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import triton_metal
import triton_metal.language as tl

@triton_metal.autotune(configs=[triton_metal.Config({"BLOCK": b}) for b in (128, 256, 512)],
                       key=["n"])
@triton_metal.jit
def halve(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 0.5, mask=mask)

# Both processes start compiling at the same moment.
while time.time() < float(sys.argv[2]):
    time.sleep(0.001)
n = 10000
x = np.arange(n, dtype=np.float32)
out = np.zeros(n, np.float32)
halve[lambda m: (triton_metal.cdiv(n, m["BLOCK"]),)](x, out, n)
assert np.array_equal(out, x * 0.5)
print("ok", halve.best_config.kwargs["BLOCK"])
'''


def test_two_processes_compiling_into_one_cache_leave_it_valid(tmp_path):
    script = tmp_path / "cached.py"
    script.write_text(CACHED)
    cache = tmp_path / "shared_cache"
    env = dict(os.environ, TRITON_METAL_CACHE_DIR=str(cache), TRITON_METAL_DEBUG="1")
    env.pop("MTLEMU_CACHE_DIR", None)
    start = str(time.time() + 3.0)
    procs = [subprocess.Popen([sys.executable, str(script), str(tmp_path), start], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [p.communicate(timeout=300) + (p.returncode,) for p in procs]
    for out, err, code in results:
        assert code == 0, err
        assert out.split()[0] == "ok"
    assert results[0][0] == results[1][0]  # the same config chosen
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert not [p for p in files if ".tmp" in p.name], files
    modules = sorted(p for p in files if p.parent.name == "modules")
    assert modules
    before = {p: p.stat().st_ino for p in modules}
    # A third process finds everything there: no module is written again
    # (a damaged entry would be a miss, compiled and replaced) and no config
    # is timed again.
    third = subprocess.run([sys.executable, str(script), str(tmp_path), "0"], env=env,
                           capture_output=True, text=True, timeout=300)
    assert third.returncode == 0, third.stderr
    assert third.stdout == results[0][0]
    assert "autotune halve" not in third.stderr
    assert {p: p.stat().st_ino for p in modules} == before
