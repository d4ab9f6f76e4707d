#include "isa/shape.h"

#include <initializer_list>
#include <iterator>

namespace mtlemu::isa {
namespace {

// The words the rows of shapes.def are written in (see its header).
constexpr OperandTypeRule kT = OperandTypeRule::kType;
constexpr OperandTypeRule kT2 = OperandTypeRule::kType2;
constexpr OperandTypeRule kU32 = OperandTypeRule::kUInt;
constexpr OperandTypeRule kI32 = OperandTypeRule::kInt;
constexpr OperandSpan kOne = OperandSpan::kOne;
constexpr OperandSpan kVec = OperandSpan::kVector;
constexpr OperandSpan kMat = OperandSpan::kMatrix;

constexpr OperandSpec Dst(OperandTypeRule type = kT, OperandSpan span = kOne) {
  return {OperandRole::kDestination, type, span};
}
constexpr OperandSpec Src(OperandTypeRule type = kT, OperandSpan span = kOne) {
  return {OperandRole::kSource, type, span};
}
constexpr OperandSpec Mem() { return {OperandRole::kMemory, kT, kOne}; }
constexpr OperandSpec Label(OperandTypeRule type = kT) {
  return {OperandRole::kLabel, type, kOne};
}

constexpr ModifierSet kNoModifiers = 0;
constexpr ModifierSet kSpace = Bit(Modifier::kSpace);
constexpr ModifierSet kVector = Bit(Modifier::kVector);
constexpr ModifierSet kType = Bit(Modifier::kType);
constexpr ModifierSet kType2 = Bit(Modifier::kType2);
constexpr ModifierSet kTranspose = Bit(Modifier::kTranspose);
constexpr ModifierSet kMemFlags = Bit(Modifier::kMemFlags);

constexpr AddressSpaceSet kNoSpaces = 0;
constexpr AddressSpaceSet kDevice = Bit(AddressSpace::kDevice);
constexpr AddressSpaceSet kConstant = Bit(AddressSpace::kConstant);
constexpr AddressSpaceSet kThreadgroup = Bit(AddressSpace::kThreadgroup);
constexpr AddressSpaceSet kThread = Bit(AddressSpace::kThread);

// A row of the table; the operand list's length is the operand count.
constexpr ShapeInfo MakeShape(OpShape shape, std::string_view signature,
                              std::initializer_list<OperandSpec> operands,
                              ModifierSet modifiers, AddressSpaceSet spaces,
                              AddressSpaceSet float_spaces) {
  ShapeInfo info{};
  info.shape = shape;
  info.signature = signature;
  info.num_operands = static_cast<int>(operands.size());
  info.modifiers = modifiers;
  info.spaces = spaces;
  info.float_spaces = float_spaces;
  int i = 0;
  for (const OperandSpec& o : operands) info.operands[i++] = o;
  return info;
}

// Turns a row's parenthesized operand list into a braced one.
#define SHAPE_OPERANDS(...) \
  { __VA_ARGS__ }

constexpr ShapeInfo kShapeInfo[] = {
#define SHAPE(e, signature, operands, modifiers, spaces, float_spaces)         \
  MakeShape(OpShape::e, signature, SHAPE_OPERANDS operands, modifiers, spaces, \
            float_spaces),
#include "isa/shapes.def"
#undef SHAPE
};
#undef SHAPE_OPERANDS

// The rows are the enum (both come from shapes.def); these checks catch a
// row whose facts contradict each other.
constexpr bool RowsAreConsistent() {
  for (int i = 0; i < kNumShapes; ++i) {
    const ShapeInfo& s = kShapeInfo[i];
    if (static_cast<int>(s.shape) != i) return false;
    if (s.num_operands > kMaxOperands) return false;
    // A memory shape takes an address space, and only a memory shape.
    if (((s.modifiers & kSpace) != 0) != (s.spaces != 0)) return false;
    if ((s.float_spaces & ~s.spaces) != 0) return false;
    if ((s.spaces & Bit(AddressSpace::kNone)) != 0) return false;
    // Only operand 0 can be the destination (IsDestination relies on it).
    for (int p = 1; p < s.num_operands; ++p) {
      if (s.operands[p].role == OperandRole::kDestination) return false;
    }
    // A second type only after a first one.
    if ((s.modifiers & kType2) != 0 && (s.modifiers & kType) == 0) {
      return false;
    }
  }
  return true;
}
static_assert(std::size(kShapeInfo) == kNumShapes);
static_assert(RowsAreConsistent(),
              "a row of isa/shapes.def contradicts itself");

}  // namespace

const ShapeInfo& GetShapeInfo(OpShape shape) {
  return kShapeInfo[static_cast<int>(shape)];
}

OperandRole GetOperandRole(OpShape shape, int position) {
  const ShapeInfo& info = GetShapeInfo(shape);
  if (position < 0 || position >= info.num_operands) {
    return OperandRole::kSource;
  }
  return info.operands[position].role;
}

}  // namespace mtlemu::isa
