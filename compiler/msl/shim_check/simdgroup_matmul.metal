// C = A * B with 8x8 SIMD-group matrices, A and B tiles staged through
// threadgroup memory; also half and bfloat matrices and the diagonal
// constructor.
#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;

kernel void matmul_8x8(device const float* A [[buffer(0)]],
                       device const float* B [[buffer(1)]],
                       device float* C [[buffer(2)]],
                       constant uint& K [[buffer(3)]],
                       constant uint& N [[buffer(4)]],
                       uint2 tg [[threadgroup_position_in_grid]],
                       uint lane [[thread_index_in_simdgroup]]) {
  threadgroup float bt[64];
  simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
  for (uint k = 0; k < K; k += 8) {
    simdgroup_float8x8 a, b;
    simdgroup_load(a, A, K, ulong2(k, tg.y * 8));
    for (uint i = lane; i < 64; i += 32) bt[i] = B[(k + i / 8) * N + tg.x * 8 + i % 8];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_load(b, bt);
    simdgroup_multiply_accumulate(acc, a, b, acc);
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  simdgroup_store(acc, C, N, ulong2(tg.x * 8, tg.y * 8));
}

kernel void matmul_half_transposed(device const half* A [[buffer(0)]],
                                   device half* C [[buffer(1)]]) {
  simdgroup_half8x8 a, c;
  simdgroup_load(a, A, 8, ulong2(0, 0), true);
  simdgroup_half8x8 eye(1.0h);
  simdgroup_multiply(c, a, eye);
  c.thread_elements()[0] *= 2.0h;
  simdgroup_store(c, C, 8, 0, true);
}

// Mixed precision as llama.cpp writes it: half tiles times float tiles into
// a float accumulator (computed in float).
kernel void matmul_mixed(threadgroup half* ta [[threadgroup(0)]],
                         threadgroup float* tb [[threadgroup(1)]],
                         device float* C [[buffer(0)]]) {
  simdgroup_half8x8 ma[2];
  simdgroup_float8x8 mb;
  simdgroup_float8x8 mc[2] = {make_filled_simdgroup_matrix<float, 8, 8>(0.f),
                              make_filled_simdgroup_matrix<float, 8, 8>(0.f)};
  for (short i = 0; i < 2; ++i) simdgroup_load(ma[i], ta + 64 * i);
  simdgroup_load(mb, tb, 8, 0, false);
  for (short i = 0; i < 2; ++i) simdgroup_multiply_accumulate(mc[i], mb, ma[i], mc[i]);
  simdgroup_store(mc[0], C);
  simdgroup_store(mc[1], C + 64);
}

kernel void matmul_bfloat(device const bfloat* A [[buffer(0)]], device bfloat* C [[buffer(1)]]) {
  simdgroup_bfloat8x8 a, c;
  simdgroup_load(a, A);
  simdgroup_multiply(c, a, a);
  simdgroup_store(c, C);
}
// EXPECT: air.simdgroup_load.global.f32 air.simdgroup_load.local.f32 air.simdgroup_store.global.f32
// EXPECT: air.simdgroup_multiply_accumulate.f32 air.simdgroup_load.global.f16.transpose
// EXPECT: air.simdgroup_store.global.f16.transpose air.simdgroup_multiply_accumulate.f16
// EXPECT: air.thread_index_in_simdgroup air.convert.bf16.f32 air.simdgroup_load.local.f16
