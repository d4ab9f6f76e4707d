#include "isa/verifier.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <string_view>

#include "isa/assembler.h"
#include "isa/shape.h"

namespace mtlemu::isa {
namespace {

constexpr std::string_view kGood = R"(.kernel good
.buffer 0 u0 device float a
.buffer 1 u2 constant uint n
.threadgroup 0 u4 scratch
.threadgroup_memory 1024
.max_total_threads_per_threadgroup 1024
    mov.u32 r0, %thread_position_in_grid.x
    ld.constant.u32 r1, [u2]
    ge.u32 r2, r0, r1
    bnz r2, done, done
    ld.device.f32 r3, [u0 + r0*4]
    st.threadgroup.f32 [u4 + r0*4], r3
    threadgroup_barrier.mem_threadgroup
    atomic_add.device.f32 r3, [u0], 1.0
    atomic_add.threadgroup.u32 r4, [16], 1
    simdgroup_load.constant.f32 r6, [u2], 8
    simdgroup_store.threadgroup.f32 [r0*4], r6, 8
    st.thread.u64 [r0*8], r8
    add.u64 r254, r8, 1
done:
    exit
.end
)";

Module AssembleOk(std::string_view text) {
  AssembleResult r = Assemble(text, "v.s");
  EXPECT_TRUE(r.ok()) << FormatDiagnostics(r.diagnostics);
  return r.module;
}

// Verifies `m` and expects a diagnostic containing `part`.
::testing::AssertionResult HasError(const Module& m, std::string_view part) {
  const Diagnostics d = Verify(m);
  for (const Diagnostic& diag : d) {
    if (diag.message.find(part) != std::string::npos) {
      return ::testing::AssertionSuccess();
    }
  }
  return ::testing::AssertionFailure()
         << "no diagnostic contains '" << part << "'; got:\n"
         << FormatDiagnostics(d);
}

// Wraps instruction lines into a kernel that is otherwise valid.
Module KernelWith(std::string_view lines, std::string_view header = "") {
  return AssembleOk(".kernel k\n.buffer 0 u0 device float a\n" +
                    std::string(header) + std::string(lines) +
                    "\n    exit\n.end\n");
}

// The good kernel, changed by `mutate`.
Module Mutated(const std::function<void(Kernel&)>& mutate) {
  Module m = AssembleOk(kGood);
  mutate(m.kernels[0]);
  return m;
}

TEST(VerifierTest, GoodKernelHasNoDiagnostics) {
  const Module m = AssembleOk(kGood);
  const Diagnostics d = Verify(m);
  EXPECT_TRUE(d.empty()) << FormatDiagnostics(d);
  EXPECT_TRUE(VerifyKernel(m, m.kernels[0]).empty());
}

TEST(VerifierTest, DiagnosticsNameKernelInstructionAndLocation) {
  const Module m = KernelWith("    add.b8 r0, r1, r2");
  const Diagnostics d = Verify(m);
  ASSERT_EQ(d.size(), 1u) << FormatDiagnostics(d);
  EXPECT_EQ(d[0].file, "v.s");
  EXPECT_EQ(d[0].line, 3);
  EXPECT_EQ(d[0].column, 5);
  EXPECT_EQ(d[0].message,
            "kernel 'k', instruction 0 'add.b8 r0, r1, r2': type b8 is not "
            "allowed for add (allowed: i8, u8, i16, u16, i32, u32, i64, u64, "
            "f16, bf16, f32)");
  EXPECT_EQ(d[0].ToString().substr(0, 11), "v.s:3:5: er");
}

TEST(VerifierTest, AfterPassPrefix) {
  const Module m = KernelWith("    add.b8 r0, r1, r2");
  const Diagnostics d = Verify(m, "fold-constants");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(d[0].message.starts_with(
      "after pass 'fold-constants': kernel 'k', instruction 0"))
      << d[0].message;
  const Diagnostics dk = VerifyKernel(m, m.kernels[0], "dce");
  ASSERT_EQ(dk.size(), 1u);
  EXPECT_TRUE(dk[0].message.starts_with("after pass 'dce': kernel 'k'"));
}

// Before register allocation: any register number and no register count,
// but every other rule, and the pass named.
TEST(VerifierTest, VirtualRegisters) {
  Module m = KernelWith("    add.u32 r0, r1, r2\n    add.u32 r3, r0, u0");
  Kernel& k = m.kernels[0];
  k.code[0].operands[0].reg = 300;  // (r300: virtual)
  k.code[1].operands[1].reg = 300;
  k.registers = 0;  // not counted yet
  const VerifyOptions before{.after_pass = "dead code",
                             .virtual_registers = true};
  Diagnostics d = VerifyKernel(m, k, before);
  EXPECT_TRUE(d.empty()) << FormatDiagnostics(d);
  d = VerifyKernel(m, k, VerifyOptions{.after_pass = "register allocation"});
  EXPECT_TRUE(HasError(m, "register r300 is out of range"));
  EXPECT_TRUE(HasError(m, "kernel.registers is 0"));
  ASSERT_FALSE(d.empty());
  EXPECT_TRUE(d[0].message.starts_with("after pass 'register allocation'"))
      << d[0].message;
  // Uniforms are not virtual, and other rules hold.
  k.code[1].operands[2].reg = 300;
  k.code[0].type = ScalarType::kBool;
  d = VerifyKernel(m, k, before);
  EXPECT_EQ(d.size(), 2u) << FormatDiagnostics(d);
  for (const Diagnostic& diag : d) {
    EXPECT_TRUE(diag.message.starts_with("after pass 'dead code'"))
        << diag.message;
  }
}

TEST(VerifierTest, LocationsInOtherFiles) {
  const Module m = AssembleOk(R"(.file 1 "src/k.metal"
.kernel k
    .loc 1 42 7
    abs.u32 r0, r1
    exit
.end
)");
  const Diagnostics d = Verify(m);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].file, "src/k.metal");
  EXPECT_EQ(d[0].line, 42);
  EXPECT_EQ(d[0].column, 7);

  Module bad = m;
  bad.kernels[0].code[0].location.file = 5;
  EXPECT_TRUE(HasError(bad, "source location names file 5"));
}

