// Register spilling (compiler/air/spilling.cpp, with the linear scan in
// register_allocation.cpp): MSL kernels that need more registers than a
// thread has compile into at most 256 registers plus thread memory, and
// compute what a plain C++ loop computes; kernels that fit compile as
// before, without spill code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/air/register_allocation.h"
#include "compiler/msl_compiler.h"
#include "isa/assembler.h"
#include "isa/occupancy.h"
#include "isa/printer.h"
#include "isa/verifier.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using testing::KernelHarness;
using testing::Runs;

// `count` lines, line(j) for j = 0..count-1.
std::string Lines(int count, const std::function<std::string(int)>& line) {
  std::string out;
  for (int j = 0; j < count; ++j) out += line(j) + "\n";
  return out;
}

std::string N(int j) { return std::to_string(j); }

int ThreadMemoryAccesses(const isa::Kernel& k) {
  int n = 0;
  for (const isa::Instruction& inst : k.code) {
    n += (inst.op == isa::Opcode::kLoad || inst.op == isa::Opcode::kStore) &&
         inst.space == isa::AddressSpace::kThread;
  }
  return n;
}

std::string Describe(const isa::Kernel& k) {
  return k.name + ": " + std::to_string(k.registers) + " registers, " +
         std::to_string(k.code.size()) + " instructions, " +
         std::to_string(k.thread_memory) + " bytes of thread memory, " +
         std::to_string(ThreadMemoryAccesses(k)) + " spill loads and stores";
}

// Compiles `kernel` from `source`; checks that it spilled: at most
// kAllocatableRegisters registers, thread memory and accesses to it.
Result<isa::Module> CompileSpilling(const std::string& source,
                                    const std::string& kernel) {
  Result<isa::Module> m =
      compiler::CompileMsl(source, "spilling.metal", {}, {kernel});
  if (!m.ok()) {
    ADD_FAILURE() << m.error().message;
    return m;
  }
  const isa::Kernel& k = m.value().kernels.at(0);
  if (std::getenv("MTLEMU_PRINT_ISA") != nullptr) {
    std::printf("%s\n", isa::PrintModule(m.value()).c_str());
  }
  EXPECT_LE(k.registers, air::kAllocatableRegisters) << Describe(k);
  EXPECT_GT(k.thread_memory, 0u) << Describe(k);
  EXPECT_GT(ThreadMemoryAccesses(k), 0) << Describe(k);
  return m;
}

constexpr char kHeader[] = R"(#include <metal_stdlib>
using namespace metal;
)";

// Kernel `name`(x, out, n): thread id's `count` floats a0, a1, ... start as
// init(j), go through `body` n times and end in out[id * count + j].
std::string FloatsThroughALoop(const std::string& name, int count,
                               const std::function<std::string(int)>& init,
                               const std::string& body) {
  return std::string(kHeader) + "kernel void " + name +
         R"((device const float* x [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   constant uint& n [[buffer(2)]],
                   uint id [[thread_position_in_grid]]) {
)" +
         Lines(count,
               [&](int j) {
                 return "  float a" + N(j) + " = " + init(j) + ";";
               }) +
         "  for (uint k = 0; k < n; ++k) {\n" + body + "  }\n" +
         Lines(count,
               [&](int j) {
                 return "  out[id * " + N(count) + " + " + N(j) + "] = a" +
                        N(j) + ";";
               }) +
         "}\n";
}

// Compiles and runs FloatsThroughALoop's kernel on `threads` threads;
// returns `out`.
std::vector<float> RunFloatsThroughALoop(const std::string& source,
                                         const std::string& name, int count,
                                         int threads,
                                         const std::vector<float>& x,
                                         uint32_t n) {
  Result<isa::Module> m = CompileSpilling(source, name);
  if (!m.ok()) return {};
  KernelHarness h(std::move(m), name);
  h.SetBuffer(0, x);
  h.SetBuffer(1, std::vector<float>(count * threads, -1.0f));
  h.SetBytes(2, n);
  EXPECT_TRUE(Runs(h, {static_cast<uint64_t>(threads)}, {32}));
  return h.Read<float>(1);
}

