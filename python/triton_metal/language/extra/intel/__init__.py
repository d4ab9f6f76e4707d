"""The intel spelling of `tl.extra.libdevice`."""
from . import libdevice  # noqa: F401
