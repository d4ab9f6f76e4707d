#include "compiler/air/memory_scheduling.h"

#include <algorithm>
#include <set>
#include <vector>

namespace mtlemu::air {
namespace {

// How far an instruction may move: far enough to group a tile's loads,
// short enough that live ranges (registers) stay in check.
constexpr size_t kMaxDistance = 256;

bool IsHoistable(const isa::Instruction& inst) {
  const isa::OpInfo& info = inst.info();
  const bool load = info.unit == isa::ExecUnit::kLoad ||
                    info.shape == isa::OpShape::kMatrixLoad;
  return load && isa::IsWideAddressSpace(inst.space);
}

// What a device load may not move above.
bool IsBarrierTo(const isa::Instruction& inst) {
  const isa::OpInfo& info = inst.info();
  if (info.cluster != 0) return true;  // SIMD-group functions
  switch (info.unit) {
    case isa::ExecUnit::kBranch:
    case isa::ExecUnit::kBarrier:
    case isa::ExecUnit::kAtomic:
      return true;
    case isa::ExecUnit::kStore:
      return isa::IsWideAddressSpace(inst.space);
    default:
      break;
  }
  if (info.shape == isa::OpShape::kMatrixStore) {
    return isa::IsWideAddressSpace(inst.space);
  }
  return inst.op == isa::Opcode::kExit || inst.op == isa::Opcode::kTrap;
}

bool IsThreadgroupStore(const isa::Instruction& inst) {
  const isa::OpInfo& info = inst.info();
  return (info.unit == isa::ExecUnit::kStore ||
          info.shape == isa::OpShape::kMatrixStore) &&
         inst.space == isa::AddressSpace::kThreadgroup;
}

// What a threadgroup store may not move below.
bool StopsThreadgroupStore(const isa::Instruction& inst) {
  return IsBarrierTo(inst) || inst.space == isa::AddressSpace::kThreadgroup;
}

// An instruction that only computes registers: it may move anywhere in its
// block that its registers allow.
bool IsPure(const isa::Instruction& inst) {
  const isa::OpInfo& info = inst.info();
  if (info.cluster != 0 || isa::IsTerminator(inst.op) ||
      info.shape == isa::OpShape::kMatrixLoad ||
      info.shape == isa::OpShape::kMatrixStore) {
    return false;
  }
  switch (info.unit) {
    case isa::ExecUnit::kLoad:
    case isa::ExecUnit::kStore:
    case isa::ExecUnit::kAtomic:
    case isa::ExecUnit::kBranch:
    case isa::ExecUnit::kBarrier:
      return false;
    default:
      return true;
  }
}

// Whether `above` only writes registers `below` reads (so raising `above`
// first lets `below` follow), and neither touches the other's otherwise.
bool OnlyFeeds(const std::vector<RegisterUse>& above,
               const std::vector<RegisterUse>& below) {
  bool feeds = false;
  for (const RegisterUse& a : above) {
    for (const RegisterUse& b : below) {
      if (a.reg != b.reg || (!a.def && !b.def)) continue;
      if (!a.def || b.def) return false;
      feeds = true;
    }
  }
  return feeds;
}

bool Conflicts(const std::vector<RegisterUse>& load,
               const std::vector<RegisterUse>& other) {
  for (const RegisterUse& a : load) {
    for (const RegisterUse& b : other) {
      if (a.reg != b.reg) continue;
      // The load reads what `other` writes, or writes what `other` touches.
      if (b.def || a.def) return true;
    }
  }
  return false;
}

// Block starts: branch targets and reconvergence points.
std::set<uint32_t> BlockStarts(const isa::Kernel& kernel) {
  std::set<uint32_t> starts;
  for (const auto& [pc, name] : kernel.labels) starts.insert(pc);
  for (const isa::Instruction& inst : kernel.code) {
    for (int i = 0; i < inst.NumOperands(); ++i) {
      if (inst.operands[i].kind == isa::OperandKind::kLabel) {
        starts.insert(inst.operands[i].label);
      }
    }
  }
  return starts;
}

// Each instruction's register uses.
std::vector<std::vector<RegisterUse>> UsesOf(const isa::Kernel& kernel,
                                             const RegisterParts& parts) {
  std::vector<std::vector<RegisterUse>> uses(kernel.code.size());
  for (size_t pc = 0; pc < uses.size(); ++pc) {
    uses[pc] = RegistersOf(kernel.code[pc], parts);
  }
  return uses;
}

// Moves the element at `from` to `to`; those between shift by one.
template <class T>
void MoveElement(std::vector<T>& v, size_t from, size_t to) {
  if (to < from) {
    std::rotate(v.begin() + to, v.begin() + from, v.begin() + from + 1);
  } else if (from < to) {
    std::rotate(v.begin() + from, v.begin() + from + 1, v.begin() + to + 1);
  }
}

}  // namespace

void ScheduleMemory(isa::Kernel& kernel, const RegisterParts& parts) {
  const size_t n = kernel.code.size();
  const std::set<uint32_t> starts = BlockStarts(kernel);
  std::vector<std::vector<RegisterUse>> uses = UsesOf(kernel, parts);
  // Instructions raised ahead of a load, each once: two independent ones
  // feeding the same load would otherwise pass each other forever.
  std::vector<char> raised(n, 0);
  auto move = [&](size_t from, size_t to) {  // the instruction at `from`
    MoveElement(kernel.code, from, to);
    MoveElement(uses, from, to);
    MoveElement(raised, from, to);
  };
  // Threadgroup stores sink (last first, so each passes the ones sunk).
  for (size_t pc = n; pc-- > 0;) {
    if (!IsThreadgroupStore(kernel.code[pc])) continue;
    size_t at = pc;
    while (at + 1 < n && at - pc < kMaxDistance &&
           !starts.count(static_cast<uint32_t>(at + 1)) &&
           !StopsThreadgroupStore(kernel.code[at + 1]) &&
           !Conflicts(uses[pc], uses[at + 1])) {
      ++at;
    }
    move(pc, at);
  }
  // Device loads rise, and the instructions computing their addresses rise
  // ahead of them (up to kMaxChain deep), so that a loop body's loads issue
  // together rather than each after its address. Returns where the
  // instruction at `pc` landed.
  constexpr int kMaxChain = 4;
  auto rise = [&](auto& self, size_t pc, int depth) -> size_t {
    if (depth > 0) {
      if (raised[pc]) return pc;
      raised[pc] = 1;
    }
    size_t at = pc;
    while (at > 0 && pc - at < kMaxDistance &&
           !starts.count(static_cast<uint32_t>(at)) &&
           !IsBarrierTo(kernel.code[at - 1]) &&
           !IsHoistable(kernel.code[at - 1])) {
      if (!Conflicts(uses[pc], uses[at - 1])) {
        --at;
        continue;
      }
      // Moving the instruction above up leaves `pc` where it is.
      if (depth >= kMaxChain || !IsPure(kernel.code[at - 1]) ||
          !OnlyFeeds(uses[at - 1], uses[pc]) ||
          self(self, at - 1, depth + 1) == at - 1) {
        break;
      }
    }
    move(pc, at);
    return at;
  };
  for (size_t pc = 1; pc < n; ++pc) {
    if (IsHoistable(kernel.code[pc])) rise(rise, pc, 0);
  }
}

void SinkLoadsToUses(isa::Kernel& kernel, const RegisterParts& parts) {
  const size_t n = kernel.code.size();
  const std::set<uint32_t> starts = BlockStarts(kernel);
  std::vector<std::vector<RegisterUse>> uses = UsesOf(kernel, parts);
  // Last first, so that each passes the ones already sunk.
  for (size_t pc = n; pc-- > 0;) {
    const isa::Instruction& load = kernel.code[pc];
    if (load.info().unit != isa::ExecUnit::kLoad) continue;
    size_t at = pc;
    while (at + 1 < n && !starts.count(static_cast<uint32_t>(at + 1)) &&
           !Conflicts(uses[pc], uses[at + 1]) && IsPure(kernel.code[at + 1])) {
      ++at;
    }
    MoveElement(kernel.code, pc, at);
    MoveElement(uses, pc, at);
  }
}

}  // namespace mtlemu::air
