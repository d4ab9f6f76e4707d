"""What Triton kernel libraries' own runtimes do around their kernels, in
the shapes FlagGems' runtime has them: a module of generated code written
to a file whose kernel calls a jit function put into the module's globals
afterwards; a libdevice module picked at run time (`shim.erf`); objects
that are not tensors but have data_ptr() and a dtype; a tensor view with
stride 0 that the kernel indexes past; `from . import sub` in a package's
__init__.py; `@tl.constexpr` on a function; `dtype.value`; dots smaller
than 16 (Triton's min_dot_size is the backend's); an Autotuner subclass
calling `_bench` as Triton's own does; `JITFunction.cache_key`. Results
are checked against NumPy and torch."""
import importlib
import importlib.util
import math
import sys
import textwrap

import numpy as np
import pytest

import triton_metal
import triton_metal.language as tl

torch = pytest.importorskip("torch")


@triton_metal.jit
def _halve(x):
    return x * 0.5


GENERATED = '''
import triton_metal
import triton_metal.language as tl


@triton_metal.jit
def generated_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # `scalar_fn` is neither defined nor imported here: the library puts it
    # into this module's globals after loading it.
    tl.store(out_ptr + offs, scalar_fn(tl.load(x_ptr + offs, mask=mask)) + 1, mask=mask)
'''


def _load_generated(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_generated_module_calls_a_jit_function_put_into_its_globals(tmp_path):
    m = _load_generated(tmp_path, "gen_pointwise", GENERATED)
    m.__dict__["scalar_fn"] = _halve
    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    m.generated_kernel[(2,)](x, out, 100, BLOCK=64)
    np.testing.assert_array_equal(out, x * 0.5 + 1)
    # Rebound to another jit function: compiled anew.
    m.__dict__["scalar_fn"] = _negate
    m.generated_kernel[(2,)](x, out, 100, BLOCK=64)
    np.testing.assert_array_equal(out, 1 - x)


@triton_metal.jit
def _negate(x):
    return -x


def _pick_libdevice(name):
    # A library picks its math module at run time (from the device it
    # found): the front end cannot read it from the text.
    return importlib.import_module(name)


shim = _pick_libdevice("triton_metal.language.extra.cpu.libdevice")
erf = shim.erf


@triton_metal.jit
def runtime_libdevice(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, erf(x), mask=mask)
    tl.store(out_ptr + n + offs, shim.tanh(x), mask=mask)


def test_a_libdevice_module_chosen_at_run_time_and_its_functions():
    x = np.linspace(-3, 3, 50).astype(np.float32)
    out = np.zeros(100, np.float32)
    runtime_libdevice[(1,)](x, out, 50, BLOCK=64)
    np.testing.assert_allclose(out[:50], [math.erf(v) for v in x.astype(np.float64)],
                               atol=2e-6)
    np.testing.assert_allclose(out[50:], np.tanh(x.astype(np.float64)), atol=2e-6)


class TypedPointer:
    """A library's stand-in for a tensor: data_ptr() and a dtype, and the
    storage that bounds it (FlagGems' TypedPtr, StridedBuffer)."""

    def __init__(self, tensor, offset=0, shape=None, strides=None, storage=True):
        self._base = tensor
        self.dtype = tensor.dtype
        self._ptr = tensor.data_ptr() + offset * tensor.element_size()
        self._storage = storage
        if shape is not None:
            self.shape = shape
            self._strides = strides

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._strides

    def untyped_storage(self):
        if not self._storage:
            raise AttributeError("no storage")
        return self._base.storage()


@triton_metal.jit
def copy_backwards(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr - offs, mask=mask), mask=mask)


def test_pointer_likes_bounded_by_their_storage_or_their_shape_and_strides():
    src = torch.arange(40, dtype=torch.float32)
    dst = torch.zeros(40)
    # A pointer 39 elements in, read backwards: inside its storage.
    copy_backwards[(1,)](TypedPointer(src, offset=39), TypedPointer(dst), 40, BLOCK=64)
    assert torch.equal(dst, torch.flip(src, [0]))
    # No storage: the span of a negative-stride view (as a flip's buffer).
    dst.zero_()
    flipped = TypedPointer(src, offset=39, shape=(40,), strides=(-1,), storage=False)
    copy_backwards[(1,)](flipped, TypedPointer(dst), 40, BLOCK=64)
    assert torch.equal(dst, torch.flip(src, [0]))


def test_a_pointer_like_with_nothing_to_bound_it_is_refused():
    src = torch.arange(4, dtype=torch.float32)
    with pytest.raises(TypeError, match="cannot bound"):
        copy_backwards[(1,)](TypedPointer(src, storage=False), src, 4, BLOCK=4)


