"""The triton_metal package: launches on NumPy arrays and torch tensors,
errors as exceptions, compiled kernels' metadata, heuristics, autotune,
do_bench, chips, the debug switch. Results are checked against NumPy."""
import inspect
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import kernels
import triton_metal
import triton_metal.language as tl
from triton_metal import testing

from conftest import REPO

try:
    import torch
except ImportError:  # the tests that need it skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="python3-torch is not installed")


def line_of(text, path=kernels.__file__):
    """The line number of the first line of `path` that contains `text`."""
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if text in line:
                return i
    raise AssertionError(text)


def python_env(**extra):
    env = dict(os.environ)
    env.update(extra)
    return env


# --- launches --------------------------------------------------------------------

def test_vector_add_on_numpy_arrays():
    n = 10000
    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    kernels.add_kernel[(triton_metal.cdiv(n, 512),)](x, y, out, n, BLOCK=512)
    np.testing.assert_array_equal(out, x + y)


def test_grid_from_the_meta_parameters():
    n = 3000
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    grid = lambda meta: (triton_metal.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731
    kernels.add_kernel[grid](x, x, out, n, BLOCK=256)
    np.testing.assert_array_equal(out, 2 * x)


def test_strided_numpy_views_are_the_same_memory():
    # A transposed view and a column slice: the kernel reads through the
    # strides it is given, and writes into the caller's array in place.
    base = np.arange(40 * 30, dtype=np.float32).reshape(40, 30)
    x = base.T[::2]  # shape (15, 40), strides (8, 120) bytes
    out = np.zeros((20, 50), np.float32)[:, 5:45]
    M, N = x.shape
    s = 4
    kernels.scale_2d[(triton_metal.cdiv(M, 16), triton_metal.cdiv(N, 16))](
        x, out, M, N, x.strides[0] // s, x.strides[1] // s,
        out.strides[0] // s, out.strides[1] // s, BM=16, BN=16)
    np.testing.assert_array_equal(out[:M], x * kernels.SCALE)
    assert np.all(out[M:] == 0)


@needs_torch
def test_torch_tensors_and_a_noncontiguous_view():
    n = 4096
    x = torch.arange(n, dtype=torch.float32)
    y = torch.ones(n, dtype=torch.float32)
    out = torch.empty(n)
    kernels.add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024)
    assert torch.equal(out, x + 1)
    base = torch.arange(64 * 48, dtype=torch.float32).reshape(64, 48)
    view = base.t()[:, 3:40]  # (48, 37), not contiguous
    res = torch.zeros(48, 37)
    M, N = view.shape
    kernels.scale_2d[(triton_metal.cdiv(M, 16), triton_metal.cdiv(N, 16))](
        view, res, M, N, view.stride(0), view.stride(1), res.stride(0),
        res.stride(1), BM=16, BN=16)
    assert torch.equal(res, view * kernels.SCALE)


@needs_torch
def test_half_and_bfloat16_tensors():
    n = 1000
    for dtype in (torch.float16, torch.bfloat16):
        x = torch.linspace(-4, 4, n).to(dtype)
        out = torch.zeros(n, dtype=dtype)
        kernels.add_kernel[(1,)](x, x, out, n, BLOCK=1024)
        assert torch.equal(out, x + x), dtype


def test_scalars_are_typed_as_triton_types_them():
    # An integer over 2**31 makes n an int64 argument: the mask still works.
    x = np.ones(16, np.float32)
    out = np.zeros(16, np.float32)
    kernels.add_kernel[(1,)](x, x, out, 16, BLOCK=16)
    assert out.tolist() == [2.0] * 16
    ttir = kernels.add_kernel.warmup(x, x, out, 2 ** 33, BLOCK=16, grid=(1,)).asm["ttir"]
    assert "%n: i64" in ttir
    # 1 is specialized away, as Triton does.
    ttir1 = kernels.add_kernel.warmup(x, x, out, 1, BLOCK=16, grid=(1,)).asm["ttir"]
    assert "%n" not in ttir1.split("{")[0]


def test_python_names_msl_reserves_or_cuts_short():
    # A kernel named `kernel`, parameters named `device` and `threadgroup`,
    # and two that share their first 21 characters.
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(16, np.float32)
    compiled = kernels.kernel[(1,)](x, out, 3.0, 4, 0.5, half=16)
    np.testing.assert_array_equal(out, x[::4] * 3.0 + 0.5)
    assert compiled.name == "kernel"
    assert '[[host_name("kernel")]]' in compiled.asm["msl"]


def test_right_shift_is_arithmetic_when_the_left_operand_is_signed():
    # As Triton: int8 >> uint32 is computed in uint32, the shift arithmetic
    # (the left operand is signed), so the sign bits come in.
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, 64).astype(np.int8)
    y = rng.integers(0, 32, 64).astype(np.uint32)
    out = np.zeros(64, np.uint32)
    kernels.shift_right[(1,)](x, y, out, N=64)
    np.testing.assert_array_equal(out, (x.astype(np.int32) >> y.astype(np.int32)).astype(np.uint32))
    # Unsigned on the left: the logical shift.
    u = rng.integers(0, 2 ** 32, 64, dtype=np.uint64).astype(np.uint32)
    kernels.shift_right[(1,)](u, y, out, N=64)
    np.testing.assert_array_equal(out, u >> y)


