// Address computation and translation for one lane's access, shared by the
// load/store/atomic handlers and the simdgroup_matrix handlers. Every access
// is bounds-checked; a bad one records a Fault in the context.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

#include "emu/exec/exec_context.h"
#include "emu/exec/near_buffer.h"

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

// The byte addresses of all 32 lanes (inactive ones too: callers use only
// the active lanes'), as LaneAddress computes them one at a time, in loops
// the compiler vectorizes. A is uint64_t for the 64-bit address spaces and
// uint32_t for threadgroup and thread memory, whose addresses wrap at 32
// bits (there, the index's sign does not change the sum modulo 2^32).
template <typename A>
inline void LaneAddresses(const ExecContext& ctx, const DecodedMemoryRef& mem,
                          A* out) {
  constexpr bool kWide = sizeof(A) == 8;
  const auto displacement =
      static_cast<A>(static_cast<int64_t>(mem.displacement));
  for (int l = 0; l < kLanes; ++l) out[l] = displacement;
  if (mem.base != kNoSlot) {
    const uint32_t* base = ctx.Slot(mem.base);
    if constexpr (kWide) {
      for (int l = 0; l < kLanes; ++l) {
        out[l] += base[l] | (static_cast<uint64_t>(base[l + kLanes]) << 32);
      }
    } else {
      for (int l = 0; l < kLanes; ++l) out[l] += base[l];
    }
  }
  if (mem.index != kNoSlot) {
    const uint32_t* index = ctx.Slot(mem.index);
    const A scale = mem.scale;
    if (kWide && mem.index_signed) {
      for (int l = 0; l < kLanes; ++l) {
        out[l] += static_cast<A>(
                      static_cast<int64_t>(static_cast<int32_t>(index[l]))) *
                  scale;
      }
    } else {
      for (int l = 0; l < kLanes; ++l) out[l] += index[l] * scale;
    }
  }
}

// True when lane l's address is address[0] + l * size for every lane.
template <typename A>
inline bool AreConsecutive(const A* address, uint32_t size) {
  A differ = 0;
  for (int l = 0; l < kLanes; ++l) {
    differ |= address[l] ^ static_cast<A>(address[0] + A{size} * l);
  }
  return differ == 0;
}

// True when the registers say that the 32 lanes access consecutive
// elements of `size` bytes without computing the addresses: the common form,
// one base for all lanes and an index that counts up by lane with scale ==
// size. False says nothing (the addresses may still be consecutive).
inline bool HasConsecutiveIndex(const ExecContext& ctx,
                                const DecodedMemoryRef& mem, bool wide_base,
                                uint32_t size) {
  if (mem.index == kNoSlot || mem.scale != size) return false;
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
  return differ == 0 && no_wrap;
}

// True when the 32 lanes access consecutive elements of `size` bytes
// (lane l at first + l*size); `first` is lane 0's address.
inline bool IsContiguous(const ExecContext& ctx, const DecodedMemoryRef& mem,
                         bool wide_base, uint32_t size, uint64_t* first) {
  if (HasConsecutiveIndex(ctx, mem, wide_base, size)) {
    *first = LaneAddress(ctx, mem, wide_base, 0);
    return true;
  }
  if (wide_base) {
    uint64_t address[kLanes];
    LaneAddresses(ctx, mem, address);
    *first = address[0];
    return AreConsecutive(address, size);
  }
  uint32_t address[kLanes];
  LaneAddresses(ctx, mem, address);
  *first = address[0];
  return AreConsecutive(address, size);
}

// The host address of [address, address + length) when one device region
// holds all of it, else null.
inline uint8_t* DeviceHost(const ExecContext& ctx, uint64_t address,
                           uint64_t length) {
  const MemoryRegion* r = ctx.device->Find(address, length);
  return r == nullptr ? nullptr : r->host + (address - r->base);
}

// Where the active lanes of one instruction access memory when all of them
// fall in one place: lane l's bytes are at
//   host + (address[l] - lowest) + l * lane_stride
// (lane_stride is a lane's thread memory for the thread space, else 0).
template <typename A>
struct LaneSpan {
  uint8_t* host = nullptr;  // nullptr: not in one place (or out of bounds)
  A lowest = 0;
  uint32_t lane_stride = 0;

  uint8_t* At(const A* address, int lane) const {
    return host + (address[lane] - lowest) + size_t{lane_stride} * lane;
  }
};

// The span of the active lanes' accesses of `size` bytes at `address`: one
// device region, or inside threadgroup memory, or inside each lane's thread
// memory. Records no fault: where the span is not in one place the caller
// goes lane by lane (and finds the first lane out of bounds, if any).
template <typename A>
inline LaneSpan<A> SpanOf(const ExecContext& ctx, isa::AddressSpace space,
                          const A* address, uint32_t mask, uint32_t size) {
  A lowest = std::numeric_limits<A>::max(), highest = 0;
  if (mask == kAllLanes) {
    for (int l = 0; l < kLanes; ++l) {
      lowest = std::min(lowest, address[l]);
      highest = std::max(highest, address[l]);
    }
  } else {
    for (uint32_t m = mask; m != 0; m &= m - 1) {
      const A a = address[std::countr_zero(m)];
      lowest = std::min(lowest, a);
      highest = std::max(highest, a);
    }
  }
  LaneSpan<A> span;
  span.lowest = lowest;
  const uint64_t end = uint64_t{highest} + size;  // (no wrap for 32 bits)
  if (end < highest) return span;
  switch (space) {
    case isa::AddressSpace::kDevice:
    case isa::AddressSpace::kConstant:
      span.host = DeviceHost(ctx, lowest, end - lowest);
      break;
    case isa::AddressSpace::kThreadgroup:
      if (end <= ctx.threadgroup_memory_size) {
        span.host = ctx.threadgroup_memory + lowest;
      }
      break;
    case isa::AddressSpace::kThread:
      if (end <= ctx.thread_memory_size) {
        span.host = ctx.thread_memory + lowest;
        span.lane_stride = ctx.thread_memory_size;
      }
      break;
    case isa::AddressSpace::kNone:
      break;
  }
  return span;
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

// Host pointer for [address, address + size) in `space` as seen by `lane`
// of instruction `d`, or nullptr after recording an out-of-bounds fault; a
// device access just outside a buffer goes to NearBufferAccess when the
// policy says so. `cache` remembers the last device region so that lanes of
// one instruction skip the search.
inline uint8_t* Translate(ExecContext& ctx, const DecodedInstruction& d,
                          isa::AddressSpace space, uint64_t address,
                          uint32_t size, bool is_write, int lane,
                          const MemoryRegion*& cache) {
  switch (space) {
    case isa::AddressSpace::kDevice:
    case isa::AddressSpace::kConstant: {
      const MemoryRegion* r = cache;
      if (r == nullptr || address < r->base || size > r->length ||
          address - r->base > r->length - size) {
        r = ctx.device->Find(address, size);
        if (r == nullptr) {
          if (ctx.near_buffer != nullptr) [[unlikely]] {
            uint8_t* near =
                NearBufferAccess(ctx, d, space, address, size, is_write, lane);
            if (near != nullptr) return near;
          }
          break;
        }
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
