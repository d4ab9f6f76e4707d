#include "compiler/air/constant_hoisting.h"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "compiler/air/dead_code.h"

namespace mtlemu::air {
namespace {

using isa::Instruction;
using isa::Opcode;
using isa::OperandKind;

struct Loop {
  uint32_t first;  // the branch target
  uint32_t last;   // the backward branch
};

// The instruction's successor label (not a reconvergence point), or -1.
int64_t BranchTarget(const Instruction& inst) {
  switch (inst.op) {
    case Opcode::kBranch:
      return inst.operands[0].label;
    case Opcode::kBranchZero:
    case Opcode::kBranchNonZero:
      return inst.operands[1].label;
    default:
      return -1;
  }
}

// Loops whose first instruction is entered only by falling through from the
// one before it (and by the loop's own branches), and whose other
// instructions no label outside the loop names.
std::vector<Loop> HoistableLoops(const isa::Kernel& kernel) {
  const std::vector<Instruction>& code = kernel.code;
  std::vector<Loop> loops;
  for (uint32_t pc = 0; pc < code.size(); ++pc) {
    const int64_t target = BranchTarget(code[pc]);
    if (target >= 0 && target <= pc) {
      loops.push_back({static_cast<uint32_t>(target), pc});
    }
  }
  std::vector<Loop> hoistable;
  for (const Loop& loop : loops) {
    if (loop.first == 0) continue;
    const Instruction& before = code[loop.first - 1];
    if (isa::IsTerminator(before.op)) continue;
    bool entered_elsewhere = false;
    for (uint32_t pc = 0; pc < code.size() && !entered_elsewhere; ++pc) {
      if (pc >= loop.first && pc <= loop.last) continue;
      for (int i = 0; i < code[pc].NumOperands(); ++i) {
        const isa::Operand& o = code[pc].operands[i];
        if (o.kind == OperandKind::kLabel && o.label >= loop.first &&
            o.label <= loop.last) {
          entered_elsewhere = true;
        }
      }
    }
    if (!entered_elsewhere) hoistable.push_back(loop);
  }
  return hoistable;
}

// mov r, immediate with `r` a lone 32-bit register.
bool IsConstantCopy(const Instruction& inst, const RegisterParts& parts) {
  return inst.op == Opcode::kMov &&
         inst.operands[0].kind == OperandKind::kRegister &&
         inst.operands[1].kind == OperandKind::kImmediate &&
         isa::OperandRegisterSpan(inst, 0) == 1 &&
         parts.Alone(inst.operands[0].reg);
}

void Rename(Instruction& inst, const std::map<uint16_t, uint16_t>& renamed) {
  auto rename = [&](uint16_t& reg) {
    auto it = renamed.find(reg);
    if (it != renamed.end()) reg = it->second;
  };
  for (int i = 0; i < inst.NumOperands(); ++i) {
    isa::Operand& o = inst.operands[i];
    if (o.kind == OperandKind::kRegister) {
      rename(o.reg);
    } else if (o.kind == OperandKind::kMemory) {
      if (o.mem.base_kind == OperandKind::kRegister) rename(o.mem.base);
      if (o.mem.has_index) rename(o.mem.index);
    }
  }
}

}  // namespace

bool HoistLoopConstants(isa::Kernel& kernel, const RegisterParts& parts) {
  const std::vector<Loop> loops = HoistableLoops(kernel);
  if (loops.empty()) return false;
  std::vector<Instruction>& code = kernel.code;
  // Definitions per register: only single-definition ones may move.
  std::map<uint32_t, int> definitions;
  for (const Instruction& inst : code) {
    for (const RegisterUse& use : RegistersOf(inst, parts)) {
      if (use.def) ++definitions[use.reg];
    }
  }
  // Per loop start: the constants hoisted there, by (type, bits), and the
  // register that holds each.
  std::map<uint32_t, std::map<std::pair<isa::ScalarType, uint64_t>, uint16_t>>
      hoisted;
  std::map<uint16_t, uint16_t> renamed;
  std::vector<bool> keep(code.size(), true);
  std::vector<Instruction> moved;  // in order of their loops' starts
  std::vector<uint32_t> moved_to;
  for (uint32_t pc = 0; pc < code.size(); ++pc) {
    const Instruction& inst = code[pc];
    if (!IsConstantCopy(inst, parts) ||
        definitions[inst.operands[0].reg] != 1) {
      continue;
    }
    // The outermost loop around it.
    const Loop* outer = nullptr;
    for (const Loop& loop : loops) {
      if (loop.first <= pc && pc <= loop.last &&
          (outer == nullptr || loop.first < outer->first ||
           (loop.first == outer->first && loop.last > outer->last))) {
        outer = &loop;
      }
    }
    if (outer == nullptr) continue;
    auto& constants = hoisted[outer->first];
    const auto key = std::make_pair(inst.type, inst.operands[1].imm);
    auto it = constants.find(key);
    if (it != constants.end()) {
      renamed[inst.operands[0].reg] = it->second;
      keep[pc] = false;
      continue;
    }
    if (static_cast<int>(constants.size()) >= kMaxHoistedConstantsPerLoop) {
      continue;
    }
    constants.emplace(key, inst.operands[0].reg);
    moved.push_back(inst);
    moved_to.push_back(outer->first);
    keep[pc] = false;
  }
  if (moved.empty() && renamed.empty()) return false;
  // Rebuild: the hoisted copies go right before their loop's first
  // instruction, after every label (branches into the loop land after
  // them; only the fall-through runs them).
  std::vector<Instruction> out;
  std::vector<uint32_t> new_index(code.size() + 1);
  for (uint32_t pc = 0; pc < code.size(); ++pc) {
    for (size_t k = 0; k < moved.size(); ++k) {
      if (moved_to[k] == pc) out.push_back(moved[k]);
    }
    new_index[pc] = static_cast<uint32_t>(out.size());
    if (!keep[pc]) continue;
    Instruction inst = code[pc];
    Rename(inst, renamed);
    out.push_back(inst);
  }
  new_index[code.size()] = static_cast<uint32_t>(out.size());
  ReplaceCode(kernel, std::move(out), new_index);
  return true;
}

}  // namespace mtlemu::air
