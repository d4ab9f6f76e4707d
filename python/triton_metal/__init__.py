"""triton_metal: Triton kernels on mtlemu's model of Apple's M1, M2 and M3
GPUs, from Python, on NumPy arrays and torch CPU tensors.

    import triton_metal
    import triton_metal.language as tl

    @triton_metal.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr): ...

    add_kernel[(triton_metal.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)

`python3 -m triton_metal run script.py` runs an unmodified Triton script
with `import triton` meaning this package; `python3 -m triton_metal check`
checks the installation.
"""
from . import _core  # noqa: F401  (the C++ core)
from . import language  # noqa: F401
from .language.core import cdiv, constexpr_function, must_use_result  # noqa: F401
from .runtime import (  # noqa: F401
    Autotuner, CompilationError, Config, Heuristics, InterpreterError,
    JITFunction, KernelError, KernelInterface, OutOfResources, TritonError,
    autotune, heuristics, jit, profile)
from .runtime._allocation import set_allocator  # noqa: F401
from .runtime.reinterpret import TensorWrapper, reinterpret  # noqa: F401
from . import knobs  # noqa: F401
from .runtime.device import chip, chips, get_chip, get_device_properties, set_chip  # noqa: F401
from .runtime.launch_context import kernel_checks  # noqa: F401
from . import runtime, testing  # noqa: F401

__version__ = "3.6.0+mtlemu"


def next_power_of_2(n):
    """The smallest power of two >= n (1 for n <= 1)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()
