# Writes expected.npy: out[i] = i * 2.5 - 1 in float32, computed by NumPy
# (independently of mtlemu). Run: python3 make_expected.py
import numpy as np

i = np.arange(1000, dtype=np.float32)
np.save("expected.npy", (i * np.float32(2.5) + np.float32(-1)).astype(np.float32))
