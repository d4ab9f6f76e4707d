// C = A * B (float) with 16x16 tiles of A and B staged in threadgroup
// memory, two barriers per step, and zero-filled edges so that M, N and K
// need not be multiples of 16.
#include <metal_stdlib>
using namespace metal;

#define TS 16

struct Dims {
  uint M, N, K;
};

// A: M x K, B: K x N, C: M x N, all row-major.
kernel void tiled_matmul(device const float* A [[buffer(0)]],
                         device const float* B [[buffer(1)]],
                         device float* C [[buffer(2)]],
                         constant Dims& d [[buffer(3)]],
                         uint2 lid [[thread_position_in_threadgroup]],
                         uint2 gid [[thread_position_in_grid]]) {
  threadgroup float As[TS][TS];
  threadgroup float Bs[TS][TS];
  const uint row = gid.y, col = gid.x;
  float acc = 0.0f;
  for (uint k0 = 0; k0 < d.K; k0 += TS) {
    const uint ak = k0 + lid.x, bk = k0 + lid.y;
    As[lid.y][lid.x] = (row < d.M && ak < d.K) ? A[row * d.K + ak] : 0.0f;
    Bs[lid.y][lid.x] = (bk < d.K && col < d.N) ? B[bk * d.N + col] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 0; k < TS; ++k) acc += As[lid.y][k] * Bs[k][lid.x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (row < d.M && col < d.N) C[row * d.N + col] = acc;
}
