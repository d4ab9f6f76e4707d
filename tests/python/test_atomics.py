"""Triton's atomics on triton_metal: tl.atomic_add/max/min/and/or/xor/xchg/
cas on int32, uint32, int64, uint64, float32, float16 and bfloat16 (what
Triton's front end allows of each), under every `sem`, with masked lanes,
several lanes on one address and on the two halves of one 32-bit word,
returned old values, float max/min's order of -0.0, +0.0 and NaN, and a
spin lock (atomic_cas, plain loads and stores, atomic_xchg) over many
threadgroups run on several host threads. Results are checked against
NumPy."""
import zlib

import numpy as np
import pytest

import triton_metal
import triton_metal.language as tl

SEMS = ["relaxed", "acquire", "release", "acq_rel"]
INTS = ["int32", "uint32", "int64", "uint64"]
FLOATS = ["float32", "float16", "bfloat16"]


def np_type(dtype):
    """The NumPy type that holds `dtype` (bfloat16: its bits)."""
    return np.uint16 if dtype == "bfloat16" else getattr(np, dtype)


def to_bf16_bits(x):
    """float32 values that bfloat16 holds exactly, as bfloat16 bits."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    assert np.all(bits & 0xFFFF == 0), "not exact in bfloat16"
    return (bits >> 16).astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def device_array(values, dtype):
    """A kernel argument of `dtype` holding `values` (exact in it), and a
    function that reads it back as float64 or int."""
    if dtype == "bfloat16":
        arr = to_bf16_bits(values)
        return triton_metal.reinterpret(arr, tl.bfloat16), arr, lambda: from_bf16_bits(arr)
    arr = np.array(values, dtype=np_type(dtype))
    return arr, arr, lambda: arr.copy()


@triton_metal.jit
def rmw_kernel(z_ptr, x_ptr, old_ptr, n, K: tl.constexpr, OP: tl.constexpr, SEM: tl.constexpr,
               BLOCK: tl.constexpr):
    # Element i updates z[i % K] with x[i] where i < n and i % 3 != 1.
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = (i < n) & (i % 3 != 1)
    x = tl.load(x_ptr + i, mask=i < n)
    ptrs = z_ptr + i % K
    old = getattr(tl, "atomic_" + OP)(ptrs, x, mask=mask, sem=SEM)
    tl.store(old_ptr + i, old, mask=mask)


def float_key(v):
    """Triton's order of floats for atomic max/min (no NaN here): -0.0 is
    below +0.0."""
    return (float(v), 0 if np.signbit(v) else 1)


def reference(op, dtype, z0, x, n, K):
    """Final z and, where each address is touched once, the old values."""
    z = [v for v in z0]
    touched = [i for i in range(n) if i % 3 != 1]
    for i in touched:
        k = i % K
        a, b = z[k], x[i]
        if op == "add":
            z[k] = a + b
        elif op == "max":
            z[k] = max(a, b, key=float_key) if dtype in FLOATS else max(a, b)
        elif op == "min":
            z[k] = min(a, b, key=float_key) if dtype in FLOATS else min(a, b)
        elif op == "and":
            z[k] = a & b
        elif op == "or":
            z[k] = a | b
        elif op == "xor":
            z[k] = a ^ b
        else:
            z[k] = b
    return z, touched


def values(dtype, count, rng):
    """Values whose sums are exact in `dtype`, in any order."""
    if dtype in FLOATS:
        # Up to 9 of these meet on one address: bf16's 8 significant bits
        # hold every partial sum of halves below 64, fp16's 11 bits every
        # sum of quarters below 256.
        if dtype == "bfloat16":
            pool = [0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 0.5, 7.0, -0.5, 4.0]
        else:
            pool = [0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 0.5, 7.0, -0.25, 16.0]
        return [pool[rng.integers(len(pool))] for _ in range(count)]
    info = np.iinfo(getattr(np, dtype))
    big = [info.min, info.max, info.min + 1, info.max - 1]
    small = list(range(-5, 6)) if info.min < 0 else list(range(0, 11))
    out = []
    for _ in range(count):
        out.append(int(big[rng.integers(4)]) if rng.integers(4) == 0 else small[rng.integers(len(small))])
    return out


def wrap(v, dtype):
    """An integer wrapped to `dtype`, as the device's arithmetic wraps."""
    return int(np.array(v % (1 << 64), dtype=np.uint64).astype(getattr(np, dtype)))


