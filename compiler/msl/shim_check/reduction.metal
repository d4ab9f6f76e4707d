// Sum of a buffer: simd_sum within SIMD groups, a threadgroup array and
// barriers across them, one atomic per threadgroup.
#include <metal_stdlib>
using namespace metal;

kernel void reduce_sum(device const float* in [[buffer(0)]],
                       device atomic_float* total [[buffer(1)]],
                       constant uint& n [[buffer(2)]],
                       uint gid [[thread_position_in_grid]],
                       uint tid [[thread_index_in_threadgroup]],
                       uint lane [[thread_index_in_simdgroup]],
                       uint sg [[simdgroup_index_in_threadgroup]],
                       uint sgs [[simdgroups_per_threadgroup]]) {
  threadgroup float partial[32];
  float v = gid < n ? in[gid] : 0.0f;
  v = simd_sum(v);
  if (lane == 0) partial[sg] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0) {
    float s = lane < sgs ? partial[lane] : 0.0f;
    s = simd_sum(s);
    if (simd_is_first()) atomic_fetch_add_explicit(total, s, memory_order_relaxed);
  }
}

// A tree reduction through threadgroup memory, with shuffles for the last steps.
kernel void reduce_max_tree(device const int* in [[buffer(0)]],
                            device int* out [[buffer(1)]],
                            uint gid [[thread_position_in_grid]],
                            uint tid [[thread_index_in_threadgroup]],
                            uint tgid [[threadgroup_position_in_grid]],
                            uint tsize [[threads_per_threadgroup]]) {
  threadgroup int tile[256];
  tile[tid] = in[gid];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint s = tsize / 2; s >= 32; s >>= 1) {
    if (tid < s) tile[tid] = max(tile[tid], tile[tid + s]);
    threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
  }
  if (tid < 32) {
    int m = tile[tid];
    for (ushort d = 16; d > 0; d /= 2) m = max(m, simd_shuffle_xor(m, d));
    simdgroup_barrier(mem_flags::mem_none);
    if (tid == 0) out[tgid] = m;
  }
}
// EXPECT: air.simd_sum.f32 air.threadgroup_barrier air.simdgroup_barrier
// EXPECT: air.atomic_fetch_add.global.f32 air.simd_is_first air.simd_shuffle_xor.i32
