// The opcode table's Control column against the text form's shapes and
// mnemonics, written out by hand: only br, bnz, bz, exit, trap and the two
// barriers change the flow of control, each in its own way.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "isa/opcode.h"

namespace mtlemu::isa {
namespace {

TEST(OpcodeTable, ControlColumn) {
  const std::map<std::string, Control> expected = {
      {"br", Control::kJump},
      {"bnz", Control::kJumpIfNonZero},
      {"bz", Control::kJumpIfZero},
      {"exit", Control::kExit},
      {"trap", Control::kTrap},
      {"threadgroup_barrier", Control::kThreadgroupBarrier},
      {"simdgroup_barrier", Control::kSimdgroupBarrier}};
  int found = 0;
  for (int i = 0; i < kNumOpcodes; ++i) {
    const auto op = static_cast<Opcode>(i);
    const OpInfo& info = GetOpInfo(op);
    const std::string name(info.mnemonic);
    const auto it = expected.find(name);
    if (it == expected.end()) {
      EXPECT_EQ(info.control, Control::kNone) << name;
      EXPECT_FALSE(IsBranch(op)) << name;
      EXPECT_FALSE(IsTerminator(op)) << name;
      continue;
    }
    ++found;
    EXPECT_EQ(info.control, it->second) << name;
    EXPECT_EQ(IsBranch(op), name == "br" || name == "bnz" || name == "bz")
        << name;
    EXPECT_EQ(IsTerminator(op),
              name == "br" || name == "exit" || name == "trap")
        << name;
  }
  EXPECT_EQ(found, static_cast<int>(expected.size()));
}

// Float multiply is full-rate ALU work; integer multiply is not. FLOPs per
// lane: fma 2, add/sub/mul/div 1, the 8x8x8 multiply-add 32 (1024 over 32
// lanes), nothing else.
TEST(OpcodeTable, FloatUnitAndFlops) {
  const std::map<std::string, int> flops = {
      {"fma", 2}, {"add", 1}, {"sub", 1},
      {"mul", 1}, {"div", 1}, {"simdgroup_multiply_accumulate", 32}};
  for (int i = 0; i < kNumOpcodes; ++i) {
    const OpInfo& info = GetOpInfo(static_cast<Opcode>(i));
    const std::string name(info.mnemonic);
    const auto it = flops.find(name);
    EXPECT_EQ(info.flops, it == flops.end() ? 0 : it->second) << name;
    if (name == "mul") {
      EXPECT_EQ(info.unit, ExecUnit::kMul);
      EXPECT_EQ(info.float_unit, ExecUnit::kAlu);
    } else {
      EXPECT_EQ(info.float_unit, info.unit) << name;
    }
  }
}

// What accesses memory is what takes an address space (ld, st, the
// atomics, simdgroup_load and simdgroup_store), and each runs on the load,
// store or atomic unit: the trace and the timing model classify memory
// accesses by these two columns alone.
TEST(OpcodeTable, MemoryAccessesAndTheirUnits) {
  const std::map<std::string, ExecUnit> memory = {
      {"ld", ExecUnit::kLoad},
      {"st", ExecUnit::kStore},
      {"simdgroup_load", ExecUnit::kLoad},
      {"simdgroup_store", ExecUnit::kStore}};
  int atomics = 0;
  for (int i = 0; i < kNumOpcodes; ++i) {
    const OpInfo& info = GetOpInfo(static_cast<Opcode>(i));
    const std::string name(info.mnemonic);
    const bool atomic = name.rfind("atomic_", 0) == 0;
    atomics += atomic;
    const auto it = memory.find(name);
    EXPECT_EQ(ShapeHasSpace(info.shape), atomic || it != memory.end()) << name;
    if (atomic) {
      EXPECT_EQ(info.unit, ExecUnit::kAtomic) << name;
    }
    if (it != memory.end()) {
      EXPECT_EQ(info.unit, it->second) << name;
    }
  }
  EXPECT_EQ(atomics, 11);
}

}  // namespace
}  // namespace mtlemu::isa
