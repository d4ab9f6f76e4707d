// Loops as the compiler leaves them (compiler/air: target_info.h's unrolling
// thresholds, loop strength reduction, convergence.h, constant_hoisting.h):
// which loops are unrolled fully, partially or not at all, what a loop
// iteration still spends besides its body, and that unrolled loops compute
// what a plain C++ loop computes for every trip count (zero, not a multiple
// of the unroll factor, known only at run time). Also spilling past the
// registers a thread has, timed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "compiler/air/constant_hoisting.h"
#include "compiler/air/register_allocation.h"
#include "compiler/air/target_info.h"
#include "compiler/msl_compiler.h"
#include "traces/timing_report.h"
#include "isa/assembler.h"
#include "isa/printer.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using isa::Opcode;
using testing::KernelHarness;
using testing::Runs;

constexpr char kHeader[] = R"(#include <metal_stdlib>
using namespace metal;
)";

isa::Module Compile(const std::string& body, const std::string& kernel) {
  Result<isa::Module> m = compiler::CompileMsl(std::string(kHeader) + body,
                                               "loops.metal", {}, {kernel});
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  if (!m.ok()) return {};
  if (std::getenv("MTLEMU_PRINT_ISA") != nullptr) {
    std::printf("%s\n", isa::PrintModule(m.value()).c_str());
  }
  return std::move(m).value();
}

// The instructions of the kernel's loops: from a backward branch's target
// to the branch (nested loops counted once, in the outermost).
struct LoopShape {
  int loops = 0;
  std::vector<Opcode> body;
};

LoopShape LoopsOf(const isa::Kernel& k) {
  LoopShape shape;
  uint32_t covered = 0;  // code before this is counted
  for (uint32_t pc = 0; pc < k.code.size(); ++pc) {
    const isa::Instruction& inst = k.code[pc];
    int64_t target = -1;
    if (inst.op == Opcode::kBranch) target = inst.operands[0].label;
    if (inst.op == Opcode::kBranchZero || inst.op == Opcode::kBranchNonZero) {
      target = inst.operands[1].label;
    }
    if (target < 0 || target > pc) continue;
    ++shape.loops;
    for (uint32_t i = std::max<uint32_t>(target, covered); i <= pc; ++i) {
      shape.body.push_back(k.code[i].op);
    }
    covered = pc + 1;
  }
  return shape;
}

int CountOf(const std::vector<Opcode>& ops, Opcode op) {
  return static_cast<int>(std::count(ops.begin(), ops.end(), op));
}

int CountOf(const isa::Kernel& k, Opcode op) {
  int n = 0;
  for (const isa::Instruction& inst : k.code) n += inst.op == op;
  return n;
}

// --- unrolling decisions ----------------------------------------------------

constexpr char kFmaChains[] = R"(
kernel void chains(device float* out [[buffer(0)]],
                   uint id [[thread_position_in_grid]]) {
  float a = float(id), b = a + 1.0f, c = a + 2.0f, d = a + 3.0f;
  for (int i = 0; i < 512; ++i) {
    a = fma(a, 0.999f, 0.001f);
    b = fma(b, 0.999f, 0.001f);
    c = fma(c, 0.999f, 0.001f);
    d = fma(d, 0.999f, 0.001f);
  }
  out[id] = a + b + c + d;
}
)";

TEST(LoopUnroll, LongConstantLoopIsUnrolledPartiallyWithOneCounter) {
  const isa::Module m = Compile(kFmaChains, "chains");
  ASSERT_EQ(m.kernels.size(), 1u);
  const LoopShape loop = LoopsOf(m.kernels[0]);
  ASSERT_EQ(loop.loops, 1);
  // 16 copies of the 4 fmas (kMaxPartialUnrollCount, a divisor of 512).
  EXPECT_EQ(CountOf(loop.body, Opcode::kFma),
            4 * static_cast<int>(air::kMaxPartialUnrollCount));
  // Besides the fmas: the counter's add, its compare and the branch; no
  // copy of the counter (the compare reads the incremented value).
  EXPECT_LE(loop.body.size() - CountOf(loop.body, Opcode::kFma), 3u)
      << isa::PrintKernel(m.kernels[0]);
  EXPECT_EQ(CountOf(loop.body, Opcode::kMov), 0);
}

