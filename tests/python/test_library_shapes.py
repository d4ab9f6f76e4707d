"""Kernels in the shapes Triton kernel libraries write them: jit functions
made by calls rather than decorators (and called from other kernels), a
KernelInterface subclass with its own run, an Autotuner subclass reading
Triton's attributes, Heuristics made by a call, a kernel named `kernel`,
long parameter names, dtype attributes read inside kernels, names imported
from triton.language.standard, hasattr on tl. Outputs are checked against
NumPy."""
import numpy as np
import pytest

import triton_metal
import triton_metal.language as tl
from triton_metal.language.standard import _log2, zeros_like  # noqa: E402


def _scale_impl(x_ptr, out_ptr, n, FACTOR: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * FACTOR, mask=mask)


# Made by calls, as libraries do when one body serves several wrappers.
scale = triton_metal.jit(_scale_impl)


def _twice(x):
    return x * 2


_twice = triton_metal.jit(_twice)


@triton_metal.jit
def calls_a_called_jit(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, _twice(tl.load(x_ptr + offs, mask=mask)) + 1, mask=mask)


def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) - 3, mask=mask)


kernel = tl.core.jit(kernel)


def _add_rows(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x + 0.5, mask=offs < n)


add_rows = triton_metal.heuristics({"EVEN": lambda a: a["n"] % a["BLOCK"] == 0})(
    triton_metal.jit(_add_rows))


def _tuned(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)


tuned = triton_metal.autotune(
    configs=[triton_metal.Config({"BLOCK": 64}, num_warps=2),
             triton_metal.Config({"BLOCK": 128}, num_warps=4)],
    key=["n"], cache_results=False)(triton_metal.jit(_tuned))


