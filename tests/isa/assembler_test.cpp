#include "isa/assembler.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "isa/names.h"
#include "isa/numeric.h"
#include "isa/printer.h"
#include "isa/verifier.h"

namespace mtlemu::isa {
namespace {

constexpr std::string_view kVectorAdd =
    R"(; vector_add: out[i] = a[i] + b[i] for i < n
.kernel vector_add
.buffer 0 u0 device float a
.buffer 1 u2 device float b
.buffer 2 u4 device float out
.buffer 3 u6 constant uint n
    mov.u32 r0, %thread_position_in_grid.x
    ld.constant.u32 r1, [u6]
    ge.u32 r2, r0, r1
    bnz r2, done, done
    ld.device.f32 r3, [u0 + r0*4]
    ld.device.f32 r4, [u2 + r0*4]
    add.f32 r5, r3, r4
    st.device.f32 [u4 + r0*4], r5
done:
    exit
.end
)";

::testing::AssertionResult Contains(const std::string& s,
                                    const std::string& part) {
  if (s.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << s << "' does not contain '" << part << "'";
}

// Assembles `text` expecting success; returns the module.
Module AssembleOk(std::string_view text) {
  AssembleResult r = Assemble(text, "test.s");
  EXPECT_TRUE(r.ok()) << FormatDiagnostics(r.diagnostics);
  return r.module;
}

// Assembles one instruction inside a kernel and returns it.
Instruction One(std::string_view line) {
  const std::string text =
      ".kernel k\n    " + std::string(line) + "\n    exit\n.end\n";
  AssembleResult r = Assemble(text, "test.s");
  EXPECT_TRUE(r.ok()) << line << "\n" << FormatDiagnostics(r.diagnostics);
  if (r.module.kernels.empty() || r.module.kernels[0].code.empty()) {
    return Instruction{};
  }
  return r.module.kernels[0].code[0];
}

uint64_t Imm(std::string_view line, int position) {
  return One(line).operands[position].imm;
}

// Assembles `text` expecting exactly one error; returns it.
Diagnostic OneError(std::string_view text) {
  AssembleResult r = Assemble(text, "bad.s");
  EXPECT_EQ(r.diagnostics.size(), 1u) << FormatDiagnostics(r.diagnostics);
  if (r.diagnostics.empty()) return Diagnostic{};
  return r.diagnostics[0];
}

// The error for one bad instruction line placed as line 2 of a kernel.
Diagnostic LineError(std::string_view line) {
  return OneError(".kernel k\n" + std::string(line) + "\n    exit\n.end\n");
}

TEST(AssemblerTest, VectorAdd) {
  AssembleResult r = Assemble(kVectorAdd, "vector_add.s");
  ASSERT_TRUE(r.ok()) << FormatDiagnostics(r.diagnostics);
  const Module& m = r.module;
  ASSERT_EQ(m.files.size(), 1u);
  EXPECT_EQ(m.files[0], "vector_add.s");
  ASSERT_EQ(m.kernels.size(), 1u);
  const Kernel& k = m.kernels[0];
  EXPECT_EQ(k.name, "vector_add");
  ASSERT_EQ(k.buffers.size(), 4u);
  EXPECT_EQ(k.buffers[0].index, 0);
  EXPECT_EQ(k.buffers[0].uniform, 0);
  EXPECT_EQ(k.buffers[0].space, AddressSpace::kDevice);
  EXPECT_EQ(k.buffers[0].element, ScalarType::kFloat);
  EXPECT_EQ(k.buffers[0].name, "a");
  EXPECT_EQ(k.buffers[3].uniform, 6);
  EXPECT_EQ(k.buffers[3].space, AddressSpace::kConstant);
  EXPECT_EQ(k.buffers[3].element, ScalarType::kUInt);
  ASSERT_EQ(k.code.size(), 9u);

  const Instruction& mov = k.code[0];
  EXPECT_EQ(mov.op, Opcode::kMov);
  EXPECT_EQ(mov.type, ScalarType::kUInt);
  EXPECT_EQ(mov.operands[0], Operand::Reg(0));
  EXPECT_EQ(mov.operands[1],
            Operand::Special(SpecialRegister::kThreadPositionInGridX));
  EXPECT_EQ(mov.location, (SourceLocation{0, 7, 5}));

  const Instruction& bnz = k.code[3];
  EXPECT_EQ(bnz.op, Opcode::kBranchNonZero);
  EXPECT_EQ(bnz.operands[1], Operand::Label(8));
  EXPECT_EQ(bnz.operands[2], Operand::Label(8));

  const Instruction& ld = k.code[4];
  EXPECT_EQ(ld.op, Opcode::kLoad);
  EXPECT_EQ(ld.space, AddressSpace::kDevice);
  EXPECT_EQ(ld.type, ScalarType::kFloat);
  MemoryRef mem;
  mem.base_kind = OperandKind::kUniform;
  mem.base = 0;
  mem.has_index = true;
  mem.index = 0;
  mem.scale = 4;
  EXPECT_EQ(ld.operands[1], Operand::Memory(mem));

  EXPECT_EQ(k.code[8].op, Opcode::kExit);
  EXPECT_EQ(k.code[8].location, (SourceLocation{0, 16, 5}));
  ASSERT_EQ(k.labels.size(), 1u);
  EXPECT_EQ(k.labels.at(8), "done");
  EXPECT_EQ(k.registers, 6);
  EXPECT_EQ(k.uniforms, 8);
  EXPECT_TRUE(Verify(m).empty()) << FormatDiagnostics(Verify(m));
}

TEST(AssemblerTest, EmptyInputIsAnEmptyModule) {
  Module m = AssembleOk("");
  EXPECT_TRUE(m.kernels.empty());
  ASSERT_EQ(m.files.size(), 1u);
  m = AssembleOk("; only a comment\n\n   // and another\n");
  EXPECT_TRUE(m.kernels.empty());
}

TEST(AssemblerTest, LabelsForwardBackwardAndInline) {
  const Module m = AssembleOk(R"(.kernel k
top:
    mov.u32 r0, 0
loop: add.u32 r0, r0, 1
    lt.u32 r1, r0, 10
    bnz r1, loop, out
    br out
out: alias:
    bz r0, top, end
end:
    exit
.end
)");
  const Kernel& k = m.kernels[0];
  ASSERT_EQ(k.code.size(), 7u);
  EXPECT_EQ(k.code[1].op, Opcode::kAdd);
  EXPECT_EQ(k.code[1].location.column, 7u);
  EXPECT_EQ(k.code[3].operands[1], Operand::Label(1));  // backward
  EXPECT_EQ(k.code[3].operands[2], Operand::Label(5));  // forward
  EXPECT_EQ(k.code[4].operands[0], Operand::Label(5));
  EXPECT_EQ(k.code[5].operands[1], Operand::Label(0));
  EXPECT_EQ(k.code[5].operands[2], Operand::Label(6));
  // Two labels on one instruction: the first names it.
  EXPECT_EQ(k.labels.at(0), "top");
  EXPECT_EQ(k.labels.at(1), "loop");
  EXPECT_EQ(k.labels.at(5), "out");
  EXPECT_EQ(k.labels.at(6), "end");
  EXPECT_EQ(k.labels.size(), 4u);
}

TEST(AssemblerTest, LabelsAreScopedToTheirKernel) {
  const Module m = AssembleOk(R"(.kernel a
x:
    br x
.end
.kernel b
    mov.u32 r0, 1
x:
    br x
.end
)");
  EXPECT_EQ(m.kernels[0].code[0].operands[0], Operand::Label(0));
  EXPECT_EQ(m.kernels[1].code[1].operands[0], Operand::Label(1));
}

TEST(AssemblerTest, Directives) {
  const Module m = AssembleOk(R"(.file 1 "src/k.metal"
.file 2 "a;b//c \"q\" \\ \x41"
.kernel k
.buffer 5 u10 constant void params
.buffer 0 u0 device half
.threadgroup 1 u12 scratch
.threadgroup 0 u13
.threadgroup_memory 1024
.thread_memory 32
.max_total_threads_per_threadgroup 512
    exit
.end
)");
  ASSERT_EQ(m.files.size(), 3u);
  EXPECT_EQ(m.files[0], "test.s");
  EXPECT_EQ(m.files[1], "src/k.metal");
  EXPECT_EQ(m.files[2], "a;b//c \"q\" \\ A");
  const Kernel& k = m.kernels[0];
  ASSERT_EQ(k.buffers.size(), 2u);
  EXPECT_EQ(k.buffers[0].index, 5);
  EXPECT_EQ(k.buffers[0].uniform, 10);
  EXPECT_EQ(k.buffers[0].space, AddressSpace::kConstant);
  EXPECT_FALSE(k.buffers[0].element.has_value());
  EXPECT_EQ(k.buffers[0].name, "params");
  EXPECT_EQ(k.buffers[1].element, ScalarType::kHalf);
  EXPECT_EQ(k.buffers[1].name, "");
  ASSERT_EQ(k.threadgroup_arguments.size(), 2u);
  EXPECT_EQ(k.threadgroup_arguments[0].index, 1);
  EXPECT_EQ(k.threadgroup_arguments[0].uniform, 12);
  EXPECT_EQ(k.threadgroup_arguments[0].name, "scratch");
  EXPECT_EQ(k.threadgroup_arguments[1].uniform, 13);
  EXPECT_EQ(k.static_threadgroup_memory, 1024u);
  EXPECT_EQ(k.thread_memory, 32u);
  EXPECT_EQ(k.max_total_threads_per_threadgroup, 512u);
  EXPECT_EQ(k.uniforms, 14);
}

TEST(AssemblerTest, ConstantData) {
  const Module m = AssembleOk(R"(.kernel k
.buffer 0 u0 device float out
.constant_data u2 6
.data 0000803F
.threadgroup_memory 16
.data abCD
    exit
.end
.kernel none
    exit
.end
)");
  const Kernel& k = m.kernels[0];
  EXPECT_EQ(k.constant_data_uniform, 2);
  EXPECT_EQ(k.constant_data,
            (std::vector<uint8_t>{0x00, 0x00, 0x80, 0x3f, 0xab, 0xcd}));
  EXPECT_EQ(k.uniforms, 4);
  EXPECT_EQ(m.kernels[1].constant_data_uniform, -1);
  EXPECT_TRUE(m.kernels[1].constant_data.empty());
  // A declared size of 0 needs no .data line.
  EXPECT_TRUE(AssembleOk(".kernel k\n.constant_data u0 0\n    exit\n.end\n")
                  .kernels[0]
                  .constant_data.empty());
}

TEST(AssemblerErrorTest, ConstantData) {
  auto in_kernel = [](std::string_view directives) {
    return OneError(".kernel k\n" + std::string(directives) +
                    "\n    exit\n.end\n");
  };
  Diagnostic d = in_kernel(".constant_data u2 8\n.data 00112233");
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.column, 1);
  EXPECT_TRUE(Contains(d.message,
                       ".constant_data declares 8 bytes but the .data lines "
                       "of kernel 'k' hold 4"));
  d = in_kernel(".constant_data u2 4\n.data 00112233\n.data 44");
  EXPECT_EQ(d.line, 4);
  EXPECT_TRUE(Contains(d.message,
                       ".data overflows the constant data: 5 bytes, but "
                       ".constant_data declares 4"));
  d = in_kernel(".data 00");
  EXPECT_EQ(d.line, 2);
  EXPECT_TRUE(
      Contains(d.message, ".data without .constant_data in kernel 'k'"));
  // The size check happens at .end when the kernel has no code.
  d = OneError(".kernel k\n.constant_data u0 2\n.end\n");
  EXPECT_EQ(d.line, 2);
  EXPECT_TRUE(Contains(d.message, "declares 2 bytes"));
  EXPECT_TRUE(Contains(in_kernel(".constant_data u2 1\n.data 0").message,
                       "expected hex bytes"));
  EXPECT_TRUE(Contains(in_kernel(".constant_data u2 2\n.data 00 11").message,
                       "unexpected '11'"));
  EXPECT_TRUE(Contains(in_kernel(".constant_data u2 1\n.data 0x").message,
                       "expected hex bytes"));
  EXPECT_TRUE(Contains(in_kernel(".constant_data r2 1\n.data 00").message,
                       "expected a uniform register"));
  EXPECT_TRUE(Contains(in_kernel(".constant_data u2").message,
                       "usage .constant_data uN SIZE"));
  EXPECT_TRUE(
      Contains(in_kernel(".constant_data u2 0\n.constant_data u4 0").message,
               "duplicate .constant_data in kernel 'k'"));
  EXPECT_TRUE(
      Contains(OneError(".kernel k\n    exit\n.data 00\n.end\n").message,
               ".data after the first instruction"));
  EXPECT_TRUE(
      Contains(OneError(".data 00\n").message, ".data outside a kernel"));
}

TEST(AssemblerTest, SourceLocations) {
  const Module m = AssembleOk(R"(.file 1 "k.metal"
.kernel k
    mov.u32 r0, 0
    .loc 1 20 7
    mov.u32 r1, 1
    mov.u32 r2, 2
    .loc 1 21
    mov.u32 r3, 3
    .loc 0 0
  mov.u32 r4, 4
    .loc 0 3 2
    mov.u32 r5, 5
    exit
.end
.kernel after
    exit
.end
)");
  const Kernel& k = m.kernels[0];
  EXPECT_EQ(k.code[0].location, (SourceLocation{0, 3, 5}));
  EXPECT_EQ(k.code[1].location, (SourceLocation{1, 20, 7}));
  EXPECT_EQ(k.code[2].location, (SourceLocation{1, 20, 7}));
  EXPECT_EQ(k.code[3].location, (SourceLocation{1, 21, 0}));
  EXPECT_EQ(k.code[4].location, (SourceLocation{0, 10, 3}));
  EXPECT_EQ(k.code[5].location, (SourceLocation{0, 3, 2}));
  EXPECT_EQ(k.code[6].location, (SourceLocation{0, 3, 2}));
  // A .loc ends with its kernel.
  EXPECT_EQ(m.kernels[1].code[0].location, (SourceLocation{0, 16, 5}));
}

TEST(AssemblerTest, Modifiers) {
  Instruction i = One("ld.threadgroup.v4.u16 r4, [r0]");
  EXPECT_EQ(i.op, Opcode::kLoad);
  EXPECT_EQ(i.space, AddressSpace::kThreadgroup);
  EXPECT_EQ(i.vector, 4);
  EXPECT_EQ(i.type, ScalarType::kUShort);

  i = One("st.device.v2.i64 [u0], r2");
  EXPECT_EQ(i.op, Opcode::kStore);
  EXPECT_EQ(i.vector, 2);
  EXPECT_EQ(i.type, ScalarType::kLong);
  EXPECT_EQ(i.operands[1], Operand::Reg(2));

  i = One("cvt.f32.i32 r0, r1");
  EXPECT_EQ(i.type, ScalarType::kFloat);
  EXPECT_EQ(i.type2, ScalarType::kInt);
  i = One("cvt_sat.u8.bf16 r0, r1");
  EXPECT_EQ(i.op, Opcode::kCvtSat);
  EXPECT_EQ(i.type, ScalarType::kUChar);
  EXPECT_EQ(i.type2, ScalarType::kBFloat);

  i = One("simdgroup_load.threadgroup.f16.transpose r0, [r2], 8");
  EXPECT_TRUE(i.transpose);
  EXPECT_EQ(i.space, AddressSpace::kThreadgroup);
  EXPECT_EQ(i.type, ScalarType::kHalf);
  EXPECT_EQ(i.operands[2], Operand::Imm(8));

  i = One("threadgroup_barrier.mem_threadgroup.mem_device");
  EXPECT_EQ(i.mem_flags, kMemDevice | kMemThreadgroup);
  i = One("threadgroup_barrier.mem_none");
  EXPECT_EQ(i.mem_flags, 0);
  i = One("simdgroup_barrier");
  EXPECT_EQ(i.mem_flags, 0);
  i = One("threadgroup_barrier.mem_texture.mem_threadgroup_imageblock");
  EXPECT_EQ(i.mem_flags, kMemTexture | kMemThreadgroupImageblock);

  // Shapes without a type keep the defaults.
  i = One("simd_ballot r0, r1");
  EXPECT_EQ(i.type, ScalarType::kUInt);
  EXPECT_EQ(i.type2, ScalarType::kUInt);
  EXPECT_EQ(i.space, AddressSpace::kNone);
  EXPECT_EQ(i.vector, 1);
}

TEST(AssemblerTest, OperandKinds) {
  const Instruction i =
      One("select.i32 r1, u7, %thread_index_in_simdgroup, -3");
  EXPECT_EQ(i.operands[0], Operand::Reg(1));
  EXPECT_EQ(i.operands[1], Operand::Uniform(7));
  EXPECT_EQ(i.operands[2],
            Operand::Special(SpecialRegister::kThreadIndexInSimdgroup));
  EXPECT_EQ(i.operands[3], Operand::Imm(0xFFFFFFFDu));
  EXPECT_EQ(One("mov.u32 r255, u255").operands[0], Operand::Reg(255));
  EXPECT_EQ(One("mov.u32 r255, u255").operands[1], Operand::Uniform(255));
  // Unused operand slots stay default.
  EXPECT_EQ(i.operands.size(), 4u);
  EXPECT_EQ(One("mov.u32 r0, 1").operands[2], Operand{});
}

MemoryRef Mem(std::string_view ref, std::string_view space = "threadgroup") {
  const Instruction i =
      One("ld." + std::string(space) + ".u32 r0, " + std::string(ref));
  EXPECT_EQ(i.operands[1].kind, OperandKind::kMemory) << ref;
  return i.operands[1].mem;
}

TEST(AssemblerTest, MemoryReferences) {
  MemoryRef m = Mem("[u4]", "device");
  EXPECT_EQ(m.base_kind, OperandKind::kUniform);
  EXPECT_EQ(m.base, 4);
  EXPECT_FALSE(m.has_index);
  EXPECT_EQ(m.displacement, 0);

  m = Mem("[r2 + 16]", "device");
  EXPECT_EQ(m.base_kind, OperandKind::kRegister);
  EXPECT_EQ(m.base, 2);
  EXPECT_EQ(m.displacement, 16);

  m = Mem("[u0 - 0x10]", "constant");
  EXPECT_EQ(m.displacement, -16);

  m = Mem("[u0+r3]", "device");
  EXPECT_TRUE(m.has_index);
  EXPECT_EQ(m.index, 3);
  EXPECT_EQ(m.scale, 1);
  EXPECT_FALSE(m.index_signed);

  m = Mem("[ u0 + sext( r3 ) * 16 - 2147483648 ]", "device");
  EXPECT_TRUE(m.has_index);
  EXPECT_TRUE(m.index_signed);
  EXPECT_EQ(m.scale, 16);
  EXPECT_EQ(m.displacement, INT32_MIN);

  m = Mem("[r3*4 + 16]");
  EXPECT_EQ(m.base_kind, OperandKind::kNone);
  EXPECT_TRUE(m.has_index);
  EXPECT_EQ(m.index, 3);
  EXPECT_EQ(m.scale, 4);
  EXPECT_EQ(m.displacement, 16);

  m = Mem("[r3*1]");
  EXPECT_EQ(m.base_kind, OperandKind::kNone);
  EXPECT_TRUE(m.has_index);

  m = Mem("[sext(r9)]", "thread");
  EXPECT_EQ(m.base_kind, OperandKind::kNone);
  EXPECT_TRUE(m.index_signed);
  EXPECT_EQ(m.index, 9);

  m = Mem("[64]");
  EXPECT_EQ(m.base_kind, OperandKind::kNone);
  EXPECT_FALSE(m.has_index);
  EXPECT_EQ(m.displacement, 64);

  m = Mem("[-8]");
  EXPECT_EQ(m.displacement, -8);

  m = Mem("[r1 + r2*8 + 2147483647]");
  EXPECT_EQ(m.base, 1);
  EXPECT_EQ(m.index, 2);
  EXPECT_EQ(m.scale, 8);
  EXPECT_EQ(m.displacement, INT32_MAX);
}

TEST(AssemblerTest, IntegerImmediates) {
  EXPECT_EQ(Imm("add.u32 r0, r1, 42", 2), 42u);
  EXPECT_EQ(Imm("add.u32 r0, r1, 0xFFFFFFFF", 2), 0xFFFFFFFFu);
  EXPECT_EQ(Imm("add.u32 r0, r1, 4294967295", 2), 0xFFFFFFFFu);
  EXPECT_EQ(Imm("add.i32 r0, r1, -1", 2), 0xFFFFFFFFu);
  EXPECT_EQ(Imm("add.i32 r0, r1, -2147483648", 2), 0x80000000u);
  EXPECT_EQ(Imm("add.i32 r0, r1, 0x80000000", 2), 0x80000000u);
  EXPECT_EQ(Imm("add.i8 r0, r1, -1", 2), 0xFFu);
  EXPECT_EQ(Imm("add.i8 r0, r1, -128", 2), 0x80u);
  EXPECT_EQ(Imm("add.u8 r0, r1, 255", 2), 0xFFu);
  EXPECT_EQ(Imm("add.i16 r0, r1, -2", 2), 0xFFFEu);
  EXPECT_EQ(Imm("add.u16 r0, r1, 0xabcd", 2), 0xABCDu);
  EXPECT_EQ(Imm("add.i64 r0, r2, -1", 2), UINT64_MAX);
  EXPECT_EQ(Imm("add.i64 r0, r2, -9223372036854775808", 2),
            0x8000000000000000u);
  EXPECT_EQ(Imm("add.u64 r0, r2, 18446744073709551615", 2), UINT64_MAX);
  EXPECT_EQ(Imm("add.u64 r0, r2, 0x123456789abcdef0", 2), 0x123456789ABCDEF0u);
  EXPECT_EQ(Imm("mov.b8 r0, 1", 1), 1u);
  EXPECT_EQ(Imm("add.i32 r0, r1, -0", 2), 0u);
  // The lane operand of a shuffle is i32 whatever the instruction's type.
  EXPECT_EQ(Imm("simd_shuffle_up.u64 r0, r2, -1", 2), 0xFFFFFFFFu);
  // select's condition and matrix strides are u32.
  EXPECT_EQ(Imm("select.f32 r0, 1, r1, r2", 1), 1u);
}

TEST(AssemblerTest, FloatImmediates) {
  EXPECT_EQ(Imm("add.f32 r0, r1, 1.0", 2), 0x3F800000u);
  EXPECT_EQ(Imm("add.f32 r0, r1, 1", 2), 0x3F800000u);
  EXPECT_EQ(Imm("add.f32 r0, r1, -0.5", 2), 0xBF000000u);
  EXPECT_EQ(Imm("add.f32 r0, r1, 1e-3", 2), std::bit_cast<uint32_t>(1e-3f));
  EXPECT_EQ(Imm("add.f32 r0, r1, 2.5E+2", 2), std::bit_cast<uint32_t>(250.0f));
  EXPECT_EQ(Imm("add.f32 r0, r1, 0.1", 2), std::bit_cast<uint32_t>(0.1f));
  EXPECT_EQ(Imm("add.f32 r0, r1, -0", 2), 0x80000000u);
  EXPECT_EQ(Imm("add.f32 r0, r1, -0.0", 2), 0x80000000u);
  EXPECT_EQ(Imm("add.f32 r0, r1, inf", 2), 0x7F800000u);
  EXPECT_EQ(Imm("add.f32 r0, r1, -inf", 2), 0xFF800000u);
  EXPECT_EQ(Imm("add.f32 r0, r1, nan", 2), 0x7FC00000u);
  EXPECT_EQ(Imm("add.f32 r0, r1, 0x7f800001", 2), 0x7F800001u);
  EXPECT_EQ(Imm("add.f32 r0, r1, 0x3f800000", 2), 0x3F800000u);
  EXPECT_EQ(Imm("add.f32 r0, r1, 1e-45", 2), 1u);
  EXPECT_EQ(Imm("add.f32 r0, r1, 123456789012345678901234567890", 2),
            std::bit_cast<uint32_t>(123456789012345678901234567890.0f));
  EXPECT_EQ(Imm("add.f32 r0, r1, 1e-50", 2), 0u);  // underflows to 0
  EXPECT_EQ(Imm("add.f32 r0, r1, -1e-50", 2), 0x80000000u);

  EXPECT_EQ(Imm("add.f16 r0, r1, 1.0", 2), 0x3C00u);
  EXPECT_EQ(Imm("add.f16 r0, r1, 65504", 2), 0x7BFFu);
  EXPECT_EQ(Imm("add.f16 r0, r1, -2", 2), 0xC000u);
  EXPECT_EQ(Imm("add.f16 r0, r1, 0.1", 2), FloatToHalfBits(0.1f));
  EXPECT_EQ(Imm("add.f16 r0, r1, inf", 2), 0x7C00u);
  EXPECT_EQ(Imm("add.f16 r0, r1, nan", 2), 0x7E00u);
  EXPECT_EQ(Imm("add.f16 r0, r1, -0.0", 2), 0x8000u);
  EXPECT_EQ(Imm("add.f16 r0, r1, 0x3c01", 2), 0x3C01u);
  EXPECT_EQ(Imm("add.f16 r0, r1, 6e-8", 2), 0x0001u);
  EXPECT_EQ(Imm("add.f16 r0, r1, 1e-9", 2), 0x0000u);
  // Rounded once from the decimal: just above the tie 1 + 2^-11 rounds up
  // (rounding to float first would land on the tie and round to even).
  EXPECT_EQ(Imm("add.f16 r0, r1, 1.000488281251", 2), 0x3C01u);
  EXPECT_EQ(Imm("add.f16 r0, r1, 1.00048828125", 2), 0x3C00u);

  EXPECT_EQ(Imm("add.bf16 r0, r1, 1.0", 2), 0x3F80u);
  EXPECT_EQ(Imm("add.bf16 r0, r1, -inf", 2), 0xFF80u);
  EXPECT_EQ(Imm("add.bf16 r0, r1, nan", 2), 0x7FC0u);
  EXPECT_EQ(Imm("add.bf16 r0, r1, 3.0e38", 2), FloatToBFloatBits(3.0e38f));
}

TEST(AssemblerTest, ParseImmediateErrors) {
  std::string error;
  EXPECT_FALSE(ParseImmediate("256", ScalarType::kUChar, &error));
  EXPECT_TRUE(Contains(error, "out of range for u8 (0..255)"));
  EXPECT_FALSE(ParseImmediate("-129", ScalarType::kChar, &error));
  EXPECT_TRUE(Contains(error, "out of range for i8 (-128..127)"));
  EXPECT_FALSE(ParseImmediate("128", ScalarType::kChar, &error));
  EXPECT_TRUE(Contains(error, "out of range"));
  EXPECT_FALSE(ParseImmediate("-1", ScalarType::kUInt, &error));
  EXPECT_TRUE(Contains(error, "out of range for u32"));
  EXPECT_FALSE(ParseImmediate("2147483648", ScalarType::kInt, &error));
  EXPECT_FALSE(ParseImmediate("0x100000000", ScalarType::kInt, &error));
  EXPECT_FALSE(
      ParseImmediate("18446744073709551616", ScalarType::kULong, &error));
  EXPECT_TRUE(Contains(error, "out of range"));
  EXPECT_FALSE(
      ParseImmediate("9223372036854775808", ScalarType::kLong, &error));
  EXPECT_FALSE(ParseImmediate("2", ScalarType::kBool, &error));
  EXPECT_FALSE(ParseImmediate("1.5", ScalarType::kUInt, &error));
  EXPECT_TRUE(Contains(error, "float literal '1.5' for integer type u32"));
  EXPECT_FALSE(ParseImmediate("1e3", ScalarType::kInt, &error));
  EXPECT_FALSE(ParseImmediate("inf", ScalarType::kInt, &error));
  EXPECT_FALSE(ParseImmediate("1e39", ScalarType::kFloat, &error));
  EXPECT_TRUE(Contains(error, "out of range for f32"));
  EXPECT_FALSE(
      ParseImmediate(std::string(50, '9'), ScalarType::kFloat, &error));
  EXPECT_TRUE(Contains(error, "float literal '9999"));
  EXPECT_TRUE(Contains(error, "out of range for f32"));
  EXPECT_FALSE(
      ParseImmediate("0x1000000000000000000", ScalarType::kFloat, &error));
  EXPECT_TRUE(Contains(error, "do not fit in f32"));
  EXPECT_FALSE(ParseImmediate("65520", ScalarType::kHalf, &error));
  EXPECT_TRUE(Contains(error, "out of range for f16"));
  EXPECT_FALSE(ParseImmediate("1e39", ScalarType::kBFloat, &error));
  EXPECT_FALSE(ParseImmediate("0x10000", ScalarType::kHalf, &error));
  EXPECT_TRUE(Contains(error, "do not fit in f16"));
  EXPECT_FALSE(ParseImmediate("0x100000000", ScalarType::kFloat, &error));
  EXPECT_FALSE(ParseImmediate("-0x3f800000", ScalarType::kFloat, &error));
  for (std::string_view bad :
       {"", "-", "0x", "1e", "1.2.3", "+1", "1f", "0x1g", ".5", "--1", "1e+",
        "nan(1)", "infinity", " 1", "1 ", "0x-1"}) {
    EXPECT_FALSE(ParseImmediate(bad, ScalarType::kFloat)) << bad;
    EXPECT_FALSE(ParseImmediate(bad, ScalarType::kInt)) << bad;
  }
  EXPECT_EQ(ParseImmediate("1.", ScalarType::kFloat), 0x3F800000u);
}

TEST(AssemblerTest, NamesAndLabelNames) {
  EXPECT_TRUE(IsValidName("vector_add"));
  EXPECT_TRUE(IsValidName(".L$1"));
  EXPECT_TRUE(IsValidName("r5"));
  EXPECT_FALSE(IsValidName(""));
  EXPECT_FALSE(IsValidName("5x"));
  EXPECT_FALSE(IsValidName("a-b"));
  EXPECT_TRUE(IsValidLabelName("loop"));
  EXPECT_TRUE(IsValidLabelName("r"));
  EXPECT_TRUE(IsValidLabelName("r5x"));
  EXPECT_FALSE(IsValidLabelName("r5"));
  EXPECT_FALSE(IsValidLabelName("u12"));
  EXPECT_FALSE(IsValidLabelName("inf"));
  EXPECT_FALSE(IsValidLabelName("nan"));
}

// --- errors
// -------------------------------------------------------------------

TEST(AssemblerErrorTest, UnknownMnemonicSuggestsClosest) {
  const Diagnostic d = LineError("    ad.f32 r0, r1, r2");
  EXPECT_EQ(d.file, "bad.s");
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.column, 5);
  EXPECT_EQ(d.message, "unknown mnemonic 'ad'; did you mean 'add'?");
  EXPECT_EQ(d.ToString(),
            "bad.s:2:5: error: unknown mnemonic 'ad'; did you mean 'add'?");
  EXPECT_TRUE(Contains(LineError("  simd_shufle.f32 r0, r1, r2").message,
                       "did you mean 'simd_shuffle'?"));
  EXPECT_EQ(LineError("  frobnicate r0").message,
            "unknown mnemonic 'frobnicate'");
}

