"""`triton.reinterpret(tensor, dtype)`: a tensor's memory seen by kernels
as another element type of the same width (uint8 data in an int8 tensor,
fp8 in uint8), as `TensorWrapper` (triton.runtime.jit's names)."""


class TensorWrapper:
    """`base` (a torch tensor or NumPy array) whose elements kernels read
    and write as `dtype` (a triton dtype)."""

    def __init__(self, base, dtype):
        self.dtype = dtype
        self.base = base
        self.data = getattr(base, "data", base)
        self.device = getattr(base, "device", "cpu")
        self.shape = base.shape

    def data_ptr(self):
        return self.base.data_ptr()

    def stride(self, *args):
        return self.base.stride(*args)

    def element_size(self):
        return self.base.element_size()

    def numel(self):
        return self.base.numel()

    def dim(self):
        return self.base.dim()

    def size(self, *args):
        return self.base.size(*args)

    def cpu(self):
        return TensorWrapper(self.base.cpu(), self.dtype)

    def copy_(self, other):
        self.base.copy_(other.base if isinstance(other, TensorWrapper) else other)

    def clone(self):
        return TensorWrapper(self.base.clone(), self.dtype)

    def to(self, device):
        return TensorWrapper(self.base.to(device), self.dtype)

    def new_empty(self, sizes):
        return TensorWrapper(self.base.new_empty(sizes), self.dtype)

    def __str__(self):
        return f"TensorWrapper[{self.dtype}]({self.base})"


def reinterpret(tensor, dtype):
    """`tensor` seen as `dtype`: a TensorWrapper, or the base tensor again
    where `dtype` is its own type."""
    if isinstance(tensor, TensorWrapper):
        if dtype == tensor.base.dtype:
            return tensor.base
        return TensorWrapper(tensor.base, dtype)
    if hasattr(tensor, "data_ptr") or hasattr(tensor, "__array_interface__"):
        return TensorWrapper(tensor, dtype)
    raise TypeError(f"cannot reinterpret a {type(tensor).__name__}")