// 300 float accumulators live across a loop: each is a loop phi coalesced
// with its update, and those that do not fit live in thread memory.
TEST(Spilling, AccumulatorsLiveAcrossALoop) {
  constexpr int kValues = 300, kThreads = 64;
  const std::string source = FloatsThroughALoop(
      "accumulators", kValues,
      [](int j) { return "float(id) + " + N(j) + ".0f"; },
      "    const float v = x[k * 64 + id];\n" + Lines(kValues, [](int j) {
        return "    a" + N(j) + " = fma(a" + N(j) + ", v, " + N(j) +
               ".0f * 0.25f);";
      }));
  const uint32_t n = 7;
  std::vector<float> x(n * kThreads);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(static_cast<int>(i % 17) - 8) / 8.0f;
  }
  const std::vector<float> out =
      RunFloatsThroughALoop(source, "accumulators", kValues, kThreads, x, n);
  ASSERT_EQ(out.size(), size_t{kValues * kThreads});
  for (int id = 0; id < kThreads; ++id) {
    for (int j = 0; j < kValues; ++j) {
      float a = static_cast<float>(id) + static_cast<float>(j);
      for (uint32_t k = 0; k < n; ++k) {
        a = std::fma(a, x[k * kThreads + id], static_cast<float>(j) * 0.25f);
      }
      ASSERT_EQ(out[id * kValues + j], a) << "thread " << id << ", a" << j;
    }
  }
}

// A kernel declared [[max_total_threads_per_threadgroup(n)]] must launch
// with n threads: 120 accumulators would take ~128 registers (384
// threads), so for 1024 and 512 the allocator keeps to 52 and 104
// registers (isa/occupancy.h) and spills the rest; the results are those
// of the plain loop either way.
TEST(Spilling, DeclaredThreadgroupSizeFitsByBudget) {
  constexpr int kValues = 120;
  for (int threads : {1024, 512}) {
    std::string source = FloatsThroughALoop(
        "declared", kValues,
        [](int j) { return "float(id) + " + N(j) + ".0f"; },
        "    const float v = x[k * 1024 + id];\n" + Lines(kValues, [](int j) {
          return "    a" + N(j) + " = fma(a" + N(j) + ", v, " + N(j) +
                 ".0f * 0.25f);";
        }));
    const std::string attribute =
        "[[max_total_threads_per_threadgroup(" + N(threads) + ")]] ";
    source.insert(source.find("kernel void"), attribute);
    Result<isa::Module> m = CompileSpilling(source, "declared");
    ASSERT_TRUE(m.ok());
    const isa::Kernel& k = m.value().kernels.at(0);
    EXPECT_LE(k.registers,
              isa::MaxRegistersForThreads(static_cast<uint32_t>(threads)))
        << Describe(k);
    KernelHarness h(std::move(m), "declared");
    ASSERT_TRUE(h.status().ok()) << h.status().error().message;
    EXPECT_GE(h.pipeline().maxTotalThreadsPerThreadgroup(),
              static_cast<uint32_t>(threads));
    const uint32_t n = 3;
    std::vector<float> x(n * 1024);
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(static_cast<int>(i % 13) - 6) / 8.0f;
    }
    h.SetBuffer(0, x);
    h.SetBuffer(1, std::vector<float>(kValues * threads, -1.0f));
    h.SetBytes(2, n);
    ASSERT_TRUE(Runs(h, {static_cast<uint64_t>(threads)},
                     {static_cast<uint64_t>(threads)}));
    const std::vector<float> out = h.Read<float>(1);
    for (int id = 0; id < threads; ++id) {
      for (int j = 0; j < kValues; ++j) {
        float a = static_cast<float>(id) + static_cast<float>(j);
        for (uint32_t kk = 0; kk < n; ++kk) {
          a = std::fma(a, x[kk * 1024 + id], static_cast<float>(j) * 0.25f);
        }
        ASSERT_EQ(out[id * kValues + j], a)
            << threads << " threads: thread " << id << ", a" << j;
      }
    }
  }
}

