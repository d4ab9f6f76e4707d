#!/usr/bin/python3
"""Launches kernels and host functions of Triton libraries nobody here
wrote, unchanged, on triton_metal with torch CPU tensors, and checks each
result against torch's own computation (in float32/float64): prints, per
library, which launches ran right, which raised and which gave wrong
numbers, and the totals.

    MTLEMU_LIGER_KERNEL=.../Liger-Kernel/src MTLEMU_UNSLOTH=.../unsloth \\
    MTLEMU_UNSLOTH_ZOO=.../unsloth-zoo MTLEMU_ATTORCH=.../attorch \\
    MTLEMU_FLAGGEMS=.../FlagGems/src MTLEMU_FLA=.../flash-linear-attention \\
        python3 bench/triton_libraries.py [--json OUT.json] [-k SUBSTRING]

Each variable is a checkout's folder that holds the library's package
(nothing of it is kept here); a library whose variable is unset is listed
as not given. The packages are imported without running their
`__init__.py` (which asks for CUDA or torch >= 2 in most of them): their
modules are loaded from the folder under parent packages made empty, as
`import liger_kernel.ops.rms_norm` would find them. `import triton` is
triton_metal (triton_metal.compat.install). FlagGems' runtime is given
the CPU as its device (_flaggems_device says how). A library that needs a
newer torch than this one before any of its kernels can be reached is
listed as not run, with the reason. Needs the build's package:
PYTHONPATH=build/python."""
import argparse
import importlib
import importlib.machinery
import json
import os
import re
import sys
import time
import traceback
import types

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "build", "python"))

import triton_metal.compat  # noqa: E402

triton_metal.compat.install()

import torch  # noqa: E402


def _torch_2_names():
    """What these libraries probe of torch >= 2 and Debian's torch 1.13
    lacks, given its torch 2 meaning on a machine with no XPU: torch.xpu
    (absent), torch.amp.custom_fwd/custom_bwd (torch.cuda.amp's, with the
    device_type argument), torch.get_autocast_dtype. Nothing of Triton."""
    if not hasattr(torch, "xpu"):
        torch.xpu = types.SimpleNamespace(is_available=lambda: False, device_count=lambda: 0)
    amp = torch.amp
    for name in ("custom_fwd", "custom_bwd"):
        if not hasattr(amp, name):
            cuda_version = getattr(torch.cuda.amp, name)

            def decorator(fn=None, *, device_type="cuda", cast_inputs=None, _v=cuda_version, _n=name):
                kwargs = {"cast_inputs": cast_inputs} if _n == "custom_fwd" and cast_inputs else {}
                if fn is None:
                    return lambda f: _v(f, **kwargs)
                return _v(fn, **kwargs)
            setattr(amp, name, decorator)
    if not hasattr(torch, "get_autocast_dtype"):
        torch.get_autocast_dtype = lambda device_type: torch.get_autocast_cpu_dtype()


_torch_2_names()

LIBRARIES = {
    # name: (environment variable, its top-level package)
    "Liger-Kernel": ("MTLEMU_LIGER_KERNEL", "liger_kernel"),
    "unsloth": ("MTLEMU_UNSLOTH", "unsloth"),
    "attorch": ("MTLEMU_ATTORCH", "attorch"),
    "FlagGems": ("MTLEMU_FLAGGEMS", "flag_gems"),
    "flash-linear-attention": ("MTLEMU_FLA", "fla"),
}

# Packages a library imports from another checkout: (environment variable,
# package), loaded the same way (their __init__.py not run).
DEPENDENCIES = {
    "unsloth": [("MTLEMU_UNSLOTH_ZOO", "unsloth_zoo")],
}


def empty_package(root, name):
    """Registers package `name` (dotted) found under `root` without running
    its __init__.py, unless it is loaded already."""
    if name in sys.modules:
        return
    parts = name.split(".")
    package = types.ModuleType(name)
    package.__path__ = [os.path.join(root, *parts)]
    package.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    package.__spec__.submodule_search_locations = package.__path__
    # The one name modules read from their package: its version.
    init = os.path.join(package.__path__[0], "__init__.py")
    if os.path.isfile(init):
        found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]",
                          open(init, encoding="utf-8").read(), re.MULTILINE)
        if found:
            package.__version__ = found.group(1)
    sys.modules[name] = package
    if len(parts) > 1:
        setattr(sys.modules[".".join(parts[:-1])], parts[-1], package)


