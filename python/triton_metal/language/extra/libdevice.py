"""libdevice's functions (tanh, pow, erf...), for kernels: mtlemu's front end
maps each to Metal's math (see compiler/triton/README.md)."""
from ..core import module_getattr

__getattr__ = module_getattr("triton.language.extra.libdevice", "extra.libdevice.")
