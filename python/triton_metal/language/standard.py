"""`triton.language.standard`: the functions Triton writes in the Triton
language (sum, argmax, softmax, sort, zeros_like, _log2...), for kernels:
mtlemu's prelude (compiler/triton/frontend/prelude/standard.py) defines
them, and the names are the C++ front end's."""
from .core import module_getattr

__getattr__ = module_getattr("triton.language.standard")