def test_compiled_kernels_are_cached_per_specialization():
    x = np.ones(64, np.float32)
    out = np.zeros(64, np.float32)
    first = kernels.add_kernel.warmup(x, x, out, 64, BLOCK=64, grid=(1,))
    assert kernels.add_kernel.warmup(x, x, out, 48, BLOCK=64, grid=(1,)) is first
    assert kernels.add_kernel.warmup(x, x, out, 50, BLOCK=64, grid=(1,)) is not first


def test_warmup_gives_the_compiled_kernel():
    x = np.ones(64, np.float32)
    k = kernels.add_kernel.warmup(x, x, x, 64, BLOCK=64, grid=(1,))
    assert set(k.asm) >= {"ttir", "msl", "isa"}
    assert "tt.func public @add_kernel" in k.asm["ttir"]
    assert "kernel void add_kernel" in k.asm["msl"]
    assert ".kernel add_kernel" in k.asm["isa"]
    assert k.n_regs > 0
    assert k.metadata.shared == 0
    assert k.metadata.num_warps == 4
    k._init_handles()


def test_num_warps_and_ignored_options(capfd, monkeypatch):
    monkeypatch.setenv("TRITON_METAL_DEBUG", "1")
    x = np.ones(256, np.float32)
    out = np.zeros(256, np.float32)
    kernels.add_kernel[(1,)](x, x, out, 256, BLOCK=256, num_warps=2,
                             num_stages=3, maxnreg=128)
    np.testing.assert_array_equal(out, 2 * x)
    err = capfd.readouterr().err
    assert "num_stages, maxnreg ignored" in err
    assert "--- add_kernel: msl ---" in err
    assert "threadgroup of 2 SIMD groups (64 threads)" in err


# --- errors ----------------------------------------------------------------------

def test_out_of_bounds_store_raises_with_the_python_line(monkeypatch):
    monkeypatch.setenv("TRITON_METAL_OOB", "fault")
    out = np.zeros(100, np.float32)
    with pytest.raises(triton_metal.KernelError) as e:
        kernels.unmasked_store[(1,)](out, BLOCK=128)
    line = line_of("offs.to(tl.float32))  # no mask")
    assert f"kernels.py:{line}" in str(e.value)
    assert "out-of-bounds" in str(e.value)
    assert e.value.kind == "fault"


