// Address computation and translation for one lane's access, shared by the
// load/store/atomic handlers and the simdgroup_matrix handlers. Every access
// is bounds-checked; a bad one records a Fault in the context.
#pragma once

#include <cstdint>

#include "emu/exec/exec_context.h"

namespace mtlemu::emu {

// The byte address lane `lane` names with `mem` (64-bit for device and
// constant, a 32-bit offset widened to 64 bits for threadgroup and thread).
inline uint64_t LaneAddress(const ExecContext& ctx, const DecodedMemoryRef& mem,
                            bool wide_base, int lane) {
  uint64_t address = 0;
  if (mem.base != kNoSlot) {
    const uint32_t* base = ctx.Slot(mem.base);
    address = base[lane];
    if (wide_base) address |= static_cast<uint64_t>(base[lane + kLanes]) << 32;
  }
  if (mem.index != kNoSlot) {
    const uint32_t index = ctx.Slot(mem.index)[lane];
    const uint64_t extended = mem.index_signed
                                  ? static_cast<uint64_t>(static_cast<int64_t>(
                                        static_cast<int32_t>(index)))
                                  : static_cast<uint64_t>(index);
    address += extended * mem.scale;
  }
  address += static_cast<uint64_t>(static_cast<int64_t>(mem.displacement));
  if (!wide_base) address &= 0xffffffffull;  // 32-bit address spaces wrap
  return address;
}

// True when the 32 lanes access consecutive elements of `size` bytes
// (lane l at first + l*size); `first` is lane 0's address. The common form,
// one base for all lanes and an index that counts up by lane with scale ==
// size, is checked with plain loops the compiler vectorizes.
inline bool IsContiguous(const ExecContext& ctx, const DecodedMemoryRef& mem,
                         bool wide_base, uint32_t size, uint64_t* first) {
  *first = LaneAddress(ctx, mem, wide_base, 0);
  if (mem.index != kNoSlot && mem.scale == size) {
    const uint32_t* index = ctx.Slot(mem.index);
    uint32_t differ = 0;
    for (int l = 0; l < kLanes; ++l) {
      differ |= index[l] ^ (index[0] + static_cast<uint32_t>(l));
    }
    if (mem.base != kNoSlot) {
      const uint32_t* base = ctx.Slot(mem.base);
      for (int l = 0; l < kLanes; ++l) differ |= base[l] ^ base[0];
      if (wide_base) {
        for (int l = 0; l < kLanes; ++l) {
          differ |= base[kLanes + l] ^ base[kLanes];
        }
      }
    }
    // The index must not wrap (or change sign) within the 32 lanes.
    const uint32_t i0 = index[0];
    const bool no_wrap =
        mem.index_signed ? static_cast<int32_t>(i0) <= INT32_MAX - (kLanes - 1)
                         : i0 <= UINT32_MAX - (kLanes - 1);
    if (differ == 0 && no_wrap) return true;
  }
  for (int l = 1; l < kLanes; ++l) {
    if (LaneAddress(ctx, mem, wide_base, l) != *first + uint64_t{size} * l) {
      return false;
    }
  }
  return true;
}

inline void RecordFault(ExecContext& ctx, FaultKind kind,
                        isa::AddressSpace space, int lane, uint64_t address,
                        uint32_t size, bool is_write) {
  if (ctx.faulted) return;
  ctx.faulted = true;
  ctx.fault->kind = kind;
  ctx.fault->space = space;
  ctx.fault->lane = lane;
  ctx.fault->address = address;
  ctx.fault->size = size;
  ctx.fault->is_write = is_write;
}

// Host pointer for [address, address + size) in `space` as seen by `lane`,
// or nullptr after recording an out-of-bounds fault. `cache` remembers the
// last device region so that lanes of one instruction skip the search.
inline uint8_t* Translate(ExecContext& ctx, isa::AddressSpace space,
                          uint64_t address, uint32_t size, bool is_write,
                          int lane, const MemoryRegion*& cache) {
  switch (space) {
    case isa::AddressSpace::kDevice:
    case isa::AddressSpace::kConstant: {
      const MemoryRegion* r = cache;
      if (r == nullptr || address < r->base || size > r->length ||
          address - r->base > r->length - size) {
        r = ctx.device->Find(address, size);
        if (r == nullptr) break;
        cache = r;
      }
      return r->host + (address - r->base);
    }
    case isa::AddressSpace::kThreadgroup:
      if (address + size <= ctx.threadgroup_memory_size) {
        return ctx.threadgroup_memory + address;
      }
      break;
    case isa::AddressSpace::kThread:
      if (address + size <= ctx.thread_memory_size) {
        return ctx.thread_memory +
               static_cast<uint64_t>(lane) * ctx.thread_memory_size + address;
      }
      break;
    case isa::AddressSpace::kNone:
      break;
  }
  RecordFault(ctx, FaultKind::kOutOfBounds, space, lane, address, size,
              is_write);
  return nullptr;
}

}  // namespace mtlemu::emu
