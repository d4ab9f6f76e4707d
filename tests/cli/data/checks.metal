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

// Each SIMD group's maximum, then its sum, through the same slots, with no
// barrier between reading the maxima and writing the sums (mlx-lm's
// kl_forward races so): out[group] = log(sum(exp(x))) of its 64 values.
kernel void logsumexp(device const float* x [[buffer(0)]],
                      device float* out [[buffer(1)]],
                      uint tid [[thread_index_in_threadgroup]],
                      uint group [[threadgroup_position_in_grid]],
                      uint lane [[thread_index_in_simdgroup]],
                      uint sg [[simdgroup_index_in_threadgroup]],
                      uint n [[simdgroups_per_threadgroup]]) {
  threadgroup float shared[32];
  const float v = x[group * 64 + tid];
  float m = simd_max(v);
  if (lane == 0) shared[sg] = m;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  m = simd_max(lane < n ? shared[lane] : -INFINITY);
  float s = simd_sum(exp(v - m));
  if (lane == 0) shared[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  s = simd_sum(lane < n ? shared[lane] : 0.0f);
  if (tid == 0) out[group] = m + log(s);
}
