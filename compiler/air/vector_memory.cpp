#include "compiler/air/vector_memory.h"

#include <algorithm>
#include <vector>

#include "compiler/air/dead_code.h"

namespace mtlemu::air {
namespace {

using isa::Instruction;
using isa::Opcode;
using isa::Operand;
using isa::OperandKind;

constexpr int kMaxVector = 4;

// Elements of one register each (8-, 16- and 32-bit).
int ElementBytes(const Instruction& inst) {
  const int size = isa::SizeOf(inst.type);
  return size <= 4 ? size : 0;
}

bool Candidate(const Instruction& inst) {
  return (inst.op == Opcode::kLoad || inst.op == Opcode::kStore) &&
         inst.vector == 1 && ElementBytes(inst) > 0;
}

int MemoryPosition(const Instruction& inst) {
  return inst.op == Opcode::kLoad ? 1 : 0;
}

int ValuePosition(const Instruction& inst) {
  return inst.op == Opcode::kLoad ? 0 : 1;
}

// Whether `next` accesses the element `k` places after `first`'s.
bool Continues(const Instruction& first, const Instruction& next, int k) {
  if (next.op != first.op || next.space != first.space ||
      next.type != first.type || next.vector != 1) {
    return false;
  }
  const isa::MemoryRef& a = first.operands[MemoryPosition(first)].mem;
  const isa::MemoryRef& b = next.operands[MemoryPosition(next)].mem;
  if (next.operands[ValuePosition(next)].kind != OperandKind::kRegister ||
      a.base_kind != b.base_kind || a.base != b.base ||
      a.has_index != b.has_index || a.index_signed != b.index_signed ||
      a.index != b.index || a.scale != b.scale ||
      int64_t{b.displacement} !=
          int64_t{a.displacement} + int64_t{k} * ElementBytes(first)) {
    return false;
  }
  if (first.op == Opcode::kLoad) {
    // A loaded value must not feed the address of the loads after it.
    for (const Instruction* inst : {&first, &next}) {
      const uint32_t d = inst->operands[0].reg;
      if ((a.base_kind == OperandKind::kRegister && a.base == d) ||
          (a.has_index && a.index == d)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

void MergeVectorAccesses(isa::Kernel& kernel, RegisterParts& parts,
                         const std::function<uint32_t()>& new_vreg) {
  const size_t n = kernel.code.size();
  // Per virtual register: its definitions, and the widest use of it.
  std::vector<int> defs, width;
  auto grow = [&](uint32_t v) {
    if (v >= defs.size()) {
      defs.resize(v + 1, 0);
      width.resize(v + 1, 0);
    }
  };
  // (Counted per block for parts: exact for the registers that stand alone,
  // the only ones that may join a block.)
  for (const Instruction& inst : kernel.code) {
    for (const RegisterUse& r : RegistersOf(inst, parts)) {
      grow(r.reg);
      width[r.reg] = std::max(width[r.reg], r.offset + r.span);
      if (r.def) ++defs[r.reg];
    }
  }
  // A register that can become a part of a new block.
  auto adoptable = [&](uint32_t v) {
    return v < defs.size() && parts.Alone(v) && defs[v] == 1 && width[v] == 1;
  };

  std::vector<bool> keep(n, true);
  bool any = false;
  for (size_t pc = 0; pc < n;) {
    Instruction& first = kernel.code[pc];
    if (!Candidate(first) ||
        first.operands[ValuePosition(first)].kind != OperandKind::kRegister) {
      ++pc;
      continue;
    }
    int k = 1;
    while (k < kMaxVector && pc + k < n && !kernel.labels.count(pc + k) &&
           Continues(first, kernel.code[pc + k], k)) {
      ++k;
    }
    std::vector<uint32_t> values;
    for (int i = 0; i < k; ++i) {
      const Instruction& inst = kernel.code[pc + i];
      values.push_back(inst.operands[ValuePosition(inst)].reg);
    }
    std::vector<uint32_t> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const bool distinct =
        std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
    // A store of consecutive parts of one block reads the block in place.
    bool in_place = first.op == Opcode::kStore;
    const auto [block, offset] = parts.Resolve(values[0]);
    for (int i = 0; i < k && in_place; ++i) {
      in_place = parts.Resolve(values[i]) ==
                 std::pair<uint32_t, int>{block, offset + i};
    }
    bool fresh = distinct;
    for (int i = 0; i < k && fresh; ++i) fresh = adoptable(values[i]);
    if (k < 2 || (!in_place && !fresh)) {
      ++pc;
      continue;
    }
    if (!in_place) {
      const uint32_t b = new_vreg();
      for (int i = 0; i < k; ++i) parts.Adopt(values[i], b, i);
      first.operands[ValuePosition(first)] = Operand::Reg(static_cast<int>(b));
    }
    first.vector = static_cast<uint8_t>(k);
    for (int i = 1; i < k; ++i) keep[pc + i] = false;
    any = true;
    pc += k;
  }
  if (any) RemoveInstructions(kernel, keep);
}

}  // namespace mtlemu::air
