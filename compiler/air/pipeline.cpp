#include "compiler/air/pipeline.h"

#include <llvm/ADT/APInt.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Analysis/CFG.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/InlineCost.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/Attributes.h>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalAlias.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/ReplaceConstant.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/IPO/Inliner.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/ADCE.h>
#include <llvm/Transforms/Scalar/DCE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/InferAddressSpaces.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/LoopRotation.h>
#include <llvm/Transforms/Scalar/LoopStrengthReduce.h>
#include <llvm/Transforms/Scalar/LoopUnrollPass.h>
#include <llvm/Transforms/Scalar/LowerConstantIntrinsics.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/Scalarizer.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Scalar/TailRecursionElimination.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/LowerMemIntrinsics.h>
#include <llvm/Transforms/Utils/LowerSwitch.h>
#include <llvm/Transforms/Utils/Mem2Reg.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/air/address_spaces.h"
#include "compiler/air/contraction.h"
#include "compiler/air/convergence.h"
#include "compiler/air/generic_selects.h"
#include "compiler/air/memory_facts.h"
#include "compiler/air/target_info.h"
#include "compiler/air/vector_bitcasts.h"

namespace mtlemu::air {
namespace {

// A memory intrinsic of constant size is lowered to straight-line loads and
// stores up to this many accesses, to a loop beyond.
constexpr uint64_t kMaxStraightLineAccesses = 64;

// The widest access is 32 bits, the register size.
constexpr uint64_t kMaxAccessBytes = 4;

// The analysis managers of the new pass manager, wired together, with no
// library function known (a user function named `sqrt` or `memcpy` is just
// a function) and the default target information of the module's layout.
class PassContext {
 public:
  PassContext() : library_(llvm::Triple()) {
    library_.disableAllFunctions();
    fam_.registerPass([this] { return llvm::TargetLibraryAnalysis(library_); });
    fam_.registerPass([] { return GpuTargetAnalysis(); });
    builder_.registerModuleAnalyses(mam_);
    builder_.registerCGSCCAnalyses(cgam_);
    builder_.registerFunctionAnalyses(fam_);
    builder_.registerLoopAnalyses(lam_);
    builder_.crossRegisterProxies(lam_, fam_, cgam_, mam_);
  }

  void Run(llvm::ModulePassManager& passes, llvm::Module& module) {
    passes.run(module, mam_);
  }
  void Run(llvm::FunctionPassManager& passes, llvm::Function& function) {
    passes.run(function, fam_);
  }
  // After a change made outside the pass managers.
  void InvalidateAll(llvm::Module& module) {
    mam_.invalidate(module, llvm::PreservedAnalyses::none());
  }

