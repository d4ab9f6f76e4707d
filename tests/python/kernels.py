"""Kernels for the triton_metal tests (test_api.py), which find the lines
they expect in error reports by searching this file."""
import triton_metal
import triton_metal.language as tl

SCALE = 2.0


@triton_metal.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


@triton_metal.jit
def unmasked_store(out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs.to(tl.float32))  # no mask


@triton_metal.jit
def scale_2d(x_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_om, stride_on,
             BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn, mask=mask)
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on, x * SCALE, mask=mask)


@triton_metal.jit
def printing(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.device_print("x", x)


@triton_metal.jit
def asserting(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.device_assert(x < 3.0, "x too big")


@triton_metal.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


@triton_metal.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton_metal.jit
def fill_kernel(out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, 1.0)
    else:
        tl.store(out_ptr + offs, 2.0, mask=offs < n)


@triton_metal.jit
def row_cumsum(x_ptr, out_ptr, B: tl.constexpr):
    r = tl.arange(0, B)
    x = tl.load(x_ptr + r[:, None] * B + r[None, :])
    tl.store(out_ptr + r[:, None] * B + r[None, :], tl.cumsum(x, axis=1))


@triton_metal.jit
def accumulate(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask) + tl.load(x_ptr + offs, mask=mask),
             mask=mask)


@triton_metal.jit
def folded_store(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs % 16, offs.to(tl.float32))  # racy: 8 lanes a slot


# Python names that MSL reserves or that share a long prefix, as Triton's
# tests and libraries use them.
@triton_metal.jit
def kernel(device, threadgroup, expert_to_token_index, expert_to_token_index_stride_0,
           parameter_name_with_forty_characters_abc, half: tl.constexpr):
    offs = tl.arange(0, half)
    x = tl.load(device + offs * expert_to_token_index_stride_0)
    tl.store(threadgroup + offs, x * expert_to_token_index + parameter_name_with_forty_characters_abc)


@triton_metal.jit
def shift_right(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) >> tl.load(y_ptr + offs))
