"""`triton_metal.language`, imported as `tl`: Triton's names for kernels.

Kernels are compiled from their source by mtlemu's C++ front end, which
gives every `tl.*` builtin its meaning; here each name only has to exist.
Dtypes, `constexpr` and `cdiv` are real Python objects; any other name is a
builtin that can only be called inside a `@triton.jit` function.
"""
from . import extra, math  # noqa: F401
from .core import (  # noqa: F401
    TRITON_MAX_TENSOR_NUMEL, bfloat16, block_type, cdiv, constexpr, dtype,
    float8e4b8, float8e4b15, float8e4nv, float8e5, float8e5b16, float16,
    float32, float64, int1, int8, int16, int32, int64, kernel_only,
    pointer_type, tensor, tensor_descriptor, tuple_type, uint8, uint16,
    uint32, uint64, void)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return kernel_only(name)
