// Kernels for tests/cli/check_cli_test.cpp (--check).
#include <metal_stdlib>
using namespace metal;

kernel void neighbours(device float* out [[buffer(0)]],
                       uint tid [[thread_position_in_threadgroup]],
                       uint gid [[thread_position_in_grid]]) {
  threadgroup float t[64];
  t[tid] = float(gid);
  out[gid] = t[(tid + 1) % 64];
}

kernel void neighbours_barrier(device float* out [[buffer(0)]],
                               uint tid [[thread_position_in_threadgroup]],
                               uint gid [[thread_position_in_grid]]) {
  threadgroup float t[64];
  t[tid] = float(gid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = t[(tid + 1) % 64];
}

kernel void accumulate(device float* out [[buffer(0)]],
                       uint gid [[thread_position_in_grid]]) {
  out[gid] += 1.0f;
}
