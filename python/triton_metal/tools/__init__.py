"""triton_metal.tools: what Triton's tools offer host code."""
