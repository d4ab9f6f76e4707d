// Matrix transpose through a padded threadgroup tile (2D grid).
#include <metal_stdlib>
using namespace metal;

constant constexpr uint TILE = 16;

kernel void transpose(device const float* in [[buffer(0)]],
                      device float* out [[buffer(1)]],
                      constant uint2& size [[buffer(2)]],
                      uint2 gid [[thread_position_in_grid]],
                      uint2 tid [[thread_position_in_threadgroup]],
                      uint2 tg [[threadgroup_position_in_grid]]) {
  threadgroup float tile[TILE][TILE + 1];
  if (gid.x < size.x && gid.y < size.y) tile[tid.y][tid.x] = in[gid.y * size.x + gid.x];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const uint2 o = uint2(tg.y * TILE + tid.x, tg.x * TILE + tid.y);
  if (o.x < size.y && o.y < size.x) out[o.y * size.y + o.x] = tile[tid.x][tid.y];
}
// EXPECT: air.threadgroup_barrier
