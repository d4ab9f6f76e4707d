#include <metal_stdlib>
using namespace metal;

constant bool use_max [[function_constant(0)]];
constant float table[4] = {1.0f, 2.0f, 4.0f, 8.0f};

#define BINS 16

kernel void histogram(device const uint* in [[buffer(0)]],
                      device atomic_uint* bins [[buffer(1)]],
                      threadgroup atomic_uint* local [[threadgroup(0)]],
                      uint id [[thread_position_in_grid]],
                      uint lid [[thread_index_in_threadgroup]]) {
  if (lid < BINS) atomic_store_explicit(&local[lid], 0, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint v = in[id] % BINS;
  if (is_function_constant_defined(use_max) && use_max) v = max(v, 3u);
  atomic_fetch_add_explicit(&local[v], uint(table[v % 4]),
                            memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid < BINS) {
    atomic_fetch_add_explicit(
        &bins[lid], atomic_load_explicit(&local[lid], memory_order_relaxed),
        memory_order_relaxed);
  }
}

template <typename T>
[[kernel]] void fill(device T* out [[buffer(0)]],
                     uint2 pos [[thread_position_in_grid]],
                     uint2 size [[threads_per_grid]]) {
  out[pos.y * size.x + pos.x] = T(simd_sum(float(pos.x)));
}
template [[host_name("fill_half")]] [[kernel]] void fill<half>(
    device half*, uint2, uint2);
