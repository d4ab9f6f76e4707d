# The parts of triton.language that Triton writes in the Triton language
# itself (its standard.py and random.py), written anew for mtlemu's front
# end, which compiles this file like a user's and finds these functions as
# tl.sum, tl.argmax, tl.cdiv, tl.sort, tl.rand ... Names starting with an
# underscore are private to this file. Ops these functions create take the
# location of the user's call.
import triton
import triton.language as tl

# Functions that are also tensor methods (x.sum(axis=1)).
_TENSOR_METHODS = ("sum", "max", "min", "argmax", "argmin", "xor_sum",
                   "reduce_or", "cumsum", "cumprod", "sort", "flip", "ravel",
                   "sigmoid", "softmax")


@triton.jit
def cdiv(x, div):
    return (x + div - 1) // div


@triton.jit
def zeros_like(input):
    return tl.zeros(input.shape, input.dtype)


@triton.jit
def full_like(input, value):
    return tl.full(input.shape, value, input.dtype)


@triton.jit
def ravel(x, can_reorder=False):
    return tl.reshape(x, (x.numel,), can_reorder=can_reorder)


@triton.jit
def sigmoid(x):
    return 1 / (1 + tl.exp(-x))


@triton.jit
def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    if dim is None:
        d: tl.constexpr = 0
    else:
        d: tl.constexpr = dim
    shifted = x - max(x, d, keep_dims=keep_dims)
    e = tl.exp(shifted)
    return tl.fdiv(e, sum(e, d, keep_dims=keep_dims), ieee_rounding)


@triton.jit
def swizzle2d(i, j, size_i, size_j, size_g):
    # Row-major index of (i, j), regrouped into column-major groups of
    # size_g rows (the last group may be shorter).
    linear = i * size_j + j
    group_span = size_g * size_j
    group = linear // group_span
    first_row = group * size_g
    rows = tl.minimum(size_i - first_row, size_g)
    within = linear % group_span
    return first_row + within % rows, within // rows


@triton.jit
def interleave(a, b):
    pairs = tl.join(a, b)
    if len(pairs.shape) == 1:
        return pairs
    return tl.reshape(pairs, pairs.shape[:-2] + (2 * pairs.shape[-2],))


# --- reductions ------------------------------------------------------------

@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _multiply(a, b):
    return a * b


@triton.jit
def _bit_xor(a, b):
    return a ^ b


@triton.jit
def _bit_or(a, b):
    return a | b


@triton.jit
def _larger(a, b):
    return tl.maximum(a, b)


@triton.jit
def _smaller(a, b):
    return tl.minimum(a, b)


@triton.jit
def _widen_small_ints(input, dtype):
    # Sums of 8- and 16-bit integers accumulate in 32 bits of the same
    # signedness unless a dtype is asked for.
    if dtype is not None:
        return input.to(dtype)
    if input.dtype.is_int():
        if input.dtype.int_bitwidth < 32:
            if input.dtype.is_int_signed():
                return input.to(tl.int32)
            return input.to(tl.uint32)
    return input


@triton.jit
def _no_bf16(x):
    # Apple GPUs, like NVIDIA's, compare bf16 through fp32.
    if x.dtype.is_bf16():
        return x.to(tl.float32)
    return x


@triton.jit
def sum(input, axis=None, keep_dims=False, dtype=None):
    input = _widen_small_ints(input, dtype)
    return tl.reduce(input, axis, _add, keep_dims=keep_dims)


@triton.jit
def xor_sum(input, axis=None, keep_dims=False):
    tl.static_assert(input.dtype.is_int(), "xor_sum only supported for integers")
    return tl.reduce(input, axis, _bit_xor, keep_dims=keep_dims)


@triton.jit
def reduce_or(input, axis=None, keep_dims=False):
    tl.static_assert(input.dtype.is_int(), "reduce_or only supported for integers")
    return tl.reduce(input, axis, _bit_or, keep_dims=keep_dims)


@triton.jit
def _pick_larger(v1, i1, v2, i2):
    # The larger value; on a tie, the smaller index.
    take_first = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(take_first, v1, v2), tl.where(take_first, i1, i2)


@triton.jit
def _pick_larger_any(v1, i1, v2, i2):
    take_first = v1 > v2
    return tl.where(take_first, v1, v2), tl.where(take_first, i1, i2)