// 300 values rotate through a loop (a0 <- a1 <- ... <- a299 <- a0 + k): the
// phis' copies cannot be coalesced, so spilled phis are copied through
// thread memory, in the right order.
TEST(Spilling, RotatingLoopValues) {
  constexpr int kValues = 300, kThreads = 64;
  const std::string source = FloatsThroughALoop(
      "rotate", kValues,
      [](int j) { return "x[id * " + N(kValues) + " + " + N(j) + "]"; },
      "    const float t = a0;\n" +
          Lines(
              kValues - 1,
              [](int j) { return "    a" + N(j) + " = a" + N(j + 1) + ";"; }) +
          "    a" + N(kValues - 1) + " = t + float(k);\n");
  const uint32_t n = 450;  // once and a half around
  std::vector<float> x(kValues * kThreads);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  const std::vector<float> out =
      RunFloatsThroughALoop(source, "rotate", kValues, kThreads, x, n);
  ASSERT_EQ(out.size(), size_t{kValues * kThreads});
  for (int id = 0; id < kThreads; ++id) {
    std::vector<float> a(x.begin() + id * kValues,
                         x.begin() + (id + 1) * kValues);
    for (uint32_t k = 0; k < n; ++k) {
      const float t = a[0];
      a.erase(a.begin());
      a.push_back(t + static_cast<float>(k));
    }
    for (int j = 0; j < kValues; ++j) {
      ASSERT_EQ(out[id * kValues + j], a[j]) << "thread " << id << ", a" << j;
    }
  }
}

// float4 blocks, longs (register pairs) and pointers (pairs) all live at
// once across a barrier; spilled blocks are stored whole and their elements
// reloaded one by one.
TEST(Spilling, VectorsLongsAndPointers) {
  constexpr int kValues = 40, kThreads = 64;
  const std::string v = N(kValues);
  const std::string source =
      std::string(kHeader) +
      R"(kernel void wide(device const float4* f [[buffer(0)]],
                 device const long* w [[buffer(1)]],
                 device float4* even [[buffer(2)]],
                 device float4* odd [[buffer(3)]],
                 device long* lout [[buffer(4)]],
                 uint id [[thread_position_in_grid]]) {
)" +
      Lines(kValues,
            [&](int j) {
              const std::string i = "id * " + v + " + " + N(j);
              return "  const float4 f" + N(j) + " = f[" + i +
                     "];\n  const long l" + N(j) + " = w[" + i + "] * " +
                     N(j + 1) + ";\n  device float4* p" + N(j) + " = (l" +
                     N(j) + " & 1) ? odd : even;";
            }) +
      "  threadgroup_barrier(mem_flags::mem_device);\n" +
      Lines(kValues,
            [&](int j) {
              const std::string i = "id * " + v + " + " + N(j);
              return "  p" + N(j) + "[" + i + "] = f" + N(j) + " * float(l" +
                     N(j) + " % 5);\n  lout[" + i + "] = l" + N(j) +
                     " + long(f" + N(j) + ".w);";
            }) +
      "}\n";
  Result<isa::Module> m = CompileSpilling(source, "wide");
  ASSERT_TRUE(m.ok());
  KernelHarness h(std::move(m), "wide");
  const size_t count = kValues * kThreads;
  std::vector<float> f(4 * count);
  std::vector<int64_t> w(count);
  for (size_t i = 0; i < f.size(); ++i) {
    f[i] = static_cast<float>(static_cast<int>(i % 23) - 11) * 0.5f;
  }
  for (size_t i = 0; i < count; ++i) {
    w[i] = (static_cast<int64_t>(i) * 0x9e3779b97f4a7c15) >> 7;
  }
  constexpr float kUntouched = -12345.0f;
  h.SetBuffer(0, f);
  h.SetBuffer(1, w);
  h.SetBuffer(2, std::vector<float>(4 * count, kUntouched));
  h.SetBuffer(3, std::vector<float>(4 * count, kUntouched));
  h.SetBuffer(4, std::vector<int64_t>(count));
  ASSERT_TRUE(Runs(h, {kThreads}, {kThreads}));
  const std::vector<float> even = h.Read<float>(2), odd = h.Read<float>(3);
  const std::vector<int64_t> lout = h.Read<int64_t>(4);
  for (size_t i = 0; i < count; ++i) {
    const int64_t l = w[i] * static_cast<int64_t>(i % kValues + 1);
    const std::vector<float>& written = (l & 1) ? odd : even;
    const std::vector<float>& other = (l & 1) ? even : odd;
    for (int c = 0; c < 4; ++c) {
      ASSERT_EQ(written[4 * i + c], f[4 * i + c] * static_cast<float>(l % 5))
          << i << "." << c;
      ASSERT_EQ(other[4 * i + c], kUntouched) << i << "." << c;
    }
    ASSERT_EQ(lout[i], l + static_cast<int64_t>(f[4 * i + 3])) << i;
  }
}

