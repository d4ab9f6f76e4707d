// Every atomic function on device and threadgroup memory, for atomic_int,
// atomic_uint, atomic_float, atomic_bool; atomic_thread_fence.
#include <metal_stdlib>
using namespace metal;

template <typename A, typename T>
T int_atomics(A obj, T v) {
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

kernel void atomics(device atomic_int* di [[buffer(0)]], device atomic_uint* du [[buffer(1)]],
                    device atomic_float* df [[buffer(2)]], device atomic_bool* db [[buffer(3)]],
                    volatile device atomic_uint* vu [[buffer(4)]], device int* out [[buffer(5)]],
                    uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]]) {
  threadgroup atomic_int ti[4];
  threadgroup atomic_uint tu[4];
  threadgroup atomic_bool tb[4];
  int r = int_atomics(&di[gid % 4], int(gid));
  r += int(int_atomics(&du[gid % 4], gid));
  r += int_atomics(&ti[tid % 4], int(tid));
  r += int(int_atomics(&tu[tid % 4], tid));
  r += int(atomic_fetch_add_explicit(vu, 1u, memory_order_relaxed));
  // atomic_float (device only).
  float f = atomic_load_explicit(df, memory_order_relaxed);
  atomic_store_explicit(df, 1.0f, memory_order_relaxed);
  f += atomic_exchange_explicit(df, 2.0f, memory_order_relaxed);
  f += atomic_fetch_add_explicit(df, 0.5f, memory_order_relaxed);
  f += atomic_fetch_sub_explicit(df, 0.25f, memory_order_relaxed);
  float fe = f;
  atomic_compare_exchange_weak_explicit(df, &fe, f * 2.0f, memory_order_relaxed, memory_order_relaxed);
  // atomic_bool, device and threadgroup.
  bool b = atomic_load_explicit(db, memory_order_relaxed);
  atomic_store_explicit(&tb[tid % 4], true, memory_order_relaxed);
  b = b != atomic_exchange_explicit(&db[1], b, memory_order_relaxed);
  bool be = false;
  b = b && atomic_compare_exchange_weak_explicit(&tb[0], &be, true, memory_order_relaxed, memory_order_relaxed);
  atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, thread_scope_device);
  out[gid] = r + int(f + fe) + (b ? 1 : 0);
}
// EXPECT: air.atomic_load.global.i32 air.atomic_store.global.i32 air.atomic_exchange.global.i32
// EXPECT: air.atomic_fetch_add.global.i32 air.atomic_fetch_sub.global.i32 air.atomic_fetch_and.global.i32
// EXPECT: air.atomic_fetch_or.global.i32 air.atomic_fetch_xor.global.i32 air.atomic_fetch_min.global.i32
// EXPECT: air.atomic_fetch_max.global.i32 air.atomic_compare_exchange.global.i32
// EXPECT: air.atomic_load.global.u32 air.atomic_fetch_min.global.u32 air.atomic_compare_exchange.global.u32
// EXPECT: air.atomic_load.local.i32 air.atomic_store.local.i32 air.atomic_exchange.local.i32
// EXPECT: air.atomic_fetch_add.local.i32 air.atomic_fetch_sub.local.i32 air.atomic_fetch_and.local.i32
// EXPECT: air.atomic_fetch_or.local.i32 air.atomic_fetch_xor.local.i32 air.atomic_fetch_min.local.i32
// EXPECT: air.atomic_fetch_max.local.i32 air.atomic_compare_exchange.local.i32
// EXPECT: air.atomic_fetch_max.local.u32 air.atomic_compare_exchange.local.u32
// EXPECT: air.atomic_load.global.f32 air.atomic_store.global.f32 air.atomic_exchange.global.f32
// EXPECT: air.atomic_fetch_add.global.f32 air.atomic_fetch_sub.global.f32 air.atomic_thread_fence
