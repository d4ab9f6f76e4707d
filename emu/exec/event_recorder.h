// Records one issued instruction into a SimdGroupTrace, before the
// instruction runs (so addresses are the ones it uses): the active lanes,
// the lines of device and constant memory it touches, and bank conflicts
// in threadgroup memory, in the chip's TraceGeometry.
#pragma once

#include <algorithm>
#include <bit>

#include "emu/exec/memory_access.h"
#include "emu/exec/simd_trace.h"
#include "isa/opcode.h"

namespace mtlemu::emu {

// `lanes`: the number of lanes in `mask` (the caller keeps it).
inline void RecordEvent(const ExecContext& ctx, const DecodedInstruction& d,
                        uint32_t pc, uint32_t mask, uint32_t lanes,
                        const TraceGeometry& geometry, SimdGroupTrace& trace) {
  const uint32_t line_shift = geometry.line_shift;
  TraceEvent e;
  e.pc = pc;
  e.lanes = static_cast<uint8_t>(lanes);
  const isa::Instruction* inst = d.inst;
  if (inst != nullptr && d.accesses_memory) {
    const isa::OpInfo& info = inst->info();
    const bool matrix = info.shape == isa::OpShape::kMatrixLoad ||
                        info.shape == isa::OpShape::kMatrixStore;
    const bool wide = isa::IsWideAddressSpace(inst->space);
    const uint32_t size = static_cast<uint32_t>(isa::SizeOf(inst->type)) *
                          std::max<uint32_t>(1, inst->vector);
    if (wide) {
      const size_t line_begin = trace.lines.size();
      // The lanes' addresses, when gathered lane by lane (not for a
      // matrix or a contiguous access, whose addresses are all distinct).
      uint64_t addresses[kLanes];
      int n = 0;
      bool in_order = false;  // lines pushed ascending and distinct
      if (matrix) {
        // An 8x8 block: 8 rows of 8 elements, `stride` elements apart.
        const int lane = std::countr_zero(mask);
        const uint64_t base = LaneAddress(ctx, d.mem, true, lane);
        const uint64_t stride = ctx.Slot(d.slot[2])[lane];
        for (uint64_t r = 0; r < 8; ++r) {
          const uint64_t a = base + r * stride * size;
          for (uint64_t l = a >> line_shift;
               l <= (a + 8 * size - 1) >> line_shift; ++l) {
            trace.lines.push_back(l);
          }
        }
      } else if (uint64_t first = 0;
                 mask == kAllLanes &&
                 IsContiguous(ctx, d.mem, true, size, &first)) {
        // The common case: 32 consecutive elements.
        for (uint64_t l = first >> line_shift;
             l <= (first + uint64_t{kLanes} * size - 1) >> line_shift; ++l) {
          trace.lines.push_back(l);
        }
        in_order = true;
      } else {
        // Neighbouring lanes mostly share a line: it is pushed once.
        uint64_t last = ~uint64_t{0};
        for (uint32_t m = mask; m != 0; m &= m - 1) {
          const uint64_t a = LaneAddress(ctx, d.mem, true, std::countr_zero(m));
          addresses[n++] = a;
          const uint64_t low = a >> line_shift,
                         high = (a + size - 1) >> line_shift;
          if (low != last) trace.lines.push_back(low);
          if (high != low) trace.lines.push_back(high);
          last = high;
        }
      }
      if (!in_order) {
        auto first = trace.lines.begin() + line_begin;
        std::sort(first, trace.lines.end());
        trace.lines.erase(std::unique(first, trace.lines.end()),
                          trace.lines.end());
      }
      e.line_count = static_cast<uint16_t>(trace.lines.size() - line_begin);
      if (info.unit == isa::ExecUnit::kAtomic && n > 0) {
        // Lanes on the busiest address serialize.
        std::sort(addresses, addresses + n);
        int best = 1, run = 1;
        for (int i = 1; i < n; ++i) {
          run = addresses[i] == addresses[i - 1] ? run + 1 : 1;
          best = std::max(best, run);
        }
        e.conflict = static_cast<uint8_t>(best);
      }
    } else if (inst->space == isa::AddressSpace::kThreadgroup && !matrix) {
      // Distinct 4-byte words per bank; the same word is a broadcast. A
      // wider access (a vector, 64-bit) touches each of its words, so 32
      // lanes of consecutive float4 take 4 bank cycles, as 128 words do.
      const uint32_t per_lane = std::max<uint32_t>(1, size / 4);
      uint32_t words[kLanes * 4];
      int n = 0;
      for (uint32_t m = mask; m != 0; m &= m - 1) {
        const uint32_t first = static_cast<uint32_t>(
            LaneAddress(ctx, d.mem, false, std::countr_zero(m)) >> 2);
        for (uint32_t k = 0; k < std::min<uint32_t>(per_lane, 4); ++k) {
          words[n++] = first + k;
        }
      }
      // Most accesses give each bank one word at most (consecutive words,
      // a broadcast, a row read by both halves): one pass finds that; the
      // sort counts the others.
      static_assert(TraceGeometry::kMaxBanks <= 64);
      uint32_t bank_word[TraceGeometry::kMaxBanks];
      uint64_t banks_used = 0;
      bool one_word_each = true;
      for (int i = 0; i < n && one_word_each; ++i) {
        const uint32_t bank = words[i] % geometry.threadgroup_banks;
        const uint64_t bit = uint64_t{1} << bank;
        if ((banks_used & bit) == 0) {
          banks_used |= bit;
          bank_word[bank] = words[i];
        } else {
          one_word_each = bank_word[bank] == words[i];
        }
      }
      uint32_t busiest = 1;
      if (!one_word_each) {
        std::sort(words, words + n);
        n = static_cast<int>(std::unique(words, words + n) - words);
        uint32_t per_bank[TraceGeometry::kMaxBanks] = {};
        for (int i = 0; i < n; ++i) {
          busiest = std::max(busiest,
                             ++per_bank[words[i] % geometry.threadgroup_banks]);
        }
      }
      // Wider than 16 bytes per lane (a 4-vector of 64-bit): the words
      // past the fourth repeat the pattern of the first four.
      busiest *= std::max<uint32_t>(1, per_lane / 4);
      e.conflict = static_cast<uint8_t>(std::min<uint32_t>(255, busiest));
    }
  }
  trace.Append(e);
}

}  // namespace mtlemu::emu
