"""Strided access, the third kernel of mtlemu's original design: each
program doubles every `stride`-th element of its block. Checked against
NumPy.

    PYTHONPATH=build/python /usr/bin/python3 examples/triton/strided.py
"""
import numpy as np

import triton_metal
import triton_metal.language as tl


@triton_metal.jit
def strided_kernel(x_ptr, output_ptr, n_elements, stride, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    indices = block_start + tl.arange(0, BLOCK_SIZE) * stride
    mask = indices < n_elements
    x = tl.load(x_ptr + indices, mask=mask)
    tl.store(output_ptr + indices, x * 2.0, mask=mask)


def main():
    n_elements, stride, block = 10000, 3, 256
    x = np.arange(n_elements, dtype=np.float32)
    output = np.zeros_like(x)
    grid = (triton_metal.cdiv(n_elements, block),)
    strided_kernel[grid](x, output, n_elements, stride, BLOCK_SIZE=block)
    # Program p touches block_start + i * stride for i < BLOCK_SIZE.
    want = np.zeros_like(x)
    for p in range(grid[0]):
        idx = p * block + np.arange(block) * stride
        idx = idx[idx < n_elements]
        want[idx] = x[idx] * 2.0
    np.testing.assert_array_equal(output, want)
    print(f"strided access of {n_elements} floats (stride {stride}) on "
          f"{triton_metal.get_chip()}: matches NumPy")


if __name__ == "__main__":
    main()
