// C = A * B with simdgroup_half8x8: a threadgroup of two SIMD groups
// computes an 8x16 block of C. Both A and B tiles are staged in
// threadgroup memory (A: 8x8, B: 8x16) and loaded with simdgroup_load from
// there; each SIMD group stores its tile to threadgroup memory with
// simdgroup_store and the threadgroup copies the block out to device
// memory.
#include <metal_stdlib>
using namespace metal;

struct Dims {
  uint M, N, K;  // multiples of 8; N a multiple of 16
};

kernel void simdgroup_matmul_half(device const half* A [[buffer(0)]],
                                  device const half* B [[buffer(1)]],
                                  device half* C [[buffer(2)]],
                                  constant Dims& d [[buffer(3)]],
                                  uint2 tg [[threadgroup_position_in_grid]],
                                  uint tid [[thread_index_in_threadgroup]],
                                  uint sg [[simdgroup_index_in_threadgroup]]) {
  threadgroup half a_tile[8 * 8];
  threadgroup half b_panel[8 * 16];
  threadgroup half c_block[8 * 16];
  const uint row0 = tg.y * 8;
  const uint col0 = tg.x * 16;
  simdgroup_half8x8 acc = make_filled_simdgroup_matrix<half, 8, 8>(0.0h);
  for (uint k = 0; k < d.K; k += 8) {
    b_panel[tid] = B[(k + tid / 16) * d.N + col0 + tid % 16];
    b_panel[tid + 64] = B[(k + 4 + tid / 16) * d.N + col0 + tid % 16];
    a_tile[tid] = A[(row0 + tid / 8) * d.K + k + tid % 8];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_half8x8 a, b;
    simdgroup_load(a, a_tile);
    simdgroup_load(b, b_panel, 16, ulong2(sg * 8, 0));
    simdgroup_multiply_accumulate(acc, a, b, acc);
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  simdgroup_store(acc, c_block, 16, ulong2(sg * 8, 0));
  threadgroup_barrier(mem_flags::mem_threadgroup);
  C[(row0 + tid / 16) * d.N + col0 + tid % 16] = c_block[tid];
  C[(row0 + 4 + tid / 16) * d.N + col0 + tid % 16] = c_block[tid + 64];
}