 private:
  llvm::TargetLibraryInfoImpl library_;
  llvm::PassBuilder builder_;
  llvm::LoopAnalysisManager lam_;
  llvm::FunctionAnalysisManager fam_;
  llvm::CGSCCAnalysisManager cgam_;
  llvm::ModuleAnalysisManager mam_;
};

llvm::SimplifyCFGOptions CfgOptions() {
  // Loops stay loops (no folding of a latch into its header's
  // predecessor), no switch becomes a lookup table (a new constant
  // global); a switch over a range becomes a compare. Speculation only
  // moves instructions that are safe to execute unconditionally (no load
  // that may fault).
  return llvm::SimplifyCFGOptions()
      .needCanonicalLoops(true)
      .convertSwitchToLookupTable(false)
      .convertSwitchRangeToICmp(true)
      .forwardSwitchCondToPhi(false);
}

// Step 1: the kernels asked for are the only roots; everything else gets
// internal linkage so that GlobalDCE deletes what they do not reference.
Status SelectKernels(llvm::Module& module,
                     const std::vector<std::string>& kernel_ir_names,
                     std::set<const llvm::Function*>* kernels) {
  for (const std::string& name : kernel_ir_names) {
    llvm::Function* f = module.getFunction(name);
    if (f == nullptr) {
      return Error{"no kernel function '" + name + "' in the module"};
    }
    if (f->isDeclaration()) {
      return Error{"kernel function '" + name + "' has no body"};
    }
    kernels->insert(f);
  }
  // These arrays reference functions and globals only to keep them alive.
  // Metal's program-scope variables are constant-initialized: there is no
  // constructor to run, and nothing would run one.
  for (const char* root :
       {"llvm.global.annotations", "llvm.used", "llvm.compiler.used",
        "llvm.global_ctors", "llvm.global_dtors"}) {
    if (llvm::GlobalVariable* g = module.getNamedGlobal(root)) {
      g->eraseFromParent();
    }
  }
  auto internalize = [](llvm::GlobalValue& value) {
    value.setVisibility(llvm::GlobalValue::DefaultVisibility);
    value.setDLLStorageClass(llvm::GlobalValue::DefaultStorageClass);
    value.setLinkage(llvm::GlobalValue::InternalLinkage);
  };
  for (llvm::Function& f : module) {
    if (f.isDeclaration() || kernels->count(&f) != 0) continue;
    internalize(f);
    f.setComdat(nullptr);
  }
  for (llvm::GlobalVariable& g : module.globals()) {
    if (g.isDeclaration() || g.getName().startswith("llvm.")) continue;
    internalize(g);
    g.setComdat(nullptr);
  }
  for (llvm::GlobalAlias& a : module.aliases()) internalize(a);
  return {};
}

// Intrinsics that only carry information for optimizers or debuggers.
enum class StripAction { kKeep, kErase, kForwardOperand, kPoison };

StripAction StripActionFor(llvm::Intrinsic::ID id) {
  switch (id) {
    case llvm::Intrinsic::var_annotation:
    case llvm::Intrinsic::lifetime_start:
    case llvm::Intrinsic::lifetime_end:
    case llvm::Intrinsic::assume:
    case llvm::Intrinsic::experimental_noalias_scope_decl:
    case llvm::Intrinsic::dbg_declare:
    case llvm::Intrinsic::dbg_value:
    case llvm::Intrinsic::dbg_label:
    case llvm::Intrinsic::dbg_assign:
    case llvm::Intrinsic::donothing:
    case llvm::Intrinsic::sideeffect:
    case llvm::Intrinsic::invariant_end:
    case llvm::Intrinsic::pseudoprobe:
    case llvm::Intrinsic::codeview_annotation:
      return StripAction::kErase;
    case llvm::Intrinsic::ptr_annotation:
    case llvm::Intrinsic::annotation:
    case llvm::Intrinsic::expect:
    case llvm::Intrinsic::expect_with_probability:
    case llvm::Intrinsic::launder_invariant_group:
    case llvm::Intrinsic::strip_invariant_group:
      return StripAction::kForwardOperand;
    case llvm::Intrinsic::invariant_start:
      return StripAction::kPoison;
    default:
      return StripAction::kKeep;
  }
}

// Step 2. Instructions keep their !dbg locations; only the intrinsics go.
void StripIntrinsics(llvm::Module& module) {
  std::vector<llvm::IntrinsicInst*> calls;
  for (llvm::Function& f : module) {
    for (llvm::Instruction& i : llvm::instructions(f)) {
      auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&i);
      if (call != nullptr &&
          StripActionFor(call->getIntrinsicID()) != StripAction::kKeep) {
        calls.push_back(call);
      }
    }
  }
  // invariant.start's token is used by invariant.end: the ends go first.
  std::stable_partition(calls.begin(), calls.end(), [](llvm::IntrinsicInst* c) {
    return StripActionFor(c->getIntrinsicID()) != StripAction::kPoison;
  });
  for (llvm::IntrinsicInst* call : calls) {
    switch (StripActionFor(call->getIntrinsicID())) {
      case StripAction::kForwardOperand:
        call->replaceAllUsesWith(call->getArgOperand(0));
        break;
      case StripAction::kPoison:
        call->replaceAllUsesWith(llvm::PoisonValue::get(call->getType()));
        break;
      default:
        break;
    }
    call->eraseFromParent();
  }
}

// Step 3, first half: every function but the kernels is inlined.
// Program-scope constant tables that the code reaches only through casts to
// the device address space move there, read-only (where the shims'
// `constant` data lives too). Clang makes such a table from a constexpr
// static member array (`wt_transform.const`, MLX's Winograd transforms) in
// OpenCL's __constant and casts it where it is read as `constant T*`.
void MoveCastConstantTablesToDevice(llvm::Module& module) {
  std::vector<llvm::GlobalVariable*> tables;
  for (llvm::GlobalVariable& g : module.globals()) {
    if (g.getAddressSpace() != kConstantAddressSpace || !g.hasInitializer()) {
      continue;
    }
    g.removeDeadConstantUsers();
    const bool only_casts =
        !g.use_empty() && llvm::all_of(g.users(), [](const llvm::User* u) {
          const auto* op = llvm::dyn_cast<llvm::Operator>(u);
          return op != nullptr &&
                 op->getOpcode() == llvm::Instruction::AddrSpaceCast &&
                 op->getType()->getPointerAddressSpace() == kDeviceAddressSpace;
        });
    if (only_casts) tables.push_back(&g);
  }
  for (llvm::GlobalVariable* g : tables) {
    auto* moved = new llvm::GlobalVariable(
        module, g->getValueType(), /*isConstant=*/true, g->getLinkage(),
        g->getInitializer(), g->getName() + ".device", g,
        llvm::GlobalValue::NotThreadLocal, kDeviceAddressSpace);
    moved->setAlignment(g->getAlign());
    moved->setUnnamedAddr(g->getUnnamedAddr());
    std::vector<llvm::User*> casts(g->user_begin(), g->user_end());
    for (llvm::User* cast : casts) {
      cast->replaceAllUsesWith(moved);
      if (auto* inst = llvm::dyn_cast<llvm::Instruction>(cast)) {
        inst->eraseFromParent();
      }
    }
    g->removeDeadConstantUsers();
    if (g->use_empty()) g->eraseFromParent();
  }
}

void MarkHelpersAlwaysInline(llvm::Module& module,
                             const std::set<const llvm::Function*>& kernels) {
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    f.removeFnAttr(llvm::Attribute::OptimizeNone);
    if (kernels.count(&f) != 0) continue;
    f.removeFnAttr(llvm::Attribute::NoInline);
    f.addFnAttr(llvm::Attribute::AlwaysInline);
  }
}

