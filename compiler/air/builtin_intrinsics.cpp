// Pure air.* builtins replaced by the LLVM intrinsics of the same meaning.
#include "compiler/air/builtin_intrinsics.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>

#include <algorithm>
#include <iterator>
#include <string_view>
#include <utility>
#include <vector>

namespace mtlemu::air {

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

}  // namespace mtlemu::air
