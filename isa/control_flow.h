// The control flow of a kernel's code: which instructions may run after
// which. Shared by the compiler's liveness (register allocation) and the
// timing model's (registers a SIMD group holds on M3).
#pragma once

#include <array>
#include <cstdint>

#include "isa/module.h"

namespace mtlemu::isa {

// The instructions that may run after one: none after exit, the target of
// br, the fall-through and the target of bnz and bz (which may be the same
// instruction twice), else the next one. A successor may be
// kernel.code.size(): a path that falls off the end (the verifier rejects
// such code; liveness treats it as an exit).
struct Successors {
  std::array<uint32_t, 2> pcs{};
  int count = 0;

  const uint32_t* begin() const { return pcs.data(); }
  const uint32_t* end() const { return pcs.data() + count; }
};

Successors SuccessorsOf(const Kernel& kernel, uint32_t pc);

}  // namespace mtlemu::isa
