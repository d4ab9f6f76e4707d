// Constant tables read only as device memory, moved to the device space.
#include "compiler/air/constant_tables.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Instruction.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>

#include <vector>

#include "compiler/air/address_spaces.h"

namespace mtlemu::air {

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

}  // namespace mtlemu::air