TEST(LoopUnroll, SmallConstantLoopIsUnrolledFully) {
  const isa::Module m = Compile(R"(
kernel void small(device float* out [[buffer(0)]],
                  uint id [[thread_position_in_grid]]) {
  float a = float(id);
  for (int i = 0; i < 32; ++i) a = fma(a, 0.5f, float(i + 1));
  out[id] = a;
}
)",
                                "small");
  EXPECT_EQ(LoopsOf(m.kernels[0]).loops, 0);
  EXPECT_EQ(CountOf(m.kernels[0], Opcode::kFma), 32);
}

TEST(LoopUnroll, ConstantLoopPastTheFullUnrollLimitStaysALoop) {
  // 33 iterations (kFullUnrollMaxTripCount + 1) of one fma: partially
  // unrolled (33 = 3 x 11: by 11), not fully.
  static_assert(air::kFullUnrollMaxTripCount == 32);
  const isa::Module m = Compile(R"(
kernel void past(device float* out [[buffer(0)]],
                 uint id [[thread_position_in_grid]]) {
  float a = float(id);
  for (int i = 0; i < 33; ++i) a = fma(a, 0.5f, 0.25f);
  out[id] = a;
}
)",
                                "past");
  const LoopShape loop = LoopsOf(m.kernels[0]);
  EXPECT_EQ(loop.loops, 1);
  EXPECT_EQ(CountOf(loop.body, Opcode::kFma), 11);
}

TEST(LoopUnroll, PragmaUnrollGoesPastTheLimit) {
  const isa::Module m = Compile(R"(
kernel void forced(device float* out [[buffer(0)]],
                   uint id [[thread_position_in_grid]]) {
  float a = float(id);
  #pragma unroll
  for (int i = 0; i < 64; ++i) a = fma(a, 0.5f, 0.25f);
  out[id] = a;
}
)",
                                "forced");
  EXPECT_EQ(LoopsOf(m.kernels[0]).loops, 0);
  EXPECT_EQ(CountOf(m.kernels[0], Opcode::kFma), 64);
}

TEST(LoopUnroll, SimdGroupFunctionsStayConvergent) {
  // A runtime trip count needs a remainder loop, which would run simd_sum
  // on a different set of iterations than the lanes' partners: LLVM does
  // not unroll a convergent loop that way, so one simd_sum remains.
  const isa::Module m = Compile(R"(
kernel void reduce(device float* out [[buffer(0)]],
                   constant uint& n [[buffer(1)]],
                   uint id [[thread_position_in_grid]]) {
  float a = float(id);
  for (uint i = 0; i < n; ++i) a = simd_sum(a) * 0.5f;
  out[id] = a;
}
)",
                                "reduce");
  EXPECT_EQ(CountOf(m.kernels[0], Opcode::kSimdSum), 1)
      << isa::PrintKernel(m.kernels[0]);
}

TEST(LoopUnroll, PureBuiltinsLeaveLoops) {
  // sqrt and exp of a loop invariant are computed once, before the loop.
  const isa::Module m = Compile(R"(
kernel void invariant(device float* out [[buffer(0)]],
                      constant float& s [[buffer(1)]],
                      constant uint& n [[buffer(2)]],
                      uint id [[thread_position_in_grid]]) {
  float a = float(id);
  for (uint i = 0; i < n; ++i) a = a * sqrt(s) + exp(s);
  out[id] = a;
}
)",
                                "invariant");
  const LoopShape loop = LoopsOf(m.kernels[0]);
  ASSERT_GE(loop.loops, 1);
  EXPECT_EQ(CountOf(loop.body, Opcode::kSqrt), 0);
  EXPECT_EQ(CountOf(loop.body, Opcode::kExp), 0);
  EXPECT_EQ(CountOf(m.kernels[0], Opcode::kSqrt), 1);
}

