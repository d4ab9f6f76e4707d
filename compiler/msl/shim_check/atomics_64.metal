// atomic_long and atomic_ulong (mtlemu's extension: Metal has atomic_ulong
// min and max only): every atomic function on device and threadgroup memory.
#include <metal_stdlib>
using namespace metal;

template <typename A, typename T>
T wide_atomics(A obj, T v) {
  T r = atomic_load_explicit(obj, memory_order_relaxed);
  atomic_store_explicit(obj, v, memory_order_relaxed);
  r += atomic_exchange_explicit(obj, v, memory_order_relaxed);
  r += atomic_fetch_add_explicit(obj, v, memory_order_relaxed);
  r += atomic_fetch_sub_explicit(obj, v, memory_order_relaxed);
  r += atomic_fetch_and_explicit(obj, v, memory_order_relaxed);
  r += atomic_fetch_or_explicit(obj, v, memory_order_relaxed);
  r += atomic_fetch_xor_explicit(obj, v, memory_order_relaxed);
  r += atomic_fetch_min_explicit(obj, v, memory_order_relaxed);
  r += atomic_fetch_max_explicit(obj, v, memory_order_relaxed);
  T expected = r;
  while (!atomic_compare_exchange_weak_explicit(obj, &expected, expected + v, memory_order_relaxed,
                                                memory_order_relaxed)) {
  }
  return r + expected;
}

kernel void atomics64(device atomic_long* dl [[buffer(0)]], device atomic_ulong* du [[buffer(1)]],
                      device ulong* out [[buffer(2)]], uint gid [[thread_position_in_grid]],
                      uint tid [[thread_index_in_threadgroup]]) {
  threadgroup atomic_long tl[4];
  threadgroup atomic<ulong> tu[4];
  ulong r = ulong(wide_atomics(&dl[gid % 4], long(gid) << 33));
  r += wide_atomics(&du[gid % 4], ulong(gid) << 33);
  r += ulong(wide_atomics(&tl[tid % 4], long(tid)));
  r += wide_atomics(&tu[tid % 4], ulong(tid));
  out[gid] = r;
}
// EXPECT: air.atomic_load.global.i64 air.atomic_store.global.i64 air.atomic_exchange.global.i64
// EXPECT: air.atomic_fetch_add.global.i64 air.atomic_fetch_sub.global.i64 air.atomic_fetch_and.global.i64
// EXPECT: air.atomic_fetch_or.global.i64 air.atomic_fetch_xor.global.i64 air.atomic_fetch_min.global.i64
// EXPECT: air.atomic_fetch_max.global.i64 air.atomic_compare_exchange.global.i64
// EXPECT: air.atomic_load.global.u64 air.atomic_fetch_min.global.u64 air.atomic_compare_exchange.global.u64
// EXPECT: air.atomic_load.local.i64 air.atomic_fetch_max.local.i64 air.atomic_compare_exchange.local.i64
// EXPECT: air.atomic_fetch_max.local.u64 air.atomic_compare_exchange.local.u64
