// The shape of a dispatch: threadgroups in the grid, threads in each, and
// where a threadgroup sits and how big it is at the grid's edge.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace mtlemu::emu {

using Size3 = std::array<uint32_t, 3>;

struct DispatchGrid {
  Size3 threadgroups{1, 1, 1};             // threadgroups_per_grid
  Size3 threads_per_threadgroup{1, 1, 1};  // as dispatched
  Size3 threads_per_grid{1, 1, 1};         // edge threadgroups are cut to this
};

// The position of threadgroup number `index` (x fastest).
inline Size3 ThreadgroupPosition(const DispatchGrid& g, uint64_t index) {
  return {
      static_cast<uint32_t>(index % g.threadgroups[0]),
      static_cast<uint32_t>((index / g.threadgroups[0]) % g.threadgroups[1]),
      static_cast<uint32_t>(index / (static_cast<uint64_t>(g.threadgroups[0]) *
                                     g.threadgroups[1]))};
}

// The number of the threadgroup at `position` (ThreadgroupPosition's
// inverse).
inline uint64_t ThreadgroupIndex(const DispatchGrid& g, const Size3& position) {
  return position[0] +
         uint64_t{g.threadgroups[0]} *
             (position[1] + uint64_t{g.threadgroups[1]} * position[2]);
}

// The threadgroup's actual size: cut at the grid's edge (dispatchThreads).
inline Size3 ThreadgroupSize(const DispatchGrid& g, const Size3& position) {
  Size3 size;
  for (int i = 0; i < 3; ++i) {
    const uint64_t start =
        static_cast<uint64_t>(position[i]) * g.threads_per_threadgroup[i];
    const uint64_t left =
        g.threads_per_grid[i] > start ? g.threads_per_grid[i] - start : 0;
    size[i] = static_cast<uint32_t>(
        std::min<uint64_t>(g.threads_per_threadgroup[i], left));
  }
  return size;
}

// Where thread `index` (thread_index_in_threadgroup) of the threadgroup at
// `position`, of `size`, is in the grid.
inline Size3 ThreadPositionInGrid(const DispatchGrid& g, const Size3& position,
                                  const Size3& size, uint32_t index) {
  const Size3 in_threadgroup = {index % size[0], (index / size[0]) % size[1],
                                index / (size[0] * size[1])};
  Size3 out;
  for (int d = 0; d < 3; ++d) {
    out[d] = position[d] * g.threads_per_threadgroup[d] + in_threadgroup[d];
  }
  return out;
}

}  // namespace mtlemu::emu
