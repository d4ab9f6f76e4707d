#include "compiler/air/lower_kernel.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>
#include <llvm/Support/raw_ostream.h>

#include <cassert>
#include <map>
#include <optional>

#include "compiler/air/address_spaces.h"
#include "compiler/air/builtin_calls.h"
#include "compiler/air/constant_hoisting.h"
#include "compiler/air/dead_code.h"
#include "compiler/air/memory_scheduling.h"
#include "compiler/air/reconvergence.h"
#include "compiler/air/register_allocation.h"
#include "compiler/air/target_info.h"
#include "compiler/air/vector_memory.h"
#include "isa/verifier.h"

namespace mtlemu::air {
namespace {

using isa::AddressSpace;
using isa::Instruction;
using isa::Opcode;
using isa::Operand;
using isa::ScalarType;
using isa::SpecialRegister;

template <class T>
std::string Printed(const T& v) {
  std::string s;
  llvm::raw_string_ostream out(s);
  v.print(out);
  return s;
}

// The value of a key that is in `map` (as std::map::at, which DenseMap
// lacks).
template <class Map, class Key>
const auto& At(const Map& map, const Key& key) {
  const auto it = map.find(key);
  assert(it != map.end());
  return it->second;
}

AddressSpace SpaceOfPointer(const llvm::Type* t) {
  switch (t->getPointerAddressSpace()) {
    case kDeviceAddressSpace:
      return AddressSpace::kDevice;
    case kConstantAddressSpace:
      return AddressSpace::kConstant;
    case kThreadgroupAddressSpace:
      return AddressSpace::kThreadgroup;
    case kPrivateAddressSpace:
      return AddressSpace::kThread;
    default:
      return AddressSpace::kNone;
  }
}

class Lowering {
 public:
  Lowering(const llvm::Function& f, const msl::KernelDeclaration& decl)
      : f_(f), decl_(decl), layout_(f.getParent()->getDataLayout()) {}

  Result<isa::Kernel> Run();
  // `kernel` as the pass named `pass` left it verified (with virtual
  // registers before allocation), else an internal compiler error naming
  // the pass.
  Status Verified(const isa::Kernel& kernel, std::string_view pass,
                  bool virtual_registers = true) const;

 private:
  // --- errors -------------------------------------------------------------
  void Unsupported(const std::string& what, const llvm::Value* at) {
    if (!error_.empty()) return;
    error_ = "unsupported: " + what + " in kernel '" + decl_.name + "'";
    if (const auto* inst = llvm::dyn_cast_or_null<llvm::Instruction>(at)) {
      const isa::SourceLocation loc = LocationOf(*inst);
      if (loc.line) error_ += " (line " + std::to_string(loc.line) + ")";
      error_ += ": " + Printed(*inst);
    }
  }

  // --- types and operands --------------------------------------------------
  std::optional<ScalarType> TypeOf(const llvm::Type* t, bool is_signed) {
    if (t->isIntegerTy(1)) return ScalarType::kUInt;
    if (t->isIntegerTy(8))
      return is_signed ? ScalarType::kChar : ScalarType::kUChar;
    if (t->isIntegerTy(16))
      return is_signed ? ScalarType::kShort : ScalarType::kUShort;
    if (t->isIntegerTy(32))
      return is_signed ? ScalarType::kInt : ScalarType::kUInt;
    if (t->isIntegerTy(64))
      return is_signed ? ScalarType::kLong : ScalarType::kULong;
    if (t->isHalfTy()) return ScalarType::kHalf;
    if (t->isBFloatTy()) return ScalarType::kBFloat;
    if (t->isFloatTy()) return ScalarType::kFloat;
    if (t->isPointerTy()) {
      return isa::IsWideAddressSpace(SpaceOfPointer(t)) ? ScalarType::kULong
                                                        : ScalarType::kUInt;
    }
    return std::nullopt;
  }
  ScalarType Type(const llvm::Value* v, bool is_signed = false) {
    const std::optional<ScalarType> t = TypeOf(v->getType(), is_signed);
    if (!t) {
      Unsupported("values of type " + Printed(*v->getType()), v);
      return ScalarType::kUInt;
    }
    return *t;
  }

  uint32_t NewVReg() { return next_vreg_++; }

  uint32_t VRegFor(const llvm::Value* v) {
    auto [it, inserted] = vregs_.try_emplace(v, 0);
    if (inserted) it->second = NewVReg();
    return it->second;
  }

  Operand Immediate(uint64_t bits) { return Operand::Imm(bits); }

  Operand OperandFor(const llvm::Value* v) {
    if (const auto* c = llvm::dyn_cast<llvm::ConstantInt>(v)) {
      return Immediate(c->getValue().getZExtValue());
    }
    if (const auto* c = llvm::dyn_cast<llvm::ConstantFP>(v)) {
      return Immediate(c->getValueAPF().bitcastToAPInt().getZExtValue());
    }
    if (IsVector(v) && llvm::isa<llvm::Constant>(v)) {
      // A constant vector where a block is needed (a builtin's argument).
      const uint32_t block = NewVReg();
      CopyElements(block, v);
      return Operand::Reg(static_cast<int>(block));
    }
    if (llvm::isa<llvm::UndefValue>(v) ||
        llvm::isa<llvm::ConstantPointerNull>(v)) {
      return Immediate(0);
    }
    if (const auto* g = llvm::dyn_cast<llvm::GlobalVariable>(v)) {
      auto it = threadgroup_globals_.find(g);
      if (it != threadgroup_globals_.end()) return Immediate(it->second);
      auto c = constant_globals_.find(g);
      if (c != constant_globals_.end()) return c->second;
      Unsupported("program-scope data '" + g->getName().str() + "'", nullptr);
      return Immediate(0);
    }
    if (const auto* e = llvm::dyn_cast<llvm::ConstantExpr>(v)) {
      // A constant address inside a threadgroup global.
      if (const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(e)) {
        llvm::APInt offset(32, 0);
        if (gep->accumulateConstantOffset(layout_, offset)) {
          const Operand base = OperandFor(gep->getPointerOperand());
          if (base.kind == isa::OperandKind::kImmediate) {
            return Immediate(base.imm + offset.getZExtValue());
          }
        }
      }
      Unsupported("constant expression " + Printed(*e), nullptr);
      return Immediate(0);
    }
    if (const auto* a = llvm::dyn_cast<llvm::Argument>(v)) {
      auto it = arguments_.find(a);
      if (it != arguments_.end()) return it->second;
    }
    auto it = vregs_.find(v);
    if (it == vregs_.end()) {
      // A use before its definition in layout order (a phi's incoming value
      // from a later block): the vreg is created now.
      return Operand::Reg(static_cast<int>(VRegFor(v)));
    }
    return Operand::Reg(static_cast<int>(it->second));
  }

