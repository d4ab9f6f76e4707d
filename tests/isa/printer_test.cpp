#include "isa/printer.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "isa/assembler.h"
#include "isa/binary_module.h"
#include "isa/numeric.h"
#include "isa/verifier.h"

#ifndef MTLEMU_TEST_DATA_DIR
#error "define MTLEMU_TEST_DATA_DIR as the tests/ source directory"
#endif

namespace mtlemu::isa {
namespace {

const std::string kGoldenPath =
    std::string(MTLEMU_TEST_DATA_DIR) + "/isa/golden/all_opcodes.s";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Module WithoutLocations(Module m) {
  for (Kernel& k : m.kernels) {
    for (Instruction& inst : k.code) inst.location = SourceLocation{};
  }
  return m;
}

// Assembles `text`, prints it, reassembles the print and checks that the
// module survived (except file-0 locations) and that printing is stable.
// Returns the printed text.
std::string RoundTrip(std::string_view text) {
  const AssembleResult first = Assemble(text, "rt.s");
  EXPECT_TRUE(first.ok()) << FormatDiagnostics(first.diagnostics);
  const std::string printed = PrintModule(first.module);
  const AssembleResult second = Assemble(printed, "rt.s");
  EXPECT_TRUE(second.ok()) << FormatDiagnostics(second.diagnostics) << "\n"
                           << printed;
  EXPECT_TRUE(WithoutLocations(first.module) == WithoutLocations(second.module))
      << printed;
  EXPECT_EQ(PrintModule(second.module), printed);
  return printed;
}

TEST(PrinterGoldenTest, EveryOpcodeAppearsInTheGolden) {
  const std::string text = ReadFile(kGoldenPath);
  ASSERT_FALSE(text.empty()) << "cannot read " << kGoldenPath;
  const AssembleResult r = Assemble(text, kGoldenPath);
  ASSERT_TRUE(r.ok()) << FormatDiagnostics(r.diagnostics);
  std::set<Opcode> seen;
  std::set<std::pair<Opcode, ScalarType>> typed;
  std::set<OperandKind> kinds;
  std::set<AddressSpace> spaces;
  std::set<int> vectors;
  bool transpose = false;
  for (const Kernel& k : r.module.kernels) {
    for (const Instruction& inst : k.code) {
      seen.insert(inst.op);
      spaces.insert(inst.space);
      vectors.insert(inst.vector);
      transpose |= inst.transpose;
      for (int i = 0; i < inst.NumOperands(); ++i) {
        kinds.insert(inst.operands[i].kind);
      }
    }
  }
  for (int i = 0; i < kNumOpcodes; ++i) {
    const Opcode op = static_cast<Opcode>(i);
    EXPECT_TRUE(seen.count(op))
        << "opcode '" << Mnemonic(op) << "' has no line in " << kGoldenPath;
  }
  for (OperandKind kind :
       {OperandKind::kRegister, OperandKind::kUniform, OperandKind::kImmediate,
        OperandKind::kSpecial, OperandKind::kLabel, OperandKind::kMemory}) {
    EXPECT_TRUE(kinds.count(kind)) << static_cast<int>(kind);
  }
  for (AddressSpace space :
       {AddressSpace::kDevice, AddressSpace::kConstant,
        AddressSpace::kThreadgroup, AddressSpace::kThread}) {
    EXPECT_TRUE(spaces.count(space)) << AddressSpaceName(space);
  }
  for (int v = 1; v <= 4; ++v) EXPECT_TRUE(vectors.count(v)) << v;
  EXPECT_TRUE(transpose);
}

TEST(PrinterGoldenTest, GoldenIsCanonicalAndRoundTrips) {
  const std::string text = ReadFile(kGoldenPath);
  ASSERT_FALSE(text.empty()) << "cannot read " << kGoldenPath;
  const AssembleResult first = Assemble(text, "all_opcodes.s");
  ASSERT_TRUE(first.ok()) << FormatDiagnostics(first.diagnostics);
  const Diagnostics problems = Verify(first.module);
  EXPECT_TRUE(problems.empty()) << FormatDiagnostics(problems);

  const std::string printed = PrintModule(first.module);
  EXPECT_EQ(printed, text);

  const AssembleResult second = Assemble(printed, "all_opcodes.s");
  ASSERT_TRUE(second.ok()) << FormatDiagnostics(second.diagnostics);
  // The golden is canonical, so even file-0 locations come back the same.
  EXPECT_TRUE(first.module == second.module);
  EXPECT_EQ(PrintModule(second.module), printed);
}

TEST(PrinterTest, CanonicalForm) {
  const std::string printed = RoundTrip(R"(
; comment
.kernel   k   // trailing comment
.buffer 1 u2 device float  out
.buffer 0 u0 constant void
.threadgroup 0 u4 tg
.threadgroup_memory 0x100
    mov.u32   r0,%thread_index_in_threadgroup
again:  add.f32 r1,r1,1
    ld.device.f32 r2, [u0+r0*1+0]
    ld.threadgroup.f32 r2, [u4 + sext(r0)*4 - 0x10]
    ld.threadgroup.f32 r2, [r0]
    ld.threadgroup.f32 r2, [r0 * 1]
    st.device.u8 [u2 - 0], 0xff
    threadgroup_barrier
    bnz r0, again, end
end: exit
.end
)");
  EXPECT_EQ(printed, R"(.kernel k
.buffer 1 u2 device float out
.buffer 0 u0 constant void
.threadgroup 0 u4 tg
.threadgroup_memory 256
    mov.u32 r0, %thread_index_in_threadgroup
again:
    add.f32 r1, r1, 1.0
    ld.device.f32 r2, [u0 + r0]
    ld.threadgroup.f32 r2, [u4 + sext(r0)*4 - 16]
    ld.threadgroup.f32 r2, [r0]
    ld.threadgroup.f32 r2, [r0*1]
    st.device.u8 [u2], 255
    threadgroup_barrier.mem_none
    bnz r0, again, end
end:
    exit
.end
)");
}

TEST(PrinterTest, ModuleLayout) {
  const std::string printed = RoundTrip(R"(.kernel a
    exit
.end
.kernel b
    exit
.end
)");
  EXPECT_EQ(printed,
            ".kernel a\n    exit\n.end\n\n.kernel b\n    exit\n.end\n");
  EXPECT_EQ(PrintModule(Module{}), "");
}

TEST(PrinterTest, ConstantDataRoundTrips) {
  // 40 bytes: a line of 32 and a line of 8, after the argument directives.
  const std::string printed = RoundTrip(R"(.kernel k
.constant_data u4 40
.buffer 0 u0 device float out
.data 000102030405060708090a0b0c0d0e0f
.data 101112131415161718191a1b1c1d1e1f2021
.threadgroup 0 u2
.data 222324252627
.thread_memory 16
    exit
.end
)");
  EXPECT_EQ(
      printed,
      ".kernel k\n"
      ".buffer 0 u0 device float out\n"
      ".threadgroup 0 u2\n"
      ".constant_data u4 40\n"
      ".data 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e"
      "1f\n"
      ".data 2021222324252627\n"
      ".thread_memory 16\n"
      "    exit\n"
      ".end\n");
  EXPECT_EQ(RoundTrip(".kernel k\n.constant_data u0 0\n    exit\n.end\n"),
            ".kernel k\n.constant_data u0 0\n    exit\n.end\n");
}

TEST(BinaryModuleTest, ConstantDataRoundTrips) {
  const AssembleResult a = Assemble(R"(.kernel k
.constant_data u2 5
.data 0102030405
    exit
.end
.kernel none
    exit
.end
)",
                                    "b.s");
  ASSERT_TRUE(a.ok()) << FormatDiagnostics(a.diagnostics);
  const std::vector<uint8_t> bytes = SerializeModule(a.module);
  Module back;
  std::string error;
  ASSERT_TRUE(DeserializeModule(bytes, back, error)) << error;
  EXPECT_TRUE(back == a.module);
  EXPECT_EQ(back.kernels[0].constant_data_uniform, 2);
  EXPECT_EQ(back.kernels[1].constant_data_uniform, -1);
  // Every truncation is an error, never a crash or a huge allocation.
  for (size_t n = 0; n < bytes.size(); ++n) {
    Module m;
    EXPECT_FALSE(DeserializeModule(std::span(bytes.data(), n), m, error)) << n;
  }
}

// A damaged uniform number in an argument is an error, not a number that
// ComputeResources overflows on (found by tests/fuzz: INT_MAX as the
// constant data's uniform).
TEST(BinaryModuleTest, RejectsUniformsOutOfRange) {
  const AssembleResult a = Assemble(R"(.kernel k
.buffer 0 u0 device float out
.threadgroup 0 u2
.constant_data u4 4
.data 01020304
    exit
.end
)",
                                    "b.s");
  ASSERT_TRUE(a.ok()) << FormatDiagnostics(a.diagnostics);
  const auto damaged = [&](auto damage) {
    Module m = a.module;
    damage(m.kernels[0]);
    Module back;
    std::string error;
    const bool read = DeserializeModule(SerializeModule(m), back, error);
    EXPECT_EQ(read, error.empty()) << error;
    return !read;
  };
  constexpr int kIntMax = std::numeric_limits<int>::max();
  EXPECT_TRUE(damaged([](Kernel& k) { k.constant_data_uniform = kIntMax; }));
  EXPECT_TRUE(damaged([](Kernel& k) { k.constant_data_uniform = -2; }));
  EXPECT_TRUE(damaged([](Kernel& k) { k.buffers[0].uniform = kIntMax; }));
  EXPECT_TRUE(damaged([](Kernel& k) { k.buffers[0].uniform = kMaxUniforms; }));
  EXPECT_TRUE(
      damaged([](Kernel& k) { k.threadgroup_arguments[0].uniform = kIntMax; }));
  EXPECT_FALSE(damaged([](Kernel&) {}));
}

