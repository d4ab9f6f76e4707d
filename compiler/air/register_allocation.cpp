// Register allocation in rounds. Each round computes per-lane liveness on
// the ISA's control flow (bit vectors over basic blocks), coalesces copies
// (Chaitin's test), and runs linear scan with spilling on live intervals (the
// hull of the points where a register is live) onto r0..r255: Poletto and
// Sarkar, "Linear Scan Register Allocation" (TOPLAS 1999). Where no register
// (no run of consecutive ones, for a pair or block) is free for the interval
// that starts, the cheaper side gives up its place: the new interval, or the
// intervals holding one run, by spill weight. A value's weight is its
// references, each counted 10^(loops around it) times, per instruction of
// its interval: the lowest use density goes first, as with Chaitin's spill
// costs and LLVM's spill weights. Between equal weights the interval that
// ends furthest away goes, Poletto and Sarkar's own heuristic.
//
// Spilled values move to thread memory (spilling.h: a store after each
// definition, a load before each use, through registers that live for a few
// instructions), and the next round allocates the rewritten code from
// scratch; spill code's registers are never spilled or coalesced, so a few
// rounds settle it. A kernel that fits takes one round and gets no spill
// code.
#include "compiler/air/register_allocation.h"

#include <llvm/ADT/BitVector.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "compiler/air/dead_code.h"
#include "compiler/air/spilling.h"
#include "isa/control_flow.h"