  // --- emission --------------------------------------------------------------
  isa::SourceLocation LocationOf(const llvm::Instruction& inst) {
    const llvm::DILocation* loc = inst.getDebugLoc().get();
    // Inlined helpers from the metal_stdlib shims report the caller's line.
    while (loc != nullptr && loc->getInlinedAt() != nullptr &&
           loc->getFilename().startswith("/__mtlemu/")) {
      loc = loc->getInlinedAt();
    }
    if (loc == nullptr || loc->getLine() == 0) return {};
    isa::SourceLocation out;
    std::string name = loc->getFilename().str();
    if (!name.empty() && name[0] != '/' && !loc->getDirectory().empty()) {
      name = loc->getDirectory().str() + "/" + name;
    }
    out.file = FileIndex(name);
    out.line = loc->getLine();
    out.column = loc->getColumn();
    return out;
  }
  uint16_t FileIndex(const std::string& name) {
    if (name.empty() || name == main_file_) return 0;
    for (size_t i = 1; i < files_->size(); ++i) {
      if ((*files_)[i] == name) return static_cast<uint16_t>(i);
    }
    files_->push_back(name);
    return static_cast<uint16_t>(files_->size() - 1);
  }

  Instruction& Emit(Opcode op, ScalarType type,
                    std::initializer_list<Operand> operands) {
    Instruction inst;
    inst.op = op;
    inst.type = type;
    int i = 0;
    for (const Operand& o : operands) inst.operands[i++] = o;
    inst.location = location_;
    kernel_.code.push_back(inst);
    return kernel_.code.back();
  }
  Operand Def(const llvm::Value* v) {
    return Operand::Reg(static_cast<int>(VRegFor(v)));
  }

  // --- vector values (register_parts.h) --------------------------------------
  // What scalarization leaves as vectors (builtin arguments and results such
  // as simdgroup_matrix's <2 x T>, bitcasts between vectors and scalars, and
  // the insertelement, extractelement, shufflevector, select and phi that
  // connect them) lives in a block of registers: the value's vreg is the
  // block, element i the part at offset i * RegistersPerElement.
  static bool IsVector(const llvm::Value* v) {
    return v->getType()->isVectorTy();
  }
  static unsigned NumElements(const llvm::Value* v) {
    return llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements();
  }
  static int RegistersPerElement(const llvm::Value* v) {
    return v->getType()->getScalarSizeInBits() > 32 ? 2 : 1;
  }
  // Two 32-bit registers in all: copied whole with one mov.u64.
  static bool IsPairBlock(const llvm::Value* v) {
    return NumElements(v) * RegistersPerElement(v) == 2 &&
           v->getType()->getScalarSizeInBits() == 32;
  }
  ScalarType ElementType(const llvm::Value* v) {
    const std::optional<ScalarType> t =
        TypeOf(v->getType()->getScalarType(), false);
    if (!t) {
      Unsupported("vectors of type " + Printed(*v->getType()), v);
      return ScalarType::kUInt;
    }
    return *t;
  }
  Operand Part(uint32_t whole, int offset) {
    return Operand::Reg(static_cast<int>(
        parts_.Part(whole, offset, [this] { return NewVReg(); })));
  }
  static bool IsUndefElement(const llvm::Value* v, unsigned i) {
    if (llvm::isa<llvm::UndefValue>(v)) return true;
    const auto* c = llvm::dyn_cast<llvm::Constant>(v);
    return c != nullptr &&
           llvm::isa_and_nonnull<llvm::UndefValue>(c->getAggregateElement(i));
  }
  Operand ElementOf(const llvm::Value* v, unsigned i) {
    if (const auto* c = llvm::dyn_cast<llvm::Constant>(v)) {
      const llvm::Constant* e = c->getAggregateElement(i);
      if (e == nullptr) {
        Unsupported("the vector constant " + Printed(*c), nullptr);
        return Immediate(0);
      }
      return OperandFor(e);
    }
    return Part(VRegFor(v), static_cast<int>(i) * RegistersPerElement(v));
  }
  Operand ElementDef(const llvm::Value* v, unsigned i) {
    return Part(VRegFor(v), static_cast<int>(i) * RegistersPerElement(v));
  }
  // Element i of `v` (a vector) or `v` itself (a scalar, i == 0).
  Operand Piece(const llvm::Value* v, unsigned i) {
    return IsVector(v) ? ElementOf(v, i) : OperandFor(v);
  }
  Operand PieceDef(const llvm::Value* v, unsigned i) {
    return IsVector(v) ? ElementDef(v, i) : Def(v);
  }
  // Copies every defined element of `from` into the block `to`.
  void CopyElements(uint32_t to, const llvm::Value* from) {
    const ScalarType t = ElementType(from);
    for (unsigned i = 0; i < NumElements(from); ++i) {
      if (IsUndefElement(from, i)) continue;
      Emit(Opcode::kMov, t,
           {Part(to, static_cast<int>(i) * RegistersPerElement(from)),
            ElementOf(from, i)});
    }
  }
  bool LowerVectorInstruction(const llvm::Instruction& inst);
  void LowerVectorBitcast(const llvm::CastInst& c);

  // --- pieces ---------------------------------------------------------------
  void SetUpArguments();
  void AllocateStaticMemory();
  void LayOutConstantData();
  void LowerBlock(const llvm::BasicBlock& block);
  void LowerInstruction(const llvm::Instruction& inst);
  void LowerBinary(const llvm::BinaryOperator& b);
  void LowerCompare(const llvm::CmpInst& c);
  void LowerCast(const llvm::CastInst& c);
  void LowerGep(const llvm::GetElementPtrInst& g);
  isa::MemoryRef AddressOf(const llvm::Value* pointer, AddressSpace space);
  void LowerCall(const llvm::CallInst& call);
  void LowerBranch(const llvm::BranchInst& br);
  void EmitPhiCopies(const llvm::BasicBlock& from, const llvm::BasicBlock& to);
  Operand Materialize(const Operand& o, ScalarType type);
  // v * scale (32-bit) in a register, computed once per block.
  Operand ScaledInBlock(const llvm::Value* v, uint64_t scale) {
    auto [it, inserted] = scaled_in_block_.try_emplace({v, scale});
    if (inserted) {
      it->second = Operand::Reg(static_cast<int>(NewVReg()));
      Emit(Opcode::kMul, ScalarType::kUInt,
           {it->second, OperandFor(v), Immediate(scale)});
    }
    return it->second;
  }
  // A register holding a special register's value, copied once in the
  // kernel's prologue (which dominates every use).
  Operand SpecialInRegister(const Operand& special) {
    auto [it, inserted] = special_registers_.try_emplace(special.special, 0);
    if (inserted) {
      it->second = NewVReg();
      Instruction mov;
      mov.op = Opcode::kMov;
      mov.type = ScalarType::kUInt;
      mov.operands[0] = Operand::Reg(static_cast<int>(it->second));
      mov.operands[1] = special;
      prologue_.push_back(mov);
    }
    return Operand::Reg(static_cast<int>(it->second));
  }

