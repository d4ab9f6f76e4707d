// The shape table (isa/shapes.def) against facts written out by hand from
// the text form (isa/README.md), and every opcode at every type it takes,
// built from its shape's row, printed, reassembled and verified.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "isa/assembler.h"
#include "isa/instruction.h"
#include "isa/module.h"
#include "isa/opcode.h"
#include "isa/printer.h"
#include "isa/shape.h"
#include "isa/verifier.h"

namespace mtlemu::isa {
namespace {

struct Expected {
  OpShape shape;
  std::string_view signature;
  // A letter per operand: d(estination), s(ource), m(emory), l(abel).
  std::string_view roles;
  // The modifiers the text form takes, in their order: S(pace), V(ector
  // count), T(ype), 2 (a second type), X (transpose), F (memory flags).
  std::string_view modifiers;
};

constexpr Expected kExpected[] = {
    {OpShape::kNullary, "", "", ""},
    {OpShape::kNullaryValue, "d", "d", ""},
    {OpShape::kUnary, "d, a", "ds", "T"},
    {OpShape::kBinary, "d, a, b", "dss", "T"},
    {OpShape::kBinaryInt, "d, a, b", "dss", "T"},
    {OpShape::kTernary, "d, a, b, c", "dsss", "T"},
    {OpShape::kCompare, "d, a, b", "dss", "T"},
    {OpShape::kTest, "d, a", "ds", "T"},
    {OpShape::kSelect, "d, c, a, b", "dsss", "T"},
    {OpShape::kConvert, "d, a", "ds", "T2"},
    {OpShape::kLoad, "d, [mem]", "dm", "SVT"},
    {OpShape::kStore, "[mem], s", "ms", "SVT"},
    {OpShape::kAtomicLoad, "d, [mem]", "dm", "ST"},
    {OpShape::kAtomicStore, "[mem], s", "ms", "ST"},
    {OpShape::kAtomic, "d, [mem], v", "dms", "ST"},
    {OpShape::kAtomicCas, "d, [mem], expected, desired", "dmss", "ST"},
    {OpShape::kBranch, "target", "l", ""},
    {OpShape::kCondBranch, "c, target, reconvergence", "sll", ""},
    {OpShape::kBarrier, "", "", "F"},
    {OpShape::kVote, "d, c", "ds", ""},
    {OpShape::kMatrixLoad, "d, [mem], stride", "dms", "STX"},
    {OpShape::kMatrixStore, "[mem], s, stride", "mss", "STX"},
    {OpShape::kMatrixMultiply, "d, a, b, c", "dsss", "T"},
};

char RoleLetter(OperandRole role) {
  switch (role) {
    case OperandRole::kDestination:
      return 'd';
    case OperandRole::kSource:
      return 's';
    case OperandRole::kMemory:
      return 'm';
    case OperandRole::kLabel:
      return 'l';
  }
  return '?';
}

std::string ModifierLetters(OpShape shape) {
  constexpr std::string_view kLetters = "SVT2XF";  // Modifier's order
  std::string out;
  for (int i = 0; i < kNumModifiers; ++i) {
    if (ShapeHasModifier(shape, static_cast<Modifier>(i))) out += kLetters[i];
  }
  return out;
}

TEST(ShapeTable, MatchesTheTextForm) {
  ASSERT_EQ(std::size(kExpected), static_cast<size_t>(kNumShapes));
  for (int i = 0; i < kNumShapes; ++i) {
    const Expected& e = kExpected[i];
    ASSERT_EQ(static_cast<int>(e.shape), i) << "kExpected is in enum order";
    const ShapeInfo& info = GetShapeInfo(e.shape);
    SCOPED_TRACE("shape " + std::to_string(i) + " (" +
                 std::string(e.signature) + ")");
    EXPECT_EQ(info.shape, e.shape);
    EXPECT_EQ(OperandSignature(e.shape), e.signature);
    EXPECT_EQ(OperandCount(e.shape), static_cast<int>(e.roles.size()));
    std::string roles;
    for (int p = 0; p < OperandCount(e.shape); ++p) {
      roles += RoleLetter(GetOperandRole(e.shape, p));
    }
    EXPECT_EQ(roles, e.roles);
    EXPECT_EQ(ShapeHasDestination(e.shape), e.roles.starts_with('d'));
    EXPECT_EQ(ModifierLetters(e.shape), e.modifiers);
    EXPECT_EQ(ShapeHasType(e.shape), e.modifiers.find('T') != e.modifiers.npos);
    EXPECT_EQ(ShapeHasSpace(e.shape),
              e.modifiers.find('S') != e.modifiers.npos);
    EXPECT_EQ(info.spaces != 0, ShapeHasSpace(e.shape));
  }
}

Instruction Make(Opcode op, ScalarType type) {
  Instruction inst;
  inst.op = op;
  inst.type = type;
  return inst;
}

// Operand types and register spans of a few instructions, by hand.
TEST(ShapeTable, OperandTypesAndSpans) {
  Instruction ld = Make(Opcode::kLoad, ScalarType::kLong);
  ld.vector = 4;
  EXPECT_EQ(OperandRegisterSpan(ld, 0), 8);  // 4 x 64 bits
  EXPECT_TRUE(IsDestination(ld, 0));
  EXPECT_FALSE(IsDestination(ld, 1));

  Instruction st = Make(Opcode::kStore, ScalarType::kFloat);
  st.vector = 3;
  EXPECT_EQ(OperandRegisterSpan(st, 1), 3);
  EXPECT_FALSE(IsDestination(st, 0));

  Instruction cvt = Make(Opcode::kCvt, ScalarType::kFloat);
  cvt.type2 = ScalarType::kLong;
  EXPECT_EQ(OperandType(cvt, 0), ScalarType::kFloat);
  EXPECT_EQ(OperandType(cvt, 1), ScalarType::kLong);
  EXPECT_EQ(OperandRegisterSpan(cvt, 0), 1);
  EXPECT_EQ(OperandRegisterSpan(cvt, 1), 2);

  const Instruction ldexp = Make(Opcode::kLdexp, ScalarType::kHalf);
  EXPECT_EQ(OperandType(ldexp, 1), ScalarType::kHalf);
  EXPECT_EQ(OperandType(ldexp, 2), ScalarType::kInt);

  const Instruction select = Make(Opcode::kSelect, ScalarType::kULong);
  EXPECT_EQ(OperandType(select, 1), ScalarType::kUInt);
  EXPECT_EQ(OperandRegisterSpan(select, 1), 1);
  EXPECT_EQ(OperandRegisterSpan(select, 2), 2);

  const Instruction lt = Make(Opcode::kLt, ScalarType::kLong);
  EXPECT_EQ(OperandType(lt, 0), ScalarType::kUInt);
  EXPECT_EQ(OperandRegisterSpan(lt, 0), 1);
  EXPECT_EQ(OperandRegisterSpan(lt, 1), 2);

  const Instruction mma =
      Make(Opcode::kSimdgroupMultiplyAccumulate, ScalarType::kFloat);
  for (int p = 0; p < 4; ++p) EXPECT_EQ(OperandRegisterSpan(mma, p), 2) << p;

  const Instruction mload = Make(Opcode::kSimdgroupLoad, ScalarType::kHalf);
  EXPECT_EQ(OperandRegisterSpan(mload, 0), 2);
  EXPECT_EQ(OperandType(mload, 2), ScalarType::kUInt);
}

TEST(ShapeTable, AddressSpaces) {
  using S = AddressSpace;
  using T = ScalarType;
  EXPECT_TRUE(IsAddressSpaceAllowed(Opcode::kLoad, T::kFloat, S::kConstant));
  EXPECT_TRUE(IsAddressSpaceAllowed(Opcode::kLoad, T::kFloat, S::kThread));
  EXPECT_FALSE(IsAddressSpaceAllowed(Opcode::kStore, T::kInt, S::kConstant));
  EXPECT_TRUE(IsAddressSpaceAllowed(Opcode::kStore, T::kInt, S::kThread));
  EXPECT_TRUE(
      IsAddressSpaceAllowed(Opcode::kAtomicAdd, T::kInt, S::kThreadgroup));
  EXPECT_FALSE(
      IsAddressSpaceAllowed(Opcode::kAtomicAdd, T::kFloat, S::kThreadgroup));
  EXPECT_TRUE(IsAddressSpaceAllowed(Opcode::kAtomicAdd, T::kFloat, S::kDevice));
  EXPECT_FALSE(IsAddressSpaceAllowed(Opcode::kAtomicAdd, T::kInt, S::kThread));
  EXPECT_TRUE(
      IsAddressSpaceAllowed(Opcode::kSimdgroupLoad, T::kHalf, S::kConstant));
  EXPECT_FALSE(
      IsAddressSpaceAllowed(Opcode::kSimdgroupStore, T::kHalf, S::kConstant));
  EXPECT_FALSE(IsAddressSpaceAllowed(Opcode::kAdd, T::kInt, S::kDevice));
  EXPECT_FALSE(IsAddressSpaceAllowed(Opcode::kLoad, T::kInt, S::kNone));
}

Module WithoutLocations(Module m) {
  for (Kernel& k : m.kernels) {
    for (Instruction& inst : k.code) inst.location = SourceLocation{};
  }
  return m;
}

// One instruction of `op` at `type` (and `type2`), its operands and
// modifiers chosen from its shape's row, followed by the exit its labels
// name.
Module OneInstruction(Opcode op, ScalarType type, ScalarType type2) {
  const OpShape shape = GetOpInfo(op).shape;
  Instruction inst;
  inst.op = op;
  if (ShapeHasType(shape)) inst.type = type;
  if (ShapeHasModifier(shape, Modifier::kType2)) inst.type2 = type2;
  if (ShapeHasModifier(shape, Modifier::kVector)) inst.vector = 2;
  if (ShapeHasModifier(shape, Modifier::kTranspose)) inst.transpose = true;
  if (ShapeHasModifier(shape, Modifier::kMemFlags)) {
    inst.mem_flags = kMemDevice | kMemThreadgroup;
  }
  if (ShapeHasSpace(shape)) {
    for (AddressSpace s : {AddressSpace::kThreadgroup, AddressSpace::kDevice,
                           AddressSpace::kConstant, AddressSpace::kThread}) {
      if (IsAddressSpaceAllowed(op, inst.type, s)) {
        inst.space = s;
        break;
      }
    }
  }
  for (int p = 0; p < OperandCount(shape); ++p) {
    switch (GetOperandRole(shape, p)) {
      case OperandRole::kDestination:
      case OperandRole::kSource:
        inst.operands[p] = Operand::Reg(8 * (p + 1));
        break;
      case OperandRole::kMemory: {
        MemoryRef m;
        m.base_kind = OperandKind::kRegister;
        m.base = 40;
        m.has_index = true;
        m.index = 42;
        m.scale = 4;
        m.displacement = -16;
        inst.operands[p] = Operand::Memory(m);
        break;
      }
      case OperandRole::kLabel:
        inst.operands[p] = Operand::Label(1);
        break;
    }
  }
  Kernel kernel;
  kernel.name = "k";
  kernel.code = {inst, Instruction{}};  // the default instruction is exit
  kernel.labels = {{1, "done"}};
  ComputeResources(kernel);
  Module module;
  module.files = {"shapes.s"};
  module.kernels = {kernel};
  return module;
}

TEST(ShapeTable, EveryOpcodeAtEveryTypeRoundTrips) {
  int checked = 0;
  for (int o = 0; o < kNumOpcodes; ++o) {
    const auto op = static_cast<Opcode>(o);
    const OpInfo& info = GetOpInfo(op);
    const bool typed = ShapeHasType(info.shape);
    const bool two = ShapeHasModifier(info.shape, Modifier::kType2);
    for (int t = 0; t < (typed ? kNumScalarTypes : 1); ++t) {
      const auto type = static_cast<ScalarType>(t);
      if (typed && !(info.types & Bit(type))) continue;
      for (int t2 = 0; t2 < (two ? kNumScalarTypes : 1); ++t2) {
        const Module module = OneInstruction(op, type, ScalarType(t2));
        ASSERT_EQ(FormatDiagnostics(Verify(module)), "");
        const std::string printed = PrintModule(module);
        const AssembleResult back = Assemble(printed, "shapes.s");
        ASSERT_TRUE(back.ok()) << FormatDiagnostics(back.diagnostics) << "\n"
                               << printed;
        EXPECT_TRUE(WithoutLocations(back.module) == module) << printed;
        EXPECT_EQ(PrintModule(back.module), printed);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, kNumOpcodes);
}

}  // namespace
}  // namespace mtlemu::isa
