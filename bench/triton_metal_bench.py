#!/usr/bin/env python3
"""Speed of the triton_metal Python package, in one process:

  - per-launch overhead of a cached kernel from Python: a launch's host
    time minus the time the emulator reports for the dispatch itself
    (argument binding, specialization lookup, buffers, encoding);
  - a 98K-element vector add launched from Python, end to end (what the
    Triton interpreter takes 78-147 ms for on a Xeon, see README.md).

    PYTHONPATH=build/python /usr/bin/python3 bench/triton_metal_bench.py [--runs N]

Prints medians of N launches (default 2000 for the overhead, 50 for the
vector add), on the emulated M1.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "examples", "triton"))
import triton_metal  # noqa: E402
from triton_metal import _core  # noqa: E402
from vector_add import add_kernel  # noqa: E402


def launches(n, runs, block):
    """(host seconds, emulator seconds) of each of `runs` launches."""
    x = np.ones(n, np.float32)
    y = np.ones(n, np.float32)
    out = np.empty_like(x)
    grid = (triton_metal.cdiv(n, block),)
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=block)  # compile once
    emulated = []
    real = _core.launch

    def timed(*args, **kwargs):
        r = real(*args, **kwargs)
        emulated.append(r["seconds"])
        return r

    _core.launch = timed
    host = []
    try:
        for _ in range(runs):
            t = time.perf_counter()
            add_kernel[grid](x, y, out, n, BLOCK_SIZE=block)
            host.append(time.perf_counter() - t)
    finally:
        _core.launch = real
    assert np.array_equal(out, x + y)
    return host, emulated


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=2000)
    a = p.parse_args()
    host, emu = launches(32, a.runs, 32)
    overhead = [h - e for h, e in zip(host, emu)]
    print(f"per-launch overhead (32-element add, {a.runs} launches): median "
          f"{statistics.median(overhead) * 1e6:.1f} us; host "
          f"{statistics.median(host) * 1e6:.1f} us, of which emulated "
          f"{statistics.median(emu) * 1e6:.1f} us")
    runs = max(5, a.runs // 40)
    host, emu = launches(98432, runs, 1024)
    print(f"vector add of 98432 floats from Python ({runs} launches): median "
          f"{statistics.median(host) * 1e3:.3f} ms end to end, "
          f"{statistics.median(emu) * 1e3:.3f} ms emulated")


if __name__ == "__main__":
    main()
