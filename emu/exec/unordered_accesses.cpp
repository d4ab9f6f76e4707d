#include "emu/exec/unordered_accesses.h"

#include <algorithm>

#include "isa/shape.h"

namespace mtlemu::emu {
namespace {

enum class Access : uint8_t { kNone, kRead, kWrite };

Access ThreadgroupAccess(const DecodedInstruction& d) {
  if (!d.accesses_memory || d.inst->space != isa::AddressSpace::kThreadgroup) {
    return Access::kNone;
  }
  switch (d.inst->info().shape) {
    case isa::OpShape::kLoad:
    case isa::OpShape::kAtomicLoad:
    case isa::OpShape::kMatrixLoad:
      return Access::kRead;
    default:
      return Access::kWrite;  // stores, atomics that change memory
  }
}

bool IsBranch(Flow flow) {
  return flow == Flow::kBranch || flow == Flow::kBranchNonZero ||
         flow == Flow::kBranchZero;
}

// Past this many steps of the search, a kernel counts as having a pair
// (interleaving it costs time, never a wrong result).
constexpr uint64_t kMaxSteps = uint64_t{1} << 26;

// Whether the path goes on from `d` to the instruction after it alone.
bool FallsThrough(const DecodedInstruction& d) {
  return d.flow == Flow::kNext || d.flow == Flow::kMayFault ||
         d.flow == Flow::kSimdgroupBarrier;
}

// Each read after a write (ReadsAfterWrites) with that write.
std::vector<UnorderedAccesses> ReadAfterWritePairs(
    const std::vector<DecodedInstruction>& code) {
  std::vector<UnorderedAccesses> out;
  uint32_t write = UINT32_MAX;  // the last write of the stretch
  for (uint32_t pc = 0; pc < code.size(); ++pc) {
    const Access a = ThreadgroupAccess(code[pc]);
    if (a == Access::kRead && write != UINT32_MAX) out.push_back({pc, write});
    if (a == Access::kWrite) write = pc;
    if (!FallsThrough(code[pc])) write = UINT32_MAX;
  }
  return out;
}

}  // namespace

std::vector<uint32_t> ReadsAfterWrites(
    const std::vector<DecodedInstruction>& code) {
  std::vector<uint32_t> reads;
  for (const UnorderedAccesses& p : ReadAfterWritePairs(code)) {
    reads.push_back(p.read);
  }
  return reads;
}

std::vector<UnorderedAccesses> FindUnorderedThreadgroupAccesses(
    const std::vector<DecodedInstruction>& code, size_t limit) {
  std::vector<UnorderedAccesses> found = ReadAfterWritePairs(code);
  if (found.size() > limit) found.resize(limit);
  const uint32_t n = static_cast<uint32_t>(code.size());
  std::vector<Access> access(n);
  bool reads = false, writes = false;
  for (uint32_t pc = 0; pc < n; ++pc) {
    access[pc] = ThreadgroupAccess(code[pc]);
    reads |= access[pc] == Access::kRead;
    writes |= access[pc] == Access::kWrite;
  }
  if (!reads || !writes) return found;
  // From each access, the instructions a path reaches without a barrier,
  // each with whether the path went through a branch (pc * 2 + crossed);
  // `seen` holds the search that visited each last.
  std::vector<uint32_t> seen(2 * size_t{n}, UINT32_MAX);
  std::vector<uint32_t> stack;
  uint64_t steps = 0;
  const auto add = [&](uint32_t read, uint32_t write) {
    for (const UnorderedAccesses& f : found) {
      if (f.read == read && f.write == write) return;
    }
    found.push_back({read, write});
  };
  for (uint32_t from = 0; from < n && found.size() < limit; ++from) {
    if (access[from] == Access::kNone) continue;
    const Access other =
        access[from] == Access::kRead ? Access::kWrite : Access::kRead;
    stack.clear();
    // The instruction after `from` (an access is never a branch).
    stack.push_back(2 * (from + 1));
    while (!stack.empty()) {
      if (++steps > kMaxSteps) {
        if (found.empty()) found.push_back({from, from});
        return found;
      }
      const uint32_t node = stack.back();
      stack.pop_back();
      const uint32_t pc = node / 2;
      if (pc >= n || seen[node] == from) continue;
      seen[node] = from;
      const bool crossed = node & 1;
      if (crossed && access[pc] == other) {
        access[from] == Access::kRead ? add(from, pc) : add(pc, from);
        break;  // one pair for each access
      }
      const DecodedInstruction& d = code[pc];
      const uint32_t c = crossed || IsBranch(d.flow) ? 1 : 0;
      switch (d.flow) {
        case Flow::kThreadgroupBarrier:  // the interval ends here
        case Flow::kExit:
        case Flow::kTrap:
          break;
        case Flow::kBranch:
          stack.push_back(2 * d.target + c);
          break;
        case Flow::kBranchNonZero:
        case Flow::kBranchZero:
          stack.push_back(2 * d.target + c);
          stack.push_back(2 * (pc + 1) + c);
          break;
        default:
          stack.push_back(2 * (pc + 1) + c);
          break;
      }
    }
  }
  return found;
}

}  // namespace mtlemu::emu