TEST(LoopUnroll, ConstantsAreNotReloadedEachIteration) {
  // A store's value must be a register: the constants go into registers
  // once, before the loop.
  const isa::Module m = Compile(R"(
kernel void fill(device float4* out [[buffer(0)]],
                 constant uint& n [[buffer(1)]],
                 uint id [[thread_position_in_grid]]) {
  for (uint i = 0; i < n; ++i) out[id * n + i] = float4(7.0f, 1.0f, 2.0f, 3.0f);
}
)",
                                "fill");
  const LoopShape loop = LoopsOf(m.kernels[0]);
  ASSERT_GE(loop.loops, 1);
  EXPECT_EQ(CountOf(loop.body, Opcode::kMov), 0)
      << isa::PrintKernel(m.kernels[0]);
}

TEST(ConstantHoisting, OnlyFallThroughEntryLoopsMove) {
  // The loop at `loop` is also entered by `br loop` from outside: nothing
  // may move in front of it. After `other`, the loop is entered only by
  // falling through, and its constant moves.
  const char* text = R"(.kernel k
.buffer 0 u0 device float out
    mov.u32 r0, 0
    br loop
loop:
    mov.f32 r1, 7.0
    st.device.f32 [u0 + r0*4], r1
    add.u32 r0, r0, 1
    lt.u32 r2, r0, 4
    bnz r2, loop, other
other:
    mov.u32 r3, 0
loop2:
    mov.f32 r4, 5.0
    st.device.f32 [u0 + r3*4], r4
    add.u32 r3, r3, 1
    lt.u32 r5, r3, 4
    bnz r5, loop2, done
done:
    exit
.end
)";
  isa::AssembleResult a = isa::Assemble(text, "k.s");
  ASSERT_TRUE(a.ok());
  isa::Kernel k = a.module.kernels.at(0);
  ASSERT_TRUE(air::HoistLoopConstants(k, {}));
  ASSERT_EQ(k.code.size(), a.module.kernels[0].code.size());
  // The first loop's constant stays at its place (pc 2), the second moves
  // before loop2's first instruction (the add of r3 comes right after it).
  EXPECT_EQ(k.code[2].op, Opcode::kMov);
  EXPECT_EQ(k.code[2].operands[0].reg, 1);
  EXPECT_EQ(k.code[8].op, Opcode::kMov);
  EXPECT_EQ(k.code[8].operands[0].reg, 4);
  EXPECT_EQ(k.code[9].op, Opcode::kStore);
  // The back edge lands after the hoisted copy.
  EXPECT_EQ(k.code[12].operands[1].label, 9u);
}

// --- results against C++ ----------------------------------------------------

// A loop with a runtime trip count whose body the unroller copies, with a
// remainder: out[id] is a hash of the trip count and the thread, and a
// float accumulator through fma.
constexpr char kRuntimeLoop[] = R"(
kernel void runtime_loop(device const float* x [[buffer(0)]],
                         device float* out [[buffer(1)]],
                         device uint* hashes [[buffer(2)]],
                         constant uint& n [[buffer(3)]],
                         uint id [[thread_position_in_grid]]) {
  float acc = float(id) * 0.25f;
  uint h = id * 2654435761u;
  for (uint i = 0; i < n; ++i) {
    acc = fma(acc, 0.75f, x[(id + i) % 64u]);
    h = (h ^ i) * 16777619u + 7u;
  }
  out[id] = acc;
  hashes[id] = h;
}
)";