def load(root, dotted):
    """Module `dotted` from the folder `root`, its parent packages made
    empty (their __init__.py is not run) unless already loaded."""
    parts = dotted.split(".")
    for i in range(1, len(parts)):
        empty_package(root, ".".join(parts[:i]))
    return importlib.import_module(dotted)


def close(got, want, tol):
    got = got.detach().to(torch.float64)
    want = want.detach().to(torch.float64)
    if got.shape != want.shape:
        raise AssertionError(f"shape {tuple(got.shape)}, expected {tuple(want.shape)}")
    err = (got - want).abs()
    bound = tol * (1 + want.abs())
    if not bool(torch.all(err <= bound)):
        worst = int(torch.argmax(err - bound))
        raise AssertionError(
            f"wrong: {int((err > bound).sum())} of {err.numel()} elements off, worst "
            f"{got.flatten()[worst].item():.6g} for {want.flatten()[worst].item():.6g}")


def rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


# --- Liger-Kernel ---------------------------------------------------------------


def liger_cases(root):
    def op(name):
        return load(root, "liger_kernel.ops." + name)

    def rms_norm():
        x, w = rand(6, 300), rand(300, seed=1)
        y = op("rms_norm").rms_norm_forward(x, w, 1e-6, 0.0, "llama", False)[0]
        close(y, x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w, 1e-4)

    def layer_norm():
        x, w, b = rand(5, 200), rand(200, seed=1), rand(200, seed=2)
        y = op("layer_norm").layer_norm_forward(x, w, b, 1e-5)[0]
        close(y, torch.nn.functional.layer_norm(x, (200,), w, b, 1e-5), 1e-4)

    def swiglu():
        a, b = rand(4, 333), rand(4, 333, seed=1)
        c = op("swiglu").swiglu_forward(a, b)[2]
        close(c, torch.nn.functional.silu(a) * b, 1e-5)

    def geglu():
        a, b = rand(4, 257), rand(4, 257, seed=1)
        c = op("geglu").geglu_forward(a, b)[2]
        close(c, torch.nn.functional.gelu(a, approximate="tanh") * b, 1e-4)

    def softmax():
        x = rand(7, 1000)
        y = op("softmax")._softmax_forward(x)[0]
        close(y, torch.softmax(x, -1), 1e-5)

    def cross_entropy():
        x, t = rand(8, 500), torch.randint(0, 500, (8,), generator=torch.Generator().manual_seed(3))
        loss = op("cross_entropy").cross_entropy_forward(
            x.clone(), t, None, -100, 0.0, 0.0, "mean", None, False)[0]
        close(loss, torch.nn.functional.cross_entropy(x, t), 1e-4)

    def group_norm():
        x, w, b = rand(2, 8, 64), rand(8, seed=1), rand(8, seed=2)
        y = op("group_norm").group_norm_forward(x, 8, 4, w, b, 1e-5)[0]
        close(y, torch.nn.functional.group_norm(x, 4, w, b, 1e-5), 1e-4)

    def relu_squared():
        x = rand(3, 100)
        y = op("relu_squared").relu_squared_forward(x)
        y = y[0] if isinstance(y, tuple) else y
        close(y, torch.relu(x) ** 2, 1e-5)

    return [("rms_norm_forward", rms_norm), ("layer_norm_forward", layer_norm),
            ("swiglu_forward", swiglu), ("geglu_forward", geglu),
            ("_softmax_forward", softmax), ("cross_entropy_forward", cross_entropy),
            ("group_norm_forward", group_norm), ("relu_squared_forward", relu_squared)]


# --- unsloth ----------------------------------------------------------------------


def unsloth_cases(root):
    def kernels(name):
        return load(root, "unsloth.kernels." + name)

    def swiglu():
        e, g = rand(2, 3, 100), rand(2, 3, 100, seed=1)
        h = kernels("swiglu").swiglu_fg_kernel(e, g)
        close(h, torch.nn.functional.silu(e) * g, 1e-5)

    def geglu_exact():
        e, g = rand(2, 3, 100), rand(2, 3, 100, seed=1)
        h = kernels("geglu").geglu_exact_forward_kernel(e, g)
        close(h, torch.nn.functional.gelu(e) * g, 1e-5)

    def geglu_approx():
        e, g = rand(2, 3, 100), rand(2, 3, 100, seed=1)
        h = kernels("geglu").geglu_approx_forward_kernel(e, g)
        close(h, torch.nn.functional.gelu(e, approximate="tanh") * g, 1e-4)

    return [("swiglu_fg_kernel", swiglu), ("geglu_exact_forward_kernel", geglu_exact),
            ("geglu_approx_forward_kernel", geglu_approx)]


