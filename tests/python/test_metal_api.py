"""The mtlemu package: Metal's host objects from Python, kernels written
here run through them and checked against NumPy (float64 where it rounds)."""
import json
import os
import threading

import numpy as np
import pytest

import mtlemu


@pytest.fixture
def device():
    return mtlemu.Device("m1")


def run(device, library, name, buffers, grid, group, bytes_=(),
        threadgroups=False, tg_memory=(), constant_values=None, **settings):
    """One dispatch of kernel `name`: buffers {index: Buffer or array},
    bytes_ [(index, value)], tg_memory [(index, length)]; the command buffer
    after its commit."""
    function = library.new_function(name, constant_values)
    state = device.new_compute_pipeline_state(function)
    commands = device.new_command_queue().command_buffer(**settings)
    encoder = commands.compute_command_encoder()
    encoder.set_compute_pipeline_state(state)
    for index, b in buffers.items():
        if not isinstance(b, mtlemu.Buffer):
            b = device.new_buffer_with_bytes_no_copy(b)
        encoder.set_buffer(b, 0, index)
    for index, value in bytes_:
        encoder.set_bytes(value, index)
    for index, length in tg_memory:
        encoder.set_threadgroup_memory_length(length, index)
    if threadgroups:
        encoder.dispatch_threadgroups(grid, group)
    else:
        encoder.dispatch_threads(grid, group)
    encoder.end_encoding()
    commands.commit()
    commands.wait_until_completed()
    return commands


SAXPY = """
#include <metal_stdlib>
using namespace metal;
kernel void saxpy(device const float* x [[buffer(0)]],
                  device float* y [[buffer(1)]],
                  constant float& a [[buffer(2)]],
                  constant uint& n [[buffer(3)]],
                  uint i [[thread_position_in_grid]]) {
  if (i < n) y[i] = fma(a, x[i], y[i]);
}
"""


def test_elementwise_on_the_arrays_own_memory(device):
    library = device.new_library_with_source(SAXPY, file="saxpy.metal")
    assert library.function_names == ["saxpy"]
    n = 1000
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    expected = (1.5 * x.astype(np.float64) + y).astype(np.float32)
    commands = run(device, library, "saxpy", {0: x, 1: y}, (1024, 1, 1),
                   (256, 1, 1), bytes_=[(2, np.float32(1.5)),
                                        (3, np.uint32(n))])
    assert commands.status == "completed" and commands.error is None
    np.testing.assert_array_equal(y, expected)  # fma rounds once
    report = commands.dispatches[0]
    assert report["kernel"] == "saxpy"
    assert report["threads_per_grid"] == (1024, 1, 1)
    assert report["instructions"] > 0


def test_buffers_copied_and_made_on_the_device(device):
    library = device.new_library_with_source(SAXPY)
    x = np.arange(64, dtype=np.float32)
    xb = device.new_buffer_with_bytes(x)
    x[:] = -1  # a copy: the buffer keeps the values it was made with
    yb = device.new_buffer(64 * 4)
    assert yb.length == 256
    yb.numpy(np.float32)[:] = 10
    commands = run(device, library, "saxpy", {0: xb, 1: yb}, (64,), (64,),
                   bytes_=[(2, np.float32(2)), (3, np.uint32(64))])
    assert commands.error is None
    np.testing.assert_array_equal(yb.numpy(np.float32),
                                  2 * np.arange(64, dtype=np.float32) + 10)
    assert bytes(yb.contents()[:4]) == np.float32(10).tobytes()


REDUCE = """
#include <metal_stdlib>
using namespace metal;
// One threadgroup's sum: its threads' values halved in threadgroup memory
// of the length the host sets, then SIMD-group sums.
kernel void block_sum(device const float* x [[buffer(0)]],
                      device float* sums [[buffer(1)]],
                      threadgroup float* scratch [[threadgroup(0)]],
                      uint i [[thread_position_in_grid]],
                      uint t [[thread_index_in_threadgroup]],
                      uint g [[threadgroup_position_in_grid]],
                      uint n [[threads_per_threadgroup]],
                      uint lane [[thread_index_in_simdgroup]],
                      uint sg [[simdgroup_index_in_threadgroup]]) {
  float v = simd_sum(x[i]);
  if (lane == 0) scratch[sg] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0) {
    v = lane < n / 32 ? scratch[lane] : 0.0f;
    v = simd_sum(v);
    if (lane == 0) sums[g] = v;
  }
}
"""


