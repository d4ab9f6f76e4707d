// Registers in use (emu/timing/registers_in_use.h): the registers live at
// each instruction of hand-written kernels, counted by hand, and their mean
// over hand-made traces.
#include "emu/timing/registers_in_use.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emu/timing/instruction_timing.h"
#include "isa/assembler.h"

namespace mtlemu::emu {
namespace {

isa::Kernel AssembleKernel(const std::string& text) {
  isa::AssembleResult a = isa::Assemble(text, "live.s");
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.diagnostics[0].message);
  EXPECT_EQ(a.module.kernels.size(), 1u);
  return a.ok() ? a.module.kernels[0] : isa::Kernel{};
}

std::vector<uint16_t> Live(const std::string& text) {
  const isa::Kernel k = AssembleKernel(text);
  return LiveRegisters(k, InstructionTimings(k));
}

// r7 lives only on the odd path; each side writes r2 for the join.
constexpr char kBranches[] = R"(
.kernel branches
.buffer 0 u0 device uint out
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r7, 5
    and.u32 r1, r0, 1
    bnz r1, odd, join
    mov.u32 r2, 1
    br join
odd:
    add.u32 r2, r7, r0
join:
    st.device.u32 [u0 + r0*4], r2
    exit
.end
)";

TEST(LiveRegisters, BranchesJoin) {
  // pc: live in | written -> held
  // 0 mov r0      {}         | r0 -> 1
  // 1 mov r7      {r0}       | r7 -> 2
  // 2 and r1      {r0,r7}    | r1 -> 3
  // 3 bnz r1      {r0,r1,r7}      -> 3 (out: {r0} of pc 4, {r0,r7} of 6)
  // 4 mov r2      {r0}       | r2 -> 2 (r7 is dead on this path)
  // 5 br          {r0,r2}         -> 2
  // 6 add r2      {r0,r7}    | r2 -> 3
  // 7 st          {r0,r2}         -> 2
  // 8 exit        {}              -> 0
  EXPECT_EQ(Live(kBranches),
            (std::vector<uint16_t>{1, 2, 3, 3, 2, 2, 3, 2, 0}));
}

// The sum stays live around the loop; a 64-bit value takes a pair.
constexpr char kLoop[] = R"(
.kernel loop
.buffer 0 u0 device ulong out
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r1, 0
    mov.u32 r5, 8
loop:
    add.u32 r1, r1, r0
    sub.u32 r5, r5, 1
    bnz r5, loop, done
done:
    cvt.u64.u32 r2, r1
    st.device.u64 [u0 + r0*8], r2
    exit
.end
)";

TEST(LiveRegisters, LoopAndPair) {
  // 0 mov r0   {}          | r0    -> 1
  // 1 mov r1   {r0}        | r1    -> 2
  // 2 mov r5   {r0,r1}     | r5    -> 3
  // 3 add r1   {r0,r1,r5}  | r1    -> 3 (the back edge keeps all three)
  // 4 sub r5   {r0,r1,r5}  | r5    -> 3
  // 5 bnz r5   {r0,r1,r5}          -> 3
  // 6 cvt r2   {r0,r1}     | r2,r3 -> 4
  // 7 st       {r0,r2,r3}          -> 3
  // 8 exit     {}                  -> 0
  EXPECT_EQ(Live(kLoop), (std::vector<uint16_t>{1, 2, 3, 3, 3, 3, 4, 3, 0}));
}

TEST(LiveRegisters, ARegisterReadBeforeAnyWriteIsLiveFromTheStart) {
  // r3 is never written: registers start at zero, so it is held throughout
  // until its read.
  constexpr char kUninitialized[] = R"(
.kernel uninitialized
.buffer 0 u0 device uint out
    mov.u32 r0, %thread_position_in_grid.x
    st.device.u32 [u0 + r0*4], r3
    exit
.end
)";
  EXPECT_EQ(Live(kUninitialized), (std::vector<uint16_t>{2, 2, 0}));
}

SimdGroupTrace Trace(std::vector<TraceRecord> records) {
  SimdGroupTrace t;
  for (const TraceRecord& r : records) t.instructions += r.run ? r.count : 1;
  t.records = std::move(records);
  return t;
}

TEST(MeanRegistersInUse, WeighsEachIssuedInstruction) {
  const std::vector<uint16_t> live = {1, 2, 3, 3, 2, 2, 3, 2, 0};
  ThreadgroupTrace tg;
  // pcs 0-3 as a run, then 6 and 7 one at a time (one with lines):
  // 1+2+3+3 + 3 + 2 = 14 over 6 instructions.
  tg.simd_groups.push_back(
      Trace({{.pc = 0, .run = 1, .lanes = 32, .count = 4},
             {.pc = 6, .run = 0, .lanes = 16, .count = 0},
             {.pc = 7, .run = 0, .lanes = 16, .count = 2}}));
  // pcs 0-5 and 7-8 as runs: 13 + 2 = 15 over 8.
  tg.simd_groups.push_back(
      Trace({{.pc = 0, .run = 1, .lanes = 32, .count = 6},
             {.pc = 7, .run = 1, .lanes = 32, .count = 2}}));
  EXPECT_DOUBLE_EQ(MeanRegistersInUse(live, {tg}), 29.0 / 14.0);
  // A second threadgroup that ran pc 2 three times: (29 + 9) / 17.
  ThreadgroupTrace again;
  again.simd_groups.push_back(
      Trace({{.pc = 2, .run = 1, .lanes = 32, .count = 1},
             {.pc = 2, .run = 1, .lanes = 8, .count = 1},
             {.pc = 2, .run = 0, .lanes = 32, .count = 0}}));
  EXPECT_DOUBLE_EQ(MeanRegistersInUse(live, {tg, again}), 38.0 / 17.0);
  EXPECT_EQ(MeanRegistersInUse(live, {}), 0.0);
}

}  // namespace
}  // namespace mtlemu::emu