@triton_metal.jit
def long_names(input_pointer_with_a_very_long_name_0123,
               output_pointer_with_a_very_long_name_012,
               number_of_elements_with_a_long_name_0123,
               BLOCK_SIZE_OF_THE_KERNEL_WITH_LONG_NAME_: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE_OF_THE_KERNEL_WITH_LONG_NAME_ + tl.arange(
        0, BLOCK_SIZE_OF_THE_KERNEL_WITH_LONG_NAME_)
    mask = offs < number_of_elements_with_a_long_name_0123
    x = tl.load(input_pointer_with_a_very_long_name_0123 + offs, mask=mask)
    tl.store(output_pointer_with_a_very_long_name_012 + offs, x + 7, mask=mask)


@triton_metal.jit
def dtype_facts(out_ptr, x_ptr, DT: tl.constexpr):
    # What a kernel reads from dtypes: its argument's and a constexpr's.
    x = tl.load(x_ptr)
    xt = x.dtype
    tl.store(out_ptr + 0, xt.primitive_bitwidth)
    tl.store(out_ptr + 1, xt.fp_mantissa_width)
    tl.store(out_ptr + 2, xt.exponent_bias)
    tl.store(out_ptr + 3, DT.int_bitwidth)
    tl.store(out_ptr + 4, DT.is_int_signed())
    tl.store(out_ptr + 5, xt.is_floating() and not xt.is_fp16())
    tl.store(out_ptr + 6, DT.get_int_max_value() // 65536)
    tl.store(out_ptr + 7, tl.float16.exponent_bias + tl.bfloat16.fp_mantissa_width)
    tl.store(out_ptr + 8, DT.is_int16() + 2 * DT.is_uint16() + 4 * xt.is_fp32())
    tl.store(out_ptr + 9, DT.itemsize)


@triton_metal.jit
def standard_names(out_ptr, N: tl.constexpr):
    z = zeros_like(tl.arange(0, N))
    tl.store(out_ptr + tl.arange(0, N), z + _log2(N))


def _arrays(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n).astype(np.float32), np.zeros(n, np.float32)


def test_jit_made_by_a_call_launches_under_its_name():
    x, out = _arrays()
    scale[(triton_metal.cdiv(x.size, 128),)](x, out, x.size, FACTOR=3, BLOCK=128)
    np.testing.assert_allclose(out, x * 3, rtol=1e-6)
    assert isinstance(scale, triton_metal.JITFunction) and scale.__name__ == "_scale_impl"


def test_a_called_jit_made_by_a_call_compiles_inside_another_kernel():
    x, out = _arrays()
    calls_a_called_jit[(3,)](x, out, x.size, BLOCK=128)
    np.testing.assert_allclose(out, x * 2 + 1, rtol=1e-6)


def test_a_kernel_named_kernel_from_tl_core_jit():
    x, out = _arrays()
    kernel[(3,)](x, out, x.size, BLOCK=128)
    np.testing.assert_allclose(out, x - 3, rtol=1e-6)


@pytest.mark.parametrize("n", [256, 300])
def test_heuristics_made_by_a_call(n):
    assert isinstance(add_rows, triton_metal.Heuristics)
    x, out = _arrays(n)
    add_rows[(triton_metal.cdiv(n, 128),)](x, out, n, BLOCK=128)
    np.testing.assert_allclose(out, x + 0.5, rtol=1e-6)


def test_autotune_made_by_calls():
    x, out = _arrays(500)
    tuned[lambda m: (triton_metal.cdiv(500, m["BLOCK"]),)](x, out, 500)
    np.testing.assert_allclose(out, x * 3, rtol=1e-6)
    assert tuned.best_config in tuned.configs


def test_forty_character_parameter_names():
    x, out = _arrays()
    long_names[(3,)](x, out, x.size, BLOCK_SIZE_OF_THE_KERNEL_WITH_LONG_NAME_=128)
    np.testing.assert_allclose(out, x + 7, rtol=1e-6)
    assert all(len(n) == 40 for n in long_names.arg_names)


class Launcher(triton_metal.KernelInterface):
    """A library's wrapper: its own run, which fills a meta-parameter and
    counts launches, over a JITFunction."""

    def __init__(self, fn):
        self.fn = fn
        self.launches = 0

    def run(self, *args, grid, warmup, **kwargs):
        self.launches += 1
        kwargs.setdefault("FACTOR", 5)
        return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)


def test_a_kernel_interface_subclass_with_its_own_run():
    wrapped = Launcher(scale)
    x, out = _arrays()
    wrapped[(3,)](x, out, x.size, BLOCK=128)
    np.testing.assert_allclose(out, x * 5, rtol=1e-6)
    assert wrapped.launches == 1
    compiled = wrapped.warmup(x, out, x.size, BLOCK=128, grid=(3,))
    assert "ttir" in compiled.asm and wrapped.launches == 2
    with pytest.raises(NotImplementedError):
        triton_metal.KernelInterface().run(grid=(1,), warmup=False)


class CountingAutotuner(triton_metal.Autotuner):
    """An Autotuner subclass as libraries write them: it reads Triton's
    state and wraps its hooks."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.pre_hook_calls = 0
        self.had_user_pre_hook = self.user_defined_pre_hook
        inner = self.pre_hook

        def counting(named, reset_only=False):
            self.pre_hook_calls += 1
            return inner(named, reset_only=reset_only) if not self.had_user_pre_hook else inner(named)
        self.pre_hook = counting


def test_an_autotuner_subclass_reads_tritons_state():
    configs = [triton_metal.Config({"BLOCK": 64}, num_warps=2),
               triton_metal.Config({"BLOCK": 256}, num_warps=8)]
    tuner = CountingAutotuner(triton_metal.jit(_tuned), ["x_ptr", "out_ptr", "n"], configs,
                              ["n"], reset_to_zero=["out_ptr"], restore_value=None,
                              cache_results=False)
    assert not tuner.had_user_pre_hook and not tuner.user_defined_post_hook
    assert tuner.keys == ["n"] and tuner.configs == configs and tuner.cache == {}
    assert tuner.reset_to_zero == ["out_ptr"] and tuner.restore_value == []
    assert tuner.base_fn is _tuned and tuner.arg_names == ["x_ptr", "out_ptr", "n"]
    assert (tuner.perf_model, tuner.early_config_prune, tuner.configs_top_k) == (None, None, 1.0)
    assert (tuner.num_warmups, tuner.num_reps) == (None, None) and callable(tuner.do_bench)
    x, out = _arrays(700)
    out[:] = 9.0
    tuner[lambda m: (triton_metal.cdiv(700, m["BLOCK"]),)](x, out, 700)
    np.testing.assert_allclose(out, x * 3, rtol=1e-6)
    assert tuner.pre_hook_calls == 2  # once per config timed
    assert tuner.best_config in configs and list(tuner.cache.values()) == [tuner.best_config]
    user = []
    with_hook = triton_metal.Autotuner(triton_metal.jit(_tuned), ["x_ptr", "out_ptr", "n"],
                                       configs, ["n"], None, None,
                                       pre_hook=lambda named: user.append(named["BLOCK"]))
    assert with_hook.user_defined_pre_hook and with_hook.pre_hook is not None
    x, out = _arrays(640, seed=2)
    with_hook[lambda m: (triton_metal.cdiv(640, m["BLOCK"]),)](x, out, 640)
    np.testing.assert_allclose(out, x * 3, rtol=1e-6)
    assert sorted(user) == [64, 256]


def test_config_attributes():
    hook = lambda named: None  # noqa: E731
    c = triton_metal.Config({"BLOCK": 32}, num_warps=2, num_stages=4, num_ctas=1,
                            maxnreg=128, pre_hook=hook)
    assert (c.kwargs, c.num_warps, c.num_stages, c.num_ctas, c.maxnreg, c.pre_hook) == (
        {"BLOCK": 32}, 2, 4, 1, 128, hook)
    assert c.all_kwargs() == {"BLOCK": 32, "num_warps": 2, "num_ctas": 1,
                              "num_stages": 4, "maxnreg": 128}
    assert c == triton_metal.Config({"BLOCK": 32}, num_warps=2, num_stages=4,
                                    maxnreg=128, pre_hook=hook)
    assert "BLOCK: 32" in str(c) and "num_warps: 2" in str(c)


def test_heuristics_class_by_its_constructor():
    h = triton_metal.Heuristics(scale, scale.arg_names, {"FACTOR": lambda a: a["n"] // 100})
    assert h.fn is scale and h.arg_names == scale.arg_names
    x, out = _arrays(400)
    h[(4,)](x, out, 400, BLOCK=128)
    np.testing.assert_allclose(out, x * 4, rtol=1e-6)


def test_jit_function_attributes():
    f = triton_metal.jit(_scale_impl, do_not_specialize=["n"], repr=lambda spec: "scaled")
    assert f.fn is _scale_impl and f.__name__ == "_scale_impl"
    assert f.arg_names == ["x_ptr", "out_ptr", "n", "FACTOR", "BLOCK"]
    assert [p.num for p in f.params] == [0, 1, 2, 3, 4]
    assert [p.name for p in f.params] == f.arg_names
    assert [p.is_constexpr for p in f.params] == [False, False, False, True, True]
    assert [p.do_not_specialize for p in f.params] == [False, False, True, False, False]
    assert not any(p.do_not_specialize_on_alignment for p in f.params)
    assert f.params[3].annotation == "constexpr" and f.params[0].annotation == ""
    assert f.params[0].default is f.params[0]._param.empty
    assert f.src.startswith("def _scale_impl(") and f.repr(None) == "scaled"
    assert scale.repr(None).endswith("._scale_impl")
    assert f.__doc__ is None and f.launch_metadata is None
    assert f.constexprs == [3, 4]

    def annotated(a: tl.int32, b: "tl.float16", c: tl.pointer_type(tl.float32), D: tl.constexpr = 4):
        """doc"""
    g = triton_metal.jit(annotated)
    assert [p.annotation for p in g.params] == ["i32", "fp16", "*fp32", "constexpr"]
    assert g.params[3].default == 4 and g.params[3].has_default and g.__doc__ == "doc"


def test_dtype_attributes_inside_a_kernel():
    out = np.zeros(10, np.int32)
    dtype_facts[(1,)](out, np.ones(1, np.float32), DT=tl.int16)
    expect = [32, 23, 127, 16, 1, 1, (2 ** 15 - 1) // 65536, 15 + 7, 1 + 4, 2]
    np.testing.assert_array_equal(out, expect)
    dtype_facts[(1,)](out, np.ones(1, np.float16), DT=tl.uint16)
    expect = [16, 10, 15, 16, 0, 0, (2 ** 16 - 1) // 65536, 15 + 7, 2, 2]
    np.testing.assert_array_equal(out, expect)


def test_names_from_triton_language_standard():
    out = np.full(16, -1, np.int32)
    standard_names[(1,)](out, N=16)
    np.testing.assert_array_equal(out, np.full(16, 4))
    assert callable(zeros_like) and callable(_log2)


def test_hasattr_on_tl_answers_for_real_names_only():
    for name in ("load", "store", "arange", "dot", "zeros_like", "program_id",
                 "float32", "constexpr", "const", "static_range", "sum", "argmax"):
        assert hasattr(tl, name), name
    for name in ("no_such_builtin", "loadd", "torch", "numpy_array"):
        assert not hasattr(tl, name), name
    assert hasattr(tl.math, "exp") and hasattr(tl.math, "fma")
    assert not hasattr(tl.math, "no_such_function")
    assert hasattr(tl.core, "load") and not hasattr(tl.core, "no_such_builtin")
    with pytest.raises(AttributeError):
        tl.no_such_builtin  # noqa: B018
    # The names are the C++ front end's: each compiles in a kernel.
    names = triton_metal._core.builtin_module_names("triton.language")
    assert "load" in names and names == sorted(names)
    assert triton_metal._core.builtin_module_names("no.such.module") == []


# --- what Triton's own tests write in kernels --------------------------------

@triton_metal.jit
def python_numbers_are_tensors(out_ptr, lo, hi):
    acc = 0
    acc = acc.to(tl.int64)  # a number assigned in a kernel is a tensor
    for i in range(lo, hi):
        acc += i
    tl.store(out_ptr, acc)
    one = 1
    tl.store(out_ptr + 1, tl.full((), 7, dtype=one.dtype) + one.dtype.primitive_bitwidth)


def test_numbers_assigned_in_a_kernel_have_tensor_methods():
    out = np.zeros(2, np.int64)
    lo, hi = 2 ** 35, 2 ** 35 + 20
    python_numbers_are_tensors[(1,)](out, lo, hi)
    assert out[0] == sum(range(lo, hi)) and out[1] == 7 + 32


@triton_metal.jit
def item_and_unsplat(x_ptr, EXPLICIT: tl.constexpr):
    first = tl.load(x_ptr + tl.arange(0, 1))  # one element
    cond = first > 42
    if EXPLICIT:
        cond = cond.item()
    if cond:
        tl.store(x_ptr + 1, first.item() * 2)
    tl.store(x_ptr + 2, tl.full((1, 1), 5, tl.int32).item() + tl.full((), 1, tl.int32).item())


@pytest.mark.parametrize("explicit", [False, True])
@pytest.mark.parametrize("value", [41, 43])
def test_item_and_if_on_a_one_element_tensor(explicit, value):
    x = np.array([value, -1, 0], np.int32)
    item_and_unsplat[(1,)](x, EXPLICIT=explicit)
    np.testing.assert_array_equal(x, [value, value * 2 if value > 42 else -1, 6])


@triton_metal.jit
def getattr_with_a_constant_name(x_ptr, y_ptr, out_ptr, OP: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    r = getattr(tl, OP)(x, y)
    if hasattr(tl, "no_such_builtin"):
        r = r * 0
    tl.store(out_ptr + offs, getattr(r, "to")(tl.float32) + getattr(tl, "nothing", 1.5))


@pytest.mark.parametrize("op, ref", [("maximum", np.maximum), ("minimum", np.minimum)])
def test_getattr_on_tl_with_a_constexpr_string(op, ref):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((2, 32)).astype(np.float32)
    out = np.zeros(32, np.float32)
    getattr_with_a_constant_name[(1,)](x, y, out, OP=op, N=32)
    np.testing.assert_array_equal(out, ref(x, y) + 1.5)


@triton_metal.jit
def transposes(x_ptr, out_ptr):
    # tl.trans without dims swaps the last two dimensions (Triton's rule).
    i = tl.arange(0, 2)[:, None, None] * 32 + tl.arange(0, 4)[None, :, None] * 8 + \
        tl.arange(0, 8)[None, None, :]
    x = tl.load(x_ptr + i)
    o = tl.arange(0, 2)[:, None, None] * 32 + tl.arange(0, 8)[None, :, None] * 4 + \
        tl.arange(0, 4)[None, None, :]
    tl.store(out_ptr + o, tl.trans(x))


def test_trans_of_a_3d_tensor_swaps_its_last_two_dimensions():
    x = np.arange(64, dtype=np.float32).reshape(2, 4, 8)
    out = np.zeros((2, 8, 4), np.float32)
    transposes[(1,)](x, out)
    np.testing.assert_array_equal(out, x.transpose(0, 2, 1))


@triton_metal.jit
def reads_const(in_ptr: tl.const, out_ptr, N: tl.constexpr, CACHE: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(in_ptr + offs, cache_modifier=CACHE) + 1,
             cache_modifier=".wb")


@triton_metal.jit
def writes_const(in_ptr: tl.const, N: tl.constexpr):
    tl.store(in_ptr + tl.arange(0, N), 1.0)


@triton_metal.jit
def overflows(out_ptr):
    huge: tl.constexpr = 0xFFFFFFFFFFFFFF
    x = tl.full((), 32, dtype=tl.int32)
    tl.store(out_ptr, x + huge)


@pytest.mark.parametrize("cache", ["", ".ca", ".cg", ".cv"])
def test_const_pointers_cache_modifiers_and_triton_errors(cache):
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    reads_const[(1,)](x, out, N=16, CACHE=cache)
    np.testing.assert_array_equal(out, x + 1)
    with pytest.raises(triton_metal.CompilationError) as e:
        writes_const[(1,)](x, N=16)
    assert "Cannot store to a constant pointer" in e.value.error_message
    with pytest.raises(triton_metal.TritonError, match="out of range"):
        overflows[(1,)](np.zeros(1, np.int32))


def test_set_allocator_is_kept_per_thread():
    from triton_metal.runtime import _allocation
    with pytest.raises(RuntimeError, match="no allocator was set"):
        _allocation.NullAllocator()(16, 16, None)
    import contextvars
    ctx = contextvars.copy_context()
    alloc = lambda size, align, stream: np.zeros(size, np.int8)  # noqa: E731
    ctx.run(triton_metal.set_allocator, alloc)
    assert ctx.run(_allocation._allocator.get) is alloc
    assert _allocation._allocator.get() is not alloc


class Wrapper(triton_metal.KernelInterface):
    """A library's launcher made at module level around a jit function."""

    def __init__(self, fn, factor):
        self.fn, self.factor = fn, factor

    def run(self, *args, grid, warmup, **kwargs):
        return self.fn.run(*args, grid=grid, warmup=warmup, FACTOR=self.factor, **kwargs)


def _wrapped(x_ptr, out_ptr, n, FACTOR: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * FACTOR - 1, mask=mask)


_wrapped = Wrapper(triton_metal.jit(_wrapped), 6)


def test_a_module_level_wrapper_around_a_jit_function():
    x, out = _arrays()
    _wrapped[(3,)](x, out, x.size, BLOCK=128)
    np.testing.assert_allclose(out, x * 6 - 1, rtol=1e-6)


def test_a_kernel_inside_a_function_sees_the_functions_imports():
    from triton_metal.language.standard import _log2 as log2_here

    @triton_metal.jit
    def inner(out_ptr, N: tl.constexpr):
        tl.store(out_ptr + tl.arange(0, N), tl.zeros((N,), tl.int32) + log2_here(N))

    out = np.zeros(8, np.int32)
    inner[(1,)](out, N=8)
    np.testing.assert_array_equal(out, np.full(8, 3))
