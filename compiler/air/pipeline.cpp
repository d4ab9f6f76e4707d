// The pipeline itself: the order of the passes (pipeline.h's steps), the
// pass managers that run LLVM's, and the choice of kernels.
#include "compiler/air/pipeline.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/InlineCost.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/Attributes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalAlias.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
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
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/LowerSwitch.h>
#include <llvm/Transforms/Utils/Mem2Reg.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/air/address_spaces.h"
#include "compiler/air/builtin_intrinsics.h"
#include "compiler/air/constant_expressions.h"
#include "compiler/air/constant_tables.h"
#include "compiler/air/contraction.h"
#include "compiler/air/convergence.h"
#include "compiler/air/generic_selects.h"
#include "compiler/air/intrinsic_stripping.h"
#include "compiler/air/ir_legality.h"
#include "compiler/air/memory_facts.h"
#include "compiler/air/memory_intrinsics.h"
#include "compiler/air/phi_copies.h"
#include "compiler/air/target_info.h"
#include "compiler/air/vector_bitcasts.h"

namespace mtlemu::air {
namespace {

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

// The functions and global variables of `module` in name order. The
// always-inliner visits functions in module order, and the back end lays
// out a kernel's globals in it, which is the order clang emitted them in:
// a kernel's code would depend on which other kernels the module held
// (whole-file compiles, a kernel alone, the parts of kernel_parts.h).
// Names are the same whatever else is compiled.
template <class List>
void SortByName(List& list) {
  std::vector<typename List::value_type*> items;
  for (auto& item : list) items.push_back(&item);
  std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) {
    return a->getName() < b->getName();
  });
  for (auto* item : items) list.splice(list.end(), list, item->getIterator());
}

// Step 3, first half: every function but the kernels is inlined.
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

// The functions `module` defines (a copy of the list: passes may add).
std::vector<llvm::Function*> DefinedFunctions(llvm::Module& module) {
  std::vector<llvm::Function*> out;
  for (llvm::Function& f : module) {
    if (!f.isDeclaration()) out.push_back(&f);
  }
  return out;
}

// Whether `f` computes in an integer width the back end has no registers
// for (ir_legality.h's rule).
bool HasOddIntegerWidths(const llvm::Function& f) {
  auto odd = [](const llvm::Type* t) {
    const auto* i = llvm::dyn_cast<llvm::IntegerType>(t->getScalarType());
    return i != nullptr && !IsRegisterIntegerWidth(i->getBitWidth());
  };
  for (const llvm::Instruction& i : llvm::instructions(f)) {
    if (odd(i.getType())) return true;
    for (const llvm::Use& u : i.operands()) {
      if (odd(u->getType())) return true;
    }
  }
  return false;
}

// Gives `f` the body of `from` (a clone of it, same signature), which is
// left empty.
void ReplaceBody(llvm::Function& f, llvm::Function& from) {
  for (llvm::BasicBlock& b : f) b.dropAllReferences();
  while (!f.empty()) f.begin()->eraseFromParent();
  for (unsigned i = 0; i < f.arg_size(); ++i) {
    from.getArg(i)->replaceAllUsesWith(f.getArg(i));
  }
  f.splice(f.begin(), &from);
  // The clone's instructions are in the clone's subprogram (a copy).
  f.setSubprogram(from.getSubprogram());
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
  SortByName(module.getFunctionList());
  SortByName(module.getGlobalList());
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
  passes.InvalidateAll(module);
  for (llvm::Function* f : DefinedFunctions(module)) {
    llvm::FunctionPassManager fpm;
    fpm.addPass(
        llvm::createFunctionToLoopPassAdaptor(llvm::LoopStrengthReducePass()));
    // LCSSA's single-input phis, and SCEV's spelling of x % 8 (a trunc to
    // i3 and back) as the mask it was; what LSR left unused. The exit
    // compare stays on the incremented counter: LSR's add has no nuw for
    // instcombine to fold it back with.
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(llvm::DCEPass());
    // LSR may count in a width no register has (an i3 induction variable
    // for a loop whose counter SCEV sees mod 8): such a function keeps
    // its body from before LSR.
    llvm::ValueToValueMapTy map;
    llvm::Function* before = llvm::CloneFunction(f, map);
    passes.Run(fpm, *f);
    if (HasOddIntegerWidths(*f)) {
      ReplaceBody(*f, *before);
      passes.InvalidateAll(module);
    }
    before->eraseFromParent();
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

}  // namespace mtlemu::air