// The ISA has no calls, so every helper is inlined; a helper that calls
// itself cannot be. A self-call in tail position (MLX's
// `LoopedElemToLoc::next(n, ...)` ends with `next(extra, ...)`) becomes a
// loop, as Apple's compiler makes it. Only self-calling functions are
// touched; what recursion is left is reported at lowering, by name.
void EliminateSelfTailCalls(llvm::Module& module, PassContext& passes) {
  std::vector<llvm::Function*> recursive;
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    for (llvm::Instruction& inst : llvm::instructions(f)) {
      auto* call = llvm::dyn_cast<llvm::CallInst>(&inst);
      if (call != nullptr && call->getCalledFunction() == &f) {
        recursive.push_back(&f);
        break;
      }
    }
  }
  for (llvm::Function* f : recursive) {
    llvm::FunctionPassManager fpm;
    // Promoting the locals first lets the pass see that the call reads
    // none of the caller's stack.
    fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    // ... and a return right after the call, where the pass looks for it.
    fpm.addPass(llvm::SimplifyCFGPass(CfgOptions()));
    fpm.addPass(llvm::TailCallElimPass());
    fpm.addPass(llvm::SimplifyCFGPass(CfgOptions()));
    passes.Run(fpm, *f);
  }
  if (!recursive.empty()) passes.InvalidateAll(module);
}

// Pure builtins that are LLVM intrinsics with the same meaning become the
// intrinsics: the optimizers know what they cost (a loop of fma calls is
// unrolled like a loop of a * b + c) and fold them. Instruction selection
// maps both spellings to the same opcode.
void UseIntrinsicsForPureBuiltins(llvm::Module& module) {
  static constexpr std::pair<std::string_view, llvm::Intrinsic::ID> kSame[] = {
      {"fma", llvm::Intrinsic::fma},   {"sqrt", llvm::Intrinsic::sqrt},
      {"fabs", llvm::Intrinsic::fabs}, {"floor", llvm::Intrinsic::floor},
      {"ceil", llvm::Intrinsic::ceil}, {"trunc", llvm::Intrinsic::trunc},
      {"rint", llvm::Intrinsic::rint}, {"copysign", llvm::Intrinsic::copysign}};
  std::vector<llvm::Function*> builtins;
  for (llvm::Function& f : module) {
    if (f.isDeclaration() && f.getName().startswith("air.")) {
      builtins.push_back(&f);
    }
  }
  for (llvm::Function* f : builtins) {
    llvm::SmallVector<llvm::StringRef, 3> parts;
    f->getName().drop_front(4).split(parts, '.');
    if (parts.size() != 2 || (parts[1] != "f32" && parts[1] != "f16")) continue;
    const auto* same =
        std::find_if(std::begin(kSame), std::end(kSame),
                     [&](const auto& p) { return p.first == parts[0].str(); });
    if (same == std::end(kSame)) continue;
    llvm::Function* intrinsic = llvm::Intrinsic::getDeclaration(
        &module, same->second, {f->getReturnType()});
    if (intrinsic->getFunctionType() != f->getFunctionType()) continue;
    std::vector<llvm::CallInst*> calls;
    for (llvm::User* u : f->users()) {
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(u);
          call != nullptr && call->getCalledFunction() == f) {
        calls.push_back(call);
      }
    }
    for (llvm::CallInst* call : calls) {
      llvm::SmallVector<llvm::Value*, 3> args(call->args());
      llvm::CallInst* replacement =
          llvm::CallInst::Create(intrinsic, args, "", call);
      replacement->takeName(call);
      replacement->setDebugLoc(call->getDebugLoc());
      if (llvm::isa<llvm::FPMathOperator>(call)) {
        replacement->setFastMathFlags(call->getFastMathFlags());
      }
      call->replaceAllUsesWith(replacement);
      call->eraseFromParent();
    }
  }
}