@triton.jit
def _pick_smaller(v1, i1, v2, i2):
    take_first = (v1 < v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(take_first, v1, v2), tl.where(take_first, i1, i2)


@triton.jit
def _pick_smaller_any(v1, i1, v2, i2):
    take_first = v1 < v2
    return tl.where(take_first, v1, v2), tl.where(take_first, i1, i2)


@triton.jit
def _value_and_index(input, axis, combine, keep_dims):
    if axis is None:
        flat = tl.reshape(input, (input.numel,))
        return _value_and_index(flat, 0, combine, keep_dims)
    count: tl.constexpr = input.shape[axis]
    index = tl.arange(0, count)
    if len(input.shape) > 1:
        others = ()
        for d in tl.static_range(len(input.shape)):
            if d != axis:
                others = others + (d,)
        index = tl.broadcast_to(tl.expand_dims(index, others), input.shape)
    return tl.reduce((input, index), axis, combine, keep_dims=keep_dims)


@triton.jit
def _widen_for_compare(input):
    input = _no_bf16(input)
    if input.dtype.primitive_bitwidth < 32:
        if input.dtype.is_floating():
            return input.to(tl.float32)
        return input.to(tl.int32)
    return input


@triton.jit
def max(input, axis=None, return_indices=False,
        return_indices_tie_break_left=True, keep_dims=False):
    input = _no_bf16(input)
    if return_indices:
        if return_indices_tie_break_left:
            return _value_and_index(input, axis, _pick_larger, keep_dims)
        return _value_and_index(input, axis, _pick_larger_any, keep_dims)
    return tl.reduce(_widen_for_compare(input), axis, _larger, keep_dims=keep_dims)


@triton.jit
def min(input, axis=None, return_indices=False,
        return_indices_tie_break_left=True, keep_dims=False):
    input = _no_bf16(input)
    if return_indices:
        if return_indices_tie_break_left:
            return _value_and_index(input, axis, _pick_smaller, keep_dims)
        return _value_and_index(input, axis, _pick_smaller_any, keep_dims)
    return tl.reduce(_widen_for_compare(input), axis, _smaller, keep_dims=keep_dims)


@triton.jit
def argmax(input, axis, tie_break_left=True, keep_dims=False):
    value, index = max(input, axis, return_indices=True,
                       return_indices_tie_break_left=tie_break_left,
                       keep_dims=keep_dims)
    return index


@triton.jit
def argmin(input, axis, tie_break_left=True, keep_dims=False):
    value, index = min(input, axis, return_indices=True,
                       return_indices_tie_break_left=tie_break_left,
                       keep_dims=keep_dims)
    return index


# --- scans -----------------------------------------------------------------

@triton.jit
def cumsum(input, axis=0, reverse=False, dtype=None):
    input = _widen_small_ints(_no_bf16(input), dtype)
    return tl.associative_scan(input, axis, _add, reverse)


@triton.jit
def cumprod(input, axis=0, reverse=False):
    input = _no_bf16(input)
    return tl.associative_scan(input, axis, _multiply, reverse)


@triton.jit
def _first(a, b):
    return a


@triton.jit
def _item(input):
    """The element of a one-element tensor, as a scalar (Triton's unsplat:
    `tensor.item()`, and `if` on a one-element tensor)."""
    if len(input.shape) == 0:
        return input
    tl.static_assert(input.numel == 1, "item(): can only unsplat single-element tensors")
    return tl.reduce(tl.reshape(input, (1,)), 0, _first)


# --- permutations ----------------------------------------------------------

@triton.jit
def _log2(n):
    bits = 0
    while_n = n
    for _ in tl.static_range(32):
        if while_n > 1:
            while_n = while_n // 2
            bits = bits + 1
    return bits


@triton.jit
def _as_int(x):
    return x.to(tl.get_int_dtype(x.dtype.primitive_bitwidth, True), bitcast=True)


@triton.jit
def _exchange(bits, axis, step):
    # The element at index i ^ step along `axis` (step a power of two):
    # split the axis into (.., 2, step) and xor each pair with its xor-sum.
    size: tl.constexpr = bits.shape[axis]
    split = bits.shape[:axis] + (size // (2 * step), 2, step) + bits.shape[axis + 1:]
    pairs = tl.reshape(bits, split)
    swapped = pairs ^ xor_sum(pairs, axis + 1, True)
    return tl.reshape(swapped, bits.shape)


@triton.jit
def flip(x, dim=None):
    if dim is None:
        axis: tl.constexpr = len(x.shape) - 1
    elif dim < 0:
        axis: tl.constexpr = dim + len(x.shape)
    else:
        axis: tl.constexpr = dim
    size: tl.constexpr = x.shape[axis]
    bits = _as_int(x)
    # Reversing 2^k elements swaps the halves of every block, at every scale.
    step = 1
    for _ in tl.static_range(_log2(size)):
        bits = _exchange(bits, axis, step)
        step = step * 2
    return bits.to(x.dtype, bitcast=True)


@triton.jit
def sort(x, dim=None, descending=False):
    last: tl.constexpr = len(x.shape) - 1
    if dim is None:
        axis: tl.constexpr = last
    elif dim < 0:
        axis: tl.constexpr = dim + len(x.shape)
    else:
        axis: tl.constexpr = dim
    tl.static_assert(axis == last, "only minor dimension is currently supported")
    n: tl.constexpr = x.shape[last]
    k: tl.constexpr = _log2(n)
    index = tl.arange(0, n)
    bits = _as_int(x)
    # A bitonic sorting network: merges of growing runs, each a cascade of
    # compare-exchanges between elements `step` apart.
    run = 2
    for stage in tl.static_range(1, k + 1):
        step = run // 2
        for _ in tl.static_range(stage):
            other_bits = _exchange(bits, last, step)
            mine = bits.to(x.dtype, bitcast=True)
            other = other_bits.to(x.dtype, bitcast=True)
            is_low = (index & step) == 0
            if stage == k:
                ascending = index == index if not descending else index != index
            else:
                ascending = (index & run) == 0
            keep_smaller = is_low == ascending
            take_mine = tl.where(keep_smaller, mine <= other, mine >= other)
            bits = tl.where(take_mine, bits, other_bits)
            step = step // 2
        run = run * 2
    return bits.to(x.dtype, bitcast=True)


# --- microscaled matrix products (tl.dot_scaled) ---------------------------
# Apple GPUs have no fp4/fp8 matrix units: as Triton does on GPUs without
# them, each operand is upcast to bf16 (fp16 when an operand is fp16), its
# block scales applied, and the product is an ordinary tl.dot accumulating
# in fp32.

@triton.jit
def _e2m1_to(nibble, dtype: tl.constexpr):
    # An e2m1 code (S.EE.M in the low 4 bits): 0, 0.5, 1, 1.5, 2, 3, 4, 6.
    code = (nibble & 0x7).to(tl.uint32)
    e = code >> 1
    m = code & 1
    bits = tl.where(e == 0, m * 0x3F000000, ((e + 126) << 23) | (m << 22))
    bits = bits | ((nibble & 0x8).to(tl.uint32) << 28)
    return bits.to(tl.float32, bitcast=True).to(dtype)


@triton.jit
def _unpack_e2m1(v, dtype: tl.constexpr, along_last: tl.constexpr):
    # Two e2m1 values a byte, the first in the low bits, packed along the
    # last dimension (along_last) or the one before it.
    tl.static_assert(v.dtype == tl.uint8,
                     "e2m1 format must be packed as uint8")
    pairs = tl.join(_e2m1_to(v & 0xF, dtype), _e2m1_to(v >> 4, dtype))
    rank: tl.constexpr = len(v.shape)
    if along_last:
        return tl.reshape(pairs, v.shape[:-1] + (2 * v.shape[-1],))
    if rank == 2:
        pairs = tl.permute(pairs, (0, 2, 1))
    else:
        pairs = tl.permute(pairs, (0, 1, 3, 2))
    return tl.reshape(pairs, v.shape[:-2] + (2 * v.shape[-2], v.shape[-1]))


@triton.jit
def _scale_to(scale, dtype: tl.constexpr):
    # A block scale as `dtype`: e8m0 (uint8, 2^(s - 127)) or float8e4nv.
    if scale.dtype == tl.uint8:
        if dtype == tl.bfloat16:
            return (scale.to(tl.uint16) << 7).to(tl.bfloat16, bitcast=True)
        return (scale.to(tl.uint32) << 23).to(tl.float32,
                                               bitcast=True).to(dtype)
    tl.static_assert(scale.dtype == tl.float8e4nv,
                     "a block scale is e8m0 (uint8) or float8e4nv")
    return scale.to(dtype)


@triton.jit
def _as_format(v, fmt_dtype: tl.constexpr, bits_dtype: tl.constexpr):
    # An operand as its format's dtype: itself, or its bits reinterpreted.
    if v.dtype != fmt_dtype:
        tl.static_assert(v.dtype == bits_dtype,
                         "a dot_scaled operand is of its format's dtype or "
                         "the unsigned integer of its width")
        v = v.to(fmt_dtype, bitcast=True)
    return v


@triton.jit
def _spread(t, group: tl.constexpr, is_lhs: tl.constexpr):
    # Per-block values [rows or columns, K // group] (or with a batch
    # dimension first) repeated over their blocks, in the operand's shape:
    # [.., M, K] for the lhs, [.., K, N] for the rhs.
    rank: tl.constexpr = len(t.shape)
    t = tl.broadcast_to(tl.expand_dims(t, rank), t.shape + (group,))
    t = tl.reshape(t, t.shape[:-2] + (t.shape[-2] * group,))
    if is_lhs:
        return t
    if rank == 2:
        return tl.permute(t, (1, 0))
    return tl.permute(t, (0, 2, 1))


@triton.jit
def _mx_operand(v, scale, fmt: tl.constexpr, dtype: tl.constexpr,
                is_lhs: tl.constexpr, k_pack: tl.constexpr):
    # Operand `v` in format `fmt` as a `dtype` tensor of its logical shape,
    # its scales (None, or [rows or columns, K // group]) applied.
    tl.static_assert(k_pack or fmt == "e2m1",
                     "only mxfp4 inputs can be packed along a dimension "
                     "different than K")
    if fmt == "e2m1":
        x = _unpack_e2m1(v, dtype, is_lhs == k_pack)
    elif fmt == "e4m3":
        x = _as_format(v, tl.float8e4nv, tl.uint8).to(dtype)
    elif fmt == "e5m2":
        x = _as_format(v, tl.float8e5, tl.uint8).to(dtype)
    elif fmt == "bf16":
        x = _as_format(v, tl.bfloat16, tl.uint16).to(dtype)
    else:
        tl.static_assert(fmt == "fp16",
                         "formats are e2m1, e4m3, e5m2, bf16 and fp16")
        x = _as_format(v, tl.float16, tl.uint16).to(dtype)
    if scale is not None:
        k: tl.constexpr = x.shape[-1] if is_lhs else x.shape[-2]
        group: tl.constexpr = k // scale.shape[-1]
        tl.static_assert(group * scale.shape[-1] == k,
                         "a scale's last dimension must divide K")
        x = x * _spread(_scale_to(scale, dtype), group, is_lhs)
        if scale.dtype == tl.uint8:
            # An e8m0 scale of 0xFF is NaN.
            x = tl.where(_spread(scale == 0xFF, group, is_lhs), float("nan"),
                         x)
    return x


@triton.jit
def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format,
               acc=None, fast_math=False, lhs_k_pack=True, rhs_k_pack=True,
               out_dtype=tl.float32):
    tl.static_assert(out_dtype == tl.float32,
                     "Only float32 is supported for out_dtype at the moment")
    tl.static_assert(len(lhs.shape) == len(rhs.shape),
                     "Both inputs must be either 2D or 3D")
    tl.static_assert(len(lhs.shape) == 2 or len(lhs.shape) == 3,
                     "Both inputs must be either 2D or 3D")
    if lhs_format == "fp16" or rhs_format == "fp16":
        dtype: tl.constexpr = tl.float16
    else:
        dtype: tl.constexpr = tl.bfloat16
    a = _mx_operand(lhs, lhs_scale, lhs_format, dtype, True, lhs_k_pack)
    b = _mx_operand(rhs, rhs_scale, rhs_format, dtype, False, rhs_k_pack)
    tl.static_assert(a.shape[-1] == b.shape[-2],
                     "Reduction dimension should pack the same number of "
                     "elements")
    return tl.dot(a, b, acc, out_dtype=tl.float32)


# --- random numbers: Philox 4x32 (Salmon et al., SC'11), as Triton draws them
# from a seed and per-element offsets ------------------------------------------

N_ROUNDS_DEFAULT = 10


@triton.jit
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds=N_ROUNDS_DEFAULT):
    if c0.dtype == tl.uint32:
        mul_a: tl.constexpr = 0xD2511F53
        mul_b: tl.constexpr = 0xCD9E8D57
        weyl_a: tl.constexpr = 0x9E3779B9
        weyl_b: tl.constexpr = 0xBB67AE85
    else:
        tl.static_assert(c0.dtype == tl.uint64, "dtype not supported in philox_impl")
        mul_a: tl.constexpr = 0xD2E7470EE14C6C93
        mul_b: tl.constexpr = 0xCA5A826395121157
        weyl_a: tl.constexpr = 0x9E3779B97F4A7C15
        weyl_b: tl.constexpr = 0xBB67AE8584CAA73B
    for _ in tl.static_range(n_rounds):
        hi_a = tl.umulhi(mul_a, c0)
        hi_b = tl.umulhi(mul_b, c2)
        lo_a = mul_a * c0
        lo_b = mul_b * c2
        c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
        k0 = k0 + weyl_a
        k1 = k1 + weyl_b
    return c0, c1, c2, c3