  const llvm::Function& f_;
  const msl::KernelDeclaration& decl_;
  const llvm::DataLayout& layout_;
  isa::Kernel kernel_;
  std::string error_;
  std::string main_file_;
  std::vector<std::string>* files_ = nullptr;
  isa::SourceLocation location_;
  uint32_t next_vreg_ = 0;
  llvm::DenseMap<const llvm::Value*, uint32_t> vregs_;
  llvm::DenseMap<const llvm::Argument*, Operand> arguments_;
  // Builtin vector arguments: one special register per component.
  llvm::DenseMap<const llvm::Argument*, std::array<SpecialRegister, 3>>
      specials_;
  llvm::DenseMap<const llvm::GlobalVariable*, uint32_t> threadgroup_globals_;
  // Program-scope constant data: a register holding each global's address.
  llvm::DenseMap<const llvm::GlobalVariable*, Operand> constant_globals_;
  int next_uniform_ = 0;
  std::map<SpecialRegister, uint32_t> special_registers_;
  std::vector<Instruction> prologue_;
  llvm::DenseMap<const llvm::AllocaInst*, uint32_t> allocas_;
  llvm::DenseMap<const llvm::PHINode*, uint32_t> phi_temps_;
  RegisterParts parts_;
  // ScaledInBlock's products in the block being lowered.
  std::map<std::pair<const llvm::Value*, uint64_t>, Operand> scaled_in_block_;
  llvm::DenseMap<const llvm::BasicBlock*, uint32_t> block_start_;
  // Branch operands to patch with block start indices: (pc, operand, block).
  std::vector<std::tuple<size_t, int, const llvm::BasicBlock*>> fixups_;
  std::vector<size_t> exit_branches_;  // `br` to the kernel's exit
  // Conditional branches' reconvergence points (reconvergence.h).
  std::map<const llvm::BasicBlock*, const llvm::BasicBlock*> joins_;
  const llvm::BasicBlock* next_block_ = nullptr;

