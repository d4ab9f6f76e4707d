// Intrinsics for optimizers and debuggers removed from the module.
#include "compiler/air/intrinsic_stripping.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <vector>

namespace mtlemu::air {

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

}  // namespace mtlemu::air