@triton.jit
def philox(seed, c0, c1, c2, c3, n_rounds=N_ROUNDS_DEFAULT):
    seed = tl.to_tensor(seed)
    tl.static_assert(seed.dtype.is_int())
    seed = seed.to(tl.uint64)
    c0 = tl.to_tensor(c0)
    c1 = tl.to_tensor(c1)
    c2 = tl.to_tensor(c2)
    c3 = tl.to_tensor(c3)
    if c0.dtype.primitive_bitwidth == 32:
        word = tl.uint32
        key_hi = ((seed >> 32) & 0xFFFFFFFF).to(tl.uint32)
        key_lo = (seed & 0xFFFFFFFF).to(tl.uint32)
    else:
        tl.static_assert(c0.dtype.primitive_bitwidth == 64, "bitwidth not supported in philox")
        word = tl.uint64
        key_hi = tl.full((1,), 0, dtype=tl.uint64)
        key_lo = seed
    c0 = c0.to(word, bitcast=True)
    c1 = c1.to(word, bitcast=True)
    c2 = c2.to(word, bitcast=True)
    c3 = c3.to(word, bitcast=True)
    return philox_impl(c0, c1, c2, c3, key_lo, key_hi, n_rounds)


@triton.jit
def randint4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    zero = offset * 0
    return philox(seed, offset, zero, zero, zero, n_rounds)


