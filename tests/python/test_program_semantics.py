"""Triton semantics the lowering must keep: a program's loads see memory as
it was before its later stores (whichever thread stores), i1 arithmetic is
arithmetic mod 2, tl.join of scalars, and programs of scalars alone.
Checked against NumPy and hand values."""
import numpy as np
import pytest

import triton_metal
import triton_metal.language as tl
from triton_metal.language.core import constexpr_type


@triton_metal.jit
def increment_scalar(Out, Other):
    # Every thread loads Out; one thread stores it: the loads must not see
    # the store, whichever SIMD group runs first.
    o = tl.load(Out)
    if tl.program_id(0) == 0:
        o = tl.load(Other + o) + 1
    tl.store(Out, o)


@triton_metal.jit
def replicated_store(X, Y, N: tl.constexpr):
    # A row broadcast over columns is held by many threads; the reduction's
    # result is stored by one of them after all have loaded X.
    offs = tl.arange(0, N)
    x = tl.load(X + offs)
    tl.store(X + offs, x * 0)
    s = tl.load(Y)
    tl.store(Y, s + tl.sum(x, axis=0))


@triton_metal.jit
def loop_increment(Out, n):
    for _ in range(n):
        tl.store(Out, tl.load(Out) + 1)


def test_a_scalar_load_is_not_overtaken_by_the_store():
    for warps in (1, 2, 4, 8, 32):
        out = np.zeros(1, np.int32)
        other = np.array([41, 7], np.int32)
        increment_scalar[(1,)](out, other, num_warps=warps)
        assert out[0] == 42, warps


def test_store_after_loads_of_other_threads():
    x = np.arange(256, dtype=np.float32)
    y = np.array([5.0], np.float32)
    replicated_store[(1,)](x, y, N=256, num_warps=8)
    assert y[0] == 5.0 + np.arange(256).sum()
    assert not x.any()


def test_read_modify_write_in_a_loop():
    out = np.zeros(1, np.int32)
    loop_increment[(1,)](out, 37, num_warps=4)
    assert out[0] == 37


@triton_metal.jit
def bool_arithmetic(X, Y, Sum, Add, Mul, Smax, Smin, Slt, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(X + offs) != 0
    y = tl.load(Y + offs) != 0
    tl.store(Sum, tl.sum(x, dtype=tl.int1).to(tl.int32))
    tl.store(Add + offs, (x + y).to(tl.int32))
    tl.store(Mul + offs, (x * y).to(tl.int32))
    # Triton's int1 is unsigned: max is or, min is and, false < true.
    tl.store(Smax + offs, tl.maximum(x, y).to(tl.int32))
    tl.store(Smin + offs, tl.minimum(x, y).to(tl.int32))
    tl.store(Slt + offs, (x < y).to(tl.int32))


@triton_metal.jit
def bool_sum_kernel(Out, init, in_dtype: tl.constexpr, out_dtype: tl.constexpr):
    x = tl.full((32, 32), init, dtype=in_dtype)
    tl.store(Out, tl.sum(x, dtype=out_dtype).to(tl.int32))


def test_sum_of_booleans_in_int1_is_mod_2():
    out = np.zeros(1, np.int32)
    bool_sum_kernel[(1,)](out, 1, in_dtype=tl.int1, out_dtype=None)
    assert out[0] == 1024
    bool_sum_kernel[(1,)](out, 1, in_dtype=tl.int1, out_dtype=tl.int1)
    assert out[0] == 0
    bool_sum_kernel[(1,)](out, 1, in_dtype=tl.int8, out_dtype=tl.int8)
    assert out[0] == 0  # 1024 wraps to 0 in 8 bits


def test_bool_arithmetic_against_numpy():
    n = 64
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2, n).astype(np.int32)
    y = rng.integers(0, 2, n).astype(np.int32)
    outs = [np.zeros(1, np.int32)] + [np.zeros(n, np.int32) for _ in range(5)]
    bool_arithmetic[(1,)](x, y, *outs, N=n)
    total, add, mul, smax, smin, slt = outs
    assert total[0] == x.sum() % 2
    np.testing.assert_array_equal(add, x ^ y)
    np.testing.assert_array_equal(mul, x & y)
    np.testing.assert_array_equal(smax, x | y)
    np.testing.assert_array_equal(smin, x & y)
    np.testing.assert_array_equal(slt, (x == 0) & (y == 1))


