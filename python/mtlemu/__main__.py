"""python3 -m mtlemu check | chips

check   the system check: the C++ core, the chips, a kernel compiled from
        MSL and run against NumPy, each with a pass or the reason it
        failed; exit 1 if any failed.
chips   the chips a Device can be (MTLEMU_CHIP, Device("m2")...).
"""
import sys

_ADD = """
#include <metal_stdlib>
using namespace metal;
kernel void add(device const float* x [[buffer(0)]],
                device float* y [[buffer(1)]],
                constant float& a [[buffer(2)]],
                uint i [[thread_position_in_grid]]) {
  y[i] = a * x[i] + y[i];
}
"""


def _check():
    results = []

    def step(name, fn):
        try:
            results.append((name, True, fn() or ""))
        except Exception as e:  # noqa: BLE001 - every failure is reported
            results.append((name, False, f"{type(e).__name__}: {e}"))

    import mtlemu
    step("core", lambda: f"C++ core at {mtlemu._objects._metal.__file__}")
    step("chips", lambda: ", ".join(c[0] for c in mtlemu.chips()))

    def kernel():
        import numpy as np
        device = mtlemu.Device()
        library = device.new_library_with_source(_ADD, file="check.metal")
        state = device.new_compute_pipeline_state(library.new_function("add"))
        n = 1000
        x = np.arange(n, dtype=np.float32)
        y = np.ones(n, dtype=np.float32)
        commands = device.new_command_queue().command_buffer()
        encoder = commands.compute_command_encoder()
        encoder.set_compute_pipeline_state(state)
        encoder.set_buffer(device.new_buffer_with_bytes_no_copy(x), 0, 0)
        encoder.set_buffer(device.new_buffer_with_bytes_no_copy(y), 0, 1)
        encoder.set_bytes(np.float32(2), 2)
        encoder.dispatch_threads((n, 1, 1), (256, 1, 1))
        encoder.end_encoding()
        commands.commit()
        if commands.error is not None:
            raise commands.error
        if not np.array_equal(y, 2 * np.arange(n, dtype=np.float32) + 1):
            raise AssertionError("wrong results")
        return f"y = 2x + y over 1000 floats on {device.name}: correct"
    step("kernel", kernel)

    for name, ok, detail in results:
        print(f"{'pass' if ok else 'FAIL'}  {name:8} {detail}")
    return 0 if all(ok for _, ok, _ in results) else 1


def main(argv):
    if len(argv) == 1 and argv[0] == "check":
        return _check()
    if len(argv) == 1 and argv[0] == "chips":
        import mtlemu
        for name, marketing, cores in mtlemu.chips():
            print(f"{name:12} {marketing:20} {cores} GPU cores")
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
