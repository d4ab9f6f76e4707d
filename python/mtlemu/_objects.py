"""Metal's host objects, in Python's spelling of Metal's names.

MTLDevice is Device, newBufferWithLength: is new_buffer, and so on. What
Metal leaves to the GPU (a command buffer's commit runs its work; here it
returns when the work is done) is done by the emulator (the C++ core,
_metal). The emulator's own settings (checks, the timing model, traces)
go to a command buffer when it is made, from its arguments or else from the
environment (MTLEMU_CHECK, MTLEMU_OOB, MTLEMU_SCHEDULE, MTLEMU_TIMING,
MTLEMU_HOST_THREADS)."""
import math
import os

from . import _metal

MetalError = _metal.MetalError
CompileError = _metal.CompileError
ValidationError = _metal.ValidationError


class CommandBufferError(MetalError):
    """A command buffer's error (MTLCommandBufferError): `code` is
    "page_fault" (an access outside every buffer), "timeout", "interrupted"
    (Ctrl-C), "internal" (a fault Metal has no code for: a barrier not all
    threads reach, a trap) or "check" (what MTLEMU_CHECK's checks found);
    `message` says what, where (the MSL file:line) and which thread."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def chips():
    """The chips a Device can be: (name, marketing name, GPU cores)."""
    return _metal.chips()


class CompileOptions:
    """MTLCompileOptions: `preprocessor_macros` {name: value} (a value of
    None or "" defines the name as 1, as -D does), `fast_math_enabled`
    (Metal's default: on), and `include_directories`, the folders searched
    for #include after the including file's own (the command line's -I)."""

    def __init__(self, preprocessor_macros=None, fast_math_enabled=True,
                 include_directories=()):
        self.preprocessor_macros = dict(preprocessor_macros or {})
        self.fast_math_enabled = bool(fast_math_enabled)
        self.include_directories = [os.fspath(d) for d in include_directories]

    def _macros(self):
        out = []
        for name, value in self.preprocessor_macros.items():
            if value is None or value == "":
                value = "1"
            elif isinstance(value, bool):
                value = "1" if value else "0"
            out.append((str(name), str(value)))
        return out


_INTEGER_TYPES = {"char", "uchar", "short", "ushort", "int", "uint", "long",
                  "ulong", "int8_t", "uint8_t", "int16_t", "uint16_t",
                  "int32_t", "uint32_t", "int64_t", "uint64_t", "size_t"}
_FLOAT_TYPES = {"half", "float", "bfloat", "double"}


def _literal(value, type_name=None):
    """`value` as the MSL expression a function constant takes."""
    if type_name == "bool" or (type_name is None and isinstance(value, bool)):
        return "true" if value else "false"
    if type_name in _FLOAT_TYPES or (type_name is None and
                                     isinstance(value, float)):
        v = float(value)
        if math.isnan(v):
            return "NAN"
        if math.isinf(v):
            return "INFINITY" if v > 0 else "(-INFINITY)"
        return repr(v)
    if type_name in _INTEGER_TYPES or type_name is None:
        if isinstance(value, float) and not value.is_integer():
            raise TypeError(f"function constant of type {type_name}: "
                            f"{value!r} is not an integer")
        return str(int(value))
    raise TypeError(f"unknown function constant type {type_name!r} (expected "
                    f"bool, {', '.join(sorted(_INTEGER_TYPES | _FLOAT_TYPES))})")


class FunctionConstantValues:
    """MTLFunctionConstantValues: set_constant_value(value, type, index=...)
    or (..., name=...); `type` is the MSL type's name ("float", "bool",
    "int", ...)."""

    def __init__(self):
        self._values = {}

    def set_constant_value(self, value, type, index=None, name=None):
        if (index is None) == (name is None):
            raise TypeError("set_constant_value: give index= or name=")
        key = str(index) if name is None else str(name)
        self._values[key] = _literal(value, str(type))

    def _items(self):
        return list(self._values.items())


def _constants(values):
    if values is None:
        return []
    if isinstance(values, FunctionConstantValues):
        return values._items()
    if isinstance(values, dict):
        return [(str(k), _literal(v)) for k, v in values.items()]
    raise TypeError("constant_values: a FunctionConstantValues or a dict "
                    "{name or index: value}")


def _memory_of(array):
    """(address, length) of a NumPy array's or a CPU torch tensor's bytes."""
    if hasattr(array, "data_ptr") and hasattr(array, "element_size"):
        if getattr(array, "device", None) is not None and \
                str(array.device) != "cpu":
            raise ValidationError(f"a tensor on {array.device}: only CPU "
                                  f"tensors are memory the emulator can use")
        if not array.is_contiguous():
            raise ValidationError("the tensor is not contiguous: a buffer is "
                                  "one run of bytes (use .contiguous())")
        return array.data_ptr(), array.numel() * array.element_size()
    interface = getattr(array, "__array_interface__", None)
    if interface is None:
        raise TypeError("new_buffer_with_bytes_no_copy: a NumPy array or a "
                        "CPU torch tensor")
    import numpy as np
    a = np.asarray(array)
    if not a.flags.c_contiguous:
        raise ValidationError("the array is not C-contiguous: a buffer is one "
                              "run of bytes (use numpy.ascontiguousarray)")
    if not a.flags.writeable:
        raise ValidationError("the array is read-only, and kernels may write "
                              "their buffers (copy it, or use "
                              "new_buffer_with_bytes)")
    return interface["data"][0], a.nbytes


class Buffer:
    """MTLBuffer. contents() is its bytes, writable (a memoryview);
    numpy(dtype, shape) a NumPy view of them. A buffer made without a copy
    is the array's own memory, and keeps the array alive."""

    def __init__(self, core):
        self._core = core

    @property
    def length(self):
        return self._core.length

    @property
    def gpu_address(self):
        return self._core.gpu_address

    @property
    def label(self):
        return self._core.label

    @label.setter
    def label(self, value):
        self._core.label = str(value)

    def contents(self):
        return memoryview(self._core)

    def numpy(self, dtype="uint8", shape=None):
        import numpy as np
        a = np.frombuffer(self._core, dtype=dtype)
        return a if shape is None else a.reshape(shape)

    def __array__(self, dtype=None, copy=None):
        import numpy as np
        a = np.frombuffer(self._core, dtype=np.uint8)
        return a if dtype is None else a.astype(dtype)


class Library:
    """MTLLibrary. new_function(name, constant_values) with function
    constants compiles the source again with their values (mtlemu's
    compiler folds them; Metal's specializes the function)."""

    def __init__(self, device, core, source, file, options):
        self._device = device
        self._core = core
        self._source = source
        self._file = file
        self._options = options

    @property
    def function_names(self):
        return list(self._core.function_names)

    def new_function(self, name, constant_values=None):
        constants = _constants(constant_values)
        if not constants:
            return self._core._new_function(name)
        core = self._device._new_library_core(self._source, self._file,
                                              self._options, constants, [name])
        return core._new_function(name)


class ComputeCommandEncoder:
    """MTLComputeCommandEncoder. set_bytes takes bytes or a NumPy value
    with its type (numpy.float32(x), numpy.array([...], numpy.int32)),
    since the bytes' type is what the kernel reads."""

    def __init__(self, core, owner):
        self._core = core
        self._owner = owner  # its command buffer

    def set_compute_pipeline_state(self, state):
        self._core.set_compute_pipeline_state(state)

    def set_buffer(self, buffer, offset, index):
        if not isinstance(buffer, Buffer):
            raise TypeError("set_buffer: a Buffer (device.new_buffer...)")
        self._core.set_buffer(buffer._core, int(offset), int(index))

    def set_bytes(self, data, index):
        if isinstance(data, (bytes, bytearray, memoryview)):
            self._core._set_bytes(memoryview(data).cast("B"), int(index))
            return
        if isinstance(data, (bool, int, float)):
            raise TypeError(
                "set_bytes: a Python number has no MSL type: give bytes or "
                "a NumPy value (numpy.float32(x), numpy.uint32(n), ...)")
        import numpy as np
        a = np.ascontiguousarray(data)
        if a.dtype == object:
            raise TypeError("set_bytes: bytes or NumPy values")
        self._core._set_bytes(memoryview(a).cast("B"), int(index))

    def set_threadgroup_memory_length(self, length, index):
        self._core.set_threadgroup_memory_length(int(length), int(index))

    def dispatch_threads(self, threads_per_grid, threads_per_threadgroup):
        self._core.dispatch_threads(_size(threads_per_grid),
                                    _size(threads_per_threadgroup))

    def dispatch_threadgroups(self, threadgroups_per_grid,
                              threads_per_threadgroup):
        self._core.dispatch_threadgroups(_size(threadgroups_per_grid),
                                         _size(threads_per_threadgroup))

    def end_encoding(self):
        self._core.end_encoding()


def _size(s):
    """MTLSize from an int or a tuple of 1 to 3 ints."""
    if isinstance(s, int):
        return [s]
    return [int(v) for v in s]


class CommandBuffer:
    """MTLCommandBuffer. commit() runs its dispatches and returns when they
    are done (wait_until_completed has nothing left to wait for); status is
    "not_enqueued", "completed" or "error", and error the
    CommandBufferError of a failed one (raise it to fail a test).
    dispatches: what each dispatch did (host seconds, instructions, the
    checks' findings, and with timing the chip's time: timing_text,
    timing_json); write_trace(path) writes a traced one's Chrome trace."""

    def __init__(self, core):
        self._core = core

    def compute_command_encoder(self):
        return ComputeCommandEncoder(self._core.compute_command_encoder(),
                                     self)

    def commit(self):
        self._core.commit()

    def wait_until_completed(self):
        self._core.wait_until_completed()

    @property
    def error(self):
        e = self._core._error
        if e is not None:
            return CommandBufferError(e[0], e[1])
        findings = [d["findings"] for d in self._core.dispatches
                    if d["findings"]]
        if findings:
            return CommandBufferError("check", "\n".join(findings))
        return None

    @property
    def status(self):
        status = self._core.status
        if status == "completed" and self.error is not None:
            return "error"
        return status

    @property
    def dispatches(self):
        return self._core.dispatches

    def write_trace(self, path, dispatch=0):
        self._core.write_trace(int(dispatch), os.fspath(path))


def _env(name, default):
    value = os.environ.get(name, "")
    return value if value != "" else default


class CommandQueue:
    """MTLCommandQueue. command_buffer() takes the emulator's settings for
    the dispatches it will hold: checks ("race,init,simd": the checks of
    mtlemu run --check), oob ("report": reads just outside a buffer read
    zeros, with a warning; "fault"), schedule (the SIMD groups' order),
    timing (the chip's time, in dispatches), trace (a timeline for
    write_trace), host_threads (0: every core), timeout (seconds). Each
    left out comes from MTLEMU_CHECK, MTLEMU_OOB, MTLEMU_SCHEDULE,
    MTLEMU_TIMING, MTLEMU_HOST_THREADS, else the default."""

    def __init__(self, core):
        self._core = core

    def command_buffer(self, checks=None, oob=None, schedule=None,
                       timing=None, trace=False, host_threads=None,
                       timeout=None):
        if checks is None:
            checks = _env("MTLEMU_CHECK", "")
        if checks in ("1", "all"):
            checks = "race,init,simd"
        if timing is None:
            timing = _env("MTLEMU_TIMING", "0") not in ("0", "false", "")
        if host_threads is None:
            host_threads = int(_env("MTLEMU_HOST_THREADS", "0"))
        return CommandBuffer(self._core._command_buffer(
            checks=checks, oob=oob or _env("MTLEMU_OOB", "report"),
            schedule=schedule or _env("MTLEMU_SCHEDULE", "interleaved"),
            timing=bool(timing), timeline=bool(trace),
            host_threads=int(host_threads),
            timeout_seconds=None if timeout is None else float(timeout)))


class Device:
    """MTLDevice: one emulated GPU, `chip` as `mtlemu chips` lists them
    ("m1", "m2-max", "m3-pro", ...); MTLEMU_CHIP, else "m1", by default."""

    def __init__(self, chip=None):
        self._core = _metal.Device(chip or _env("MTLEMU_CHIP", "m1"))

    @property
    def name(self):
        return self._core.name

    @property
    def chip(self):
        return self._core.chip

    @property
    def max_threadgroup_memory_length(self):
        return self._core.max_threadgroup_memory_length

    @property
    def max_threads_per_threadgroup(self):
        return self._core.max_threads_per_threadgroup

    def __repr__(self):
        return f"<mtlemu.Device {self.chip}: {self.name}>"

    def new_buffer(self, length):
        return Buffer(self._core.new_buffer(int(length)))

    def new_buffer_with_bytes(self, data):
        """A buffer holding a copy of `data` (bytes, or a NumPy array, whose
        elements are copied in C order)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            import numpy as np
            data = np.ascontiguousarray(data)
        return Buffer(self._core.new_buffer_with_bytes(
            memoryview(data).cast("B")))

    def new_buffer_with_bytes_no_copy(self, array):
        """A buffer that is `array`'s own memory (a C-contiguous, writable
        NumPy array, or a contiguous CPU torch tensor): kernels read and
        write the array itself."""
        address, length = _memory_of(array)
        return Buffer(self._core._new_buffer_no_copy(address, length, array))

    def _new_library_core(self, source, file, options, constants, kernels):
        options = options or CompileOptions()
        return self._core._new_library(
            source=source, file=file, macros=options._macros(),
            include_directories=options.include_directories,
            fast_math=options.fast_math_enabled, constants=constants,
            kernels=kernels)

    def new_library_with_source(self, source, options=None,
                                file="source.metal"):
        """A library of MSL `source`; `file` names it in messages (and
        #include "..." is found beside it). Raises CompileError with the
        compiler's diagnostics (file:line:col: error: ...)."""
        file = os.fspath(file)
        core = self._new_library_core(source, file, options, [], [])
        return Library(self, core, source, file, options)

    def new_library_with_file(self, path, options=None):
        """new_library_with_source of the .metal file at `path`."""
        path = os.fspath(path)
        with open(path, encoding="utf-8") as f:
            source = f.read()
        return self.new_library_with_source(source, options, file=path)

    def new_compute_pipeline_state(self, function):
        return self._core.new_compute_pipeline_state(function)

    def new_command_queue(self):
        return CommandQueue(self._core.new_command_queue())


def create_system_default_device():
    """MTLCreateSystemDefaultDevice: Device() (MTLEMU_CHIP, else m1)."""
    return Device()