@triton_metal.jit
def gather_rows(inp_ptr, index_ptr, out_ptr, rows, cols, inp_stride0, inp_stride1,
                dim_stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < rows * cols
    r, c = offs // cols, offs % cols
    index = tl.load(index_ptr + offs, mask=mask, other=0)
    # inp_stride1 is 0 (the view's): the column comes from the index.
    value = tl.load(inp_ptr + r * inp_stride0 + c * inp_stride1 + index * dim_stride, mask=mask)
    tl.store(out_ptr + offs, value, mask=mask)


def test_a_stride_0_view_reaches_all_of_its_storage():
    # FlagGems' gather: the input restrided to the index's shape with
    # stride 0 along the gathered dimension; the kernel reads past the
    # view's own span, inside the tensor's memory.
    x = torch.arange(200, dtype=torch.float32).reshape(10, 20)
    index = torch.randint(0, 20, (10, 5), generator=torch.Generator().manual_seed(5))
    view = x.as_strided((10, 5), (20, 0))
    out = torch.zeros(10, 5)
    gather_rows[(1,)](view, index, out, 10, 5, 20, 0, 1, BLOCK=64)
    assert torch.equal(out, torch.gather(x, 1, index))


PACKAGE_INIT = '''
from . import helpers, tools
'''
PACKAGE_HELPERS = '''
import triton_metal
import triton_metal.language as tl


@triton_metal.jit
def plus_seven(x):
    return x + 7
'''
PACKAGE_TOOLS_INIT = '''
SCALE = 3
'''
PACKAGE_KERNEL = '''
import triton_metal
import triton_metal.language as tl
from libpkg import helpers, tools


@triton_metal.jit
def package_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, helpers.plus_seven(tl.load(x_ptr + offs)) * tools.SCALE)
'''


def test_from_dot_import_submodules_in_a_packages_init(tmp_path, monkeypatch):
    # `from . import helpers, tools` in libpkg/__init__.py: a module and a
    # subpackage, each the submodule (not the import itself).
    pkg = tmp_path / "libpkg"
    (pkg / "tools").mkdir(parents=True)
    (pkg / "__init__.py").write_text(PACKAGE_INIT)
    (pkg / "helpers.py").write_text(PACKAGE_HELPERS)
    (pkg / "tools" / "__init__.py").write_text(PACKAGE_TOOLS_INIT)
    (tmp_path / "uses_libpkg.py").write_text(PACKAGE_KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("libpkg", "libpkg.helpers", "libpkg.tools", "uses_libpkg"):
        sys.modules.pop(name, None)
    m = importlib.import_module("uses_libpkg")
    x = np.arange(32, dtype=np.float32)
    out = np.zeros_like(x)
    m.package_kernel[(1,)](x, out, BLOCK=32)
    np.testing.assert_array_equal(out, (x + 7) * 3)


@tl.constexpr
def accumulator_type(dtype):
    # A plain function under @tl.constexpr: Triton calls it at compile time.
    if dtype.is_fp16() or dtype.is_bf16():
        return tl.float32
    return dtype


@triton_metal.jit
def _lowest(dtype):
    dtype_ = dtype.value  # a dtype passed to a jit function is a constexpr
    if dtype_.is_floating():
        return float("-inf")
    return -2 ** (dtype_.int_bitwidth - 1)


@triton_metal.jit
def sum_in_accumulator_type(x_ptr, out_ptr, low_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    acc = tl.sum(x.to(accumulator_type(x.dtype)), axis=0)
    tl.store(out_ptr, acc)
    tl.store(low_ptr, _lowest(tl.int16))


def test_constexpr_decorated_function_and_dtype_value():
    x = np.full(64, 1000, np.float16)  # 64,000 overflows float16
    out = np.zeros(1, np.float32)
    low = np.zeros(1, np.int32)
    sum_in_accumulator_type[(1,)](x, out, low, BLOCK=64)
    assert out[0] == 64000.0
    assert low[0] == -32768


@triton_metal.jit
def small_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b, allow_tf32=False))


@pytest.mark.parametrize("m,n,k,warps", [(4, 4, 4, 4), (1, 16, 16, 1), (16, 1, 16, 4),
                                         (2, 8, 4, 1), (16, 16, 2, 2), (32, 8, 8, 4)])
def test_dots_smaller_than_16_as_amd_and_the_interpreter_take_them(m, n, k, warps):
    rng = np.random.default_rng(m * 100 + n * 10 + k)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    small_dot[(1,)](a, b, c, m, n, k, num_warps=warps)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


@triton_metal.jit
def _tuned_add(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 2, mask=mask)


class LibTuner(triton_metal.Autotuner):
    """FlagGems' LibTuner's shape: its own run, timing each config through
    Triton's `_bench(*args, config=..., **kwargs)`."""

    def run(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args))
        timings = {c: self._bench(*args, config=c, **kwargs) for c in self.prune_configs(kwargs)}
        self.configs_timings = timings
        best = min(timings, key=timings.get)
        self.best_config = best
        self.pre_hook({**self.nargs, **kwargs, **best.all_kwargs()}, reset_only=True)
        return self.fn.run(*args, **kwargs, **best.all_kwargs())


def test_an_autotuner_subclass_times_configs_through_bench():
    configs = [triton_metal.Config({"BLOCK": 32}, num_warps=1),
               triton_metal.Config({"BLOCK": 256}, num_warps=8)]
    tuner = LibTuner(_tuned_add, ["x_ptr", "out_ptr", "n"], configs, ["n"],
                     cache_results=False)
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    tuner[lambda meta: (triton_metal.cdiv(1000, meta["BLOCK"]),)](x, out, 1000)
    np.testing.assert_array_equal(out, x + 2)
    assert set(tuner.configs_timings) == set(configs)
    for t in tuner.configs_timings.values():
        # Triton's shape: median, 20th and 80th percentile, in ms.
        assert len(t) == 3 and 0 < t[0] < float("inf")


def test_cache_key_follows_the_source_and_what_it_calls(tmp_path):
    m = _load_generated(tmp_path, "gen_keyed", GENERATED)
    m.__dict__["scalar_fn"] = _halve
    first = m.generated_kernel.cache_key
    assert first == m.generated_kernel.cache_key and len(first) == 64
    other = _load_generated(tmp_path, "gen_keyed_2", GENERATED.replace("+ 1", "+ 2"))
    other.__dict__["scalar_fn"] = _halve
    assert other.generated_kernel.cache_key != first
    assert _halve.cache_key != _negate.cache_key