// Step 3, second half, and step 4.
llvm::ModulePassManager OptimizationPipeline() {
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  fpm.addPass(llvm::PromotePass());
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::SimplifyCFGPass(CfgOptions()));
  // Early, so that what follows sees the real address spaces.
  fpm.addPass(llvm::InferAddressSpacesPass(kGenericAddressSpace));
  fpm.addPass(MarkConstantLoadsInvariantPass());
  fpm.addPass(llvm::GVNPass());
  // Rotated loops (a guard, then a do-while) take one branch per iteration
  // instead of two, and give LICM a place to hoist to.
  {
    llvm::LoopPassManager lpm;
    lpm.addPass(llvm::LoopRotatePass());
    lpm.addPass(llvm::LICMPass(llvm::LICMOptions()));
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(lpm),
                                                      /*UseMemorySSA=*/true));
  }
  // Unrolls loops whose trip count is known when they are small or when
  // #pragma unroll (llvm.loop.unroll.enable/full/count) asks for it; the
  // thresholds are the target's (target_info.h).
  fpm.addPass(llvm::createFunctionToLoopPassAdaptor(
      llvm::LoopFullUnrollPass(/*OptLevel=*/2)));
  fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  fpm.addPass(llvm::InferAddressSpacesPass(kGenericAddressSpace));
  // What InferAddressSpaces leaves: a choice between a device and a thread
  // pointer, read through.
  fpm.addPass(SplitGenericSelectAccessesPass());
  // Again: SROA turns copies out of constant buffers (a struct read whole)
  // into loads of their own.
  fpm.addPass(MarkConstantLoadsInvariantPass());
  // The unrolled copies recompute the same addresses and reload the same
  // values.
  fpm.addPass(llvm::GVNPass());
  // An inner loop unrolled into its outer loop leaves the outer loop's
  // invariants (row offsets of a tile, a size) inside it.
  fpm.addPass(llvm::createFunctionToLoopPassAdaptor(
      llvm::LICMPass(llvm::LICMOptions()), /*UseMemorySSA=*/true));
  // What is left: loops too big, or with too many iterations, to unroll
  // fully are unrolled partially (a runtime trip count: with a remainder
  // loop), so the loop counter, its compare and its branch are paid once
  // per several bodies.
  fpm.addPass(llvm::LoopUnrollPass(llvm::LoopUnrollOptions(/*OptLevel=*/2)
                                       .setPartial(true)
                                       .setRuntime(true)));
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::SimplifyCFGPass(CfgOptions()));
  fpm.addPass(llvm::LowerConstantIntrinsicsPass());
  fpm.addPass(llvm::ADCEPass());

  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::AlwaysInlinerPass(/*InsertLifetime=*/false));
  mpm.addPass(llvm::ModuleInlinerWrapperPass(llvm::getInlineParams(2, 0)));
  // Inlined helpers are dead now: do not optimize them.
  mpm.addPass(llvm::GlobalDCEPass());
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  return mpm;
}

// After lowering a copy: the loads and stores it became may make an alloca
// promotable.
llvm::FunctionPassManager CleanupPipeline() {
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::SimplifyCFGPass(CfgOptions()));
  fpm.addPass(llvm::ADCEPass());
  return fpm;
}

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

// Returns whether anything was lowered.
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