TEST(AssemblerErrorTest, Modifiers) {
  Diagnostic d = LineError("    add.q32 r0, r1, r2");
  EXPECT_EQ(d.column, 9);
  EXPECT_TRUE(Contains(d.message, "unknown modifier 'q32' on 'add'"));
  EXPECT_TRUE(Contains(LineError("  add r0, r1, r2").message,
                       "missing type: 'add' takes a type suffix"));
  EXPECT_TRUE(Contains(LineError("  ld.f32 r0, [u0]").message,
                       "missing address space"));
  EXPECT_TRUE(
      Contains(LineError("  ld.f32.device r0, [u0]").message, "out of order"));
  EXPECT_TRUE(Contains(LineError("  ld.device.device.f32 r0, [u0]").message,
                       "duplicate address space"));
  EXPECT_TRUE(
      Contains(LineError("  cvt.f32 r0, r1").message, "missing source type"));
  EXPECT_TRUE(Contains(LineError("  add.f32.f32 r0, r1, r2").message,
                       "takes one type"));
  EXPECT_TRUE(Contains(LineError("  add.device.f32 r0, r1, r2").message,
                       "modifier 'device' is not allowed on 'add'"));
  EXPECT_TRUE(
      Contains(LineError("  add.v2.f32 r0, r1, r2").message, "not allowed"));
  EXPECT_TRUE(Contains(LineError("  ld.device.v5.f32 r0, [u0]").message,
                       "unknown modifier 'v5'"));
  EXPECT_TRUE(Contains(LineError("  exit.f32").message, "not allowed"));
  EXPECT_TRUE(
      Contains(LineError("  threadgroup_barrier.mem_none.mem_device").message,
               "mem_none cannot be combined"));
  EXPECT_TRUE(
      Contains(LineError("  threadgroup_barrier.mem_device.mem_device").message,
               "duplicate modifier"));
  EXPECT_TRUE(
      Contains(LineError("  add..f32 r0, r1, r2").message, "empty modifier"));
}

