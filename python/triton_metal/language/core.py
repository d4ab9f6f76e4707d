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
    """A Triton scalar type; `name` is Triton's (`fp16`, `int32`...), and
    the attributes and predicates are Triton's, for host code that asks
    them (tests, libraries choosing a path by type)."""
    SINT_TYPES = ["int8", "int16", "int32", "int64"]
    UINT_TYPES = ["int1", "uint8", "uint16", "uint32", "uint64"]
    FP_TYPES = ["fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16",
                "bf16", "fp32", "fp64"]
    STANDARD_FP_TYPES = ["fp16", "bf16", "fp32", "fp64"]
    OTHER_TYPES = ["void"]

    class KIND:
        BOOLEAN = 0
        INTEGRAL = 1
        FLOATING = 2

    class SIGNEDNESS:
        SIGNED = 0
        UNSIGNED = 1

    def __init__(self, name):
        name = _unwrap(name)
        if not dtype.is_dtype(name) and not name.startswith("*"):
            raise ValueError(f"'{name}' is not a Triton type")
        self.name = name
        self.primitive_bitwidth = _BITS.get(name, 0)
        self.itemsize = self.primitive_bitwidth // 8
        if name in dtype.SINT_TYPES or name in dtype.UINT_TYPES:
            self.int_signedness = (dtype.SIGNEDNESS.SIGNED if name in dtype.SINT_TYPES
                                   else dtype.SIGNEDNESS.UNSIGNED)
            self.int_bitwidth = _BITS[name]
            self.primitive_bitwidth = self.int_bitwidth
        elif name in dtype.FP_TYPES:
            self.fp_mantissa_width, self.exponent_bias = _FLOAT_FORMATS[name]
            self.primitive_bitwidth = _BITS[name]

    def __repr__(self):
        return f"triton.language.{self.codegen_name()}"

    def __str__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, dtype) and other.name == self.name

    def __hash__(self):
        return hash(("dtype", self.name))

    def codegen_name(self):
        return _LONG_NAMES.get(self.name, self.name)

    @property
    def cache_key_part(self):
        return self.name

    @property
    def scalar(self):
        return self

    def is_floating(self):
        return self.name in dtype.FP_TYPES

    def is_standard_floating(self):
        return self.name in dtype.STANDARD_FP_TYPES

    def is_fp8(self):
        return self.name.startswith("fp8")

    def is_int_signed(self):
        return self.name in dtype.SINT_TYPES

    def is_int_unsigned(self):
        return self.name in dtype.UINT_TYPES

    def is_int(self):
        return self.is_int_signed() or self.is_int_unsigned()

    def is_bool(self):
        return self.name == "int1"

    def kind(self):
        if self.is_bool():
            return dtype.KIND.BOOLEAN
        return dtype.KIND.INTEGRAL if self.is_int() else dtype.KIND.FLOATING

    def get_int_max_value(self):
        if self.is_int_signed():
            return 2 ** (self.int_bitwidth - 1) - 1
        if self.is_int_unsigned():
            return 2 ** self.int_bitwidth - 1
        raise TypeError(f"{self.name} is not an integer type")

    def get_int_min_value(self):
        if self.is_int_signed():
            return -2 ** (self.int_bitwidth - 1)
        if self.is_int_unsigned():
            return 0
        raise TypeError(f"{self.name} is not an integer type")

    @staticmethod
    def is_dtype(type_str):
        return type_str in (dtype.SINT_TYPES + dtype.UINT_TYPES + dtype.FP_TYPES
                            + dtype.OTHER_TYPES)

    def is_void(self):
        return self.name == "void"

    def is_block(self):
        return False

    def is_ptr(self):
        return False

    def is_const(self):
        return False

    def to_ir(self, builder):
        raise RuntimeError("dtype.to_ir: triton_metal builds no IR in Python")


def _type_predicate(type_name):
    return lambda self: self.name == type_name


# dtype.is_fp16(), is_bf16(), is_int32(), is_uint8(), is_fp8e4nv()...
for _name, _method in [("fp8e4nv", "is_fp8e4nv"), ("fp8e4b8", "is_fp8e4b8"),
                       ("fp8e4b15", "is_fp8e4b15"), ("fp8e5", "is_fp8e5"),
                       ("fp8e5b16", "is_fp8e5b16"), ("fp16", "is_fp16"),
                       ("bf16", "is_bf16"), ("fp32", "is_fp32"), ("fp64", "is_fp64"),
                       ("int1", "is_int1"), ("int8", "is_int8"), ("int16", "is_int16"),
                       ("int32", "is_int32"), ("int64", "is_int64"),
                       ("uint8", "is_uint8"), ("uint16", "is_uint16"),
                       ("uint32", "is_uint32"), ("uint64", "is_uint64")]:
    setattr(dtype, _method, _type_predicate(_name))


