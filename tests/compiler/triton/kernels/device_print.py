"""Kernels that call tl.device_print, for the device_print test
(tests/compiler/triton/run_test.cpp). Run on a CUDA machine with Triton, this
file prints what real Triton prints for each case:

    python3 device_print.py CASE | sort -u > ../reference/device_print/CASE.txt

(GPU threads print in no fixed order, so the reference is sorted, one copy
of each line.)
"""
import sys

import triton
import triton.language as tl


@triton.jit
def print_block(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_print("x", x)


@triton.jit
def print_two(x_ptr, y_ptr):
    r = tl.arange(0, 2)[:, None] * 4 + tl.arange(0, 4)[None, :]
    x = tl.load(x_ptr + r)
    y = tl.load(y_ptr + r)
    tl.device_print("two ", x, y)


@triton.jit
def print_scalars(x_ptr, n):
    pid = tl.program_id(0)
    tl.device_print("scalar", pid, n)
    x = tl.load(x_ptr + tl.arange(0, 4))
    tl.device_print("hex", x, hex=True)
    print("builtin print", pid)


@triton.jit
def print_four(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    tl.device_print("h", x)


@triton.jit
def print_loop(x_ptr, n):
    x = tl.load(x_ptr + tl.arange(0, 4))
    for i in range(n):
        tl.device_print("it", x + i)
    tl.device_print("bits", x, hex=True)


def main(case):
    import torch
    d = "cuda"
    if case == "block8":
        print_block[(1,)](torch.arange(8, dtype=torch.float32, device=d) * 0.5 - 1,
                          BLOCK=8, num_warps=1)
    elif case == "block128":
        print_block[(1,)](torch.arange(128, dtype=torch.float32, device=d), BLOCK=128)
    elif case == "two":
        print_two[(1,)](torch.arange(8, dtype=torch.int32, device=d) - 3,
                        torch.arange(8, dtype=torch.int64, device=d) * 1000000000000,
                        num_warps=1)
    elif case == "scalars":
        print_scalars[(2,)](torch.arange(4, dtype=torch.int32, device=d) - 2, 7, num_warps=1)
    elif case == "fp16":
        print_four[(1,)](torch.tensor([1.5, -2.25, 65504, 1e-3], dtype=torch.float16, device=d))
    elif case == "bf16":
        print_four[(1,)](torch.tensor([1.5, -2.25, 3e38, 1e-3], dtype=torch.bfloat16, device=d))
    elif case == "bool":
        print_four[(1,)](torch.tensor([True, False, True, True], dtype=torch.bool, device=d))
    elif case == "uint8":
        print_four[(1,)](torch.tensor([1, 200, 255, 0], dtype=torch.uint8, device=d))
    elif case == "fp32":
        print_four[(1,)](torch.tensor([1.0, float("nan"), float("-inf"), 123456789.0],
                                      dtype=torch.float32, device=d))
    elif case == "loop":
        print_loop[(3,)](torch.tensor([-2, -1, 0, 127], dtype=torch.int8, device=d), 3)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main(sys.argv[1])