TEST(AssemblerErrorTest, OperandCount) {
  Diagnostic d = LineError("    add.f32 r0, r1");
  EXPECT_EQ(d.message, "add.f32 takes 3 operands (d, a, b), got 2");
  EXPECT_EQ(d.column, 5);
  d = LineError("    exit r0");
  EXPECT_EQ(d.message, "exit takes no operands, got 1");
  EXPECT_EQ(d.column, 10);
  EXPECT_EQ(LineError("  br").message, "br takes 1 operand (target), got 0");
  EXPECT_EQ(LineError("  st.device.f32 [u0]").message,
            "st.device.f32 takes 2 operands ([mem], s), got 1");
  EXPECT_TRUE(
      Contains(LineError("  add.f32 r0, , r1").message, "empty operand"));
  EXPECT_TRUE(
      Contains(LineError("  add.f32 r0, r1, r2,").message, "empty operand"));
}

TEST(AssemblerErrorTest, OperandKinds) {
  Diagnostic d = LineError("    add.f32 u0, r1, r2");
  EXPECT_EQ(d.column, 13);
  EXPECT_TRUE(Contains(d.message,
                       "operand 1 of add.f32 is the destination "
                       "and must be a register"));
  EXPECT_TRUE(Contains(LineError("  add.f32 r0, r1, done").message,
                       "operand 3 of add.f32 must be a register, uniform, "
                       "special register or immediate, got a label"));
  EXPECT_TRUE(Contains(LineError("  add.f32 r0, [u0], r1").message,
                       "got a memory reference"));
  EXPECT_TRUE(Contains(LineError("  ld.device.f32 r0, u0").message,
                       "operand 2 of ld.device.f32 must be a memory "
                       "reference"));
  EXPECT_TRUE(Contains(LineError("  br r0").message,
                       "operand 1 of br must be a label, got a register"));
  EXPECT_TRUE(Contains(LineError("  bnz r0, 5, x").message,
                       "must be a label, got an immediate"));
  EXPECT_TRUE(
      Contains(LineError("  mov.u32 r0, #5").message, "unexpected '#'"));
  EXPECT_TRUE(
      Contains(LineError("  mov.u32 r0, r1x").message, "got a label 'r1x'"));
}

