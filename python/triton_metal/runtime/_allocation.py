"""triton.runtime._allocation: the allocator Triton calls at launch for a
kernel's global scratch memory (host tensor descriptors, profiling). Kernels
here need no scratch memory from the host, so the allocator is kept (per
thread or task, as Triton's context variable) and never called; tests and
libraries that set one run as with Triton."""
import contextvars


class NullAllocator:
    """The allocator in place before set_allocator: a kernel that needed
    scratch memory would fail with Triton's message."""

    def __call__(self, size, alignment, stream):
        raise RuntimeError("Kernel requires a runtime memory allocation, but no "
                           "allocator was set. Use triton.set_allocator to "
                           "specify an allocator.")


_NULL_ALLOCATOR = NullAllocator()
_allocator = contextvars.ContextVar("_allocator", default=_NULL_ALLOCATOR)


def set_allocator(allocator):
    """Sets the allocator for this thread (or task)."""
    _allocator.set(allocator)


class _AllocatorWrapper:
    """A settable holder with a context variable's get()/set()."""

    def __init__(self, allocator):
        self._allocator = allocator

    def get(self):
        return self._allocator

    def set(self, allocator):
        self._allocator = allocator

    def __call__(self, size, alignment, stream):
        return self._allocator(size, alignment, stream)


_profile_allocator = _AllocatorWrapper(_NULL_ALLOCATOR)


def set_profile_allocator(allocator):
    """The profiler's allocator (None: none)."""
    _profile_allocator.set(allocator if allocator is not None else _NULL_ALLOCATOR)