TEST(PrinterTest, SourceLocationsInOtherFilesRoundTrip) {
  const std::string text = R"(.file 1 "k.metal"
.file 2 "we\"ird\\name\ttab"

.kernel k
    mov.u32 r0, 0
    .loc 1 12 5
    mov.u32 r1, 1
    mov.u32 r2, 2
    .loc 2 7
    mov.u32 r3, 3
    .loc 0 0
    mov.u32 r4, 4
    .loc 1 12 5
    exit
.end
)";
  const AssembleResult first = Assemble(text, "loc.s");
  ASSERT_TRUE(first.ok()) << FormatDiagnostics(first.diagnostics);
  const std::string printed = PrintModule(first.module);
  EXPECT_EQ(printed, text);
  const AssembleResult second = Assemble(printed, "loc.s");
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(first.module == second.module);
  EXPECT_EQ(second.module.files[2], "we\"ird\\name\ttab");
  EXPECT_EQ(second.module.kernels[0].code[3].location,
            (SourceLocation{2, 7, 0}));
}

TEST(PrinterTest, FileZeroLocationsAreReassignedByLine) {
  // A compiler-made module whose file 0 is the kernel source.
  Module m;
  m.files = {"k.metal", "helpers.h"};
  Kernel k;
  k.name = "k";
  Instruction mov;
  mov.op = Opcode::kMov;
  mov.operands[0] = Operand::Reg(0);
  mov.operands[1] = Operand::Imm(7);
  mov.location = {0, 40, 3};
  Instruction exit;
  exit.location = {1, 9, 1};
  k.code = {mov, exit};
  ComputeResources(k);
  m.kernels.push_back(k);
  ASSERT_TRUE(Verify(m).empty()) << FormatDiagnostics(Verify(m));

  const std::string printed = PrintModule(m);
  EXPECT_EQ(printed, R"(.file 1 "helpers.h"

.kernel k
    mov.u32 r0, 7
    .loc 1 9 1
    exit
.end
)");
  const AssembleResult r = Assemble(printed, "k.metal");
  ASSERT_TRUE(r.ok()) << FormatDiagnostics(r.diagnostics);
  EXPECT_TRUE(WithoutLocations(r.module) == WithoutLocations(m));
  EXPECT_EQ(r.module.kernels[0].code[0].location, (SourceLocation{0, 4, 5}));
  EXPECT_EQ(r.module.kernels[0].code[1].location, (SourceLocation{1, 9, 1}));
}

