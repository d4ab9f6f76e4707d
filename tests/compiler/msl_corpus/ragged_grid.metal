// dispatchThreads with a 2-D grid that is not a multiple of the threadgroup
// size: the kernel has no bounds check, so a thread launched past the
// grid would write outside its row or past the end of the buffers. Every
// thread counts itself with an atomic and records its position attributes,
// so the test can check that each element is written exactly once, that
// the edge threadgroups are cut to fit, and that nothing past the end
// changes.
#include <metal_stdlib>
using namespace metal;

kernel void ragged_grid(device uint* ids [[buffer(0)]],
                        device atomic_uint* counts [[buffer(1)]],
                        device uint* shape [[buffer(2)]],
                        uint2 gid [[thread_position_in_grid]],
                        uint2 grid [[threads_per_grid]],
                        uint2 lid [[thread_position_in_threadgroup]],
                        uint2 tgp [[threadgroup_position_in_grid]],
                        uint2 tpt [[threads_per_threadgroup]],
                        uint2 groups [[threadgroups_per_grid]]) {
  const uint idx = gid.y * grid.x + gid.x;
  ids[idx] = (gid.y << 16) | gid.x;
  atomic_fetch_add_explicit(&counts[idx], 1u, memory_order_relaxed);
  // Where the thread is in its threadgroup, and that threadgroup's size.
  shape[2 * idx] = (lid.y << 24) | (lid.x << 16) | (tpt.y << 8) | tpt.x;
  // Which threadgroup, checked against the position: 1 when consistent.
  const uint2 dispatched = uint2(16, 8);
  const bool consistent = all(tgp * dispatched + lid == gid) &&
                          all(tgp < groups) && grid.x > gid.x && grid.y > gid.y;
  shape[2 * idx + 1] = (tgp.y << 16) | (tgp.x << 1) | (consistent ? 1u : 0u);
}
