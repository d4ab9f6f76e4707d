// Byte histogram: threadgroup atomics, then device atomics.
#include <metal_stdlib>
using namespace metal;

kernel void histogram256(device const uchar* data [[buffer(0)]],
                         device atomic_uint* bins [[buffer(1)]],
                         constant uint& n [[buffer(2)]],
                         uint gid [[thread_position_in_grid]],
                         uint tid [[thread_index_in_threadgroup]],
                         uint tsize [[threads_per_threadgroup]]) {
  threadgroup atomic_uint local_bins[256];
  for (uint i = tid; i < 256; i += tsize) atomic_store_explicit(&local_bins[i], 0u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (gid < n) atomic_fetch_add_explicit(&local_bins[data[gid]], 1u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint i = tid; i < 256; i += tsize) {
    uint c = atomic_load_explicit(&local_bins[i], memory_order_relaxed);
    if (c != 0) atomic_fetch_add_explicit(&bins[i], c, memory_order_relaxed);
  }
}

// atomic<int> spelled as a template; min/max on device memory.
kernel void minmax(device const int* data [[buffer(0)]],
                   device atomic<int>* lo [[buffer(1)]],
                   device metal::atomic_int* hi [[buffer(2)]],
                   uint gid [[thread_position_in_grid]]) {
  atomic_fetch_min_explicit(lo, data[gid], memory_order_relaxed);
  atomic_fetch_max_explicit(hi, data[gid], memory_order_relaxed);
}
// EXPECT: air.atomic_store.local.u32 air.atomic_fetch_add.local.u32 air.atomic_load.local.u32
// EXPECT: air.atomic_fetch_add.global.u32 air.atomic_fetch_min.global.i32 air.atomic_fetch_max.global.i32