TEST(PrinterTest, GeneratedLabelNames) {
  Kernel k;
  k.name = "k";
  Instruction br;
  br.op = Opcode::kBranch;
  br.operands[0] = Operand::Label(2);
  Instruction bnz;
  bnz.op = Opcode::kBranchNonZero;
  bnz.operands[0] = Operand::Reg(0);
  bnz.operands[1] = Operand::Label(3);
  bnz.operands[2] = Operand::Label(3);
  Instruction exit;
  k.code = {br, bnz, bnz, exit};
  k.labels[0] = "L2";  // taken by another instruction
  ComputeResources(k);

  const std::map<uint32_t, std::string> names = LabelNames(k);
  EXPECT_EQ(names.at(0), "L2");
  EXPECT_EQ(names.at(2), "L2_1");
  EXPECT_EQ(names.at(3), "L3");
  EXPECT_EQ(PrintInstruction(k.code[0], k), "br L2_1");
  EXPECT_EQ(PrintInstruction(k.code[1], k), "bnz r0, L3, L3");

  Module m;
  m.files = {"gen.s"};
  m.kernels.push_back(k);
  const std::string printed = PrintModule(m);
  EXPECT_EQ(printed, R"(.kernel k
L2:
    br L2_1
    bnz r0, L3, L3
L2_1:
    bnz r0, L3, L3
L3:
    exit
.end
)");
  const AssembleResult r = Assemble(printed, "gen.s");
  ASSERT_TRUE(r.ok()) << FormatDiagnostics(r.diagnostics);
  // The code is the same; the reassembled kernel names the targets.
  EXPECT_TRUE(WithoutLocations(r.module).kernels[0].code ==
              WithoutLocations(m).kernels[0].code);
  EXPECT_EQ(r.module.kernels[0].labels, names);
  EXPECT_EQ(PrintModule(r.module), printed);
}

