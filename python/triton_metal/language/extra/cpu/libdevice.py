"""`tl.extra.cpu.libdevice`: the same functions as `tl.extra.libdevice`."""
from ..libdevice import __getattr__  # noqa: F401
