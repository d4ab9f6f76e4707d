// The Highway handlers must match the scalar reference handlers bit for bit,
// on every SIMD target compiled in and supported by this machine, for every
// (opcode, type) that has a vector version, under full and partial masks.
#include "emu/exec/vector_handlers.h"

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <bit>
#include <limits>
#include <random>
#include <vector>

#include "emu/exec/handlers.h"
#include "isa/opcode.h"

namespace mtlemu::emu {
namespace {

// Values that stress the edges: NaNs, infinities, signed zeros, denormals,
// integer extremes, shift amounts past the width.
uint32_t InterestingValue(std::mt19937& rng) {
  static const uint32_t kSpecial[] = {
      0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
      0xffc00001u, 0x00000001u, 0x807fffffu, 0x3f800000u, 0xbf800000u,
      0x7f7fffffu, 0x7fffffffu, 0xffffffffu, 31u,         32u,
      33u,         0x12345678u};
  if (rng() % 3 == 0) return kSpecial[rng() % std::size(kSpecial)];
  return static_cast<uint32_t>(rng());
}

struct LaneFile {
  std::vector<uint32_t> lanes;
};

LaneFile Execute(Handler handler, const isa::Instruction& inst,
                 const std::vector<uint32_t>& initial, uint32_t mask) {
  LaneFile run{initial};
  ExecContext ctx;
  ctx.slots = run.lanes.data();
  ctx.mask = mask;
  DecodedInstruction d;
  d.inst = &inst;
  d.fn = handler;
  for (int i = 0; i < isa::kMaxOperands; ++i) {
    d.slot[i] = static_cast<uint16_t>(i);
  }
  handler(ctx, d);
  return run;
}

TEST(VectorHandlers, MatchScalarReferenceOnEveryTarget) {
  int checked = 0;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    std::mt19937 rng(1234);
    for (int op_index = 0; op_index < isa::kNumOpcodes; ++op_index) {
      for (int t = 0; t < isa::kNumScalarTypes; ++t) {
        isa::Instruction inst;
        inst.op = static_cast<isa::Opcode>(op_index);
        inst.type = static_cast<isa::ScalarType>(t);
        if (!(inst.info().types & isa::Bit(inst.type))) continue;
        const Handler vector = VectorHandlerFor(inst);
        if (vector == nullptr) continue;
        const Handler scalar = AluHandlerFor(inst);
        ASSERT_NE(scalar, nullptr) << isa::Mnemonic(inst.op);
        for (int trial = 0; trial < 200; ++trial) {
          std::vector<uint32_t> lanes(4 * kLanes);
          for (uint32_t& v : lanes) v = InterestingValue(rng);
          const uint32_t mask =
              trial % 4 == 0 ? kAllLanes : static_cast<uint32_t>(rng());
          const LaneFile want = Execute(scalar, inst, lanes, mask);
          const LaneFile got = Execute(vector, inst, lanes, mask);
          ASSERT_EQ(got.lanes, want.lanes)
              << isa::Mnemonic(inst.op) << "." << isa::IsaSuffix(inst.type)
              << " mask 0x" << std::hex << mask;
        }
        ++checked;
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  EXPECT_GT(checked, 0);
  RecordProperty("instruction_target_pairs_checked", checked);
}

}  // namespace
}  // namespace mtlemu::emu
