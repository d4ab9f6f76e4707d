"""`tl.extra`: `libdevice` (and its `cuda`/`hip` spellings), for kernels."""
from . import cuda, hip, libdevice  # noqa: F401