OPS = [(d, op) for d in INTS for op in ["add", "max", "min", "and", "or", "xor", "xchg"]]
OPS += [(d, op) for d in FLOATS for op in ["add"]]
OPS += [("float32", op) for op in ["max", "min", "xchg"]]


@pytest.mark.parametrize("sem", SEMS)
@pytest.mark.parametrize("dtype,op", OPS)
@pytest.mark.parametrize("K", [64, 5])
def test_rmw(dtype, op, sem, K):
    # K=64: each address once per lane (old values are checked); K=5: many
    # lanes of every SIMD group on each address, and (16-bit) on both halves
    # of one 32-bit word.
    n, block = 60, 64
    rng = np.random.default_rng(zlib.crc32(repr((dtype, op, sem, K)).encode()))
    x_vals = values(dtype, block, rng)
    z_vals = values(dtype, K, rng)
    if op in ("and", "or", "xor") or dtype in INTS:
        x_vals = [wrap(v, dtype) for v in x_vals]
        z_vals = [wrap(v, dtype) for v in z_vals]
    if op == "add" and dtype in INTS and K != 64:
        x_vals = [v if abs(v) < 100 else 3 for v in x_vals]
    x_arg, _, _ = device_array(x_vals, dtype)
    z_arg, _, z_read = device_array(z_vals, dtype)
    old_arg, _, old_read = device_array([0] * block, dtype)
    rmw_kernel[(1,)](z_arg, x_arg, old_arg, n, K=K, OP=op, SEM=sem, BLOCK=block)
    want, touched = reference(op, dtype, z_vals, x_vals, n, K)
    if dtype in INTS:
        want = [wrap(v, dtype) for v in want]
        np.testing.assert_array_equal(z_read(), np.array(want, dtype=np_type(dtype)))
    else:
        got = z_read().astype(np.float64)
        np.testing.assert_array_equal(got, np.array(want, np.float64))
        # -0.0 and +0.0 are told apart.
        np.testing.assert_array_equal(np.signbit(got), np.signbit(np.array(want, np.float64)))
    if K == 64:
        old = old_read()
        for i in touched:
            assert old[i] == np.array(z_vals[i], dtype=old.dtype), (i, old[i], z_vals[i])


