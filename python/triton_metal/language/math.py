"""`tl.math`: the math builtins, for kernels (see `triton_metal.language`)."""
from .core import kernel_only


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return kernel_only("math." + name)
