"""fp8 as storage with conversions in software, tl.dot on fp8, 3-D (batched)
tl.dot, tl.dot_scaled (microscaled formats), int8 dots that fit Metal's
threadgroup memory, and kernels launched with num_warps up to 32 (the
register budget of the threadgroup size). References: each fp8 format
decoded from its definition in float64, NumPy matmuls in float64."""
import zlib

import numpy as np
import pytest

import triton_metal as triton
import triton_metal.language as tl

# name, dtype, mantissa bits, bias, non-finite kind (0 IEEE, 1 FN, 2 FNUZ)
FORMATS = [
    ("float8e4nv", tl.float8e4nv, 3, 7, 1),
    ("float8e5", tl.float8e5, 2, 15, 0),
    ("float8e4b8", tl.float8e4b8, 3, 8, 2),
    ("float8e5b16", tl.float8e5b16, 2, 16, 2),
    ("float8e4b15", tl.float8e4b15, 3, 15, 1),
]


def decode(codes, mbits, bias, kind):
    """The value of each fp8 code, from the format's definition."""
    out = np.empty(len(codes), np.float64)
    ebits = 7 - mbits
    for i, c in enumerate(int(c) for c in codes):
        sign = -1.0 if c & 0x80 else 1.0
        e = (c >> mbits) & ((1 << ebits) - 1)
        m = c & ((1 << mbits) - 1)
        if (kind == 2 and c == 0x80) or (kind == 1 and c & 0x7F == 0x7F) or \
                (kind == 0 and e == (1 << ebits) - 1 and m):
            out[i] = np.nan
        elif kind == 0 and e == (1 << ebits) - 1:
            out[i] = sign * np.inf
        elif e == 0:
            out[i] = sign * m * 2.0**(1 - bias - mbits)
        else:
            out[i] = sign * (m + (1 << mbits)) * 2.0**(e - bias - mbits)
    return out


@triton.jit
def upcast_kernel(X, Z, DT: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o).to(DT, bitcast=True)
    tl.store(Z + o, x.to(tl.float32))


