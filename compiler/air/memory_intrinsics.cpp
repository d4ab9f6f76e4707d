// memcpy, memmove and memset lowered to loads and stores.
#include "compiler/air/memory_intrinsics.h"

#include <llvm/ADT/APInt.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/LowerMemIntrinsics.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "compiler/air/address_spaces.h"

namespace mtlemu::air {
namespace {

// A memory intrinsic of constant size is lowered to straight-line loads and
// stores up to this many accesses, to a loop beyond.
constexpr uint64_t kMaxStraightLineAccesses = 64;

// The widest access is 32 bits, the register size.
constexpr uint64_t kMaxAccessBytes = 4;

// Step 5: memcpy, memmove and memset become loads and stores.
class MemIntrinsicLowering {
 public:
  MemIntrinsicLowering(llvm::MemIntrinsic* intrinsic,
                       const llvm::TargetTransformInfo& tti)
      : mi_(intrinsic), tti_(tti) {}

  void Lower() {
    auto* length = llvm::dyn_cast<llvm::ConstantInt>(mi_->getLength());
    if (length != nullptr && length->getValue().getActiveBits() <= 62) {
      LowerKnownSize(length->getZExtValue());
    } else {
      LowerUnknownSize();
    }
    mi_->eraseFromParent();
  }

 private:
  struct Chunk {
    uint64_t offset;
    uint64_t bytes;
  };

  llvm::Value* Source() const {
    return llvm::cast<llvm::MemTransferInst>(mi_)->getRawSource();
  }
  llvm::Align SourceAlign() const {
    return llvm::cast<llvm::MemTransferInst>(mi_)
        ->getSourceAlign()
        .valueOrOne();
  }
  llvm::Align DestAlign() const { return mi_->getDestAlign().valueOrOne(); }
  bool IsSet() const { return llvm::isa<llvm::MemSetInst>(mi_); }
  bool IsMove() const { return llvm::isa<llvm::MemMoveInst>(mi_); }
  // Whether a memmove's ranges may overlap: distinct address spaces are
  // distinct memories, except that a generic pointer may point anywhere.
  bool MayOverlap() const {
    if (!IsMove()) return false;
    const unsigned from = Source()->getType()->getPointerAddressSpace();
    const unsigned to = mi_->getDestAddressSpace();
    return from == to || from == kGenericAddressSpace ||
           to == kGenericAddressSpace;
  }

  // A byte loop that tests which way to copy. LLVM 16's expansion compares
  // the two pointers, so they must be in one address space.
  void ExpandMove() {
    const unsigned from = Source()->getType()->getPointerAddressSpace();
    const unsigned to = mi_->getDestAddressSpace();
    if (from == to) {
      llvm::expandMemMoveAsLoop(llvm::cast<llvm::MemMoveInst>(mi_));
      return;
    }
    llvm::IRBuilder<> b(mi_);
    llvm::Type* generic =
        llvm::PointerType::get(mi_->getContext(), kGenericAddressSpace);
    auto* move = llvm::cast<llvm::MemMoveInst>(b.CreateMemMove(
        b.CreateAddrSpaceCast(mi_->getRawDest(), generic), mi_->getDestAlign(),
        b.CreateAddrSpaceCast(Source(), generic),
        llvm::cast<llvm::MemTransferInst>(mi_)->getSourceAlign(),
        mi_->getLength(), mi_->isVolatile()));
    llvm::expandMemMoveAsLoop(move);
    move->eraseFromParent();
  }

  void LowerUnknownSize() {
    if (IsSet()) {
      llvm::expandMemSetAsLoop(llvm::cast<llvm::MemSetInst>(mi_));
    } else if (MayOverlap()) {
      ExpandMove();
    } else if (!IsMove()) {
      llvm::expandMemCpyAsLoop(llvm::cast<llvm::MemCpyInst>(mi_), tti_);
    } else {
      // The ranges cannot overlap: a forward copy is a move.
      llvm::IRBuilder<> b(mi_);
      auto* copy = llvm::cast<llvm::MemCpyInst>(b.CreateMemCpy(
          mi_->getRawDest(), mi_->getDestAlign(), Source(),
          llvm::cast<llvm::MemTransferInst>(mi_)->getSourceAlign(),
          mi_->getLength(), mi_->isVolatile()));
      llvm::expandMemCpyAsLoop(copy, tti_);
      copy->eraseFromParent();
    }
  }

  void LowerKnownSize(uint64_t size) {
    if (size == 0) return;
    llvm::Align align = DestAlign();
    if (!IsSet()) align = std::min(align, SourceAlign());
    const uint64_t unit = std::min<uint64_t>(align.value(), kMaxAccessBytes);
    const uint64_t count = size / unit;
    uint64_t looped = 0;  // bytes covered by a loop
    if (count + std::popcount(size % unit) > kMaxStraightLineAccesses) {
      if (MayOverlap()) {
        ExpandMove();
        return;
      }
      EmitLoop(count, unit);
      looped = count * unit;
    }
    std::vector<Chunk> chunks;
    for (uint64_t offset = looped; offset < size;) {
      uint64_t bytes = unit;
      while (bytes > size - offset) bytes /= 2;
      chunks.push_back({offset, bytes});
      offset += bytes;
    }
    EmitStraightLine(chunks);
  }

