#include "emu/timing/instruction_timing.h"

#include <algorithm>

#include "isa/instruction.h"

namespace mtlemu::emu {
namespace {

MemoryKind MemoryOf(const isa::Instruction& inst) {
  const isa::OpInfo& info = inst.info();
  if (!isa::ShapeHasSpace(info.shape)) return MemoryKind::kNone;
  switch (inst.space) {
    case isa::AddressSpace::kThreadgroup:
      return MemoryKind::kThreadgroup;
    case isa::AddressSpace::kThread:
      return MemoryKind::kThread;
    default:
      // simdgroup_load and simdgroup_store run on the load and store units.
      return info.unit == isa::ExecUnit::kAtomic  ? MemoryKind::kDeviceAtomic
             : info.unit == isa::ExecUnit::kStore ? MemoryKind::kDeviceStore
                                                  : MemoryKind::kDeviceLoad;
  }
}

}  // namespace

std::vector<InstructionTiming> InstructionTimings(const isa::Kernel& kernel) {
  std::vector<InstructionTiming> out(kernel.code.size());
  for (size_t pc = 0; pc < kernel.code.size(); ++pc) {
    const isa::Instruction& inst = kernel.code[pc];
    InstructionTiming& t = out[pc];
    const isa::OpInfo& info = inst.info();
    const bool is_float = isa::IsFloat(inst.type);
    t.unit = is_float ? info.float_unit : info.unit;
    t.memory = MemoryOf(inst);
    t.barrier = inst.op == isa::Opcode::kThreadgroupBarrier;
    t.fp32 = is_float && inst.type == isa::ScalarType::kFloat &&
             t.unit == isa::ExecUnit::kAlu;
    t.narrow = t.unit == isa::ExecUnit::kAlu && isa::SizeOf(inst.type) <= 2;
    if (is_float) t.flops_per_lane = static_cast<uint32_t>(info.flops);
    for (int i = 0; i < inst.NumOperands(); ++i) {
      const isa::Operand& op = inst.operands[i];
      auto add = [&](RegisterList& list, uint16_t r, int span) {
        for (int k = 0; k < span; ++k) {
          list.push_back(static_cast<uint16_t>(r + k));
        }
      };
      if (op.kind == isa::OperandKind::kRegister) {
        add(isa::IsDestination(inst, i) ? t.writes : t.reads, op.reg,
            isa::OperandRegisterSpan(inst, i));
      } else if (op.kind == isa::OperandKind::kMemory) {
        if (op.mem.base_kind == isa::OperandKind::kRegister) {
          add(t.reads, op.mem.base,
              isa::IsWideAddressSpace(inst.space) ? 2 : 1);
        }
        if (op.mem.has_index) add(t.reads, op.mem.index, 1);
      }
    }
    // A destination that is also read (simdgroup_load's stride, say) must
    // wait for its old value too.
    std::sort(t.reads.begin(), t.reads.end());
    t.reads.erase(std::unique(t.reads.begin(), t.reads.end()), t.reads.end());
  }
  return out;
}

}  // namespace mtlemu::emu
