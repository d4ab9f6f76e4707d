#include "emu/check/check_report.h"

#include <fmt/format.h>

#include "traces/escape.h"

namespace mtlemu::emu {
namespace {

std::string Where(const FindingAccess& a) {
  if (a.source_file.empty()) return fmt::format("instruction {}", a.pc);
  std::string out = fmt::format("{}:{}", a.source_file, a.location.line);
  if (a.location.column) out += fmt::format(":{}", a.location.column);
  return out;
}

std::string Thread(const FindingAccess& a) {
  return fmt::format(
      "thread ({}, {}, {}) [threadgroup ({}, {}, {}), simdgroup {}, lane {}]",
      a.thread_position[0], a.thread_position[1], a.thread_position[2],
      a.threadgroup_position[0], a.threadgroup_position[1],
      a.threadgroup_position[2], a.simdgroup, a.lane);
}

std::string Side(const FindingAccess& a) {
  if (!a.has_thread) {
    return fmt::format("{} at {} (instruction {})", AccessTypeName(a.type),
                       Where(a), a.pc);
  }
  return fmt::format("{} by {} at {} (instruction {})", AccessTypeName(a.type),
                     Thread(a), Where(a), a.pc);
}

void AppendString(std::string_view text, std::string& out) {
  out += '"';
  traces::AppendJsonEscaped(text, out);
  out += '"';
}

void AppendTriple(const std::array<uint32_t, 3>& v, std::string& out) {
  out += fmt::format("[{}, {}, {}]", v[0], v[1], v[2]);
}

void AppendAccessJson(const FindingAccess& a, std::string& out) {
  out += "{\"access\": ";
  AppendString(AccessTypeName(a.type), out);
  out += ", \"file\": ";
  AppendString(a.source_file, out);
  out += fmt::format(", \"line\": {}, \"column\": {}, \"instruction\": {}",
                     a.location.line, a.location.column, a.pc);
  out += ", \"threadgroup_position_in_grid\": ";
  AppendTriple(a.threadgroup_position, out);
  out += ", \"thread_position_in_grid\": ";
  AppendTriple(a.thread_position, out);
  out += fmt::format(", \"simdgroup_index_in_threadgroup\": {}", a.simdgroup);
  out += fmt::format(", \"thread_index_in_simdgroup\": {}}}", a.lane);
}

}  // namespace

std::string_view FindingKindName(FindingKind kind) {
  switch (kind) {
    case FindingKind::kThreadgroupRace:
      return "threadgroup-memory race";
    case FindingKind::kDeviceRace:
      return "device-memory race";
    case FindingKind::kUninitializedThreadgroupRead:
      return "read of uninitialized threadgroup memory";
    case FindingKind::kUninitializedDeviceRead:
      return "read of an uninitialized buffer";
    case FindingKind::kInactiveLaneRead:
      return "read of an inactive lane";
    case FindingKind::kMismatchedBarrier:
      return "mismatched barriers";
    case FindingKind::kSkippedBarrier:
      return "barrier skipped by a SIMD group";
    case FindingKind::kNearBufferAccess:
      return "access outside a buffer";
    case FindingKind::kOrderDependentResult:
      return "result that depends on the order of SIMD groups";
  }
  return "?";
}

std::string_view FindingCheckName(FindingKind kind) {
  switch (kind) {
    case FindingKind::kThreadgroupRace:
    case FindingKind::kDeviceRace:
      return "race";
    case FindingKind::kUninitializedThreadgroupRead:
    case FindingKind::kUninitializedDeviceRead:
      return "init";
    case FindingKind::kInactiveLaneRead:
    case FindingKind::kMismatchedBarrier:
    case FindingKind::kSkippedBarrier:
      return "simd";
    case FindingKind::kNearBufferAccess:
      return "oob";
    case FindingKind::kOrderDependentResult:
      return "order";
  }
  return "?";
}

std::string_view AccessTypeName(AccessType type) {
  switch (type) {
    case AccessType::kNone:
      return "none";
    case AccessType::kRead:
      return "read";
    case AccessType::kWrite:
      return "write";
    case AccessType::kAtomicRead:
      return "atomic read";
    case AccessType::kAtomicWrite:
      return "atomic write";
    case AccessType::kAtomicUpdate:
      return "atomic read-modify-write";
  }
  return "?";
}

std::string Finding::Describe(std::string_view kernel) const {
  std::string out = first.source_file.empty() ? "" : Where(first) + ": ";
  out += fmt::format("{} in kernel '{}'", FindingKindName(kind), kernel);
  if (count > 1) out += fmt::format(" (found {} times)", count);
  // (An order-dependent result without threadgroup accesses to name has
  // no first access.)
  if (first.type != AccessType::kNone || first.has_thread) {
    out += "\n  " + Side(first);
  }
  if (second) out += "\n  " + Side(*second);
  if (space != isa::AddressSpace::kNone) {
    out += fmt::format("\n  {} byte{} at {} address 0x{:x}", size,
                       size == 1 ? "" : "s", isa::AddressSpaceName(space),
                       address);
    if (!region.empty()) {
      out += fmt::format(": {} at offset {}", region, region_offset);
    }
  }
  if (!detail.empty()) out += "\n  " + detail;
  return out;
}

std::string CheckReport::ToJson() const {
  std::string out = "{\"kernel\": ";
  AppendString(kernel, out);
  out += ", \"checks\": ";
  AppendString(checks, out);
  out += ", \"findings\": [";
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    out += i ? ",\n  {" : "\n  {";
    out += "\"kind\": ";
    AppendString(FindingKindName(f.kind), out);
    out += ", \"check\": ";
    AppendString(FindingCheckName(f.kind), out);
    out +=
        fmt::format(", \"count\": {}, \"same_value\": {}, \"first\": ", f.count,
                    f.same_value ? "true" : "false");
    AppendAccessJson(f.first, out);
    out += ", \"second\": ";
    if (f.second) {
      AppendAccessJson(*f.second, out);
    } else {
      out += "null";
    }
    out += ", \"address_space\": ";
    AppendString(isa::AddressSpaceName(f.space), out);
    out += fmt::format(
        ", \"address\": {}, \"size\": {}, \"region\": ", f.address, f.size);
    AppendString(f.region, out);
    out +=
        fmt::format(", \"region_offset\": {}, \"detail\": ", f.region_offset);
    AppendString(f.detail, out);
    out += "}";
  }
  out += findings.empty() ? "]" : "\n]";
  out += ", \"notes\": [";
  for (size_t i = 0; i < notes.size(); ++i) {
    if (i) out += ", ";
    AppendString(notes[i], out);
  }
  out += "]}\n";
  return out;
}

}  // namespace mtlemu::emu
