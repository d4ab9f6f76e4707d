"""The emulated chip kernels run on: `set_chip("m3")`, or TRITON_METAL_CHIP
(default m1); its properties under Triton's names."""
import os
import threading

from .. import _core

_lock = threading.Lock()
_devices = {}
_current = None

# Registers per GPU core (the register file, 208 KB of 32-bit registers;
# ../shared/reference/apple-gpu.md), Triton's max_num_regs.
_REGISTERS_PER_CORE = 208 * 1024 // 4


def chips():
    """The chips mtlemu models: [(name, marketing name, GPU cores)]."""
    return list(_core.chips())


def set_chip(name):
    """Kernels launched from now on run on chip `name` ("m1", "m2-max"...)."""
    global _current
    device = _device_for(name)
    with _lock:
        _current = device


def get_chip():
    return current_device().chip


def _device_for(name):
    key = name.lower()
    with _lock:
        if key not in _devices:
            _devices[key] = _core.Device(name)  # ValueError for unknown chips
        return _devices[key]


def current_device():
    global _current
    if _current is None:
        device = _device_for(os.environ.get("TRITON_METAL_CHIP", "m1"))
        with _lock:
            if _current is None:
                _current = device
    return _current


def get_device_properties(device=None):
    """Triton's device-properties dict for the current chip."""
    props = dict(current_device().properties())
    props["max_num_regs"] = _REGISTERS_PER_CORE
    return props
