#!/usr/bin/env python3
"""Records launches of Triton kernels on a real GPU, as reference data for
mtlemu's replay test (tests/compiler/triton/replay_test.cpp).

Run where Triton and PyTorch with CUDA are installed:

    python3 record_launches.py OUT_DIR --tutorials DIR --liger DIR [--only NAME]

DIR for --tutorials is triton's python/tutorials, for --liger Liger-Kernel's
src; --only runs the cases whose name starts with NAME ("06 backward").
Each launch of a @triton.jit kernel becomes OUT_DIR/SUITE/CASE/:

    manifest.txt   what was launched (see below)
    kernel.ttir    the TTIR real Triton compiled it to
    NAME.in.npy    each pointer argument's memory before the launch
    NAME.out.npy   ... after it, when the launch changed it

manifest.txt, one item per line:

    suite tutorials | liger | corpus
    file 05-layer-norm.py            (relative to the suite's root)
    kernel _layer_norm_fwd_fused
    grid 48 1 1
    num_warps 4
    arg X buffer fp32 9000           (name, element dtype, elements)
    arg stride int 500
    arg eps float 1e-05
    arg BLOCK_SIZE constexpr int 512 (constexprs: int, float, bool, str,
                                      dtype, none)

Pointer arguments are saved as the memory the kernel sees from its pointer
(a strided view's whole span), so the replay binds a buffer of the same
bytes and the same strides.
"""
import argparse
import ast
import importlib.util
import os
import sys
import tempfile
import traceback
import types

import numpy as np
import torch
import triton
import triton.language as tl
from triton.runtime.jit import JITFunction

DEVICE = "cuda"
OUT = None
SUITE = None
ROOT = None
COUNTER = {}
LOG = []

TORCH_TO_TRITON = {
    torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16",
    torch.int32: "int32", torch.int64: "int64", torch.int16: "int16",
    torch.int8: "int8", torch.uint8: "uint8", torch.bool: "int1",
}
TORCH_TO_NUMPY = {
    torch.float32: np.float32, torch.float16: np.float16,
    torch.bfloat16: np.uint16, torch.int32: np.int32, torch.int64: np.int64,
    torch.int16: np.int16, torch.int8: np.int8, torch.uint8: np.uint8,
    torch.bool: np.bool_,
}


def span_of(t):
    """The memory a kernel reads from t's pointer: its whole strided span."""
    if t.numel() == 0:
        return t.reshape(0)
    span = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()) if s > 0)
    return torch.as_strided(t, (span,), (1,))


def to_numpy(t):
    flat = span_of(t).detach()
    if t.dtype == torch.bfloat16:
        flat = flat.view(torch.int16)
        return flat.cpu().numpy().view(np.uint16)
    return flat.cpu().numpy()


def constexpr_text(v):
    if isinstance(v, tl.constexpr):
        v = v.value
    if v is None:
        return "none -"
    if isinstance(v, bool):
        return "bool " + ("True" if v else "False")
    if isinstance(v, int):
        return "int " + str(v)
    if isinstance(v, float):
        return "float " + repr(v)
    if isinstance(v, str):
        return "str " + (v if v else "-")
    if isinstance(v, tl.dtype):
        return "dtype " + str(v)
    if isinstance(v, torch.dtype):
        return "dtype " + TORCH_TO_TRITON[v]
    raise TypeError("constexpr of type %s" % type(v))


_original_run = JITFunction.run


