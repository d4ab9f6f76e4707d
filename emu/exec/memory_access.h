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
    const uint64_t extended =
        mem.index_signed
            ? static_cast<uint64_t>(static_cast<int64_t>(
                  static_cast<int32_t>(index)))
            : static_cast<uint64_t>(index);
    address += extended * mem.scale;
  }
  address += static_cast<uint64_t>(static_cast<int64_t>(mem.displacement));
  if (!wide_base) address &= 0xffffffffull;  // 32-bit address spaces wrap
  return address;
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
