#include "emu/exec/handlers.h"

#include "emu/exec/vector_handlers.h"

namespace mtlemu::emu {

// Vector (Highway) handlers first where they exist; the scalar families
// cover everything. Every shape is listed (no default) so that a new row of
// isa/shapes.def makes the compiler ask which family runs it.
Handler HandlerFor(const isa::Instruction& inst) {
  const isa::OpInfo& info = inst.info();
  if (info.cluster != 0) return SimdHandlerFor(inst);
  switch (info.shape) {
    case isa::OpShape::kConvert:
      return ConvertHandlerFor(inst);
    case isa::OpShape::kLoad:
    case isa::OpShape::kStore:
    case isa::OpShape::kAtomicLoad:
    case isa::OpShape::kAtomicStore:
    case isa::OpShape::kAtomic:
    case isa::OpShape::kAtomicCas:
      return MemoryHandlerFor(inst);
    case isa::OpShape::kNullary:
    case isa::OpShape::kBranch:
    case isa::OpShape::kCondBranch:
    case isa::OpShape::kBarrier:
      return nullptr;
    // Only SIMD-group and quad-group functions have these shapes.
    case isa::OpShape::kNullaryValue:
    case isa::OpShape::kVote:
    case isa::OpShape::kMatrixLoad:
    case isa::OpShape::kMatrixStore:
    case isa::OpShape::kMatrixMultiply:
      return SimdHandlerFor(inst);
    case isa::OpShape::kUnary:
    case isa::OpShape::kBinary:
    case isa::OpShape::kBinaryInt:
    case isa::OpShape::kTernary:
    case isa::OpShape::kCompare:
    case isa::OpShape::kTest:
    case isa::OpShape::kSelect:
      break;
  }
  if (Handler vector = VectorHandlerFor(inst)) return vector;
  return AluHandlerFor(inst);
}

}  // namespace mtlemu::emu
