// Instruction selection (lowering.h): the kernel's interface (buffers,
// threadgroup arguments, thread-position inputs) and its static memory
// (threadgroup and thread arrays, program-scope constant data).
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Support/Alignment.h>
#include <llvm/Support/MathExtras.h>

#include <cstdint>
#include <vector>

#include "compiler/air/lowering.h"
#include "isa/module.h"

namespace mtlemu::air::internal {
namespace {

// Whether `f` uses `v`, directly or through constant expressions.
bool UsedIn(const llvm::Value& v, const llvm::Function& f) {
  for (const llvm::User* u : v.users()) {
    if (const auto* inst = llvm::dyn_cast<llvm::Instruction>(u)) {
      if (inst->getFunction() == &f) return true;
    } else if (llvm::isa<llvm::Constant>(u) && UsedIn(*u, f)) {
      return true;
    }
  }
  return false;
}

// Writes the bytes of a constant initializer, as the target lays it out.
bool SerializeConstant(const llvm::Constant* c, const llvm::DataLayout& layout,
                       uint8_t* out) {
  if (llvm::isa<llvm::ConstantAggregateZero>(c) ||
      llvm::isa<llvm::UndefValue>(c) ||
      llvm::isa<llvm::ConstantPointerNull>(c)) {
    return true;  // the buffer starts zeroed
  }
  if (const auto* i = llvm::dyn_cast<llvm::ConstantInt>(c)) {
    const uint64_t v = i->getValue().getZExtValue();
    const uint64_t n = layout.getTypeStoreSize(c->getType());
    for (uint64_t b = 0; b < n; ++b)
      out[b] = static_cast<uint8_t>(v >> (8 * b));
    return true;
  }
  if (const auto* f = llvm::dyn_cast<llvm::ConstantFP>(c)) {
    const uint64_t v = f->getValueAPF().bitcastToAPInt().getZExtValue();
    const uint64_t n = layout.getTypeStoreSize(c->getType());
    for (uint64_t b = 0; b < n; ++b)
      out[b] = static_cast<uint8_t>(v >> (8 * b));
    return true;
  }
  if (const auto* d = llvm::dyn_cast<llvm::ConstantDataSequential>(c)) {
    const llvm::StringRef raw = d->getRawDataValues();
    std::copy(raw.begin(), raw.end(), out);
    return true;
  }
  if (const auto* st = llvm::dyn_cast<llvm::ConstantStruct>(c)) {
    const llvm::StructLayout* sl = layout.getStructLayout(st->getType());
    for (unsigned k = 0; k < st->getNumOperands(); ++k) {
      if (!SerializeConstant(st->getOperand(k), layout,
                             out + sl->getElementOffset(k))) {
        return false;
      }
    }
    return true;
  }
  if (llvm::isa<llvm::ConstantArray>(c) || llvm::isa<llvm::ConstantVector>(c)) {
    const llvm::Type* element =
        c->getType()->isArrayTy()
            ? c->getType()->getArrayElementType()
            : llvm::cast<llvm::VectorType>(c->getType())->getElementType();
    const uint64_t stride =
        layout.getTypeAllocSize(const_cast<llvm::Type*>(element));
    for (unsigned k = 0; k < c->getNumOperands(); ++k) {
      if (!SerializeConstant(llvm::cast<llvm::Constant>(c->getOperand(k)),
                             layout, out + k * stride)) {
        return false;
      }
    }
    return true;
  }
  return false;  // e.g. addresses of other globals
}

}  // namespace

void Lowering::SetUpArguments() {
  int& uniform = next_uniform_;
  size_t i = 0;
  for (const llvm::Argument& a : f_.args()) {
    if (i >= decl_.parameters.size()) break;
    const msl::KernelParameter& p = decl_.parameters[i++];
    switch (p.kind) {
      case msl::ParameterKind::kBuffer: {
        if (!a.getType()->isPointerTy()) {
          Unsupported("buffer parameter '" + p.name + "' passed by value",
                      nullptr);
          break;
        }
        isa::BufferArgument b;
        b.index = p.index;
        b.uniform = uniform;
        // `constant` is read-only device memory in the IR; the front end
        // knows which it was.
        b.space = SpaceOfPointer(a.getType()) == AddressSpace::kConstant ||
                          p.space == AddressSpace::kConstant
                      ? AddressSpace::kConstant
                      : AddressSpace::kDevice;
        b.element = p.element;
        b.name = p.name;
        kernel_.buffers.push_back(b);
        arguments_[&a] = Operand::Uniform(uniform);
        uniform += 2;
        break;
      }
      case msl::ParameterKind::kThreadgroup: {
        kernel_.threadgroup_arguments.push_back({p.index, uniform, p.name});
        arguments_[&a] = Operand::Uniform(uniform);
        uniform += 1;
        break;
      }
      case msl::ParameterKind::kBuiltin: {
        const auto specials = isa::SpecialRegistersOfAttribute(p.attribute);
        if (!specials) {
          Unsupported("input attribute [[" + p.attribute + "]]", nullptr);
          break;
        }
        specials_[&a] = *specials;
        arguments_[&a] = Operand::Special((*specials)[0]);
        break;
      }
    }
  }
}

void Lowering::AllocateStaticMemory() {
  // Threadgroup arrays declared in the kernel: static threadgroup memory.
  // The module may hold other kernels' arrays too.
  // Sizes add up in 64 bits: a 4 GiB array must not wrap to nothing. More
  // than the 32 KB a device has compiles (the pipeline refuses it, as
  // Metal's does); more than 32 bits can count cannot.
  constexpr uint64_t kMaxBytes = uint64_t{1} << 31;
  uint64_t offset = 0;
  for (const llvm::GlobalVariable& g : f_.getParent()->globals()) {
    if (g.getAddressSpace() != kThreadgroupAddressSpace || !UsedIn(g, f_)) {
      continue;
    }
    const llvm::Align align = g.getAlign().valueOrOne();
    offset = llvm::alignTo(offset, align);
    threadgroup_globals_[&g] = static_cast<uint32_t>(offset);
    offset += layout_.getTypeAllocSize(g.getValueType()).getFixedValue();
    if (offset > kMaxBytes) {
      error_ = "kernel '" + decl_.name + "' declares more than " +
               std::to_string(kMaxBytes) +
               " bytes of threadgroup memory (a device has 32768: "
               "maxThreadgroupMemoryLength), in '" +
               llvm::demangle(g.getName().str()) + "'";
      return;
    }
  }
  kernel_.static_threadgroup_memory =
      static_cast<uint32_t>(llvm::alignTo(offset, 16));
  // Private arrays: thread memory.
  uint64_t thread = 0;
  for (const llvm::Instruction& inst : f_.getEntryBlock()) {
    if (const auto* a = llvm::dyn_cast<llvm::AllocaInst>(&inst)) {
      const auto size = a->getAllocationSize(layout_);
      if (!size) {
        Unsupported("a private array of run-time size", a);
        continue;
      }
      thread = llvm::alignTo(thread, a->getAlign());
      allocas_[a] = static_cast<uint32_t>(thread);
      thread += size->getFixedValue();
      if (thread > kMaxBytes) {
        Unsupported("more than " + std::to_string(kMaxBytes) +
                        " bytes of private arrays a thread",
                    a);
        return;
      }
    }
  }
  kernel_.thread_memory = static_cast<uint32_t>(llvm::alignTo(thread, 16));
}

// Constant globals the kernel reads (MSL `constant` tables; the file's
// other kernels' are not its own) are laid out in the kernel's constant
// data; each gets a register with its address.
void Lowering::LayOutConstantData() {
  std::vector<const llvm::GlobalVariable*> globals;
  uint64_t size = 0;
  llvm::DenseMap<const llvm::GlobalVariable*, uint64_t> offsets;
  for (const llvm::GlobalVariable& g : f_.getParent()->globals()) {
    // Device and constant address spaces only: the data lives in a buffer.
    const unsigned space = g.getAddressSpace();
    if ((space != kDeviceAddressSpace && space != kConstantAddressSpace) ||
        !g.isConstant() || !g.hasInitializer() || !UsedIn(g, f_)) {
      continue;
    }
    const llvm::Align align =
        std::max(g.getAlign().valueOrOne(), llvm::Align(16));
    size = llvm::alignTo(size, align);
    offsets[&g] = size;
    size += layout_.getTypeAllocSize(g.getValueType()).getFixedValue();
    globals.push_back(&g);
  }
  if (globals.empty()) return;
  kernel_.constant_data.assign(size, 0);
  kernel_.constant_data_uniform = next_uniform_;
  next_uniform_ += 2;
  for (const llvm::GlobalVariable* g : globals) {
    if (!SerializeConstant(g->getInitializer(), layout_,
                           kernel_.constant_data.data() + offsets[g])) {
      Unsupported("the initializer of program-scope constant '" +
                      g->getName().str() + "'",
                  nullptr);
      return;
    }
    // The first constant starts at the buffer: its address is the uniform.
    if (offsets[g] == 0) {
      constant_globals_[g] = Operand::Uniform(kernel_.constant_data_uniform);
      continue;
    }
    const Operand address = Operand::Reg(static_cast<int>(NewVReg()));
    Emit(Opcode::kAdd, ScalarType::kULong,
         {address, Operand::Uniform(kernel_.constant_data_uniform),
          Immediate(offsets[g])});
    constant_globals_[g] = address;
  }
}

}  // namespace mtlemu::air::internal