def test_store_just_past_the_end_warns_with_the_python_line():
    # 28 floats past the end of the array: within the page a Mac maps, so
    # by default they are dropped (the array's neighbour is untouched) and
    # a warning names the line; the stores inside are done.
    backing = np.full(128, -1.0, np.float32)
    out = backing[:100]
    with pytest.warns(RuntimeWarning) as record:
        kernels.unmasked_store[(1,)](out, BLOCK=128)
    np.testing.assert_array_equal(out, np.arange(100, dtype=np.float32))
    np.testing.assert_array_equal(backing[100:], -1.0)
    message = str(record[0].message)
    assert f"kernels.py:{line_of('offs.to(tl.float32))  # no mask')}" in message
    assert "access outside a buffer" in message


def test_a_bad_out_of_bounds_policy_is_an_argument_error(monkeypatch):
    monkeypatch.setenv("TRITON_METAL_OOB", "ignore")
    with pytest.raises(triton_metal.KernelError) as e:
        kernels.unmasked_store[(1,)](np.zeros(128, np.float32), BLOCK=128)
    assert "TRITON_METAL_OOB" in str(e.value)


def test_failed_device_assert_raises():
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(triton_metal.KernelError) as e:
        kernels.asserting[(1,)](x, N=4)
    assert f"kernels.py:{line_of('x too big')}" in str(e.value)
    assert "trap" in str(e.value)
    kernels.asserting[(1,)](x - 2, N=4)  # all below 3: no fault


def test_kernel_checks_raise_with_the_python_line(monkeypatch):
    out = np.zeros(16, np.float32)
    kernels.folded_store[(1,)](out, BLOCK=128)  # no checks: runs as it is
    monkeypatch.setenv("TRITON_METAL_CHECK", "race")
    with pytest.raises(triton_metal.KernelError) as e:
        kernels.folded_store[(1,)](out, BLOCK=128)
    assert e.value.kind == "check"
    assert f"kernels.py:{line_of('racy: 8 lanes a slot')}" in str(e.value)
    assert "device-memory race" in str(e.value)
    # Lanes 0, 16, ..., 112 write slot 0: one of them is kept.
    assert out[0] in range(0, 128, 16)
    # A kernel without races launches as usual under the checks.
    kernels.copy_kernel[(1,)](np.ones(8, np.float32), out, 8, BLOCK=8)
    assert out[:8].tolist() == [1.0] * 8
    monkeypatch.setenv("TRITON_METAL_CHECK", "races")
    with pytest.raises(triton_metal.KernelError) as e:
        kernels.folded_store[(1,)](out, BLOCK=128)
    assert "unknown check 'races'" in str(e.value)


def test_schedules_give_a_race_free_kernel_the_same_result(monkeypatch):
    x = np.arange(256, dtype=np.float32)
    want = x + x
    for schedule in ("sequential", "random:7", "interleaved"):
        monkeypatch.setenv("TRITON_METAL_SCHEDULE", schedule)
        out = np.zeros(256, np.float32)
        kernels.add_kernel[(1,)](x, x, out, 256, BLOCK=256)
        np.testing.assert_array_equal(out, want)
    monkeypatch.setenv("TRITON_METAL_SCHEDULE", "lockstep")
    with pytest.raises(triton_metal.KernelError) as e:
        kernels.add_kernel[(1,)](x, x, out, 256, BLOCK=256)
    assert "TRITON_METAL_SCHEDULE='lockstep'" in str(e.value)
    assert e.value.kind == "argument"


def test_device_print_goes_to_stdout(capsys):
    kernels.printing[(1,)](np.array([0.5, 1.5], np.float32), N=2)
    assert capsys.readouterr().out == (
        "pid (0, 0, 0) idx (0) x: 0.500000\n"
        "pid (0, 0, 0) idx (1) x: 1.500000\n")


def test_compile_errors_name_file_line_and_column(tmp_path):
    src = tmp_path / "broken.py"
    src.write_text(
        "import triton_metal\nimport triton_metal.language as tl\n\n"
        "@triton_metal.jit\n"
        "def k(x_ptr):\n"
        "    x = tl.load(x_ptr + tl.arange(0, 3))\n")
    scope = {}
    exec(compile(src.read_text(), str(src), "exec"), scope)
    with pytest.raises(triton_metal.CompilationError) as e:
        scope["k"][(1,)](np.zeros(4, np.float32))
    assert f"{src}:6:" in str(e.value)
    assert "power of 2" in str(e.value) or "power of two" in str(e.value)