// Instruction selection writes a phi's incoming value where the predecessor
// branches. On a critical edge (a predecessor with two successors into a
// block with two predecessors) that copy would run on the other path too:
// a loop's value used after the loop would be copied on every iteration.
// Such edges get a block of their own, laid out after the predecessor,
// except back edges (the loop's own phis are copied each iteration anyway,
// and a block there would add a branch per iteration).
void SplitCriticalEdgesIntoPhis(llvm::Function& function) {
  const llvm::DominatorTree dominators(function);
  std::vector<std::pair<llvm::Instruction*, unsigned>> edges;
  for (llvm::BasicBlock& block : function) {
    llvm::Instruction* branch = block.getTerminator();
    for (unsigned i = 0; i < branch->getNumSuccessors(); ++i) {
      llvm::BasicBlock* to = branch->getSuccessor(i);
      if (!to->phis().empty() && !dominators.dominates(to, &block) &&
          llvm::isCriticalEdge(branch, i)) {
        edges.emplace_back(branch, i);
      }
    }
  }
  for (const auto& [branch, i] : edges) {
    llvm::SplitCriticalEdge(branch, i);
  }
}

// After scalarization: a vector rebuilt lane by lane from phis of one block
// (a simdgroup_matrix accumulator carried around a loop: scalarized into a
// phi per element, then put back together for the next multiply) becomes a
// vector phi again, when every predecessor gives the lanes of one vector (or
// constants). Instruction selection keeps a vector in a register block, so
// the loop carries the block instead of copying elements in and out.
bool RevectorizePhis(llvm::Function& function) {
  bool changed = false;
  std::vector<llvm::InsertElementInst*> builds;
  for (llvm::Instruction& inst : llvm::instructions(function)) {
    auto* ie = llvm::dyn_cast<llvm::InsertElementInst>(&inst);
    if (ie == nullptr) continue;
    // The last insert of a chain.
    bool last = true;
    for (llvm::User* u : ie->users()) {
      if (llvm::isa<llvm::InsertElementInst>(u) && u->getOperand(0) == ie) {
        last = false;
      }
    }
    if (last) builds.push_back(ie);
  }
  for (llvm::InsertElementInst* ie : builds) {
    auto* type = llvm::dyn_cast<llvm::FixedVectorType>(ie->getType());
    if (type == nullptr) continue;
    const unsigned n = type->getNumElements();
    std::vector<llvm::PHINode*> lanes(n, nullptr);
    llvm::Value* v = ie;
    while (auto* step = llvm::dyn_cast<llvm::InsertElementInst>(v)) {
      auto* index = llvm::dyn_cast<llvm::ConstantInt>(step->getOperand(2));
      auto* phi = llvm::dyn_cast<llvm::PHINode>(step->getOperand(1));
      if (index == nullptr || phi == nullptr || index->getZExtValue() >= n) {
        v = nullptr;
        break;
      }
      if (lanes[index->getZExtValue()] == nullptr) {
        lanes[index->getZExtValue()] = phi;
      }
      v = step->getOperand(0);
    }
    if (v == nullptr || !llvm::isa<llvm::UndefValue>(v)) continue;
    llvm::BasicBlock* block = lanes[0] ? lanes[0]->getParent() : nullptr;
    if (block == nullptr ||
        std::any_of(lanes.begin(), lanes.end(), [&](llvm::PHINode* p) {
          return p == nullptr || p->getParent() != block;
        })) {
      continue;
    }
    // Per predecessor: one vector whose lanes these are, or constants.
    std::vector<std::pair<llvm::BasicBlock*, llvm::Value*>> incoming;
    bool ok = true;
    for (unsigned k = 0; ok && k < lanes[0]->getNumIncomingValues(); ++k) {
      llvm::BasicBlock* from = lanes[0]->getIncomingBlock(k);
      llvm::Value* source = nullptr;
      std::vector<llvm::Constant*> constants;
      for (unsigned lane = 0; ok && lane < n; ++lane) {
        llvm::Value* in = lanes[lane]->getIncomingValueForBlock(from);
        if (auto* c = llvm::dyn_cast<llvm::Constant>(in)) {
          constants.push_back(c);
          continue;
        }
        auto* ee = llvm::dyn_cast<llvm::ExtractElementInst>(in);
        auto* index =
            ee ? llvm::dyn_cast<llvm::ConstantInt>(ee->getIndexOperand())
               : nullptr;
        if (index == nullptr || index->getZExtValue() != lane ||
            ee->getVectorOperand()->getType() != type ||
            (source != nullptr && source != ee->getVectorOperand())) {
          ok = false;
          break;
        }
        source = ee->getVectorOperand();
      }
      if (!ok) break;
      if (source != nullptr && !constants.empty()) ok = false;
      if (source == nullptr) source = llvm::ConstantVector::get(constants);
      incoming.push_back({from, source});
    }
    if (!ok) continue;
    llvm::PHINode* vector_phi = llvm::PHINode::Create(
        type, static_cast<unsigned>(incoming.size()), "", &block->front());
    for (auto [from, source] : incoming) vector_phi->addIncoming(source, from);
    vector_phi->setDebugLoc(lanes[0]->getDebugLoc());
    ie->replaceAllUsesWith(vector_phi);
    changed = true;
  }
  return changed;
}

