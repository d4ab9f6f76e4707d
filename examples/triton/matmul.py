"""Matrix multiply, the second kernel of mtlemu's original design: a K loop
of tl.dot over blocks, 2-D masks for sizes that are not multiples of the
blocks, strides passed as arguments. Checked against NumPy in float64.

    PYTHONPATH=build/python /usr/bin/python3 examples/triton/matmul.py
"""
import numpy as np

import triton_metal
import triton_metal.language as tl


@triton_metal.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K) * BLOCK_SIZE_K, BLOCK_SIZE_K):
        offs_k = k + tl.arange(0, BLOCK_SIZE_K)
        a_mask = (offs_m[:, None] < M) & (offs_k[None, :] < K)
        b_mask = (offs_k[:, None] < K) & (offs_n[None, :] < N)
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
                    mask=a_mask, other=0.0)
        b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=b_mask, other=0.0)
        accumulator += tl.dot(a, b)
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn,
             accumulator, mask=c_mask)


def main():
    M, N, K = 200, 136, 96
    rng = np.random.default_rng(1)
    a = rng.standard_normal((M, K), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    c = np.zeros((M, N), dtype=np.float32)
    BM, BN, BK = 32, 32, 32
    grid = (triton_metal.cdiv(M, BM), triton_metal.cdiv(N, BN))
    # The strides are in elements, as Triton's (NumPy's are in bytes).
    matmul_kernel[grid](a, b, c, M, N, K,
                        a.strides[0] // 4, a.strides[1] // 4,
                        b.strides[0] // 4, b.strides[1] // 4,
                        c.strides[0] // 4, c.strides[1] // 4,
                        BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK)
    want = a.astype(np.float64) @ b.astype(np.float64)
    # tl.dot on fp32 inputs multiplies in fp32 (Apple GPUs have no tf32).
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)
    print(f"matmul {M}x{N}x{K} on {triton_metal.get_chip()}: matches NumPy")


if __name__ == "__main__":
    main()
