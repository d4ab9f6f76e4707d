// C = A * B with simdgroup_float8x8: a threadgroup of four SIMD groups
// computes a 16x16 block of C, one 8x8 tile per SIMD group. A tiles are
// loaded straight from device memory (simdgroup_load with a stride and an
// origin); the 8x16 panel of B for each k step is staged in threadgroup
// memory by all 128 threads and loaded from there. M is not a multiple of
// 16: SIMD groups whose tile lies below the matrix still take part in the
// barriers but neither load A nor store.
#include <metal_stdlib>
using namespace metal;

struct Dims {
  uint M, N, K;  // multiples of 8
};

kernel void simdgroup_matmul_float(device const float* A [[buffer(0)]],
                                   device const float* B [[buffer(1)]],
                                   device float* C [[buffer(2)]],
                                   constant Dims& d [[buffer(3)]],
                                   uint2 tg [[threadgroup_position_in_grid]],
                                   uint tid [[thread_index_in_threadgroup]],
                                   uint sg [[simdgroup_index_in_threadgroup]]) {
  threadgroup float panel[8 * 16];  // 8 rows (k) x 16 columns (n)
  const uint row0 = tg.y * 16 + (sg / 2) * 8;
  const uint col0 = tg.x * 16 + (sg % 2) * 8;
  const bool active = row0 < d.M;
  simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
  for (uint k = 0; k < d.K; k += 8) {
    // 128 threads copy the 8x16 panel B[k..k+8, tg.x*16..+16].
    const uint pr = tid / 16, pc = tid % 16;
    panel[tid] = B[(k + pr) * d.N + tg.x * 16 + pc];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (active) {
      simdgroup_float8x8 a, b;
      simdgroup_load(a, A, d.K, ulong2(k, row0));
      simdgroup_load(b, panel + (sg % 2) * 8, 16);
      simdgroup_multiply_accumulate(acc, a, b, acc);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (active) simdgroup_store(acc, C, d.N, ulong2(col0, row0));
}
