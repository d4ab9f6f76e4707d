"""Every kernel of the project's Triton corpus (tests/compiler/triton/
kernels/corpus.py, which says `import triton`), launched through the Python
API with triton_metal standing in for triton, on NumPy arrays and on torch
tensors, with the arguments and inputs of a launch recorded on real Triton
(tests/compiler/triton/reference/corpus/*); every buffer must match what
real Triton left in it."""
import os
import sys

import numpy as np
import pytest

from conftest import REPO

REFERENCE = os.path.join(REPO, "tests", "compiler", "triton", "reference", "corpus")
KERNELS = os.path.join(REPO, "tests", "compiler", "triton", "kernels")

# As tests/compiler/triton/replay_test.cpp: floats computed by other
# hardware (transcendentals, sums in another order), integers exact.
TOLERANCE = {"fp32": (2e-4, 2e-5), "fp16": (4e-3, 2e-3), "bf16": (3e-2, 2e-2)}
NUMPY = {"fp32": np.float32, "fp16": np.float16, "int32": np.int32,
         "int64": np.int64, "int16": np.int16, "int8": np.int8,
         "uint8": np.uint8, "int1": np.bool_}


def read_manifest(case):
    m = {"args": []}
    with open(os.path.join(REFERENCE, case, "manifest.txt")) as f:
        for line in f:
            words = line.split()
            if not words:
                continue
            if words[0] == "arg":
                m["args"].append(words[1:])
            else:
                m[words[0]] = words[1:]
    return m


def constexpr_value(kind, text):
    if kind == "int":
        return int(text)
    if kind == "float":
        return float(text)
    if kind == "bool":
        return text == "True"
    if kind == "none":
        return None
    if kind == "str":
        return "" if text == "-" else text
    if kind == "dtype":
        import triton_metal.language as tl
        return tl.dtype(text)
    raise AssertionError(kind)


def corpus_module():
    from triton_metal import compat
    compat.install()
    if KERNELS not in sys.path:
        sys.path.insert(0, KERNELS)
    import corpus
    return corpus


CASES = sorted(os.listdir(REFERENCE))


@pytest.mark.parametrize("memory", ["numpy", "torch"])
@pytest.mark.parametrize("case", CASES)
def test_matches_real_triton(case, memory):
    if memory == "torch":
        pytest.importorskip("torch", reason="python3-torch is not installed")
    replay(case, memory)


def replay(case, memory):
    """Launches `case` on NumPy arrays or torch tensors; AssertionError
    where a buffer differs from what real Triton left in it."""
    if memory == "torch":
        import torch
    corpus = corpus_module()
    m = read_manifest(case)
    kernel = getattr(corpus, m["kernel"][0])
    args, buffers = {}, {}
    for a in m["args"]:
        name, kind = a[0], a[1]
        if kind == "buffer":
            data = np.load(os.path.join(REFERENCE, case, name + ".in.npy"))
            data = np.ascontiguousarray(data.astype(NUMPY[a[2]], copy=False))
            buffers[name] = (a[2], data)
            args[name] = torch.from_numpy(data) if memory == "torch" else data
        elif kind == "constexpr":
            args[name] = constexpr_value(a[2], a[3])
        elif kind == "int":
            args[name] = int(a[2])
        elif kind == "float":
            args[name] = float(a[2])
        elif kind == "bool":
            args[name] = a[2] == "True"
        elif kind == "none":
            args[name] = None
        else:
            raise AssertionError(a)
    grid = tuple(int(g) for g in m["grid"])
    kernel[grid](**args, num_warps=int(m["num_warps"][0]))
    for name, (dtype, data) in buffers.items():
        out = os.path.join(REFERENCE, case, name + ".out.npy")
        if not os.path.exists(out):
            continue  # the launch did not change it on Triton either
        want = np.load(out)
        if dtype in TOLERANCE:
            rtol, atol = TOLERANCE[dtype]
            np.testing.assert_allclose(data.astype(np.float64), want.astype(np.float64),
                                       rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
        else:
            np.testing.assert_array_equal(data, want.astype(data.dtype), err_msg=name)