@triton_metal.jit
def cas_kernel(z_ptr, cmp_ptr, val_ptr, old_ptr, n, K: tl.constexpr, SEM: tl.constexpr,
               BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    cmp = tl.load(cmp_ptr + i % K)
    val = tl.load(val_ptr + i)
    old = tl.atomic_cas(z_ptr + i % K, cmp, val, sem=SEM)
    tl.store(old_ptr + i, old, mask=m)


@pytest.mark.parametrize("sem", SEMS)
@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_cas_each_element(dtype, sem):
    # Even elements hold the expected value and are swapped, odd ones not;
    # 16-bit neighbours share a 32-bit word.
    n = 64
    z_vals = [float(i % 4) for i in range(n)] if dtype in FLOATS else [i % 4 for i in range(n)]
    cmp_vals = [z_vals[i] if i % 2 == 0 else z_vals[i] + 1 for i in range(n)]
    val_vals = [10.0 + i for i in range(n)] if dtype in FLOATS else [10 + i for i in range(n)]
    z_arg, _, z_read = device_array(z_vals, dtype)
    c_arg, _, _ = device_array(cmp_vals, dtype)
    v_arg, _, _ = device_array(val_vals, dtype)
    o_arg, _, o_read = device_array([0] * n, dtype)
    cas_kernel[(1,)](z_arg, c_arg, v_arg, o_arg, n, K=n, SEM=sem, BLOCK=n)
    want = [val_vals[i] if i % 2 == 0 else z_vals[i] for i in range(n)]
    np.testing.assert_array_equal(z_read(), np.array(want).astype(z_read().dtype))
    np.testing.assert_array_equal(o_read(), np.array(z_vals).astype(o_read().dtype))


@pytest.mark.parametrize("dtype", ["int32", "int64", "float16", "bfloat16"])
def test_cas_one_winner_per_address(dtype):
    # 64 lanes race for 4 addresses (16-bit: two words, two halves each):
    # each address is swapped by exactly one lane, whose old value is the
    # expected one.
    n, K = 64, 4
    z_arg, _, z_read = device_array([0] * K, dtype)
    c_arg, _, _ = device_array([0] * K, dtype)
    v_arg, _, _ = device_array(list(range(1, n + 1)), dtype)
    o_arg, _, o_read = device_array([-1] * n if dtype in FLOATS else [7] * n, dtype)
    cas_kernel[(1,)](z_arg, c_arg, v_arg, o_arg, n, K=K, SEM="acq_rel", BLOCK=n)
    z, old = z_read(), o_read()
    for k in range(K):
        lanes = [i for i in range(n) if i % K == k]
        winners = [i for i in lanes if old[i] == 0]
        assert len(winners) == 1, (k, old[lanes])
        assert z[k] == winners[0] + 1
        # The others saw the winner's value.
        assert all(old[i] == z[k] for i in lanes if i != winners[0])


@triton_metal.jit
def minmax_kernel(x_ptr, max_ptr, min_ptr):
    i = tl.program_id(0)
    x = tl.load(x_ptr + i)
    tl.atomic_max(max_ptr, x)
    tl.atomic_min(min_ptr, x)


def test_float_max_min_order_of_zeros_and_nan():
    # Triton's order: -0.0 < +0.0; a +NaN operand wins max and loses min.
    cases = [
        ([-0.0], -3.4e38, 3.4e38, -0.0, -0.0),
        ([-0.0, 0.0], -1.0, 1.0, 0.0, -0.0),
        ([0.0, -0.0], -1.0, 1.0, 0.0, -0.0),
        ([-2.0, -0.5], -np.inf, np.inf, -0.5, -2.0),
        ([1.0, np.nan, 3.0], -np.inf, np.inf, np.nan, 1.0),
    ]
    for xs, max0, min0, want_max, want_min in cases:
        x = np.array(xs, np.float32)
        mx = np.array([max0], np.float32)
        mn = np.array([min0], np.float32)
        minmax_kernel[(len(xs),)](x, mx, mn)
        for got, want in ((mx[0], want_max), (mn[0], want_min)):
            if np.isnan(want):
                assert np.isnan(got), (xs, got)
            else:
                assert got == want and np.signbit(got) == np.signbit(want), (xs, got, want)


@triton_metal.jit
def scalar_add_kernel(x_ptr, z_ptr, old_ptr):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid)
    old = tl.atomic_add(z_ptr, x)
    tl.store(old_ptr + pid, old)


@pytest.mark.parametrize("dtype", ["int32", "uint64", "int64", "float32", "float16", "bfloat16"])
def test_scalar_atomic_from_every_program(dtype):
    # As test_atomic_rmw: program i adds 2**i to one scalar; the old values
    # are the partial sums in some order.
    n = 5
    x_arg, _, _ = device_array([2.0 ** i if dtype in FLOATS else 2 ** i for i in range(n)], dtype)
    z_arg, _, z_read = device_array([0] * 1, dtype)
    o_arg, _, o_read = device_array([0] * n, dtype)
    scalar_add_kernel[(n,)](x_arg, z_arg, o_arg)
    assert z_read()[0] == 2 ** n - 1
    old = sorted(float(v) for v in o_read())
    assert old[0] == 0 and len(set(old)) == n


