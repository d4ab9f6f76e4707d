"""Vector add, the first kernel of mtlemu's original design, run from
Python on NumPy arrays on the emulated Apple GPU and checked against NumPy.

    PYTHONPATH=build/python /usr/bin/python3 examples/triton/vector_add.py
"""
import numpy as np

import triton_metal
import triton_metal.language as tl


@triton_metal.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def main():
    n_elements = 98432
    rng = np.random.default_rng(0)
    x = rng.random(n_elements, dtype=np.float32)
    y = rng.random(n_elements, dtype=np.float32)
    output = np.empty_like(x)
    grid = (triton_metal.cdiv(n_elements, 1024),)
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    np.testing.assert_array_equal(output, x + y)
    print(f"vector add of {n_elements} floats on {triton_metal.get_chip()}: "
          "matches NumPy")


if __name__ == "__main__":
    main()
