#include "compiler/air/register_parts.h"

namespace mtlemu::air {

std::vector<RegisterUse> RegistersOf(const isa::Instruction& inst,
                                     const RegisterParts& parts) {
  std::vector<RegisterUse> out;
  auto add = [&](uint32_t v, int span, bool def) {
    const auto [whole, offset] = parts.Resolve(v);
    out.push_back({whole, offset, span, def});
  };
  for (int i = 0; i < inst.NumOperands(); ++i) {
    const isa::Operand& op = inst.operands[i];
    if (op.kind == isa::OperandKind::kRegister) {
      add(op.reg, isa::OperandRegisterSpan(inst, i),
          isa::IsDestination(inst, i));
    } else if (op.kind == isa::OperandKind::kMemory) {
      if (op.mem.base_kind == isa::OperandKind::kRegister) {
        add(op.mem.base, isa::IsWideAddressSpace(inst.space) ? 2 : 1, false);
      }
      if (op.mem.has_index) add(op.mem.index, 1, false);
    }
  }
  return out;
}

}  // namespace mtlemu::air
