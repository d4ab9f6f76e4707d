"""mtlemu: Metal compute kernels from Python, on mtlemu's models of Apple's
M1, M2 and M3 GPUs, on Linux.

    import numpy as np, mtlemu
    device = mtlemu.Device("m2")
    library = device.new_library_with_source(source)
    state = device.new_compute_pipeline_state(library.new_function("add"))
    x = np.arange(1024, dtype=np.float32)
    buffer = device.new_buffer_with_bytes_no_copy(x)
    commands = device.new_command_queue().command_buffer()
    encoder = commands.compute_command_encoder()
    encoder.set_compute_pipeline_state(state)
    encoder.set_buffer(buffer, 0, 0)
    encoder.dispatch_threads((1024, 1, 1), (256, 1, 1))
    encoder.end_encoding()
    commands.commit()
    commands.wait_until_completed()
    if commands.error: raise commands.error

Metal's objects and methods, in Python's spelling of their names
(_objects.py). Errors: CompileError (the compiler's file:line:col
diagnostics), ValidationError (what Metal's validation layer refuses),
CommandBufferError (a failed command buffer's error), all MetalErrors.
"""
from ._objects import (Buffer, CommandBuffer, CommandBufferError,
                       CommandQueue, CompileError, CompileOptions,
                       ComputeCommandEncoder, Device, FunctionConstantValues,
                       Library, MetalError, ValidationError, chips,
                       create_system_default_device)

__all__ = [
    "Buffer", "CommandBuffer", "CommandBufferError", "CommandQueue",
    "CompileError", "CompileOptions", "ComputeCommandEncoder", "Device",
    "FunctionConstantValues", "Library", "MetalError", "ValidationError",
    "chips", "create_system_default_device",
]
