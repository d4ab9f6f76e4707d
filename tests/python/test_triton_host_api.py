"""The host-side names of Triton that its own test suite and libraries use:
Triton's error hierarchy, dtypes' attributes, str_to_ty, reinterpret and
TensorWrapper, JITFunction.src and _unsafe_update_src, knobs and their
scopes, triton._internal_testing, and the pytest plugin's skip list.
Results are checked against NumPy."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kernels
import triton_metal
import triton_metal.language as tl
from triton_metal import _internal_testing as it
from triton_metal import knobs

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="python3-torch is not installed")


def test_errors_are_in_tritons_hierarchy(tmp_path):
    assert issubclass(triton_metal.CompilationError, triton_metal.TritonError)
    assert issubclass(triton_metal.OutOfResources, triton_metal.TritonError)
    from triton_metal.runtime.errors import InterpreterError
    assert issubclass(InterpreterError, triton_metal.TritonError)
    e = triton_metal.OutOfResources(65536, 32768, "shared memory")
    assert (e.required, e.limit, e.name) == (65536, 32768, "shared memory")
    assert "shared memory" in str(e) and "65536" in str(e)
    # A kernel that does not compile is a TritonError.
    src = tmp_path / "bad.py"
    src.write_text(textwrap.dedent('''
        import triton_metal
        import triton_metal.language as tl

        @triton_metal.jit
        def bad(x_ptr):
            tl.store(x_ptr, undefined_name)
        '''))
    namespace = {"__file__": str(src)}
    exec(compile(src.read_text(), str(src), "exec"), namespace)
    with pytest.raises(triton_metal.TritonError) as e:
        namespace["bad"][(1,)](np.zeros(1, np.float32))
    assert "bad.py:7" in str(e.value)


def test_dtypes_answer_as_tritons_do():
    assert tl.dtype.SINT_TYPES == ["int8", "int16", "int32", "int64"]
    assert "int1" in tl.dtype.UINT_TYPES and "bf16" in tl.dtype.FP_TYPES
    assert (tl.float32.fp_mantissa_width, tl.float32.exponent_bias) == (23, 127)
    assert (tl.float16.fp_mantissa_width, tl.bfloat16.fp_mantissa_width) == (10, 7)
    assert tl.float32.primitive_bitwidth == 32 and tl.int16.int_bitwidth == 16
    assert tl.int8.get_int_max_value() == 127 and tl.uint8.get_int_max_value() == 255
    assert tl.int64.get_int_min_value() == -2 ** 63
    assert tl.float16.is_fp16() and not tl.float16.is_bf16() and tl.uint32.is_uint32()
    assert tl.int1.is_bool() and tl.int1.is_int_unsigned() and not tl.int8.is_int_unsigned()
    assert tl.bfloat16.is_floating() and tl.float8e5.is_fp8() and tl.int32.is_int()
    assert tl.int1.kind() == tl.dtype.KIND.BOOLEAN
    assert tl.float32.kind() == tl.dtype.KIND.FLOATING
    with pytest.raises(ValueError):
        tl.dtype("float128")


def test_str_to_ty_and_canonical_names():
    assert tl.str_to_ty("fp16") == tl.float16
    assert tl.str_to_ty("i32") == tl.int32 and tl.str_to_ty("u1") == tl.int1
    p = tl.str_to_ty("*kfp32")
    assert p.is_ptr() and p.is_const() and p.element_ty == tl.float32
    for name in it.dtypes_with_bfloat16 + ["bool"]:
        ty = it.str_to_triton_dtype(name)
        assert isinstance(ty, tl.dtype), name
    assert it.str_to_triton_dtype("float32") == tl.float32
    assert it.str_to_triton_dtype("uint16") == tl.uint16


@needs_torch
def test_reinterpret_passes_a_tensor_as_another_type_of_its_width():
    # int8 data read as uint8: the kernel's >> is the logical shift.
    x = torch.tensor([-128, -1, 1, 127] * 4, dtype=torch.int8)
    out = torch.zeros(16, dtype=torch.int8)
    kernels.copy_kernel[(1,)](triton_metal.reinterpret(x, tl.uint8),
                              triton_metal.reinterpret(out, tl.uint8), 16, BLOCK=16)
    assert torch.equal(out, x)
    wrapped = it.to_triton(np.array([200, 3, 65535, 7], np.uint16), "cpu")
    assert isinstance(wrapped, triton_metal.TensorWrapper)
    np.testing.assert_array_equal(it.to_numpy(wrapped), [200, 3, 65535, 7])
    assert triton_metal.reinterpret(wrapped, torch.int16) is wrapped.base
    with pytest.raises(TypeError, match="not as wide"):
        kernels.copy_kernel[(1,)](triton_metal.reinterpret(x, tl.float32), out, 4, BLOCK=4)


def test_src_and_a_patched_kernel(tmp_path):
    # As Triton's tests patch a kernel's text before compiling it.
    src = tmp_path / "templates.py"
    src.write_text(textwrap.dedent('''
        import triton_metal
        import triton_metal.language as tl


        def make():
            @triton_metal.jit
            def kernel(x_ptr, out_ptr, N: tl.constexpr):
                offs = tl.arange(0, N)
                x = tl.load(x_ptr + offs)
                tl.store(out_ptr + offs, GENERATE_TEST_HERE)
            return kernel
        '''))
    namespace = {"__file__": str(src)}
    exec(compile(src.read_text(), str(src), "exec"), namespace)
    template = namespace["make"]()
    patched = triton_metal.JITFunction(template.fn)
    assert patched.src.startswith("def kernel(x_ptr, out_ptr, N: tl.constexpr):")
    patched._unsafe_update_src(patched.src.replace("GENERATE_TEST_HERE", "x * x + 1.0"))
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    patched[(1,)](x, out, N=8)
    np.testing.assert_array_equal(out, x * x + 1.0)
    # A second patch compiles again.
    patched._unsafe_update_src(template.src.replace("GENERATE_TEST_HERE", "x - 2.0"))
    patched[(1,)](x, out, N=8)
    np.testing.assert_array_equal(out, x - 2.0)


def test_knobs_follow_the_environment_and_scopes_restore_them(monkeypatch):
    monkeypatch.delenv("TRITON_DEFAULT_FP_FUSION", raising=False)
    assert knobs.language.default_fp_fusion is True
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "0")
    assert knobs.language.default_fp_fusion is False
    with knobs.cache.scope():
        knobs.cache.dir = "/tmp/somewhere"
        assert os.environ["TRITON_METAL_CACHE_DIR"] == "/tmp/somewhere"
        assert knobs.cache.dir == "/tmp/somewhere"
    assert os.environ["TRITON_METAL_CACHE_DIR"] != "/tmp/somewhere"
    fresh, restore = it._fresh_knobs_impl()
    k = fresh()
    assert k.language.default_fp_fusion is True  # the variable is cleared
    k.runtime.override_arch = "sm90"
    restore()
    assert "TRITON_OVERRIDE_ARCH" not in os.environ
    assert knobs.language.default_fp_fusion is False


def test_internal_testing_says_this_is_metal():
    assert it.is_metal() and not it.is_cuda() and not it.is_hip() and not it.is_interpreter()
    assert not it.is_hopper() and not it.supports_tma()
    x = it.numpy_random((4, 8), "int16")
    assert x.dtype == np.int16 and x.shape == (4, 8) and not (x == 0).any()
    b = it.numpy_random(64, "bfloat16")
    assert not (b.view(np.uint32) & 0xFFFF).any()
    np.testing.assert_array_equal(it.numpy_random(5, "float32"), it.numpy_random(5, "float32"))


def test_the_pytest_plugin_runs_a_triton_test_file_with_its_skip_list(tmp_path):
    (tmp_path / "test_user.py").write_text(textwrap.dedent('''
        import numpy as np
        import pytest
        import triton
        import triton.language as tl


        @triton.jit
        def kernel(X, Y, N: tl.constexpr):
            offs = tl.arange(0, N)
            tl.store(Y + offs, tl.load(X + offs) * 2)


        @pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
        def test_double(dtype):
            x = np.arange(16).astype(dtype)
            y = np.zeros_like(x)
            kernel[(1,)](x, y, N=16)
            np.testing.assert_array_equal(y, x * 2)


        def test_makes_doubles():
            x = np.arange(16.0)  # float64, though the id does not say so
            kernel[(1,)](x, x, N=16)


        def test_fails():
            assert False, "a real failure stays one"
        '''))
    (tmp_path / "mine.txt").write_text("test_user.py::test_double[int32]  not today\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "triton_metal.pytest_plugin",
                        "-p", "no:cacheprovider", "-rs", "--triton-metal-skips",
                        str(tmp_path / "mine.txt"), "test_user.py"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 1 passed, 3 skipped" in r.stdout, r.stdout
    assert "a real failure stays one" in r.stdout
    assert "Apple GPUs have no float64" in r.stdout and "not today" in r.stdout
    assert "the test makes float64 data" in r.stdout