 public:
  void SetFiles(std::string main_file, std::vector<std::string>* files) {
    main_file_ = std::move(main_file);
    files_ = files;
  }
};

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

namespace {

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

Result<isa::Kernel> Lowering::Run() {
  kernel_.name = decl_.name;
  kernel_.max_total_threads_per_threadgroup =
      decl_.max_total_threads_per_threadgroup;
  joins_ = ReconvergencePoints(f_);
  SetUpArguments();
  AllocateStaticMemory();
  LayOutConstantData();
  for (const llvm::BasicBlock& block : f_) {
    for (const llvm::PHINode& phi : block.phis()) {
      phi_temps_[&phi] = NewVReg();
    }
  }
  for (auto it = f_.begin(); it != f_.end() && error_.empty(); ++it) {
    auto next = std::next(it);
    next_block_ = next == f_.end() ? nullptr : &*next;
    LowerBlock(*it);
  }
  if (!error_.empty()) return Error{error_};
  // The prologue goes first; everything emitted so far moves down.
  if (!prologue_.empty()) {
    const size_t k = prologue_.size();
    kernel_.code.insert(kernel_.code.begin(), prologue_.begin(),
                        prologue_.end());
    for (auto& [block, start] : block_start_) start += static_cast<uint32_t>(k);
    for (auto& fixup : fixups_) std::get<0>(fixup) += k;
  }
  // The shared exit, and branch targets resolved.
  const uint32_t exit_pc = static_cast<uint32_t>(kernel_.code.size());
  location_ = {};
  Emit(Opcode::kExit, ScalarType::kUInt, {});
  kernel_.labels[exit_pc] = "exit";
  for (auto [pc, operand, block] : fixups_) {
    const uint32_t target = block ? At(block_start_, block) : exit_pc;
    kernel_.code[pc].operands[operand] = Operand::Label(target);
    if (!kernel_.labels.count(target)) {
      kernel_.labels[target] =
          block ? "bb" + std::to_string(target) : std::string("exit");
    }
  }
  // Each pass's output is verified, so that a broken pass is named.
  if (Status s = Verified(kernel_, "instruction selection"); !s.ok()) {
    return s.error();
  }
  RemoveDeadCode(kernel_, parts_);
  if (Status s = Verified(kernel_, "dead code"); !s.ok()) return s.error();
  HoistLoopConstants(kernel_, parts_);
  if (Status s = Verified(kernel_, "constant hoisting"); !s.ok()) {
    return s.error();
  }
  MergeVectorAccesses(kernel_, parts_, [this] { return NewVReg(); });
  if (Status s = Verified(kernel_, "vector memory"); !s.ok()) return s.error();
  // Loads raised for latency lengthen what is live: where that costs the
  // kernel its 1024 threads, and loads each just before its use keep them,
  // so it is (see kFullOccupancyRegisters).
  isa::Kernel sunk = kernel_;
  RegisterParts sunk_parts = parts_;
  ScheduleMemory(kernel_, parts_);
  if (Status s = Verified(kernel_, "memory scheduling"); !s.ok()) {
    return s.error();
  }
  const Status allocated =
      AllocateRegisters(kernel_, parts_, [this] { return NewVReg(); });
  if (!allocated.ok()) return allocated.error();
  if (Status s = Verified(kernel_, "register allocation", false); !s.ok()) {
    return s.error();
  }
  if (kernel_.registers > kFullOccupancyRegisters) {
    SinkLoadsToUses(sunk, sunk_parts);
    if (Status s = Verified(sunk, "load sinking"); !s.ok()) return s.error();
    const Status again =
        AllocateRegisters(sunk, sunk_parts, [this] { return NewVReg(); });
    if (again.ok() && sunk.registers <= kFullOccupancyRegisters) {
      if (Status s = Verified(sunk, "register allocation", false); !s.ok()) {
        return s.error();
      }
      return sunk;
    }
  }
  return std::move(kernel_);
}

Status Lowering::Verified(const isa::Kernel& kernel, std::string_view pass,
                          bool virtual_registers) const {
  isa::Module module;
  module.files = *files_;
  const isa::Diagnostics d = isa::VerifyKernel(
      module, kernel,
      {.after_pass = pass, .virtual_registers = virtual_registers});
  if (d.empty()) return {};
  return Error{"internal compiler error: " + isa::FormatDiagnostics(d)};
}

void Lowering::LowerBlock(const llvm::BasicBlock& block) {
  block_start_[&block] = static_cast<uint32_t>(kernel_.code.size());
  scaled_in_block_.clear();
  // Phis read the temporaries their predecessors wrote.
  for (const llvm::PHINode& phi : block.phis()) {
    location_ = LocationOf(phi);
    const uint32_t temp = At(phi_temps_, &phi);
    if (IsVector(&phi) && IsPairBlock(&phi)) {
      // A two-register block (simdgroup_matrix): one copy, which register
      // allocation can coalesce away.
      Emit(Opcode::kMov, ScalarType::kULong,
           {Def(&phi), Operand::Reg(static_cast<int>(temp))});
      continue;
    }
    if (IsVector(&phi)) {
      const ScalarType t = ElementType(&phi);
      for (unsigned i = 0; i < NumElements(&phi); ++i) {
        Emit(Opcode::kMov, t,
             {ElementDef(&phi, i),
              Part(temp, static_cast<int>(i) * RegistersPerElement(&phi))});
      }
      continue;
    }
    Emit(Opcode::kMov, Type(&phi),
         {Def(&phi), Operand::Reg(static_cast<int>(temp))});
  }
  for (const llvm::Instruction& inst : block) {
    if (llvm::isa<llvm::PHINode>(inst)) continue;
    location_ = LocationOf(inst);
    LowerInstruction(inst);
    if (!error_.empty()) return;
  }
}

void Lowering::EmitPhiCopies(const llvm::BasicBlock& from,
                             const llvm::BasicBlock& to) {
  for (const llvm::PHINode& phi : to.phis()) {
    const llvm::Value* in = phi.getIncomingValueForBlock(&from);
    if (IsVector(&phi) && IsPairBlock(&phi) && !llvm::isa<llvm::Constant>(in)) {
      Emit(Opcode::kMov, ScalarType::kULong,
           {Operand::Reg(static_cast<int>(At(phi_temps_, &phi))),
            Operand::Reg(static_cast<int>(VRegFor(in)))});
      continue;
    }
    if (IsVector(&phi)) {
      CopyElements(At(phi_temps_, &phi), in);
      continue;
    }
    Emit(
        Opcode::kMov, Type(&phi),
        {Operand::Reg(static_cast<int>(At(phi_temps_, &phi))), OperandFor(in)});
  }
}

// Operands that a shape cannot take directly (e.g. a branch condition must
// be a register) are copied to a fresh register.
Operand Lowering::Materialize(const Operand& o, ScalarType type) {
  if (o.kind == isa::OperandKind::kRegister) return o;
  const Operand r = Operand::Reg(static_cast<int>(NewVReg()));
  Emit(Opcode::kMov, type, {r, o});
  return r;
}

void Lowering::LowerBranch(const llvm::BranchInst& br) {
  const llvm::BasicBlock* from = br.getParent();
  if (br.isUnconditional()) {
    const llvm::BasicBlock* to = br.getSuccessor(0);
    EmitPhiCopies(*from, *to);
    if (to != next_block_) {
      Emit(Opcode::kBranch, ScalarType::kUInt, {Operand::Label(0)});
      fixups_.emplace_back(kernel_.code.size() - 1, 0, to);
    }
    return;
  }
  const llvm::BasicBlock* taken = br.getSuccessor(0);
  const llvm::BasicBlock* other = br.getSuccessor(1);
  EmitPhiCopies(*from, *taken);
  EmitPhiCopies(*from, *other);
  const Operand c =
      Materialize(OperandFor(br.getCondition()), ScalarType::kUInt);
  const llvm::BasicBlock* join = joins_.at(from);
  // When the true side comes next, lanes whose condition is false branch
  // (bz) and the rest fall through: one branch instead of two.
  const bool invert = taken == next_block_ && other != next_block_;
  if (invert) std::swap(taken, other);
  Emit(invert ? Opcode::kBranchZero : Opcode::kBranchNonZero, ScalarType::kUInt,
       {c, Operand::Label(0), Operand::Label(0)});
  const size_t pc = kernel_.code.size() - 1;
  fixups_.emplace_back(pc, 1, taken);
  fixups_.emplace_back(pc, 2, join);  // nullptr: the kernel's exit
  if (other != next_block_) {
    Emit(Opcode::kBranch, ScalarType::kUInt, {Operand::Label(0)});
    fixups_.emplace_back(kernel_.code.size() - 1, 0, other);
  }
}

void Lowering::LowerInstruction(const llvm::Instruction& inst) {
  if (LowerVectorInstruction(inst)) return;
  if (const auto* b = llvm::dyn_cast<llvm::BinaryOperator>(&inst)) {
    return LowerBinary(*b);
  }
  if (const auto* c = llvm::dyn_cast<llvm::CmpInst>(&inst)) {
    return LowerCompare(*c);
  }
  if (const auto* c = llvm::dyn_cast<llvm::CastInst>(&inst)) {
    return LowerCast(*c);
  }
  if (const auto* g = llvm::dyn_cast<llvm::GetElementPtrInst>(&inst)) {
    return LowerGep(*g);
  }
  if (const auto* br = llvm::dyn_cast<llvm::BranchInst>(&inst)) {
    return LowerBranch(*br);
  }
  if (llvm::isa<llvm::UnreachableInst>(inst)) {
    // After llvm.trap's trap nothing runs; a lane that reaches unreachable
    // otherwise has no defined way on, and traps there.
    const uint32_t start = At(block_start_, inst.getParent());
    if (kernel_.code.size() == start ||
        kernel_.code.back().op != Opcode::kTrap) {
      Emit(Opcode::kTrap, ScalarType::kUInt, {});
    }
    return;
  }
  if (llvm::isa<llvm::ReturnInst>(inst)) {
    if (next_block_ == nullptr) return;  // the shared exit comes next
    Emit(Opcode::kBranch, ScalarType::kUInt, {Operand::Label(0)});
    fixups_.emplace_back(kernel_.code.size() - 1, 0, nullptr);
    return;
  }
  if (const auto* call = llvm::dyn_cast<llvm::CallInst>(&inst)) {
    return LowerCall(*call);
  }
  if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
    const AddressSpace space = SpaceOfPointer(load->getPointerOperandType());
    ScalarType t = Type(load);
    if (load->getType()->isIntegerTy(1)) t = ScalarType::kUChar;
    Instruction& i =
        Emit(Opcode::kLoad, t,
             {Def(load),
              Operand::Memory(AddressOf(load->getPointerOperand(), space))});
    i.space = space;
    return;
  }
  if (const auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
    const AddressSpace space = SpaceOfPointer(store->getPointerOperandType());
    ScalarType t = Type(store->getValueOperand());
    if (store->getValueOperand()->getType()->isIntegerTy(1)) {
      t = ScalarType::kUChar;
    }
    const Operand value = Materialize(OperandFor(store->getValueOperand()), t);
    Instruction& i = Emit(
        Opcode::kStore, t,
        {Operand::Memory(AddressOf(store->getPointerOperand(), space)), value});
    i.space = space;
    return;
  }
  if (const auto* s = llvm::dyn_cast<llvm::SelectInst>(&inst)) {
    Emit(Opcode::kSelect, Type(s),
         {Def(s), OperandFor(s->getCondition()), OperandFor(s->getTrueValue()),
          OperandFor(s->getFalseValue())});
    return;
  }
  if (const auto* u = llvm::dyn_cast<llvm::UnaryOperator>(&inst)) {
    if (u->getOpcode() == llvm::Instruction::FNeg) {
      Emit(Opcode::kNeg, Type(u), {Def(u), OperandFor(u->getOperand(0))});
      return;
    }
  }
  if (const auto* a = llvm::dyn_cast<llvm::AllocaInst>(&inst)) {
    auto it = allocas_.find(a);
    if (it != allocas_.end()) {
      Emit(Opcode::kMov, ScalarType::kUInt, {Def(a), Immediate(it->second)});
      return;
    }
  }
  if (const auto* f = llvm::dyn_cast<llvm::FreezeInst>(&inst)) {
    Emit(Opcode::kMov, Type(f), {Def(f), OperandFor(f->getOperand(0))});
    return;
  }
  if (const auto* e = llvm::dyn_cast<llvm::ExtractElementInst>(&inst)) {
    const auto* arg = llvm::dyn_cast<llvm::Argument>(e->getVectorOperand());
    const auto* index = llvm::dyn_cast<llvm::ConstantInt>(e->getIndexOperand());
    if (arg && index && specials_.count(arg) && index->getZExtValue() < 3) {
      Emit(Opcode::kMov, ScalarType::kUInt,
           {Def(e), Operand::Special(specials_[arg][index->getZExtValue()])});
      return;
    }
  }
  Unsupported(
      "the LLVM instruction '" + std::string(inst.getOpcodeName()) + "'",
      &inst);
}

bool Lowering::LowerVectorInstruction(const llvm::Instruction& inst) {
  if (const auto* ie = llvm::dyn_cast<llvm::InsertElementInst>(&inst)) {
    const auto* index = llvm::dyn_cast<llvm::ConstantInt>(ie->getOperand(2));
    if (index == nullptr) {
      Unsupported("insertelement with a variable index", &inst);
      return true;
    }
    const unsigned k = static_cast<unsigned>(index->getZExtValue());
    const llvm::Value* vector = ie->getOperand(0);
    const ScalarType t = ElementType(ie);
    for (unsigned i = 0; i < NumElements(ie); ++i) {
      if (i == k) {
        Emit(Opcode::kMov, t,
             {ElementDef(ie, i), OperandFor(ie->getOperand(1))});
      } else if (!IsUndefElement(vector, i)) {
        Emit(Opcode::kMov, t, {ElementDef(ie, i), ElementOf(vector, i)});
      }
    }
    return true;
  }
  if (const auto* e = llvm::dyn_cast<llvm::ExtractElementInst>(&inst)) {
    const llvm::Value* vector = e->getVectorOperand();
    const auto* arg = llvm::dyn_cast<llvm::Argument>(vector);
    if (arg != nullptr && specials_.count(arg)) return false;
    const auto* index = llvm::dyn_cast<llvm::ConstantInt>(e->getIndexOperand());
    if (index == nullptr) {
      Unsupported("extractelement with a variable index", &inst);
      return true;
    }
    Emit(Opcode::kMov, ElementType(vector),
         {Def(e),
          ElementOf(vector, static_cast<unsigned>(index->getZExtValue()))});
    return true;
  }
  if (const auto* sv = llvm::dyn_cast<llvm::ShuffleVectorInst>(&inst)) {
    const llvm::Value* a = sv->getOperand(0);
    const llvm::Value* b = sv->getOperand(1);
    const int n = static_cast<int>(NumElements(a));
    const ScalarType t = ElementType(sv);
    llvm::SmallVector<int, 16> mask;
    sv->getShuffleMask(mask);
    for (unsigned i = 0; i < mask.size(); ++i) {
      const int m = mask[i];
      if (m < 0) continue;
      const llvm::Value* from = m < n ? a : b;
      const unsigned at = static_cast<unsigned>(m < n ? m : m - n);
      if (IsUndefElement(from, at)) continue;
      Emit(Opcode::kMov, t, {ElementDef(sv, i), ElementOf(from, at)});
    }
    return true;
  }
  if (!IsVector(&inst)) return false;
  if (const auto* s = llvm::dyn_cast<llvm::SelectInst>(&inst)) {
    const llvm::Value* c = s->getCondition();
    const ScalarType t = ElementType(s);
    for (unsigned i = 0; i < NumElements(s); ++i) {
      Emit(Opcode::kSelect, t,
           {ElementDef(s, i), Piece(c, i), ElementOf(s->getTrueValue(), i),
            ElementOf(s->getFalseValue(), i)});
    }
    return true;
  }
  if (const auto* f = llvm::dyn_cast<llvm::FreezeInst>(&inst)) {
    CopyElements(VRegFor(f), f->getOperand(0));
    return true;
  }
  if (const auto* c = llvm::dyn_cast<llvm::CastInst>(&inst);
      c != nullptr && c->getOpcode() == llvm::Instruction::BitCast) {
    LowerVectorBitcast(*c);
    return true;
  }
  // Calls (builtins taking and returning vectors) and phis are lowered
  // where all calls and phis are; anything else with a vector result is
  // left for the generic path to report.
  return false;
}

// A bitcast with a vector on either side: the bits go through 32-bit words
// (or one narrower word when the whole value is narrower), packed from
// elements narrower than a word with and/shl/or and unpacked with shr/and.
void Lowering::LowerVectorBitcast(const llvm::CastInst& c) {
  const llvm::Value* src = c.getOperand(0);
  const unsigned sb = src->getType()->getScalarSizeInBits();
  const unsigned db = c.getType()->getScalarSizeInBits();
  const unsigned ns = IsVector(src) ? NumElements(src) : 1;
  const unsigned nd = IsVector(&c) ? NumElements(&c) : 1;
  if (sb == db) {
    const ScalarType t = IsVector(&c) ? ElementType(&c) : Type(&c);
    for (unsigned i = 0; i < nd; ++i) {
      Emit(Opcode::kMov, t, {PieceDef(&c, i), Piece(src, i)});
    }
    return;
  }
  const unsigned total = sb * ns;
  const unsigned word_bits = std::min(total, 32u);
  if (total % word_bits != 0 || sb > 64 || db > 64 || sb % 8 || db % 8) {
    Unsupported("a bitcast of " + Printed(*src->getType()) + " to " +
                    Printed(*c.getType()),
                &c);
    return;
  }
  auto mask_of = [](unsigned bits) -> uint64_t {
    return bits >= 32 ? 0xffffffffull : (1ull << bits) - 1;
  };
  auto temp = [this] { return Operand::Reg(static_cast<int>(NewVReg())); };
  // Half `h` (0 low, 1 high) of a 64-bit operand.
  auto half_of = [&](const Operand& o, int h) {
    if (o.kind == isa::OperandKind::kImmediate) {
      return Immediate((o.imm >> (32 * h)) & 0xffffffffull);
    }
    return Part(o.reg, h);
  };
  std::vector<Operand> words(total / word_bits);
  for (unsigned w = 0; w < words.size(); ++w) {
    if (sb == 64) {
      words[w] = half_of(Piece(src, w / 2), static_cast<int>(w % 2));
    } else if (sb == 32) {
      words[w] = Piece(src, w);
    } else {
      const unsigned per_word = word_bits / sb;
      Operand acc;
      uint64_t constant_bits = 0;
      for (unsigned j = 0; j < per_word; ++j) {
        const unsigned e = w * per_word + j;
        if (IsVector(src) && IsUndefElement(src, e)) continue;
        const Operand piece = Piece(src, e);
        if (piece.kind == isa::OperandKind::kImmediate) {
          constant_bits |= (piece.imm & mask_of(sb)) << (j * sb);
          continue;
        }
        const Operand t = temp();
        Emit(Opcode::kAnd, ScalarType::kUInt,
             {t, piece, Immediate(mask_of(sb))});
        if (j > 0) {
          Emit(Opcode::kShl, ScalarType::kUInt, {t, t, Immediate(j * sb)});
        }
        if (acc.kind == isa::OperandKind::kNone) {
          acc = t;
        } else {
          Emit(Opcode::kOr, ScalarType::kUInt, {t, acc, t});
          acc = t;
        }
      }
      if (acc.kind == isa::OperandKind::kNone) {
        acc = Immediate(constant_bits);
      } else if (constant_bits != 0) {
        Emit(Opcode::kOr, ScalarType::kUInt,
             {acc, acc, Immediate(constant_bits)});
      }
      words[w] = acc;
    }
  }
  for (unsigned e = 0; e < nd; ++e) {
    const Operand d = PieceDef(&c, e);
    if (db == 64) {
      Emit(Opcode::kMov, ScalarType::kUInt, {Part(d.reg, 0), words[2 * e]});
      Emit(Opcode::kMov, ScalarType::kUInt, {Part(d.reg, 1), words[2 * e + 1]});
    } else if (db == 32) {
      Emit(Opcode::kMov, ScalarType::kUInt, {d, words[e]});
    } else {
      const unsigned per_word = word_bits / db;
      const Operand word = words[e / per_word];
      const unsigned shift = (e % per_word) * db;
      if (word.kind == isa::OperandKind::kImmediate) {
        Emit(Opcode::kMov, ScalarType::kUInt,
             {d, Immediate((word.imm >> shift) & mask_of(db))});
        continue;
      }
      Operand bits = word;
      if (shift != 0) {
        bits = temp();
        Emit(Opcode::kShr, ScalarType::kUInt, {bits, word, Immediate(shift)});
      }
      Emit(Opcode::kAnd, ScalarType::kUInt, {d, bits, Immediate(mask_of(db))});
    }
  }
}

void Lowering::LowerBinary(const llvm::BinaryOperator& b) {
  using I = llvm::Instruction;
  Opcode op;
  bool is_signed = false;
  switch (b.getOpcode()) {
    case I::Add:
    case I::FAdd:
      op = Opcode::kAdd;
      break;
    case I::Sub:
    case I::FSub:
      op = Opcode::kSub;
      break;
    case I::Mul:
    case I::FMul:
      op = Opcode::kMul;
      break;
    case I::UDiv:
    case I::FDiv:
      op = Opcode::kDiv;
      break;
    case I::SDiv:
      op = Opcode::kDiv;
      is_signed = true;
      break;
    case I::URem:
      op = Opcode::kRem;
      break;
    case I::SRem:
      op = Opcode::kRem;
      is_signed = true;
      break;
    case I::FRem:
      op = Opcode::kFmod;
      break;
    case I::Shl:
      op = Opcode::kShl;
      break;
    case I::LShr:
      op = Opcode::kShr;
      break;
    case I::AShr:
      op = Opcode::kShr;
      is_signed = true;
      break;
    case I::And:
      op = Opcode::kAnd;
      break;
    case I::Or:
      op = Opcode::kOr;
      break;
    case I::Xor:
      op = Opcode::kXor;
      break;
    default:
      return Unsupported("the operator", &b);
  }
  ScalarType t = Type(&b, is_signed);
  // i1 arithmetic other than logic is 1-bit: keep it to and/or/xor.
  Emit(op, t,
       {Def(&b), OperandFor(b.getOperand(0)), OperandFor(b.getOperand(1))});
}

void Lowering::LowerCompare(const llvm::CmpInst& c) {
  using P = llvm::CmpInst::Predicate;
  const llvm::Value* a = c.getOperand(0);
  const llvm::Value* b = c.getOperand(1);
  const Operand d = Def(&c);
  auto emit = [&](Opcode op, ScalarType t, Operand dst) {
    Emit(op, t, {dst, OperandFor(a), OperandFor(b)});
  };
  if (c.isIntPredicate()) {
    const bool s = c.isSigned();
    const ScalarType t = Type(a, s);
    switch (c.getPredicate()) {
      case P::ICMP_EQ:
        return emit(Opcode::kEq, t, d);
      case P::ICMP_NE:
        return emit(Opcode::kNe, t, d);
      case P::ICMP_SLT:
      case P::ICMP_ULT:
        return emit(Opcode::kLt, t, d);
      case P::ICMP_SLE:
      case P::ICMP_ULE:
        return emit(Opcode::kLe, t, d);
      case P::ICMP_SGT:
      case P::ICMP_UGT:
        return emit(Opcode::kGt, t, d);
      case P::ICMP_SGE:
      case P::ICMP_UGE:
        return emit(Opcode::kGe, t, d);
      default:
        return Unsupported("the comparison", &c);
    }
  }
  const ScalarType t = Type(a);
  // Ordered comparisons are the ISA's; an unordered one is the negation of
  // the opposite ordered one.
  auto ordered = [&](P p) -> std::optional<Opcode> {
    switch (p) {
      case P::FCMP_OEQ:
        return Opcode::kEq;
      case P::FCMP_OLT:
        return Opcode::kLt;
      case P::FCMP_OLE:
        return Opcode::kLe;
      case P::FCMP_OGT:
        return Opcode::kGt;
      case P::FCMP_OGE:
        return Opcode::kGe;
      default:
        return std::nullopt;
    }
  };
  const P p = c.getPredicate();
  if (auto op = ordered(p)) return emit(*op, t, d);
  if (p == P::FCMP_UNE) return emit(Opcode::kNe, t, d);
  if (p == P::FCMP_TRUE || p == P::FCMP_FALSE) {
    Emit(Opcode::kMov, ScalarType::kUInt,
         {d, Immediate(p == P::FCMP_TRUE ? 1 : 0)});
    return;
  }
  if (p == P::FCMP_ORD || p == P::FCMP_UNO) {
    const Operand na = Operand::Reg(static_cast<int>(NewVReg()));
    const Operand nb = Operand::Reg(static_cast<int>(NewVReg()));
    Emit(Opcode::kIsNan, t, {na, OperandFor(a)});
    Emit(Opcode::kIsNan, t, {nb, OperandFor(b)});
    if (p == P::FCMP_UNO) {
      Emit(Opcode::kOr, ScalarType::kUInt, {d, na, nb});
    } else {
      const Operand any = Operand::Reg(static_cast<int>(NewVReg()));
      Emit(Opcode::kOr, ScalarType::kUInt, {any, na, nb});
      Emit(Opcode::kXor, ScalarType::kUInt, {d, any, Immediate(1)});
    }
    return;
  }
  if (p == P::FCMP_ONE || p == P::FCMP_UEQ) {
    const Operand lt = Operand::Reg(static_cast<int>(NewVReg()));
    const Operand gt = Operand::Reg(static_cast<int>(NewVReg()));
    emit(Opcode::kLt, t, lt);
    emit(Opcode::kGt, t, gt);
    if (p == P::FCMP_ONE) {
      Emit(Opcode::kOr, ScalarType::kUInt, {d, lt, gt});
    } else {
      const Operand one = Operand::Reg(static_cast<int>(NewVReg()));
      Emit(Opcode::kOr, ScalarType::kUInt, {one, lt, gt});
      Emit(Opcode::kXor, ScalarType::kUInt, {d, one, Immediate(1)});
    }
    return;
  }
  // ULT = !OGE, ULE = !OGT, UGT = !OLE, UGE = !OLT.
  std::optional<Opcode> inverse;
  switch (p) {
    case P::FCMP_ULT:
      inverse = Opcode::kGe;
      break;
    case P::FCMP_ULE:
      inverse = Opcode::kGt;
      break;
    case P::FCMP_UGT:
      inverse = Opcode::kLe;
      break;
    case P::FCMP_UGE:
      inverse = Opcode::kLt;
      break;
    default:
      return Unsupported("the comparison", &c);
  }
  const Operand r = Operand::Reg(static_cast<int>(NewVReg()));
  emit(*inverse, t, r);
  Emit(Opcode::kXor, ScalarType::kUInt, {d, r, Immediate(1)});
}

void Lowering::LowerCast(const llvm::CastInst& c) {
  using I = llvm::Instruction;
  const llvm::Value* src = c.getOperand(0);
  const Operand d = Def(&c);
  const bool from_bool = src->getType()->isIntegerTy(1);
  switch (c.getOpcode()) {
    case I::ZExt:
      if (from_bool && !c.getType()->isIntegerTy(64)) {
        Emit(Opcode::kMov, ScalarType::kUInt, {d, OperandFor(src)});
        return;
      }
      break;
    case I::SExt:
      if (from_bool) {
        const ScalarType t = Type(&c, true);
        Instruction& i = Emit(Opcode::kCvt, t, {d, OperandFor(src)});
        i.type2 = ScalarType::kUInt;
        // 0/1 -> 0/-1
        Emit(Opcode::kNeg, t, {d, d});
        return;
      }
      break;
    case I::Trunc:
      if (c.getType()->isIntegerTy(1)) {
        Emit(Opcode::kAnd, Type(src), {d, OperandFor(src), Immediate(1)});
        return;
      }
      break;
    case I::BitCast:
    case I::PtrToInt:
    case I::IntToPtr:
      if (layout_.getTypeSizeInBits(c.getType()) ==
          layout_.getTypeSizeInBits(src->getType())) {
        Emit(Opcode::kMov, Type(&c), {d, OperandFor(src)});
        return;
      }
      break;
    default:
      break;
  }
  const bool signed_dst =
      c.getOpcode() == I::SExt || c.getOpcode() == I::FPToSI;
  const bool signed_src =
      c.getOpcode() == I::SExt || c.getOpcode() == I::SIToFP;
  const ScalarType to = Type(&c, signed_dst);
  const ScalarType from = Type(src, signed_src);
  switch (c.getOpcode()) {
    case I::ZExt:
    case I::SExt:
    case I::Trunc:
    case I::FPToSI:
    case I::FPToUI:
    case I::SIToFP:
    case I::UIToFP:
    case I::FPExt:
    case I::FPTrunc:
    case I::PtrToInt:
    case I::IntToPtr: {
      Instruction& i = Emit(Opcode::kCvt, to, {d, OperandFor(src)});
      i.type2 = from;
      return;
    }
    default:
      return Unsupported("the conversion", &c);
  }
}

// An address as [base + index*scale + displacement] when the pointer is a
// GEP with one 32-bit variable index; else the pointer's value as base.
isa::MemoryRef Lowering::AddressOf(const llvm::Value* pointer,
                                   AddressSpace space) {
  isa::MemoryRef m;
  auto set_base = [&](const Operand& o) -> bool {
    if (o.kind == isa::OperandKind::kRegister ||
        o.kind == isa::OperandKind::kUniform) {
      m.base_kind = o.kind;
      m.base = o.reg;
      return true;
    }
    if (o.kind == isa::OperandKind::kImmediate &&
        !isa::IsWideAddressSpace(space) && o.imm <= 0x7fffffffu) {
      m.displacement = static_cast<int32_t>(o.imm);
      return true;
    }
    return false;
  };
  if (const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(pointer)) {
    const unsigned bits = layout_.getIndexSizeInBits(
        gep->getPointerOperandType()->getPointerAddressSpace());
    llvm::MapVector<llvm::Value*, llvm::APInt> variables;
    llvm::APInt constant(bits, 0);
    // A constant step from another GEP (the lanes of a scalarized float4
    // access: &v[i] + 4, + 8, + 12) joins that GEP's displacement, so the
    // lanes share its index register instead of each holding an address.
    while (const auto* inner =
               llvm::dyn_cast<llvm::GEPOperator>(gep->getPointerOperand())) {
      llvm::MapVector<llvm::Value*, llvm::APInt> none;
      llvm::APInt step(bits, 0);
      if (!gep->collectOffset(layout_, bits, none, step) || !none.empty()) {
        break;
      }
      constant += step;
      gep = inner;
    }
    const bool offsets_fit =
        gep->collectOffset(layout_, bits, variables, constant) &&
        constant.getSExtValue() >= INT32_MIN &&
        constant.getSExtValue() <= INT32_MAX;
    Operand base = OperandFor(gep->getPointerOperand());
    // tile[row][k] in threadgroup memory: base + row*scale goes in a
    // register, k becomes the index; a lone index whose scale the memory
    // operand cannot take (tile[row][3]) goes in the register the same way.
    const auto encodable = [](uint64_t scale) {
      return scale == 1 || scale == 2 || scale == 4 || scale == 8 ||
             scale == 16;
    };
    if (offsets_fit && !isa::IsWideAddressSpace(space) &&
        (variables.size() == 2 ||
         (variables.size() == 1 &&
          !encodable(variables.front().second.getZExtValue())))) {
      const llvm::Value* v0 = variables.front().first;
      if (const auto* ext = llvm::dyn_cast<llvm::CastInst>(v0);
          ext != nullptr && ext->getSrcTy()->isIntegerTy(32) &&
          (ext->getOpcode() == llvm::Instruction::SExt ||
           ext->getOpcode() == llvm::Instruction::ZExt)) {
        v0 = ext->getOperand(0);
      }
      if (v0->getType()->isIntegerTy(32)) {
        const Operand row =
            ScaledInBlock(v0, variables.front().second.getZExtValue());
        if (base.kind == isa::OperandKind::kImmediate) {
          constant += base.imm;
          base = row;
        } else {
          const Operand sum = Operand::Reg(static_cast<int>(NewVReg()));
          Emit(Opcode::kAdd, ScalarType::kUInt, {sum, base, row});
          base = sum;
        }
        variables.erase(variables.begin());
      }
    }
    if (offsets_fit && variables.size() <= 1 &&
        constant.getSExtValue() >= INT32_MIN &&
        constant.getSExtValue() <= INT32_MAX) {
      isa::MemoryRef saved = m;
      bool ok = set_base(base);
      if (ok && variables.size() == 1) {
        llvm::Value* index = variables.front().first;
        const uint64_t scale = variables.front().second.getZExtValue();
        bool is_signed = false;
        if (const auto* ext = llvm::dyn_cast<llvm::CastInst>(index)) {
          if ((ext->getOpcode() == llvm::Instruction::SExt ||
               ext->getOpcode() == llvm::Instruction::ZExt) &&
              ext->getSrcTy()->isIntegerTy(32)) {
            is_signed = ext->getOpcode() == llvm::Instruction::SExt;
            index = ext->getOperand(0);
          }
        }
        Operand io = OperandFor(index);
        if (io.kind == isa::OperandKind::kSpecial) io = SpecialInRegister(io);
        if (index->getType()->isIntegerTy(32) &&
            io.kind == isa::OperandKind::kRegister &&
            (scale == 1 || scale == 2 || scale == 4 || scale == 8 ||
             scale == 16)) {
          m.has_index = true;
          m.index = io.reg;
          m.index_signed = is_signed;
          m.scale = static_cast<uint8_t>(scale);
        } else {
          ok = false;
        }
      }
      if (ok) {
        m.displacement += static_cast<int32_t>(constant.getSExtValue());
        return m;
      }
      m = saved;
    }
  }
  const Operand p = OperandFor(pointer);
  if (!set_base(p)) {
    const Operand r = Materialize(p, Type(pointer));
    set_base(r);
  }
  return m;
}

void Lowering::LowerGep(const llvm::GetElementPtrInst& g) {
  const AddressSpace space = SpaceOfPointer(g.getPointerOperandType());
  const bool wide = isa::IsWideAddressSpace(space);
  const ScalarType t = wide ? ScalarType::kULong : ScalarType::kUInt;
  const unsigned bits = layout_.getIndexSizeInBits(g.getPointerAddressSpace());
  llvm::MapVector<llvm::Value*, llvm::APInt> variables;
  llvm::APInt constant(bits, 0);
  if (!g.collectOffset(layout_, bits, variables, constant)) {
    return Unsupported("the address computation", &g);
  }
  // base + constant + sum(index * scale), each step a fresh register so
  // that unused steps (addresses folded into loads) are dead code; the last
  // step defines the GEP's value.
  Operand current = OperandFor(g.getPointerOperand());
  auto step = [&](Opcode op, Operand a, Operand b, bool last) {
    const Operand d =
        last ? Def(&g) : Operand::Reg(static_cast<int>(NewVReg()));
    Emit(op, t, {d, a, b});
    return d;
  };
  const uint64_t offset =
      wide ? constant.getZExtValue() : (constant.getZExtValue() & 0xffffffffu);
  if (offset != 0 || variables.empty()) {
    current = step(Opcode::kAdd, current, Immediate(offset), variables.empty());
  }
  size_t remaining = variables.size();
  for (auto& [value, scale] : variables) {
    const bool last = --remaining == 0;
    // A 32-bit address from an index widened to 64 bits: the narrow value
    // itself (the truncation would undo the extension).
    const llvm::Value* narrow = value;
    if (const auto* ext = llvm::dyn_cast<llvm::CastInst>(value);
        !wide && ext != nullptr &&
        (ext->getOpcode() == llvm::Instruction::ZExt ||
         ext->getOpcode() == llvm::Instruction::SExt) &&
        ext->getSrcTy()->isIntegerTy(32)) {
      narrow = ext->getOperand(0);
    }
    Operand index = OperandFor(narrow);
    const ScalarType it = Type(narrow, true);
    if (isa::IsWide(t) != isa::IsWide(it)) {
      const Operand converted = Operand::Reg(static_cast<int>(NewVReg()));
      Instruction& c = Emit(
          Opcode::kCvt, isa::IsWide(t) ? ScalarType::kLong : ScalarType::kUInt,
          {converted, index});
      c.type2 = it;
      index = converted;
    }
    const bool zero_base =
        current.kind == isa::OperandKind::kImmediate && current.imm == 0;
    const Operand scaled =
        scale == 1 && !(last && zero_base)
            ? index
            : step(Opcode::kMul, index, Immediate(scale.getZExtValue()),
                   last && zero_base);
    current = zero_base ? scaled : step(Opcode::kAdd, current, scaled, last);
  }
}

void Lowering::LowerCall(const llvm::CallInst& call) {
  const llvm::Function* callee = call.getCalledFunction();
  if (callee == nullptr) return Unsupported("an indirect call", &call);
  BuiltinEmitter emit{
      [&](const llvm::Value* v) { return OperandFor(v); },
      [&](const llvm::Value* v) { return Def(v); },
      [&]() { return Operand::Reg(static_cast<int>(NewVReg())); },
      [&](const Instruction& inst) {
        Instruction i = inst;
        i.location = location_;
        kernel_.code.push_back(i);
      },
      [&](const llvm::Value* v, bool s) { return Type(v, s); },
      [&](const llvm::Value* pointer, AddressSpace space) {
        return AddressOf(pointer, space);
      }};
  std::string error;
  if (!LowerBuiltinCall(call, emit, error)) {
    Unsupported(
        error.empty() ? "a call to '" + callee->getName().str() + "'" : error,
        &call);
  }
}

}  // namespace

Result<isa::Kernel> LowerKernel(const llvm::Function& function,
                                const msl::KernelDeclaration& declaration,
                                std::vector<std::string>& files) {
  Lowering lowering(function, declaration);
  lowering.SetFiles(function.getParent()->getSourceFileName(), &files);
  return lowering.Run();
}

}  // namespace mtlemu::air
