"""triton_metal standing in for triton: after install(), `import triton`,
`import triton.language as tl`, `from triton.language.extra import
libdevice`, `triton.testing`, `triton.runtime.driver` resolve to this
package, so that a Triton script runs unmodified (`python3 -m triton_metal
run script.py` calls install() first). Triton modules this package does not
have fail to import with a message naming them."""
import importlib
import importlib.abc
import importlib.util
import sys


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds triton.X as triton_metal.X."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "triton" and not fullname.startswith("triton."):
            return None
        real = "triton_metal" + fullname[len("triton"):]
        if importlib.util.find_spec(real) is None:
            raise ImportError(
                f"No module named '{fullname}': triton_metal stands in for "
                f"triton here and has no '{real}'")
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        real = "triton_metal" + spec.name[len("triton"):]
        return importlib.import_module(real)

    def exec_module(self, module):
        pass


_installed = False


def install():
    """Makes `triton` mean triton_metal in this process, and gives CPU-only
    torch what Triton scripts call on it: torch.cuda.synchronize, streams
    on torch.cpu, the fp16 ops old CPU torch lacks, cuBLAS's bf16 flag."""
    global _installed
    if _installed:
        return
    _installed = True
    if "triton" in sys.modules and not sys.modules["triton"].__name__.startswith("triton_metal"):
        raise RuntimeError("the real triton is already imported in this process")
    sys.meta_path.insert(0, _Alias())
    try:
        import torch
    except ImportError:
        return
    if not torch.cuda.is_available():
        torch.cuda.synchronize = lambda *a, **k: None
    # Scripts select a stream on their device's module (torch.cpu here);
    # older torch has none for the CPU.
    cpu = getattr(torch, "cpu", None)
    if cpu is not None and not hasattr(cpu, "Stream"):
        class Stream:
            def __init__(self, *args, **kwargs):
                pass

            def synchronize(self):
                pass

        cpu.Stream = Stream
        cpu.set_stream = lambda stream: None
        cpu.current_stream = lambda device=None: Stream()
        cpu.synchronize = getattr(cpu, "synchronize", lambda device=None: None)
    _half_fallbacks(torch)
    _cublas_flags(torch)


def _cublas_flags(torch):
    """torch.backends.cuda.matmul's allow_bf16_reduced_precision_reduction,
    which scripts set around their reference matmuls and torch 1.13 has not
    (its cuBLASModule raises AssertionError for any other name): kept as a
    flag, as it has no effect on CPU matmuls in any torch."""
    backends = getattr(torch.backends, "cuda", None)
    matmul = getattr(backends, "matmul", None)
    if matmul is None:
        return
    name = "allow_bf16_reduced_precision_reduction"
    try:
        getattr(matmul, name)
        return
    except (AssertionError, AttributeError, RuntimeError):
        pass
    flags = {name: True}  # torch 2's default

    class Flags(type(matmul)):
        def __getattr__(self, attr):
            return flags[attr] if attr in flags else super().__getattr__(attr)

        def __setattr__(self, attr, value):
            if attr in flags:
                flags[attr] = bool(value)
            else:
                super().__setattr__(attr, value)

    backends.matmul = Flags()


def _half_fallbacks(torch):
    """Older torch (Debian 12's 1.13) lacks some fp16 ops on the CPU that
    scripts use for their reference results (matmul, layer_norm, clamp...): where
    one raises "not implemented for 'Half'", it is computed in float32 and
    rounded to fp16 (autograd follows the conversions). Its bfloat16
    matmul on CPUs without AVX512-BF16 sums in bfloat16 (0.07 off at K=16,
    where a GPU's, summing in float32, is within half an ulp): a matmul of
    bfloat16 tensors is computed in float32 and rounded, as on a GPU."""
    import functools

    def to(args, old, new):
        return [a.to(new) if isinstance(a, torch.Tensor) and a.dtype == old else a
                for a in args]

    def widened(fn, args, kwargs, old):
        out = fn(*to(args, old, torch.float32),
                 **dict(zip(kwargs, to(kwargs.values(), old, torch.float32))))
        return out.to(old) if isinstance(out, torch.Tensor) else out

    def fallback(fn, products):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if products and "out" not in kwargs and any(
                    isinstance(a, torch.Tensor) and a.dtype == torch.bfloat16 for a in args):
                return widened(fn, args, kwargs, torch.bfloat16)
            try:
                return fn(*args, **kwargs)
            except RuntimeError as e:
                if "not implemented for 'Half'" not in str(e):
                    raise
            return widened(fn, args, kwargs, torch.float16)
        return wrapper

    for owner, name, products in ((torch, "matmul", True), (torch, "mm", True),
                                  (torch, "bmm", True),
                                  (torch.nn.functional, "layer_norm", False),
                                  (torch.nn.functional, "softmax", False),
                                  (torch, "softmax", False)):
        setattr(owner, name, fallback(getattr(owner, name), products))
    matmul = torch.matmul
    torch.Tensor.__matmul__ = lambda x, y: matmul(x, y)
    for name in ("clamp", "clamp_min", "clamp_max"):
        setattr(torch.Tensor, name, fallback(getattr(torch.Tensor, name), False))
        setattr(torch, name, fallback(getattr(torch, name), False))

    def in_place(fn):
        # x.clamp_(...) on fp16: computed in float32, written back rounded.
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            try:
                return fn(self, *args, **kwargs)
            except RuntimeError as e:
                if "not implemented for 'Half'" not in str(e) or self.dtype != torch.float16:
                    raise
            return self.copy_(fn(self.float(), *args, **kwargs))
        return wrapper

    for name in ("clamp_", "clamp_min_", "clamp_max_"):
        setattr(torch.Tensor, name, in_place(getattr(torch.Tensor, name)))
