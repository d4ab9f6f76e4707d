// Exclusive prefix sum of a threadgroup's values: SIMD-group scans, then a
// scan of the SIMD-group totals.
#include <metal_stdlib>
using namespace metal;

kernel void scan_exclusive(device const uint* in [[buffer(0)]],
                           device uint* out [[buffer(1)]],
                           uint gid [[thread_position_in_grid]],
                           ushort lane [[thread_index_in_simdgroup]],
                           ushort sg [[simdgroup_index_in_threadgroup]]) {
  threadgroup uint totals[32];
  const uint v = in[gid];
  const uint prefix = simd_prefix_exclusive_sum(v);
  if (lane == 31) totals[sg] = prefix + v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0) totals[lane] = simd_prefix_exclusive_sum(totals[lane]);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = prefix + totals[sg];
}

kernel void scan_inclusive_f(device float4* data [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  float4 v = data[gid];
  data[gid] = simd_prefix_inclusive_sum(v) + simd_prefix_inclusive_product(v) +
              simd_prefix_exclusive_product(v);
}
// EXPECT: air.simd_prefix_exclusive_sum.u32 air.simd_prefix_inclusive_sum.f32
// EXPECT: air.simd_prefix_inclusive_product.f32 air.simd_prefix_exclusive_product.f32