TEST(PrinterTest, Instructions) {
  Kernel k;
  Instruction i;
  i.op = Opcode::kLoad;
  i.space = AddressSpace::kDevice;
  i.vector = 3;
  i.type = ScalarType::kShort;
  MemoryRef m;
  m.base_kind = OperandKind::kRegister;
  m.base = 4;
  m.has_index = true;
  m.index_signed = true;
  m.index = 7;
  m.scale = 2;
  m.displacement = INT32_MIN;
  i.operands[0] = Operand::Reg(10);
  i.operands[1] = Operand::Memory(m);
  EXPECT_EQ(PrintInstruction(i, k),
            "ld.device.v3.i16 r10, [r4 + sext(r7)*2 - 2147483648]");

  Instruction cvt;
  cvt.op = Opcode::kCvtSat;
  cvt.type = ScalarType::kUChar;
  cvt.type2 = ScalarType::kFloat;
  cvt.operands[0] = Operand::Reg(1);
  cvt.operands[1] = Operand::Imm(0xBF800000u);
  EXPECT_EQ(PrintInstruction(cvt, k), "cvt_sat.u8.f32 r1, -1.0");

  Instruction bar;
  bar.op = Opcode::kThreadgroupBarrier;
  bar.mem_flags = kMemDevice | kMemTexture;
  EXPECT_EQ(PrintInstruction(bar, k),
            "threadgroup_barrier.mem_device.mem_texture");

  Instruction st;
  st.op = Opcode::kSimdgroupStore;
  st.space = AddressSpace::kThreadgroup;
  st.type = ScalarType::kHalf;
  st.transpose = true;
  MemoryRef none;
  st.operands[0] = Operand::Memory(none);
  st.operands[1] = Operand::Reg(8);
  st.operands[2] = Operand::Uniform(3);
  EXPECT_EQ(PrintInstruction(st, k),
            "simdgroup_store.threadgroup.f16.transpose [0], r8, u3");

  Instruction vote;
  vote.op = Opcode::kSimdBallot;
  vote.operands[0] = Operand::Reg(0);
  vote.operands[1] = Operand::Special(SpecialRegister::kThreadIndexInQuadgroup);
  EXPECT_EQ(PrintInstruction(vote, k),
            "simd_ballot r0, %thread_index_in_quadgroup");

  // Malformed instructions print something instead of crashing.
  Instruction bad;
  bad.op = static_cast<Opcode>(9999);
  EXPECT_TRUE(PrintInstruction(bad, k).starts_with("<invalid opcode"));
  Instruction bad_type;
  bad_type.op = Opcode::kAdd;
  bad_type.type = static_cast<ScalarType>(200);
  bad_type.operands[2] = Operand::Imm(5);
  EXPECT_FALSE(PrintInstruction(bad_type, k).empty());
}

TEST(PrintImmediateTest, Integers) {
  EXPECT_EQ(PrintImmediate(42, ScalarType::kUInt), "42");
  EXPECT_EQ(PrintImmediate(0xFFFFFFFF, ScalarType::kUInt), "4294967295");
  EXPECT_EQ(PrintImmediate(0xFFFFFFFF, ScalarType::kInt), "-1");
  EXPECT_EQ(PrintImmediate(0x80000000, ScalarType::kInt), "-2147483648");
  EXPECT_EQ(PrintImmediate(0xFF, ScalarType::kChar), "-1");
  EXPECT_EQ(PrintImmediate(0x7F, ScalarType::kChar), "127");
  EXPECT_EQ(PrintImmediate(0xFF, ScalarType::kUChar), "255");
  EXPECT_EQ(PrintImmediate(0x8000, ScalarType::kShort), "-32768");
  EXPECT_EQ(PrintImmediate(UINT64_MAX, ScalarType::kULong),
            "18446744073709551615");
  EXPECT_EQ(PrintImmediate(0x8000000000000000u, ScalarType::kLong),
            "-9223372036854775808");
  EXPECT_EQ(PrintImmediate(1, ScalarType::kBool), "1");
}