def test_bad_arguments_raise_type_errors():
    x = np.ones(16, np.float32)
    with pytest.raises(TypeError, match="missing a required argument: 'n'"):
        kernels.add_kernel[(1,)](x, x, x, BLOCK=16)
    with pytest.raises(TypeError, match="too many positional arguments"):
        kernels.add_kernel[(1,)](x, x, x, 16, 16, 16)
    with pytest.raises(TypeError, match="'x_ptr'.*float64"):
        kernels.add_kernel[(1,)](np.ones(16), x, x, 16, BLOCK=16)
    with pytest.raises(TypeError, match="'y_ptr'.*builtins.object"):
        kernels.add_kernel[(1,)](x, object(), x, 16, BLOCK=16)
    with pytest.raises(OverflowError, match="'n'.*does not fit in a 64-bit integer"):
        kernels.add_kernel[(1,)](x, x, x, 2 ** 64, BLOCK=16)
    with pytest.raises(TypeError, match="'BLOCK' is a tl.constexpr"):
        kernels.add_kernel[(1,)](x, x, x, 16, BLOCK=x)
    with pytest.raises(RuntimeError, match="launch it with kernel\\[grid\\]"):
        kernels.add_kernel(x, x, x, 16, BLOCK=16)


@needs_torch
def test_float64_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="float64"):
        kernels.add_kernel[(1,)](torch.ones(16, dtype=torch.float64),
                                 torch.ones(16), torch.ones(16), 16, BLOCK=16)


def test_what_does_not_fit_the_chip_is_out_of_resources():
    x = np.ones(128 * 128, np.float32)
    with pytest.raises(triton_metal.OutOfResources) as e:
        kernels.row_cumsum[(1,)](x, np.zeros_like(x), B=128)
    assert "65536 bytes of threadgroup memory" in str(e.value)
    assert f"tt.scan at {kernels.__file__}:" in str(e.value)
    # Autotune passes over configs that do not fit, as Triton's does.
    tuned = triton_metal.autotune(
        configs=[triton_metal.Config({"B": 128}), triton_metal.Config({"B": 64})],
        key=[])(kernels.row_cumsum)
    out = np.zeros_like(x)
    tuned[(1,)](x, out)
    assert tuned.best_config.kwargs == {"B": 64}
    np.testing.assert_array_equal(out[:64 * 64].reshape(64, 64),
                                  np.cumsum(np.ones((64, 64), np.float32), axis=1))


def test_a_compiled_kernel_launches_with_all_its_arguments():
    # As tutorial 02 does: warmup, then compiled[grid](args, constexprs).
    n = 512
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    compiled = kernels.add_kernel.warmup(x, x, out, n, BLOCK=256, grid=(1,))
    compiled[(2, 1, 1)](x, x, out, n, 256)
    np.testing.assert_array_equal(out, 2 * x)


def test_do_bench_of_host_code_times_the_host():
    ms = testing.do_bench(lambda: sum(range(10000)), warmup=1, rep=5)
    assert ms > 0
    q = testing.do_bench(lambda: sum(range(10000)), warmup=1, rep=5,
                         quantiles=[0.5, 0.2, 0.8])
    assert len(q) == 3 and q[1] <= q[0] <= q[2]


# --- what kernels see of Python ------------------------------------------------------

def test_nested_kernel_sees_its_closure_and_runtime_globals():
    offset = 7.0

    @triton_metal.jit
    def shift(x_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + offset)

    x = np.zeros(8, np.float32)
    shift[(1,)](x, N=8)
    assert x.tolist() == [7.0] * 8


