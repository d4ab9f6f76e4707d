#include "isa/module.h"

#include <algorithm>

namespace mtlemu::isa {

const Kernel* Module::FindKernel(std::string_view name) const {
  for (const Kernel& k : kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

void AppendKernels(Module& into, Module from) {
  std::vector<uint16_t> renumber;
  for (std::string& f : from.files) {
    auto it = std::find(into.files.begin(), into.files.end(), f);
    renumber.push_back(static_cast<uint16_t>(it - into.files.begin()));
    if (it == into.files.end()) into.files.push_back(std::move(f));
  }
  for (Kernel& k : from.kernels) {
    for (Instruction& inst : k.code) {
      inst.location.file = renumber.at(inst.location.file);
    }
    into.kernels.push_back(std::move(k));
  }
}

void ComputeResources(Kernel& kernel) {
  int registers = 0;
  int uniforms = 0;
  for (const BufferArgument& b : kernel.buffers) {
    uniforms = std::max(uniforms, b.uniform + 2);
  }
  for (const ThreadgroupArgument& t : kernel.threadgroup_arguments) {
    uniforms = std::max(uniforms, t.uniform + 1);
  }
  if (kernel.constant_data_uniform >= 0) {
    uniforms = std::max(uniforms, kernel.constant_data_uniform + 2);
  }
  for (const Instruction& inst : kernel.code) {
    for (int i = 0; i < inst.NumOperands(); ++i) {
      const Operand& op = inst.operands[i];
      const int span = OperandRegisterSpan(inst, i);
      if (op.kind == OperandKind::kRegister) {
        registers = std::max(registers, op.reg + span);
      } else if (op.kind == OperandKind::kUniform) {
        uniforms = std::max(uniforms, op.reg + span);
      } else if (op.kind == OperandKind::kMemory) {
        const int base_span = IsWideAddressSpace(inst.space) ? 2 : 1;
        if (op.mem.base_kind == OperandKind::kRegister) {
          registers = std::max(registers, op.mem.base + base_span);
        } else if (op.mem.base_kind == OperandKind::kUniform) {
          uniforms = std::max(uniforms, op.mem.base + base_span);
        }
        if (op.mem.has_index) {
          registers = std::max(registers, op.mem.index + 1);
        }
      }
    }
  }
  kernel.registers = registers;
  kernel.uniforms = uniforms;
}

}  // namespace mtlemu::isa
