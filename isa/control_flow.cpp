#include "isa/control_flow.h"

namespace mtlemu::isa {

Successors SuccessorsOf(const Kernel& kernel, uint32_t pc) {
  const Instruction& inst = kernel.code[pc];
  switch (inst.op) {
    case Opcode::kExit:
    case Opcode::kTrap:
      return {};
    case Opcode::kBranch:
      return {{inst.operands[0].label, 0}, 1};
    case Opcode::kBranchNonZero:
    case Opcode::kBranchZero:
      return {{pc + 1, inst.operands[1].label}, 2};
    default:
      return {{pc + 1, 0}, 1};
  }
}

}  // namespace mtlemu::isa