TEST(AssemblerErrorTest, RegisterRanges) {
  Diagnostic d = LineError("    mov.u32 r256, r0");
  EXPECT_EQ(d.column, 13);
  EXPECT_EQ(d.message, "register 'r256' out of range (r0..r255)");
  EXPECT_EQ(LineError("  mov.u32 r0, u256").message,
            "uniform 'u256' out of range (u0..u255)");
  EXPECT_TRUE(Contains(LineError("  mov.u32 r0, r99999999999").message,
                       "out of range"));
  EXPECT_TRUE(Contains(LineError("  ld.device.u32 r0, [u0 + r300]").message,
                       "register 'r300' out of range"));
}

TEST(AssemblerErrorTest, SpecialRegisters) {
  const Diagnostic d = LineError("  mov.u32 r0, %thread_position_in_grd.x");
  EXPECT_EQ(d.column, 15);
  EXPECT_EQ(d.message,
            "unknown special register '%thread_position_in_grd.x'; did you "
            "mean '%thread_position_in_grid.x'?");
  EXPECT_TRUE(Contains(LineError("  mov.u32 r0, %").message,
                       "unknown special register"));
}

TEST(AssemblerErrorTest, MalformedMemoryReferences) {
  for (std::string_view ref : {"[u0 + r1",          "[]",
                               "[u0 + + r1]",       "[u0 - r1]",
                               "[r1*4 + u0]",       "[u0 + u1]",
                               "[sext(u1)*4]",      "[u0 + 4 + r1]",
                               "[u0 + r1*r2]",      "[u0 * 4]",
                               "[u0 + 2147483648]", "[u0 - 2147483649]",
                               "[u0 r1]",           "[u0 + r1 + r2]",
                               "[sext r1]",         "[u0 + 4*2]",
                               "[u0 + x]",          "[u0 + r1*]",
                               "[u0 + 0x]",         "[@]"}) {
    const Diagnostic d =
        LineError("  ld.threadgroup.u32 r0, " + std::string(ref));
    EXPECT_TRUE(Contains(d.message, "malformed memory reference")) << ref;
  }
  const Diagnostic d = LineError("  ld.device.u32 r0, [u0 + r1*3]");
  EXPECT_EQ(d.message, "scale must be 1, 2, 4, 8 or 16, got '3'");
  EXPECT_EQ(d.column, 30);
}

