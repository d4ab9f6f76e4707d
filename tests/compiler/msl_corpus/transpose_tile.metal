// 2-D transpose through a 16x16 threadgroup tile padded to 17 columns (no
// bank conflicts on the transposed read): a 2-D grid of threadgroups,
// thread_position_in_threadgroup and threadgroup_position_in_grid as
// uint2, and both the read and the write guarded for matrices whose sizes
// are not multiples of the tile.
#include <metal_stdlib>
using namespace metal;

#define TILE 16

// in: rows x cols, row-major; out: cols x rows.
kernel void transpose_tile(device const uint* in [[buffer(0)]],
                           device uint* out [[buffer(1)]],
                           constant uint2& dims [[buffer(2)]],  // (cols, rows)
                           uint2 lid [[thread_position_in_threadgroup]],
                           uint2 tgp [[threadgroup_position_in_grid]]) {
  threadgroup uint tile[TILE][TILE + 1];
  const uint cols = dims.x, rows = dims.y;
  const uint x = tgp.x * TILE + lid.x;
  const uint y = tgp.y * TILE + lid.y;
  if (x < cols && y < rows) tile[lid.y][lid.x] = in[y * cols + x];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  // Thread (lid.x, lid.y) writes out row tgp.x * TILE + lid.y, column
  // tgp.y * TILE + lid.x: consecutive threads write consecutive addresses.
  const uint ox = tgp.y * TILE + lid.x;
  const uint oy = tgp.x * TILE + lid.y;
  if (ox < rows && oy < cols) out[oy * rows + ox] = tile[lid.x][lid.y];
}
