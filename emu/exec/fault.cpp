#include "emu/exec/fault.h"

#include <fmt/format.h>

namespace mtlemu::emu {

std::string_view FaultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kNone:
      return "none";
    case FaultKind::kOutOfBounds:
      return "out-of-bounds access";
    case FaultKind::kMisalignedAtomic:
      return "misaligned atomic access";
    case FaultKind::kDivergentBarrier:
      return "barrier in divergent control flow";
    case FaultKind::kTimeout:
      return "timeout";
    case FaultKind::kTrap:
      return "trap (a failed assertion)";
    case FaultKind::kInterrupted:
      return "interrupted";
  }
  return "?";
}

std::string Fault::Describe() const {
  std::string where;
  if (!source_file.empty()) {
    where = fmt::format("{}:{}", source_file, location.line);
    if (location.column) where += fmt::format(":{}", location.column);
    where += ": ";
  }
  std::string out =
      fmt::format("{}{} in kernel '{}'", where, FaultKindName(kind), kernel);
  if (kind == FaultKind::kTimeout || kind == FaultKind::kInterrupted) {
    return out + (detail.empty() ? "" : ": " + detail);
  }
  out += fmt::format(
      "\n  thread_position_in_grid ({}, {}, {}), threadgroup ({}, {}, {}), "
      "simdgroup {}, lane {}, instruction {}",
      thread_position[0], thread_position[1], thread_position[2],
      threadgroup_position[0], threadgroup_position[1], threadgroup_position[2],
      simdgroup, lane, pc);
  if (kind == FaultKind::kOutOfBounds || kind == FaultKind::kMisalignedAtomic) {
    out += fmt::format("\n  {} of {} bytes at {} address 0x{:x}",
                       is_write ? "write" : "read", size,
                       isa::AddressSpaceName(space), address);
    if (!region_description.empty()) {
      out +=
          fmt::format("\n  {} at offset {}", region_description, region_offset);
    }
  }
  if (!detail.empty()) out += "\n  " + detail;
  return out;
}

}  // namespace mtlemu::emu
