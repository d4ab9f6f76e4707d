// What the kernel checks found in one dispatch, in source terms: each
// finding names its kernel's source lines, both threads (threadgroup, SIMD
// group, lane, position in the grid) and the address with its buffer or
// threadgroup block; findings of the same kind on the same pair of source
// lines are one finding with a count.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emu/check/finding_set.h"
#include "isa/instruction.h"

namespace mtlemu::emu {

std::string_view FindingKindName(FindingKind kind);   // "threadgroup race"
std::string_view FindingCheckName(FindingKind kind);  // "race", "init", "simd"
std::string_view AccessTypeName(AccessType type);     // "atomic write", ...

struct FindingAccess {
  AccessType type = AccessType::kNone;
  uint32_t pc = 0;
  isa::SourceLocation location;
  std::string source_file;  // empty when the module names none
  std::array<uint32_t, 3> threadgroup_position{};
  std::array<uint32_t, 3> thread_position{};  // in the grid
  uint32_t simdgroup = 0;
  uint32_t lane = 0;
  // False where the access is an instruction only, of no one thread (the
  // order check's): the thread fields say nothing then.
  bool has_thread = true;
};

struct Finding {
  FindingKind kind = FindingKind::kThreadgroupRace;
  // The earlier access (or the only one); type kNone where the finding
  // has no access (an order-dependent result with no unordered
  // threadgroup accesses to name).
  FindingAccess first;
  std::optional<FindingAccess> second;  // the other thread, when there is one
  isa::AddressSpace space = isa::AddressSpace::kNone;
  uint64_t address = 0;
  uint32_t size = 0;
  // The buffer or threadgroup block holding the address ("buffer(1) 'out'
  // (4096 bytes)", "threadgroup memory of the kernel's own variables") and
  // the address's offset in it.
  std::string region;
  int64_t region_offset = 0;
  uint64_t count = 1;  // times found (per SIMD-group access, lane or run)
  // A device race where both threads wrote the same bytes, every time it
  // was found (MLX's kernels clamp their last rows so): its outcome does
  // not depend on the order, but it is still a race under Metal's rules.
  bool same_value = false;
  std::string detail;  // what it means, for this kind

  // One paragraph: kind, kernel, source lines, threads, address.
  std::string Describe(std::string_view kernel) const;
};

struct CheckReport {
  std::string kernel;
  std::string checks;  // "race,init,simd"
  std::vector<Finding> findings;
  // What the checks could not cover (a record limit reached, ...).
  std::vector<std::string> notes;

  // The report as a JSON object: {"kernel", "checks", "findings": [...],
  // "notes": [...]}; README.md documents its fields.
  std::string ToJson() const;
};

}  // namespace mtlemu::emu
