"""`tl.extra`: `libdevice` (and its `cuda`/`hip`/`intel` spellings, and
`cpu`, the one of Triton's CPU backend), for kernels."""
from . import cpu, cuda, hip, intel, libdevice  # noqa: F401
