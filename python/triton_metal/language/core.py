"""The names kernels use, so that a kernel module imports and reads as with
Triton. Kernels never run in Python: mtlemu's C++ front end reads their
source. What Python evaluates is what a module does at import time and on
the host: `tl.constexpr` annotations and globals, dtypes given as
arguments, `tl.cdiv` in host code."""


class constexpr:
    """A compile-time value (a `tl.constexpr` annotation, or a global made
    with `tl.constexpr(42)`)."""

    def __init__(self, value):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"

    def __index__(self):
        return self.value

    def __bool__(self):
        return bool(self.value)

    def __eq__(self, other):
        return self.value == (other.value if isinstance(other, constexpr) else other)

    def __hash__(self):
        return hash(self.value)


def _unwrap(v):
    return v.value if isinstance(v, constexpr) else v


class dtype:
    """A Triton scalar type; `name` is Triton's (`fp16`, `int32`...)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"triton.language.{_LONG_NAMES.get(self.name, self.name)}"

    def __str__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, dtype) and other.name == self.name

    def __hash__(self):
        return hash(("dtype", self.name))

    @property
    def primitive_bitwidth(self):
        return _BITS[self.name]

    def is_floating(self):
        return self.name.startswith(("fp", "bf"))

    def is_int(self):
        return self.name.startswith(("int", "uint"))

    def is_int_signed(self):
        return self.name.startswith("int")

    def is_bool(self):
        return self.name == "int1"


class pointer_type(dtype):
    def __init__(self, element_ty, address_space=1, const=False):
        super().__init__(f"*{element_ty.name}")
        self.element_ty = element_ty


_BITS = {
    "int1": 1, "int8": 8, "int16": 16, "int32": 32, "int64": 64,
    "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64,
    "fp8e4nv": 8, "fp8e5": 8, "fp8e4b15": 8, "fp8e4b8": 8, "fp8e5b16": 8,
    "fp16": 16, "bf16": 16, "fp32": 32, "fp64": 64,
}
_LONG_NAMES = {
    "int1": "int1", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32",
    "fp64": "float64", "fp8e4nv": "float8e4nv", "fp8e5": "float8e5",
    "fp8e4b15": "float8e4b15", "fp8e4b8": "float8e4b8", "fp8e5b16": "float8e5b16",
}

int1 = dtype("int1")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint16 = dtype("uint16")
uint32 = dtype("uint32")
uint64 = dtype("uint64")
float8e4nv = dtype("fp8e4nv")
float8e5 = dtype("fp8e5")
float8e4b15 = dtype("fp8e4b15")
float8e4b8 = dtype("fp8e4b8")
float8e5b16 = dtype("fp8e5b16")
float16 = dtype("fp16")
bfloat16 = dtype("bf16")
float32 = dtype("fp32")
float64 = dtype("fp64")
void = dtype("void")

TRITON_MAX_TENSOR_NUMEL = 1048576


def cdiv(x, y):
    """ceil(x / y) for integers (host code; inside kernels the C++ front end
    has its own)."""
    x, y = _unwrap(x), _unwrap(y)
    return (x + y - 1) // y


class _KernelOnly:
    """A builtin that exists only inside kernels."""

    def __init__(self, name):
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"triton.language.{self.__name__} can only be called inside a "
            "@triton.jit function")

    def __repr__(self):
        return f"<triton.language.{self.__name__}>"


class tensor:
    """The type of block values in kernels (for annotations and
    isinstance checks in kernel source; no Python object is one)."""


class block_type(dtype):
    pass


class tuple_type:
    pass


class tensor_descriptor:
    pass


def kernel_only(name):
    return _KernelOnly(name)