TEST(VerifierTest, Types) {
  EXPECT_TRUE(HasError(KernelWith("    rem.f32 r0, r1, r2"),
                       "type f32 is not allowed for rem"));
  EXPECT_TRUE(HasError(KernelWith("    sqrt.i32 r0, r1"),
                       "type i32 is not allowed for sqrt"));
  EXPECT_TRUE(HasError(KernelWith("    atomic_add.device.u16 r0, [u0], 1"),
                       "type u16 is not allowed for atomic_add"));
  EXPECT_TRUE(HasError(KernelWith("    atomic_min.device.f32 r0, [u0], r1"),
                       "type f32 is not allowed for atomic_min"));
  EXPECT_TRUE(
      Verify(KernelWith("    atomic_add.device.u64 r0, [u0], r2")).empty());
  EXPECT_TRUE(HasError(KernelWith("    simdgroup_load.device.bf16 r0, [u0], 8"),
                       "type bf16 is not allowed for simdgroup_load"));
  // cvt takes any type on either side.
  EXPECT_TRUE(Verify(KernelWith("    cvt.b8.bf16 r0, r1")).empty());
  Module m =
      Mutated([](Kernel& k) { k.code[2].type = static_cast<ScalarType>(99); });
  EXPECT_TRUE(HasError(m, "invalid type"));
  m = Mutated([](Kernel& k) { k.code[3].type = ScalarType::kInt; });
  EXPECT_TRUE(HasError(m, "bnz takes no type"));
  m = Mutated([](Kernel& k) { k.code[2].type2 = ScalarType::kInt; });
  EXPECT_TRUE(HasError(m, "only cvt takes a second type"));
  Module c = KernelWith("    cvt.f32.i32 r0, r1");
  c.kernels[0].code[0].type2 = static_cast<ScalarType>(77);
  EXPECT_TRUE(HasError(c, "invalid type"));
}