// 300 values live across a threadgroup barrier, then updated on a divergent
// path: spill stores and loads run only on the lanes that take it.
TEST(Spilling, ValuesLiveAcrossABarrierAndABranch) {
  constexpr int kValues = 300, kThreads = 64;
  const std::string v = N(kValues);
  const std::string source =
      std::string(kHeader) +
      R"(kernel void exchange(device const int* x [[buffer(0)]],
                     device int* out [[buffer(1)]],
                     uint id [[thread_position_in_grid]],
                     uint tid [[thread_index_in_threadgroup]]) {
  threadgroup int shared[64];
)" +
      Lines(kValues,
            [&](int j) {
              return "  int a" + N(j) + " = x[id * " + v + " + " + N(j) + "];";
            }) +
      "  shared[tid] = a0 ^ a" + N(kValues - 1) +
      ";\n"
      "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "  const int s = shared[(tid + 1) % 64];\n"
      "  if (id % 3 == 0) {\n" +
      Lines(kValues,
            [](int j) {
              return "    a" + N(j) + " = a" + N(j) + " * 3 + " + N(j) + ";";
            }) +
      "  }\n" +
      Lines(kValues,
            [&](int j) {
              return "  out[id * " + v + " + " + N(j) + "] = a" + N(j) +
                     " + s;";
            }) +
      "}\n";
  Result<isa::Module> m = CompileSpilling(source, "exchange");
  ASSERT_TRUE(m.ok());
  KernelHarness h(std::move(m), "exchange");
  std::vector<int32_t> x(kValues * kThreads);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<int32_t>((i * 2654435761u) >> 9);
  }
  h.SetBuffer(0, x);
  h.SetBuffer(1, std::vector<int32_t>(x.size()));
  ASSERT_TRUE(Runs(h, {kThreads}, {kThreads}));
  const std::vector<int32_t> out = h.Read<int32_t>(1);
  for (int id = 0; id < kThreads; ++id) {
    const int neighbour = (id + 1) % kThreads;
    const int32_t s =
        x[neighbour * kValues] ^ x[neighbour * kValues + kValues - 1];
    for (int j = 0; j < kValues; ++j) {
      // The kernel's int arithmetic wraps; here in uint32_t, where C++'s
      // does too (UBSan).
      uint32_t a = static_cast<uint32_t>(x[id * kValues + j]);
      if (id % 3 == 0) a = a * 3 + j;
      ASSERT_EQ(out[id * kValues + j], static_cast<int32_t>(a + s))
          << "thread " << id << ", a" << j;
    }
  }
}

// 140 simdgroup_float8x8 accumulators (two registers per lane each) across
// the k loop of an 8 x 1120 matrix product: spilled matrices are register
// pairs stored and reloaded whole.
TEST(Spilling, SimdgroupMatrixAccumulators) {
  constexpr int kTiles = 140, kN = 8 * kTiles;
  const std::string source =
      std::string(kHeader) +
      R"(kernel void tiles(device const float* A [[buffer(0)]],
                  device const float* B [[buffer(1)]],
                  device float* C [[buffer(2)]],
                  constant uint& K [[buffer(3)]]) {
)" +
      Lines(kTiles,
            [](int j) {
              return "  simdgroup_float8x8 c" + N(j) +
                     " = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);";
            }) +
      "  for (uint k = 0; k < K; k += 8) {\n"
      "    simdgroup_float8x8 a;\n"
      "    simdgroup_load(a, A, K, ulong2(k, 0));\n" +
      Lines(kTiles,
            [](int j) {
              return "    { simdgroup_float8x8 b; simdgroup_load(b, B, " +
                     N(kN) + ", ulong2(" + N(8 * j) +
                     ", k)); simdgroup_multiply_accumulate(c" + N(j) +
                     ", a, b, c" + N(j) + "); }";
            }) +
      "  }\n" +
      Lines(kTiles,
            [](int j) {
              return "  simdgroup_store(c" + N(j) + ", C, " + N(kN) +
                     ", ulong2(" + N(8 * j) + ", 0));";
            }) +
      "}\n";
  Result<isa::Module> m = CompileSpilling(source, "tiles");
  ASSERT_TRUE(m.ok());
  KernelHarness h(std::move(m), "tiles");
  const uint32_t k = 24;
  // Small integers: every product and sum is exact in float.
  std::vector<float> a(8 * k), b(k * kN);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  }
  for (size_t i = 0; i < b.size(); ++i) {
    b[i] = static_cast<float>(static_cast<int>(i % 11) - 5);
  }
  h.SetBuffer(0, a);
  h.SetBuffer(1, b);
  h.SetBuffer(2, std::vector<float>(8 * kN, -1.0f));
  h.SetBytes(3, k);
  ASSERT_TRUE(Runs(h, {32}, {32}));
  const std::vector<float> c = h.Read<float>(2);
  for (int r = 0; r < 8; ++r) {
    for (int col = 0; col < kN; ++col) {
      float want = 0.0f;
      for (uint32_t i = 0; i < k; ++i) want += a[r * k + i] * b[i * kN + col];
      ASSERT_EQ(c[r * kN + col], want) << "C[" << r << "][" << col << "]";
    }
  }
}