@triton.jit
def downcast_kernel(X, Z, DT: tl.constexpr, N: tl.constexpr, RTZ: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    if RTZ:
        y = x.to(DT, fp_downcast_rounding="rtz")
    else:
        y = x.to(DT)
    tl.store(Z + o, y.to(tl.uint8, bitcast=True))


@triton.jit
def abs_neg_kernel(X, A, NEG, DT: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o).to(DT, bitcast=True)
    tl.store(A + o, tl.abs(x).to(tl.uint8, bitcast=True))
    tl.store(NEG + o, (-x).to(tl.uint8, bitcast=True))


CODES = np.arange(256, dtype=np.uint8)


@pytest.mark.parametrize("name, dtype, mbits, bias, kind", FORMATS)
def test_every_code_widens_exactly(name, dtype, mbits, bias, kind):
    z = np.zeros(256, np.float32)
    upcast_kernel[(1, )](CODES, z, dtype, 256)
    ref = decode(CODES, mbits, bias, kind)
    np.testing.assert_array_equal(np.isnan(z), np.isnan(ref))
    finite = ~np.isnan(ref)
    np.testing.assert_array_equal(z[finite], ref[finite])


@pytest.mark.parametrize("name, dtype, mbits, bias, kind", FORMATS)
def test_narrowing_rounds_to_nearest_even_and_saturates(name, dtype, mbits, bias, kind):
    ref = decode(CODES, mbits, bias, kind)
    positive = np.unique(ref[(ref > 0) & np.isfinite(ref)])
    largest = positive[-1]
    # Every value, the midpoints between neighbours (ties: the even code),
    # values just past them, and values past the largest finite one.
    mids = (positive[:-1] + positive[1:]) / 2
    above = np.nextafter(mids.astype(np.float32), np.float32(np.inf)).astype(np.float64)
    x = np.concatenate([positive, mids, above, [largest * 1.5, largest * 1e6], -positive[:40]])
    x = np.resize(x, 512).astype(np.float32)
    out = np.zeros(512, np.uint8)
    downcast_kernel[(1, )](x, out, dtype, 512, False)
    got = decode(out, mbits, bias, kind)
    code_of = {v: c for c, v in zip(CODES, ref) if np.isfinite(v) and not (v == 0 and c & 0x80)}
    for xi, gi in zip(x.astype(np.float64), got):
        a = abs(xi)
        if a >= largest:
            want = largest  # saturates (NVIDIA's cvt.satfinite)
        else:
            hi = positive[np.searchsorted(positive, a)] if a > 0 else 0.0
            lo = positive[np.searchsorted(positive, a) - 1] if a > positive[0] else 0.0
            if a == hi or a == lo:
                want = a
            elif a - lo != hi - a:
                want = lo if a - lo < hi - a else hi
            else:
                want = lo if code_of.get(lo, 0) % 2 == 0 else hi
        assert gi == np.copysign(want, xi) or (want == 0 and gi == 0), (name, xi, gi, want)
    # Toward zero: the largest magnitude not above |x|.
    downcast_kernel[(1, )](x, out, dtype, 512, True)
    got = decode(out, mbits, bias, kind)
    for xi, gi in zip(x.astype(np.float64), got):
        a = min(abs(xi), largest)
        want = positive[positive <= a][-1] if a >= positive[0] else 0.0
        assert abs(gi) == want, (name, xi, gi, want)


@pytest.mark.parametrize("name, dtype, mbits, bias, kind", FORMATS)
def test_nan_and_infinity_narrow_by_the_format(name, dtype, mbits, bias, kind):
    x = np.resize(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32), 32)
    out = np.zeros(32, np.uint8)
    downcast_kernel[(1, )](x, out, dtype, 32, False)
    got = decode(out, mbits, bias, kind)
    assert np.isnan(got[0])
    ref = decode(CODES, mbits, bias, kind)
    largest = np.nanmax(ref[np.isfinite(ref)])
    assert got[1] == (np.inf if kind == 0 else largest)
    assert got[2] == (-np.inf if kind == 0 else -largest)
    assert got[3] == 0 and out[3] == 0
    # -0.0 keeps its sign where the format has one (FNUZ's 0x80 is NaN).
    assert out[4] == (0 if kind == 2 else 0x80)


@pytest.mark.parametrize("name, dtype, mbits, bias, kind", FORMATS)
def test_abs_and_negation_of_fp8(name, dtype, mbits, bias, kind):
    a = np.zeros(256, np.uint8)
    neg = np.zeros(256, np.uint8)
    abs_neg_kernel[(1, )](CODES, a, neg, dtype, 256)
    ref = decode(CODES, mbits, bias, kind)
    ga, gn = decode(a, mbits, bias, kind), decode(neg, mbits, bias, kind)
    finite = ~np.isnan(ref)
    np.testing.assert_array_equal(ga[finite], np.abs(ref[finite]))
    np.testing.assert_array_equal(gn[finite], -ref[finite])
    assert np.isnan(ga[~finite]).all() and np.isnan(gn[~finite]).all()


@triton.jit
def fp8_arith_kernel(X, Y, Z, DT: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o).to(DT, bitcast=True)
    y = tl.load(Y + o).to(DT, bitcast=True)
    # Both fp8 of one format: Triton computes in that format.
    tl.store(Z + o, (x * y).to(tl.uint8, bitcast=True))


def test_arithmetic_on_fp8_rounds_once():
    rs = np.random.RandomState(3)
    ref = decode(CODES, 3, 7, 1)
    ok = np.flatnonzero(np.isfinite(ref) & (np.abs(ref) < 16) & (np.abs(ref) > 1 / 16))
    x = CODES[rs.choice(ok, 256)]
    y = CODES[rs.choice(ok, 256)]
    z = np.zeros(256, np.uint8)
    fp8_arith_kernel[(1, )](x, y, z, tl.float8e4nv, 256)
    product = (ref[x] * ref[y]).astype(np.float32)
    want = np.zeros(256, np.uint8)
    downcast_kernel[(1, )](product, want, tl.float8e4nv, 256, False)
    np.testing.assert_array_equal(z, want)


