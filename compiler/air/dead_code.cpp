#include "compiler/air/dead_code.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace mtlemu::air {
namespace {

bool HasSideEffects(const isa::Instruction& inst) {
  const isa::OpInfo& info = inst.info();
  if (!isa::ShapeHasDestination(info.shape)) return true;  // st, br, ...
  // Atomics write memory, and a load can fault (a removed fault would hide
  // a bug): keep whatever accesses memory.
  return isa::ShapeHasSpace(info.shape);
}

// The registers (blocks, for parts) an instruction reads.
void Uses(const isa::Instruction& inst, const RegisterParts& parts,
          std::set<uint32_t>& used) {
  auto use = [&](uint32_t v) { used.insert(parts.Resolve(v).first); };
  for (int i = 0; i < inst.NumOperands(); ++i) {
    const isa::Operand& op = inst.operands[i];
    if (op.kind == isa::OperandKind::kRegister &&
        !isa::IsDestination(inst, i)) {
      use(op.reg);
    } else if (op.kind == isa::OperandKind::kMemory) {
      if (op.mem.base_kind == isa::OperandKind::kRegister) use(op.mem.base);
      if (op.mem.has_index) use(op.mem.index);
    }
  }
}

}  // namespace

void RemoveDeadCode(isa::Kernel& kernel, const RegisterParts& parts) {
  bool changed = true;
  while (changed) {
    changed = false;
    std::set<uint32_t> used;
    for (const isa::Instruction& inst : kernel.code) Uses(inst, parts, used);
    std::vector<bool> keep(kernel.code.size(), true);
    for (size_t pc = 0; pc < kernel.code.size(); ++pc) {
      const isa::Instruction& inst = kernel.code[pc];
      if (HasSideEffects(inst)) continue;
      const isa::Operand& d = inst.operands[0];
      if (d.kind == isa::OperandKind::kRegister &&
          !used.count(parts.Resolve(d.reg).first)) {
        keep[pc] = false;
        changed = true;
      }
    }
    if (!changed) break;
    RemoveInstructions(kernel, keep);
  }
}

void RemoveInstructions(isa::Kernel& kernel, const std::vector<bool>& keep) {
  // Renumber: an instruction index maps to the next kept one.
  std::vector<uint32_t> new_index(kernel.code.size() + 1);
  std::vector<isa::Instruction> code;
  for (size_t pc = 0; pc < kernel.code.size(); ++pc) {
    new_index[pc] = static_cast<uint32_t>(code.size());
    if (keep[pc]) code.push_back(kernel.code[pc]);
  }
  new_index[kernel.code.size()] = static_cast<uint32_t>(code.size());
  ReplaceCode(kernel, std::move(code), new_index);
}

void ReplaceCode(isa::Kernel& kernel, std::vector<isa::Instruction> code,
                 const std::vector<uint32_t>& new_index) {
  for (isa::Instruction& inst : code) {
    for (int i = 0; i < inst.NumOperands(); ++i) {
      if (inst.operands[i].kind == isa::OperandKind::kLabel) {
        inst.operands[i].label = new_index[inst.operands[i].label];
      }
    }
  }
  std::map<uint32_t, std::string> labels;
  for (const auto& [pc, name] : kernel.labels) {
    labels.emplace(new_index[pc], name);
  }
  kernel.code = std::move(code);
  kernel.labels = std::move(labels);
}

}  // namespace mtlemu::air