@triton_metal.jit
def join_scalars(X, Y, Z):
    z = tl.join(tl.load(X), tl.load(Y))
    tl.static_assert(z.shape == [2])
    tl.store(Z + tl.arange(0, 2), z)


@triton_metal.jit
def interleave_scalars(a, b, Z):
    z = tl.interleave(a, b)
    tl.static_assert(z.shape == [2])
    tl.store(Z + tl.arange(0, 2), z)


def test_join_and_interleave_of_scalars():
    z = np.zeros(2, np.float32)
    join_scalars[(1,)](np.array([42], np.int32), np.array([100], np.int32), z)
    np.testing.assert_array_equal(z, [42, 100])
    z = np.zeros(2, np.float32)
    interleave_scalars[(1,)](10, 20, z)
    np.testing.assert_array_equal(z, [10, 20])


@triton_metal.jit
def double_in_place(p):
    pid = tl.program_id(0)
    tl.store(p + pid, tl.load(p + pid) * 2)


def test_program_of_scalars_with_many_warps():
    # A program of scalars runs on one SIMD group whatever num_warps says;
    # the result is the same.
    x = np.arange(4096, dtype=np.float32)
    double_in_place[(4096,)](x, num_warps=32)
    np.testing.assert_array_equal(x, 2 * np.arange(4096, dtype=np.float32))


@triton_metal.jit
def sum_of_range(Out, lo, hi, iv: tl.constexpr):
    acc = 0
    acc = acc.to(tl.int64)  # a Python int has the methods of its tensor
    for i in range(lo, hi, iv):
        acc += i
    tl.store(Out, acc)


def test_methods_of_a_python_number_and_a_64_bit_loop():
    for lo, hi, iv in [(2**35, 2**35 + 20, 3), (15, -16, -2), (22, 18, -1)]:
        out = np.zeros(1, np.int64)
        sum_of_range[(1,)](out, lo, hi, iv)
        assert out[0] == sum(range(lo, hi, iv)), (lo, hi, iv)


@triton_metal.jit
def void_ternary(Ret, XTrue, XFalse):
    pid = tl.program_id(0)
    tl.store(Ret + pid, tl.load(XTrue)) if pid % 2 == 0 else tl.store(Ret + pid, tl.load(XFalse))


def test_ternary_of_two_stores():
    ret = np.zeros(4, np.float32)
    void_ternary[(4,)](ret, np.array([1.5], np.float32), np.array([-2.0], np.float32))
    np.testing.assert_array_equal(ret, [1.5, -2.0, 1.5, -2.0])


