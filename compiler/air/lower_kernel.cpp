// Instruction selection's driver (lowering.h): the kernel's blocks in
// layout order, branches with their reconvergence points, phis as copies,
// calls through builtin_calls.h; then the back-end passes, each verified.
#include "compiler/air/lower_kernel.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/air/builtin_calls.h"
#include "compiler/air/constant_hoisting.h"
#include "compiler/air/dead_code.h"
#include "compiler/air/lowering.h"
#include "compiler/air/memory_scheduling.h"
#include "compiler/air/reconvergence.h"
#include "compiler/air/register_allocation.h"
#include "compiler/air/target_info.h"
#include "compiler/air/vector_memory.h"
#include "isa/occupancy.h"
#include "isa/verifier.h"

namespace mtlemu::air::internal {
namespace {

// The value of a key that is in `map` (as std::map::at, which DenseMap
// lacks).
template <class Map, class Key>
const auto& At(const Map& map, const Key& key) {
  const auto it = map.find(key);
  assert(it != map.end());
  return it->second;
}

}  // namespace

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
  verify_files_.files = *files_;
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
  // A kernel declared for n threads must launch with n: its registers are
  // budgeted (and the rest spilled) so that n fit.
  const int budget =
      decl_.max_total_threads_per_threadgroup == 0
          ? kAllocatableRegisters
          : std::min(kAllocatableRegisters,
                     isa::MaxRegistersForThreads(
                         decl_.max_total_threads_per_threadgroup));
  const Status allocated = AllocateRegisters(
      kernel_, parts_, [this] { return NewVReg(); }, budget);
  if (!allocated.ok()) return allocated.error();
  if (Status s = Verified(kernel_, "register allocation", false); !s.ok()) {
    return s.error();
  }
  if (kernel_.registers > kFullOccupancyRegisters) {
    SinkLoadsToUses(sunk, sunk_parts);
    if (Status s = Verified(sunk, "load sinking"); !s.ok()) return s.error();
    const Status again = AllocateRegisters(
        sunk, sunk_parts, [this] { return NewVReg(); }, budget);
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
  const isa::Diagnostics d = isa::VerifyKernel(
      verify_files_, kernel,
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

}  // namespace mtlemu::air::internal

namespace mtlemu::air {

Result<isa::Kernel> LowerKernel(const llvm::Function& function,
                                const msl::KernelDeclaration& declaration,
                                std::vector<std::string>& files) {
  internal::Lowering lowering(function, declaration);
  lowering.SetFiles(function.getParent()->getSourceFileName(), &files);
  return lowering.Run();
}

}  // namespace mtlemu::air
