# Loops whose pointers are stepped each iteration, for loop_pointers_test.
import triton
import triton.language as tl


@triton.jit
def stepped_sum(x_ptr, out_ptr, n, step, BLOCK: tl.constexpr):
    # Sums x[j + i * step] over i < n for j < BLOCK, then adds the element
    # the pointers reach after the loop.
    ptrs = x_ptr + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(n):
        acc += tl.load(ptrs)
        ptrs += step
    tl.store(out_ptr + tl.arange(0, BLOCK), acc + tl.load(ptrs))


@triton.jit
def stepped_sum_i64(x_ptr, out_ptr, n, step, BLOCK: tl.constexpr):
    # The same with 64-bit offsets and step.
    ptrs = x_ptr + tl.arange(0, BLOCK).to(tl.int64)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(n):
        acc += tl.load(ptrs)
        ptrs += step.to(tl.int64)
    tl.store(out_ptr + tl.arange(0, BLOCK), acc + tl.load(ptrs))
