// Threadgroup-memory accesses whose order between SIMD groups the
// interleaved schedule changes: a read and a write of threadgroup memory
// with a path from one to the other that crosses no threadgroup_barrier
// but a branch. SIMD groups that take turns at branches
// (emu/dispatch/schedule.h) run such a pair in another order than SIMD
// groups that run one after the other to their barriers: mlx-lm's
// kl_forward reads the other SIMD groups' maxima, branches (`if (lane ==
// 0)`) and writes its own sums into the same slots; run one after the
// other, SIMD group 0 overwrites a slot before SIMD group 1 reads it, a
// race that hardware order hides. And a write, then a read with no branch
// between (`t[tid] = x; y = t[tid + 1];`, a barrier missing): the SIMD
// groups take turns before such a read (DecodedInstruction::
// yield_before), so that all write before any reads, as they do on the
// GPU. A read and then a write with no branch between them (`partial[tid]
// += partial[tid + s]`) run in the same order either way, and so do two
// writes: the kernels without a pair run sequentially, as fast as before,
// with the same results.
#pragma once

#include <cstdint>
#include <vector>

#include "emu/exec/exec_context.h"

namespace mtlemu::emu {

struct UnorderedAccesses {
  uint32_t read = 0;   // the pc of a threadgroup read
  uint32_t write = 0;  // and of a write (a store or an atomic) it reaches
};

// The threadgroup reads that follow a threadgroup write with neither a
// branch nor a barrier between, in pc order.
std::vector<uint32_t> ReadsAfterWrites(
    const std::vector<DecodedInstruction>& code);

// The pairs, each read with the first write it reaches or that reaches it
// (those of ReadsAfterWrites first), up to `limit` pairs.
std::vector<UnorderedAccesses> FindUnorderedThreadgroupAccesses(
    const std::vector<DecodedInstruction>& code, size_t limit = 8);

}  // namespace mtlemu::emu
