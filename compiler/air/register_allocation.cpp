#include "compiler/air/register_allocation.h"

#include <algorithm>
#include <bitset>
#include <vector>

#include "compiler/air/dead_code.h"
#include "isa/control_flow.h"

namespace mtlemu::air {

using isa::Instruction;
using isa::OperandKind;

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
      for (uint32_t s : isa::SuccessorsOf(kernel, pc)) {
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

  // Copy coalescing (Chaitin's test): a full-width mov between two registers
  // gives both one register unless one is written where the other lives on,
  // the mov itself excepted (there both hold the same value). The mov then
  // copies a register to itself and is dropped below. Loop phis' copies go
  // away, also when the loop's last value is used after the loop.
  std::vector<uint32_t> rep(num_vregs);
  for (uint32_t v = 0; v < num_vregs; ++v) rep[v] = v;
  auto find = [&](uint32_t v) {
    while (rep[v] != v) v = rep[v] = rep[rep[v]];
    return v;
  };
  {
    std::vector<std::vector<uint32_t>> out_at(num_vregs), defs_at(num_vregs);
    for (uint32_t pc = 0; pc < n; ++pc) {
      std::vector<uint32_t> out;
      for (uint32_t s : isa::SuccessorsOf(kernel, pc)) {
        if (s < n) out.insert(out.end(), live_in[s].begin(), live_in[s].end());
      }
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
      for (uint32_t v : out) out_at[v].push_back(pc);
      for (const RegisterUse& r : regs[pc]) {
        if (r.def && (defs_at[r.reg].empty() || defs_at[r.reg].back() != pc)) {
          defs_at[r.reg].push_back(pc);
        }
      }
    }
    // Whether the sorted lists share an element other than `except`.
    auto meet = [](const std::vector<uint32_t>& a,
                   const std::vector<uint32_t>& b, uint32_t except) {
      size_t i = 0, j = 0;
      while (i < a.size() && j < b.size()) {
        if (a[i] == b[j] && a[i] != except) return true;
        a[i] <= b[j] ? ++i : ++j;
      }
      return false;
    };
    auto merge = [](std::vector<uint32_t>& into, std::vector<uint32_t>& from) {
      std::vector<uint32_t> m;
      std::set_union(into.begin(), into.end(), from.begin(), from.end(),
                     std::back_inserter(m));
      into.swap(m);
      from.clear();
      from.shrink_to_fit();
    };
    for (uint32_t pc = 0; pc < n; ++pc) {
      const Instruction& inst = kernel.code[pc];
      if (inst.op != isa::Opcode::kMov || regs[pc].size() != 2) continue;
      const RegisterUse& d = regs[pc][0];
      const RegisterUse& s = regs[pc][1];
      if (!d.def || s.def || d.offset != 0 || s.offset != 0 ||
          d.span != width[d.reg] || s.span != width[s.reg] ||
          width[d.reg] != width[s.reg]) {
        continue;
      }
      const uint32_t a = find(d.reg), b = find(s.reg);
      if (a == b || meet(defs_at[a], out_at[b], pc) ||
          meet(defs_at[b], out_at[a], pc)) {
        continue;
      }
      rep[b] = a;
      merge(out_at[a], out_at[b]);
      merge(defs_at[a], defs_at[b]);
    }
  }
  for (auto& list : regs) {
    for (RegisterUse& r : list) r.reg = find(r.reg);
  }
  for (auto& live : live_in) {
    for (uint32_t& v : live) v = find(v);
    std::sort(live.begin(), live.end());
    live.erase(std::unique(live.begin(), live.end()), live.end());
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
    return static_cast<uint16_t>(assigned[find(whole)] + offset);
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
  // Moves of a register to itself (coalesced copies) are dropped.
  std::vector<bool> keep(n, true);
  bool any = false;
  for (uint32_t pc = 0; pc < n; ++pc) {
    const Instruction& inst = kernel.code[pc];
    if (inst.op == isa::Opcode::kMov &&
        inst.operands[0].kind == OperandKind::kRegister &&
        inst.operands[0] == inst.operands[1]) {
      keep[pc] = false;
      any = true;
    }
  }
  if (any) RemoveInstructions(kernel, keep);
  isa::ComputeResources(kernel);
  return {};
}

}  // namespace mtlemu::air
