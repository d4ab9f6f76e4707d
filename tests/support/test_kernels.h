// Small kernels more than one test (and bench/) runs, written once.
#pragma once

namespace mtlemu::testing {

// out[i] = a[i] + b[i], one thread per element, in ISA text (no bounds
// check: dispatch exactly one thread per element). 8 bytes read and 4
// written per FLOP.
inline constexpr char kVectorAddIsa[] = R"(
.kernel vector_add
.buffer 0 u0 device float a
.buffer 1 u2 device float b
.buffer 2 u4 device float out
    mov.u32 r0, %thread_position_in_grid.x
    ld.device.f32 r3, [u0 + r0*4]
    ld.device.f32 r4, [u2 + r0*4]
    add.f32 r5, r3, r4
    st.device.f32 [u4 + r0*4], r5
    exit
.end
)";

// The same in MSL, written with OpenCL's address-space spellings so the
// front end's tests do not depend on the metal_stdlib shims.
inline constexpr char kVectorAddOpenClSpelling[] = R"(
kernel void vector_add(__global const float* a [[buffer(0)]],
                       __global const float* b [[buffer(1)]],
                       __global float* out [[buffer(2)]],
                       __constant unsigned int& n [[buffer(3)]],
                       unsigned int id [[thread_position_in_grid]]) {
  if (id >= n) return;
  out[id] = a[id] + b[id];
}
)";

// Each threadgroup of 256 threads (8 SIMD groups) reverses its slice of
// `in` through threadgroup memory: every SIMD group reads what others wrote
// after a threadgroup_barrier.
inline constexpr char kReverseIsa[] = R"(
.kernel reverse
.buffer 0 u0 device float in
.buffer 1 u2 device float out
.threadgroup_memory 1024
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r1, %thread_index_in_threadgroup
    ld.device.f32 r2, [u0 + r0*4]
    st.threadgroup.f32 [r1*4], r2
    threadgroup_barrier.mem_threadgroup
    sub.u32 r3, 255, r1
    ld.threadgroup.f32 r4, [r3*4]
    st.device.f32 [u2 + r0*4], r4
    exit
.end
)";

// A kernel that never ends, for timeouts and interrupts.
inline constexpr char kSpinIsa[] = R"(
.kernel spin
.buffer 0 u0 device int out
loop:
    br loop
.end
)";

}  // namespace mtlemu::testing
