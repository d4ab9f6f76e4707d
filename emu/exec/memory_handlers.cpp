// ld, st and the atomics. Loads and stores move raw bytes between memory and
// registers (narrow integers are extended as their type says, half/bfloat
// bits land in the low 16 bits); a contiguous, fully active access takes
// one translation (and a 32-bit one a single copy).
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <mutex>

#include "emu/check/kernel_checker.h"
#include "emu/exec/handlers.h"
#include "emu/exec/lane_loop.h"
#include "emu/exec/memory_access.h"
#include "emu/exec/opcode_traits.h"
#include "emu/exec/streamed_stores.h"

namespace mtlemu::emu {
namespace {

using isa::AddressSpace;
using isa::Opcode;
using isa::ScalarType;

// Register <-> memory for one element of `kSize` bytes.
template <int kSize, bool kSignExtend>
void ElementToRegisters(const uint8_t* src, uint32_t* lo, int lane) {
  if constexpr (kSize == 8) {
    uint64_t v;
    std::memcpy(&v, src, 8);
    lo[lane] = static_cast<uint32_t>(v);
    lo[lane + kLanes] = static_cast<uint32_t>(v >> 32);
  } else if constexpr (kSize == 4) {
    std::memcpy(&lo[lane], src, 4);
  } else if constexpr (kSize == 2) {
    uint16_t v;
    std::memcpy(&v, src, 2);
    lo[lane] = kSignExtend ? static_cast<uint32_t>(static_cast<int16_t>(v)) : v;
  } else {
    const uint8_t v = *src;
    lo[lane] = kSignExtend ? static_cast<uint32_t>(static_cast<int8_t>(v)) : v;
  }
}

template <int kSize>
void RegistersToElement(const uint32_t* lo, int lane, uint8_t* dst) {
  if constexpr (kSize == 8) {
    const uint64_t v = static_cast<uint64_t>(lo[lane]) |
                       (static_cast<uint64_t>(lo[lane + kLanes]) << 32);
    std::memcpy(dst, &v, 8);
  } else {
    const uint32_t v = lo[lane];
    std::memcpy(dst, &v, kSize);  // little-endian: the low bytes
  }
}

// How one instruction's lanes reach memory, found once: either every lane
// at consecutive addresses in one place (`contiguous`, the block from lane
// 0's), or all active lanes in one place (`span`), or neither (lane by
// lane, which also finds the first lane out of bounds). A: the address
// width, as in LaneAddresses.
template <typename A>
struct Placement {
  A address[kLanes];
  bool contiguous = false;
  LaneSpan<A> span;
};

template <typename A>
void Place(const ExecContext& ctx, const DecodedInstruction& d, uint32_t bytes,
           Placement<A>& p) {
  const bool whole =
      ctx.mask == kAllLanes && d.mem.space != AddressSpace::kThread;
  if (whole && HasConsecutiveIndex(ctx, d.mem, sizeof(A) == 8, bytes)) {
    // Lane 0's address is enough, unless the block is out of bounds.
    p.address[0] = static_cast<A>(LaneAddress(ctx, d.mem, sizeof(A) == 8, 0));
    p.span = SpanOf(ctx, d.mem.space, p.address, 1u, bytes * kLanes);
    p.contiguous = true;
    if (p.span.host != nullptr) return;
  }
  LaneAddresses(ctx, d.mem, p.address);
  p.contiguous = whole && AreConsecutive(p.address, bytes);
  p.span = p.contiguous
               ? SpanOf(ctx, d.mem.space, p.address, 1u, bytes * kLanes)
               : SpanOf(ctx, d.mem.space, p.address, ctx.mask, bytes);
}

template <int kSize, bool kSignExtend, typename A>
void LoadAt(ExecContext& ctx, const DecodedInstruction& d) {
  const int vector = d.mem.vector;
  uint32_t* dst = ctx.Slot(d.slot[0]);
  const uint32_t bytes = static_cast<uint32_t>(kSize * vector);
  const auto to_registers = [&](const uint8_t* src, int l) {
    for (int e = 0; e < vector; ++e) {
      ElementToRegisters<kSize, kSignExtend>(
          src + e * kSize, dst + e * d.mem.regs_per_element * kLanes, l);
    }
  };
  Placement<A> p;
  Place(ctx, d, bytes, p);
  if (p.span.host != nullptr && p.contiguous) {
    // A float per thread, or a float4: one block; one copy when the
    // registers hold the bytes as they are.
    const uint8_t* src = p.span.host;
    if (ctx.memory_checker != nullptr) [[unlikely]] {
      ctx.memory_checker->ContiguousAccess(d, d.mem.space, p.address[0], bytes,
                                           AccessType::kRead, nullptr);
    }
    if (kSize == 4 && vector == 1) {
      std::memcpy(dst, src, 4 * kLanes);
    } else {
      for (int l = 0; l < kLanes; ++l) to_registers(src + l * bytes, l);
    }
    return;
  }
  if (p.span.host != nullptr) {
    // A gather (a row of a threadgroup tile, a table): lane by lane from
    // one place, with no bounds to check.
    if (ctx.memory_checker != nullptr) [[unlikely]] {
      ctx.memory_checker->LaneAccesses(d, d.mem.space, ctx.mask, p.address,
                                       bytes, AccessType::kRead);
    }
    ForEachActiveLane(ctx.mask,
                      [&](int l) { to_registers(p.span.At(p.address, l), l); });
    return;
  }
  const MemoryRegion* cache = nullptr;
  ForEachActiveLane(ctx.mask, [&](int l) {
    if (ctx.faulted) return;
    const uint8_t* src =
        Translate(ctx, d, d.mem.space, p.address[l], bytes, false, l, cache);
    if (src == nullptr) return;
    if (ctx.memory_checker != nullptr) [[unlikely]] {
      ctx.memory_checker->MemoryAccess(d, d.mem.space, l, p.address[l], bytes,
                                       AccessType::kRead);
    }
    to_registers(src, l);
  });
}

template <int kSize, bool kSignExtend>
void Load(ExecContext& ctx, const DecodedInstruction& d) {
  if (d.mem.wide_base) {
    LoadAt<kSize, kSignExtend, uint64_t>(ctx, d);
  } else {
    LoadAt<kSize, kSignExtend, uint32_t>(ctx, d);
  }
}

template <int kSize, typename A>
void StoreAt(ExecContext& ctx, const DecodedInstruction& d) {
  const int vector = d.mem.vector;
  const uint32_t* src = ctx.Slot(d.slot[1]);
  const uint32_t bytes = static_cast<uint32_t>(kSize * vector);
  const auto from_registers = [&](int l, uint8_t* to) {
    for (int e = 0; e < vector; ++e) {
      RegistersToElement<kSize>(src + e * d.mem.regs_per_element * kLanes, l,
                                to + e * kSize);
    }
  };
  Placement<A> p;
  Place(ctx, d, bytes, p);
  if (p.span.host != nullptr && p.contiguous) {
    uint8_t* dst = p.span.host;
    if (kSize == 4 && vector == 1) {
      std::memcpy(dst, src, 4 * kLanes);
    } else {
      for (int l = 0; l < kLanes; ++l) from_registers(l, dst + l * bytes);
    }
    if (ctx.memory_checker != nullptr) [[unlikely]] {
      ctx.memory_checker->ContiguousAccess(d, d.mem.space, p.address[0], bytes,
                                           AccessType::kWrite, dst);
    }
    return;
  }
  // Lanes store in lane order: where two write the same bytes, the higher
  // lane's value stays.
  if (p.span.host != nullptr) {
    // Device lanes are told one by one, each with the bytes it stored
    // (a later lane may store over them).
    const bool told = ctx.memory_checker != nullptr &&
                      d.mem.space == AddressSpace::kThreadgroup;
    if (told) [[unlikely]] {
      ctx.memory_checker->LaneAccesses(d, d.mem.space, ctx.mask, p.address,
                                       bytes, AccessType::kWrite);
    }
    ForEachActiveLane(ctx.mask, [&](int l) {
      uint8_t* dst = p.span.At(p.address, l);
      from_registers(l, dst);
      if (ctx.memory_checker != nullptr && !told) [[unlikely]] {
        ctx.memory_checker->MemoryAccess(d, d.mem.space, l, p.address[l], bytes,
                                         AccessType::kWrite, dst);
      }
    });
    return;
  }
  const MemoryRegion* cache = nullptr;
  ForEachActiveLane(ctx.mask, [&](int l) {
    if (ctx.faulted) return;
    uint8_t* dst =
        Translate(ctx, d, d.mem.space, p.address[l], bytes, true, l, cache);
    if (dst == nullptr) return;
    from_registers(l, dst);
    if (ctx.memory_checker != nullptr) [[unlikely]] {
      ctx.memory_checker->MemoryAccess(d, d.mem.space, l, p.address[l], bytes,
                                       AccessType::kWrite, dst);
    }
  });
}

template <int kSize>
void Store(ExecContext& ctx, const DecodedInstruction& d) {
  if (d.mem.wide_base) {
    StoreAt<kSize, uint64_t>(ctx, d);
  } else {
    StoreAt<kSize, uint32_t>(ctx, d);
  }
}

// --- atomics
// -------------------------------------------------------------------

// Every atomic is sequentially consistent, whatever order the kernel asked
// for: Metal's memory_order_relaxed, and Triton's acquire, release and
// acq_rel, all get at least the order they asked for. A lock made of an
// atomic compare-exchange, plain loads and stores and an atomic exchange
// then protects its data across the host threads that run threadgroups
// (the plain accesses of one thread are in program order in its host
// thread, and the atomics synchronise the host threads).
constexpr auto kAtomicOrder = std::memory_order_seq_cst;

template <Opcode op, typename T>
T AtomicApply(std::atomic_ref<T> ref, T v, T desired) {
  constexpr auto kOrder = kAtomicOrder;
  if constexpr (op == Opcode::kAtomicLoad) {
    return ref.load(kOrder);
  } else if constexpr (op == Opcode::kAtomicStore) {
    ref.store(v, kOrder);
    return v;
  } else if constexpr (op == Opcode::kAtomicXchg) {
    return ref.exchange(v, kOrder);
  } else if constexpr (op == Opcode::kAtomicCmpXchg) {
    T expected = v;
    ref.compare_exchange_strong(expected, desired, kOrder);
    return expected;  // the old value, whether or not it matched
  } else if constexpr (op == Opcode::kAtomicAdd) {
    return ref.fetch_add(v, kOrder);
  } else if constexpr (op == Opcode::kAtomicSub) {
    return ref.fetch_sub(v, kOrder);
  } else if constexpr (op == Opcode::kAtomicAnd) {
    return ref.fetch_and(v, kOrder);
  } else if constexpr (op == Opcode::kAtomicOr) {
    return ref.fetch_or(v, kOrder);
  } else if constexpr (op == Opcode::kAtomicXor) {
    return ref.fetch_xor(v, kOrder);
  } else {
    static_assert(op == Opcode::kAtomicMin || op == Opcode::kAtomicMax);
    T old = ref.load(kOrder);
    while (true) {
      const T next =
          op == Opcode::kAtomicMin ? (v < old ? v : old) : (v > old ? v : old);
      if (next == old || ref.compare_exchange_weak(old, next, kOrder)) break;
    }
    return old;
  }
}

// float add/sub: a compare-exchange loop on the bits, as Apple7 does.
template <Opcode op>
uint32_t AtomicFloat(std::atomic_ref<uint32_t> ref, uint32_t v_bits) {
  if constexpr (op == Opcode::kAtomicAdd || op == Opcode::kAtomicSub) {
    const float v = std::bit_cast<float>(v_bits);
    uint32_t old = ref.load(kAtomicOrder);
    while (true) {
      const float f = std::bit_cast<float>(old);
      const float next = op == Opcode::kAtomicAdd ? f + v : f - v;
      if (ref.compare_exchange_weak(old, std::bit_cast<uint32_t>(next),
                                    kAtomicOrder)) {
        return old;
      }
    }
  } else {
    return AtomicApply<op, uint32_t>(ref, v_bits, 0);
  }
}

// The C++ type an atomic of ISA type T works on.
template <ScalarType T>
using AtomicWord = std::conditional_t<
    T == ScalarType::kInt, int32_t,
    std::conditional_t<
        T == ScalarType::kLong, int64_t,
        std::conditional_t<T == ScalarType::kULong, uint64_t, uint32_t>>>;

// Where an atomic of `bytes` at `address` works, or nullptr after recording
// the fault; `in_bounds` receives how many of its bytes lie in the buffer.
// A 32-bit device atomic may reach past the end of a buffer whose length is
// not a multiple of 4 into the rest of its last word, as on a GPU (a Metal
// buffer is whole pages): a compare-and-swap loop on the word that holds a
// 16-bit element (Triton's fp16 and bf16 atomics) reaches there for a
// buffer's last element. The host bytes past the buffer may belong to
// someone else (a NumPy array's allocation ends where its data does), so
// such an atomic never touches them: see TailAtomic.
uint8_t* AtomicTarget(ExecContext& ctx, const DecodedInstruction& d,
                      AddressSpace space, uint64_t address, uint32_t bytes,
                      bool writes, int lane, const MemoryRegion*& cache,
                      uint32_t& in_bounds) {
  in_bounds = bytes;
  if (bytes == 4 && space == AddressSpace::kDevice && address % 4 == 0) {
    const MemoryRegion* r = cache;
    if (r == nullptr || address < r->base || address - r->base >= r->length) {
      r = ctx.device->Find(address, 1);
    }
    if (r != nullptr) {
      const uint64_t offset = address - r->base;
      const uint64_t word_end = (r->length + 3) & ~uint64_t{3};
      if (offset + bytes <= word_end) {
        cache = r;
        in_bounds = static_cast<uint32_t>(
            std::min<uint64_t>(bytes, r->length - offset));
        return r->host + offset;
      }
    }
  }
  return Translate(ctx, d, space, address, bytes, writes, lane, cache);
}

// Applies `apply` (an operation on a std::atomic_ref<W>) to the word at
// `p` of which only the first `in_bounds` bytes are the buffer's: it works
// on a copy in which the bytes past the buffer read as zero, as a GPU's
// fresh page would, and writes back only the buffer's bytes. Every atomic
// that reaches the same tail takes this path, so one lock makes them atomic
// with each other; such tails are rare (a buffer's last few bytes).
// (One lock for every operation and type: a load's copy written back under
// another lock than a compare-and-swap's would undo the swap.)
std::mutex tail_lock;

template <typename W, typename Apply>
auto TailAtomic(uint8_t* p, uint32_t in_bounds, Apply apply) {
  std::lock_guard<std::mutex> hold(tail_lock);
  W word = 0;
  std::memcpy(&word, p, in_bounds);
  const auto old = apply(std::atomic_ref<W>(word));
  std::memcpy(p, &word, in_bounds);
  return old;
}

template <Opcode op, ScalarType T>
void Atomic(ExecContext& ctx, const DecodedInstruction& d) {
  using W = AtomicWord<T>;
  using U = std::make_unsigned_t<W>;
  constexpr uint32_t kBytes = sizeof(W);
  // What this thread streamed before is visible before the atomic is.
  FenceStreamedStores(ctx);
  const isa::OpShape shape = opcode_traits::ShapeOf(op);
  const bool has_dst = shape != isa::OpShape::kAtomicStore;
  const int mem_pos = has_dst ? 1 : 0;
  uint32_t* dst = has_dst ? ctx.Slot(d.slot[0]) : nullptr;
  const uint32_t* value = shape == isa::OpShape::kAtomicLoad
                              ? nullptr
                              : ctx.Slot(d.slot[mem_pos + 1]);
  const uint32_t* desired = shape == isa::OpShape::kAtomicCas
                                ? ctx.Slot(d.slot[mem_pos + 2])
                                : nullptr;
  // A 64-bit value is a register pair: the high halves follow the low ones.
  const auto read = [](const uint32_t* r, int l) -> U {
    if constexpr (kBytes == 8) {
      return static_cast<U>(r[l]) | (static_cast<U>(r[l + kLanes]) << 32);
    } else {
      return r[l];
    }
  };
  const MemoryRegion* cache = nullptr;
  const bool writes = op != Opcode::kAtomicLoad;
  // Lanes apply their operations in lane order.
  ForEachActiveLane(ctx.mask, [&](int l) {
    if (ctx.faulted) return;
    const uint64_t address = LaneAddress(ctx, d.mem, d.mem.wide_base, l);
    uint32_t in_bounds;
    uint8_t* p = AtomicTarget(ctx, d, d.mem.space, address, kBytes, writes, l,
                              cache, in_bounds);
    if (p == nullptr) return;
    if (reinterpret_cast<uintptr_t>(p) % kBytes != 0) {
      RecordFault(ctx, FaultKind::kMisalignedAtomic, d.mem.space, l, address,
                  kBytes, writes);
      return;
    }
    if (ctx.memory_checker != nullptr) [[unlikely]] {
      ctx.memory_checker->MemoryAccess(
          d, d.mem.space, l, address, in_bounds,
          op == Opcode::kAtomicLoad    ? AccessType::kAtomicRead
          : op == Opcode::kAtomicStore ? AccessType::kAtomicWrite
                                       : AccessType::kAtomicUpdate);
    }
    const U v = value ? read(value, l) : 0;
    const U w = desired ? read(desired, l) : 0;
    using Word = std::conditional_t<T == ScalarType::kFloat, uint32_t, W>;
    const auto apply = [&](std::atomic_ref<Word> ref) -> U {
      if constexpr (T == ScalarType::kFloat) {
        return AtomicFloat<op>(ref, v);
      } else {
        return static_cast<U>(
            AtomicApply<op, W>(ref, static_cast<W>(v), static_cast<W>(w)));
      }
    };
    const U old =
        in_bounds < kBytes
            ? TailAtomic<Word>(p, in_bounds, apply)
            : apply(std::atomic_ref<Word>(*reinterpret_cast<Word*>(p)));
    if (dst) {
      dst[l] = static_cast<uint32_t>(old);
      if constexpr (kBytes == 8) {
        dst[l + kLanes] = static_cast<uint32_t>(old >> 32);
      }
    }
  });
}

template <Opcode op>
Handler ForAtomic(ScalarType t) {
  switch (t) {
    case ScalarType::kInt:
      return &Atomic<op, ScalarType::kInt>;
    case ScalarType::kUInt:
      return &Atomic<op, ScalarType::kUInt>;
    case ScalarType::kLong:
      return &Atomic<op, ScalarType::kLong>;
    case ScalarType::kULong:
      return &Atomic<op, ScalarType::kULong>;
    case ScalarType::kFloat:
      if constexpr (opcode_traits::Accepts(op, ScalarType::kFloat)) {
        return &Atomic<op, ScalarType::kFloat>;
      }
      return nullptr;
    default:
      return nullptr;
  }
}

Handler ForLoad(ScalarType t) {
  switch (isa::SizeOf(t)) {
    case 1:
      return isa::IsSigned(t) ? &Load<1, true> : &Load<1, false>;
    case 2:
      return isa::IsSigned(t) ? &Load<2, true> : &Load<2, false>;
    case 4:
      return &Load<4, false>;
    default:
      return &Load<8, false>;
  }
}

Handler ForStore(ScalarType t) {
  switch (isa::SizeOf(t)) {
    case 1:
      return &Store<1>;
    case 2:
      return &Store<2>;
    case 4:
      return &Store<4>;
    default:
      return &Store<8>;
  }
}

}  // namespace

Handler MemoryHandlerFor(const isa::Instruction& inst) {
  switch (inst.op) {
    case Opcode::kLoad:
      return ForLoad(inst.type);
    case Opcode::kStore:
      return ForStore(inst.type);
    case Opcode::kAtomicLoad:
      return ForAtomic<Opcode::kAtomicLoad>(inst.type);
    case Opcode::kAtomicStore:
      return ForAtomic<Opcode::kAtomicStore>(inst.type);
    case Opcode::kAtomicXchg:
      return ForAtomic<Opcode::kAtomicXchg>(inst.type);
    case Opcode::kAtomicCmpXchg:
      return ForAtomic<Opcode::kAtomicCmpXchg>(inst.type);
    case Opcode::kAtomicAdd:
      return ForAtomic<Opcode::kAtomicAdd>(inst.type);
    case Opcode::kAtomicSub:
      return ForAtomic<Opcode::kAtomicSub>(inst.type);
    case Opcode::kAtomicMin:
      return ForAtomic<Opcode::kAtomicMin>(inst.type);
    case Opcode::kAtomicMax:
      return ForAtomic<Opcode::kAtomicMax>(inst.type);
    case Opcode::kAtomicAnd:
      return ForAtomic<Opcode::kAtomicAnd>(inst.type);
    case Opcode::kAtomicOr:
      return ForAtomic<Opcode::kAtomicOr>(inst.type);
    case Opcode::kAtomicXor:
      return ForAtomic<Opcode::kAtomicXor>(inst.type);
    default:
      return nullptr;
  }
}

}  // namespace mtlemu::emu
