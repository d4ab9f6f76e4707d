#include "emu/dispatch/threadgroup_runner.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "emu/exec/exec_context.h"

namespace mtlemu::emu {
namespace {

using isa::SpecialRegister;

// The next number of the SplitMix64 sequence that `state` is at.
uint64_t SplitMix64(uint64_t& state) {
  state += 0x9e3779b97f4a7c15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Fills the slot of one special register for all lanes of SIMD group
// `simd` in a threadgroup of `size` at `position`.
void FillSpecial(SpecialRegister sr, uint32_t* slot, const DispatchGrid& g,
                 const Size3& position, const Size3& size, uint32_t simd) {
  const uint32_t threads = size[0] * size[1] * size[2];
  const uint32_t dispatch_threads = g.threads_per_threadgroup[0] *
                                    g.threads_per_threadgroup[1] *
                                    g.threads_per_threadgroup[2];
  const uint32_t first = simd * kLanes;
  const auto per_lane = [slot](auto f) {
    for (int l = 0; l < kLanes; ++l) slot[l] = f(static_cast<uint32_t>(l));
  };
  const auto uniform = [slot](uint32_t v) { std::fill_n(slot, kLanes, v); };
  // Lane positions in the threadgroup, by counting from the first lane's
  // (no division per lane).
  const auto positions = [&](int axis) {
    // (Divisions cost: a one-dimensional threadgroup needs none.)
    uint32_t p[3] = {first, 0, 0};
    if (first >= size[0]) {
      p[0] = first % size[0];
      p[1] = (first / size[0]) % size[1];
      p[2] = first / (size[0] * size[1]);
    }
    if (p[0] + kLanes <= size[0]) {  // the lanes are in one row
      if (axis != 0) return uniform(p[axis]);
      for (int l = 0; l < kLanes; ++l) slot[l] = p[0] + l;
      return;
    }
    for (int l = 0; l < kLanes; ++l) {
      slot[l] = p[axis];
      if (++p[0] == size[0]) {
        p[0] = 0;
        if (++p[1] == size[1]) {
          p[1] = 0;
          ++p[2];
        }
      }
    }
  };
  const auto in_grid = [&](int axis) {
    positions(axis);
    const uint32_t base = position[axis] * g.threads_per_threadgroup[axis];
    for (int l = 0; l < kLanes; ++l) slot[l] += base;
  };
  switch (sr) {
    case SpecialRegister::kThreadPositionInGridX:
      return in_grid(0);
    case SpecialRegister::kThreadPositionInGridY:
      return in_grid(1);
    case SpecialRegister::kThreadPositionInGridZ:
      return in_grid(2);
    case SpecialRegister::kThreadPositionInThreadgroupX:
      return positions(0);
    case SpecialRegister::kThreadPositionInThreadgroupY:
      return positions(1);
    case SpecialRegister::kThreadPositionInThreadgroupZ:
      return positions(2);
    case SpecialRegister::kThreadIndexInThreadgroup:
      return per_lane([&](uint32_t l) { return first + l; });
    case SpecialRegister::kThreadIndexInSimdgroup:
      return per_lane([](uint32_t l) { return l; });
    case SpecialRegister::kThreadIndexInQuadgroup:
      return per_lane([](uint32_t l) { return l % 4; });
    case SpecialRegister::kQuadgroupIndexInThreadgroup:
      return per_lane([&](uint32_t l) { return (first + l) / 4; });
    case SpecialRegister::kThreadgroupPositionInGridX:
      return uniform(position[0]);
    case SpecialRegister::kThreadgroupPositionInGridY:
      return uniform(position[1]);
    case SpecialRegister::kThreadgroupPositionInGridZ:
      return uniform(position[2]);
    case SpecialRegister::kThreadsPerThreadgroupX:
      return uniform(size[0]);
    case SpecialRegister::kThreadsPerThreadgroupY:
      return uniform(size[1]);
    case SpecialRegister::kThreadsPerThreadgroupZ:
      return uniform(size[2]);
    case SpecialRegister::kDispatchThreadsPerThreadgroupX:
      return uniform(g.threads_per_threadgroup[0]);
    case SpecialRegister::kDispatchThreadsPerThreadgroupY:
      return uniform(g.threads_per_threadgroup[1]);
    case SpecialRegister::kDispatchThreadsPerThreadgroupZ:
      return uniform(g.threads_per_threadgroup[2]);
    case SpecialRegister::kThreadgroupsPerGridX:
      return uniform(g.threadgroups[0]);
    case SpecialRegister::kThreadgroupsPerGridY:
      return uniform(g.threadgroups[1]);
    case SpecialRegister::kThreadgroupsPerGridZ:
      return uniform(g.threadgroups[2]);
    case SpecialRegister::kThreadsPerGridX:
      return uniform(g.threads_per_grid[0]);
    case SpecialRegister::kThreadsPerGridY:
      return uniform(g.threads_per_grid[1]);
    case SpecialRegister::kThreadsPerGridZ:
      return uniform(g.threads_per_grid[2]);
    case SpecialRegister::kSimdgroupIndexInThreadgroup:
      return uniform(simd);
    case SpecialRegister::kSimdgroupsPerThreadgroup:
      return uniform((threads + kLanes - 1) / kLanes);
    case SpecialRegister::kThreadsPerSimdgroup:
      return uniform(kLanes);
    case SpecialRegister::kQuadgroupsPerThreadgroup:
      return uniform((threads + 3) / 4);
    case SpecialRegister::kDispatchSimdgroupsPerThreadgroup:
      return uniform((dispatch_threads + kLanes - 1) / kLanes);
    case SpecialRegister::kDispatchQuadgroupsPerThreadgroup:
      return uniform((dispatch_threads + 3) / 4);
  }
}

// Where a fault happened: in SIMD group `simdgroup` of the threadgroup at
// `position`, at instruction `pc` (fault.lane: the handler's).
void Locate(Fault& fault, const DispatchSetup& setup, const Size3& position,
            const Size3& size, uint32_t simdgroup, uint32_t pc) {
  fault.simdgroup = simdgroup;
  fault.pc = pc;
  fault.threadgroup_position = position;
  fault.thread_position = ThreadPositionInGrid(setup.grid, position, size,
                                               simdgroup * kLanes + fault.lane);
}

}  // namespace

void ThreadgroupRunner::StartSimdGroup(const DispatchSetup& setup,
                                       const Size3& position, const Size3& size,
                                       uint32_t index) {
  const DecodedKernel& k = *setup.kernel;
  const SlotLayout& layout = k.layout;
  SimdGroup& sg = simd_groups_[index];
  std::vector<uint32_t>& file = sg.lane_file();
  // A runner serves one dispatch, and uniforms and immediates are read-only:
  // they are splatted once per SIMD group object, not once per start.
  if (file.size() != static_cast<size_t>(layout.total) * kLanes) {
    file.assign(static_cast<size_t>(layout.total) * kLanes, 0);
    for (size_t u = 0; u < setup.uniforms.size(); ++u) {
      std::fill_n(&file[(layout.uniform_base + u) * kLanes], kLanes,
                  setup.uniforms[u]);
    }
    for (size_t i = 0; i < layout.immediates.size(); ++i) {
      std::fill_n(&file[(layout.immediate_base + i) * kLanes], kLanes,
                  layout.immediates[i]);
    }
  }
  // Registers start at zero (Metal leaves them undefined; zero makes runs
  // repeat exactly whatever thread ran the SIMD group before).
  std::fill_n(file.data(), static_cast<size_t>(layout.uniform_base) * kLanes,
              0u);
  for (size_t s = 0; s < layout.specials.size(); ++s) {
    FillSpecial(layout.specials[s], &file[(layout.special_base + s) * kLanes],
                setup.grid, position, size, index);
  }
  const uint32_t threads = size[0] * size[1] * size[2];
  const uint32_t first = index * kLanes;
  const uint32_t lanes = std::min<uint32_t>(kLanes, threads - first);
  sg.Start(lanes == kLanes ? kAllLanes : (1u << lanes) - 1);
}

void ThreadgroupRunner::FillThreadgroupMemory(const DispatchSetup& setup,
                                              const Size3& position) {
  const uint32_t length = setup.threadgroup_memory_length;
  switch (setup.threadgroup_memory_fill) {
    case ThreadgroupMemoryFill::kZero:
      threadgroup_memory_.assign(length, 0);
      return;
    case ThreadgroupMemoryFill::kPoison:
      threadgroup_memory_.assign(length, 0xff);
      return;
    case ThreadgroupMemoryFill::kRandom:
      break;
  }
  threadgroup_memory_.resize(length);
  // SplitMix64 from the threadgroup's position: independent of which host
  // thread runs it, and different for each threadgroup.
  uint64_t state = (uint64_t{position[2]} << 42) ^
                   (uint64_t{position[1]} << 21) ^ position[0];
  for (uint32_t i = 0; i < length; i += 8) {
    const uint64_t z = SplitMix64(state);
    for (uint32_t b = 0; b < 8 && i + b < length; ++b) {
      threadgroup_memory_[i + b] = static_cast<uint8_t>(z >> (8 * b));
    }
  }
}

ExecContext& ThreadgroupRunner::PrepareContext(const DispatchSetup& setup,
                                               const Size3& position,
                                               Fault& fault,
                                               KernelChecker* checker) {
  // Everything but the compiled code's region cache, which stays valid for
  // the dispatch.
  ExecContext& ctx = ctx_;
  ctx.slots = nullptr;
  ctx.mask = 0;
  ctx.device = setup.device;
  ctx.threadgroup_memory = threadgroup_memory_.data();
  ctx.threadgroup_memory_size = setup.threadgroup_memory_length;
  ctx.thread_memory = nullptr;
  ctx.thread_memory_size = 0;
  ctx.fault = &fault;
  ctx.faulted = false;
  ctx.checker = checker;
  ctx.memory_checker =
      checker != nullptr && (checker->options().race || checker->options().init)
          ? checker
          : nullptr;
  ctx.near_buffer = setup.out_of_bounds == OutOfBoundsPolicy::kReport
                        ? &near_buffer_
                        : nullptr;
  ctx.code = setup.kernel->code.data();
  ctx.threadgroup_index = ThreadgroupIndex(setup.grid, position);
  ctx.simdgroup = 0;
  return ctx;
}

bool ThreadgroupRunner::Run(const DispatchSetup& setup, const Size3& position,
                            StopSignal& stop, SimdGroupStats& stats,
                            Fault& fault, ThreadgroupTrace* trace,
                            KernelChecker* checker) {
  const Size3 size = ThreadgroupSize(setup.grid, position);
  const uint32_t threads = size[0] * size[1] * size[2];
  if (threads == 0) {
    if (trace != nullptr) trace->simd_groups.clear();  // (a reused trace)
    return true;
  }
  const DecodedKernel& kernel = *setup.kernel;
  // Taking turns from branch to branch needs the SIMD groups each in its
  // own SimdGroup::Run (schedule.h).
  const SimdgroupOrder order = setup.schedule.order;
  const bool interleave =
      Interleaves(setup.schedule, !kernel.unordered_accesses.empty());
  if (!interleave && kernel.groups != nullptr && trace == nullptr &&
      checker == nullptr && size[0] % kLanes == 0 &&
      kernel.kernel->thread_memory == 0) {
    return RunWhole(setup, position, size, stop, stats, fault);
  }
  if (!interleave && !kernel.phases.empty() && trace == nullptr &&
      checker == nullptr && threads % kLanes == 0 &&
      kernel.kernel->thread_memory == 0) {
    return RunPhases(setup, position, size, stop, stats, fault);
  }
  const uint32_t count = (threads + kLanes - 1) / kLanes;
  if (simd_groups_.size() < count) simd_groups_.resize(count);
  if (trace != nullptr) {
    const TraceGeometry geometry = setup.timing->geometry();
    trace->threads = threads;
    trace->simd_groups.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
      trace->simd_groups[i].Clear();
      simd_groups_[i].set_trace(&trace->simd_groups[i], geometry);
    }
  } else {
    for (SimdGroup& sg : simd_groups_) sg.set_trace(nullptr, {});
  }
  // Threadgroup memory is undefined at start in Metal: filled as the
  // setup says, the same on every run.
  FillThreadgroupMemory(setup, position);
  const uint32_t thread_memory = setup.kernel->kernel->thread_memory;
  thread_memory_.assign(static_cast<size_t>(thread_memory) * kLanes * count, 0);
  for (uint32_t i = 0; i < count; ++i) {
    StartSimdGroup(setup, position, size, i);
  }

