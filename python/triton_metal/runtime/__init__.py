"""triton_metal.runtime: jit, autotune, the driver, errors."""
from .autotuner import Autotuner, Config, Heuristics, autotune, heuristics  # noqa: F401
from .driver import driver  # noqa: F401
from .errors import (  # noqa: F401
    CompilationError, InterpreterError, KernelError, OutOfResources, TritonError)
from .jit import CompiledKernel, JITFunction, KernelInterface, jit, profile  # noqa: F401