def recording_run(self, *args, grid, warmup, **kwargs):
    if warmup or OUT is None:
        return _original_run(self, *args, grid=grid, warmup=warmup, **kwargs)
    names = self.arg_names
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in names:
            bound[k] = v
    # Defaults of parameters not given.
    import inspect
    sig = inspect.signature(self.fn)
    for p in sig.parameters.values():
        if p.name not in bound and p.default is not inspect.Parameter.empty:
            bound[p.name] = p.default
    g = grid(bound) if callable(grid) else grid
    g = tuple(g) + (1,) * (3 - len(g))
    kernel_name = self.fn.__name__
    n = COUNTER.get(kernel_name, 0)
    COUNTER[kernel_name] = n + 1
    case = kernel_name if n == 0 else "%s_%d" % (kernel_name, n)
    d = os.path.join(OUT, SUITE, case)
    os.makedirs(d, exist_ok=True)
    src = os.path.relpath(self.fn.__code__.co_filename, ROOT) if ROOT else ""
    lines = ["suite " + SUITE, "file " + CURRENT_FILE.get(self.fn.__code__.co_filename, src),
             "kernel " + kernel_name, "grid %d %d %d" % g,
             "num_warps %d" % kwargs.get("num_warps", 4)]
    before = {}
    constexpr_names = {p.name for p in self.params if p.is_constexpr}
    for name in names:
        if name not in bound:
            continue
        v = bound[name]
        if isinstance(v, torch.Tensor):
            a = to_numpy(v)
            before[name] = (v, a.copy())
            np.save(os.path.join(d, name + ".in.npy"), a)
            lines.append("arg %s buffer %s %d" % (name, TORCH_TO_TRITON[v.dtype], a.size))
        elif name in constexpr_names:
            lines.append("arg %s constexpr %s" % (name, constexpr_text(v)))
        elif v is None:
            lines.append("arg %s none -" % name)
        elif isinstance(v, bool):
            lines.append("arg %s bool %s" % (name, "True" if v else "False"))
        elif isinstance(v, int):
            lines.append("arg %s int %d" % (name, v))
        elif isinstance(v, float):
            lines.append("arg %s float %r" % (name, v))
        else:
            lines.append("arg %s unsupported %s" % (name, type(v).__name__))
    result = _original_run(self, *args, grid=grid, warmup=warmup, **kwargs)
    torch.cuda.synchronize()
    for name, (t, a) in before.items():
        after = to_numpy(t)
        if not np.array_equal(after.view(np.uint8), a.view(np.uint8)):
            np.save(os.path.join(d, name + ".out.npy"), after)
    try:
        with open(os.path.join(d, "kernel.ttir"), "w") as f:
            f.write(result.asm["ttir"])
    except Exception as e:  # noqa: BLE001
        LOG.append("%s: no ttir: %s" % (case, e))
    with open(os.path.join(d, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    LOG.append("recorded %s/%s" % (SUITE, case))
    return result


JITFunction.run = recording_run
CURRENT_FILE = {}


def load_definitions(path, module_name, extra_sys_path=None):
    """Imports a tutorial's definitions only: its top-level statements other
    than imports, defs, classes and assignments are blanked out (so the
    benchmarks and prints do not run), keeping line numbers."""
    source = open(path).read()
    tree = ast.parse(source)
    lines = source.split("\n")

    def only_triton_calls(node):
        # Assignments whose calls are all triton.* (DEVICE = triton.runtime...).
        for n in ast.walk(node):
            if isinstance(n, ast.Call):
                f = n.func
                while isinstance(f, ast.Attribute):
                    f = f.value
                if not (isinstance(f, ast.Name) and f.id in ("triton", "tl")):
                    return False
        return True

    def kernel_like(node):
        if not isinstance(node, ast.FunctionDef):
            return False
        for d in node.decorator_list:
            f = d.func if isinstance(d, ast.Call) else d
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name not in ("jit", "autotune", "heuristics", "constexpr_function"):
                return False
        return True

    def main_guard(node):
        return isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)

    for node in tree.body:
        keep = isinstance(node, (ast.Import, ast.ImportFrom, ast.Try)) or kernel_like(node) or (
            isinstance(node, (ast.Assign, ast.AnnAssign)) and only_triton_calls(node)) or (
            isinstance(node, ast.If) and not main_guard(node)) or (
            isinstance(node, ast.FunctionDef) and not node.decorator_list)
        if keep:
            continue
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        for i in range(first - 1, node.end_lineno):
            lines[i] = ""
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, os.path.basename(path))
    with open(out, "w") as f:
        f.write("\n".join(lines))
    CURRENT_FILE[out] = os.path.basename(path)
    if extra_sys_path:
        sys.path.insert(0, extra_sys_path)
    # Each kept statement runs on its own: one that needs a name the
    # blanked code would have made (x = torch.rand(...)) is skipped.
    mod = types.ModuleType(module_name)
    mod.__file__ = out
    sys.modules[module_name] = mod
    kept = ast.parse("\n".join(lines))
    for node in kept.body:
        try:
            exec(compile(ast.Module(body=[node], type_ignores=[]), out, "exec"),
                 mod.__dict__)
        except Exception as e:  # noqa: BLE001
            LOG.append("%s:%d skipped: %s" % (os.path.basename(path), node.lineno, e))
    return mod


