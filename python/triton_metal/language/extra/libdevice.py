"""libdevice's functions (tanh, pow, erf...), for kernels: mtlemu's front end
maps each to Metal's math (see compiler/triton/README.md)."""
from ..core import kernel_only


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return kernel_only("extra.libdevice." + name)
