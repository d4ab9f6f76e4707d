#include "compiler/air/target_info.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/TargetTransformInfoImpl.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <limits>

#include "compiler/air/register_allocation.h"

namespace mtlemu::air {
namespace {

// Byte scales a memory operand's index takes ([base + index * scale +
// displacement], isa/ MemoryRef): element sizes up to a float4 or long2.
bool IsAddressScale(int64_t scale) {
  return scale == 0 || scale == 1 || scale == 2 || scale == 4 || scale == 8 ||
         scale == 16;
}

bool FitsInt32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() &&
         v <= std::numeric_limits<int32_t>::max();
}

class GpuTargetInfo
    : public llvm::TargetTransformInfoImplCRTPBase<GpuTargetInfo> {
 public:
  explicit GpuTargetInfo(const llvm::DataLayout& layout)
      : TargetTransformInfoImplCRTPBase(layout) {}

  void getUnrollingPreferences(llvm::Loop* loop, llvm::ScalarEvolution&,
                               llvm::TTI::UnrollingPreferences& up,
                               llvm::OptimizationRemarkEmitter*) const {
    up.Threshold = kFullUnrollThreshold;
    // #pragma unroll (llvm.loop.unroll.enable) asks for the whole loop, as
    // in CUDA and Metal: only the pragma threshold limits it.
    if (!llvm::getBooleanLoopAttribute(loop, "llvm.loop.unroll.enable")) {
      up.FullUnrollMaxCount = kFullUnrollMaxTripCount;
    }
    up.PartialThreshold = kPartialUnrollThreshold;
    up.MaxCount = kMaxPartialUnrollCount;
    up.DefaultUnrollRuntimeCount = kRuntimeUnrollCount;
    up.Partial = true;
    up.Runtime = true;
  }

  // A memory operand is a 64-bit base register (or a uniform) plus a 32-bit
  // index register times a scale plus a 32-bit displacement; no global's
  // address is an operand.
  bool isLegalAddressingMode(llvm::Type*, llvm::GlobalValue* base_global,
                             int64_t offset, bool, int64_t scale, unsigned,
                             llvm::Instruction* = nullptr) const {
    return base_global == nullptr && FitsInt32(offset) && IsAddressScale(scale);
  }
  bool isLegalAddImmediate(int64_t imm) const { return FitsInt32(imm); }
  bool isLegalICmpImmediate(int64_t imm) const { return FitsInt32(imm); }
  // Registers are per lane: a thread has 128 before it spills
  // (register_allocation.h's kAllocatableRegisters).
  unsigned getNumberOfRegisters(unsigned) const {
    return kAllocatableRegisters;
  }
};

}  // namespace

llvm::TargetIRAnalysis GpuTargetAnalysis() {
  return llvm::TargetIRAnalysis([](const llvm::Function& f) {
    return llvm::TargetTransformInfo(
        GpuTargetInfo(f.getParent()->getDataLayout()));
  });
}

}  // namespace mtlemu::air