TEST(PrintImmediateTest, Floats) {
  auto f32 = [](float f) {
    return PrintImmediate(std::bit_cast<uint32_t>(f), ScalarType::kFloat);
  };
  EXPECT_EQ(f32(1.0f), "1.0");
  EXPECT_EQ(f32(-2.0f), "-2.0");
  EXPECT_EQ(f32(0.0f), "0.0");
  EXPECT_EQ(f32(-0.0f), "-0.0");
  EXPECT_EQ(f32(0.1f), "0.1");
  EXPECT_EQ(f32(-0.5f), "-0.5");
  EXPECT_EQ(f32(1.5e-7f), "1.5e-7");
  EXPECT_EQ(f32(1e20f), "1e20");
  EXPECT_EQ(f32(16777216.0f), "16777216.0");
  EXPECT_EQ(f32(123456.789f), "123456.79");
  EXPECT_EQ(f32(3.4028235e38f), "3.4028235e38");
  EXPECT_EQ(f32(std::bit_cast<float>(1u)), "1e-45");
  EXPECT_EQ(f32(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(f32(-std::numeric_limits<float>::infinity()), "-inf");
  EXPECT_EQ(PrintImmediate(0x7FC00000, ScalarType::kFloat), "0x7fc00000");
  EXPECT_EQ(PrintImmediate(0xFF800001, ScalarType::kFloat), "0xff800001");

  EXPECT_EQ(PrintImmediate(0x3C00, ScalarType::kHalf), "1.0");
  EXPECT_EQ(PrintImmediate(0x7BFF, ScalarType::kHalf), "65504.0");
  EXPECT_EQ(PrintImmediate(FloatToHalfBits(0.1f), ScalarType::kHalf), "0.1");
  EXPECT_EQ(PrintImmediate(0x0001, ScalarType::kHalf), "6e-8");
  EXPECT_EQ(PrintImmediate(0x8000, ScalarType::kHalf), "-0.0");
  EXPECT_EQ(PrintImmediate(0x7C00, ScalarType::kHalf), "inf");
  EXPECT_EQ(PrintImmediate(0x7E00, ScalarType::kHalf), "0x7e00");
  EXPECT_EQ(PrintImmediate(0xFC01, ScalarType::kHalf), "0xfc01");

  EXPECT_EQ(PrintImmediate(0x3F80, ScalarType::kBFloat), "1.0");
  EXPECT_EQ(PrintImmediate(0x4780, ScalarType::kBFloat), "65536.0");
  EXPECT_EQ(PrintImmediate(0x7FC0, ScalarType::kBFloat), "0x7fc0");
}

// Every half and bfloat bit pattern prints to text that parses back to the
// same bits; so do random floats and the float edge cases.
TEST(PrintImmediateTest, FloatsRoundTripExactly) {
  for (ScalarType type : {ScalarType::kHalf, ScalarType::kBFloat}) {
    for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
      const std::string text = PrintImmediate(bits, type);
      std::string error;
      ASSERT_EQ(ParseImmediate(text, type, &error), bits)
          << IsaSuffix(type) << " " << std::hex << bits << " -> " << text << " "
          << error;
    }
  }
  std::mt19937 rng(5);
  std::vector<uint32_t> samples = {0x00000001, 0x007FFFFF, 0x00800000,
                                   0x7F7FFFFF, 0x80000001, 0xFF7FFFFF,
                                   0x3F800001, 0x4B7FFFFF, 0x4B800001};
  for (int i = 0; i < 200000; ++i) samples.push_back(rng());
  for (uint32_t bits : samples) {
    const std::string text = PrintImmediate(bits, ScalarType::kFloat);
    ASSERT_EQ(ParseImmediate(text, ScalarType::kFloat), bits)
        << std::hex << bits << " -> " << text;
  }
  for (ScalarType type :
       {ScalarType::kChar, ScalarType::kUChar, ScalarType::kShort,
        ScalarType::kUShort, ScalarType::kInt, ScalarType::kUInt,
        ScalarType::kLong, ScalarType::kULong}) {
    const int width = SizeOf(type) * 8;
    const uint64_t mask = width == 64 ? UINT64_MAX : (uint64_t{1} << width) - 1;
    for (int i = 0; i < 2000; ++i) {
      const uint64_t bits = ((uint64_t{rng()} << 32) | rng()) & mask;
      ASSERT_EQ(ParseImmediate(PrintImmediate(bits, type), type), bits)
          << IsaSuffix(type) << " " << bits;
    }
  }
}

}  // namespace
}  // namespace mtlemu::isa