// Step 6, second part: constant expressions become instructions, except a
// constant offset into a threadgroup variable, which instruction selection
// folds into an address. The others are address arithmetic the optimizers
// folded into constants: `atomic_bool` in threadgroup memory, for one, rounds
// its variable's address down to a word with ptrtoint, and, inttoptr.
bool IsFoldedAddress(const llvm::ConstantExpr& e) {
  const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(&e);
  if (gep == nullptr || !gep->hasAllConstantIndices()) return false;
  const auto* g =
      llvm::dyn_cast<llvm::GlobalVariable>(gep->getPointerOperand());
  return g != nullptr && g->getAddressSpace() == kThreadgroupAddressSpace;
}

void ExpandConstantExpressions(llvm::Function& function) {
  // Each round turns the outermost expressions into instructions, whose
  // operands the next round looks at.
  std::vector<std::pair<llvm::Instruction*, llvm::ConstantExpr*>> found;
  int rounds = 0;
  do {
    found.clear();
    for (llvm::Instruction& inst : llvm::instructions(function)) {
      for (llvm::Value* operand : inst.operands()) {
        auto* e = llvm::dyn_cast<llvm::ConstantExpr>(operand);
        if (e != nullptr && !IsFoldedAddress(*e)) found.push_back({&inst, e});
      }
    }
    for (auto [inst, e] : found) {
      llvm::convertConstantExprsToInstructions(inst, e);
    }
  } while (!found.empty() && ++rounds < 64);
}

std::string Print(const llvm::Value& value) {
  std::string text;
  llvm::raw_string_ostream out(text);
  value.print(out);
  out.flush();
  const size_t start = text.find_first_not_of(' ');
  return start == std::string::npos ? text : text.substr(start);
}

std::string Print(const llvm::Type& type) {
  std::string text;
  llvm::raw_string_ostream out(text);
  type.print(out);
  out.flush();
  return text;
}

// What the back end does not handle in a type, or "" if nothing.
std::string UnexpectedType(llvm::Type* type, int depth = 0) {
  if (type == nullptr || depth > 8) return "";
  if (auto* p = llvm::dyn_cast<llvm::PointerType>(type)) {
    return p->getAddressSpace() == kGenericAddressSpace ? "generic pointer"
                                                        : "";
  }
  if (auto* v = llvm::dyn_cast<llvm::VectorType>(type)) {
    if (llvm::isa<llvm::ScalableVectorType>(v)) return "scalable vector";
    if (llvm::cast<llvm::FixedVectorType>(v)->getNumElements() > 4) {
      return "vector of more than 4 elements (" + Print(*type) + ")";
    }
    return UnexpectedType(v->getElementType(), depth + 1);
  }
  if (auto* i = llvm::dyn_cast<llvm::IntegerType>(type)) {
    const unsigned bits = i->getBitWidth();
    if (bits == 1 || bits == 8 || bits == 16 || bits == 32 || bits == 64) {
      return "";
    }
    return "integer type " + Print(*type);
  }
  if (type->isFloatingPointTy()) {
    if (type->isHalfTy() || type->isBFloatTy() || type->isFloatTy()) return "";
    return "floating-point type " + Print(*type);
  }
  if (auto* a = llvm::dyn_cast<llvm::ArrayType>(type)) {
    return UnexpectedType(a->getElementType(), depth + 1);
  }
  if (auto* s = llvm::dyn_cast<llvm::StructType>(type)) {
    for (llvm::Type* element : s->elements()) {
      std::string found = UnexpectedType(element, depth + 1);
      if (!found.empty()) return found;
    }
  }
  return "";
}