def test_threadgroup_reduction(device):
    library = device.new_library_with_source(REDUCE, file="reduce.metal")
    groups, per = 16, 256
    x = np.random.default_rng(2).random(groups * per).astype(np.float32)
    sums = np.zeros(groups, dtype=np.float32)
    commands = run(device, library, "block_sum", {0: x, 1: sums}, (groups,),
                   (per,), threadgroups=True, tg_memory=[(0, 32 * 4)])
    assert commands.error is None, commands.error
    np.testing.assert_allclose(
        sums, x.astype(np.float64).reshape(groups, per).sum(axis=1),
        rtol=1e-5)


SIMDGROUP_MATMUL = """
#include <metal_stdlib>
using namespace metal;
// C = A B for 8x8 float matrices, one SIMD group.
kernel void mm8(device const float* a [[buffer(0)]],
                device const float* b [[buffer(1)]],
                device float* c [[buffer(2)]]) {
  simdgroup_float8x8 ma, mb, mc;
  simdgroup_load(ma, a, 8);
  simdgroup_load(mb, b, 8);
  simdgroup_multiply(mc, ma, mb);
  simdgroup_store(mc, c, 8);
}
"""


def test_simdgroup_matrix(device):
    library = device.new_library_with_source(SIMDGROUP_MATMUL)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((8, 8)).astype(np.float32)
    b = rng.standard_normal((8, 8)).astype(np.float32)
    c = np.zeros((8, 8), dtype=np.float32)
    commands = run(device, library, "mm8", {0: a, 1: b, 2: c}, (32,), (32,))
    assert commands.error is None, commands.error
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5,
                               atol=1e-5)


HISTOGRAM = """
#include <metal_stdlib>
using namespace metal;
kernel void histogram(device const uint* x [[buffer(0)]],
                      device atomic_uint* bins [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit(&bins[x[i] % 16], 1u, memory_order_relaxed);
}
"""


def test_atomics(device):
    library = device.new_library_with_source(HISTOGRAM)
    x = np.random.default_rng(4).integers(0, 1000, 4096).astype(np.uint32)
    bins = np.zeros(16, dtype=np.uint32)
    commands = run(device, library, "histogram", {0: x, 1: bins}, (4096,),
                   (128,))
    assert commands.error is None
    np.testing.assert_array_equal(bins, np.bincount(x % 16, minlength=16))


CONSTANTS = """
#include <metal_stdlib>
using namespace metal;
constant float scale [[function_constant(0)]];
constant bool negate [[function_constant(1)]];
constant int offset [[function_constant(2)]];
constant bool has_offset = is_function_constant_defined(offset);
kernel void scaled(device float* y [[buffer(0)]],
                   uint i [[thread_position_in_grid]]) {
  float v = scale * float(i);
  if (negate) v = -v;
  if (has_offset) v += float(offset);
  y[i] = v;
}
"""


def test_function_constants(device):
    library = device.new_library_with_source(CONSTANTS)
    i = np.arange(32, dtype=np.float32)
    y = np.zeros(32, dtype=np.float32)
    run(device, library, "scaled", {0: y}, (32,), (32,),
        constant_values={"scale": 2.5, "negate": True})
    np.testing.assert_array_equal(y, -2.5 * i)
    values = mtlemu.FunctionConstantValues()
    values.set_constant_value(0.5, "float", index=0)
    values.set_constant_value(False, "bool", name="negate")
    values.set_constant_value(7, "int", index=2)
    run(device, library, "scaled", {0: y}, (32,), (32,),
        constant_values=values)
    np.testing.assert_array_equal(y, 0.5 * i + 7)


def test_compile_options(device, tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "twice.h").write_text(
        "inline float twice(float v) { return FACTOR * v; }\n")
    source = """
#include <metal_stdlib>
#include "twice.h"
using namespace metal;
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
#ifdef PLUS_ONE
  y[i] = twice(y[i]) + 1.0f;
#else
  y[i] = twice(y[i]);
#endif
}
"""
    options = mtlemu.CompileOptions(
        preprocessor_macros={"FACTOR": "3.0f", "PLUS_ONE": None},
        fast_math_enabled=False, include_directories=[tmp_path / "inc"])
    library = device.new_library_with_source(source, options)
    y = np.arange(8, dtype=np.float32)
    run(device, library, "k", {0: y}, (8,), (8,))
    np.testing.assert_array_equal(y, 3 * np.arange(8, dtype=np.float32) + 1)