TEST(AssemblerErrorTest, Immediates) {
  const Diagnostic d = LineError("  add.u8 r0, r1, 256");
  EXPECT_EQ(d.column, 18);
  EXPECT_EQ(d.message,
            "operand 3 of add.u8: integer literal '256' is out of range for u8 "
            "(0..255)");
  EXPECT_TRUE(Contains(LineError("  add.u32 r0, r1, 1.5").message,
                       "float literal '1.5' for integer type u32"));
  EXPECT_TRUE(Contains(LineError("  add.f16 r0, r1, 1e5").message,
                       "out of range for f16"));
  EXPECT_TRUE(Contains(LineError("  add.f32 r0, r1, 1x").message,
                       "malformed immediate"));
}

TEST(AssemblerErrorTest, Labels) {
  Diagnostic d = OneError(".kernel k\n    br nowhere\n    exit\n.end\n");
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.column, 8);
  EXPECT_EQ(d.message, "undefined label 'nowhere' in kernel 'k'");
  d = OneError(".kernel k\n    br loop\nlop:\n    exit\n.end\n");
  EXPECT_TRUE(Contains(d.message, "did you mean 'lop'?"));
  d = OneError(".kernel k\nx:\n    mov.u32 r0, 0\nx:\n    exit\n.end\n");
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.message, "duplicate label 'x' (first defined at line 2)");
  d = OneError(".kernel k\nr5:\n    exit\n.end\n");
  EXPECT_TRUE(Contains(d.message, "label name 'r5' is reserved"));
  d = OneError("x:\n.kernel k\n    exit\n.end\n");
  EXPECT_EQ(d.message, "label 'x' outside a kernel");
  // A label of another kernel is not visible.
  d = OneError(".kernel a\nx:\n    exit\n.end\n.kernel b\n    br x\n.end\n");
  EXPECT_EQ(d.line, 6);
  EXPECT_TRUE(Contains(d.message, "undefined label 'x' in kernel 'b'"));
}

