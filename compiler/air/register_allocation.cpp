#include "compiler/air/register_allocation.h"

#include <algorithm>
#include <bitset>
#include <vector>

namespace mtlemu::air {
namespace {

using isa::Instruction;
using isa::OperandKind;

// One register reference of an instruction: the virtual register (the
// block, for a part), the offset into it, and the span.
struct RegisterUse {
  uint32_t reg;
  int offset;
  int span;
  bool def;
};

std::vector<RegisterUse> RegistersOf(const Instruction& inst,
                                     const RegisterParts& parts) {
  std::vector<RegisterUse> out;
  auto add = [&](uint32_t v, int span, bool def) {
    const auto [whole, offset] = parts.Resolve(v);
    out.push_back({whole, offset, span, def});
  };
  for (int i = 0; i < inst.NumOperands(); ++i) {
    const isa::Operand& op = inst.operands[i];
    if (op.kind == OperandKind::kRegister) {
      add(op.reg, isa::OperandRegisterSpan(inst, i),
          isa::IsDestination(inst, i));
    } else if (op.kind == OperandKind::kMemory) {
      if (op.mem.base_kind == OperandKind::kRegister) {
        add(op.mem.base, isa::IsWideAddressSpace(inst.space) ? 2 : 1, false);
      }
      if (op.mem.has_index) add(op.mem.index, 1, false);
    }
  }
  return out;
}

std::vector<uint32_t> Successors(const isa::Kernel& k, uint32_t pc) {
  const Instruction& inst = k.code[pc];
  switch (inst.op) {
    case isa::Opcode::kExit:
      return {};
    case isa::Opcode::kBranch:
      return {inst.operands[0].label};
    case isa::Opcode::kBranchNonZero:
    case isa::Opcode::kBranchZero:
      return {pc + 1, inst.operands[1].label};
    default:
      return {pc + 1};
  }
}

}  // namespace

Status AllocateRegisters(isa::Kernel& kernel, const RegisterParts& parts) {
  const uint32_t n = static_cast<uint32_t>(kernel.code.size());
  // Virtual registers and their widths (a 64-bit value is one virtual
  // register of width 2).
  std::vector<std::vector<RegisterUse>> regs(n);
  uint32_t num_vregs = 0;
  for (uint32_t pc = 0; pc < n; ++pc) {
    regs[pc] = RegistersOf(kernel.code[pc], parts);
    for (const RegisterUse& r : regs[pc])
      num_vregs = std::max(num_vregs, r.reg + 1);
  }
  std::vector<int> width(num_vregs, 1);
  for (const auto& list : regs) {
    for (const RegisterUse& r : list)
      width[r.reg] = std::max(width[r.reg], r.offset + r.span);
  }

  // Backward dataflow: live-in per instruction, as sorted vectors of vregs.
  std::vector<std::vector<uint32_t>> live_in(n);
  bool changed = true;
  while (changed) {
    changed = false;
    for (uint32_t pc = n; pc-- > 0;) {
      std::vector<uint32_t> live;
      for (uint32_t s : Successors(kernel, pc)) {
        if (s >= n) continue;
        std::vector<uint32_t> merged;
        std::set_union(live.begin(), live.end(), live_in[s].begin(),
                       live_in[s].end(), std::back_inserter(merged));
        live.swap(merged);
      }
      // live_in = uses ∪ (live_out − defs); writing a part of a block
      // leaves the rest of it live.
      for (const RegisterUse& r : regs[pc]) {
        if (r.def && r.offset == 0 && r.span >= width[r.reg]) {
          auto it = std::lower_bound(live.begin(), live.end(), r.reg);
          if (it != live.end() && *it == r.reg) live.erase(it);
        }
      }
      for (const RegisterUse& r : regs[pc]) {
        if (!r.def) {
          auto it = std::lower_bound(live.begin(), live.end(), r.reg);
          if (it == live.end() || *it != r.reg) live.insert(it, r.reg);
        }
      }
      if (live != live_in[pc]) {
        live_in[pc] = std::move(live);
        changed = true;
      }
    }
  }

  // Intervals: the hull of every point where a vreg is live or defined.
  constexpr uint32_t kNone = 0xffffffffu;
  std::vector<uint32_t> start(num_vregs, kNone), end(num_vregs, 0);
  auto touch = [&](uint32_t v, uint32_t pc) {
    start[v] = std::min(start[v], pc);
    end[v] = std::max(end[v], pc);
  };
  for (uint32_t pc = 0; pc < n; ++pc) {
    for (uint32_t v : live_in[pc]) touch(v, pc);
    for (const RegisterUse& r : regs[pc]) touch(r.reg, pc);
  }

  // Linear scan.
  std::vector<uint32_t> order;
  for (uint32_t v = 0; v < num_vregs; ++v) {
    if (start[v] != kNone) order.push_back(v);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return start[a] != start[b] ? start[a] < start[b] : a < b;
  });
  std::vector<int> assigned(num_vregs, -1);
  std::bitset<isa::kMaxRegisters> used;
  std::vector<uint32_t> active;  // vregs holding registers
  for (uint32_t v : order) {
    // Free what ended before this interval starts.
    active.erase(std::remove_if(active.begin(), active.end(),
                                [&](uint32_t a) {
                                  if (end[a] >= start[v]) return false;
                                  for (int k = 0; k < width[a]; ++k) {
                                    used.reset(assigned[a] + k);
                                  }
                                  return true;
                                }),
                 active.end());
    int found = -1;
    for (int r = 0; r + width[v] <= isa::kMaxRegisters; ++r) {
      bool free = true;
      for (int k = 0; k < width[v]; ++k) free &= !used.test(r + k);
      if (free) {
        found = r;
        break;
      }
    }
    if (found < 0) {
      return Error{"unsupported: kernel '" + kernel.name +
                   "' needs more than " + std::to_string(isa::kMaxRegisters) +
                   " registers per thread (spilling is not implemented)"};
    }
    assigned[v] = found;
    for (int k = 0; k < width[v]; ++k) used.set(found + k);
    active.push_back(v);
  }

  auto physical = [&](uint16_t v) {
    const auto [whole, offset] = parts.Resolve(v);
    return static_cast<uint16_t>(assigned[whole] + offset);
  };
  for (Instruction& inst : kernel.code) {
    for (int i = 0; i < inst.NumOperands(); ++i) {
      isa::Operand& op = inst.operands[i];
      if (op.kind == OperandKind::kRegister) {
        op.reg = physical(op.reg);
      } else if (op.kind == OperandKind::kMemory) {
        if (op.mem.base_kind == OperandKind::kRegister) {
          op.mem.base = physical(op.mem.base);
        }
        if (op.mem.has_index) op.mem.index = physical(op.mem.index);
      }
    }
  }
  isa::ComputeResources(kernel);
  return {};
}

}  // namespace mtlemu::air