def test_library_from_a_file_and_its_includes(device, tmp_path):
    (tmp_path / "helper.h").write_text("#define SCALE 4.0f\n")
    path = tmp_path / "k.metal"
    path.write_text('#include "helper.h"\n'
                    "kernel void k(device float* y [[buffer(0)]],\n"
                    "              uint i [[thread_position_in_grid]]) {\n"
                    "  y[i] *= SCALE;\n}\n")
    library = device.new_library_with_file(path)
    y = np.ones(4, dtype=np.float32)
    run(device, library, "k", {0: y}, (4,), (4,))
    np.testing.assert_array_equal(y, np.full(4, 4, np.float32))


def test_compile_errors_name_the_file_line_and_column(device):
    source = ("kernel void k(device float* y [[buffer(0)]]) {\n"
              "  y[0] = undefined_name;\n}\n")
    with pytest.raises(mtlemu.CompileError) as e:
        device.new_library_with_source(source, file="bad.metal")
    assert "bad.metal:2:10: error:" in str(e.value)
    assert "undefined_name" in str(e.value)
    assert isinstance(e.value, mtlemu.MetalError)
    library = device.new_library_with_source(SAXPY)
    with pytest.raises(mtlemu.CompileError, match="no kernel named 'nope'"):
        library.new_function("nope")


def test_validation_errors(device):
    library = device.new_library_with_source(SAXPY)
    state = device.new_compute_pipeline_state(library.new_function("saxpy"))
    assert state.thread_execution_width == 32
    assert 0 < state.max_total_threads_per_threadgroup <= 1024
    commands = device.new_command_queue().command_buffer()
    encoder = commands.compute_command_encoder()
    encoder.set_compute_pipeline_state(state)
    with pytest.raises(TypeError, match="NumPy value"):
        encoder.set_bytes(1.5, 2)
    with pytest.raises(mtlemu.ValidationError):
        encoder.set_buffer(device.new_buffer(16), 0, 31)
    with pytest.raises(mtlemu.ValidationError):
        encoder.dispatch_threads((64, 1, 1), (2048, 1, 1))
    encoder.end_encoding()
    with pytest.raises(mtlemu.ValidationError, match="ended"):
        encoder.dispatch_threads((64, 1, 1), (64, 1, 1))
    commands.commit()
    with pytest.raises(mtlemu.ValidationError, match="committed"):
        commands.commit()
    with pytest.raises(mtlemu.ValidationError, match="read-only"):
        a = np.zeros(4, np.float32)
        a.flags.writeable = False
        device.new_buffer_with_bytes_no_copy(a)
    with pytest.raises(mtlemu.ValidationError, match="contiguous"):
        device.new_buffer_with_bytes_no_copy(np.zeros((4, 4), np.float32)[:, 1])
    with pytest.raises(ValueError):
        mtlemu.Device("m9")


def test_max_total_threads_attribute(device):
    source = """
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]])
    [[max_total_threads_per_threadgroup(256)]] { y[i] = 1; }
"""
    library = device.new_library_with_source(source)
    state = device.new_compute_pipeline_state(library.new_function("k"))
    assert state.max_total_threads_per_threadgroup == 256


def test_a_fault_is_the_command_buffers_error(device):
    source = """
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  y[i * 1000000] = 1.0f;
}
"""
    library = device.new_library_with_source(source, file="oob.metal")
    y = np.zeros(16, dtype=np.float32)
    commands = run(device, library, "k", {0: y}, (32,), (32,))
    assert commands.status == "error"
    error = commands.error
    assert isinstance(error, mtlemu.CommandBufferError)
    assert error.code == "page_fault"
    assert "oob.metal:3" in error.message


def test_checks_report_a_race(device):
    source = """
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* y [[buffer(0)]],
              threadgroup float* t [[threadgroup(0)]],
              uint i [[thread_index_in_threadgroup]]) {
  t[0] = float(i);
  y[i] = t[0];
}
"""
    library = device.new_library_with_source(source, file="race.metal")
    y = np.zeros(64, dtype=np.float32)
    commands = run(device, library, "k", {0: y}, (64,), (64,),
                   tg_memory=[(0, 16)], checks="race")
    assert commands.status == "error"
    assert commands.error.code == "check"
    assert "race.metal:7" in commands.error.message
    clean = run(device, library, "k", {0: y}, (64,), (64,),
                tg_memory=[(0, 16)])
    assert clean.error is None  # no check asked for