@triton_metal.jit
def subscripts(X, Z, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    t = x[None, None:]  # `None:` is `:`
    tl.static_assert(t.shape == [1, N])
    p = Z[None, None, :]  # Triton does not check the rank: a 1x1 pointer
    tl.static_assert(p.shape == [1, 1])
    tl.store(p + tl.arange(0, N)[:, None] * 0, tl.sum(t, axis=1)[:, None])


def test_subscripts_as_triton():
    z = np.zeros(1, np.float32)
    subscripts[(1,)](np.arange(8, dtype=np.float32), z, N=8)
    assert z[0] == 28


@triton_metal.jit
def split_to_scalars(X, Z1, Z2):
    z1, z2 = tl.split(tl.load(X + tl.arange(0, 2)))
    tl.static_assert(z1.shape == [])
    tl.store(Z1, z1)
    tl.store(Z2, z2)


def test_split_of_two_gives_scalars():
    z1, z2 = np.zeros(1, np.int32), np.zeros(1, np.int32)
    split_to_scalars[(1,)](np.array([7, -3], np.int32), z1, z2)
    assert (z1[0], z2[0]) == (7, -3)


@triton_metal.jit
def float_atomic_min_max(X, Max, Min, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(X + offs)
    tl.atomic_max(Max + offs % 4, x)
    tl.atomic_min(Min + offs % 4, x)


def test_float_atomic_min_max_with_signed_zeros():
    x = np.array([-0.0, 0.0, -1.5, 2.0, -0.0, -0.0, -3.0, -0.0] * 4, np.float32)
    big = np.finfo(np.float32).max
    mx = np.full(4, -big, np.float32)
    mn = np.full(4, big, np.float32)
    float_atomic_min_max[(1,)](x, mx, mn, N=32)
    cols = x.reshape(-1, 4)
    np.testing.assert_array_equal(mx, cols.max(axis=0))
    np.testing.assert_array_equal(mn, cols.min(axis=0))
    # -0.0 alone: both results are -0.0, sign included.
    mx, mn = np.full(4, -big, np.float32), np.full(4, big, np.float32)
    float_atomic_min_max[(1,)](np.full(32, -0.0, np.float32), mx, mn, N=32)
    assert np.signbit(mx).all() and not mx.any()
    assert np.signbit(mn).all() and not mn.any()


@triton_metal.jit
def nested_early_returns(c_ptr, out_ptr, MODE: tl.constexpr):
    # Returns under non-constant conditions inside a constant `if` and
    # inside another non-constant `if`; what follows each `if` runs only on
    # the paths that fall through to it.
    c = tl.load(c_ptr + tl.arange(0, 1))
    c0 = tl.sum(c & 1)
    c1 = tl.sum(c & 2)
    if MODE == "nested":
        if c0:
            if c1:
                tl.store(out_ptr, 11)
                return
            tl.store(out_ptr + 1, 12)
        else:
            tl.store(out_ptr + 1, 13)
            if c1:
                return
        tl.store(out_ptr + 2, 14)
    tl.store(out_ptr + 3, 15)


@pytest.mark.parametrize("bits", [0, 1, 2, 3])
def test_returns_under_runtime_conditions_inside_other_ifs(bits):
    out = np.zeros(4, np.int32)
    nested_early_returns[(1,)](np.array([bits], np.int32), out, "nested")
    c0, c1 = bits & 1, bits & 2
    want = [0, 0, 0, 0]
    if c0 and c1:
        want[0] = 11
    else:
        want[1] = 12 if c0 else 13
        if c0 or not c1:
            want[2], want[3] = 14, 15
    assert list(out) == want


@triton_metal.jit
def return_in_static_loop(c_ptr, out_ptr):
    for i in tl.static_range(2):
        if tl.load(c_ptr + i):
            return
    tl.store(out_ptr, 1)


def test_a_return_inside_a_loop_is_refused_with_a_message():
    with pytest.raises(triton_metal.CompilationError, match="outside loops"):
        return_in_static_loop[(1,)](np.zeros(2, np.int32), np.zeros(1, np.int32))


@triton_metal.jit
def triangle_loops(ub, out_i, out_j):
    # An inner loop whose bounds follow the outer counter: LLVM's loop
    # strength reduction counts such a loop in an i3 (a width no register
    # has); the kernel must compile all the same.
    k = 0
    for i in tl.range(0, ub, flatten=True):
        lo = i * 2
        hi = lo + i + 1
        tl.assume(hi > lo)
        for j in tl.range(lo, hi):
            tl.store(out_i + k, i)
            tl.store(out_j + k, j)
            k += 1


def test_loops_with_dependent_bounds_compile_and_run():
    ub = 10
    out_i = np.full(128, -1, np.int32)
    out_j = np.full(128, -1, np.int32)
    triangle_loops[(1,)](ub, out_i, out_j)
    want = [(i, j) for i in range(ub) for j in range(2 * i, 3 * i + 1)]
    assert list(zip(out_i[:len(want)], out_j[:len(want)])) == want
    assert np.all(out_i[len(want):] == -1)


@triton_metal.jit
def clamp_if_int32_pointer(x):
    # `and` stops at the first false operand: the later ones would fail to
    # compile for None or a number.
    if (x is not None) and hasattr(x, "dtype") and isinstance(x.dtype, tl.pointer_type) and (
            x.dtype.element_ty == tl.int32) and (tl.load(x) > 42):
        tl.store(x, 42)


def test_and_short_circuits_on_what_each_argument_is():
    clamp_if_int32_pointer[(1,)](None)
    clamp_if_int32_pointer[(1,)](7)
    for value, dtype, want in [(100000, np.int32, 42), (40, np.int32, 40), (100000, np.int64, 100000),
                               (84.0, np.float32, 84.0)]:
        x = np.array([value], dtype)
        clamp_if_int32_pointer[(1,)](x)
        assert x[0] == want, (value, dtype)


@triton_metal.jit
def constexpr_types(out_ptr, C: tl.constexpr, DTYPE: tl.constexpr):
    # A constexpr's type is constexpr_type(its value); the same number bound
    # by a plain assignment is a tensor of its dtype.
    local: tl.constexpr = C
    tl.static_assert(C.type == constexpr_type(C))
    tl.static_assert(local.type == constexpr_type(C))
    tl.static_assert(local.type != constexpr_type(C + 1))
    plain = C
    tl.static_assert(plain.type == DTYPE)
    tl.store(out_ptr, plain)


@pytest.mark.parametrize("value, dtype, np_type", [(10, tl.int32, np.int32), (2.5, tl.float32, np.float32)])
def test_the_type_of_a_constexpr_and_of_a_plain_number(value, dtype, np_type):
    out = np.zeros(1, np_type)
    constexpr_types[(1,)](out, value, dtype)
    assert out[0] == value


@triton_metal.jit
def sign_of_difference(x, y):
    if x < y:
        return -1
    elif x == y:
        return 0
    else:
        return 1


@triton_metal.jit
def compare_numbers(X, Y, Z):
    tl.store(Z, sign_of_difference(tl.load(X), tl.load(Y)))


def test_each_branch_returns_its_own_constant():
    for a, b in [(1, 2), (2, 2), (3, 2)]:
        z = np.zeros(1, np.int32)
        compare_numbers[(1,)](np.array([a], np.int32), np.array([b], np.int32), z)
        assert z[0] == (a > b) - (a < b)


@triton_metal.jit
def collatz_steps(x):
    # A loop whose trip count is the element's own: per element, not per
    # block.
    n = 0
    while x != 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        n += 1
    return n


@triton_metal.jit
def divmod_pair(a0, a1, b0, b1):
    return a0 // b0, a1 // b1, a0 % b0, a1 % b1


@triton_metal.jit
def map_kernel(X, Y, STEPS, Q, R, SIGN, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.load(Y + offs)
    tl.store(STEPS + offs, tl.map_elementwise(collatz_steps, x))
    q, r = tl.map_elementwise(divmod_pair, x, y, pack=2)
    tl.store(Q + offs, q)
    tl.store(R + offs, r)
    # A scalar broadcast against the block.
    tl.store(SIGN + offs, tl.map_elementwise(sign_of_difference, x, 50))


@pytest.mark.parametrize("block, warps", [(256, 4), (64, 1), (32, 2)])
def test_map_elementwise_runs_the_function_per_element(block, warps):
    rs = np.random.RandomState(3)
    x = rs.randint(1, 100, block).astype(np.int32)
    y = rs.randint(1, 9, block).astype(np.int32)
    steps, q, r, sign = (np.zeros(block, np.int32) for _ in range(4))
    map_kernel[(1,)](x, y, steps, q, r, sign, block, num_warps=warps)

    def collatz(v):
        n = 0
        while v != 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            n += 1
        return n

    np.testing.assert_array_equal(steps, [collatz(int(v)) for v in x])
    np.testing.assert_array_equal(q, x // y)
    np.testing.assert_array_equal(r, x % y)
    np.testing.assert_array_equal(sign, np.sign(x - 50))
