// Accesses just outside a buffer (EmulatorOptions::out_of_bounds). A Mac's
// GPU maps memory in pages of 16 KiB (the page size of Apple silicon), and
// Metal's allocators place buffers in such pages, next to each other: a
// kernel that reads a few bytes before or past a buffer (MLX's grid_sample
// loads the four corners of a cell and zeroes those out of range afterwards)
// reads whatever is there and goes on, where a strict emulator faults. Metal
// leaves such an access undefined; it is a bug in the kernel either way.
//
// Under OutOfBoundsPolicy::kReport (the default) a device or constant
// access that misses every buffer but lies within kNearBufferBytes of one
// reads zeros where it is outside the buffer (its bytes inside the buffer
// are read as they are), a store or atomic there changes nothing, and each
// such access is recorded as a finding (FindingKind::kNearBufferAccess) with
// its source line; the dispatch goes on, and its outputs are kept. Farther
// away, and in threadgroup and thread memory, an access faults as before.
// Under kFault every access outside a buffer faults.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/result.h"
#include "emu/exec/exec_context.h"

namespace mtlemu::emu {

enum class OutOfBoundsPolicy : uint8_t { kReport, kFault };

// A page of Apple silicon (sysconf(_SC_PAGESIZE) on an M1, M2 or M3 Mac).
inline constexpr uint64_t kNearBufferBytes = 16384;

// "report" or "fault".
Result<OutOfBoundsPolicy> ParseOutOfBoundsPolicy(std::string_view text);
std::string_view OutOfBoundsPolicyName(OutOfBoundsPolicy policy);

// Where lane `lane`'s access of `size` bytes at `address` (outside every
// region) goes under kReport: the context's scratch bytes (zeros, with the
// bytes that are inside the region copied in for a load) after recording a
// finding, or nullptr when the address is not near a region (the caller
// faults). Only called with ctx.near_buffer set.
uint8_t* NearBufferAccess(ExecContext& ctx, const DecodedInstruction& d,
                          isa::AddressSpace space, uint64_t address,
                          uint32_t size, bool is_write, int lane);

}  // namespace mtlemu::emu