TEST(LoopUnroll, RuntimeTripCountsMatchCxx) {
  const isa::Module m = Compile(kRuntimeLoop, "runtime_loop");
  // Unrolled: more than one fma, in more than one loop (the remainder).
  EXPECT_GT(CountOf(m.kernels[0], Opcode::kFma), 1)
      << isa::PrintKernel(m.kernels[0]);
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[i] = 0.5f + 0.01f * i;
  constexpr int kThreads = 64;
  for (uint32_t n : {0u, 1u, 2u, 3u, 7u, 8u, 9u, 15u, 16u, 17u, 100u}) {
    KernelHarness h(m, "runtime_loop");
    h.SetBuffer(0, x);
    h.SetBuffer(1, std::vector<float>(kThreads, -1.0f));
    h.SetBuffer(2, std::vector<uint32_t>(kThreads, 0));
    h.SetBytes(3, n);
    ASSERT_TRUE(Runs(h, {kThreads}, {32}));
    const std::vector<float> out = h.Read<float>(1);
    const std::vector<uint32_t> hashes = h.Read<uint32_t>(2);
    for (uint32_t id = 0; id < kThreads; ++id) {
      float acc = static_cast<float>(id) * 0.25f;
      uint32_t hash = id * 2654435761u;
      for (uint32_t i = 0; i < n; ++i) {
        acc = std::fma(acc, 0.75f, x[(id + i) % 64u]);
        hash = (hash ^ i) * 16777619u + 7u;
      }
      ASSERT_EQ(out[id], acc) << "n " << n << " thread " << id;
      ASSERT_EQ(hashes[id], hash) << "n " << n << " thread " << id;
    }
  }
}

TEST(LoopUnroll, ConstantTripCountsMatchCxx) {
  // 97 is prime (a remainder), 512 a multiple of the unroll factor, 20 is
  // unrolled fully, and a loop that starts at its bound runs zero times.
  const std::string source = R"(
kernel void counts(device float* out [[buffer(0)]],
                   uint id [[thread_position_in_grid]]) {
  float a = float(id), b = a, c = a, d = a;
  for (int i = 0; i < 97; ++i) a = fma(a, 0.999f, float(i & 3));
  for (int i = 0; i < 512; ++i) b = fma(b, 0.998f, 0.001f);
  for (int i = 0; i < 20; ++i) c = c * 0.5f + float(i);
  for (int i = 7; i < 7; ++i) d = d * 3.0f;
  out[id * 4] = a;
  out[id * 4 + 1] = b;
  out[id * 4 + 2] = c;
  out[id * 4 + 3] = d;
}
)";
  const isa::Module m = Compile(source, "counts");
  constexpr int kThreads = 64;
  KernelHarness h(m, "counts");
  h.SetBuffer(0, std::vector<float>(4 * kThreads, -1.0f));
  ASSERT_TRUE(Runs(h, {kThreads}, {32}));
  const std::vector<float> out = h.Read<float>(0);
  for (uint32_t id = 0; id < kThreads; ++id) {
    float a = static_cast<float>(id), b = a, c = a, d = a;
    for (int i = 0; i < 97; ++i) a = std::fma(a, 0.999f, float(i & 3));
    for (int i = 0; i < 512; ++i) b = std::fma(b, 0.998f, 0.001f);
    // Fast math contracts c * 0.5 + i into one fma.
    for (int i = 0; i < 20; ++i) c = std::fma(c, 0.5f, float(i));
    EXPECT_EQ(out[id * 4], a) << id;
    EXPECT_EQ(out[id * 4 + 1], b) << id;
    EXPECT_EQ(out[id * 4 + 2], c) << id;
    EXPECT_EQ(out[id * 4 + 3], d) << id;
  }
}

TEST(LoopUnroll, HoistedConstantsAreStored) {
  const isa::Module m = Compile(R"(
kernel void fill(device float4* out [[buffer(0)]],
                 constant uint& n [[buffer(1)]],
                 uint id [[thread_position_in_grid]]) {
  for (uint i = 0; i < n; ++i) out[id * n + i] = float4(7.0f, 1.0f, 2.0f, 3.0f);
}
)",
                                "fill");
  constexpr uint32_t kThreads = 32, kN = 13;
  KernelHarness h(m, "fill");
  h.SetBuffer(0, std::vector<float>(4 * kThreads * kN, -1.0f));
  h.SetBytes(1, kN);
  ASSERT_TRUE(Runs(h, {kThreads}, {32}));
  const std::vector<float> out = h.Read<float>(0);
  const float want[4] = {7.0f, 1.0f, 2.0f, 3.0f};
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], want[i % 4]) << i;
}

