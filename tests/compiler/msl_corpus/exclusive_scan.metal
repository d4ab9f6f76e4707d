// Exclusive prefix sum of a whole buffer in one dispatch: each SIMD group
// scans its values with simd_prefix_exclusive_sum, SIMD-group totals are
// scanned through threadgroup memory (threadgroup_barrier, a second
// simd_prefix_exclusive_sum), and each threadgroup adds the sum of every
// earlier block, reduced cooperatively with simd_sum. The grid need not be
// a multiple of the threadgroup size: the last threadgroup is partial.
#include <metal_stdlib>
using namespace metal;

kernel void exclusive_scan(device const int* in [[buffer(0)]],
                           device int* simd_scan [[buffer(1)]],
                           device int* out [[buffer(2)]],
                           uint gid [[thread_position_in_grid]],
                           uint tid [[thread_index_in_threadgroup]],
                           uint tg_size [[threads_per_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]],
                           uint num_sgs [[simdgroups_per_threadgroup]]) {
  threadgroup int sg_totals[32];
  threadgroup int sg_offsets[32];
  threadgroup int earlier_parts[32];

  const int x = in[gid];
  // Per SIMD group.
  const int lane_prefix = simd_prefix_exclusive_sum(x);
  simd_scan[gid] = lane_prefix;
  const int sg_total = simd_sum(x);
  if (lane == 0) sg_totals[sg] = sg_total;

  // Sum of the blocks before this threadgroup's.
  const uint block_start = gid - tid;
  int earlier = 0;
  for (uint k = tid; k < block_start; k += tg_size) earlier += in[k];
  earlier = simd_sum(earlier);
  if (lane == 0) earlier_parts[sg] = earlier;
  threadgroup_barrier(mem_flags::mem_threadgroup);

  // Scan of the SIMD-group totals, by SIMD group 0.
  if (sg == 0) {
    const int t = lane < num_sgs ? sg_totals[lane] : 0;
    const int t_prefix = simd_prefix_exclusive_sum(t);
    if (lane < num_sgs) sg_offsets[lane] = t_prefix;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);

  int block_offset = 0;
  for (uint s = 0; s < num_sgs; ++s) block_offset += earlier_parts[s];
  out[gid] = block_offset + sg_offsets[sg] + lane_prefix;
}