TEST(AssemblerErrorTest, KernelStructure) {
  Diagnostic d = OneError("    exit\n");
  EXPECT_EQ(d.line, 1);
  EXPECT_TRUE(Contains(d.message, "instruction outside a kernel"));
  d = OneError(".kernel k\n    exit\n");
  EXPECT_EQ(d.line, 1);
  EXPECT_EQ(d.message, "missing .end for kernel 'k'");
  d = OneError(".kernel k\n    exit\n.kernel j\n    exit\n.end\n");
  EXPECT_EQ(d.line, 3);
  EXPECT_TRUE(Contains(d.message, "missing .end for kernel 'k'"));
  d = OneError(".end\n");
  EXPECT_EQ(d.message, ".end outside a kernel");
  d = OneError(".kernel k\n    exit\n.end\n.kernel k\n    exit\n.end\n");
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.column, 9);
  EXPECT_EQ(d.message, "duplicate kernel name 'k' (first defined at line 1)");
  d = OneError(".kernel\n.end\n");
  EXPECT_TRUE(Contains(d.message, "usage .kernel NAME"));
  d = OneError(".kernel 9k\n    exit\n.end\n");
  EXPECT_TRUE(Contains(d.message, "not a valid name"));
  d = OneError(".kernel k\n    exit\n.buffer 0 u0 device float a\n.end\n");
  EXPECT_EQ(d.line, 3);
  EXPECT_TRUE(
      Contains(d.message, ".buffer after the first instruction of kernel 'k'"));
  d = OneError(".kernel k\n    exit\n.threadgroup_memory 16\n.end\n");
  EXPECT_TRUE(Contains(d.message, "after the first instruction"));
  d = OneError(".buffer 0 u0 device float a\n");
  EXPECT_EQ(d.message, ".buffer outside a kernel");
}

