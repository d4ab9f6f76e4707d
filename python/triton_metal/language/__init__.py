"""`triton_metal.language`, imported as `tl`: Triton's names for kernels.

Kernels are compiled from their source by mtlemu's C++ front end, which
gives every `tl.*` builtin its meaning; here each name only has to exist.
Dtypes, `constexpr` and `cdiv` are real Python objects; the other names are
the builtins the C++ front end has (its list, `_core.builtin_module_names`),
which can only be called inside a `@triton.jit` function; a name it does
not have is an AttributeError, so `hasattr(tl, NAME)` tells what exists.
"""
from . import core, extra, math, standard  # noqa: F401
from .core import (  # noqa: F401
    TRITON_MAX_TENSOR_NUMEL, bfloat16, block_type, cdiv, constexpr, dtype,
    float8e4b8, float8e4b15, float8e4nv, float8e5, float8e5b16, float16,
    float32, float64, int1, int8, int16, int32, int64, kernel_only,
    pointer_type, tensor, tensor_descriptor, tuple_type, uint8, uint16,
    uint32, uint64, void, constexpr_function, must_use_result, const,
    constexpr_type)

pi32_t = pointer_type(int32)


# Triton's short type names (as signatures and type_canonicalisation_dict
# spell them) to dtypes.
_SHORT_NAMES = {
    "fp8e4nv": float8e4nv, "fp8e4b8": float8e4b8, "fp8e5": float8e5,
    "fp8e5b16": float8e5b16, "fp8e4b15": float8e4b15, "fp16": float16,
    "bf16": bfloat16, "fp32": float32, "fp64": float64, "i1": int1, "i8": int8,
    "i16": int16, "i32": int32, "i64": int64, "u1": int1, "u8": uint8,
    "u16": uint16, "u32": uint32, "u64": uint64, "B": int1, "void": void,
}


def str_to_ty(name, c=None):
    """The dtype a signature string names: "fp16", "i32", "*fp32" (a
    pointer), "*kfp32" (a pointer to constant data), "constexpr"."""
    if isinstance(name, tuple):
        return tuple_type([str_to_ty(x, c) for x in name])
    if name.startswith("*"):
        const = name.startswith("*k")
        return pointer_type(str_to_ty(name[2:] if const else name[1:], c), const=const)
    if name.startswith("constexpr"):
        return constexpr(c)
    if name not in _SHORT_NAMES:
        raise KeyError(f"'{name}' is not a Triton type name")
    return _SHORT_NAMES[name]


__getattr__ = core.module_getattr("triton.language")
