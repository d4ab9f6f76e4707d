"""The exceptions triton_metal raises, in Triton's hierarchy: TritonError
above CompilationError, OutOfResources and InterpreterError, so that code
that catches Triton's catches these."""
from .. import _core

TritonError = _core.TritonError

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


class OutOfResources(TritonError):
    """A configuration the chip cannot run: more threadgroup memory than
    Metal's 32 KB, or more threads per threadgroup than the kernel's
    register use allows. Autotune skips configs that raise it. Made with a
    message, or as Triton makes it: (required, limit, name)."""

    def __init__(self, *args):
        if len(args) == 3:
            required, limit, name = args
            self.required, self.limit, self.name = required, limit, name
            args = (f"out of resource: {name}, Required: {required}, "
                    f"Hardware limit: {limit}",)
        super().__init__(*args)


class InterpreterError(TritonError):
    """Triton's error of its interpreter mode (TRITON_INTERPRET=1), which
    triton_metal has no use for: kernels always run on the emulated GPU."""


class AutotunerError(TritonError):
    pass