TEST(AssemblerErrorTest, Directives) {
  auto in_kernel = [](std::string_view directive) {
    return OneError(".kernel k\n" + std::string(directive) +
                    "\n    exit\n.end\n")
        .message;
  };
  EXPECT_TRUE(Contains(in_kernel(".bufer 0 u0 device float a"),
                       "unknown directive '.bufer'; did you mean "
                       "'.buffer'?"));
  EXPECT_TRUE(Contains(in_kernel(".buffer 0 u0 threadgroup float a"),
                       "must be device or constant"));
  EXPECT_TRUE(Contains(in_kernel(".buffer 0 u0 device flaot a"),
                       "unknown buffer element type 'flaot'"));
  EXPECT_TRUE(Contains(in_kernel(".buffer 0 r0 device float a"),
                       "expected a uniform register"));
  EXPECT_TRUE(Contains(in_kernel(".buffer -1 u0 device float a"),
                       "expected buffer index"));
  EXPECT_TRUE(Contains(in_kernel(".buffer 0 u0 device"), "missing operand"));
  EXPECT_TRUE(
      Contains(in_kernel(".buffer 0 u0 device float a b"), "unexpected 'b'"));
  EXPECT_TRUE(Contains(in_kernel(".threadgroup 0 u256"), "out of range"));
  EXPECT_TRUE(
      Contains(in_kernel(".threadgroup_memory 99999999999"), "out of range"));
  EXPECT_TRUE(Contains(in_kernel(".thread_memory 1\n.thread_memory 2"),
                       "duplicate .thread_memory"));
  EXPECT_TRUE(Contains(in_kernel(".loc 1 2"), "file 1 is not declared"));
  EXPECT_TRUE(Contains(in_kernel(".loc 0"), "missing operand"));
  EXPECT_TRUE(Contains(in_kernel(".file 0 \"x\""), "start at 1"));
  EXPECT_TRUE(Contains(in_kernel(".file 1 x"), "expected a quoted path"));
  EXPECT_TRUE(Contains(in_kernel(".file 1 \"x"), "unterminated string"));
  EXPECT_TRUE(Contains(in_kernel(".file 1 \"\\q\""), "unknown escape"));
  EXPECT_TRUE(Contains(in_kernel(".file 1 \"a\"\n.file 1 \"b\""),
                       "file 1 already declared as \"a\""));
}

