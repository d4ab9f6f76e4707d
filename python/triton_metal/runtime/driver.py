"""`triton.runtime.driver.active`, as much of it as host code uses: the
torch device kernels' tensors live on (the CPU: the emulated GPU shares
host memory), the device's properties, the target."""
from . import device as _device


class GPUTarget:
    def __init__(self, backend, arch, warp_size):
        self.backend = backend
        self.arch = arch
        self.warp_size = warp_size

    def __repr__(self):
        return f"GPUTarget(backend={self.backend!r}, arch={self.arch!r}, warp_size={self.warp_size})"


class _Utils:
    def get_device_properties(self, device=None):
        return _device.get_device_properties(device)


class _ActiveDriver:
    utils = _Utils()

    def get_active_torch_device(self):
        import torch
        return torch.device("cpu")

    def get_current_device(self):
        return 0

    def set_current_device(self, device):
        pass

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return GPUTarget("metal", _device.get_chip(), 32)

    def get_device_interface(self):
        import torch
        return torch.cpu if hasattr(torch, "cpu") else None

    def get_empty_cache_for_benchmark(self):
        import numpy as np
        return np.empty(0, dtype=np.int32)


class _Driver:
    active = _ActiveDriver()


driver = _Driver()