  ExecContext& ctx = PrepareContext(setup, position, fault, checker);
  ctx.thread_memory_size = thread_memory;
  if (checker != nullptr) told_.assign(count, false);
  // SIMD group i on until its barrier, exit or fault (or, interleaved, its
  // next branch); false on a fault or stop.
  const auto run = [&](uint32_t i) {
    SimdGroup& sg = simd_groups_[i];
    ctx.slots = sg.lane_file().data();
    ctx.thread_memory =
        thread_memory_.data() + static_cast<size_t>(thread_memory) * kLanes * i;
    ctx.simdgroup = i;
    if (checker != nullptr) checker->SetSimdgroup(i);
    if (sg.Run(kernel, ctx, stop, stats, interleave) ==
        SimdGroupStatus::kFaulted) {
      if (ctx.faulted) Locate(fault, setup, position, size, i, sg.pc());
      return false;
    }
    return true;
  };
  // kRandom: the seed and the threadgroup's index pick each turn.
  uint64_t random =
      setup.schedule.seed ^ (ctx.threadgroup_index * 0x9e3779b97f4a7c15ull);
  while (true) {
    if (order == SimdgroupOrder::kRandom) {
      ready_.clear();
      for (uint32_t i = 0; i < count; ++i) {
        if (simd_groups_[i].status() == SimdGroupStatus::kReady) {
          ready_.push_back(i);
        }
      }
      while (!ready_.empty()) {
        const size_t k = SplitMix64(random) % ready_.size();
        if (!run(ready_[k])) return false;
        if (simd_groups_[ready_[k]].status() != SimdGroupStatus::kReady) {
          ready_[k] = ready_.back();
          ready_.pop_back();
        }
      }
    } else {
      // Sequential: one round, each to its barrier; interleaved: rounds of
      // a turn each, in index order, until none is ready.
      for (bool any_ready = true; any_ready;) {
        any_ready = false;
        for (uint32_t i = 0; i < count; ++i) {
          if (simd_groups_[i].status() != SimdGroupStatus::kReady) continue;
          if (!run(i)) return false;
          any_ready |= simd_groups_[i].status() == SimdGroupStatus::kReady;
        }
      }
    }
    bool any_at_barrier = false;
    for (uint32_t i = 0; i < count; ++i) {
      any_at_barrier |= simd_groups_[i].status() == SimdGroupStatus::kAtBarrier;
    }
    if (!any_at_barrier) return true;
    if (checker != nullptr) {
      at_barrier_.clear();
      finished_.clear();
      for (uint32_t i = 0; i < count; ++i) {
        const SimdGroup& sg = simd_groups_[i];
        if (sg.status() == SimdGroupStatus::kAtBarrier) {
          at_barrier_.emplace_back(i, sg.pc() - 1);
        } else if (sg.status() == SimdGroupStatus::kDone && !told_[i]) {
          finished_.emplace_back(i, sg.finished_after());
          told_[i] = true;  // once
        }
      }
      checker->ThreadgroupBarrier(at_barrier_, finished_);
    }
    for (uint32_t i = 0; i < count; ++i) {
      if (simd_groups_[i].status() == SimdGroupStatus::kAtBarrier) {
        simd_groups_[i].ReleaseBarrier();
      }
    }
  }
}

bool ThreadgroupRunner::RunWhole(const DispatchSetup& setup,
                                 const Size3& position, const Size3& size,
                                 StopSignal& stop, SimdGroupStats& stats,
                                 Fault& fault) {
  const DecodedKernel& kernel = *setup.kernel;
  const uint32_t count = size[0] * size[1] * size[2] / kLanes;
  if (simd_groups_.empty()) simd_groups_.resize(1);
  FillThreadgroupMemory(setup, position);
  StartSimdGroup(setup, position, size, 0);
  ExecContext& ctx = PrepareContext(setup, position, fault, nullptr);
  ctx.slots = simd_groups_[0].lane_file().data();
  ctx.mask = kAllLanes;
  JitGroups groups;
  groups.size[0] = size[0];
  groups.size[1] = size[1];
  for (int a = 0; a < 3; ++a) {
    groups.base[a] = position[a] * setup.grid.threads_per_threadgroup[a];
  }
  // Each SIMD group runs the run and its `exit`.
  const uint64_t per_group = kernel.code[0].run_end + uint64_t{1};
  for (uint32_t first = 0; first < count;) {
    // The SIMD groups that fit before the next look at the stop signal.
    const uint64_t fit = stop.Fit(per_group);
    if (fit == 0) return false;
    const uint32_t lane = first * kLanes;
    groups.first = first;
    groups.count =
        static_cast<uint32_t>(std::min<uint64_t>(fit, count - first));
    groups.position[0] = lane % size[0];
    groups.position[1] = lane / size[0] % size[1];
    groups.position[2] = lane / (size[0] * size[1]);
    groups.done = 0;
    const uint32_t ran = kernel.groups(&ctx, kernel.code.data(), &groups);
    const uint64_t instructions = groups.done * per_group;
    stop.Took(instructions);
    stats.instructions += instructions;
    stats.lane_instructions += instructions * kLanes;
    if (ctx.faulted) {
      stats.instructions += ran + 1;
      stats.lane_instructions += (ran + uint64_t{1}) * kLanes;
      Locate(fault, setup, position, size, first + groups.done, ran);
      return false;
    }
    first += groups.count;
  }
  return true;
}

bool ThreadgroupRunner::RunPhases(const DispatchSetup& setup,
                                  const Size3& position, const Size3& size,
                                  StopSignal& stop, SimdGroupStats& stats,
                                  Fault& fault) {
  const DecodedKernel& kernel = *setup.kernel;
  const uint32_t count = size[0] * size[1] * size[2] / kLanes;
  if (simd_groups_.size() < count) simd_groups_.resize(count);
  FillThreadgroupMemory(setup, position);
  files_.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    StartSimdGroup(setup, position, size, i);
    files_[i] = simd_groups_[i].lane_file().data();
  }
  ExecContext& ctx = PrepareContext(setup, position, fault, nullptr);
  ctx.mask = kAllLanes;
  for (const DecodedKernel::Phase& phase : kernel.phases) {
    // Each SIMD group runs the phase's instructions, some of them under
    // part of its lanes, up to and with the barrier or `exit` it ends at;
    // the compiled code counts them.
    const uint64_t most = phase.end - phase.begin + uint64_t{1};
    for (uint32_t first = 0; first < count;) {
      // The SIMD groups that fit before the next look at the stop signal.
      const uint64_t fit = stop.Fit(most);
      if (fit == 0) return false;
      JitPhase run;
      run.files = files_.data() + first;
      run.first = first;
      run.count = static_cast<uint32_t>(std::min<uint64_t>(fit, count - first));
      uint32_t ran = 0;
      if (phase.run != nullptr) {
        ran = phase.run(&ctx, kernel.code.data(), &run);
      } else {
        run.done = run.count;
        run.instructions = run.count;
        run.lane_instructions = uint64_t{run.count} * kLanes;
      }
      stop.Took(run.instructions);
      stats.instructions += run.instructions;
      stats.lane_instructions += run.lane_instructions;
      if (ctx.faulted) {
        // The SIMD group after those done, at its faulting instruction.
        Locate(fault, setup, position, size, first + run.done,
               phase.begin + ran);
        return false;
      }
      first += run.count;
    }
  }
  return true;
}

}  // namespace mtlemu::emu
