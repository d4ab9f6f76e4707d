"""The emulated chip kernels run on: the process's (`set_chip("m3")`, or
TRITON_METAL_CHIP, default m1), or a block's own (`with chip("m2"):`); its
properties under Triton's names."""
import contextlib
import contextvars
import os
import threading

from .. import _core

_lock = threading.Lock()
_devices = {}
_current = None  # the process's chip, once set or first asked for
# A block's chip (`with chip(...)`), for the thread or task inside it.
_block_device = contextvars.ContextVar("triton_metal_chip", default=None)

# Registers per GPU core (the register file, 208 KB of 32-bit registers;
# ../shared/reference/apple-gpu.md), Triton's max_num_regs.
_REGISTERS_PER_CORE = 208 * 1024 // 4


def chips():
    """The chips mtlemu models: [(name, marketing name, GPU cores)]."""
    return list(_core.chips())


def set_chip(name):
    """Kernels launched from now on run on chip `name` ("m1", "m2-max"...),
    in every thread, but inside a `with chip(...)` block."""
    global _current
    device = _device_for(name)
    with _lock:
        _current = device


@contextlib.contextmanager
def chip(name):
    """with triton_metal.chip("m3"): ... launches ...

    The launches of this thread (or asyncio task) inside the block run on
    chip `name`; other threads keep theirs. A ValueError for a chip mtlemu
    does not model."""
    token = _block_device.set(_device_for(name))
    try:
        yield
    finally:
        _block_device.reset(token)


def get_chip():
    return current_device().chip


def _device_for(name):
    key = name.lower()
    with _lock:
        if key not in _devices:
            _devices[key] = _core.Device(name)  # ValueError for unknown chips
        return _devices[key]


def current_device():
    block = _block_device.get()
    if block is not None:
        return block
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
