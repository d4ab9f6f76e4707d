// Virtual registers that alias part of a wider one. A vector value that
// survives scalarization (simdgroup_matrix's <2 x float>, a half2 bitcast to
// a uint) lives in a block of consecutive registers: the vector's virtual
// register is the block, and element i is a virtual register of its own
// that is "part of the block at offset i * registers-per-element". The
// 32-bit halves of a 64-bit value are parts the same way. Register
// allocation places a block once; its parts follow it.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "isa/instruction.h"

namespace mtlemu::air {

class RegisterParts {
 public:
  // The virtual register for (whole, offset), made on first use by
  // `make_vreg`; parts of parts resolve to the outermost whole.
  template <typename MakeVReg>
  uint32_t Part(uint32_t whole, int offset, MakeVReg make_vreg) {
    const auto [root, base] = Resolve(whole);
    auto [it, inserted] = by_place_.try_emplace({root, base + offset}, 0);
    if (inserted) {
      it->second = make_vreg();
      of_[it->second] = {root, base + offset};
    }
    return it->second;
  }

  // (whole, offset) for a part; (v, 0) for any other register.
  std::pair<uint32_t, int> Resolve(uint32_t v) const {
    auto it = of_.find(v);
    return it == of_.end() ? std::pair<uint32_t, int>{v, 0} : it->second;
  }

  // Whether `v` stands alone: neither a part nor a block with parts.
  bool Alone(uint32_t v) const {
    if (of_.count(v)) return false;
    auto it = by_place_.lower_bound({v, std::numeric_limits<int>::min()});
    return it == by_place_.end() || it->first.first != v;
  }

  // Makes `v`, a register that stands alone, the part of `whole` at
  // `offset` (a place no other register holds).
  void Adopt(uint32_t v, uint32_t whole, int offset) {
    by_place_[{whole, offset}] = v;
    of_[v] = {whole, offset};
  }

  bool empty() const { return of_.empty(); }

 private:
  std::map<uint32_t, std::pair<uint32_t, int>> of_;
  std::map<std::pair<uint32_t, int>, uint32_t> by_place_;
};

// One register reference of an instruction: the virtual register (the
// block, for a part), the offset into it, the span, and whether written.
struct RegisterUse {
  uint32_t reg;
  int offset;
  int span;
  bool def;
};

// Every register an instruction reads or writes, memory operands' base and
// index included, parts resolved to their blocks.
std::vector<RegisterUse> RegistersOf(const isa::Instruction& inst,
                                     const RegisterParts& parts);

}  // namespace mtlemu::air