ONLY = None


def run_case(name, fn):
    if ONLY and not name.startswith(ONLY):
        return
    try:
        fn()
        torch.cuda.synchronize()
    except Exception:  # noqa: BLE001
        LOG.append("FAILED %s:\n%s" % (name, traceback.format_exc()))


def rand(*shape, dtype=torch.float32, seed=0, lo=-2.0, hi=2.0):
    g = torch.Generator(device="cpu").manual_seed(seed)
    t = torch.rand(*shape, generator=g) * (hi - lo) + lo
    return t.to(dtype).to(DEVICE)


# --- tutorials ------------------------------------------------------------------

def tutorials(root):
    global SUITE, ROOT
    SUITE, ROOT = "tutorials", root
    t01 = load_definitions(os.path.join(root, "01-vector-add.py"), "t01")
    def c01():
        n = 9843
        x, y = rand(n, seed=1), rand(n, seed=2)
        out = torch.empty_like(x)
        t01.add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    run_case("01", c01)

    t02 = load_definitions(os.path.join(root, "02-fused-softmax.py"), "t02")
    def c02():
        x = rand(64, 781, seed=3)
        y = torch.empty_like(x)
        t02.softmax_kernel[(16, 1, 1)](y, x, x.stride(0), y.stride(0), 64, 781,
                                       BLOCK_SIZE=1024, num_stages=2, num_warps=8)
    run_case("02", c02)

    t03 = load_definitions(os.path.join(root, "03-matrix-multiplication.py"), "t03")
    def c03(activation, m, n, k, bm, bn, bk, warps):
        a = rand(m, k, dtype=torch.float16, seed=4)
        b = rand(k, n, dtype=torch.float16, seed=5)
        c = torch.empty((m, n), device=DEVICE, dtype=torch.float16)
        t03.matmul_kernel.configs = [triton.Config(
            {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8},
            num_stages=2, num_warps=warps)]
        grid = lambda META: (triton.cdiv(m, META["BLOCK_SIZE_M"]) * triton.cdiv(n, META["BLOCK_SIZE_N"]), )
        t03.matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                                b.stride(1), c.stride(0), c.stride(1), ACTIVATION=activation)
    run_case("03", lambda: c03("", 200, 136, 96, 32, 32, 32, 4))
    run_case("03 leaky", lambda: c03("leaky_relu", 128, 192, 64, 64, 64, 32, 4))

    t04 = load_definitions(os.path.join(root, "04-low-memory-dropout.py"), "t04")
    def c04():
        n = 5000
        x = rand(n, seed=6)
        keep = (rand(n, seed=7) > 0).to(torch.int32)
        out = torch.empty_like(x)
        t04._dropout[(triton.cdiv(n, 1024),)](x, keep, out, n, 0.5, BLOCK_SIZE=1024)
        out2 = torch.empty_like(x)
        t04._seeded_dropout[(triton.cdiv(n, 1024),)](x, out2, n, 0.5, 123, BLOCK_SIZE=1024)
    run_case("04", c04)

    t05 = load_definitions(os.path.join(root, "05-layer-norm.py"), "t05")
    def c05():
        M, N = 48, 500
        x = rand(M, N, seed=8)
        w = rand(N, seed=9)
        b = rand(N, seed=10)
        y = torch.empty_like(x)
        mean = torch.empty((M,), dtype=torch.float32, device=DEVICE)
        rstd = torch.empty((M,), dtype=torch.float32, device=DEVICE)
        t05._layer_norm_fwd_fused[(M,)](x, y, w, b, mean, rstd, x.stride(0), N, 1e-5,
                                        BLOCK_SIZE=512, num_warps=4)
        dy = rand(M, N, seed=11)
        GROUP = 16
        locks = torch.zeros(2 * GROUP, dtype=torch.int32, device=DEVICE)
        _dw = torch.zeros((GROUP, N), dtype=torch.float32, device=DEVICE)
        _db = torch.zeros((GROUP, N), dtype=torch.float32, device=DEVICE)
        dw = torch.empty((N,), dtype=torch.float32, device=DEVICE)
        db = torch.empty((N,), dtype=torch.float32, device=DEVICE)
        dx = torch.empty_like(dy)
        t05._layer_norm_bwd_dx_fused[(M,)](dx, dy, _dw, _db, x, w, mean, rstd, locks,
                                           x.stride(0), N, BLOCK_SIZE_N=512,
                                           GROUP_SIZE_M=GROUP, num_warps=4)
        t05._layer_norm_bwd_dwdb[(triton.cdiv(N, 128),)](_dw, _db, dw, db, min(GROUP, M), N,
                                                         BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)
    run_case("05", c05)

    t06 = load_definitions(os.path.join(root, "06-fused-attention.py"), "t06")
    def c06(stage):
        Z, H, N_CTX, D = 1, 2, 128, 64
        q = rand(Z, H, N_CTX, D, dtype=torch.float16, seed=12, lo=-1, hi=1)
        k = rand(Z, H, N_CTX, D, dtype=torch.float16, seed=13, lo=-1, hi=1)
        v = rand(Z, H, N_CTX, D, dtype=torch.float16, seed=14, lo=-1, hi=1)
        o = torch.empty_like(q)
        M = torch.empty((Z, H, N_CTX), device=DEVICE, dtype=torch.float32)
        def alloc_fn(size, align, stream):
            return torch.empty(size, dtype=torch.int8, device=DEVICE)
        triton.set_allocator(alloc_fn)
        kernel = t06._attn_fwd
        kernel.configs = [triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_stages=2, num_warps=4)]
        grid = lambda args: (triton.cdiv(N_CTX, args["BLOCK_M"]), Z * H, 1)
        kernel[grid](0.125, M, Z, H, q, k, v, o, N_CTX=N_CTX, HEAD_DIM=D,
                     FP8_OUTPUT=False, STAGE=stage, warp_specialize=False, IS_HOPPER=False)
    run_case("06 causal", lambda: c06(3))
    run_case("06", lambda: c06(1))

    def c06_backward(causal):
        # The tutorial's _attention.backward, its forward pass unrecorded
        # (it makes o and M for the backward kernels to read).
        global OUT
        Z, H, N_CTX, D = 1, 2, 128, 64
        q = rand(Z, H, N_CTX, D, dtype=torch.float16, seed=16, lo=-1, hi=1)
        k = rand(Z, H, N_CTX, D, dtype=torch.float16, seed=17, lo=-1, hi=1)
        v = rand(Z, H, N_CTX, D, dtype=torch.float16, seed=18, lo=-1, hi=1)
        do = rand(Z, H, N_CTX, D, dtype=torch.float16, seed=19, lo=-1, hi=1)
        o = torch.empty_like(q)
        M = torch.empty((Z, H, N_CTX), device=DEVICE, dtype=torch.float32)
        sm_scale = 0.5
        triton.set_allocator(lambda size, align, stream: torch.empty(
            size, dtype=torch.int8, device=DEVICE))
        out, OUT = OUT, None
        try:
            t06._attn_fwd.configs = [triton.Config({"BLOCK_M": 64, "BLOCK_N": 32},
                                                   num_stages=2, num_warps=4)]
            grid = lambda args: (triton.cdiv(N_CTX, args["BLOCK_M"]), Z * H, 1)
            t06._attn_fwd[grid](sm_scale, M, Z, H, q, k, v, o, N_CTX=N_CTX, HEAD_DIM=D,
                                FP8_OUTPUT=False, STAGE=3 if causal else 1,
                                warp_specialize=False, IS_HOPPER=False)
            torch.cuda.synchronize()
        finally:
            OUT = out
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        arg_k = k * (sm_scale * 1.4426950408889634)
        delta = torch.empty_like(M)
        t06._attn_bwd_preprocess[(N_CTX // 128, Z * H)](o, do, delta, Z, H, N_CTX,
                                                         BLOCK_M=128, HEAD_DIM=D)
        t06._attn_bwd[(N_CTX // 128, 1, Z * H)](
            q, arg_k, v, sm_scale, do, dq, dk, dv, M, delta,
            q.stride(0), q.stride(1), q.stride(2), q.stride(3), H, N_CTX,
            BLOCK_M1=32, BLOCK_N1=128, BLOCK_M2=128, BLOCK_N2=32, BLK_SLICE_FACTOR=2,
            HEAD_DIM=D, num_warps=4, num_stages=5, CAUSAL=causal)
    run_case("06 backward causal", lambda: c06_backward(True))
    run_case("06 backward", lambda: c06_backward(False))

    t07 = load_definitions(os.path.join(root, "07-extern-functions.py"), "t07")
    def c07():
        x = rand(1000, seed=15, lo=-1, hi=1)
        out = torch.empty_like(x)
        t07.asin_kernel[(triton.cdiv(1000, 256),)](x, out, 1000, BLOCK_SIZE=256)
    run_case("07", c07)


# --- Liger-Kernel -----------------------------------------------------------------

def liger(src):
    global SUITE, ROOT
    SUITE, ROOT = "liger", src
    sys.path.insert(0, src)
    import liger_kernel.ops.rms_norm as rms
    import liger_kernel.ops.layer_norm as ln
    import liger_kernel.ops.swiglu as sw
    import liger_kernel.ops.geglu as ge
    import liger_kernel.ops.rope as rope
    import liger_kernel.ops.cross_entropy as ce
    for m in (rms, ln, sw, ge, rope, ce):
        CURRENT_FILE[m.__file__] = os.path.relpath(m.__file__, src)
    run_case("rms_norm", lambda: rms.rms_norm_forward(
        rand(8, 640, seed=20), rand(640, seed=21), 1e-6, 0.0, "llama", None))
    run_case("layer_norm", lambda: ln.layer_norm_forward(
        rand(8, 640, seed=22), rand(640, seed=23), rand(640, seed=24), 1e-6))
    run_case("swiglu", lambda: sw.swiglu_forward(rand(8, 640, seed=25), rand(8, 640, seed=26)))
    run_case("geglu", lambda: ge.geglu_forward(rand(8, 640, seed=27), rand(8, 640, seed=28)))
    def c_rope():
        bsz, n_q, n_kv, seq, hd = 1, 4, 2, 16, 64
        q = rand(bsz, n_q, seq, hd, seed=29).transpose(1, 2).contiguous().transpose(1, 2)
        k = rand(bsz, n_kv, seq, hd, seed=30).transpose(1, 2).contiguous().transpose(1, 2)
        cos = rand(1, seq, hd, seed=31)
        sin = rand(1, seq, hd, seed=32)
        rope.rope_forward(q, k, cos, sin)
    run_case("rope", c_rope)
    def c_ce():
        x = rand(16, 1000, seed=33)
        target = (torch.arange(16, device=DEVICE) * 37) % 1000
        try:
            ce.cross_entropy_forward(x, target, None, -100, 0.0, 0.0, "mean", None, False)
        except TypeError:
            ce.cross_entropy_forward(x, target, None, -100, 0.0, 0.0, "mean", None)
    run_case("cross_entropy", c_ce)


# --- mtlemu's own kernels -------------------------------------------------------

def corpus(root):
    global SUITE, ROOT
    SUITE, ROOT = "corpus", root
    cp = load_definitions(os.path.join(root, "corpus.py"), "corpus")
    def rand_case():
        n = 1000
        u = torch.empty(n, device=DEVICE)
        g = torch.empty(n, device=DEVICE)
        i = torch.empty(n, device=DEVICE, dtype=torch.int32)
        cp.rand_kernel[(4,)](u, g, i, 1234, n, BLOCK=256)
    run_case("rand", rand_case)
    def dot_int8():
        a = (rand(32, 64, seed=40, lo=-100, hi=100)).to(torch.int8)
        b = (rand(64, 32, seed=41, lo=-100, hi=100)).to(torch.int8)
        c = torch.empty((32, 32), device=DEVICE, dtype=torch.int32)
        cp.int8_dot_kernel[(1,)](a, b, c, M=32, N=32, K=64)
    run_case("int8 dot", dot_int8)

    def others():
        f32 = torch.float32
        a, b = rand(200, 96, dtype=torch.float16, seed=42), rand(96, 136, dtype=torch.float16, seed=43)
        c = torch.empty((200, 136), device=DEVICE, dtype=f32)
        cp.grouped_matmul_kernel[(7 * 3,)](a, b, c, 200, 136, 96, 96, 1, 136, 1, 136, 1,
                                           BLOCK_M=32, BLOCK_N=64, BLOCK_K=32, GROUP_M=4)
        x = rand(48, 500, seed=44)
        y = torch.empty_like(x)
        w, bb = rand(500, seed=45), rand(500, seed=46)
        mean = torch.empty(48, device=DEVICE)
        rstd = torch.empty(48, device=DEVICE)
        cp.layer_norm_fwd[(48,)](x, y, w, bb, mean, rstd, 500, 500, 1e-5, BLOCK_SIZE=128)
        q = rand(100, 32, dtype=torch.float16, seed=47, lo=-1, hi=1)
        k = rand(100, 32, dtype=torch.float16, seed=48, lo=-1, hi=1)
        v = rand(100, 32, dtype=torch.float16, seed=49, lo=-1, hi=1)
        o = torch.empty((100, 32), device=DEVICE, dtype=f32)
        cp.attention_fwd[(4,)](q, k, v, o, 0.17677669529663687, 100, 32, 32, 32, 32,
                               BLOCK_M=32, BLOCK_N=32, HEAD_DIM=32)
        xi = (rand(3, 300, seed=50, lo=-11, hi=11)).to(torch.int32)
        yi = torch.empty_like(xi)
        cp.cumsum_kernel[(3,)](xi, yi, 300, BLOCK=512)
        xa = rand(16, 90, seed=51)
        oa = torch.empty(16, device=DEVICE, dtype=torch.int32)
        cp.argmax_kernel[(2,)](xa, oa, 90, ROWS=8, BLOCK=128)
        xs = rand(3, 64, seed=52)
        os_ = torch.empty_like(xs)
        cp.sort_kernel[(3,)](xs, os_, DESCENDING=True, N=64)
        xw = torch.tensor([1, 3, 0.5, 100, 7], device=DEVICE)
        ow = torch.empty(5, device=DEVICE, dtype=torch.int32)
        cp.while_kernel[(5,)](xw, ow, 64.0)
        src = rand(50, 70, seed=53)
        dst = torch.empty(70 * 50, device=DEVICE)
        cp.block_ptr_copy_kernel[(2, 3)](src, dst, 50, 70, 70, BLOCK_M=32, BLOCK_N=32)
        xg = rand(1000, seed=54, lo=-5, hi=5)
        og = torch.empty_like(xg)
        cp.gelu_kernel[(4,)](xg, og, 1000, BLOCK=256)
    run_case("corpus kernels", others)

    def scans():
        for rows, cols, axis, warps in [(8, 128, 1, 4), (128, 8, 0, 4), (2, 16, 1, 4),
                                        (32, 32, 0, 1)]:
            for reverse in (False, True):
                a = rand(rows, cols, seed=60 + rows, lo=0.5, hi=1.0)
                b = rand(rows, cols, seed=61 + cols)
                h = torch.empty_like(a)
                cp.linear_recurrence_kernel[(1,)](a, b, h, ROWS=rows, COLS=cols, AXIS=axis,
                                                  REVERSE=reverse, num_warps=warps)
    run_case("scans", scans)

    def more():
        # The corpus kernels the cases above leave out.
        rows, n, group = 24, 300, 4
        x = rand(rows, n, seed=70)
        dy = rand(rows, n, seed=71)
        w = rand(n, seed=72)
        mean = x.mean(dim=1)
        rstd = 1 / torch.sqrt(x.var(dim=1, unbiased=False) + 1e-5)
        dx = torch.empty_like(x)
        dw = torch.zeros(group, n, device=DEVICE)
        db = torch.zeros(group, n, device=DEVICE)
        lock = torch.zeros(2 * group, dtype=torch.int32, device=DEVICE)
        cp.layer_norm_bwd_dx_fused[(rows,)](dx, dy, dw, db, x, w, mean, rstd, lock, n, n,
                                            GROUP_SIZE_M=group, BLOCK_SIZE_N=512)
        xi = (rand(5000, seed=73, lo=0, hi=16)).to(torch.int32)
        hist = torch.zeros(16, dtype=torch.int32, device=DEVICE)
        cp.histogram_kernel[(5,)](xi, hist, 5000, NUM_BINS=16, BLOCK=1024)
        xr = rand(256, seed=74, lo=-4, hi=4).round()
        mx = torch.empty(1, device=DEVICE)
        cnt = torch.empty(1, dtype=torch.int32, device=DEVICE)
        cp.custom_reduce_kernel[(1,)](xr, mx, cnt, BLOCK=256)
        xo, yo = rand(16, seed=75), rand(32, seed=76)
        out = torch.empty(16 * 32, device=DEVICE)
        cp.outer_kernel[(1,)](xo, yo, out, M=16, N=32)
        a = (rand(100, seed=77, lo=-50, hi=50)).to(torch.int32)
        b = (rand(100, seed=78, lo=1, hi=9)).to(torch.int32) * torch.where(
            rand(100, seed=79) > 0, 1, -1).to(torch.int32)
        q, r = torch.empty_like(a), torch.empty_like(a)
        cp.int_div_mod_kernel[(1,)](a, b, q, r, 100, BLOCK=128)
        xe = torch.full((1000,), -1.0, device=DEVICE)
        cp.early_exit_kernel[(8,)](xe, 1000, BLOCK=256)
        triton.set_allocator(lambda size, align, stream: torch.empty(
            size, dtype=torch.int8, device=DEVICE))
        m2, n2 = 64, 96
        da, dbb = rand(m2, n2, seed=80), rand(m2, n2, seed=81)
        do = torch.empty(m2, n2, device=DEVICE)
        cp.descriptor_add_kernel[(m2 // 32, n2 // 32)](da, dbb, do, m2, n2,
                                                     BLOCK_M=32, BLOCK_N=32)
        xf = rand(128, seed=82)
        of = torch.empty_like(xf)
        cp.flip_kernel[(1,)](xf, of, N=128)
    run_case("more", more)


def main():
    global OUT, ONLY
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--tutorials")
    p.add_argument("--liger")
    p.add_argument("--corpus")
    p.add_argument("--only", help="run only the cases whose name starts so")
    a = p.parse_args()
    OUT = a.out
    ONLY = a.only
    os.makedirs(OUT, exist_ok=True)
    print("triton", triton.__version__, "torch", torch.__version__)
    if a.tutorials:
        tutorials(a.tutorials)
    if a.liger:
        liger(a.liger)
    if a.corpus:
        corpus(a.corpus)
    with open(os.path.join(OUT, "log.txt"), "w") as f:
        f.write("\n".join(LOG) + "\n")
    print("\n".join(LOG))
    print("recorded:", sum(1 for l in LOG if l.startswith("recorded")),
          "failed:", sum(1 for l in LOG if l.startswith("FAILED")))


if __name__ == "__main__":
    main()