# --- attorch ----------------------------------------------------------------------


def attorch_cases(root):
    def module(file, name, *args):
        return getattr(load(root, "attorch." + file), name)(*args)

    def act(cls, ref, tol=1e-5):
        def run():
            x = rand(4, 300)
            close(module("act_layers", cls)(x), ref(x), tol)
        return run

    def softmax():
        x = rand(3, 700)
        close(module("softmax_layers", "Softmax", -1)(x), torch.softmax(x, -1), 1e-5)

    def log_softmax():
        x = rand(3, 700)
        close(module("softmax_layers", "LogSoftmax", -1)(x), torch.log_softmax(x, -1), 1e-5)

    def layer_norm():
        # (attorch's LayerNorm module passes nn.LayerNorm torch 2.1's bias
        # argument: its autograd function is the same kernels.)
        x, w, b = rand(5, 200), rand(200, seed=1), rand(200, seed=2)
        f = load(root, "attorch.layer_norm_layer").LayerNormAutoGrad
        close(f.apply(x, w, b, 1e-5, True), torch.nn.functional.layer_norm(x, (200,), w, b, 1e-5), 1e-4)

    def glu():
        x = rand(4, 2, 300)
        close(module("glu_layer", "GLU", -1)(x), torch.nn.functional.glu(x, -1), 1e-5)

    def mse():
        x, y = rand(6, 100), rand(6, 100, seed=1)
        close(module("p_loss_layers", "MSELoss")(x, y), torch.nn.functional.mse_loss(x, y), 1e-5)

    def cross_entropy():
        x, t = rand(8, 300), torch.randint(0, 300, (8,), generator=torch.Generator().manual_seed(3))
        close(module("cross_entropy_loss_layer", "CrossEntropyLoss")(x, t),
              torch.nn.functional.cross_entropy(x, t), 1e-4)

    return [("ReLU", act("ReLU", torch.relu)), ("GELU", act("GELU", torch.nn.functional.gelu, 1e-4)),
            ("SiLU", act("SiLU", torch.nn.functional.silu)), ("Softmax", softmax),
            ("LogSoftmax", log_softmax), ("LayerNorm", layer_norm), ("GLU", glu),
            ("MSELoss", mse), ("CrossEntropyLoss", cross_entropy)]


# --- FlagGems ---------------------------------------------------------------------


