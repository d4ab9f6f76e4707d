#!/usr/bin/python3
"""Launches kernels and host functions of Triton libraries nobody here
wrote, unchanged, on triton_metal with torch CPU tensors, and checks each
result against torch's own computation (in float32/float64): prints, per
library, which launches ran right, which raised and which gave wrong
numbers, and the totals.

    MTLEMU_LIGER_KERNEL=.../Liger-Kernel/src MTLEMU_UNSLOTH=.../unsloth \\
    MTLEMU_ATTORCH=.../attorch MTLEMU_FLAGGEMS=.../FlagGems/src \\
    MTLEMU_FLA=.../flash-linear-attention \\
        python3 bench/triton_libraries.py [--json OUT.json] [-k SUBSTRING]

Each variable is a checkout's folder that holds the library's package
(nothing of it is kept here); a library whose variable is unset is listed
as not given. The packages are imported without running their
`__init__.py` (which asks for CUDA or torch >= 2 in most of them): their
modules are loaded from the folder under parent packages made empty, as
`import liger_kernel.ops.rms_norm` would find them. `import triton` is
triton_metal (triton_metal.compat.install). Needs the build's package:
PYTHONPATH=build/python."""
import argparse
import importlib
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


def load(root, dotted):
    """Module `dotted` from the folder `root`, its parent packages made
    empty (their __init__.py is not run) unless already loaded."""
    parts = dotted.split(".")
    for i in range(1, len(parts)):
        name = ".".join(parts[:i])
        if name not in sys.modules:
            package = types.ModuleType(name)
            package.__path__ = [os.path.join(root, *parts[:i])]
            # The one name modules read from their package: its version.
            init = os.path.join(package.__path__[0], "__init__.py")
            if os.path.isfile(init):
                found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]",
                                  open(init, encoding="utf-8").read(), re.MULTILINE)
                if found:
                    package.__version__ = found.group(1)
            sys.modules[name] = package
            if i > 1:
                setattr(sys.modules[".".join(parts[:i - 1])], parts[i - 1], package)
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


CASES = {"Liger-Kernel": liger_cases, "unsloth": unsloth_cases, "attorch": attorch_cases}

# Why a library has no launches here yet.
NOT_YET = {
    "FlagGems": "its runtime picks a GPU vendor by running nvidia-smi and the like, and "
                "makes its tensors on that vendor's torch device",
    "flash-linear-attention": "fla.utils maps triton's target backend ('metal') to a torch "
                              "module of that name (getattr(torch, 'metal'))",
}


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
