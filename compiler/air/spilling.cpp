#include "compiler/air/spilling.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "compiler/air/dead_code.h"

namespace mtlemu::air {
namespace {

using isa::Instruction;
using isa::Opcode;
using isa::Operand;
using isa::OperandKind;

// Registers one ld.thread or st.thread moves (as .v4.u32).
constexpr int kMaxRegistersPerAccess = 4;

// Bytes of thread memory, as a register (block) holds them.
struct Place {
  int64_t slot;
  int span;  // registers
  auto operator<=>(const Place&) const = default;
};

class Rewriter {
 public:
  Rewriter(isa::Kernel& kernel, RegisterParts& parts,
           const std::vector<int64_t>& slot_of,
           const std::function<uint32_t()>& new_vreg)
      : kernel_(kernel),
        parts_(parts),
        slot_of_(slot_of),
        new_vreg_(new_vreg) {}

  Result<std::vector<uint32_t>> Run() {
    const size_t n = kernel_.code.size();
    std::vector<bool> joins(n + 1, false);
    for (const auto& [pc, name] : kernel_.labels) joins[pc] = true;
    for (const Instruction& inst : kernel_.code) {
      for (int i = 0; i < inst.NumOperands(); ++i) {
        if (inst.operands[i].kind == OperandKind::kLabel) {
          joins[inst.operands[i].label] = true;
        }
      }
    }
    std::vector<Instruction> code;
    std::vector<uint32_t> new_index(n + 1);
    for (size_t pc = 0; pc < n; ++pc) {
      new_index[pc] = static_cast<uint32_t>(code.size());
      Instruction inst = kernel_.code[pc];
      // Registers hold places only along straight-line code.
      if (joins[pc] || (!code.empty() && (isa::IsBranch(code.back().op) ||
                                          isa::IsTerminator(code.back().op)))) {
        held_.clear();
      }
      if (CopiesWithinASlot(inst)) continue;
      before_.clear();
      after_.clear();
      read_.clear();
      written_.clear();
      for (int i = 0; i < inst.NumOperands(); ++i) {
        Operand& op = inst.operands[i];
        if (op.kind == OperandKind::kRegister) {
          op.reg = Replace(inst, op.reg, isa::OperandRegisterSpan(inst, i),
                           isa::IsDestination(inst, i));
        } else if (op.kind == OperandKind::kMemory) {
          if (op.mem.base_kind == OperandKind::kRegister) {
            op.mem.base =
                Replace(inst, op.mem.base,
                        isa::IsWideAddressSpace(inst.space) ? 2 : 1, false);
          }
          if (op.mem.has_index) {
            op.mem.index = Replace(inst, op.mem.index, 1, false);
          }
        }
      }
      if (!error_.empty()) return Error{error_};
      code.insert(code.end(), before_.begin(), before_.end());
      code.push_back(inst);
      code.insert(code.end(), after_.begin(), after_.end());
      Hold();
    }
    new_index[n] = static_cast<uint32_t>(code.size());
    ReplaceCode(kernel_, std::move(code), new_index);
    return std::move(fresh_);
  }

 private:
  // The slot byte offset of register `v` (a part: its place in its block's
  // slot), or kNoSlot.
  int64_t SlotOf(uint32_t v) const {
    const auto [whole, offset] = parts_.Resolve(v);
    if (whole >= slot_of_.size() || slot_of_[whole] == kNoSlot) return kNoSlot;
    return slot_of_[whole] + 4 * int64_t{offset};
  }

  // mov d, s where d and s are one place in thread memory: nothing to do.
  bool CopiesWithinASlot(const Instruction& inst) const {
    if (inst.op != Opcode::kMov) return false;
    const Operand& d = inst.operands[0];
    const Operand& s = inst.operands[1];
    if (d.kind != OperandKind::kRegister || s.kind != OperandKind::kRegister) {
      return false;
    }
    const int64_t slot = SlotOf(d.reg);
    return slot != kNoSlot && slot == SlotOf(s.reg);
  }

  uint32_t Fresh() {
    const uint32_t v = new_vreg_();
    if (v > std::numeric_limits<uint16_t>::max()) {
      error_ = "unsupported: kernel '" + kernel_.name +
               "' needs more virtual registers than the compiler numbers "
               "after spilling";
    }
    fresh_.push_back(v);
    return v;
  }

  // The register that stands in for `v` (spanning `span` registers) in
  // `inst`: `v` itself when it has no slot, else for a read the register
  // that holds the place already, or a fresh one loaded before `inst`; for
  // a write a fresh one stored after it.
  uint16_t Replace(const Instruction& inst, uint16_t v, int span, bool def) {
    const int64_t slot = SlotOf(v);
    if (slot == kNoSlot) return v;
    const Place place{slot, span};
    if (!def) {
      auto it = held_.find(place);
      if (it != held_.end()) {
        read_.emplace_back(place, it->second);
        return it->second;
      }
    }
    const uint16_t temp = static_cast<uint16_t>(Fresh());
    for (int k = 0; k < span; k += kMaxRegistersPerAccess) {
      const uint32_t reg =
          k == 0 ? temp : parts_.Part(temp, k, [this] { return Fresh(); });
      Instruction access;
      access.op = def ? Opcode::kStore : Opcode::kLoad;
      access.type = isa::ScalarType::kUInt;
      access.space = isa::AddressSpace::kThread;
      access.vector =
          static_cast<uint8_t>(std::min(span - k, kMaxRegistersPerAccess));
      isa::MemoryRef address;
      address.displacement = static_cast<int32_t>(slot + 4 * k);
      const Operand value = Operand::Reg(static_cast<int>(reg));
      access.operands[def ? 1 : 0] = value;
      access.operands[def ? 0 : 1] = Operand::Memory(address);
      access.location = inst.location;
      (def ? after_ : before_).push_back(access);
    }
    (def ? written_ : read_).emplace_back(place, temp);
    if (!def) held_[place] = temp;
    return temp;
  }

  // After an instruction: the places it read or wrote stay in their
  // registers for the next one (no longer, so that spill code's registers
  // stay short-lived); a write replaces what overlaps it.
  void Hold() {
    held_.clear();
    for (const auto& [place, reg] : read_) held_[place] = reg;
    for (const auto& [place, reg] : written_) {
      for (auto it = held_.begin(); it != held_.end();) {
        const bool overlap = it->first.slot < place.slot + 4 * place.span &&
                             place.slot < it->first.slot + 4 * it->first.span;
        it = overlap ? held_.erase(it) : std::next(it);
      }
    }
    for (const auto& [place, reg] : written_) held_[place] = reg;
  }

  isa::Kernel& kernel_;
  RegisterParts& parts_;
  const std::vector<int64_t>& slot_of_;
  const std::function<uint32_t()>& new_vreg_;
  std::vector<uint32_t> fresh_;
  std::string error_;
  // Per instruction: spill code before and after it, and the places it
  // reads and writes through registers.
  std::vector<Instruction> before_, after_;
  std::vector<std::pair<Place, uint16_t>> read_, written_;
  // Places whose value a register holds: those the previous instruction
  // touched and those loaded for this one.
  std::map<Place, uint16_t> held_;
};

}  // namespace

Result<std::vector<uint32_t>> SpillToThreadMemory(
    isa::Kernel& kernel, RegisterParts& parts,
    const std::vector<int64_t>& slot_of,
    const std::function<uint32_t()>& new_vreg) {
  return Rewriter(kernel, parts, slot_of, new_vreg).Run();
}

}  // namespace mtlemu::air