@triton_metal.jit
def serialized_add(data, lock, SEM: tl.constexpr):
    # test_core's spin lock: one program at a time in the critical section.
    ptrs = data + tl.arange(0, 128)
    while tl.atomic_cas(lock, 0, 1, SEM) == 1:
        pass
    tl.store(ptrs, tl.load(ptrs) + 1.0)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0, sem=SEM)


@pytest.mark.parametrize("sem", ["acquire", "release", "acq_rel", "relaxed"])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_spin_lock_over_many_threadgroups(dtype, sem):
    # 2000 threadgroups of 128 threads on every host core take the lock in
    # turn; an update lost to another host thread would show as a count
    # below 2000. (Every atomic is sequentially consistent in the emulator,
    # so even `relaxed` keeps the lock.) Five runs, as a lost update showed
    # in some runs only.
    for _ in range(5):
        lock = np.zeros(1, np_type(dtype))
        data = np.zeros(128, np.float32)
        serialized_add[(2000,)](data, lock, SEM=sem)
        np.testing.assert_array_equal(data, np.full(128, 2000.0, np.float32))
        assert lock[0] == 0


@triton_metal.jit
def histogram_kernel(x_ptr, hist_ptr, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m, other=0)
    tl.atomic_add(hist_ptr + x % BINS, tl.full((BLOCK,), 1, hist_ptr.dtype.element_ty), mask=m)


@pytest.mark.parametrize("dtype", ["int32", "uint64", "float16", "bfloat16"])
def test_histogram_from_many_threadgroups(dtype):
    # Every threadgroup adds to the same few bins (16-bit: neighbouring
    # halves of one word, the last one half of the buffer's last word) from
    # several host threads. Counts stay below 256, exact in bfloat16.
    n, bins = 1500, 7
    x = np.random.default_rng(3).integers(0, 1000, n).astype(np.int32)
    hist_arg, _, hist_read = device_array([0] * bins, dtype)
    histogram_kernel[(triton_metal.cdiv(n, 16),)](x, hist_arg, n, BINS=bins, BLOCK=16)
    want = np.bincount(x % bins, minlength=bins)
    assert want.max() < 256
    np.testing.assert_array_equal(hist_read().astype(np.int64), want)


@triton_metal.jit
def int64_wide_kernel(z_ptr, x_ptr, OP: tl.constexpr):
    i = tl.arange(0, 32)
    x = tl.load(x_ptr + i)
    if OP == "add":
        tl.atomic_add(z_ptr + i % 2, x)
    elif OP == "max":
        tl.atomic_max(z_ptr + i % 2, x)
    else:
        tl.atomic_min(z_ptr + i % 2, x)


@pytest.mark.parametrize("op", ["add", "max", "min"])
@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_64_bit_values_use_the_high_half(dtype, op):
    # Values that differ above bit 32 only, and carries across it.
    base = [(k << 33) + (0xFFFFFFFF if k % 2 else 1) for k in range(32)]
    if dtype == "int64":
        base = [v if k % 3 else -v for k, v in enumerate(base)]
    x = np.array(base, dtype=getattr(np, dtype))
    z0 = [0, 0] if op == "add" else [int(x[0]), int(x[1])]
    z = np.array(z0, dtype=getattr(np, dtype))
    int64_wide_kernel[(1,)](z, x, OP=op)
    for k in range(2):
        lanes = [int(v) for v in x[k::2]]
        if op == "add":
            want = wrap(sum(lanes), dtype)
        elif op == "max":
            want = max(lanes)
        else:
            want = min(lanes)
        assert int(z[k]) == want, (k, int(z[k]), want)
