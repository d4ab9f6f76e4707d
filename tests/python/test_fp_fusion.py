"""Triton's enable_fp_fusion: by default a * b + c is one fma (one
rounding), as Triton's compiler makes it; enable_fp_fusion=False (or
TRITON_DEFAULT_FP_FUSION=0) rounds the product and the sum each. The
references are float64 products rounded once, and float32 NumPy."""
import numpy as np

import triton_metal as triton
import triton_metal.language as tl
from triton_metal import knobs


@triton.jit
def multiply_add(A, B, C, Z, N: tl.constexpr):
    o = tl.arange(0, N)
    a = tl.load(A + o)
    b = tl.load(B + o)
    c = tl.load(C + o)
    tl.store(Z + o, a * b + c)


def operands():
    rs = np.random.RandomState(0)
    a, b, c = (rs.randn(1024).astype(np.float32) for _ in range(3))
    fused = (a.astype(np.float64) * b + c).astype(np.float32)
    unfused = a * b + c  # float32: rounds twice
    assert not np.array_equal(fused, unfused)
    return a, b, c, fused, unfused


def test_fused_by_default_and_unfused_when_asked():
    a, b, c, fused, unfused = operands()
    z = np.zeros(1024, np.float32)
    multiply_add[(1, )](a, b, c, z, 1024)
    np.testing.assert_array_equal(z, fused)
    multiply_add[(1, )](a, b, c, z, 1024, enable_fp_fusion=False)
    np.testing.assert_array_equal(z, unfused)
    multiply_add[(1, )](a, b, c, z, 1024, enable_fp_fusion=True)
    np.testing.assert_array_equal(z, fused)


def test_knob_sets_the_default(monkeypatch):
    a, b, c, fused, unfused = operands()
    z = np.zeros(1024, np.float32)
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "0")
    assert knobs.language.default_fp_fusion is False
    multiply_add[(1, )](a, b, c, z, 1024)
    np.testing.assert_array_equal(z, unfused)