// --- spilling past a thread's registers, timed
// --------------------------------

TEST(Spilling, PastOneHundredTwentyEightRegistersIsTimed) {
  // 160 accumulators live across a loop: more than the 128 registers a
  // thread has, fewer than the ISA's 256.
  constexpr int kCount = 160;
  std::string source = std::string(kHeader) +
                       "kernel void wide(device float* out [[buffer(0)]],\n"
                       "                 constant uint& n [[buffer(1)]],\n"
                       "                 uint id [[thread_position_in_grid]]) "
                       "{\n";
  for (int j = 0; j < kCount; ++j) {
    source += "  float a" + std::to_string(j) + " = float(id + " +
              std::to_string(j) + ");\n";
  }
  source += "  for (uint k = 0; k < n; ++k) {\n";
  for (int j = 0; j < kCount; ++j) {
    source += "    a" + std::to_string(j) + " = a" + std::to_string(j) +
              " * 0.5f + a" + std::to_string((j + 1) % kCount) + ";\n";
  }
  source += "  }\n";
  for (int j = 0; j < kCount; ++j) {
    source += "  out[id * " + std::to_string(kCount) + " + " +
              std::to_string(j) + "] = a" + std::to_string(j) + ";\n";
  }
  source += "}\n";
  Result<isa::Module> m =
      compiler::CompileMsl(source, "wide.metal", {}, {"wide"});
  ASSERT_TRUE(m.ok()) << m.error().message;
  const isa::Kernel& k = m.value().kernels.at(0);
  EXPECT_LE(k.registers, 128u);
  EXPECT_GT(k.thread_memory, 0u);
  int spills = 0;
  for (const isa::Instruction& inst : k.code) {
    spills += (inst.op == Opcode::kLoad || inst.op == Opcode::kStore) &&
              inst.space == isa::AddressSpace::kThread;
  }
  EXPECT_GT(spills, 0);

  // Timed: the spill loads and stores are issued instructions, and the
  // report no longer says that spills are left out.
  constexpr uint32_t kThreads = 256, kN = 4;
  KernelHarness h(std::move(m), "wide");
  h.device().options().timing = true;
  h.SetBuffer(0, std::vector<float>(kCount * kThreads, 0.0f));
  h.SetBytes(1, kN);
  ASSERT_TRUE(Runs(h, {kThreads}, {64}));
  ASSERT_NE(h.report(), nullptr);
  ASSERT_NE(h.report()->timing, nullptr);
  const emu::TimingReport& report = *h.report()->timing;
  EXPECT_LE(report.registers, 128u);
  for (const std::string& note : report.notes) {
    EXPECT_EQ(note.find("spills are not timed"), std::string::npos) << note;
  }
  // The kernel's own memory accesses are its kCount device stores per
  // SIMD group; the spill loads and stores are issued on top of them.
  uint64_t memory = 0;
  for (const auto& [unit, n] : report.instructions_by_unit) {
    if (unit == "load" || unit == "store") memory += n;
  }
  EXPECT_GT(memory, uint64_t{kCount} * (kThreads / 32));
  // Results: a plain C++ loop.
  const std::vector<float> out = h.Read<float>(0);
  for (uint32_t id = 0; id < kThreads; id += 37) {
    std::vector<float> a(kCount);
    for (int j = 0; j < kCount; ++j) a[j] = static_cast<float>(id + j);
    for (uint32_t it = 0; it < kN; ++it) {
      // In source order: a[j] reads a[j + 1] before its update, the last
      // one reads a0 after.
      for (int j = 0; j < kCount; ++j) {
        a[j] = std::fma(a[j], 0.5f, a[(j + 1) % kCount]);
      }
    }
    for (int j = 0; j < kCount; ++j) {
      ASSERT_EQ(out[id * kCount + j], a[j]) << id << " " << j;
    }
  }
}

}  // namespace
}  // namespace mtlemu