@triton.jit
def fp8_dot_kernel(A, B, C, DA: tl.constexpr, DB: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                   K: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(A + m[:, None] * K + k[None, :]).to(DA, bitcast=True)
    b = tl.load(B + k[:, None] * N + n[None, :]).to(DB, bitcast=True)
    tl.store(C + m[:, None] * N + n[None, :], tl.dot(a, b))


def finite_codes(rs, shape, mbits, bias, kind, limit):
    ref = decode(CODES, mbits, bias, kind)
    ok = np.flatnonzero(np.isfinite(ref) & (np.abs(ref) <= limit))
    return CODES[rs.choice(ok, shape)], ref


def test_dot_of_two_fp8_formats():
    rs = np.random.RandomState(0)
    a, ra = finite_codes(rs, (32, 64), 2, 15, 0, 8)  # e5m2
    b, rb = finite_codes(rs, (64, 32), 3, 7, 1, 8)  # e4m3
    c = np.zeros((32, 32), np.float32)
    fp8_dot_kernel[(1, )](a, b, c, tl.float8e5, tl.float8e4nv, 32, 32, 64)
    np.testing.assert_allclose(c, ra[a] @ rb[b], rtol=1e-6, atol=1e-5)


# --- tl.dot_scaled ----------------------------------------------------------

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def round_to(x, dtype):
    """float64 -> bf16 or fp16 (to nearest even), as float64."""
    x = np.asarray(x, np.float64)
    if dtype == "fp16":
        return x.astype(np.float16).astype(np.float64)
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)


def operand_values(data, fmt, packed_along):
    """The logical values of a dot_scaled operand (before its scales)."""
    if fmt == "e2m1":
        lo, hi = E2M1[data & 0xF], E2M1[data >> 4]
        out = np.stack([lo, hi], axis=packed_along + 1)
        shape = list(data.shape)
        shape[packed_along] *= 2
        return out.reshape(shape)
    if fmt == "e4m3":
        return decode(data.ravel(), 3, 7, 1).reshape(data.shape)
    if fmt == "e5m2":
        return decode(data.ravel(), 2, 15, 0).reshape(data.shape)
    return data.astype(np.float64)