  llvm::Value* SplatByte(llvm::IRBuilder<>& b, uint64_t bytes) const {
    llvm::Value* byte = llvm::cast<llvm::MemSetInst>(mi_)->getValue();
    llvm::Type* type = b.getIntNTy(static_cast<unsigned>(bytes * 8));
    if (bytes == 1) return byte;
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(byte)) {
      return llvm::ConstantInt::get(
          type,
          llvm::APInt::getSplat(type->getIntegerBitWidth(), c->getValue()));
    }
    llvm::APInt ones =
        llvm::APInt::getSplat(type->getIntegerBitWidth(), llvm::APInt(8, 1));
    return b.CreateMul(b.CreateZExt(byte, type),
                       llvm::ConstantInt::get(type, ones));
  }

  // Loads everything before storing anything, so that it is right for an
  // overlapping memmove too.
  void EmitStraightLine(const std::vector<Chunk>& chunks) {
    llvm::IRBuilder<> b(mi_);
    const bool is_volatile = mi_->isVolatile();
    std::vector<llvm::Value*> values;
    for (const Chunk& c : chunks) {
      llvm::Type* type = b.getIntNTy(static_cast<unsigned>(c.bytes * 8));
      if (IsSet()) {
        values.push_back(SplatByte(b, c.bytes));
        continue;
      }
      llvm::Value* from =
          b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), Source(), c.offset);
      values.push_back(b.CreateAlignedLoad(
          type, from, llvm::commonAlignment(SourceAlign(), c.offset),
          is_volatile));
    }
    for (size_t i = 0; i < chunks.size(); ++i) {
      llvm::Value* to = b.CreateConstInBoundsGEP1_64(
          b.getInt8Ty(), mi_->getRawDest(), chunks[i].offset);
      b.CreateAlignedStore(values[i], to,
                           llvm::commonAlignment(DestAlign(), chunks[i].offset),
                           is_volatile);
    }
  }

  // for (i = 0; i < count; ++i) dest[i] = source[i] (or the byte splat),
  // in units of `unit` bytes; the loop is placed before the intrinsic.
  void EmitLoop(uint64_t count, uint64_t unit) {
    llvm::LLVMContext& context = mi_->getContext();
    llvm::BasicBlock* before = mi_->getParent();
    llvm::BasicBlock* after = before->splitBasicBlock(mi_, "memop.after");
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(
        context, "memop.loop", before->getParent(), after);
    before->getTerminator()->setSuccessor(0, loop);

    llvm::IRBuilder<> b(loop);
    b.SetCurrentDebugLocation(mi_->getDebugLoc());
    llvm::Type* index_type =
        count < (uint64_t{1} << 31) ? b.getInt32Ty() : b.getInt64Ty();
    llvm::Type* type = b.getIntNTy(static_cast<unsigned>(unit * 8));
    const llvm::Align access_align(unit);
    const bool is_volatile = mi_->isVolatile();
    llvm::PHINode* index = b.CreatePHI(index_type, 2, "memop.index");
    index->addIncoming(llvm::ConstantInt::get(index_type, 0), before);
    llvm::Value* value = nullptr;
    if (IsSet()) {
      value = SplatByte(b, unit);
    } else {
      llvm::Value* from = b.CreateInBoundsGEP(type, Source(), index);
      value = b.CreateAlignedLoad(type, from, access_align, is_volatile);
    }
    llvm::Value* to = b.CreateInBoundsGEP(type, mi_->getRawDest(), index);
    b.CreateAlignedStore(value, to, access_align, is_volatile);
    llvm::Value* next =
        b.CreateAdd(index, llvm::ConstantInt::get(index_type, 1), "memop.next",
                    /*HasNUW=*/true,
                    /*HasNSW=*/true);
    index->addIncoming(next, loop);
    b.CreateCondBr(
        b.CreateICmpULT(next, llvm::ConstantInt::get(index_type, count)), loop,
        after);
  }

  llvm::MemIntrinsic* mi_;
  const llvm::TargetTransformInfo& tti_;
};

}  // namespace

bool LowerMemIntrinsics(llvm::Function& function,
                        const llvm::TargetTransformInfo& tti) {
  std::vector<llvm::MemIntrinsic*> intrinsics;
  for (llvm::Instruction& i : llvm::instructions(function)) {
    if (auto* mi = llvm::dyn_cast<llvm::MemIntrinsic>(&i)) {
      intrinsics.push_back(mi);
    }
  }
  for (llvm::MemIntrinsic* mi : intrinsics) {
    MemIntrinsicLowering(mi, tti).Lower();
  }
  return !intrinsics.empty();
}

}  // namespace mtlemu::air