TEST(VerifierTest, OperandKinds) {
  Module m =
      Mutated([](Kernel& k) { k.code[2].operands[0] = Operand::Uniform(1); });
  EXPECT_TRUE(HasError(m,
                       "operand 1 is the destination and must be a "
                       "register"));
  m = Mutated([](Kernel& k) { k.code[2].operands[0] = Operand::Imm(1); });
  EXPECT_TRUE(HasError(m, "operand 1 is the destination"));
  m = Mutated([](Kernel& k) { k.code[2].operands[1] = Operand::Label(0); });
  EXPECT_TRUE(HasError(m,
                       "operand 2 must be a register, uniform, immediate "
                       "or special register"));
  m = Mutated(
      [](Kernel& k) { k.code[2].operands[2] = Operand::Memory(MemoryRef{}); });
  EXPECT_TRUE(HasError(m, "operand 3 must be a register, uniform"));
  m = Mutated([](Kernel& k) { k.code[3].operands[1] = Operand::Reg(1); });
  EXPECT_TRUE(HasError(m, "operand 2 must be a label"));
  m = Mutated([](Kernel& k) { k.code[4].operands[1] = Operand::Uniform(0); });
  EXPECT_TRUE(HasError(m, "operand 2 must be a memory reference"));
  m = Mutated([](Kernel& k) { k.code[2].operands[3] = Operand::Reg(5); });
  EXPECT_TRUE(HasError(m, "ge takes 3 operands, but operand 4 is set"));
  m = Mutated([](Kernel& k) {
    k.code[2].operands[1].kind = static_cast<OperandKind>(42);
  });
  EXPECT_TRUE(HasError(m, "invalid operand kind"));
  m = Mutated([](Kernel& k) {
    k.code[0].operands[1].special = static_cast<SpecialRegister>(200);
  });
  EXPECT_TRUE(HasError(m, "invalid special register"));
  m = Mutated([](Kernel& k) { k.code[2].operands[1].imm = 5; });
  EXPECT_TRUE(HasError(m, "has fields set that its kind does not use"));
  // A vector or matrix operand must be a register or uniform.
  EXPECT_TRUE(HasError(KernelWith("    st.device.v2.f32 [u0], 1.0"),
                       "holds a vector or matrix"));
  EXPECT_TRUE(HasError(
      KernelWith("    simdgroup_multiply_accumulate.f32 r0, r2, r4, 0.0"),
      "holds a vector or matrix"));
  EXPECT_TRUE(Verify(KernelWith("    st.device.v2.f32 [u0], u2")).empty());
}

TEST(VerifierTest, RegisterSpans) {
  EXPECT_TRUE(HasError(KernelWith("    add.u64 r255, r0, r2"),
                       "operand 1: register r255...r256 is out of range "
                       "(r0..r255)"));
  EXPECT_TRUE(HasError(KernelWith("    add.i64 r0, r2, u255"),
                       "operand 3: uniform u255...u256 is out of range"));
  EXPECT_TRUE(HasError(KernelWith("    ld.device.v4.f32 r253, [u0]"),
                       "r253...r256 is out of range"));
}

TEST(VerifierTest, RegisterSpanFitsExactly) {
  EXPECT_TRUE(Verify(KernelWith("    ld.device.v2.u64 r252, [u0]")).empty());
  EXPECT_TRUE(Verify(KernelWith("    add.u64 r254, r0, u254")).empty());
  EXPECT_TRUE(Verify(KernelWith("    simdgroup_load.device.f32 r254, [u0], 8"))
                  .empty());
}