@triton.jit
def dot_scaled_kernel(A, A_SCALE, B, B_SCALE, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                      FA: tl.constexpr, FB: tl.constexpr, KA: tl.constexpr, NB: tl.constexpr,
                      HAS_A_SCALE: tl.constexpr, HAS_B_SCALE: tl.constexpr):
    # A: [M, KA] (KA = K, or K // 2 for e2m1), B: [K or K // 2, NB]; scales
    # [M, K // 32] and [N, K // 32] (uint8, e8m0).
    KB: tl.constexpr = K // 2 if FB == "e2m1" else K
    a = tl.load(A + tl.arange(0, M)[:, None] * KA + tl.arange(0, KA)[None, :])
    b = tl.load(B + tl.arange(0, KB)[:, None] * NB + tl.arange(0, NB)[None, :])
    sa = None
    sb = None
    if HAS_A_SCALE:
        sa = tl.load(A_SCALE + tl.arange(0, M)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    if HAS_B_SCALE:
        sb = tl.load(B_SCALE + tl.arange(0, N)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    c = tl.dot_scaled(a, sa, FA, b, sb, FB)
    tl.store(C + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


def normal_operand(rs, shape, fmt):
    if fmt == "bf16":
        v = round_to(rs.randn(*shape), "bf16").astype(np.float32)
        return (v.view(np.uint32) >> 16).astype(np.uint16), v.astype(np.float64)
    v = rs.randn(*shape).astype(np.float16)
    return v, v.astype(np.float64)


@pytest.mark.parametrize("mx", ["e2m1", "e4m3", "e5m2"])
@pytest.mark.parametrize("normal", ["bf16", "fp16"])
@pytest.mark.parametrize("scaled_side", ["lhs", "rhs"])
def test_dot_scaled(mx, normal, scaled_side):
    M, N, K = 32, 32, 64
    rs = np.random.RandomState(zlib.crc32(f"{mx} {normal} {scaled_side}".encode()))
    compute = "fp16" if normal == "fp16" else "bf16"
    low, high = (124, 131) if compute == "fp16" else (110, 140)
    if scaled_side == "lhs":
        shape = (M, K // 2) if mx == "e2m1" else (M, K)
        data = rs.randint(0, 256, shape).astype(np.uint8)
        if mx != "e2m1":  # keep to finite codes
            data = finite_codes(rs, shape, *((3, 7, 1) if mx == "e4m3" else (2, 15, 0)), 64)[0]
        scale = rs.randint(low, high + 1, (M, K // 32)).astype(np.uint8)
        b, bv = normal_operand(rs, (K, N), normal)
        av = operand_values(data, mx, 1) * np.repeat(2.0**(scale.astype(np.float64) - 127), 32, axis=1)
        a = data
        fa, fb, ka, nb = mx, normal, shape[1], N
        sa, sb = scale, np.zeros((N, K // 32), np.uint8)
    else:
        shape = (K // 2, N) if mx == "e2m1" else (K, N)
        data = rs.randint(0, 256, shape).astype(np.uint8)
        if mx != "e2m1":
            data = finite_codes(rs, shape, *((3, 7, 1) if mx == "e4m3" else (2, 15, 0)), 64)[0]
        scale = rs.randint(low, high + 1, (N, K // 32)).astype(np.uint8)
        a, av = normal_operand(rs, (M, K), normal)
        bv = operand_values(data, mx, 0) * np.repeat(2.0**(scale.astype(np.float64) - 127), 32, axis=1).T
        b = data
        fa, fb, ka, nb = normal, mx, K, N
        sa, sb = np.zeros((M, K // 32), np.uint8), scale
    # The reference: operands in the compute type (scaled values rounded to
    # it, as the product in that type is), summed in float64.
    want = round_to(av, compute) @ round_to(bv, compute)
    c = np.zeros((M, N), np.float32)
    dot_scaled_kernel[(1, )](a, sa, b, sb, c, M, N, K, fa, fb, ka, nb, scaled_side == "lhs",
                             scaled_side == "rhs")
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_dot_scaled_nan_scale_and_both_scaled():
    M, N, K = 16, 16, 64
    rs = np.random.RandomState(5)
    a = rs.randint(0, 256, (M, K // 2)).astype(np.uint8)
    b = rs.randint(0, 256, (K // 2, N)).astype(np.uint8)
    sa = rs.randint(120, 135, (M, K // 32)).astype(np.uint8)
    sb = rs.randint(120, 135, (N, K // 32)).astype(np.uint8)
    sa[3, 1] = 0xFF  # NaN: row 3 of the product is NaN
    av = operand_values(a, "e2m1", 1) * np.repeat(2.0**(sa.astype(np.float64) - 127), 32, axis=1)
    bv = operand_values(b, "e2m1", 0) * np.repeat(2.0**(sb.astype(np.float64) - 127), 32, axis=1).T
    c = np.zeros((M, N), np.float32)
    dot_scaled_kernel[(1, )](a, sa, b, sb, c, M, N, K, "e2m1", "e2m1", K // 2, N, True, True)
    assert np.isnan(c[3]).all()
    rows = [r for r in range(M) if r != 3]
    with np.errstate(over="ignore", invalid="ignore"):  # row 3's 2^128
        want = round_to(av, "bf16") @ round_to(bv, "bf16")
    np.testing.assert_allclose(c[rows], want[rows], rtol=1e-5, atol=1e-5 * np.abs(want[rows]).max())


def test_dot_scaled_errors_name_the_rule():
    a = np.zeros((16, 32), np.uint8)
    b = np.zeros((32, 16), np.uint16)
    c = np.zeros((16, 16), np.float32)
    with pytest.raises(triton.CompilationError, match="e2m1 format must be packed as uint8|uint8"):
        dot_scaled_kernel[(1, )](b.astype(np.float16), a, b, a, c, 16, 16, 64, "e2m1", "bf16", 32, 16,
                                 True, False)


# --- 3-D dot, int8 dots, num_warps up to 32 ----------------------------------


@triton.jit
def dot3d_kernel(A, B, C, BATCH: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                 OUT: tl.constexpr):
    b = tl.arange(0, BATCH)[:, None, None]
    m = tl.arange(0, M)[None, :, None]
    n = tl.arange(0, N)[None, None, :]
    k_row = tl.arange(0, K)[None, None, :]
    k_col = tl.arange(0, K)[None, :, None]
    a = tl.load(A + b * M * K + m * K + k_row)
    bb = tl.load(B + b * K * N + k_col * N + n)
    tl.store(C + b * M * N + m * N + n, tl.dot(a, bb, out_dtype=OUT))


@pytest.mark.parametrize("dtype, out, batch, warps", [
    ("float32", tl.float32, 2, 4),
    ("float16", tl.float32, 4, 2),
    ("float16", tl.float16, 2, 1),
    ("int8", tl.int32, 2, 4),
    ("float32", tl.float32, 8, 8),  # staged a batch at a time
])
def test_batched_dot(dtype, out, batch, warps):
    M, N, K = 32, 16, 64
    rs = np.random.RandomState(1)
    if dtype == "int8":
        a = rs.randint(-128, 128, (batch, M, K)).astype(np.int8)
        b = rs.randint(-128, 128, (batch, K, N)).astype(np.int8)
        c = np.zeros((batch, M, N), np.int32)
    else:
        a = rs.randn(batch, M, K).astype(dtype)
        b = rs.randn(batch, K, N).astype(dtype)
        c = np.zeros((batch, M, N), np.float32 if out == tl.float32 else np.float16)
    dot3d_kernel[(1, )](a, b, c, batch, M, N, K, out, num_warps=warps)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    if dtype == "int8":
        np.testing.assert_array_equal(c, want.astype(np.int32))
    else:
        tol = 1e-2 if out == tl.float16 else 1e-5
        np.testing.assert_allclose(c.astype(np.float64), want, rtol=tol, atol=tol * np.abs(want).max())


def test_batched_fp16_dot_rounds_its_sum_once():
    # An fp16 accumulator: the float sum of products, rounded once to fp16
    # (as a matrix unit rounds per instruction), not after every product:
    # within one fp16 ulp of the exact product, near zero too.
    batch, M, N, K = 2, 32, 16, 64
    rs = np.random.RandomState(7)
    a = rs.randn(batch, M, K).astype(np.float16)
    b = rs.randn(batch, K, N).astype(np.float16)
    c = np.zeros((batch, M, N), np.float16)
    dot3d_kernel[(1, )](a, b, c, batch, M, N, K, tl.float16, num_warps=2)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    ulp = np.spacing(np.abs(want).astype(np.float16)).astype(np.float64)
    assert np.all(np.abs(c.astype(np.float64) - want) <= ulp)


@triton.jit
def int8_dot_kernel(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(A + m[:, None] * K + k[None, :])
    b = tl.load(B + k[:, None] * N + n[None, :])
    tl.store(C + m[:, None] * N + n[None, :], tl.dot(a, b))


def test_int8_dot_stages_bytes_in_threadgroup_memory():
    # A and B as int32 needed 48 KB, more than Metal's 32 KB; as bytes, 12.
    M, N, K = 128, 256, 32
    rs = np.random.RandomState(2)
    a = rs.randint(-128, 128, (M, K)).astype(np.int8)
    b = rs.randint(-128, 128, (K, N)).astype(np.int8)
    c = np.zeros((M, N), np.int32)
    int8_dot_kernel[(1, )](a, b, c, M, N, K, num_warps=8)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize("warps", [16, 32])
def test_num_warps_up_to_32_fit_by_register_budget(warps):
    # 64x64x64 fp32: ~135 registers a thread unbudgeted, which allows 384
    # threads; num_warps=16/32 must launch 512/1024, and spill to fit.
    rs = np.random.RandomState(4)
    a = rs.randn(64, 64).astype(np.float32)
    b = rs.randn(64, 64).astype(np.float32)
    c = np.zeros((64, 64), np.float32)
    compiled = int8_dot_kernel[(1, )](a, b, c, 64, 64, 64, num_warps=warps)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)
    assert compiled.metadata.num_warps == warps


@triton.jit
def dot_softmax_kernel(X, Y, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    z = tl.dot(tl.load(X + m[:, None] * K + k[None, :]), tl.load(Y + k[:, None] * N + n[None, :]))
    # The dot's tile layout to the reduction's and back: a 64 KB fp32 tensor
    # moves through threadgroup memory in pieces of 16 KB.
    z = z - tl.max(z, 1)[:, None]
    num = tl.exp(z)
    tl.store(Z + m[:, None] * N + n[None, :], num / tl.sum(num, 1)[:, None])


@pytest.mark.parametrize("warps", [4, 8])
def test_a_tensor_larger_than_threadgroup_memory_converts_in_pieces(warps):
    M, N, K = 128, 128, 64
    rs = np.random.RandomState(5)
    x = (rs.randn(M, K) * 0.3).astype(np.float16)
    y = (rs.randn(K, N) * 0.3).astype(np.float16)
    z = np.zeros((M, N), np.float32)
    dot_softmax_kernel[(1, )](x, y, z, M, N, K, num_warps=warps)
    logits = x.astype(np.float64) @ y.astype(np.float64)
    e = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(z, e / e.sum(1, keepdims=True), rtol=2e-3, atol=1e-6)


@triton.jit
def broadcast_product_kernel(Z, X, Y, K: tl.constexpr, N: tl.constexpr, BM: tl.constexpr,
                             BN: tl.constexpr, BK: tl.constexpr):
    # A matmul as a broadcast product reduced along K: the [BM, BK, 1] and
    # [1, BK, BN] operands are moved into the product's layout, not the
    # [BM, BK, BN] product (512 KB at 128x32x32 float32).
    m = tl.arange(0, BM)[:, None]
    n = tl.arange(0, BN)[None, :]
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(X + m * K + k0 + tl.arange(0, BK)[None, :])
        y = tl.load(Y + (k0 + tl.arange(0, BK)[:, None]) * N + n)
        acc += tl.sum(tl.expand_dims(x, 2) * tl.expand_dims(y, 0), axis=1)
    tl.store(Z + m * N + n, acc)


@pytest.mark.parametrize("BM, BN, BK", [(128, 32, 32), (32, 32, 32), (16, 64, 8)])
def test_a_broadcast_product_moves_its_operands_not_the_product(BM, BN, BK):
    K, N = 64, BN
    rs = np.random.RandomState(9)
    x = rs.randn(BM, K).astype(np.float32)
    y = rs.randn(K, N).astype(np.float32)
    z = np.zeros((BM, N), np.float32)
    k = broadcast_product_kernel.warmup(z, x, y, K, N, BM, BN, BK, grid=(1, ))
    assert k.metadata.shared <= 32768
    broadcast_product_kernel[(1, )](z, x, y, K, N, BM, BN, BK)
    np.testing.assert_allclose(z, x.astype(np.float64) @ y.astype(np.float64), rtol=1e-4, atol=1e-4)
