"""Kernel arguments from Python values: NumPy arrays and torch tensors are
pointers to their own memory (no copy; a torch tensor's buffer is its
whole storage, a NumPy view's the span of memory it covers, so the kernel
sees the bytes and strides a GPU would); numbers are typed as Triton
types them."""
from ..language import core as tlc
from .reinterpret import TensorWrapper

_NUMPY_DTYPES = {
    "float32": "fp32", "float16": "fp16", "int32": "int32", "int64": "int64",
    "int16": "int16", "int8": "int8", "uint8": "uint8", "uint16": "uint16",
    "uint32": "uint32", "uint64": "uint64", "bool": "int1",
}
_TORCH_DTYPES = {
    "torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16",
    "torch.int32": "int32", "torch.int64": "int64", "torch.int16": "int16",
    "torch.int8": "int8", "torch.uint8": "uint8", "torch.bool": "int1",
    "torch.uint16": "uint16", "torch.uint32": "uint32", "torch.uint64": "uint64",
}
# What Apple GPUs cannot hold, and what to do instead.
_UNSUPPORTED = {
    "float64": "Apple GPUs have no float64; convert it to float32 first",
    "torch.float64": "Apple GPUs have no float64; convert it to float32 first",
    "complex64": "complex numbers are not a Triton type",
    "complex128": "complex numbers are not a Triton type",
    "torch.complex64": "complex numbers are not a Triton type",
    "torch.complex128": "complex numbers are not a Triton type",
}

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1
_UINT64_MAX = 2 ** 64 - 1


class Pointer:
    """A pointer argument: the memory span [start, start + nbytes) and the
    kernel's pointer, `offset` bytes into it."""
    __slots__ = ("dtype", "start", "nbytes", "offset", "owner")

    def __init__(self, dtype, start, nbytes, offset, owner):
        self.dtype = dtype
        self.start = start
        self.nbytes = nbytes
        self.offset = offset
        self.owner = owner  # keeps the memory alive during the launch


def _span(data, shape, strides, itemsize):
    """(start, nbytes, offset of `data`) of the memory a strided view
    covers."""
    lo = hi = 0
    for n, st in zip(shape, strides):
        if n == 0:
            return data, 0, 0
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    return data + lo, hi - lo + itemsize, -lo


_numpy_dtype_cache = {}


def _numpy_pointer(name, a):
    dtype = _numpy_dtype_cache.get(a.dtype)
    if dtype is None:
        key = a.dtype.name
        dtype = _NUMPY_DTYPES.get(key)
        if dtype is None or a.dtype.byteorder == ">":
            why = _UNSUPPORTED.get(key, "not a type Triton kernels take")
            if dtype is not None:
                why = "big-endian data; use a native (little-endian) array"
            raise TypeError(f"argument '{name}': a NumPy array of {key}: {why}")
        _numpy_dtype_cache[a.dtype] = dtype
    data = a.__array_interface__["data"][0]
    if a.flags.c_contiguous:
        return Pointer(dtype, data, a.nbytes, 0, a)
    start, nbytes, offset = _span(data, a.shape, a.strides, a.itemsize)
    return Pointer(dtype, start, nbytes, offset, a)


def _torch_pointer(name, t):
    key = str(t.dtype)
    dtype = _TORCH_DTYPES.get(key)
    if dtype is None:
        why = _UNSUPPORTED.get(key, "not a type Triton kernels take")
        raise TypeError(f"argument '{name}': a tensor of {key}: {why}")
    if t.device.type != "cpu":
        raise TypeError(
            f"argument '{name}': a tensor on {t.device}; triton_metal runs "
            "kernels on tensors in host memory (device='cpu')")
    # The whole storage, as a GPU buffer is the whole allocation: a kernel
    # may reach past its view (a stride-0 view it indexes along, a row
    # before it) and stay inside the memory it was given.
    data = t.data_ptr()
    storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    start, nbytes = storage.data_ptr(), storage.nbytes()
    if nbytes and start <= data <= start + nbytes:
        return Pointer(dtype, start, nbytes, data - start, t)
    size = t.element_size()
    strides = [s * size for s in t.stride()]
    start, nbytes, offset = _span(data, t.shape, strides, size)
    return Pointer(dtype, start, nbytes, offset, t)


def _pointer_like(name, value):
    """Something else Triton takes as a pointer: an object with data_ptr()
    and a dtype (a library's typed pointer or strided buffer). The
    emulator needs the memory it may reach: the storage it names
    (untyped_storage() with data_ptr() and nbytes()), else the span its
    shape and stride() cover."""
    dtype_name = str(value.dtype)
    dtype = _TORCH_DTYPES.get(dtype_name) or _TORCH_DTYPES.get("torch." + dtype_name)
    if dtype is None and isinstance(value.dtype, tlc.dtype):
        dtype = value.dtype.name
    if dtype is None:
        why = _UNSUPPORTED.get(dtype_name, "not a type Triton kernels take")
        raise TypeError(f"argument '{name}': a pointer to {dtype_name}: {why}")
    data = int(value.data_ptr())
    try:
        storage = value.untyped_storage()
        start, nbytes = int(storage.data_ptr()), int(storage.nbytes())
    except Exception:  # no storage it can name: its shape and strides
        start = None
    if start is not None and start <= data <= start + nbytes:
        return Pointer(dtype, start, nbytes, data - start, value)
    shape = getattr(value, "shape", None)
    stride = getattr(value, "stride", None)
    if shape is None or not callable(stride):
        raise TypeError(
            f"argument '{name}': a {type(value).__module__}.{type(value).__name__} "
            "(data_ptr() and dtype) whose memory triton_metal cannot bound: give it "
            "untyped_storage() (with data_ptr() and nbytes()), or shape and stride()")
    size = tlc.dtype(dtype).primitive_bitwidth // 8 if dtype != "int1" else 1
    strides = [s * size for s in stride()]
    start, nbytes, offset = _span(data, tuple(shape), strides, size)
    return Pointer(dtype, start, nbytes, offset, value)