TEST(VerifierTest, MemoryOperands) {
  EXPECT_TRUE(HasError(KernelWith("    st.constant.f32 [u0], r1"),
                       "st.f32 cannot access constant memory (allowed: "
                       "device, threadgroup, thread)"));
  EXPECT_TRUE(HasError(KernelWith("    atomic_add.thread.u32 r0, [r1], 1"),
                       "cannot access thread memory (allowed: device, "
                       "threadgroup)"));
  EXPECT_TRUE(HasError(KernelWith("    atomic_load.constant.i32 r0, [u0]"),
                       "cannot access constant memory"));
  EXPECT_TRUE(HasError(
      KernelWith("    atomic_add.threadgroup.f32 r0, [r1], 1.0"),
      "atomic_add.f32 cannot access threadgroup memory (allowed: device)"));
  EXPECT_TRUE(
      HasError(KernelWith("    simdgroup_load.thread.f32 r0, [r1], 8"),
               "cannot access thread memory (allowed: device, constant, "
               "threadgroup)"));
  EXPECT_TRUE(
      HasError(KernelWith("    simdgroup_store.constant.f32 [u0], r0, 8"),
               "cannot access constant memory (allowed: device, threadgroup)"));
  EXPECT_TRUE(HasError(KernelWith("    ld.device.f32 r0, [16]"),
                       "device addresses need a base"));
  EXPECT_TRUE(HasError(KernelWith("    ld.constant.f32 r0, [r0*4]"),
                       "constant addresses need a base"));
  EXPECT_TRUE(HasError(KernelWith("    ld.device.f32 r0, [r255]"),
                       "base r255...r256 is out of range"));
  EXPECT_TRUE(HasError(KernelWith("    ld.device.f32 r0, [u255 + 4]"),
                       "base u255...u256 is out of range"));
  // Threadgroup and thread bases are single 32-bit registers.
  EXPECT_TRUE(Verify(KernelWith("    ld.threadgroup.f32 r0, [r255]")).empty());
  EXPECT_TRUE(Verify(KernelWith("    ld.thread.f32 r0, [64]")).empty());

  Module m = Mutated([](Kernel& k) { k.code[4].operands[1].mem.scale = 3; });
  EXPECT_TRUE(HasError(m, "scale must be 1, 2, 4, 8 or 16, got 3"));
  m = Mutated([](Kernel& k) { k.code[4].operands[1].mem.index = 256; });
  EXPECT_TRUE(HasError(m, "index r256 is out of range"));
  m = Mutated([](Kernel& k) {
    k.code[4].operands[1].mem.base_kind = OperandKind::kImmediate;
  });
  EXPECT_TRUE(HasError(m,
                       "the memory base must be a register, a uniform or "
                       "absent"));
  m = Mutated([](Kernel& k) { k.code[4].space = AddressSpace::kNone; });
  EXPECT_TRUE(HasError(m, "cannot access none memory"));
  m = Mutated([](Kernel& k) { k.code[2].space = AddressSpace::kDevice; });
  EXPECT_TRUE(HasError(m, "ge takes no address space"));
  m = Mutated(
      [](Kernel& k) { k.code[4].space = static_cast<AddressSpace>(17); });
  EXPECT_TRUE(HasError(m, "invalid address space"));
  m = Mutated([](Kernel& k) {
    MemoryRef& mem = k.code[4].operands[1].mem;
    mem.has_index = false;  // index fields left set
  });
  EXPECT_TRUE(HasError(m, "has fields set that its kind does not use"));
}

TEST(VerifierTest, Modifiers) {
  Module m = Mutated([](Kernel& k) { k.code[2].vector = 2; });
  EXPECT_TRUE(HasError(m, "vector count is only for ld and st"));
  m = Mutated([](Kernel& k) { k.code[4].vector = 5; });
  EXPECT_TRUE(HasError(m, "vector count must be 1..4, got 5"));
  m = Mutated([](Kernel& k) { k.code[4].vector = 0; });
  EXPECT_TRUE(HasError(m, "vector count must be 1..4, got 0"));
  m = Mutated([](Kernel& k) { k.code[2].mem_flags = kMemDevice; });
  EXPECT_TRUE(HasError(m, "memory flags are only for barriers"));
  m = Mutated([](Kernel& k) { k.code[6].mem_flags = 0x30; });
  EXPECT_TRUE(HasError(m, "invalid barrier flags"));
  m = Mutated([](Kernel& k) { k.code[4].transpose = true; });
  EXPECT_TRUE(HasError(m, "transpose is only for simdgroup_load"));
}

TEST(VerifierTest, Immediates) {
  Module m = KernelWith("    add.u8 r0, r1, 255");
  m.kernels[0].code[0].operands[2].imm = 0x100;
  EXPECT_TRUE(HasError(m, "immediate bits 0x100 do not fit type u8"));
  m = KernelWith("    add.f16 r0, r1, 1.0");
  m.kernels[0].code[0].operands[2].imm = 0x3F800000;  // f32 bits
  EXPECT_TRUE(HasError(m, "do not fit type f16"));
  m = KernelWith("    mov.b8 r0, 1");
  m.kernels[0].code[0].operands[1].imm = 2;
  EXPECT_TRUE(HasError(m, "do not fit type b8"));
  // 64-bit immediates may use all bits.
  EXPECT_TRUE(
      Verify(KernelWith("    mov.u64 r0, 18446744073709551615")).empty());
}