// A kernel that fits compiles exactly as before spilling existed: the
// corpus's tiled matmul, whose instruction count this pins.
TEST(Spilling, KernelsThatFitGetNoSpillCode) {
  const std::string path =
      MTLEMU_TEST_DATA_DIR "/compiler/msl_corpus/tiled_matmul.metal";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  Result<isa::Module> m = compiler::CompileMsl(text.str(), "tiled_matmul.metal",
                                               {}, {"tiled_matmul"});
  ASSERT_TRUE(m.ok()) << m.error().message;
  const isa::Kernel& k = m.value().kernels.at(0);
  // 103 and 17 since loop strength reduction and constant hoisting
  // (compiler/README.md, "Loops"); 100 and 16 before.
  EXPECT_EQ(k.code.size(), 103u) << Describe(k);
  EXPECT_EQ(k.registers, 17) << Describe(k);
  EXPECT_EQ(k.thread_memory, 0u) << Describe(k);
  EXPECT_EQ(ThreadMemoryAccesses(k), 0) << Describe(k);
}

// On virtual registers, below the MSL front end: a block of eight registers
// (four ulongs loaded at once) outlives 260 values that are used more
// densely. It is spilled whole, reloaded in two accesses of four registers
// for the store that reads it all, and its parts (ulong pairs) are read and
// written in place.
TEST(Spilling, WideBlockAndItsPairsOnVirtualRegisters) {
  using isa::Operand;
  using isa::ScalarType;
  isa::AssembleResult a = isa::Assemble(R"(.kernel k
.buffer 0 u0 device ulong in
.buffer 1 u2 device ulong out
.buffer 2 u4 device uint sums
    exit
.end
)",
                                        "test.s");
  ASSERT_TRUE(a.ok()) << a.diagnostics[0].message;
  isa::Module module = a.module;
  isa::Kernel& k = module.kernels[0];
  k.code.clear();
  auto emit = [&](isa::Opcode op, ScalarType type,
                  std::initializer_list<Operand> operands,
                  isa::AddressSpace space = isa::AddressSpace::kNone,
                  int vector = 1) {
    isa::Instruction inst;
    inst.op = op;
    inst.type = type;
    inst.space = space;
    inst.vector = static_cast<uint8_t>(vector);
    int i = 0;
    for (const Operand& o : operands) inst.operands[i++] = o;
    k.code.push_back(inst);
  };
  auto at = [](int buffer, int index, int scale) {
    isa::MemoryRef m;
    m.base_kind = isa::OperandKind::kUniform;
    m.base = static_cast<uint16_t>(buffer);
    m.has_index = true;
    m.index = static_cast<uint16_t>(index);
    m.scale = static_cast<uint8_t>(scale);
    return Operand::Memory(m);
  };
  constexpr int kValues = 260;
  constexpr int kId = 0, kQuad = 1, kBlock = 2, kFirstValue = 10,
                kFirstSum = 400, kIncremented = 700;
  uint32_t next_vreg = 1000;
  air::RegisterParts parts;
  auto part = [&](int offset) {
    return static_cast<int>(
        parts.Part(kBlock, offset, [&] { return next_vreg++; }));
  };
  const int second = part(2), third = part(4);
  using O = isa::Opcode;
  using R = Operand;
  emit(O::kMov, ScalarType::kUInt,
       {R::Reg(kId), R::Special(isa::SpecialRegister::kThreadPositionInGridX)});
  emit(O::kShl, ScalarType::kUInt, {R::Reg(kQuad), R::Reg(kId), R::Imm(2)});
  emit(O::kLoad, ScalarType::kULong, {R::Reg(kBlock), at(0, kQuad, 8)},
       isa::AddressSpace::kDevice, 4);
  for (int j = 0; j < kValues; ++j) {
    emit(O::kAdd, ScalarType::kUInt,
         {R::Reg(kFirstValue + j), R::Reg(kId), R::Imm(j)});
  }
  emit(O::kMov, ScalarType::kUInt, {R::Reg(kFirstSum), R::Imm(0)});
  for (int j = 0; j < kValues; ++j) {  // all values live until the sum starts
    emit(O::kMad, ScalarType::kUInt,
         {R::Reg(kFirstSum + j + 1), R::Reg(kFirstValue + j),
          R::Reg(kFirstValue + j), R::Reg(kFirstSum + j)});
  }
  emit(O::kStore, ScalarType::kUInt,
       {at(4, kId, 4), R::Reg(kFirstSum + kValues)},
       isa::AddressSpace::kDevice);
  emit(O::kAdd, ScalarType::kULong,
       {R::Reg(kIncremented), R::Reg(second), R::Imm(1)});
  emit(O::kMov, ScalarType::kULong, {R::Reg(third), R::Reg(kIncremented)});
  emit(O::kStore, ScalarType::kULong, {at(2, kQuad, 8), R::Reg(kBlock)},
       isa::AddressSpace::kDevice, 4);
  emit(O::kExit, ScalarType::kUInt, {});

  ASSERT_TRUE(
      air::AllocateRegisters(k, parts, [&] { return next_vreg++; }).ok());
  if (std::getenv("MTLEMU_PRINT_ISA") != nullptr) {
    std::printf("%s\n", isa::PrintModule(module).c_str());
  }
  const isa::Diagnostics problems = isa::Verify(module);
  ASSERT_TRUE(problems.empty()) << isa::FormatDiagnostics(problems);
  EXPECT_LE(k.registers, air::kAllocatableRegisters) << Describe(k);
  EXPECT_GT(ThreadMemoryAccesses(k), 0) << Describe(k);
  int wide_reloads = 0;
  for (const isa::Instruction& inst : k.code) {
    wide_reloads += inst.op == O::kLoad &&
                    inst.space == isa::AddressSpace::kThread &&
                    inst.vector == 4;
  }
  EXPECT_EQ(wide_reloads, 2) << "the block spilled and reloaded whole";

  KernelHarness h(std::move(module), "k");
  constexpr int kThreads = 64;
  std::vector<uint64_t> in(4 * kThreads);
  for (size_t i = 0; i < in.size(); ++i) {
    in[i] = 0x0123456789abcdefull * (i + 1);
  }
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<uint64_t>(in.size()));
  h.SetBuffer(2, std::vector<uint32_t>(kThreads));
  ASSERT_TRUE(Runs(h, {kThreads}, {32}));
  const std::vector<uint64_t> out = h.Read<uint64_t>(1);
  const std::vector<uint32_t> sums = h.Read<uint32_t>(2);
  for (uint32_t id = 0; id < kThreads; ++id) {
    const uint64_t* q = &in[4 * id];
    EXPECT_EQ(out[4 * id + 0], q[0]) << id;
    EXPECT_EQ(out[4 * id + 1], q[1]) << id;
    EXPECT_EQ(out[4 * id + 2], q[1] + 1) << id;
    EXPECT_EQ(out[4 * id + 3], q[3]) << id;
    uint32_t sum = 0;
    for (uint32_t j = 0; j < kValues; ++j) sum += (id + j) * (id + j);
    EXPECT_EQ(sums[id], sum) << id;
  }
}

}  // namespace
}  // namespace mtlemu
