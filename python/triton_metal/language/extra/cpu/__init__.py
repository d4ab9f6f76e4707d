"""The spelling of `tl.extra.libdevice` that Triton's CPU backend
(triton-cpu) gives, which libraries written for it import."""
from . import libdevice  # noqa: F401
