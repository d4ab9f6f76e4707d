"""`triton._internal_testing`: the helpers Triton's own tests import (the
dtype lists, which backend this is, NumPy inputs, moving arrays to and from
tensors), answered for triton_metal: the backend is "metal", kernels'
tensors are torch CPU tensors."""
import os
import re

import numpy as np

int_dtypes = ["int8", "int16", "int32", "int64"]
uint_dtypes = ["uint8", "uint16", "uint32", "uint64"]
integral_dtypes = int_dtypes + uint_dtypes
float_dtypes = ["float16", "float32", "float64"]
float_dtypes_with_bfloat16 = float_dtypes + ["bfloat16"]
dtypes = integral_dtypes + float_dtypes
dtypes_with_bfloat16 = dtypes + ["bfloat16"]
torch_float8_dtypes = ["float8_e4m3fn", "float8_e5m2"]
torch_dtypes = ["bool"] + int_dtypes + ["uint8"] + float_dtypes + ["bfloat16"]
tma_dtypes = sorted(set(dtypes_with_bfloat16) - {"int64", "uint64", "float64"})


def is_interpreter():
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def get_current_target():
    from .runtime.driver import driver
    return driver.active.get_current_target()


def _backend():
    return get_current_target().backend


def is_metal():
    return _backend() == "metal"


def is_cuda():
    return _backend() == "cuda"


def is_tileir():
    return _backend() == "tileir"


def is_hip():
    return _backend() == "hip"


def is_xpu():
    return _backend() == "xpu"


def _false(*args, **kwargs):
    return False


# NVIDIA and AMD generations: never here.
(is_ampere_or_newer, is_blackwell, is_hopper_or_newer, is_hopper, is_sm12x,
 is_hip_cdna, is_hip_cdna2, is_hip_cdna3, is_hip_cdna4, is_hip_rdna3, is_hip_rdna4,
 is_hip_gfx1250, supports_tma, supports_ws) = (_false,) * 14


def get_hip_lds_size():
    return 0


def get_arch():
    return str(get_current_target().arch)


def tma_skip_msg(byval_only=False):
    return "TMA is an NVIDIA Hopper feature; Apple GPUs have none"


def _requires_tma():
    import pytest
    return pytest.mark.skipif(True, reason=tma_skip_msg())


def __getattr__(name):
    if name == "requires_tma":
        return _requires_tma()
    raise AttributeError(name)


def numpy_random(shape, dtype_str, rs=None, low=None, high=None):
    """Random inputs of `dtype_str` (seeded, 17 unless `rs` is given):
    integers over their range (or [low, high)) without zeros, so divisions
    are defined; floats normal; bfloat16 as float32 with the low 16 bits
    clear; float8 as small int8 bit patterns; bools."""
    if isinstance(shape, int):
        shape = (shape,)
    if rs is None:
        rs = np.random.RandomState(seed=17)
    if dtype_str in integral_dtypes:
        info = np.iinfo(getattr(np, dtype_str))
        low = info.min if low is None else max(low, info.min)
        high = info.max if high is None else min(high, info.max)
        x = rs.randint(low, high, shape, dtype=getattr(np, dtype_str))
        x[x == 0] = 1
        return x
    if dtype_str and "float8" in dtype_str:
        return rs.randint(20, 40, shape, dtype=np.int8)
    if dtype_str in float_dtypes:
        return rs.normal(0, 1, shape).astype(dtype_str)
    if dtype_str == "bfloat16":
        bits = rs.normal(0, 1, shape).astype("float32").view("uint32")
        return (bits & np.uint32(0xFFFF0000)).view("float32")
    if dtype_str in ("bool", "int1", "bool_"):
        return rs.normal(0, 1, shape) > 0.0
    raise RuntimeError(f"unknown dtype {dtype_str}")


def to_triton(x, device, dst_type=None):
    """A NumPy array as a torch tensor on `device`; unsigned integers and
    float8 as their bits reinterpreted (torch has no such tensors), float32
    data as bfloat16 when `dst_type` says so."""
    import torch
    from . import language as tl
    from .runtime.reinterpret import reinterpret
    t = x.dtype.name
    if t in uint_dtypes:
        signed = x.astype(getattr(np, t[1:]))
        return reinterpret(torch.tensor(signed, device=device), getattr(tl, t))
    if dst_type and "float8" in dst_type:
        return reinterpret(torch.tensor(x, device=device), getattr(tl, dst_type))
    if t == "float32" and dst_type == "bfloat16":
        return torch.tensor(x, device=device).bfloat16()
    return torch.tensor(x, device=device)


def str_to_triton_dtype(x):
    from . import language as tl
    from ._utils import type_canonicalisation_dict
    return tl.str_to_ty(type_canonicalisation_dict[x], None)


def torch_dtype_name(dtype):
    from .language import core as tlc
    if isinstance(dtype, tlc.dtype):
        return dtype.name
    match = re.match(r"^torch\.(\w+)$", str(dtype))
    if match is None:
        raise TypeError(f"not a triton or torch dtype: {type(dtype)}")
    return match.group(1)


def to_numpy(x):
    from .runtime.reinterpret import TensorWrapper
    if isinstance(x, TensorWrapper):
        return x.base.cpu().numpy().astype(getattr(np, torch_dtype_name(x.dtype)))
    if hasattr(x, "cpu"):
        import torch
        if x.dtype is torch.bfloat16:
            return x.cpu().float().numpy()
        return x.cpu().numpy()
    raise ValueError(f"not a triton-compatible tensor: {x}")


def default_alloc_fn(size, align, stream):
    import torch
    return torch.empty(size, dtype=torch.int8, device="cpu")


def unwrap_tensor(t):
    from .runtime.reinterpret import TensorWrapper
    return t.base if isinstance(t, TensorWrapper) else t


def _fresh_knobs_impl(skipped_attr=None):
    """Fresh copies of the knob sets (environment variables cleared) for a
    test, and the function that puts the old ones back."""
    import pytest
    from . import knobs
    skipped = set(skipped_attr or ())
    sets = {name: value for name, value in vars(knobs).items()
            if isinstance(value, knobs.base_knobs) and name not in skipped}
    patch = pytest.MonkeyPatch()
    unset = []
    before = knobs.propagate_env

    def fresh():
        for name, knob_set in sets.items():
            setattr(knobs, name, knob_set.copy().reset())
            for knob in knob_set.knob_descriptors.values():
                if knob.key in os.environ:
                    patch.delenv(knob.key, raising=False)
                else:
                    unset.append(knob.key)
        knobs.propagate_env = True
        return knobs

    def restore():
        for name, knob_set in sets.items():
            setattr(knobs, name, knob_set)
        patch.undo()
        for key in unset:
            os.environ.pop(key, None)
        knobs.propagate_env = before

    return fresh, restore
