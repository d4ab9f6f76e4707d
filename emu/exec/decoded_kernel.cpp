#include "emu/exec/decoded_kernel.h"

#include <map>
#include <utility>

#include "emu/exec/handlers.h"

namespace mtlemu::emu {
namespace {

using isa::OperandKind;

Flow FlowOf(const isa::Instruction& inst) {
  switch (inst.info().control) {
    case isa::Control::kNone:
      return isa::AccessesMemory(inst.op) ? Flow::kMayFault : Flow::kNext;
    case isa::Control::kJump:
      return Flow::kBranch;
    case isa::Control::kJumpIfNonZero:
      return Flow::kBranchNonZero;
    case isa::Control::kJumpIfZero:
      return Flow::kBranchZero;
    case isa::Control::kExit:
      return Flow::kExit;
    case isa::Control::kTrap:
      return Flow::kTrap;
    case isa::Control::kThreadgroupBarrier:
      return Flow::kThreadgroupBarrier;
    case isa::Control::kSimdgroupBarrier:
      return Flow::kSimdgroupBarrier;
  }
  return Flow::kNext;  // (unreachable: every Control has a case)
}

class SlotAllocator {
 public:
  explicit SlotAllocator(const isa::Kernel& kernel) {
    layout_.uniform_base = static_cast<uint16_t>(kernel.registers);
    layout_.special_base =
        static_cast<uint16_t>(kernel.registers + kernel.uniforms);
    // Specials are numbered first so immediates can follow them.
    for (const isa::Instruction& inst : kernel.code) {
      for (int i = 0; i < inst.NumOperands(); ++i) {
        if (inst.operands[i].kind == OperandKind::kSpecial) {
          SpecialSlot(inst.operands[i].special);
        }
      }
    }
    layout_.immediate_base =
        static_cast<uint16_t>(layout_.special_base + layout_.specials.size());
  }

  uint16_t For(const isa::Instruction& inst, int position) {
    const isa::Operand& op = inst.operands[position];
    switch (op.kind) {
      case OperandKind::kRegister:
        return op.reg;
      case OperandKind::kUniform:
        return static_cast<uint16_t>(layout_.uniform_base + op.reg);
      case OperandKind::kSpecial:
        return SpecialSlot(op.special);
      case OperandKind::kImmediate:
        return ImmediateSlot(op.imm,
                             isa::OperandRegisterSpan(inst, position) == 2);
      default:
        return kNoSlot;
    }
  }

  uint16_t BaseSlot(const isa::MemoryRef& m) const {
    if (m.base_kind == OperandKind::kRegister) return m.base;
    if (m.base_kind == OperandKind::kUniform) {
      return static_cast<uint16_t>(layout_.uniform_base + m.base);
    }
    return kNoSlot;
  }

  SlotLayout Finish() {
    layout_.total = static_cast<uint16_t>(layout_.immediate_base +
                                          layout_.immediates.size());
    return std::move(layout_);
  }

 private:
  uint16_t SpecialSlot(isa::SpecialRegister sr) {
    for (size_t i = 0; i < layout_.specials.size(); ++i) {
      if (layout_.specials[i] == sr) {
        return static_cast<uint16_t>(layout_.special_base + i);
      }
    }
    layout_.specials.push_back(sr);
    return static_cast<uint16_t>(layout_.special_base +
                                 layout_.specials.size() - 1);
  }

  uint16_t ImmediateSlot(uint64_t bits, bool wide) {
    const auto key = std::make_pair(bits, wide);
    auto it = immediate_slots_.find(key);
    if (it != immediate_slots_.end()) return it->second;
    const auto slot = static_cast<uint16_t>(layout_.immediate_base +
                                            layout_.immediates.size());
    layout_.immediates.push_back(static_cast<uint32_t>(bits));
    if (wide) layout_.immediates.push_back(static_cast<uint32_t>(bits >> 32));
    immediate_slots_[key] = slot;
    return slot;
  }

  SlotLayout layout_;
  std::map<std::pair<uint64_t, bool>, uint16_t> immediate_slots_;
};

bool IsStraight(Flow flow) {
  return flow == Flow::kNext || flow == Flow::kMayFault;
}

// Sets run_end: a run stops before an instruction that is not straight and
// before any place a branch or a reconvergence entry starts at (a leader).
void MarkStraightRuns(std::vector<DecodedInstruction>& code) {
  std::vector<bool> leader(code.size() + 1, false);
  for (const DecodedInstruction& d : code) {
    if (d.flow == Flow::kBranch || d.flow == Flow::kBranchNonZero ||
        d.flow == Flow::kBranchZero) {
      if (d.target < leader.size()) leader[d.target] = true;
    }
    if (d.flow == Flow::kBranchNonZero || d.flow == Flow::kBranchZero) {
      if (d.reconverge < leader.size()) leader[d.reconverge] = true;
    }
  }
  for (size_t pc = code.size(); pc-- > 0;) {
    const auto here = static_cast<uint32_t>(pc);
    if (!IsStraight(code[pc].flow)) {
      code[pc].run_end = here;
    } else if (pc + 1 == code.size() || leader[pc + 1]) {
      code[pc].run_end = here + 1;
    } else {
      // (here + 1 where the next is not straight.)
      code[pc].run_end = code[pc + 1].run_end;
    }
  }
}

}  // namespace

bool DecodeKernel(const isa::Kernel& kernel, DecodedKernel& out,
                  std::string& error) {
  out.kernel = &kernel;
  out.code.clear();
  out.code.reserve(kernel.code.size());
  SlotAllocator slots(kernel);
  for (size_t pc = 0; pc < kernel.code.size(); ++pc) {
    const isa::Instruction& inst = kernel.code[pc];
    DecodedInstruction d;
    d.inst = &inst;
    d.flow = FlowOf(inst);
    d.accesses_memory = isa::ShapeHasSpace(inst.info().shape);
    d.fn = HandlerFor(inst);
    if (d.fn == nullptr &&
        (d.flow == Flow::kNext || d.flow == Flow::kMayFault)) {
      error = "instruction " + std::to_string(pc) + " (" +
              std::string(isa::Mnemonic(inst.op)) + "." +
              std::string(isa::IsaSuffix(inst.type)) +
              ") has no implementation in the emulator";
      return false;
    }
    for (int i = 0; i < inst.NumOperands(); ++i) {
      const isa::Operand& op = inst.operands[i];
      if (op.kind == OperandKind::kMemory) {
        d.mem.base = slots.BaseSlot(op.mem);
        d.mem.index = op.mem.has_index ? op.mem.index : kNoSlot;
        d.mem.index_signed = op.mem.index_signed;
        d.mem.scale = op.mem.scale;
        d.mem.displacement = op.mem.displacement;
        d.mem.space = inst.space;
        d.mem.wide_base = isa::IsWideAddressSpace(inst.space);
        d.mem.vector = static_cast<uint8_t>(inst.vector);
        d.mem.regs_per_element = isa::IsWide(inst.type) ? 2 : 1;
      } else if (op.kind == OperandKind::kLabel) {
        if (d.flow == Flow::kBranch || i == 1) {
          d.target = op.label;
        } else {
          d.reconverge = op.label;
        }
      } else {
        d.slot[i] = slots.For(inst, i);
      }
    }
    out.code.push_back(d);
  }
  MarkStraightRuns(out.code);
  for (uint32_t pc : ReadsAfterWrites(out.code)) {
    out.code[pc].yield_before = true;
  }
  out.unordered_accesses = FindUnorderedThreadgroupAccesses(out.code);
  out.layout = slots.Finish();
  return true;
}

}  // namespace mtlemu::emu
