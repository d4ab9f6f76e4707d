#include "emu/check/kernel_checker.h"

#include <algorithm>
#include <bit>

namespace mtlemu::emu {

KernelChecker::KernelChecker(
    const CheckOptions& options, const DecodedInstruction* code,
    const std::vector<UninitializedRegion>* uninitialized)
    : options_(options),
      record_device_(options.race),
      code_(code),
      uninitialized_(uninitialized) {}

void KernelChecker::StartThreadgroup(uint64_t index,
                                     uint32_t threadgroup_memory_length,
                                     uint32_t simdgroups) {
  threadgroup_ = index;
  simdgroup_ = 0;
  device_epoch_ = 0;
  simd_device_epoch_.assign(simdgroups, 0);
  shadow_.StartThreadgroup(threadgroup_memory_length, simdgroups);
  written_words_.clear();
}

void KernelChecker::FinishThreadgroup() {
  for (const auto& [word, mask] : written_words_) {
    initialized_bytes_.emplace_back(word, mask);
  }
  written_words_.clear();
}

// Inlined into both entry points: the threadgroup shadow's check of one
// thread's access.
inline void KernelChecker::ThreadgroupAccess(uint32_t pc, uint32_t thread,
                                             uint32_t address, uint32_t size,
                                             AccessType type) {
  // Most lanes of a tile row or a broadcast are quiet reads, known from one
  // word of the shadow.
  if (shadow_.IsQuietRead(address, size, type, thread)) return;
  const ShadowAccess access{pc, static_cast<uint16_t>(thread), type,
                            shadow_.simd_epoch(simdgroup_)};
  const auto finding = [&](FindingKind kind, uint32_t byte) {
    RawFinding f;
    f.kind = kind;
    f.first = {pc, thread, type, threadgroup_};
    f.space = isa::AddressSpace::kThreadgroup;
    f.address = byte;
    f.size = size;
    return f;
  };
  shadow_.Access(
      address, size, access,
      [&](const ShadowAccess& earlier, uint32_t byte) {
        if (!options_.race) return;
        RawFinding f = finding(FindingKind::kThreadgroupRace, byte);
        f.second = f.first;
        f.first = {earlier.pc, earlier.thread, earlier.type, threadgroup_};
        f.has_second = true;
        findings_.Add(f);
      },
      [&](uint32_t byte) {
        if (options_.init) {
          findings_.Add(
              finding(FindingKind::kUninitializedThreadgroupRead, byte));
        }
      });
}

void KernelChecker::ThreadgroupAccesses(uint32_t pc, uint32_t mask,
                                        const uint32_t* address, uint32_t size,
                                        AccessType type) {
  const uint32_t first = simdgroup_ * kLanes;
  for (uint32_t m = mask; m != 0; m &= m - 1) {
    const int l = std::countr_zero(m);
    const uint32_t thread = first + static_cast<uint32_t>(l);
    ThreadgroupAccess(pc, thread, address[l], size, type);
  }
}

void KernelChecker::RecordDevice(uint32_t pc, uint32_t first_lane,
                                 uint32_t lanes, uint64_t begin, uint32_t size,
                                 AccessType type, const uint8_t* written) {
  DeviceAccessRecord r;
  r.begin = begin;
  r.threadgroup = threadgroup_;
  r.length = size * lanes;
  r.pc = pc;
  r.barrier_epoch = device_epoch_;
  r.simd_epoch = simd_device_epoch_[simdgroup_];
  r.first_thread = static_cast<uint16_t>(simdgroup_ * kLanes + first_lane);
  r.element_size = static_cast<uint8_t>(size);
  r.type = type;
  log_.Append(r, written);
}

template <typename A>
void KernelChecker::LaneAccesses(const DecodedInstruction& d,
                                 isa::AddressSpace space, uint32_t mask,
                                 const A* address, uint32_t size,
                                 AccessType type) {
  const uint32_t pc = Pc(d);
  if (space == isa::AddressSpace::kThreadgroup) {
    if constexpr (sizeof(A) == 4) {
      ThreadgroupAccesses(pc, mask, address, size, type);
    } else {
      uint32_t narrow[kLanes];
      for (int l = 0; l < kLanes; ++l) {
        narrow[l] = static_cast<uint32_t>(address[l]);
      }
      ThreadgroupAccesses(pc, mask, narrow, size, type);
    }
    return;
  }
  if (space != isa::AddressSpace::kDevice) return;
  if (record_device_) {
    // A record per run of consecutive lanes at consecutive elements: what
    // Append makes of them lane by lane.
    for (uint32_t m = mask; m != 0;) {
      const uint32_t first = static_cast<uint32_t>(std::countr_zero(m));
      uint32_t lanes = 1;
      while (first + lanes < kLanes && ((m >> (first + lanes)) & 1) != 0 &&
             address[first + lanes] ==
                 static_cast<A>(address[first] + uint64_t{size} * lanes)) {
        ++lanes;
      }
      RecordDevice(pc, first, lanes, address[first], size, type, nullptr);
      m = first + lanes >= kLanes ? 0u : m & (~0u << (first + lanes));
    }
  }
  if (options_.init && !uninitialized_->empty()) {
    for (uint32_t m = mask; m != 0; m &= m - 1) {
      const int l = std::countr_zero(m);
      DeviceInit(pc, simdgroup_ * kLanes + static_cast<uint32_t>(l), address[l],
                 size, type);
    }
  }
}

template void KernelChecker::LaneAccesses<uint32_t>(const DecodedInstruction&,
                                                    isa::AddressSpace, uint32_t,
                                                    const uint32_t*, uint32_t,
                                                    AccessType);
template void KernelChecker::LaneAccesses<uint64_t>(const DecodedInstruction&,
                                                    isa::AddressSpace, uint32_t,
                                                    const uint64_t*, uint32_t,
                                                    AccessType);

void KernelChecker::MemoryAccess(const DecodedInstruction& d,
                                 isa::AddressSpace space, int lane,
                                 uint64_t address, uint32_t size,
                                 AccessType type, const uint8_t* written) {
  const uint32_t pc = Pc(d);
  const uint32_t thread = simdgroup_ * kLanes + static_cast<uint32_t>(lane);
  if (space == isa::AddressSpace::kThreadgroup) {
    ThreadgroupAccess(pc, thread, static_cast<uint32_t>(address), size, type);
    return;
  }
  if (space != isa::AddressSpace::kDevice) return;
  if (record_device_) {
    RecordDevice(pc, static_cast<uint32_t>(lane), 1, address, size, type,
                 written);
  }
  if (options_.init && !uninitialized_->empty()) {
    DeviceInit(pc, thread, address, size, type);
  }
}

void KernelChecker::ContiguousAccess(const DecodedInstruction& d,
                                     isa::AddressSpace space, uint64_t first,
                                     uint32_t size, AccessType type,
                                     const uint8_t* written) {
  if (space == isa::AddressSpace::kThreadgroup) {
    uint32_t address[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      address[l] = static_cast<uint32_t>(first + uint64_t{size} * l);
    }
    ThreadgroupAccesses(Pc(d), kAllLanes, address, size, type);
    return;
  }
  if (space != isa::AddressSpace::kDevice) return;
  const uint32_t pc = Pc(d);
  if (record_device_) {
    RecordDevice(pc, 0, kLanes, first, size, type, written);
  }
  if (options_.init && !uninitialized_->empty()) {
    for (int l = 0; l < kLanes; ++l) {
      DeviceInit(pc, simdgroup_ * kLanes + static_cast<uint32_t>(l),
                 first + uint64_t{size} * l, size, type);
    }
  }
}

void KernelChecker::DeviceInit(uint32_t pc, uint32_t thread, uint64_t address,
                               uint32_t size, AccessType type) {
  const auto it = std::upper_bound(
      uninitialized_->begin(), uninitialized_->end(), address,
      [](uint64_t a, const UninitializedRegion& r) { return a < r.base; });
  if (it == uninitialized_->begin()) return;
  const UninitializedRegion& region = *std::prev(it);
  if (address - region.base >= region.length) return;
  if (IsRead(type)) {
    for (uint64_t byte = address; byte < address + size; ++byte) {
      if (region.IsInitialized(byte - region.base)) continue;
      const auto w = written_words_.find(byte >> 3);
      if (w != written_words_.end() && (w->second >> (byte & 7)) & 1) continue;
      RawFinding f;
      f.kind = FindingKind::kUninitializedDeviceRead;
      f.first = {pc, thread, type, threadgroup_};
      f.space = isa::AddressSpace::kDevice;
      f.address = byte;
      f.size = size;
      findings_.Add(f);
      break;
    }
  }
  if (IsWrite(type)) {
    for (uint64_t byte = address; byte < address + size; ++byte) {
      written_words_[byte >> 3] |= static_cast<uint8_t>(1u << (byte & 7));
    }
  }
}

void KernelChecker::InactiveLaneRead(const DecodedInstruction& d, int lane,
                                     int source) {
  if (!options_.simd) return;
  RawFinding f;
  f.kind = FindingKind::kInactiveLaneRead;
  f.first = {Pc(d), simdgroup_ * kLanes + static_cast<uint32_t>(lane),
             AccessType::kRead, threadgroup_};
  f.source_lane = static_cast<uint32_t>(source);
  findings_.Add(f);
}

void KernelChecker::SimdgroupBarrier(uint8_t mem_flags) {
  if (mem_flags & isa::kMemThreadgroup) shadow_.SimdgroupBarrier(simdgroup_);
  if (mem_flags & isa::kMemDevice) ++simd_device_epoch_[simdgroup_];
}

void KernelChecker::ThreadgroupBarrier(
    const std::vector<std::pair<uint32_t, uint32_t>>& waiting,
    const std::vector<std::pair<uint32_t, uint32_t>>& finished) {
  if (waiting.empty()) return;
  // A SIMD group that returned before the barrier may leave it to the
  // others (Apple's GPUs wait for the threads that remain); one that ran
  // past it skipped it.
  for (const auto& [simdgroup, pc] : finished) {
    if (!options_.simd || pc <= waiting[0].second) continue;
    RawFinding f;
    f.kind = FindingKind::kSkippedBarrier;
    f.first = {waiting[0].second, waiting[0].first * kLanes, AccessType::kNone,
               threadgroup_};
    f.second = {pc, simdgroup * kLanes, AccessType::kNone, threadgroup_};
    f.has_second = true;
    findings_.Add(f);
  }
  // Memory is ordered only as far as every barrier released together says.
  uint8_t flags = 0xff;
  for (const auto& [simdgroup, pc] : waiting) {
    flags &= code_[pc].inst->mem_flags;
    if (options_.simd && (pc != waiting[0].second ||
                          code_[pc].inst->mem_flags !=
                              code_[waiting[0].second].inst->mem_flags)) {
      RawFinding f;
      f.kind = FindingKind::kMismatchedBarrier;
      f.first = {waiting[0].second, waiting[0].first * kLanes,
                 AccessType::kNone, threadgroup_};
      f.second = {pc, simdgroup * kLanes, AccessType::kNone, threadgroup_};
      f.has_second = true;
      findings_.Add(f);
    }
  }
  if (flags & isa::kMemThreadgroup) shadow_.Barrier();
  if (flags & isa::kMemDevice) ++device_epoch_;
}

}  // namespace mtlemu::emu
