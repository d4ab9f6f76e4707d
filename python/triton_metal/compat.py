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
    on torch.cpu, fp16 matmul."""
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
    _half_matmul(torch)


def _half_matmul(torch):
    """Older torch (Debian 12's 1.13) has no fp16 matmul on the CPU, which
    scripts use for their reference results: there it is computed in
    float32 and rounded to fp16."""
    a = torch.ones(2, 2, dtype=torch.float16)
    try:
        torch.matmul(a, a)
        return
    except RuntimeError:
        pass
    matmul = torch.matmul

    def half_matmul(x, y, *args, **kwargs):
        if getattr(x, "dtype", None) == torch.float16 or getattr(y, "dtype", None) == torch.float16:
            out = matmul(x.float(), y.float(), *args, **kwargs)
            return out.to(torch.float16)
        return matmul(x, y, *args, **kwargs)

    torch.matmul = half_matmul
    torch.Tensor.__matmul__ = lambda x, y: half_matmul(x, y)