TEST(VerifierTest, BranchesAndTerminators) {
  Module m = Mutated([](Kernel& k) { k.code[3].operands[1].label = 99; });
  EXPECT_TRUE(HasError(m,
                       "operand 2: branch target 99 is past the end of "
                       "the code"));
  m = Mutated([](Kernel& k) { k.code[3].operands[2].label = 99; });
  EXPECT_TRUE(HasError(m, "operand 3: branch target 99"));
  m = Mutated([](Kernel& k) { k.code.pop_back(); });
  EXPECT_TRUE(HasError(m, "the last instruction must be a terminator"));
  // A label naming the end of the code is no valid target.
  m = AssembleOk(".kernel k\n    br end\n    exit\nend:\n.end\n");
  EXPECT_TRUE(HasError(m, "branch target 2 is past the end"));
  // br ends a kernel as well as exit.
  EXPECT_TRUE(
      Verify(AssembleOk(".kernel k\ntop:\n    br top\n.end\n")).empty());
}

TEST(VerifierTest, EmptyKernel) {
  EXPECT_TRUE(
      HasError(AssembleOk(".kernel k\n.end\n"), "the kernel has no code"));
}

TEST(VerifierTest, Labels) {
  Module m = Mutated([](Kernel& k) { k.labels[1] = "r7"; });
  EXPECT_TRUE(HasError(m, "label 'r7' is not a valid label name"));
  m = Mutated([](Kernel& k) { k.labels[1] = "done"; });
  EXPECT_TRUE(HasError(m, "label 'done' names two instructions"));
  m = Mutated([](Kernel& k) { k.labels[500] = "far"; });
  EXPECT_TRUE(HasError(m, "label 'far' names instruction 500, past the end"));
}

TEST(VerifierTest, BufferArguments) {
  EXPECT_TRUE(HasError(KernelWith("", ".buffer 31 u2 device float b\n"),
                       "buffer index 31 out of range (0..30)"));
  EXPECT_TRUE(HasError(KernelWith("", ".buffer 0 u2 device float b\n"),
                       "duplicate buffer index 0"));
  EXPECT_TRUE(HasError(KernelWith("", ".buffer 1 u1 device float b\n"),
                       "buffer 1 uses uniform u1, which buffer 0 already "
                       "uses"));
  EXPECT_TRUE(HasError(KernelWith("", ".threadgroup 0 u1\n"),
                       "threadgroup argument 0 uses uniform u1, which buffer "
                       "0 already uses"));
  EXPECT_TRUE(HasError(KernelWith("", ".buffer 1 u255 device float b\n"),
                       "buffer 1: its address pair u255:u256 is out of "
                       "range"));
  EXPECT_TRUE(
      Verify(KernelWith("", ".buffer 30 u254 constant void\n")).empty());
  Module m = KernelWith("");
  m.kernels[0].buffers[0].space = AddressSpace::kThreadgroup;
  EXPECT_TRUE(HasError(m,
                       "buffer 0: address space must be device or "
                       "constant"));
  m = KernelWith("");
  m.kernels[0].buffers[0].index = -1;
  EXPECT_TRUE(HasError(m, "buffer index -1 out of range"));
  m = KernelWith("");
  m.kernels[0].buffers[0].name = "not a name";
  EXPECT_TRUE(HasError(m, "is not a valid name"));
  m = KernelWith("");
  m.kernels[0].buffers[0].element = static_cast<ScalarType>(50);
  EXPECT_TRUE(HasError(m, "invalid element type"));
}

TEST(VerifierTest, ThreadgroupArguments) {
  EXPECT_TRUE(HasError(KernelWith("", ".threadgroup 31 u4\n"),
                       "threadgroup index 31 out of range (0..30)"));
  EXPECT_TRUE(HasError(KernelWith("", ".threadgroup 2 u4\n.threadgroup 2 u5\n"),
                       "duplicate threadgroup index 2"));
  EXPECT_TRUE(HasError(KernelWith("", ".threadgroup 0 u4\n.threadgroup 1 u4\n"),
                       "threadgroup argument 1 uses uniform u4, which "
                       "threadgroup argument 0 already uses"));
  Module m = KernelWith("", ".threadgroup 0 u4\n");
  m.kernels[0].threadgroup_arguments[0].uniform = 256;
  EXPECT_TRUE(HasError(m,
                       "threadgroup argument 0: uniform u256 is out of "
                       "range"));
}