class pointer_type(dtype):
    def __init__(self, element_ty, address_space=1, const=False):
        super().__init__(f"*{'k' if const else ''}{element_ty.name}")
        self.element_ty = element_ty
        self.address_space = address_space
        self.const = const
        self.primitive_bitwidth = 64
        self.itemsize = 8

    def __repr__(self):
        return f"pointer<{self.element_ty}>"

    def is_ptr(self):
        return True

    def is_const(self):
        return self.const

    @property
    def scalar(self):
        return self


_BITS = {
    "int1": 1, "int8": 8, "int16": 16, "int32": 32, "int64": 64,
    "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64,
    "fp8e4nv": 8, "fp8e5": 8, "fp8e4b15": 8, "fp8e4b8": 8, "fp8e5b16": 8,
    "fp16": 16, "bf16": 16, "fp32": 32, "fp64": 64,
}
# Mantissa bits and exponent bias of each float type.
_FLOAT_FORMATS = {
    "fp8e4b15": (3, 15), "fp8e4nv": (3, 7), "fp8e4b8": (3, 8), "fp8e5": (2, 15),
    "fp8e5b16": (2, 16), "fp16": (10, 15), "bf16": (7, 127), "fp32": (23, 127),
    "fp64": (52, 1023),
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


class const:
    """The `tl.const` annotation: a pointer parameter whose data the kernel
    only reads (a store through it is a compile error)."""


class constexpr_type:
    """The type of a constexpr value (Triton's, for isinstance checks)."""

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, constexpr_type) and self.value == other.value

    def __hash__(self):
        return hash(("constexpr_type", self.value))

    def __repr__(self):
        return f"constexpr_type[{self.value!r}]"


def cdiv(x, y):
    """ceil(x / y) for integers (host code; inside kernels the C++ front end
    has its own)."""
    x, y = _unwrap(x), _unwrap(y)
    return (x + y - 1) // y


class _KernelOnly:
    """A builtin that exists only inside kernels."""

    def __init__(self, name, dotted=None):
        self.__name__ = name
        # Its full name, as the front end knows it
        # ("triton.language.standard._log2").
        self._dotted = dotted or "triton.language." + name

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
    """A block's type: its element type and shape."""

    def __init__(self, element_ty, shape):
        super().__init__(element_ty.name)
        self.element_ty = element_ty
        self.shape = tuple(_unwrap(s) for s in shape)
        self.numel = 1
        for s in self.shape:
            self.numel *= s

    def __repr__(self):
        return f"<{list(self.shape)}, {self.element_ty}>"

    def is_block(self):
        return True

    def get_block_shapes(self):
        return self.shape

    @property
    def scalar(self):
        return self.element_ty


class tuple_type:
    """A tuple's type: its element types (and field names, for named
    tuples)."""

    def __init__(self, types=(), fields=None):
        self.types = list(types)
        self.fields = fields or [""] * len(self.types)

    def __iter__(self):
        return iter(self.types)

    def __getitem__(self, i):
        return self.types[i]

    def __len__(self):
        return len(self.types)

    def __eq__(self, other):
        return isinstance(other, tuple_type) and self.types == other.types

    def __repr__(self):
        return f"({', '.join(repr(t) for t in self.types)})"


class tensor_descriptor:
    pass


def kernel_only(name, dotted=None):
    return _KernelOnly(name, dotted)


_NAMES = {}  # builtin module: the names the C++ front end gives kernels


def kernel_names(module):
    """The names `module` ("triton.language", "triton.language.math"...)
    has for kernels, from the C++ front end (builtins.def and the prelude):
    the one list of them."""
    names = _NAMES.get(module)
    if names is None:
        from .. import _core
        names = _NAMES[module] = frozenset(_core.builtin_module_names(module))
    return names


def module_getattr(module, prefix=""):
    """A module-level __getattr__ for `module`: its kernel-only builtins as
    _KernelOnly objects, an AttributeError for any other name (so that
    hasattr answers as with Triton)."""
    def __getattr__(name):
        if not name.startswith("__") and name in kernel_names(module):
            return kernel_only(prefix + name, f"{module}.{name}")
        raise AttributeError(f"module '{module}' has no attribute '{name}'")
    return __getattr__


def jit(fn=None, **kwargs):
    """`tl.core.jit`: triton.jit."""
    from ..runtime.jit import jit as _jit
    return _jit(fn, **kwargs)


def constexpr_function(fn):
    """A function of compile-time values, callable from kernels (the C++
    front end runs it) and from Python."""
    return fn


def must_use_result(x, s=True):
    """Triton's marker of builtins whose result must be used (a decorator
    here, as it is there on Python functions)."""
    if isinstance(x, str):
        return lambda fn: fn
    return x


__getattr__ = module_getattr("triton.language.core")
