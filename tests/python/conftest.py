"""pytest set-up for the triton_metal package's tests: CTest runs them with
PYTHONPATH=build/python; each test gets its own autotune cache directory."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_METAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRITON_METAL_DEBUG", raising=False)
    monkeypatch.delenv("TRITON_METAL_CHIP", raising=False)
    import triton_metal
    triton_metal.set_chip("m1")
    yield
    triton_metal.set_chip("m1")