TEST(VerifierTest, ConstantData) {
  EXPECT_TRUE(
      Verify(KernelWith("", ".constant_data u2 4\n.data 0000803f\n")).empty());
  EXPECT_TRUE(
      Verify(KernelWith("", ".constant_data u254 1\n.data ff\n")).empty());
  EXPECT_TRUE(HasError(KernelWith("", ".constant_data u1 1\n.data 00\n"),
                       "kernel 'k': constant data uses uniform u1, which "
                       "buffer 0 already uses"));
  EXPECT_TRUE(HasError(
      KernelWith("", ".threadgroup 0 u3\n.constant_data u2 1\n.data 00\n"),
      "kernel 'k': constant data uses uniform u3, which threadgroup argument "
      "0 already uses"));
  EXPECT_TRUE(HasError(KernelWith("", ".constant_data u255 1\n.data 00\n"),
                       "kernel 'k': constant data: its address pair "
                       "u255:u256 is out of range"));
  Module m = KernelWith("", ".constant_data u2 1\n.data 00\n");
  m.kernels[0].constant_data_uniform = -2;
  EXPECT_TRUE(HasError(m, "kernel 'k': constant data: its address pair u-2"));
  m = KernelWith("");
  m.kernels[0].constant_data = {1, 2, 3};
  EXPECT_TRUE(HasError(m,
                       "kernel 'k': the kernel has 3 bytes of constant data "
                       "but no uniform pair for its address"));
}

TEST(VerifierTest, Limits) {
  // More threadgroup memory than a device has is a valid kernel (Metal's
  // compiler builds it); its pipeline fails (limits_test).
  EXPECT_TRUE(Verify(KernelWith("", ".threadgroup_memory 53760\n")).empty());
  EXPECT_TRUE(HasError(
      KernelWith("", ".max_total_threads_per_threadgroup 1025\n"),
      "max_total_threads_per_threadgroup 1025 exceeds the limit of 1024"));
}

TEST(VerifierTest, ResourceCounts) {
  Module m = Mutated([](Kernel& k) { k.registers = 3; });
  EXPECT_TRUE(HasError(m, "kernel.registers is 3 but the code uses 256"));
  m = Mutated([](Kernel& k) { k.uniforms = 9; });
  EXPECT_TRUE(HasError(m, "kernel.uniforms is 9 but the kernel uses 5"));
}

TEST(VerifierTest, KernelNames) {
  Module m =
      AssembleOk(".kernel a\n    exit\n.end\n.kernel b\n    exit\n.end\n");
  m.kernels[1].name = "a";
  EXPECT_TRUE(HasError(m, "duplicate kernel name 'a'"));
  m.kernels[1].name = "";
  EXPECT_TRUE(HasError(m, "the kernel name is not a valid name"));
}

TEST(VerifierTest, MalformedModulesDoNotCrash) {
  Module m = AssembleOk(kGood);
  Kernel& k = m.kernels[0];
  k.code[1].op = static_cast<Opcode>(60000);
  k.code[5].operands[0].kind = static_cast<OperandKind>(250);
  k.code[7].space = static_cast<AddressSpace>(250);
  k.code.back().op = static_cast<Opcode>(1000);
  EXPECT_TRUE(HasError(m, "invalid opcode"));
  Module empty;
  EXPECT_TRUE(Verify(empty).empty());
  empty.kernels.emplace_back();
  EXPECT_FALSE(Verify(empty).empty());
}

TEST(OperandRoleTest, Roles) {
  EXPECT_EQ(GetOperandRole(OpShape::kBinary, 0), OperandRole::kDestination);
  EXPECT_EQ(GetOperandRole(OpShape::kBinary, 2), OperandRole::kSource);
  EXPECT_EQ(GetOperandRole(OpShape::kStore, 0), OperandRole::kMemory);
  EXPECT_EQ(GetOperandRole(OpShape::kStore, 1), OperandRole::kSource);
  EXPECT_EQ(GetOperandRole(OpShape::kAtomicCas, 1), OperandRole::kMemory);
  EXPECT_EQ(GetOperandRole(OpShape::kAtomicCas, 3), OperandRole::kSource);
  EXPECT_EQ(GetOperandRole(OpShape::kCondBranch, 0), OperandRole::kSource);
  EXPECT_EQ(GetOperandRole(OpShape::kCondBranch, 2), OperandRole::kLabel);
  EXPECT_EQ(GetOperandRole(OpShape::kBranch, 0), OperandRole::kLabel);
  EXPECT_EQ(GetOperandRole(OpShape::kMatrixStore, 2), OperandRole::kSource);
  EXPECT_EQ(GetOperandRole(OpShape::kVote, 0), OperandRole::kDestination);
}

}  // namespace
}  // namespace mtlemu::isa
