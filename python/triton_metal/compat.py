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
    on torch.cpu, the fp16 ops old CPU torch lacks."""
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


def _half_fallbacks(torch):
    """Older torch (Debian 12's 1.13) lacks some fp16 ops on the CPU that
    scripts use for their reference results (matmul, layer_norm...): where
    one raises "not implemented for 'Half'", it is computed in float32 and
    rounded to fp16 (autograd follows the conversions)."""
    import functools

    def to(args, dtype):
        return [a.to(dtype) if isinstance(a, torch.Tensor) and a.dtype == torch.float16
                else a for a in args]

    def fallback(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except RuntimeError as e:
                if "not implemented for 'Half'" not in str(e):
                    raise
            out = fn(*to(args, torch.float32),
                     **dict(zip(kwargs, to(kwargs.values(), torch.float32))))
            return out.to(torch.float16) if isinstance(out, torch.Tensor) else out
        return wrapper

    for owner, name in ((torch, "matmul"), (torch, "mm"), (torch, "bmm"),
                        (torch.nn.functional, "layer_norm"),
                        (torch.nn.functional, "softmax"), (torch, "softmax")):
        setattr(owner, name, fallback(getattr(owner, name)))
    matmul = torch.matmul
    torch.Tensor.__matmul__ = lambda x, y: matmul(x, y)
