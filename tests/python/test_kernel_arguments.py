"""Kernel arguments as Triton takes them: integers of every 64-bit range
(i32, i64, u64; beyond 64 bits an OverflowError), tuples of constants,
@jit(repr=f) naming a compiled kernel from its specialization, a
CompilationError's __cause__, tl.full of a scalar shape. Results are
checked against NumPy and Python integers."""
import numpy as np
import pytest

import triton_metal
import triton_metal.language as tl


@triton_metal.jit
def store_scalar(out_ptr, v):
    tl.store(out_ptr, v)


@pytest.mark.parametrize("value", [2 ** 63, 2 ** 64 - 1, 2 ** 64 - 16, 12345678912345, -2 ** 63, -7])
def test_64_bit_integers_reach_the_kernel_with_every_bit(value):
    dtype = np.uint64 if value >= 2 ** 63 else np.int64
    out = np.zeros(1, dtype)
    store_scalar[(1,)](out, value)
    assert int(out[0]) == value


@triton_metal.jit
def u64_arithmetic(out_ptr, v):
    # A u64 stays unsigned: its shift is logical, its comparison unsigned.
    tl.store(out_ptr, v >> 60)
    tl.store(out_ptr + 1, (v > 5).to(tl.uint64))
    tl.store(out_ptr + 2, v // 3)


def test_a_u64_argument_computes_unsigned():
    v = 2 ** 64 - 2
    out = np.zeros(3, np.uint64)
    u64_arithmetic[(1,)](out, v)
    assert [int(x) for x in out] == [v >> 60, 1, v // 3]


def test_an_integer_beyond_64_bits_is_an_overflow_error():
    with pytest.raises(OverflowError):
        store_scalar[(1,)](np.zeros(1, np.uint64), 2 ** 64)
    with pytest.raises(OverflowError):
        store_scalar[(1,)](np.zeros(1, np.int64), -2 ** 63 - 1)


@triton_metal.jit
def reshape_to(z_ptr, x_ptr, SHAPE: tl.constexpr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    z = tl.reshape(x, SHAPE)
    tl.store(z_ptr + tl.arange(0, SHAPE[0])[:, None] * SHAPE[1] + tl.arange(0, SHAPE[1])[None, :], z * 2)


@pytest.mark.parametrize("shape", [(8, 8), [4, 16], (2, 32)])
def test_a_tuple_of_constants_is_a_constexpr_argument(shape):
    x = np.arange(64, dtype=np.int32)
    z = np.zeros(64, np.int32)
    reshape_to[(1,)](z, x, shape, 64)
    np.testing.assert_array_equal(z, x * 2)


def test_a_tuple_holding_an_array_is_refused_by_name():
    with pytest.raises(TypeError, match="argument 'SHAPE'.*tuple holding an array"):
        reshape_to[(1,)](np.zeros(64, np.int32), np.zeros(64, np.int32),
                         (np.zeros(1, np.float32), 8), 64)


def _name_of(specialization):
    sig = specialization.signature
    ones = [k for k, v in specialization.constants.items() if v == 1]
    return "k_" + "_".join(f"{k}{sig[k]}" for k in sig) + "__" + "_".join(ones)


@triton_metal.jit(repr=_name_of)
def named(value, is_one, x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr, value + is_one + BLOCK)


@pytest.mark.parametrize("value,ty", [(-1, "i32"), (2 ** 31, "i64"), (2 ** 63, "u64")])
def test_repr_names_the_compiled_kernel_from_its_specialization(value, ty):
    x = np.zeros(1, np.float32)
    h = named.warmup(value, 1, x, 4, grid=(1,))
    assert h.name == f"k_value{ty}_is_oneconstexpr_x_ptr*fp32_BLOCKconstexpr__is_one"


@triton_metal.jit
def bad_axis(x_ptr):
    tl.store(x_ptr, tl.program_id(20))


@triton_metal.jit
def failed_static_assert(x_ptr, N: tl.constexpr):
    tl.static_assert(N > 4, "N too small")
    tl.store(x_ptr, N)


@triton_metal.jit
def duplicate_axes(x_ptr):
    t = tl.expand_dims(tl.arange(0, 4), (0, -3))
    tl.store(x_ptr + tl.arange(0, 4)[None, None, :], t)


def test_a_compilation_error_has_the_cause_triton_gives_it():
    with pytest.raises(triton_metal.CompilationError) as e:
        bad_axis[(1,)](np.zeros(1, np.int32))
    assert isinstance(e.value.__cause__, ValueError)
    assert str(e.value.__cause__) == "program_id axis must be 0, 1, or 2 but got 20"
    assert "test_kernel_arguments.py:" in str(e.value)  # the file:line stays
    with pytest.raises(triton_metal.CompilationError) as e:
        duplicate_axes[(1,)](np.zeros(4, np.int32))
    assert str(e.value.__cause__) == "expand_dims received duplicate axes, normalized axes = [0, 0]"
    # Triton raises a failed static_assert itself: no cause.
    with pytest.raises(triton_metal.CompilationError) as e:
        failed_static_assert[(1,)](np.zeros(1, np.int32), 2)
    assert e.value.__cause__ is None and "N too small" in str(e.value)


@triton_metal.jit
def full_scalar(out_ptr, val, dtype: tl.constexpr):
    a = tl.full([], val, dtype)
    tl.static_assert(a.shape == [])
    tl.store(out_ptr + tl.arange(0, 8), a)


@pytest.mark.parametrize("dtype", [tl.uint32, tl.int32, tl.float32, tl.int8])
def test_full_of_a_scalar_shape_with_a_runtime_value(dtype):
    np_type = {tl.uint32: np.uint32, tl.int32: np.int32, tl.float32: np.float32, tl.int8: np.int8}[dtype]
    out = np.zeros(8, np_type)
    full_scalar[(1,)](out, 3, dtype)
    np.testing.assert_array_equal(out, np.full(8, 3, np_type))
