#include "emu/dispatch/dispatch_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "emu/exec/near_buffer.h"

namespace mtlemu::emu {
namespace {

std::string MemFlagsText(uint8_t flags) {
  std::string out;
  for (int bit = 0; bit < isa::kNumMemFlags; ++bit) {
    if (!((flags >> bit) & 1)) continue;
    if (!out.empty()) out += " | ";
    out += "mem_flags::" + std::string(isa::MemFlagName(bit));
  }
  return out.empty() ? "mem_flags::mem_none" : out;
}

}  // namespace

std::string LineText(const FindingAccess& a) {
  return a.source_file.empty()
             ? fmt::format("instruction {}", a.pc)
             : fmt::format("{}:{}", a.source_file, a.location.line);
}

DispatchChecks::DispatchChecks(const DispatchSetup& setup)
    : setup_(setup),
      checkers_(*setup.checks, setup.kernel->code.data(),
                &setup.uninitialized) {}

void DispatchChecks::EndBatch() {
  // Each threadgroup's records are together and in order; threadgroups in
  // index order make the dispatch's log the same on any thread count.
  std::vector<DeviceAccessLog*> parts;
  uint64_t batch_bytes = 0;
  for (KernelChecker& c : checkers_) {
    parts.push_back(&c.device_log());
    batch_bytes += c.device_log().bytes();
  }
  if (log_full_) {
    for (DeviceAccessLog* part : parts) part->Clear();
    return;
  }
  const uint64_t limit = setup_.checks->device_record_limit_bytes;
  if (log_.bytes() + batch_bytes <= limit) {
    log_.TakeByThreadgroup(parts);
    return;
  }
  DeviceAccessLog batch;
  batch.TakeByThreadgroup(parts);
  // Whole threadgroups only, up to the limit.
  uint64_t bytes = log_.bytes();
  size_t keep = 0;
  for (size_t i = 0; i < batch.records.size();) {
    size_t j = i;
    uint64_t cost = 0;
    for (; j < batch.records.size() &&
           batch.records[j].threadgroup == batch.records[i].threadgroup;
         ++j) {
      const DeviceAccessRecord& r = batch.records[j];
      cost += sizeof(DeviceAccessRecord) + (r.has_value ? r.length : 0);
    }
    if (bytes + cost > limit) break;
    bytes += cost;
    keep = i = j;
  }
  unrecorded_from_ = batch.records[keep].threadgroup;
  batch.records.resize(keep);
  log_.Take(batch);
  log_full_ = true;
  for (KernelChecker& c : checkers_) c.StopDeviceRecords();
}

FindingAccess InstructionAccess(const DispatchSetup& setup, uint32_t pc,
                                AccessType type) {
  const isa::Kernel& kernel = *setup.kernel->kernel;
  FindingAccess a;
  a.type = type;
  a.pc = pc;
  a.has_thread = false;
  if (pc < kernel.code.size()) {
    a.location = kernel.code[pc].location;
    if (a.location.file < setup.files.size()) {
      a.source_file = setup.files[a.location.file];
    }
  }
  return a;
}

namespace {

FindingAccess CompleteSide(const DispatchSetup& setup_,
                           const FindingSide& side) {
  FindingAccess a = InstructionAccess(setup_, side.pc, side.type);
  a.has_thread = true;
  a.threadgroup_position = ThreadgroupPosition(setup_.grid, side.threadgroup);
  const Size3 size = ThreadgroupSize(setup_.grid, a.threadgroup_position);
  a.thread_position = ThreadPositionInGrid(setup_.grid, a.threadgroup_position,
                                           size, side.thread);
  a.simdgroup = side.thread / kLanes;
  a.lane = side.thread % kLanes;
  return a;
}

Finding Complete(const DispatchSetup& setup_, const RawFinding& raw) {
  const isa::Kernel& kernel = *setup_.kernel->kernel;
  Finding f;
  f.kind = raw.kind;
  f.first = CompleteSide(setup_, raw.first);
  if (raw.has_second) f.second = CompleteSide(setup_, raw.second);
  f.space = raw.space;
  f.address = raw.address;
  f.size = raw.size;
  f.count = raw.count;
  f.same_value = raw.same_value;
  if (isa::IsWideAddressSpace(raw.space) && setup_.describe_address) {
    f.region = setup_.describe_address(raw.address, &f.region_offset);
  } else if (raw.space == isa::AddressSpace::kThreadgroup) {
    // The kernel's own variables come first, then the [[threadgroup(n)]]
    // blocks at the offsets the encoder gave them.
    f.region = fmt::format("the kernel's threadgroup variables ({} bytes)",
                           kernel.static_threadgroup_memory);
    f.region_offset = static_cast<int64_t>(raw.address);
    uint32_t best = 0;
    for (const isa::ThreadgroupArgument& arg : kernel.threadgroup_arguments) {
      const uint32_t offset =
          static_cast<size_t>(arg.uniform) < setup_.uniforms.size()
              ? setup_.uniforms[arg.uniform]
              : 0;
      if (offset > raw.address || offset < best) continue;
      best = offset;
      f.region = fmt::format("[[threadgroup({})]]", arg.index);
      if (!arg.name.empty()) f.region += " '" + arg.name + "'";
      f.region_offset = static_cast<int64_t>(raw.address - offset);
    }
  }
  switch (raw.kind) {
    case FindingKind::kThreadgroupRace:
      f.detail =
          "no threadgroup_barrier(mem_flags::mem_threadgroup) between them";
      if (f.second && f.first.simdgroup == f.second->simdgroup) {
        f.detail +=
            "; both threads are in one SIMD group, whose lanes run in "
            "lockstep on Apple GPUs, but Metal orders their accesses only "
            "through simdgroup_barrier(mem_flags::mem_threadgroup)";
      }
      break;
    case FindingKind::kDeviceRace:
      f.detail =
          raw.first.threadgroup != raw.second.threadgroup
              ? "the threads are in different threadgroups, which nothing "
                "orders within a dispatch (use atomics, or split the work "
                "into two dispatches)"
              : "no threadgroup_barrier(mem_flags::mem_device) between them";
      if (raw.same_value) {
        f.detail +=
            "; both wrote the same value each time: the result does not "
            "depend on their order, but Metal still makes this a race";
      }
      break;
    case FindingKind::kUninitializedThreadgroupRead:
      f.detail =
          "this threadgroup never wrote these bytes: Metal leaves "
          "threadgroup memory undefined when a threadgroup starts "
          "(--threadgroup-memory-fill poison shows what such reads see)";
      break;
    case FindingKind::kUninitializedDeviceRead:
      f.detail =
          "the buffer was created without contents, and neither the host "
          "nor a kernel had written these bytes";
      break;
    case FindingKind::kInactiveLaneRead:
      f.detail = fmt::format(
          "lane {} reads lane {}, which is inactive here: Metal leaves the "
          "value undefined",
          f.first.lane, raw.source_lane);
      break;
    case FindingKind::kSkippedBarrier:
      f.detail = fmt::format(
          "SIMD group {} waits at the threadgroup_barrier at {}, and SIMD "
          "group {} finished without reaching it, after running {}, past "
          "the barrier: every thread of a threadgroup must reach each "
          "barrier (threads that return before it may leave it to the "
          "others on Apple GPUs; threads that run past it may not)",
          f.first.simdgroup, LineText(f.first), f.second->simdgroup,
          LineText(*f.second));
      break;
    case FindingKind::kNearBufferAccess:
      f.detail = fmt::format(
          "outside every buffer, but within a {} KiB page of one: a Mac "
          "{} that memory, whatever it holds, and goes on; here the bytes "
          "outside the buffer {}, and the dispatch went on (--oob fault "
          "makes such an access a fault)",
          kNearBufferBytes / 1024,
          raw.first.type == AccessType::kRead ? "reads" : "writes",
          raw.first.type == AccessType::kRead ? "read as zero"
                                              : "were not written");
      break;
    case FindingKind::kOrderDependentResult:  // never raw
      break;
    case FindingKind::kMismatchedBarrier: {
      const uint8_t a = kernel.code[raw.first.pc].mem_flags;
      const uint8_t b = kernel.code[raw.second.pc].mem_flags;
      f.detail = fmt::format(
          "SIMD group {} waits at a barrier with {} at {}, SIMD group {} at "
          "{} with {}; every thread of a threadgroup must reach the same "
          "threadgroup_barrier, with the same flags",
          f.first.simdgroup, MemFlagsText(a), LineText(f.first),
          f.second->simdgroup, MemFlagsText(b), LineText(*f.second));
      break;
    }
  }
  return f;
}

}  // namespace

void AppendFindings(const DispatchSetup& setup, const FindingSet& all,
                    CheckReport& report) {
  // One finding per kind and pair of source lines, counts summed; the
  // example is the one of the lowest instruction pair.
  std::map<std::tuple<FindingKind, uint32_t, uint32_t, uint32_t, uint32_t>,
           size_t>
      by_lines;
  all.ForEach([&](const RawFinding& raw) {
    Finding f = Complete(setup, raw);
    using Line = std::pair<uint32_t, uint32_t>;
    const auto line = [](const FindingAccess* a) {
      return a ? Line{a->location.file, a->location.line} : Line{0, 0};
    };
    auto [a_file, a_line] = line(&f.first);
    auto [b_file, b_line] = line(f.second ? &*f.second : nullptr);
    if (Line{b_file, b_line} < Line{a_file, a_line}) {
      std::swap(a_file, b_file);
      std::swap(a_line, b_line);
    }
    const auto key = std::tuple{f.kind, a_file, a_line, b_file, b_line};
    const bool located = !f.first.source_file.empty();
    if (auto it = by_lines.find(key); located && it != by_lines.end()) {
      report.findings[it->second].count += f.count;
      return;
    }
    by_lines.emplace(key, report.findings.size());
    report.findings.push_back(std::move(f));
  });
}

CheckReport DispatchChecks::Finish() {
  FindingSet all;
  for (const KernelChecker& c : checkers_) all.Merge(c.findings());
  CheckReport report;
  report.kernel = setup_.kernel->kernel->name;
  report.checks = CheckListText(*setup_.checks);
  if (setup_.checks->race) {
    EndBatch();  // whatever ran since the last batch
    if (!FindDeviceRaces(log_, all)) {
      report.notes.push_back(fmt::format(
          "some device bytes were accessed by more than {} runs of lanes at "
          "once; their race counts are lower bounds",
          kMaxOverlapsCompared));
    }
    if (log_full_) {
      report.notes.push_back(fmt::format(
          "device-memory races were checked in threadgroups 0 to {} only: "
          "their access records filled the limit of {} MB",
          unrecorded_from_ == 0 ? 0 : unrecorded_from_ - 1,
          setup_.checks->device_record_limit_bytes >> 20));
    }
  }
  if (setup_.checks->init) {
    // The dispatch's writes to buffers created without contents count for
    // the dispatches after it.
    for (KernelChecker& c : checkers_) {
      for (const auto& [word, mask] : c.initialized_bytes()) {
        for (int b = 0; b < 8; ++b) {
          if (!((mask >> b) & 1)) continue;
          const uint64_t address = (word << 3) + static_cast<uint64_t>(b);
          for (const UninitializedRegion& r : setup_.uninitialized) {
            if (address - r.base < r.length) {
              const uint64_t offset = address - r.base;
              (*r.initialized)[offset >> 6] |= uint64_t{1} << (offset & 63);
            }
          }
        }
      }
      c.initialized_bytes().clear();
    }
  }
  AppendFindings(setup_, all, report);
  return report;
}

}  // namespace mtlemu::emu
