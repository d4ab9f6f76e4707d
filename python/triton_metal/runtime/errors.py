"""The exceptions triton_metal raises."""
from .. import _core

# A kernel that does not compile: the message names file:line:col, with the
# source line, as Triton's CompilationError does.
CompilationError = _core.CompilationError


class KernelError(RuntimeError):
    """A launch that failed on the emulated GPU: an out-of-bounds access
    (the message names the kernel's Python line, the thread and the
    buffer), a failed tl.device_assert, a timeout (kind "fault",
    "timeout"); or, with TRITON_METAL_CHECK set, what the kernel checks
    found (kind "check": races, uninitialized reads, SIMD-group misuse;
    the outputs are written all the same)."""

    def __init__(self, message, kind="fault"):
        super().__init__(message)
        self.kind = kind


class OutOfResources(Exception):
    """A configuration the chip cannot run: more threadgroup memory than
    Metal's 32 KB, or more threads per threadgroup than the kernel's
    register use allows. Autotune skips configs that raise it."""
