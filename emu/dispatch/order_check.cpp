#include "emu/dispatch/order_check.h"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "emu/dispatch/dispatch_checks.h"

namespace mtlemu::emu {
namespace {

// Every region's bytes, in the map's order.
std::vector<std::vector<uint8_t>> Copy(const AddressMap& map) {
  std::vector<std::vector<uint8_t>> out;
  for (const MemoryRegion& r : map.regions()) {
    out.emplace_back(r.host, r.host + r.length);
  }
  return out;
}

void Restore(const AddressMap& map,
             const std::vector<std::vector<uint8_t>>& bytes) {
  for (size_t i = 0; i < map.regions().size(); ++i) {
    if (bytes[i].empty()) continue;  // (no bytes, maybe no host pointer)
    std::memcpy(map.regions()[i].host, bytes[i].data(), bytes[i].size());
  }
}

}  // namespace

DispatchResult RunDispatchInTwoOrders(const DispatchSetup& setup) {
  const AddressMap& map = *setup.device;
  const std::vector<std::vector<uint8_t>> start = Copy(map);

  // One host thread for both: threadgroups then run in index order, so a
  // race between threadgroups (which no SIMD-group order decides) leaves
  // the same bytes in both runs, on any number of host threads. First the
  // other order: sequential where the schedule interleaves this kernel,
  // else every kernel interleaved.
  DispatchSetup other = setup;
  other.host_threads = 1;
  other.checks = nullptr;
  other.timing = nullptr;
  other.progress = {};
  other.schedule =
      Interleaves(setup.schedule, !setup.kernel->unordered_accesses.empty())
          ? Schedule{SimdgroupOrder::kSequential}
          : Schedule{SimdgroupOrder::kInterleaved, 0, true};
  const DispatchResult first = RunDispatch(other);
  const std::vector<std::vector<uint8_t>> after_first = Copy(map);
  Restore(map, start);

  // Then the schedule's own order, with the other checks and the timing
  // model: its buffers and report are a plain run's.
  CheckOptions others = *setup.checks;
  others.order = false;
  DispatchSetup own = setup;
  own.host_threads = 1;
  own.checks = others.any() ? &others : nullptr;
  DispatchResult result = RunDispatch(own);

  if (!result.check) {
    result.check.emplace();
    result.check->kernel = setup.kernel->kernel->name;
  }
  CheckReport& report = *result.check;
  report.checks = CheckListText(*setup.checks);
  if (first.ok != result.ok) {
    report.notes.push_back(
        first.ok ? "the dispatch faulted in this order only"
                 : "the dispatch faulted in the other order only: " +
                       first.fault.Describe());
  }
  const std::vector<UnorderedAccesses>& pairs =
      setup.kernel->unordered_accesses;
  std::string lines;
  for (const UnorderedAccesses& p : pairs) {
    if (!lines.empty()) lines += "; ";
    lines += fmt::format(
        "{} (read) and {} (write)",
        LineText(InstructionAccess(setup, p.read, AccessType::kRead)),
        LineText(InstructionAccess(setup, p.write, AccessType::kWrite)));
  }
  for (size_t i = 0; i < map.regions().size(); ++i) {
    const MemoryRegion& r = map.regions()[i];
    const std::vector<uint8_t>& a = after_first[i];
    uint64_t differ = 0, first_offset = 0, last_offset = 0;
    for (uint64_t b = 0; b < r.length; ++b) {
      if (a[b] == r.host[b]) continue;
      if (differ++ == 0) first_offset = b;
      last_offset = b;
    }
    if (differ == 0) continue;
    Finding f;
    f.kind = FindingKind::kOrderDependentResult;
    if (!pairs.empty()) {
      f.first = InstructionAccess(setup, pairs[0].read, AccessType::kRead);
      f.second = InstructionAccess(setup, pairs[0].write, AccessType::kWrite);
    }
    f.space = isa::AddressSpace::kDevice;
    f.address = r.base + first_offset;
    f.size = static_cast<uint32_t>(
        std::min<uint64_t>(last_offset - first_offset + 1, UINT32_MAX));
    if (setup.describe_address) {
      f.region = setup.describe_address(f.address, &f.region_offset);
    }
    f.count = differ;
    f.detail = fmt::format(
        "{} byte{} of it (offsets {} to {}) differ between the SIMD groups' "
        "sequential and interleaved orders, which Metal leaves undefined "
        "(the buffer holds the {} order's): ",
        differ, differ == 1 ? "" : "s", first_offset, last_offset,
        other.schedule.order == SimdgroupOrder::kSequential ? "interleaved"
                                                            : "sequential");
    f.detail +=
        lines.empty()
            ? "no threadgroup read and write share a barrier interval, so "
              "the dependence goes through device memory or atomics "
              "(--check race names the accesses)"
            : "threadgroup accesses that no barrier orders: " + lines +
                  " (a threadgroup_barrier between them orders them)";
    report.findings.push_back(std::move(f));
  }
  return result;
}

}  // namespace mtlemu::emu