def test_heuristics_set_meta_parameters():
    out = np.zeros(64, np.float32)
    kernels.fill_kernel[(1,)](out, 64, BLOCK=64)
    assert out.tolist() == [1.0] * 64
    out = np.zeros(64, np.float32)
    kernels.fill_kernel[(1,)](out, 40, BLOCK=64)
    assert out.tolist() == [2.0] * 40 + [0.0] * 24


# --- timing: do_bench, autotune, chips -----------------------------------------------

def copy_ms(chip, n=1 << 22):
    triton_metal.set_chip(chip)
    src = np.ones(n, np.float32)
    dst = np.zeros(n, np.float32)
    return testing.do_bench(
        lambda: kernels.copy_kernel[(n // 1024,)](src, dst, n, BLOCK=1024))


def test_do_bench_follows_the_chips_memory_bandwidth():
    m1, m2, m3, m1_max = (copy_ms(c) for c in ("m1", "m2", "m3", "m1-max"))
    # A 32 MB copy is bound by DRAM: 68 GB/s on M1, 100 on M2 and M3,
    # 400 on M1 Max (emu/chips/chip_memory.def).
    assert m1 > m2 and m1 > m3 and m2 > m1_max and m3 > m1_max
    assert 1.2 < m1 / m2 < 1.8
    assert 0.8 < m2 / m3 < 1.25
    assert m1_max < m1 / 3
    # Deterministic: the same figure again.
    assert copy_ms("m2") == m2


def test_profile_gives_each_launchs_timing_report_and_trace(tmp_path):
    n = 1 << 16
    x = np.ones(n, np.float32)
    y = np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    with triton_metal.profile(trace_dir=str(tmp_path)) as p:
        kernels.add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024)
        kernels.copy_kernel[(n // 1024,)](x, out, n, BLOCK=1024)
    assert [r["kernel"] for r in p.reports] == ["add_kernel", "copy_kernel"]
    r = p.reports[0]
    assert r["grid"] == (n // 1024, 1, 1)
    assert r["cycles"] > 0 and r["time_us"] > 0
    assert r["limiter"] and 0 < r["occupancy"] <= 1
    # add reads two arrays from DRAM: 8 bytes an element.
    assert 8 * n <= r["dram_read_bytes"] <= 9 * n
    trace = json.load(open(r["trace"]))
    assert any(e.get("ph") == "X" for e in trace["traceEvents"])
    # Outside the block, launches are not timed.
    kernels.add_kernel[(n // 1024,)](x, x, out, n, BLOCK=1024)
    assert len(p.reports) == 2


def test_triton_metal_cache_dir_holds_the_compile_cache(tmp_path):
    script = tmp_path / "cached.py"
    script.write_text(inspect.cleandoc('''
        import sys
        sys.path.insert(0, sys.argv[1])
        import numpy as np
        import kernels
        x = np.ones(16, np.float32)
        kernels.add_kernel[(1,)](x, x, x, 16, BLOCK=16)
        '''))
    cache = tmp_path / "cache"
    env = python_env(TRITON_METAL_CACHE_DIR=str(cache))
    env.pop("MTLEMU_CACHE_DIR", None)
    r = subprocess.run([sys.executable, str(script), os.path.dirname(kernels.__file__)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert list((cache / "modules").iterdir())


def test_chips_and_device_properties():
    names = [c[0] for c in triton_metal.chips()]
    assert {"m1", "m2", "m3", "m1-max", "m3-max"} <= set(names)
    triton_metal.set_chip("m3-max")
    assert triton_metal.get_chip() == "m3-max"
    props = triton_metal.get_device_properties()
    assert props["multiprocessor_count"] == 40
    assert props["max_shared_mem"] == 32768
    assert props["warpSize"] == 32
    assert props["max_num_regs"] > 0
    with pytest.raises(ValueError, match="m9"):
        triton_metal.set_chip("m9")


AUTOTUNED = '''
import sys
import numpy as np
import triton_metal
import triton_metal.language as tl

@triton_metal.autotune(
    configs=[triton_metal.Config({"BLOCK": b}, num_warps=w)
             for b, w in ((64, 1), (256, 4), (1024, 4), (128, 2))],
    key=["n"])
@triton_metal.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)

n = 1 << 20
x = np.ones(n, np.float32)
out = np.zeros(n, np.float32)
scale[lambda m: (triton_metal.cdiv(n, m["BLOCK"]),)](x, out, n)
assert np.all(out == 3.0)
print("best", scale.best_config.kwargs["BLOCK"], scale.best_config.num_warps)
'''


def test_autotune_picks_the_fastest_config_and_caches_it(tmp_path):
    script = tmp_path / "autotuned.py"
    script.write_text(AUTOTUNED)
    env = python_env(TRITON_METAL_CACHE_DIR=str(tmp_path / "cache"),
                     TRITON_METAL_DEBUG="1")
    first = subprocess.run([sys.executable, str(script)], env=env,
                           capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    # The timings it measured: the one chosen is the fastest.
    line = [l for l in first.stderr.splitlines() if "autotune scale" in l][0]
    timings = json.loads(line.split("simulated us ", 1)[1].split(" -> ")[0])
    best = min(timings, key=timings.get)
    block, warps = first.stdout.split()[1:3]
    assert best.startswith(f"BLOCK: {block}, num_warps: {warps}")
    assert len(set(timings.values())) > 1
    # A second process reads the choice from the disk cache: no timing.
    second = subprocess.run([sys.executable, str(script)], env=env,
                            capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert "autotune scale" not in second.stderr
    assert second.stdout == first.stdout


def test_autotune_restores_reset_and_prunes():
    n = 4096
    configs = [triton_metal.Config({"BLOCK": b}) for b in (64, 128, 256, 512)]
    seen = []

    def prune(configs, named):
        seen.append(len(configs))
        return [c for c in configs if c.kwargs["BLOCK"] >= 128]

    # restore_value: timing each config must not leave its sums behind.
    tuned = triton_metal.autotune(configs=configs, key=["n"], restore_value=["out_ptr"],
                                  prune_configs_by={"early_config_prune": prune})(kernels.accumulate)
    x = np.ones(n, np.float32)
    out = np.full(n, 5.0, np.float32)
    tuned[lambda m: (triton_metal.cdiv(n, m["BLOCK"]),)](x, out, n)
    assert np.all(out == 6.0)
    assert seen == [4] and tuned.best_config.kwargs["BLOCK"] >= 128
    # reset_to_zero: zeroed before each timing run, and the launch itself.
    tuned0 = triton_metal.autotune(configs=configs, key=["n"], reset_to_zero=["out_ptr"])(
        kernels.accumulate)
    out = np.full(n, 5.0, np.float32)
    tuned0[lambda m: (triton_metal.cdiv(n, m["BLOCK"]),)](x, out, n)
    assert np.all(out == 6.0)  # restored after timing, then one real launch


def test_perf_report_prints_a_table(capsys):
    @testing.perf_report(testing.Benchmark(
        x_names=["n"], x_vals=[1024, 4096], line_arg="provider",
        line_vals=["triton", "half"], line_names=["Triton", "Half"],
        plot_name="copy", args={}))
    def bench(n, provider):
        src = np.ones(n, np.float32)
        dst = np.zeros(n, np.float32)
        ms = testing.do_bench(lambda: kernels.copy_kernel[(n // 1024,)](src, dst, n, BLOCK=1024))
        return ms if provider == "triton" else ms / 2

    bench.run(print_data=True)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "copy:"
    assert out[1].split() == ["n", "Triton", "Half"]
    rows = [list(map(float, line.split())) for line in out[2:4]]
    assert [r[0] for r in rows] == [1024, 4096]
    assert all(abs(r[2] - r[1] / 2) < 1e-6 * r[1] for r in rows)
    assert rows[1][1] > rows[0][1] > 0


def test_the_chip_from_the_environment(tmp_path):
    script = tmp_path / "chip.py"
    script.write_text("import triton_metal\nprint(triton_metal.get_chip(), "
                      "triton_metal.get_device_properties()['multiprocessor_count'])\n")
    r = subprocess.run([sys.executable, str(script)], env=python_env(TRITON_METAL_CHIP="m2-max"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["m2-max", "38"]


# --- the command line ---------------------------------------------------------------

def test_examples_run_and_match_numpy():
    for name in ("vector_add.py", "matmul.py", "strided.py"):
        r = subprocess.run([sys.executable, os.path.join(REPO, "examples", "triton", name)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert "matches NumPy" in r.stdout


def test_check_command():
    r = subprocess.run([sys.executable, "-m", "triton_metal", "check"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pass  kernel" in r.stdout
    assert "FAIL" not in r.stdout


def test_unmodified_triton_script_runs_with_import_triton(tmp_path):
    script = tmp_path / "triton_script.py"
    script.write_text(inspect.cleandoc('''
        import numpy as np
        import triton
        import triton.language as tl
        from triton.language.extra import libdevice

        @triton.jit
        def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(out_ptr + offs, libdevice.tanh(tl.load(x_ptr + offs, mask=m)), mask=m)

        x = np.linspace(-2, 2, 1000).astype(np.float32)
        out = np.zeros_like(x)
        k[(triton.cdiv(1000, 256),)](x, out, 1000, BLOCK=256)
        np.testing.assert_allclose(out, np.tanh(x), rtol=1e-5, atol=1e-6)
        print("ok", triton.__name__, triton.runtime.driver.active.get_current_target().backend)
        '''))
    r = subprocess.run([sys.executable, "-m", "triton_metal", "run", str(script)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok triton_metal metal"


def test_host_tensor_descriptors_are_a_type_error():
    from triton_metal.tools.tensor_descriptor import TensorDescriptor
    x = np.ones((16, 16), np.float32)
    desc = TensorDescriptor(x, [16, 16], [16, 1], [16, 16])
    with pytest.raises(TypeError, match="tl.make_tensor_descriptor"):
        kernels.add_kernel[(1,)](desc, x, x, 16, BLOCK=16)


@needs_torch
def test_run_gives_cpu_torch_what_triton_scripts_call(tmp_path):
    script = tmp_path / "torch_calls.py"
    script.write_text(inspect.cleandoc('''
        import torch
        import triton
        a = torch.randn(8, 8).half()
        b = torch.randn(8, 8).half()
        want = (a.float() @ b.float()).half()
        assert torch.equal(torch.matmul(a, b), want)
        assert torch.equal(a @ b, want)
        y = torch.nn.functional.layer_norm(a, (8,))
        assert y.dtype == torch.float16
        # bfloat16 products summed in float32 and rounded once, as a GPU's
        # matmul: within half an ulp of the exact product.
        torch.manual_seed(0)
        c = torch.rand(32, 16).bfloat16()
        d = torch.rand(16, 32).bfloat16()
        exact = c.double() @ d.double()
        assert torch.equal(torch.matmul(c, d).double(), exact.bfloat16().double())
        assert torch.equal((c @ d).double(), exact.bfloat16().double())
        h = torch.tensor([-3.0, -0.25, 0.75, 9.0]).half()
        assert torch.equal(h.clamp(-1, 1), torch.tensor([-1, -0.25, 0.75, 1]).half())
        h.clamp_(-0.5, 0.5)
        assert torch.equal(h, torch.tensor([-0.5, -0.25, 0.5, 0.5]).half())
        flags = torch.backends.cuda.matmul
        flags.allow_bf16_reduced_precision_reduction = False
        assert flags.allow_bf16_reduced_precision_reduction is False
        torch.cuda.synchronize()
        s = torch.cpu.Stream()
        torch.cpu.set_stream(s)
        assert triton.runtime.driver.active.get_active_torch_device().type == "cpu"
        print("ok")
        '''))
    r = subprocess.run([sys.executable, "-m", "triton_metal", "run", str(script)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