// What the back end does not handle about an instruction itself (not its
// types), or "".
std::string UnexpectedInstruction(const llvm::Instruction& i) {
  if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&i)) {
    if (!llvm::isa<llvm::ConstantInt>(alloca->getArraySize())) {
      return "alloca of dynamic size";
    }
    if (alloca->getParent() != &alloca->getFunction()->getEntryBlock()) {
      return "alloca outside the entry block";
    }
    return "";
  }
  if (llvm::isa<llvm::SwitchInst>(i)) return "switch";
  if (llvm::isa<llvm::InvokeInst>(i)) return "invoke";
  if (llvm::isa<llvm::CallBrInst>(i)) return "callbr";
  if (llvm::isa<llvm::IndirectBrInst>(i)) return "indirectbr";
  if (i.isEHPad() || llvm::isa<llvm::ResumeInst>(i) ||
      llvm::isa<llvm::CatchReturnInst>(i) ||
      llvm::isa<llvm::CleanupReturnInst>(i)) {
    return "exception handling";
  }
  if (llvm::isa<llvm::VAArgInst>(i)) return "va_arg";
  auto* call = llvm::dyn_cast<llvm::CallBase>(&i);
  if (call == nullptr) return "";
  if (call->isInlineAsm()) return "inline assembly";
  const llvm::Function* callee = call->getCalledFunction();
  if (callee == nullptr) return "indirect call";
  if (callee->isIntrinsic()) {
    if (llvm::isa<llvm::AnyMemIntrinsic>(call)) return "memory intrinsic";
    if (StripActionFor(callee->getIntrinsicID()) != StripAction::kKeep) {
      return "intrinsic the pipeline strips";
    }
    return "";
  }
  const std::string name = callee->getName().str();
  if (name.rfind("air.", 0) == 0) return "";
  if (callee->isDeclaration()) {
    return "call to undefined function '" + name + "'";
  }
  return "call to function '" + name + "' that was not inlined";
}

}  // namespace

Status PrepareModule(llvm::Module& module,
                     const std::vector<std::string>& kernel_ir_names,
                     std::string* error) {
  auto fail = [error](std::string message) -> Status {
    if (error != nullptr) *error = message;
    return Error{std::move(message)};
  };
  if (kernel_ir_names.empty()) return fail("no kernel asked for");

  PassContext passes;
  std::set<const llvm::Function*> kernels;
  // 1. Only the kernels asked for.
  if (Status s = SelectKernels(module, kernel_ir_names, &kernels); !s.ok()) {
    return fail(s.error().message);
  }
  {
    llvm::ModulePassManager dce;
    dce.addPass(llvm::GlobalDCEPass());
    passes.Run(dce, module);
  }
  // spir64's layout names no native integer width, so InstCombine narrows
  // freely (x % 8 to an i3) and LSR rewrites no induction variable: while
  // the optimizers run, the widths a 32-bit register holds (64-bit values
  // take two).
  const std::string layout = module.getDataLayoutStr();
  if (layout.find("-n") == std::string::npos) {
    module.setDataLayout(layout + "-n8:16:32");
  }
  MoveCastConstantTablesToDevice(module);
  // 2 and 3.
  StripIntrinsics(module);
  MarkHelpersAlwaysInline(module, kernels);
  EliminateSelfTailCalls(module, passes);
  RemoveConvergenceFromPureBuiltins(module);
  UseIntrinsicsForPureBuiltins(module);
  DescribeBuiltinMemoryEffects(module);
  passes.InvalidateAll(module);
  {
    llvm::ModulePassManager optimize = OptimizationPipeline();
    passes.Run(optimize, module);
  }
  // 2 again: inlining and the optimizers can bring some back.
  StripIntrinsics(module);
  passes.InvalidateAll(module);
  // 5 and 6.
  const llvm::TargetTransformInfo tti(module.getDataLayout());
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    if (LowerMemIntrinsics(f, tti)) {
      passes.InvalidateAll(module);
      llvm::FunctionPassManager cleanup = CleanupPipeline();
      passes.Run(cleanup, f);
    }
  }
  StripIntrinsics(module);
  passes.InvalidateAll(module);
  {
    llvm::FunctionPassManager fpm;
    // MSL vectors (float4 arithmetic, vector loads and stores) become
    // scalar operations: the back end sees scalars only (the SIMD group is
    // the vector).
    llvm::ScalarizerPass scalarizer;
    scalarizer.setScalarizeLoadStore(true);
    fpm.addPass(std::move(scalarizer));
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(llvm::DCEPass());
    fpm.addPass(llvm::LowerSwitchPass());
    llvm::ModulePassManager mpm;
    mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
    mpm.addPass(llvm::GlobalDCEPass());
    passes.Run(mpm, module);
  }
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    ContractMultiplyAdds(f);
  }
  for (llvm::Function& f : module) {
    if (f.isDeclaration() || !RevectorizePhis(f)) continue;
    passes.InvalidateAll(module);
    llvm::FunctionPassManager cleanup;
    cleanup.addPass(llvm::InstCombinePass());
    cleanup.addPass(llvm::DCEPass());
    passes.Run(cleanup, f);
  }
  // Loop strength reduction, last among the IR passes (as in LLVM's code
  // generator: the instcombine of earlier steps folds i + 1 < n into
  // i < n - 1, which keeps both counters live): one
  // induction variable per loop where it can, the exit test on the
  // incremented value, addresses the memory operands take whole.
  {
    llvm::FunctionPassManager fpm;
    fpm.addPass(
        llvm::createFunctionToLoopPassAdaptor(llvm::LoopStrengthReducePass()));
    // LCSSA's single-input phis, and SCEV's spelling of x % 8 (a trunc to
    // i3 and back) as the mask it was; what LSR left unused. The exit
    // compare stays on the incremented counter: LSR's add has no nuw for
    // instcombine to fold it back with.
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(llvm::DCEPass());
    llvm::ModulePassManager mpm;
    mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
    passes.InvalidateAll(module);
    passes.Run(mpm, module);
  }
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    ExpandConstantExpressions(f);
    SplitCriticalEdgesIntoPhis(f);
    // After the last InstCombine, which makes them.
    ReadNarrowElementsThroughWideOnes(f);
  }
  module.setDataLayout(layout);
  passes.InvalidateAll(module);
  // 7.
  std::string message;
  llvm::raw_string_ostream out(message);
  if (llvm::verifyModule(module, &out)) {
    out.flush();
    return fail("the prepared LLVM module does not verify: " + message);
  }
  return {};
}