TEST(AssemblerErrorTest, CollectsErrorsFromSeveralLines) {
  AssembleResult r = Assemble(R"(.kernel k
    add.f32 r0, r1
    mov.u32 r0, r1
    foo r1
    br nowhere
    exit
.end
)",
                              "bad.s");
  ASSERT_EQ(r.diagnostics.size(), 3u) << FormatDiagnostics(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].line, 2);
  EXPECT_EQ(r.diagnostics[1].line, 4);
  EXPECT_EQ(r.diagnostics[2].line, 5);
  EXPECT_FALSE(r.ok());
}

TEST(AssemblerErrorTest, StopsAfterTooManyErrors) {
  std::string text = ".kernel k\n";
  for (int i = 0; i < 100; ++i) text += "    bogus r0\n";
  text += "    exit\n.end\n";
  AssembleResult r = Assemble(text, "bad.s");
  ASSERT_EQ(r.diagnostics.size(), static_cast<size_t>(kMaxAssemblerErrors) + 1);
  EXPECT_TRUE(Contains(r.diagnostics.back().message, "too many errors"));
}

// Mutations of a valid program (deleted, inserted, replaced and duplicated
// bytes and lines, inserted tokens and random bytes): the assembler must
// return, whatever it is given; the verifier and printer must cope with
// whatever it returns.
TEST(AssemblerFuzzTest, MutatedInputsReturn) {
  const std::string seed = std::string(kVectorAdd) + R"(
.file 1 "x.metal"
.kernel more
.buffer 0 u0 device void p
.threadgroup 0 u2 t
.threadgroup_memory 64
    .loc 1 3 4
    mov.f16 r0, 0.5
    cvt.f32.f16 r1, r0
    ld.threadgroup.v2.u16 r2, [u2 + sext(r1)*2 - 4]
    atomic_add.device.u32 r4, [u0 + 8], 1
    simdgroup_load.device.f32.transpose r6, [u0], 8
    .loc 0 0
    threadgroup_barrier.mem_device.mem_threadgroup
loop:
    select.i64 r8, r4, r8, -1
    bz r4, loop, end
end:
    exit
.end
)";
  const std::string kTokens[] = {"r",
                                 "u",
                                 "%",
                                 "[",
                                 "]",
                                 ",",
                                 ".",
                                 ":",
                                 "0x",
                                 "-",
                                 "+",
                                 "*",
                                 "sext(",
                                 ")",
                                 "\"",
                                 ";",
                                 "//",
                                 "\n",
                                 " ",
                                 "nan",
                                 "inf",
                                 "1e40",
                                 "r255",
                                 "u255",
                                 "\t",
                                 ".end\n",
                                 ".kernel q\n",
                                 "exit\n",
                                 ".loc 1 2 3\n",
                                 ".file 3 \"x\"\n",
                                 "99999999999999999999",
                                 "v4",
                                 "f16",
                                 "mem_none",
                                 std::string("\0", 1)};
  ASSERT_TRUE(Assemble(seed, "seed.s").ok());
  std::mt19937 rng(20240607);
  int assembled = 0;
  for (int iteration = 0; iteration < 2000; ++iteration) {
    std::string text = seed;
    const int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations; ++m) {
      if (text.empty()) text = "x";
      const size_t pos = rng() % text.size();
      switch (rng() % 7) {
        case 0:
          text.erase(pos, 1 + rng() % 8);
          break;
        case 1:
          text.insert(pos, 1, static_cast<char>(rng()));
          break;
        case 2:
          text[pos] = static_cast<char>(rng());
          break;
        case 3:
          text.insert(pos, kTokens[rng() % std::size(kTokens)]);
          break;
        case 4: {  // duplicate a line somewhere
          size_t begin = text.rfind('\n', pos);
          begin = begin == std::string::npos ? 0 : begin;
          size_t end = text.find('\n', pos);
          end = end == std::string::npos ? text.size() : end;
          const std::string line = text.substr(begin, end - begin);
          text.insert(rng() % text.size(), line);
          break;
        }
        case 5:
          text.erase(pos, rng() % 40);
          break;
        default:
          text[pos] = "0123456789"[rng() % 10];
          break;
      }
    }
    const AssembleResult r = Assemble(text, "fuzz.s");
    (void)Verify(r.module);
    (void)PrintModule(r.module);
    if (r.ok()) ++assembled;
  }
  // Some mutations keep the program valid.
  EXPECT_GT(assembled, 0);
}

}  // namespace
}  // namespace mtlemu::isa
