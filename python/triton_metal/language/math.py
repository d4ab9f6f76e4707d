"""`tl.math`: the math builtins, for kernels (see `triton_metal.language`);
the names are the C++ front end's."""
from .core import module_getattr

__getattr__ = module_getattr("triton.language.math", "math.")
