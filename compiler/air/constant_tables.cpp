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
  auto device_cast = [](const llvm::User* u) {
    const auto* op = llvm::dyn_cast<llvm::Operator>(u);
    return op != nullptr &&
           op->getOpcode() == llvm::Instruction::AddrSpaceCast &&
           op->getType()->getPointerAddressSpace() == kDeviceAddressSpace;
  };
  std::vector<llvm::GlobalVariable*> tables;
  for (llvm::GlobalVariable& g : module.globals()) {
    if (g.getAddressSpace() != kConstantAddressSpace || !g.hasInitializer()) {
      continue;
    }
    g.removeDeadConstantUsers();
    if (llvm::any_of(g.users(), device_cast)) tables.push_back(&g);
  }
  // Each cast's reads go to the copy, whatever the table's other uses (in
  // other kernels, maybe): a kernel's code depends on its own code alone.
  for (llvm::GlobalVariable* g : tables) {
    auto* moved = new llvm::GlobalVariable(
        module, g->getValueType(), /*isConstant=*/true, g->getLinkage(),
        g->getInitializer(), g->getName() + ".device", g,
        llvm::GlobalValue::NotThreadLocal, kDeviceAddressSpace);
    moved->setAlignment(g->getAlign());
    moved->setUnnamedAddr(g->getUnnamedAddr());
    std::vector<llvm::User*> casts;
    for (llvm::User* u : g->users()) {
      if (device_cast(u)) casts.push_back(u);
    }
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