def _flaggems_device(root):
    """What FlagGems' runtime needs to take the CPU as its device, as its
    own `_arm` backend (device "cpu") means it to: the vendor "arm" that
    backend is for, which the snapshot's `vendors` enum lacks, chosen by
    GEMS_VENDOR; torch 2's torch.backends.cpu and torch.cpu.device_count /
    device; torch.cpu.current_device() as the index torch.cuda's gives
    (torch 2's says "cpu", which FlagGems' libentry cannot index its
    per-device caches with); a CUDA compute capability of (0, 0). Nothing
    of Triton."""
    import enum
    import importlib.util
    if "torch.backends.cpu" not in sys.modules:
        backends_cpu = types.ModuleType("torch.backends.cpu")
        backends_cpu.get_cpu_capability = lambda: "AVX2"
        sys.modules["torch.backends.cpu"] = backends_cpu
        torch.backends.cpu = backends_cpu
    cpu = torch.cpu
    cpu.device_count = getattr(cpu, "device_count", lambda: 1)
    cpu.current_device = lambda: 0
    # FlagGems' mm asks the CUDA compute capability (to choose stream-K on
    # an A100): none.
    cpu.get_device_capability = lambda device=None: (0, 0)
    if not hasattr(cpu, "device"):
        class device:  # noqa: N801  (torch 2's torch.cpu.device)
            def __init__(self, d):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False
        cpu.device = device
    empty_package(root, "flag_gems")
    # What flag_gems/__init__.py (not run) sets and its modules read.
    sys.modules["flag_gems"].vendor_name = "arm"
    sys.modules["flag_gems"].device = "cpu"
    name = "flag_gems.runtime.commom_utils"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(root, "flag_gems", "runtime", "commom_utils.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        vendors = module.vendors
        every = vendors.get_all_vendors.__func__
        arm = enum.Enum("vendors", {"ARM": len(vendors)}).ARM
        vendors.get_all_vendors = classmethod(lambda cls: {**every(cls), "arm": arm})
    os.environ["GEMS_VENDOR"] = "arm"


def flaggems_cases(root):
    _flaggems_device(root)

    def op(file, name):
        return getattr(importlib.import_module("flag_gems.ops." + file), name)

    def unary(file, name, ref, tol=1e-5):
        def run():
            x = rand(5, 301)
            close(op(file, name)(x), ref(x), tol)
        return (name, run)

    def binary(file, name, ref, tol=1e-5):
        def run():
            x, y = rand(4, 257), rand(257, seed=1)  # broadcast
            close(op(file, name)(x, y), ref(x, y), tol)
        return (name, run)

    def softmax():
        x = rand(6, 1000)
        close(op("softmax", "softmax")(x, -1), torch.softmax(x, -1), 1e-5)
        close(op("softmax", "softmax")(x, 0), torch.softmax(x, 0), 1e-5)

    def log_softmax():
        x = rand(6, 700)
        close(op("log_softmax", "log_softmax")(x, -1), torch.log_softmax(x, -1), 1e-5)

    def layer_norm():
        x, w, b = rand(5, 200), rand(200, seed=1), rand(200, seed=2)
        y = op("layernorm", "layer_norm")(x, [200], w, b, 1e-5)[0]
        close(y, torch.nn.functional.layer_norm(x, (200,), w, b, 1e-5), 1e-4)

    def rms_norm():
        x, w = rand(6, 300), rand(300, seed=1)
        y = op("rms_norm", "rms_norm")(x, [300], w, 1e-6)
        close(y, x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w, 1e-4)

    def sum_all():
        x = rand(3, 1000)
        close(op("sum", "sum")(x), x.sum(), 1e-4)

    def sum_dim():
        x = rand(7, 33, 20)
        close(op("sum", "sum_dim")(x, [1]), x.sum(1), 1e-4)

    def extremum_dim(name, ref):
        def run():
            x = rand(9, 130)
            got = op(name[:3], name)(x, 1)
            close(got[0], ref(x, 1)[0], 0)
            close(got[1], ref(x, 1)[1], 0)
        return (name, run)

    def argmax():
        x = rand(11, 300)
        close(op("argmax", "argmax")(x, 1), x.argmax(1), 0)

    def cumsum():
        x = rand(4, 999)
        close(op("cumsum", "cumsum")(x, 1), x.cumsum(1), 1e-4)

    def mm():
        a, b = rand(65, 70), rand(70, 33, seed=1)
        close(op("mm", "mm")(a, b), a @ b, 1e-4)

    def bmm():
        a, b = rand(3, 20, 40), rand(3, 40, 17, seed=1)
        close(op("bmm", "bmm")(a, b), a @ b, 1e-4)

    def prod_dim():
        x = 1 + rand(5, 40) / 10
        close(op("prod", "prod_dim")(x, 1), x.prod(1), 1e-4)

    def mse_loss():
        x, y = rand(6, 100), rand(6, 100, seed=1)
        close(op("mse_loss", "mse_loss")(x, y), torch.nn.functional.mse_loss(x, y), 1e-5)

    def glu():
        x = rand(4, 2, 300)
        close(op("glu", "glu")(x, -1), torch.nn.functional.glu(x, -1), 1e-5)

    def gather():
        x = rand(10, 20)
        i = torch.randint(0, 20, (10, 5), generator=torch.Generator().manual_seed(5))
        close(op("gather", "gather")(x, 1, i), torch.gather(x, 1, i), 0)

    def cat():
        x, y = rand(3, 50), rand(4, 50, seed=1)
        close(op("cat", "cat")([x, y], 0), torch.cat([x, y], 0), 0)

    def addmm():
        bias, a, b = rand(33), rand(40, 70, seed=1), rand(70, 33, seed=2)
        close(op("addmm", "addmm")(bias, a, b), torch.addmm(bias, a, b), 1e-4)

    def embedding():
        w = rand(50, 64)
        i = torch.randint(0, 50, (3, 7), generator=torch.Generator().manual_seed(4))
        close(op("embedding", "embedding")(w, i), w[i], 0)

    def index_select():
        x = rand(40, 30)
        i = torch.tensor([3, 0, 39, 7, 7])
        close(op("index_select", "index_select")(x, 0, i), x[i], 0)

    def topk():
        x = rand(5, 300)
        values, indices = op("topk", "topk")(x, 5, -1, True, True)
        close(values, torch.topk(x, 5, -1)[0], 0)

    def triu():
        x = rand(20, 30)
        close(op("triu", "triu")(x, 1), torch.triu(x, 1), 0)

    return [
        binary("add", "add", torch.add), binary("mul", "mul", torch.mul),
        binary("div", "true_divide", torch.div, 1e-5),
        unary("exp", "exp", torch.exp), unary("relu", "relu", torch.relu),
        unary("gelu", "gelu", torch.nn.functional.gelu, 1e-4),
        unary("silu", "silu", torch.nn.functional.silu),
        unary("sigmoid", "sigmoid", torch.sigmoid), unary("tanh", "tanh", torch.tanh, 1e-5),
        ("softmax", softmax), ("log_softmax", log_softmax), ("layer_norm", layer_norm),
        ("rms_norm", rms_norm), ("sum", sum_all), ("sum_dim", sum_dim),
        extremum_dim("max_dim", torch.max), ("argmax", argmax), ("cumsum", cumsum),
        ("mm", mm), ("bmm", bmm),
        ("prod_dim", prod_dim), extremum_dim("min_dim", torch.min), ("mse_loss", mse_loss),
        # (flip: its StridedBuffer reads torch 2.1's dtype.itemsize; mean_dim,
        # amax, var_mean, vector_norm: torch 2's squeeze of a list of dims.)
        ("glu", glu), ("gather", gather), ("cat", cat), ("addmm", addmm),
        ("embedding", embedding), ("index_select", index_select), ("topk", topk), ("triu", triu),
    ]


CASES = {"Liger-Kernel": liger_cases, "unsloth": unsloth_cases, "attorch": attorch_cases,
         "FlagGems": flaggems_cases}

# Why a library has no launches here yet.
NOT_YET = {
    "flash-linear-attention": "fla.utils asserts torch >= 2.4 for any device but CUDA "
                              "('Only cuda device is supported for PyTorch version < 2.4.0') "
                              "and maps triton's target backend to a torch module of that name",
}

# The torch a library needs before any of its kernels can be reached, and
# why (Debian 12's torch is 1.13).
NEEDS_TORCH = {
    "unsloth": ((2, 1), "unsloth_zoo, which every unsloth.kernels module imports, reads "
                        "torch._inductor and torch.compile at import"),
    "flash-linear-attention": ((2, 4), NOT_YET["flash-linear-attention"]),
}


def torch_version():
    return tuple(int(p) for p in re.findall(r"\d+", torch.__version__)[:2])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json")
    parser.add_argument("-k", dest="keyword")
    args = parser.parse_args()
    rows = []
    for library, (variable, package) in LIBRARIES.items():
        root = os.environ.get(variable)
        if not root:
            print(f"{library}: not given ({variable} unset)")
            continue
        if not os.path.isdir(os.path.join(root, package)):
            print(f"{library}: {variable}={root} holds no {package}/")
            continue
        need = NEEDS_TORCH.get(library)
        if need and torch_version() < need[0]:
            print(f"{library}: not run: needs torch >= {'.'.join(map(str, need[0]))} "
                  f"(this is {torch.__version__}): {need[1]}")
            continue
        missing = [v for v, _ in DEPENDENCIES.get(library, []) if not os.environ.get(v)]
        if missing:
            print(f"{library}: not run ({', '.join(missing)} unset: a package it imports)")
            continue
        for dep_variable, dep_package in DEPENDENCIES.get(library, []):
            empty_package(os.environ[dep_variable], dep_package)
        make = CASES.get(library)
        if make is None:
            print(f"{library}: no launches yet: {NOT_YET.get(library, '')}")
            continue
        for name, run in make(root):
            if args.keyword and args.keyword not in f"{library} {name}":
                continue
            start = time.time()
            try:
                run()
                outcome, message = "passed", ""
            except AssertionError as e:
                outcome, message = ("wrong" if str(e).startswith("wrong") else "failed"), str(e)
            except Exception as e:  # a launch that raised: its first line
                outcome = "failed"
                message = f"{type(e).__name__}: {e}".split("\n")[0]
                if os.environ.get("MTLEMU_DEBUG"):
                    traceback.print_exc()
            seconds = time.time() - start
            rows.append({"library": library, "launch": name, "outcome": outcome,
                         "seconds": round(seconds, 3), "message": message})
            print(f"{library:24} {name:32} {outcome:7} {seconds:6.2f}s {message[:150]}")
    totals = {o: sum(r["outcome"] == o for r in rows) for o in ("passed", "failed", "wrong")}
    print(f"{len(rows)} launches: {totals['passed']} passed, {totals['failed']} failed, "
          f"{totals['wrong']} wrong")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"totals": totals, "launches": rows}, f, indent=1)
    return 0 if totals["failed"] == 0 and totals["wrong"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
