"""python3 -m triton_metal check | run SCRIPT [ARGS...] | chips

check   the system check: chips, the compiler, the cache, a tiny kernel run,
        each with a pass or the reason it failed; exit 1 if any failed.
run     runs a Triton script unmodified, with `import triton` (and
        triton.language, triton.testing...) meaning triton_metal and torch
        tensors on the CPU.
chips   the chips kernels can run on (TRITON_METAL_CHIP, set_chip).
"""
import os
import sys
import tempfile
import textwrap
import traceback


def _check():
    results = []

    def step(name, fn):
        try:
            detail = fn()
            results.append((name, True, detail or ""))
        except Exception as e:  # noqa: BLE001 - every failure is reported
            results.append((name, False, f"{type(e).__name__}: {e}"))

    import triton_metal

    step("core", lambda: f"C++ core at {triton_metal._core.__file__}")
    step("chips", lambda: ", ".join(c[0] for c in triton_metal.chips()))
    step("chip", lambda: f"{triton_metal.get_chip()} "
         f"({triton_metal.get_device_properties()['name']})")

    def cache():
        from triton_metal.runtime.autotuner import cache_dir
        mtl = os.environ.get("MTLEMU_CACHE_DIR", "")
        d = cache_dir()
        os.makedirs(d, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=d):
            pass
        return f"autotune cache {d}; compile cache {mtl or 'default'}"
    step("cache", cache)

    def kernel():
        import numpy as np
        src = textwrap.dedent('''
            import triton_metal
            import triton_metal.language as tl

            @triton_metal.jit
            def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                m = offs < n
                tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) +
                         tl.load(y_ptr + offs, mask=m), mask=m)
            ''')
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "check_kernel.py")
            with open(path, "w") as f:
                f.write(src)
            scope = {"__name__": "check_kernel", "__file__": path}
            exec(compile(src, path, "exec"), scope)
            n = 1000
            x = np.arange(n, dtype=np.float32)
            y = np.ones(n, dtype=np.float32)
            out = np.zeros(n, dtype=np.float32)
            scope["add"][(triton_metal.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
            if not np.array_equal(out, x + y):
                raise AssertionError("wrong results")
        return "vector add of 1000 floats: correct"
    step("kernel", kernel)

    for name, ok, detail in results:
        print(f"{'pass' if ok else 'FAIL'}  {name:8} {detail}")
    return 0 if all(ok for _, ok, _ in results) else 1


def _run(argv):
    if not argv:
        print("usage: python3 -m triton_metal run SCRIPT [ARGS...]", file=sys.stderr)
        return 2
    from triton_metal import compat
    compat.install()
    script = argv[0]
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    import runpy
    runpy.run_path(script, run_name="__main__")
    return 0


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "check":
        return _check()
    if cmd == "run":
        return _run(rest)
    if cmd == "chips":
        import triton_metal
        for name, marketing, cores in triton_metal.chips():
            print(f"{name:10} {marketing} ({cores} GPU cores)")
        return 0
    print(f"unknown command '{cmd}'\n{__doc__}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
    except SystemExit:
        raise
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        sys.exit(1)