def test_timing_and_trace(device, tmp_path):
    library = device.new_library_with_source(SAXPY)
    n = 4096
    x = np.ones(n, np.float32)
    y = np.ones(n, np.float32)
    commands = run(device, library, "saxpy", {0: x, 1: y}, (n,), (256,),
                   bytes_=[(2, np.float32(1)), (3, np.uint32(n))],
                   trace=True)
    assert commands.error is None
    report = commands.dispatches[0]
    timing = json.loads(report["timing_json"])
    assert timing and "cycles" in report["timing_text"].lower()
    commands.write_trace(tmp_path / "t.json")
    trace = json.loads((tmp_path / "t.json").read_text())
    assert trace["traceEvents"]
    np.testing.assert_array_equal(y, np.full(n, 2, np.float32))


def test_torch_tensors_without_copies(device):
    torch = pytest.importorskip("torch")
    library = device.new_library_with_source(SAXPY)
    x = torch.arange(100, dtype=torch.float32)
    y = torch.ones(100, dtype=torch.float32)
    run(device, library, "saxpy", {0: x, 1: y}, (128,), (64,),
        bytes_=[(2, np.float32(3)), (3, np.uint32(100))])
    assert torch.equal(y, 3 * torch.arange(100, dtype=torch.float32) + 1)
    with pytest.raises(mtlemu.ValidationError, match="contiguous"):
        device.new_buffer_with_bytes_no_copy(torch.zeros(4, 4).t())


def test_a_library_of_many_kernels(device):
    # The shape of llama.cpp's: a template instantiated by [[host_name]]
    # (compiled at once, each kernel lowered when a function asks).
    source = ["#include <metal_stdlib>\nusing namespace metal;\n"
              "template <int K> kernel void mul(device float* y [[buffer(0)]],"
              " uint i [[thread_position_in_grid]]) { y[i] *= K; }\n"]
    for k in range(120):
        source.append(f'template [[host_name("mul_{k}")]] kernel void '
                      f'mul<{k}>(device float*, uint);\n')
    library = device.new_library_with_source("".join(source))
    assert library.function_names == [f"mul_{k}" for k in range(120)]
    for k in (7, 111):
        y = np.arange(32, dtype=np.float32)
        run(device, library, f"mul_{k}", {0: y}, (32,), (32,))
        np.testing.assert_array_equal(y, k * np.arange(32, dtype=np.float32))


def test_threads_commit_at_once(device):
    library = device.new_library_with_source(SAXPY)
    state = device.new_compute_pipeline_state(library.new_function("saxpy"))
    queue = device.new_command_queue()
    results = {}

    def work(t):
        n = 2048
        x = np.full(n, t, np.float32)
        y = np.zeros(n, np.float32)
        commands = queue.command_buffer(host_threads=1)
        encoder = commands.compute_command_encoder()
        encoder.set_compute_pipeline_state(state)
        encoder.set_buffer(device.new_buffer_with_bytes_no_copy(x), 0, 0)
        encoder.set_buffer(device.new_buffer_with_bytes_no_copy(y), 0, 1)
        encoder.set_bytes(np.float32(2), 2)
        encoder.set_bytes(np.uint32(n), 3)
        encoder.dispatch_threads((n,), (256,))
        encoder.end_encoding()
        commands.commit()
        results[t] = (commands.error, y)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for t in range(4):
        error, y = results[t]
        assert error is None
        np.testing.assert_array_equal(y, np.full(2048, 2 * t, np.float32))


def test_settings_from_the_environment(device, monkeypatch):
    monkeypatch.setenv("MTLEMU_OOB", "sometimes")
    with pytest.raises(mtlemu.ValidationError, match="MTLEMU_OOB='sometimes'"):
        device.new_command_queue().command_buffer()
    monkeypatch.setenv("MTLEMU_OOB", "report")
    monkeypatch.setenv("MTLEMU_CHIP", "m3")
    assert mtlemu.Device().chip == "m3"
    assert os.environ["MTLEMU_CHIP"] == "m3"