std::vector<std::string> UnexpectedConstructs(const llvm::Module& module) {
  std::vector<std::string> found;
  for (const llvm::GlobalVariable& g : module.globals()) {
    if (g.getName().startswith("llvm.")) continue;
    // Program-scope `constant` data is __constant or, as the shims spell
    // it, `__global const`; threadgroup variables are __local.
    const unsigned space = g.getAddressSpace();
    const bool read_only_device =
        space == kDeviceAddressSpace && g.isConstant();
    if (space != kConstantAddressSpace && space != kThreadgroupAddressSpace &&
        !read_only_device) {
      found.push_back("@" + g.getName().str() +
                      ": global variable in address space " +
                      std::to_string(space) +
                      " (only constant data and threadgroup variables are "
                      "supported)");
    }
    if (std::string t = UnexpectedType(g.getValueType()); !t.empty()) {
      found.push_back("@" + g.getName().str() + ": " + t);
    }
  }
  for (const llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    const std::string name = f.getName().str();
    for (const llvm::Instruction& i : llvm::instructions(f)) {
      std::vector<std::string> what;
      if (std::string s = UnexpectedInstruction(i); !s.empty()) {
        what.push_back(std::move(s));
      }
      std::vector<llvm::Type*> types = {i.getType()};
      for (const llvm::Use& operand : i.operands()) {
        if (!llvm::isa<llvm::BasicBlock>(operand.get()) &&
            !llvm::isa<llvm::Function>(operand.get())) {
          types.push_back(operand->getType());
        }
      }
      if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&i)) {
        types.push_back(alloca->getAllocatedType());
      }
      if (auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(&i)) {
        types.push_back(gep->getSourceElementType());
      }
      for (llvm::Type* type : types) {
        std::string s = UnexpectedType(type);
        if (!s.empty() &&
            std::find(what.begin(), what.end(), s) == what.end()) {
          what.push_back(std::move(s));
        }
      }
      for (const std::string& w : what) {
        found.push_back(name + ": " + w + ": " + Print(i));
      }
    }
  }
  return found;
}

}  // namespace mtlemu::air