namespace mtlemu::air {
namespace {

using isa::Instruction;
using isa::OperandKind;

constexpr uint32_t kNone = 0xffffffffu;
constexpr double kUnspillable = std::numeric_limits<double>::infinity();

// Each round's spill code may need registers where every one is taken, and
// so spill a little more; a few rounds settle it.
constexpr int kMaxRounds = 16;

// Loops deeper than this weigh as much as this deep.
constexpr int kMaxDepth = 8;

// The kernel's virtual registers in one round: every instruction's register
// references (parts resolved to blocks) and each register's width (a
// 64-bit value or a block spans several).
struct VirtualRegisters {
  std::vector<std::vector<RegisterUse>> at;
  std::vector<int> width;
  uint32_t count = 0;
};

VirtualRegisters Collect(const isa::Kernel& kernel,
                         const RegisterParts& parts) {
  VirtualRegisters v;
  v.at.resize(kernel.code.size());
  for (size_t pc = 0; pc < kernel.code.size(); ++pc) {
    v.at[pc] = RegistersOf(kernel.code[pc], parts);
    for (const RegisterUse& r : v.at[pc])
      v.count = std::max(v.count, r.reg + 1);
  }
  v.width.assign(v.count, 1);
  for (const auto& list : v.at) {
    for (const RegisterUse& r : list)
      v.width[r.reg] = std::max(v.width[r.reg], r.offset + r.span);
  }
  return v;
}

// Per-lane liveness, as bit vectors over virtual register numbers: a
// backward dataflow over the code's basic blocks (live-in = uses ∪
// (live-out − defs)), then one walk back through each block. Writing a part
// of a block leaves the rest of it live, except in spill code, whose
// registers are written (in parts, when wider than one access) right before
// they are read.
struct Liveness {
  // Per register: the instructions after which it is live, ascending.
  std::vector<std::vector<uint32_t>> out_at;
  // Per register: the first and last instruction where it is live on entry
  // (kNone when it never is).
  std::vector<uint32_t> first_in, last_in;
};

Liveness ComputeLiveness(const isa::Kernel& kernel, const VirtualRegisters& v,
                         const std::vector<bool>& spill_code) {
  const uint32_t n = static_cast<uint32_t>(kernel.code.size());
  const unsigned count = v.count;
  // What each instruction writes whole (ending an earlier life) and reads.
  std::vector<std::vector<uint32_t>> kills(n), uses(n);
  for (uint32_t pc = 0; pc < n; ++pc) {
    for (const RegisterUse& r : v.at[pc]) {
      if (!r.def) {
        uses[pc].push_back(r.reg);
      } else if ((r.offset == 0 && r.span >= v.width[r.reg]) ||
                 (r.reg < spill_code.size() && spill_code[r.reg])) {
        kills[pc].push_back(r.reg);
      }
    }
  }
  // Basic blocks: a block ends at a branch, exit or trap, and before a
  // branch target.
  std::vector<bool> leader(n + 1, false);
  leader[0] = true;
  for (uint32_t pc = 0; pc < n; ++pc) {
    const isa::Successors next = isa::SuccessorsOf(kernel, pc);
    if (next.count == 1 && next.pcs[0] == pc + 1) continue;
    leader[pc + 1] = true;
    for (uint32_t s : next) {
      if (s < n) leader[s] = true;
    }
  }
  std::vector<uint32_t> start;  // block b is [start[b], start[b + 1])
  std::vector<uint32_t> block_of(n);
  for (uint32_t pc = 0; pc < n; ++pc) {
    if (leader[pc]) start.push_back(pc);
    block_of[pc] = static_cast<uint32_t>(start.size() - 1);
  }
  const uint32_t blocks = static_cast<uint32_t>(start.size());
  start.push_back(n);
  std::vector<std::vector<uint32_t>> successors(blocks);
  std::vector<llvm::BitVector> gen(blocks, llvm::BitVector(count));
  std::vector<llvm::BitVector> kill(blocks, llvm::BitVector(count));
  for (uint32_t b = 0; b < blocks; ++b) {
    for (uint32_t s : isa::SuccessorsOf(kernel, start[b + 1] - 1)) {
      if (s < n) successors[b].push_back(block_of[s]);
    }
    for (uint32_t pc = start[b + 1]; pc-- > start[b];) {
      for (uint32_t r : kills[pc]) {
        gen[b].reset(r);
        kill[b].set(r);
      }
      for (uint32_t r : uses[pc]) gen[b].set(r);
    }
  }

  std::vector<llvm::BitVector> live_in(blocks, llvm::BitVector(count));
  std::vector<llvm::BitVector> live_out(blocks, llvm::BitVector(count));
  llvm::BitVector in(count);
  bool changed = true;
  while (changed) {
    changed = false;
    for (uint32_t b = blocks; b-- > 0;) {
      live_out[b].reset();
      for (uint32_t s : successors[b]) live_out[b] |= live_in[s];
      in = live_out[b];
      in.reset(kill[b]);
      in |= gen[b];
      if (in != live_in[b]) {
        std::swap(in, live_in[b]);
        changed = true;
      }
    }
  }

  // Back through each block, the last block first. A register is live
  // after a run of instructions that ends (going back) where it is written
  // whole, or at the block's start; only those ends and the reads are
  // visited, not every live register at every instruction.
  Liveness l;
  l.out_at.resize(count);
  l.first_in.assign(count, kNone);
  l.last_in.assign(count, kNone);
  auto live_on_entry = [&](uint32_t r, uint32_t pc) {
    if (l.first_in[r] == kNone || pc < l.first_in[r]) l.first_in[r] = pc;
    if (l.last_in[r] == kNone || pc > l.last_in[r]) l.last_in[r] = pc;
  };
  // While a register is live: one past the last instruction of its run.
  std::vector<uint32_t> run_end(count);
  // `r` is live after [from, run_end[r]) and, but where it is written at
  // `from` (`written`), on entry to each of them.
  auto end_run = [&](uint32_t r, uint32_t from, bool written) {
    const uint32_t end = run_end[r];
    for (uint32_t pc = end; pc-- > from;) l.out_at[r].push_back(pc);
    const uint32_t first_in = written ? from + 1 : from;
    if (first_in < end) {
      live_on_entry(r, first_in);
      live_on_entry(r, end - 1);
    }
  };
  llvm::BitVector live(count);
  for (uint32_t b = blocks; b-- > 0;) {
    live = live_out[b];
    for (unsigned r : live.set_bits()) run_end[r] = start[b + 1];
    for (uint32_t pc = start[b + 1]; pc-- > start[b];) {
      for (uint32_t r : kills[pc]) {
        if (!live.test(r)) continue;
        end_run(r, pc, true);
        live.reset(r);
      }
      for (uint32_t r : uses[pc]) {
        live_on_entry(r, pc);
        if (live.test(r)) continue;
        live.set(r);
        run_end[r] = pc;
      }
    }
    for (unsigned r : live.set_bits()) end_run(r, start[b], false);
  }
  for (std::vector<uint32_t>& pcs : l.out_at) {
    std::reverse(pcs.begin(), pcs.end());
  }
  return l;
}

// Copy coalescing (Chaitin's test): a full-width mov between two registers
// gives both one register unless one is written where the other lives on,
// the mov itself excepted (there both hold the same value). The mov then
// copies a register to itself and is dropped after allocation. Loop phis'
// copies go away, also when the loop's last value is used after the loop.
// Returns each register's representative; `v` is rewritten to
// representatives. Takes `out_at` (Liveness) and leaves it merged.
std::vector<uint32_t> Coalesce(const isa::Kernel& kernel, VirtualRegisters& v,
                               std::vector<std::vector<uint32_t>>& out_at,
                               const std::vector<bool>& spill_code) {
  const uint32_t n = static_cast<uint32_t>(kernel.code.size());
  std::vector<uint32_t> rep(v.count);
  for (uint32_t r = 0; r < v.count; ++r) rep[r] = r;
  auto find = [&](uint32_t r) {
    while (rep[r] != r) r = rep[r] = rep[rep[r]];
    return r;
  };
  auto is_spill_code = [&](uint32_t r) {
    return r < spill_code.size() && spill_code[r];
  };
  std::vector<std::vector<uint32_t>> defs_at(v.count);
  for (uint32_t pc = 0; pc < n; ++pc) {
    for (const RegisterUse& r : v.at[pc]) {
      if (r.def && (defs_at[r.reg].empty() || defs_at[r.reg].back() != pc)) {
        defs_at[r.reg].push_back(pc);
      }
    }
  }
  // Whether the sorted lists share an element other than `except`.
  auto meet = [](const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                 uint32_t except) {
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
    if (inst.op != isa::Opcode::kMov || v.at[pc].size() != 2) continue;
    const RegisterUse& d = v.at[pc][0];
    const RegisterUse& s = v.at[pc][1];
    if (!d.def || s.def || d.offset != 0 || s.offset != 0 ||
        d.span != v.width[d.reg] || s.span != v.width[s.reg] ||
        v.width[d.reg] != v.width[s.reg] || is_spill_code(d.reg) ||
        is_spill_code(s.reg)) {
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
  for (uint32_t r = 0; r < v.count; ++r) rep[r] = find(r);
  for (auto& list : v.at) {
    for (RegisterUse& r : list) r.reg = rep[r.reg];
  }
  return rep;
}

struct Interval {
  uint32_t start = kNone;
  uint32_t end = 0;
  // What keeping the value in memory would cost per instruction of its
  // interval: its references, each counted 10^(loops around it) times,
  // over its length (use density). Infinite for spill code's registers.
  double weight = 0;
};

// Each register's interval: the hull of every point where it is live or
// referenced, with its spill weight. `v` holds representatives (Coalesce);
// `liveness` is of the registers before coalescing, `rep` maps them.
std::vector<Interval> Intervals(const isa::Kernel& kernel,
                                const VirtualRegisters& v,
                                const Liveness& liveness,
                                const std::vector<uint32_t>& rep,
                                const std::vector<bool>& spill_code) {
  const uint32_t n = static_cast<uint32_t>(kernel.code.size());
  // Loop depth: how many back edges' spans (the code is laid out so that
  // every other edge goes forward) hold each instruction.
  std::vector<int> depth(n + 1);
  for (uint32_t pc = 0; pc < n; ++pc) {
    for (uint32_t s : isa::SuccessorsOf(kernel, pc)) {
      if (s <= pc) {
        ++depth[s];
        --depth[pc + 1];
      }
    }
  }
  for (uint32_t pc = 1; pc < n; ++pc) depth[pc] += depth[pc - 1];
  std::vector<Interval> intervals(v.count);
  auto touch = [&](uint32_t r, uint32_t pc) {
    intervals[r].start = std::min(intervals[r].start, pc);
    intervals[r].end = std::max(intervals[r].end, pc);
  };
  for (uint32_t r = 0; r < v.count; ++r) {
    if (liveness.first_in[r] == kNone) continue;
    touch(rep[r], liveness.first_in[r]);
    touch(rep[r], liveness.last_in[r]);
  }
  for (uint32_t pc = 0; pc < n; ++pc) {
    const double frequency = std::pow(10.0, std::min(depth[pc], kMaxDepth));
    for (const RegisterUse& r : v.at[pc]) {
      touch(r.reg, pc);
      intervals[r.reg].weight += frequency;
    }
  }
  for (uint32_t r = 0; r < v.count; ++r) {
    Interval& i = intervals[r];
    if (r < spill_code.size() && spill_code[r]) {
      i.weight = kUnspillable;
    } else if (i.start != kNone) {
      i.weight /= i.end - i.start + 1;
    }
  }
  return intervals;
}

struct Assignment {
  std::vector<int> reg;           // per register: its first physical one
  std::vector<uint32_t> spilled;  // registers left without one
};

// Linear scan over `intervals` (registers that never occur have start
// kNone). Spills where `budget` registers (at most kAllocatableRegisters)
// do not suffice; registers of infinite weight keep theirs (it fails only
// when those alone need more than there are).
Result<Assignment> LinearScan(const std::vector<Interval>& intervals,
                              const std::vector<int>& width, int budget) {
  const uint32_t count = static_cast<uint32_t>(intervals.size());
  std::vector<uint32_t> order;
  for (uint32_t v = 0; v < count; ++v) {
    if (intervals[v].start != kNone) order.push_back(v);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return intervals[a].start != intervals[b].start
               ? intervals[a].start < intervals[b].start
               : a < b;
  });
  Assignment out;
  out.reg.assign(count, -1);
  std::array<uint32_t, kAllocatableRegisters> owner;  // vreg or kNone
  owner.fill(kNone);
  std::vector<uint32_t> active;  // vregs holding registers
  auto release = [&](uint32_t a) {
    for (int k = 0; k < width[a]; ++k) owner[out.reg[a] + k] = kNone;
  };
  for (uint32_t v : order) {
    // Free what ended before this interval starts.
    active.erase(std::remove_if(active.begin(), active.end(),
                                [&](uint32_t a) {
                                  if (intervals[a].end >= intervals[v].start) {
                                    return false;
                                  }
                                  release(a);
                                  return true;
                                }),
                 active.end());
    int found = -1;
    for (int r = 0; r + width[v] <= budget; ++r) {
      bool free = true;
      for (int k = 0; k < width[v]; ++k) free &= owner[r + k] == kNone;
      if (free) {
        found = r;
        break;
      }
    }
    if (found < 0) {
      // The run of registers whose holders weigh least (then: whose
      // earliest end is furthest), against the new interval itself.
      int best = -1;
      double best_weight = kUnspillable;
      uint32_t best_end = 0;
      for (int r = 0; r + width[v] <= budget; ++r) {
        double weight = 0;
        uint32_t earliest = kNone;
        for (int k = 0; k < width[v]; ++k) {
          const uint32_t a = owner[r + k];
          if (a == kNone || (k > 0 && owner[r + k - 1] == a)) continue;
          weight += intervals[a].weight;
          earliest = std::min(earliest, intervals[a].end);
        }
        if (weight < best_weight ||
            (best >= 0 && weight == best_weight && earliest > best_end)) {
          best = r;
          best_weight = weight;
          best_end = earliest;
        }
      }
      const Interval& i = intervals[v];
      if (i.weight < best_weight ||
          (i.weight == best_weight && i.weight < kUnspillable &&
           i.end >= best_end)) {
        out.spilled.push_back(v);
        continue;
      }
      if (best < 0) {
        return Error{"needs more than " + std::to_string(budget) +
                     " registers per thread for its spill code"};
      }
      for (int k = 0; k < width[v]; ++k) {
        const uint32_t a = owner[best + k];
        if (a == kNone) continue;
        release(a);
        out.reg[a] = -1;
        out.spilled.push_back(a);
        active.erase(std::find(active.begin(), active.end(), a));
      }
      found = best;
    }
    out.reg[v] = found;
    for (int k = 0; k < width[v]; ++k) owner[found + k] = v;
    active.push_back(v);
  }
  return out;
}

// Rewrites every register operand to its physical register and drops the
// moves of a register to itself (coalesced copies).
void AssignPhysical(isa::Kernel& kernel, const RegisterParts& parts,
                    const std::vector<uint32_t>& rep,
                    const std::vector<int>& assigned) {
  auto physical = [&](uint16_t v) {
    const auto [whole, offset] = parts.Resolve(v);
    return static_cast<uint16_t>(assigned[rep[whole]] + offset);
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
  const size_t n = kernel.code.size();
  std::vector<bool> keep(n, true);
  bool any = false;
  for (size_t pc = 0; pc < n; ++pc) {
    const Instruction& inst = kernel.code[pc];
    if (inst.op == isa::Opcode::kMov &&
        inst.operands[0].kind == OperandKind::kRegister &&
        inst.operands[0] == inst.operands[1]) {
      keep[pc] = false;
      any = true;
    }
  }
  if (any) RemoveInstructions(kernel, keep);
}

// Gives each spilled register (a representative) a slot after the kernel's
// thread memory, aligned to its width (16 bytes at most); returns the slot
// of every register, through its representative.
std::vector<int64_t> AssignSlots(isa::Kernel& kernel,
                                 const std::vector<uint32_t>& spilled,
                                 const std::vector<uint32_t>& rep,
                                 const std::vector<int>& width) {
  std::vector<int64_t> slot_of(rep.size(), kNoSlot);
  int64_t size = kernel.thread_memory;
  for (uint32_t v : spilled) {
    const int64_t align = width[v] >= 3 ? 16 : 4 * width[v];
    size = (size + align - 1) / align * align;
    slot_of[v] = size;
    size += 4 * width[v];
  }
  for (uint32_t r = 0; r < rep.size(); ++r) slot_of[r] = slot_of[rep[r]];
  kernel.thread_memory = static_cast<uint32_t>((size + 15) / 16 * 16);
  return slot_of;
}

}  // namespace

Status AllocateRegisters(isa::Kernel& kernel, RegisterParts& parts,
                         const std::function<uint32_t()>& new_vreg,
                         int max_registers) {
  const int budget = std::min(max_registers, kAllocatableRegisters);
  std::vector<bool> spill_code;  // per vreg: made by SpillToThreadMemory
  for (int round = 1;; ++round) {
    VirtualRegisters v = Collect(kernel, parts);
    Liveness liveness = ComputeLiveness(kernel, v, spill_code);
    const std::vector<uint32_t> rep =
        Coalesce(kernel, v, liveness.out_at, spill_code);
    Result<Assignment> scan = LinearScan(
        Intervals(kernel, v, liveness, rep, spill_code), v.width, budget);
    if (!scan.ok()) {
      return Error{"unsupported: kernel '" + kernel.name + "' " +
                   scan.error().message};
    }
    const Assignment& assignment = scan.value();
    if (assignment.spilled.empty()) {
      AssignPhysical(kernel, parts, rep, assignment.reg);
      isa::ComputeResources(kernel);
      return {};
    }
    if (round == kMaxRounds) {
      return Error{"unsupported: kernel '" + kernel.name +
                   "' still needs more than " + std::to_string(budget) +
                   " registers per thread after " + std::to_string(round) +
                   " rounds of allocation and spilling"};
    }
    Result<std::vector<uint32_t>> fresh = SpillToThreadMemory(
        kernel, parts, AssignSlots(kernel, assignment.spilled, rep, v.width),
        new_vreg);
    if (!fresh.ok()) return fresh.error();
    for (uint32_t r : fresh.value()) {
      if (r >= spill_code.size()) spill_code.resize(r + 1);
      spill_code[r] = true;
    }
  }
}

}  // namespace mtlemu::air