def _reinterpreted(name, w):
    """A TensorWrapper: its base's memory, as elements of its dtype (of the
    same width)."""
    p = classify(name, w.base)
    if not isinstance(p, Pointer):
        raise TypeError(f"argument '{name}': reinterpret() of something that is not an array")
    want = tlc.dtype(w.dtype.name) if isinstance(w.dtype, tlc.dtype) else None
    if want is None:
        raise TypeError(f"argument '{name}': reinterpret() to {w.dtype!r}, not a Triton dtype")
    if want.primitive_bitwidth != tlc.dtype(p.dtype).primitive_bitwidth:
        raise TypeError(f"argument '{name}': reinterpret() of {p.dtype} data as "
                        f"{want.name}, which is not as wide")
    p.dtype = want.name
    return p


def classify(name, value):
    """What a launch passes for `value`: a Pointer, or (kind, value) with
    kind "int", "float", "bool", "none", "str", "dtype", "tuple" (of such
    pairs) and the value as the C++ front end takes it. TypeError for what
    a kernel cannot take; OverflowError for an integer beyond 64 bits."""
    t = type(value)
    if t is bool:
        return ("bool", value)
    if t is int:
        if not _INT64_MIN <= value <= _UINT64_MAX:
            raise OverflowError(
                f"argument '{name}': {value} does not fit in a 64-bit "
                "integer (int64 or uint64)")
        return ("int", value)
    if t is float:
        return ("float", value)
    if value is None:
        return ("none", None)
    if t is str:
        return ("str", value)
    if t is tuple or t is list or (isinstance(value, tuple) and hasattr(value, "_fields")):
        # A tuple of constants (a shape given to a tl.constexpr parameter).
        return ("tuple", tuple(_constant(name, v) for v in value))
    if isinstance(value, tlc.constexpr):
        return classify(name, value.value)
    if isinstance(value, tlc.dtype):
        return ("dtype", value.name)
    if isinstance(value, TensorWrapper):
        return _reinterpreted(name, value)
    module = t.__module__
    if module == "numpy":
        if hasattr(value, "__array_interface__") and t.__name__ == "ndarray":
            return _numpy_pointer(name, value)
        import numpy as np
        if isinstance(value, np.bool_):
            return ("bool", bool(value))
        if isinstance(value, np.integer):
            return classify(name, int(value))
        if isinstance(value, np.floating):
            if isinstance(value, np.float64):
                return ("float", float(value))
            return ("float", float(value))
        if isinstance(value, np.dtype):
            return classify(name, value.type)
    if module.startswith("torch"):
        if hasattr(value, "data_ptr"):
            return _torch_pointer(name, value)
        key = str(value)
        if key in _TORCH_DTYPES:
            return ("dtype", _TORCH_DTYPES[key])
    if isinstance(value, type) and value.__module__ == "numpy":
        import numpy as np
        key = np.dtype(value).name
        if key in _NUMPY_DTYPES:
            return ("dtype", _NUMPY_DTYPES[key])
    if t.__name__ == "TensorDescriptor":
        raise TypeError(
            f"argument '{name}': a host TensorDescriptor (a TMA feature of "
            "NVIDIA Hopper); pass the tensor and build the descriptor in the "
            "kernel with tl.make_tensor_descriptor")
    if hasattr(value, "__array_interface__"):
        import numpy as np
        return _numpy_pointer(name, np.asarray(value))
    if callable(getattr(value, "data_ptr", None)) and hasattr(value, "dtype"):
        return _pointer_like(name, value)
    raise TypeError(
        f"argument '{name}': a {t.__module__}.{t.__name__} is not something "
        "a Triton kernel takes (give an array, a tensor, a number, a bool, "
        "None, a string or a dtype)")


def _constant(name, value):
    """An item of a tuple argument: a constant (int, float, bool, None,
    str, dtype, tuple); a tensor in a tuple is not taken yet."""
    c = classify(name, value)
    if isinstance(c, Pointer):
        raise TypeError(
            f"argument '{name}': a tuple holding an array or tensor is not "
            "taken yet (triton_metal takes tuples of constants: ints, floats, "
            "bools, None, strings, dtypes)")
    return c


def int_type(value):
    """The type Triton gives an integer argument: i32, i64, else u64."""
    if _INT32_MIN <= value <= _INT32_MAX:
        return "i32"
    return "i64" if value <= _INT64_MAX else "u64"


def specialization(kind, value):
    """The part of a compiled kernel's cache key a non-constexpr argument
    decides, as Triton specializes: integers equal to 1 or divisible by 16,
    and their width."""
    if kind == "int":
        return ("int", value == 1, value % 16 == 0, int_type(value))
    if kind == "tuple":
        return (kind, value)  # folded into the code, as a constexpr is
    return (kind,)
