#include "emu/dispatch/threadgroup_runner.h"

#include <algorithm>
#include <cstring>

#include "emu/exec/exec_context.h"

namespace mtlemu::emu {
namespace {

using isa::SpecialRegister;

// The threadgroup's actual size: cut at the grid's edge (dispatchThreads).
Size3 ThreadgroupSize(const DispatchGrid& g, const Size3& position) {
  Size3 size;
  for (int i = 0; i < 3; ++i) {
    const uint64_t start =
        static_cast<uint64_t>(position[i]) * g.threads_per_threadgroup[i];
    const uint64_t left = g.threads_per_grid[i] > start
                              ? g.threads_per_grid[i] - start
                              : 0;
    size[i] = static_cast<uint32_t>(
        std::min<uint64_t>(g.threads_per_threadgroup[i], left));
  }
  return size;
}

// Fills the slot of one special register for all lanes of SIMD group
// `simd` in a threadgroup of `size` at `position`.
void FillSpecial(SpecialRegister sr, uint32_t* slot, const DispatchGrid& g,
                 const Size3& position, const Size3& size, uint32_t simd) {
  const uint32_t threads = size[0] * size[1] * size[2];
  const uint32_t first = simd * kLanes;
  // The first lane's position in the threadgroup; the others follow by
  // counting (no division per lane).
  uint32_t tx = first % size[0];
  uint32_t ty = (first / size[0]) % size[1];
  uint32_t tz = first / (size[0] * size[1]);
  for (int l = 0; l < kLanes; ++l) {
    const uint32_t index = first + l;
    uint32_t v = 0;
    switch (sr) {
      case SpecialRegister::kThreadPositionInGridX:
        v = position[0] * g.threads_per_threadgroup[0] + tx; break;
      case SpecialRegister::kThreadPositionInGridY:
        v = position[1] * g.threads_per_threadgroup[1] + ty; break;
      case SpecialRegister::kThreadPositionInGridZ:
        v = position[2] * g.threads_per_threadgroup[2] + tz; break;
      case SpecialRegister::kThreadPositionInThreadgroupX: v = tx; break;
      case SpecialRegister::kThreadPositionInThreadgroupY: v = ty; break;
      case SpecialRegister::kThreadPositionInThreadgroupZ: v = tz; break;
      case SpecialRegister::kThreadIndexInThreadgroup: v = index; break;
      case SpecialRegister::kThreadIndexInSimdgroup: v = l; break;
      case SpecialRegister::kThreadIndexInQuadgroup: v = l % 4; break;
      case SpecialRegister::kQuadgroupIndexInThreadgroup: v = index / 4; break;
      case SpecialRegister::kThreadgroupPositionInGridX: v = position[0]; break;
      case SpecialRegister::kThreadgroupPositionInGridY: v = position[1]; break;
      case SpecialRegister::kThreadgroupPositionInGridZ: v = position[2]; break;
      case SpecialRegister::kThreadsPerThreadgroupX: v = size[0]; break;
      case SpecialRegister::kThreadsPerThreadgroupY: v = size[1]; break;
      case SpecialRegister::kThreadsPerThreadgroupZ: v = size[2]; break;
      case SpecialRegister::kDispatchThreadsPerThreadgroupX:
        v = g.threads_per_threadgroup[0]; break;
      case SpecialRegister::kDispatchThreadsPerThreadgroupY:
        v = g.threads_per_threadgroup[1]; break;
      case SpecialRegister::kDispatchThreadsPerThreadgroupZ:
        v = g.threads_per_threadgroup[2]; break;
      case SpecialRegister::kThreadgroupsPerGridX: v = g.threadgroups[0]; break;
      case SpecialRegister::kThreadgroupsPerGridY: v = g.threadgroups[1]; break;
      case SpecialRegister::kThreadgroupsPerGridZ: v = g.threadgroups[2]; break;
      case SpecialRegister::kThreadsPerGridX: v = g.threads_per_grid[0]; break;
      case SpecialRegister::kThreadsPerGridY: v = g.threads_per_grid[1]; break;
      case SpecialRegister::kThreadsPerGridZ: v = g.threads_per_grid[2]; break;
      case SpecialRegister::kSimdgroupIndexInThreadgroup: v = simd; break;
      case SpecialRegister::kSimdgroupsPerThreadgroup:
        v = (threads + kLanes - 1) / kLanes; break;
      case SpecialRegister::kThreadsPerSimdgroup: v = kLanes; break;
      case SpecialRegister::kQuadgroupsPerThreadgroup:
        v = (threads + 3) / 4; break;
    }
    slot[l] = v;
    if (++tx == size[0]) {
      tx = 0;
      if (++ty == size[1]) {
        ty = 0;
        ++tz;
      }
    }
  }
}

}  // namespace

void ThreadgroupRunner::StartSimdGroup(const DispatchSetup& setup,
                                       const Size3& position,
                                       const Size3& size, uint32_t index) {
  const DecodedKernel& k = *setup.kernel;
  const SlotLayout& layout = k.layout;
  SimdGroup& sg = simd_groups_[index];
  std::vector<uint32_t>& file = sg.lane_file();
  file.assign(static_cast<size_t>(layout.total) * kLanes, 0);
  for (size_t u = 0; u < setup.uniforms.size(); ++u) {
    std::fill_n(&file[(layout.uniform_base + u) * kLanes], kLanes,
                setup.uniforms[u]);
  }
  for (size_t s = 0; s < layout.specials.size(); ++s) {
    FillSpecial(layout.specials[s], &file[(layout.special_base + s) * kLanes],
                setup.grid, position, size, index);
  }
  for (size_t i = 0; i < layout.immediates.size(); ++i) {
    std::fill_n(&file[(layout.immediate_base + i) * kLanes], kLanes,
                layout.immediates[i]);
  }
  const uint32_t threads = size[0] * size[1] * size[2];
  const uint32_t first = index * kLanes;
  const uint32_t lanes = std::min<uint32_t>(kLanes, threads - first);
  sg.Start(lanes == kLanes ? kAllLanes : (1u << lanes) - 1);
}

bool ThreadgroupRunner::Run(const DispatchSetup& setup, const Size3& position,
                            StopSignal& stop, SimdGroupStats& stats,
                            Fault& fault) {
  const Size3 size = ThreadgroupSize(setup.grid, position);
  const uint32_t threads = size[0] * size[1] * size[2];
  if (threads == 0) return true;
  const uint32_t count = (threads + kLanes - 1) / kLanes;
  if (simd_groups_.size() < count) simd_groups_.resize(count);
  // Threadgroup memory is undefined at start in Metal; zero it so runs
  // repeat exactly.
  threadgroup_memory_.assign(setup.threadgroup_memory_length, 0);
  const uint32_t thread_memory = setup.kernel->kernel->thread_memory;
  thread_memory_.assign(static_cast<size_t>(thread_memory) * kLanes * count,
                        0);
  for (uint32_t i = 0; i < count; ++i) {
    StartSimdGroup(setup, position, size, i);
  }

  ExecContext ctx;
  ctx.device = setup.device;
  ctx.threadgroup_memory = threadgroup_memory_.data();
  ctx.threadgroup_memory_size = setup.threadgroup_memory_length;
  ctx.thread_memory_size = thread_memory;
  ctx.fault = &fault;
  while (true) {
    bool any_at_barrier = false;
    for (uint32_t i = 0; i < count; ++i) {
      SimdGroup& sg = simd_groups_[i];
      if (sg.status() != SimdGroupStatus::kReady) continue;
      ctx.slots = sg.lane_file().data();
      ctx.thread_memory = thread_memory_.data() +
                          static_cast<size_t>(thread_memory) * kLanes * i;
      const SimdGroupStatus status = sg.Run(*setup.kernel, ctx, stop, stats);
      if (status == SimdGroupStatus::kFaulted) {
        if (ctx.faulted) {
          fault.simdgroup = i;
          fault.pc = sg.pc();
          const uint32_t index = i * kLanes + fault.lane;
          const Size3 in_tg = {index % size[0], (index / size[0]) % size[1],
                               index / (size[0] * size[1])};
          for (int d = 0; d < 3; ++d) {
            fault.threadgroup_position[d] = position[d];
            fault.thread_position[d] =
                position[d] * setup.grid.threads_per_threadgroup[d] + in_tg[d];
          }
        }
        return false;
      }
      any_at_barrier |= status == SimdGroupStatus::kAtBarrier;
    }
    if (!any_at_barrier) return true;
    for (uint32_t i = 0; i < count; ++i) {
      if (simd_groups_[i].status() == SimdGroupStatus::kAtBarrier) {
        simd_groups_[i].ReleaseBarrier();
      }
    }
  }
}

}  // namespace mtlemu::emu
