// The findings of the IR legality check, one line each.
#include "compiler/air/ir_legality.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Type.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "compiler/air/address_spaces.h"
#include "compiler/air/intrinsic_stripping.h"
#include "compiler/air/llvm_text.h"

namespace mtlemu::air {

bool IsRegisterIntegerWidth(unsigned bits) {
  return bits == 1 || bits == 8 || bits == 16 || bits == 32 || bits == 64;
}

namespace {

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
      return "vector of more than 4 elements (" + LlvmText(*type) + ")";
    }
    return UnexpectedType(v->getElementType(), depth + 1);
  }
  if (auto* i = llvm::dyn_cast<llvm::IntegerType>(type)) {
    if (IsRegisterIntegerWidth(i->getBitWidth())) return "";
    return "integer type " + LlvmText(*type);
  }
  if (type->isFloatingPointTy()) {
    if (type->isHalfTy() || type->isBFloatTy() || type->isFloatTy()) return "";
    return "floating-point type " + LlvmText(*type);
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
        found.push_back(name + ": " + w + ": " + LlvmText(i));
      }
    }
  }
  return found;
}

}  // namespace mtlemu::air
