"""triton.tools.tensor_descriptor, for scripts that import it. Host-built
descriptors are a Hopper feature (TMA); a kernel here takes the tensor and
builds its descriptor inside with tl.make_tensor_descriptor, which is
supported. Passing a TensorDescriptor to a kernel is a TypeError that says
so."""
from dataclasses import dataclass
from typing import Any, List


@dataclass
class TensorDescriptor:
    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    padding: str = "zero"

    @staticmethod
    def from_tensor(tensor, block_shape, padding="zero"):
        return TensorDescriptor(tensor, list(tensor.shape), list(tensor.stride()),
                                list(block_shape), padding)