@triton.jit
def randint(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    first, _, _, _ = randint4x(seed, offset, n_rounds)
    return first


@triton.jit
def uint_to_uniform_float(x):
    # A uniform float in [0, 1): the bits as a signed integer folded onto
    # [0, 2^(n-1)), times the largest scale that keeps the result below 1.
    if x.dtype == tl.uint32 or x.dtype == tl.int32:
        x = x.to(tl.int32, bitcast=True)
        scale = 4.6566127342e-10
    else:
        tl.static_assert(x.dtype == tl.uint64 or x.dtype == tl.int64)
        x = x.to(tl.int64, bitcast=True)
        scale = 1.0842020432385337e-19
    x = tl.where(x < 0, -x - 1, x)
    return x * scale


@triton.jit
def rand(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@triton.jit
def rand4x(seed, offsets, n_rounds=N_ROUNDS_DEFAULT):
    i1, i2, i3, i4 = randint4x(seed, offsets, n_rounds)
    return (uint_to_uniform_float(i1), uint_to_uniform_float(i2),
            uint_to_uniform_float(i3), uint_to_uniform_float(i4))


@triton.jit
def pair_uniform_to_normal(u1, u2):
    # Box-Muller.
    u1 = tl.maximum(1.0e-7, u1)
    theta = 6.283185307179586 * u2
    radius = tl.sqrt(-2.0 * tl.log(u1))
    return radius * tl.cos(theta), radius * tl.sin(theta)


@triton.jit
def randn(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    n1, _ = pair_uniform_to_normal(uint_to_uniform_float(i1), uint_to_uniform_float(i2))
    return n1


@triton.jit
def randn4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    n1, n2 = pair_uniform_to_normal(u1, u2)
    n3, n4 = pair_uniform_to_normal(u3, u4)
    return n1, n2, n3, n4
