// Every SIMD-group and quad-group function on every scalar type Metal
// allows (char to uint, half, float: no long/ulong, no bool), on vectors,
// and on bfloat (through float, as Apple's library has no bfloat
// overloads); votes and shuffle_and_fill.
#include <metal_stdlib>
using namespace metal;

template <typename T>
T any_type_ops(T x, ushort lane) {
  T r = simd_shuffle(x, lane) + simd_shuffle_up(x, 1) + simd_shuffle_down(x, 2) +
        simd_shuffle_rotate_up(x, 3) + simd_shuffle_rotate_down(x, 4) + simd_broadcast(x, 5) +
        simd_shuffle_xor(x, 1) + quad_shuffle_xor(x, 1) +
        simd_broadcast_first(x) + simd_sum(x) + simd_product(x) + simd_min(x) + simd_max(x) +
        simd_prefix_inclusive_sum(x) + simd_prefix_exclusive_sum(x) +
        simd_prefix_inclusive_product(x) + simd_prefix_exclusive_product(x);
  r += quad_shuffle(x, lane % 4) + quad_shuffle_up(x, 1) + quad_shuffle_down(x, 1) +
       quad_shuffle_rotate_up(x, 1) + quad_shuffle_rotate_down(x, 1) + quad_broadcast(x, 2) +
       quad_broadcast_first(x) + quad_sum(x) + quad_product(x) + quad_min(x) + quad_max(x) +
       quad_prefix_inclusive_sum(x) + quad_prefix_exclusive_sum(x) +
       quad_prefix_inclusive_product(x) + quad_prefix_exclusive_product(x);
  r += simd_shuffle_and_fill_up(x, r, 2) + simd_shuffle_and_fill_down(x, r, 3, 8) +
       quad_shuffle_and_fill_up(x, r, 1, 2) + quad_shuffle_and_fill_down(x, r, 1);
  return r;
}

template <typename T>
T int_ops(T x, ushort lane) {
  return any_type_ops(x, lane) + simd_and(x) + simd_or(x) + simd_xor(x) + quad_and(x) +
         quad_or(x) + quad_xor(x);
}

kernel void simd_types(device char* c [[buffer(0)]], device uchar* uc [[buffer(1)]],
                       device short* s [[buffer(2)]], device ushort* us [[buffer(3)]],
                       device int* i [[buffer(4)]], device uint* u [[buffer(5)]],
                       device half* h [[buffer(8)]], device float* f [[buffer(9)]],
                       uint gid [[thread_position_in_grid]],
                       ushort lane [[thread_index_in_simdgroup]]) {
  c[gid] = int_ops(c[gid], lane);
  uc[gid] = int_ops(uc[gid], lane);
  s[gid] = int_ops(s[gid], lane);
  us[gid] = int_ops(us[gid], lane);
  i[gid] = int_ops(i[gid], lane);
  u[gid] = int_ops(u[gid], lane);
  h[gid] = any_type_ops(h[gid], lane);
  f[gid] = any_type_ops(f[gid], lane);
}

kernel void simd_vectors(device float4* f4 [[buffer(0)]], device half2* h2 [[buffer(1)]],
                         device int3* i3 [[buffer(2)]], device uint4* u4 [[buffer(3)]],
                         device bfloat* bf [[buffer(4)]],
                         uint gid [[thread_position_in_grid]],
                         ushort lane [[thread_index_in_simdgroup]]) {
  f4[gid] = any_type_ops(f4[gid], lane);
  h2[gid] = any_type_ops(h2[gid], lane);
  i3[gid] = int_ops(i3[gid], lane);
  u4[gid] = simd_sum(u4[gid]) + simd_or(u4[gid]) + simd_shuffle_xor(u4[gid], 16);
  bfloat b = bf[gid];
  bf[gid] = bfloat(float(simd_sum(b)) + float(simd_shuffle(b, 3)) + float(simd_max(b)) +
                   float(quad_broadcast(b, 1)) + float(simd_prefix_exclusive_sum(b)));
}

kernel void votes(device uint* out [[buffer(0)]], device ulong* masks [[buffer(1)]],
                  uint gid [[thread_position_in_grid]]) {
  const bool odd = (gid & 1) != 0;
  simd_vote v = simd_ballot(odd);
  masks[gid] = ulong(v) | ulong(simd_active_threads_mask());
  quad_vote q = quad_ballot(odd);
  out[gid] = (simd_all(odd) ? 1u : 0u) | (simd_any(odd) ? 2u : 0u) | (v.all() ? 4u : 0u) |
             (v.any() ? 8u : 0u) | (simd_is_first() ? 16u : 0u) | (quad_all(odd) ? 32u : 0u) |
             (quad_any(odd) ? 64u : 0u) | (quad_is_first() ? 128u : 0u) |
             (uint(ushort(q)) << 8) | (uint(ushort(quad_active_threads_mask())) << 12) |
             (q.any() ? 1u << 16 : 0u) | (simd_is_helper_thread() ? 1u << 17 : 0u);
}
// EXPECT: air.simd_shuffle.i8 air.simd_shuffle.u8 air.simd_shuffle.i16 air.simd_shuffle.u16
// EXPECT: air.simd_shuffle.i32 air.simd_shuffle.u32
// EXPECT: air.simd_shuffle.f16 air.simd_shuffle.f32 air.simd_shuffle_up.f32 air.simd_shuffle_down.f32
// EXPECT: air.simd_shuffle_rotate_up.f32 air.simd_shuffle_rotate_down.f32 air.simd_broadcast.f32
// EXPECT: air.simd_broadcast_first.f32 air.simd_sum.f32 air.simd_product.f32 air.simd_min.f32
// EXPECT: air.simd_max.f32 air.simd_prefix_inclusive_sum.f16 air.simd_prefix_exclusive_sum.i32
// EXPECT: air.simd_prefix_inclusive_product.u8 air.simd_prefix_exclusive_product.f32
// EXPECT: air.simd_shuffle_xor.f32 air.simd_shuffle_xor.f16 air.simd_and.i32 air.simd_or.u32 air.simd_xor.i16
// EXPECT: air.quad_shuffle.f32 air.quad_shuffle_up.f16 air.quad_shuffle_down.i32 air.quad_shuffle_rotate_up.f32
// EXPECT: air.quad_shuffle_rotate_down.f32 air.quad_broadcast.f32 air.quad_broadcast_first.f32
// EXPECT: air.quad_sum.f32 air.quad_product.f32 air.quad_min.f32 air.quad_max.f32
// EXPECT: air.quad_prefix_inclusive_sum.f32 air.quad_prefix_exclusive_sum.f32
// EXPECT: air.quad_prefix_inclusive_product.f32 air.quad_prefix_exclusive_product.f32
// EXPECT: air.quad_shuffle_xor.u32 air.quad_and.u32 air.quad_or.i8 air.quad_xor.u32
// EXPECT: air.simd_ballot air.simd_all air.simd_any air.simd_active_threads_mask air.simd_is_first
// EXPECT: air.quad_ballot air.quad_all air.quad_any air.quad_active_threads_mask air.quad_is_first
// EXPECT: air.thread_index_in_simdgroup air.simd_shuffle.u16 air.quad_broadcast.u16
// REJECT: air.simd_shuffle.i64 air.simd_shuffle.u64 air.simd_sum.i64
