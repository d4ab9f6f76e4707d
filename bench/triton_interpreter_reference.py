#!/usr/bin/env python3
"""Times Triton's own CPU path (TRITON_INTERPRET=1) on the kernels of
bench/triton_bench.cpp (tests/compiler/triton/kernels/basics.py), for the
comparison in bench/README.md. Needs Triton and PyTorch (the interpreter
runs on CPU tensors); run where they are installed:

    TRITON_INTERPRET=1 python3 bench/triton_interpreter_reference.py

Prints one line per kernel: best of 3 wall-clock milliseconds of one
launch, or the error the interpreter gave.
"""
import importlib.util
import os
import sys
import time
import traceback

os.environ["TRITON_INTERPRET"] = "1"
import torch  # noqa: E402
import triton  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(here, "..", "tests", "compiler", "triton", "kernels", "basics.py")
spec = importlib.util.spec_from_file_location("basics", path)
basics = importlib.util.module_from_spec(spec)
spec.loader.exec_module(basics)


def best_ms(fn, runs=3):
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def report(name, size, fn):
    try:
        print("| %-10s | %-15s | %10.1f |" % (name, size, best_ms(fn)))
    except Exception as e:  # noqa: BLE001
        msg = str(e).strip().split("\n")[-1][:100]
        print("| %-10s | %-15s | fails: %s |" % (name, size, msg))
        traceback.print_exc(file=sys.stderr)
    sys.stdout.flush()


def main():
    print("triton", triton.__version__, "torch", torch.__version__)
    print("| kernel     | size            | interpreter ms |")
    print("|---|---|---|")
    for scale in (1, 100):
        n = 98432 * scale
        x, y = torch.rand(n), torch.rand(n)
        out = torch.empty(n)
        report("vector add", str(n), lambda: basics.add_kernel[(triton.cdiv(n, 1024),)](
            x, y, out, n, BLOCK_SIZE=1024))
        rows, cols = 64 * scale, 781
        xs = torch.rand(rows, cols)
        ys = torch.empty_like(xs)
        report("softmax", "%dx%d" % (rows, cols), lambda: basics.softmax_kernel[(rows,)](
            ys, xs, cols, cols, cols, BLOCK_SIZE=1024))
        M, N, K = (200, 136, 96) if scale == 1 else (2000, 1360, 96)
        a, b = torch.rand(M, K), torch.rand(K, N)
        c = torch.empty(M, N)
        report("matmul", "%dx%dx%d" % (M, N, K), lambda: basics.matmul_kernel[(
            triton.cdiv(M, 32), triton.cdiv(N, 32))](
            a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32))
        lrows = 48 * scale
        xl = torch.rand(lrows, 500)
        yl = torch.empty_like(xl)
        w, bb = torch.rand(500), torch.rand(500)
        report("layer norm", "%dx500" % lrows, lambda: basics.layernorm_kernel[(lrows,)](
            xl, yl, w, bb, 500, 500, 1e-5, BLOCK_SIZE=512))


if __name__ == "__main__":
    main()
