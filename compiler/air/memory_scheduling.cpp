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
  return inst.op == isa::Opcode::kExit;
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

}  // namespace

void ScheduleMemory(isa::Kernel& kernel, const RegisterParts& parts) {
  const size_t n = kernel.code.size();
  // Block starts: branch targets and reconvergence points.
  std::set<uint32_t> starts;
  for (const auto& [pc, name] : kernel.labels) starts.insert(pc);
  for (const isa::Instruction& inst : kernel.code) {
    for (int i = 0; i < inst.NumOperands(); ++i) {
      if (inst.operands[i].kind == isa::OperandKind::kLabel) {
        starts.insert(inst.operands[i].label);
      }
    }
  }
  std::vector<std::vector<RegisterUse>> uses(n);
  for (size_t pc = 0; pc < n; ++pc) {
    uses[pc] = RegistersOf(kernel.code[pc], parts);
  }
  auto move = [&](size_t from, size_t to) {  // the instruction at `from`
    if (from == to) return;
    if (to < from) {
      std::rotate(kernel.code.begin() + to, kernel.code.begin() + from,
                  kernel.code.begin() + from + 1);
      std::rotate(uses.begin() + to, uses.begin() + from,
                  uses.begin() + from + 1);
    } else {
      std::rotate(kernel.code.begin() + from, kernel.code.begin() + from + 1,
                  kernel.code.begin() + to + 1);
      std::rotate(uses.begin() + from, uses.begin() + from + 1,
                  uses.begin() + to + 1);
    }
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
  // Device loads rise.
  for (size_t pc = 1; pc < n; ++pc) {
    if (!IsHoistable(kernel.code[pc])) continue;
    size_t at = pc;
    while (at > 0 && pc - at < kMaxDistance &&
           !starts.count(static_cast<uint32_t>(at)) &&
           !IsBarrierTo(kernel.code[at - 1]) &&
           !IsHoistable(kernel.code[at - 1]) &&
           !Conflicts(uses[pc], uses[at - 1])) {
      --at;
    }
    move(pc, at);
  }
}

}  // namespace mtlemu::air
