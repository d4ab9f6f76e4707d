#include "isa/verifier.h"

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "isa/names.h"
#include "isa/printer.h"
#include "isa/shape.h"
#include "isa/special_register.h"

namespace mtlemu::isa {
namespace {

bool ValidOpcode(Opcode op) { return static_cast<int>(op) < kNumOpcodes; }
bool ValidType(ScalarType t) { return static_cast<int>(t) < kNumScalarTypes; }
bool ValidSpace(AddressSpace s) {
  return static_cast<int>(s) <= static_cast<int>(AddressSpace::kThread);
}

std::string TypeList(TypeSet set) {
  std::string out;
  for (int i = 0; i < kNumScalarTypes; ++i) {
    if (!(set & (1u << i))) continue;
    if (!out.empty()) out += ", ";
    out += IsaSuffix(static_cast<ScalarType>(i));
  }
  return out;
}

std::string SpaceList(Opcode op, ScalarType type) {
  std::string out;
  for (AddressSpace s : {AddressSpace::kDevice, AddressSpace::kConstant,
                         AddressSpace::kThreadgroup, AddressSpace::kThread}) {
    if (!IsAddressSpaceAllowed(op, type, s)) continue;
    if (!out.empty()) out += ", ";
    out += AddressSpaceName(s);
  }
  return out;
}

std::string HexString(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string Ordinal(int position) {
  return "operand " + std::to_string(position + 1);
}

class KernelVerifier {
 public:
  KernelVerifier(const Module& module, const Kernel& kernel,
                 const VerifyOptions& options, Diagnostics* out)
      : module_(module),
        kernel_(kernel),
        out_(out),
        virtual_registers_(options.virtual_registers) {
    if (!options.after_pass.empty()) {
      prefix_ = "after pass '" + std::string(options.after_pass) + "': ";
    }
    prefix_ += "kernel '" + kernel.name + "'";
  }

  void Run();

 private:
  // A kernel-level diagnostic.
  void KernelError(std::string message) {
    Diagnostic d;
    if (!module_.files.empty()) d.file = module_.files[0];
    d.message = prefix_ + ": " + std::move(message);
    out_->push_back(std::move(d));
  }
  // A diagnostic about instruction `index`.
  void InstError(size_t index, std::string message);

  void CheckArguments();
  void CheckLabels();
  void CheckInstruction(size_t index);
  void CheckSourceOperand(size_t index, const Instruction& inst, int position);
  void CheckMemoryOperand(size_t index, const Instruction& inst, int position);
  void CheckSpan(size_t index, const Instruction& inst, int position,
                 OperandKind kind, int first, int span, std::string_view what);
  void CheckCanonical(size_t index, const Instruction& inst, int position);

  const Module& module_;
  const Kernel& kernel_;
  Diagnostics* out_;
  bool virtual_registers_ = false;
  std::string prefix_;
  std::map<uint32_t, std::string> names_;
  bool enums_valid_ = true;
};

void KernelVerifier::InstError(size_t index, std::string message) {
  const Instruction& inst = kernel_.code[index];
  Diagnostic d;
  const SourceLocation& loc = inst.location;
  if (loc.file < module_.files.size()) d.file = module_.files[loc.file];
  d.line = static_cast<int>(loc.line);
  d.column = static_cast<int>(loc.column);
  d.message = prefix_ + ", instruction " + std::to_string(index) + " '" +
              PrintInstruction(inst, names_) + "': " + std::move(message);
  out_->push_back(std::move(d));
}

void KernelVerifier::Run() {
  names_ = LabelNames(kernel_);
  if (!IsValidName(kernel_.name)) {
    KernelError("the kernel name is not a valid name");
  }
  CheckArguments();
  if (kernel_.code.empty()) {
    KernelError("the kernel has no code (it must end with exit or br)");
  }
  CheckLabels();
  for (size_t i = 0; i < kernel_.code.size(); ++i) CheckInstruction(i);
  if (!kernel_.code.empty()) {
    const Instruction& last = kernel_.code.back();
    if (ValidOpcode(last.op) && !IsTerminator(last.op)) {
      InstError(kernel_.code.size() - 1,
                "the last instruction must be a terminator (exit or br)");
    }
  }
  // (Before register allocation the counts are not computed yet.)
  if (enums_valid_ && !virtual_registers_) {
    Kernel copy;
    copy.buffers = kernel_.buffers;
    copy.threadgroup_arguments = kernel_.threadgroup_arguments;
    copy.constant_data_uniform = kernel_.constant_data_uniform;
    copy.code = kernel_.code;
    ComputeResources(copy);
    // The counts are derived from the code; stale ones would mislead the
    // emulator (and would not survive printing and reassembling).
    if (kernel_.registers != copy.registers) {
      KernelError("kernel.registers is " + std::to_string(kernel_.registers) +
                  " but the code uses " + std::to_string(copy.registers) +
                  " (run ComputeResources)");
    }
    if (kernel_.uniforms != copy.uniforms) {
      KernelError("kernel.uniforms is " + std::to_string(kernel_.uniforms) +
                  " but the kernel uses " + std::to_string(copy.uniforms) +
                  " (run ComputeResources)");
    }
  }
}

void KernelVerifier::CheckArguments() {
  // Uniforms claimed by arguments, to find overlaps.
  std::map<int, std::string> uniform_owner;
  auto claim = [&](int u, const std::string& who) {
    auto [it, inserted] = uniform_owner.emplace(u, who);
    if (!inserted) {
      KernelError(who + " uses uniform u" + std::to_string(u) + ", which " +
                  it->second + " already uses");
    }
  };
  std::set<int> buffer_indices;
  for (const BufferArgument& b : kernel_.buffers) {
    const std::string who = "buffer " + std::to_string(b.index);
    if (b.index < 0 || b.index >= kMaxBufferSlots) {
      KernelError("buffer index " + std::to_string(b.index) +
                  " out of range (0.." + std::to_string(kMaxBufferSlots - 1) +
                  ")");
    } else if (!buffer_indices.insert(b.index).second) {
      KernelError("duplicate buffer index " + std::to_string(b.index));
    }
    if (b.uniform < 0 || b.uniform + 1 >= kMaxUniforms) {
      KernelError(who + ": its address pair u" + std::to_string(b.uniform) +
                  ":u" + std::to_string(b.uniform + 1) +
                  " is out of range (u0..u255)");
    } else {
      claim(b.uniform, who);
      claim(b.uniform + 1, who);
    }
    if (b.space != AddressSpace::kDevice &&
        b.space != AddressSpace::kConstant) {
      KernelError(who + ": address space must be device or constant");
    }
    if (b.element && !ValidType(*b.element)) {
      KernelError(who + ": invalid element type");
    }
    if (!b.name.empty() && !IsValidName(b.name)) {
      KernelError(who + ": name '" + b.name + "' is not a valid name");
    }
  }
  std::set<int> tg_indices;
  for (const ThreadgroupArgument& t : kernel_.threadgroup_arguments) {
    const std::string who = "threadgroup argument " + std::to_string(t.index);
    if (t.index < 0 || t.index >= kMaxThreadgroupSlots) {
      KernelError("threadgroup index " + std::to_string(t.index) +
                  " out of range (0.." +
                  std::to_string(kMaxThreadgroupSlots - 1) + ")");
    } else if (!tg_indices.insert(t.index).second) {
      KernelError("duplicate threadgroup index " + std::to_string(t.index));
    }
    if (t.uniform < 0 || t.uniform >= kMaxUniforms) {
      KernelError(who + ": uniform u" + std::to_string(t.uniform) +
                  " is out of range (u0..u255)");
    } else {
      claim(t.uniform, who);
    }
    if (!t.name.empty() && !IsValidName(t.name)) {
      KernelError(who + ": name '" + t.name + "' is not a valid name");
    }
  }
  const int cd = kernel_.constant_data_uniform;
  if (cd == -1) {
    if (!kernel_.constant_data.empty()) {
      KernelError("the kernel has " +
                  std::to_string(kernel_.constant_data.size()) +
                  " bytes of constant data but no uniform pair for its "
                  "address");
    }
  } else if (cd < 0 || cd + 1 >= kMaxUniforms) {
    KernelError("constant data: its address pair u" + std::to_string(cd) +
                ":u" + std::to_string(cd + 1) + " is out of range (u0..u255)");
  } else {
    claim(cd, "constant data");
    claim(cd + 1, "constant data");
  }
  if (kernel_.max_total_threads_per_threadgroup > kMaxThreadsPerThreadgroup) {
    KernelError("max_total_threads_per_threadgroup " +
                std::to_string(kernel_.max_total_threads_per_threadgroup) +
                " exceeds the limit of " +
                std::to_string(kMaxThreadsPerThreadgroup));
  }
}

void KernelVerifier::CheckLabels() {
  std::set<std::string> seen;
  for (const auto& [index, name] : kernel_.labels) {
    if (!IsValidLabelName(name)) {
      KernelError("label '" + name + "' is not a valid label name");
    }
    if (!seen.insert(name).second) {
      KernelError("label '" + name + "' names two instructions");
    }
    if (index > kernel_.code.size()) {
      KernelError("label '" + name + "' names instruction " +
                  std::to_string(index) + ", past the end of the code");
    }
  }
}

void KernelVerifier::CheckSpan(size_t index, const Instruction& inst,
                               int position, OperandKind kind, int first,
                               int span, std::string_view what) {
  (void)inst;
  if (kind != OperandKind::kUniform && virtual_registers_) return;
  const int limit =
      kind == OperandKind::kUniform ? kMaxUniforms : kMaxRegisters;
  if (first + span > limit) {
    const char prefix = kind == OperandKind::kUniform ? 'u' : 'r';
    std::string range = prefix + std::to_string(first);
    if (span > 1)
      range +=
          "..." + std::string(1, prefix) + std::to_string(first + span - 1);
    InstError(index, Ordinal(position) + ": " + std::string(what) + " " +
                         range + " is out of range (" + prefix + "0.." +
                         prefix + std::to_string(limit - 1) + ")");
  }
}

void KernelVerifier::CheckCanonical(size_t index, const Instruction& inst,
                                    int position) {
  const Operand& o = inst.operands[position];
  Operand canonical;
  switch (o.kind) {
    case OperandKind::kRegister:
      canonical = Operand::Reg(o.reg);
      break;
    case OperandKind::kUniform:
      canonical = Operand::Uniform(o.reg);
      break;
    case OperandKind::kImmediate:
      canonical = Operand::Imm(o.imm);
      break;
    case OperandKind::kSpecial:
      canonical = Operand::Special(o.special);
      break;
    case OperandKind::kLabel:
      canonical = Operand::Label(o.label);
      break;
    case OperandKind::kMemory: {
      MemoryRef m = o.mem;
      if (m.base_kind == OperandKind::kNone) m.base = 0;
      if (!m.has_index) {
        m.index = 0;
        m.index_signed = false;
        m.scale = 1;
      }
      canonical = Operand::Memory(m);
      break;
    }
    default:
      return;
  }
  if (!(canonical == o)) {
    InstError(index,
              Ordinal(position) + " has fields set that its kind does not use");
  }
}

void KernelVerifier::CheckSourceOperand(size_t index, const Instruction& inst,
                                        int position) {
  const Operand& o = inst.operands[position];
  const ScalarType type = OperandType(inst, position);
  const int span = OperandRegisterSpan(inst, position);
  const int width = IsWide(type) ? 2 : 1;
  switch (o.kind) {
    case OperandKind::kRegister:
      CheckSpan(index, inst, position, o.kind, o.reg, span, "register");
      return;
    case OperandKind::kUniform:
      CheckSpan(index, inst, position, o.kind, o.reg, span, "uniform");
      return;
    case OperandKind::kImmediate:
    case OperandKind::kSpecial:
      if (span > width) {
        InstError(index, Ordinal(position) +
                             " holds a vector or matrix and must be a "
                             "register or uniform");
        return;
      }
      if (o.kind == OperandKind::kSpecial) {
        if (static_cast<int>(o.special) >= kNumSpecialRegisters) {
          InstError(index, Ordinal(position) + ": invalid special register " +
                               std::to_string(static_cast<int>(o.special)));
        }
        return;
      }
      if (type == ScalarType::kBool
              ? o.imm > 1
              : SizeOf(type) < 8 && (o.imm >> (SizeOf(type) * 8)) != 0) {
        InstError(index, Ordinal(position) + ": immediate bits " +
                             HexString(o.imm) + " do not fit type " +
                             std::string(IsaSuffix(type)));
      }
      return;
    default:
      InstError(index, Ordinal(position) +
                           " must be a register, uniform, immediate or "
                           "special register");
  }
}

void KernelVerifier::CheckMemoryOperand(size_t index, const Instruction& inst,
                                        int position) {
  const Operand& o = inst.operands[position];
  if (o.kind != OperandKind::kMemory) {
    InstError(index, Ordinal(position) + " must be a memory reference");
    return;
  }
  const MemoryRef& m = o.mem;
  const bool wide = IsWideAddressSpace(inst.space);
  switch (m.base_kind) {
    case OperandKind::kNone:
      if (wide) {
        InstError(index, std::string(AddressSpaceName(inst.space)) +
                             " addresses need a base register pair or "
                             "uniform pair");
      }
      break;
    case OperandKind::kRegister:
    case OperandKind::kUniform:
      CheckSpan(index, inst, position, m.base_kind, m.base, wide ? 2 : 1,
                "base");
      break;
    default:
      InstError(index,
                "the memory base must be a register, a uniform or "
                "absent");
  }
  if (m.has_index) {
    CheckSpan(index, inst, position, OperandKind::kRegister, m.index, 1,
              "index");
  }
  if (m.scale != 1 && m.scale != 2 && m.scale != 4 && m.scale != 8 &&
      m.scale != 16) {
    InstError(index,
              "scale must be 1, 2, 4, 8 or 16, got " + std::to_string(m.scale));
  }
}

void KernelVerifier::CheckInstruction(size_t index) {
  const Instruction& inst = kernel_.code[index];
  const SourceLocation& loc = inst.location;
  if (loc.file != 0 && loc.file >= module_.files.size()) {
    InstError(index, "source location names file " + std::to_string(loc.file) +
                         " but the module has " +
                         std::to_string(module_.files.size()) + " files");
  }
  if (!ValidOpcode(inst.op)) {
    enums_valid_ = false;
    InstError(index, "invalid opcode");
    return;
  }
  if (!ValidType(inst.type) || !ValidType(inst.type2)) {
    enums_valid_ = false;
    InstError(index, "invalid type");
    return;
  }
  const OpInfo& info = inst.info();
  const OpShape shape = info.shape;
  const std::string mnemonic(info.mnemonic);

  // Modifiers.
  if (ShapeHasType(shape)) {
    if (!(info.types & Bit(inst.type))) {
      InstError(index, "type " + std::string(IsaSuffix(inst.type)) +
                           " is not allowed for " + mnemonic +
                           " (allowed: " + TypeList(info.types) + ")");
    }
  } else if (inst.type != ScalarType::kUInt) {
    InstError(index, mnemonic + " takes no type, but its type is " +
                         std::string(IsaSuffix(inst.type)));
  }
  if (!ShapeHasModifier(shape, Modifier::kType2) &&
      inst.type2 != ScalarType::kUInt) {
    InstError(index, "only cvt takes a second type");
  }
  if (!ValidSpace(inst.space)) {
    enums_valid_ = false;
    InstError(index, "invalid address space");
    return;
  }
  if (ShapeHasSpace(shape)) {
    if (!IsAddressSpaceAllowed(inst.op, inst.type, inst.space)) {
      InstError(index,
                mnemonic + "." + std::string(IsaSuffix(inst.type)) +
                    " cannot access " +
                    std::string(AddressSpaceName(inst.space)) +
                    " memory (allowed: " + SpaceList(inst.op, inst.type) + ")");
    }
  } else if (inst.space != AddressSpace::kNone) {
    InstError(index, mnemonic + " takes no address space");
  }
  if (ShapeHasModifier(shape, Modifier::kVector)) {
    if (inst.vector < 1 || inst.vector > 4) {
      InstError(index, "vector count must be 1..4, got " +
                           std::to_string(inst.vector));
    }
  } else if (inst.vector != 1) {
    InstError(index, "vector count is only for ld and st");
  }
  if (ShapeHasModifier(shape, Modifier::kMemFlags)) {
    if (inst.mem_flags >= (1u << kNumMemFlags)) {
      InstError(index, "invalid barrier flags");
    }
  } else if (inst.mem_flags != 0) {
    InstError(index, "memory flags are only for barriers");
  }
  if (inst.transpose && !ShapeHasModifier(shape, Modifier::kTranspose)) {
    InstError(index,
              "transpose is only for simdgroup_load and "
              "simdgroup_store");
  }

  // Operands.
  const int count = inst.NumOperands();
  for (int i = 0; i < kMaxOperands; ++i) {
    const Operand& o = inst.operands[i];
    if (i >= count) {
      if (!(o == Operand{})) {
        InstError(index, mnemonic + " takes " + std::to_string(count) +
                             " operands, but " + Ordinal(i) + " is set");
      }
      continue;
    }
    if (static_cast<int>(o.kind) > static_cast<int>(OperandKind::kMemory)) {
      enums_valid_ = false;
      InstError(index, Ordinal(i) + ": invalid operand kind");
      continue;
    }
    CheckCanonical(index, inst, i);
    switch (GetOperandRole(shape, i)) {
      case OperandRole::kDestination:
        if (o.kind != OperandKind::kRegister) {
          InstError(index, Ordinal(i) +
                               " is the destination and must be a "
                               "register");
        } else {
          CheckSpan(index, inst, i, o.kind, o.reg, OperandRegisterSpan(inst, i),
                    "register");
        }
        break;
      case OperandRole::kSource:
        CheckSourceOperand(index, inst, i);
        break;
      case OperandRole::kLabel:
        if (o.kind != OperandKind::kLabel) {
          InstError(index, Ordinal(i) + " must be a label");
        } else if (o.label >= kernel_.code.size()) {
          InstError(index,
                    Ordinal(i) + ": branch target " + std::to_string(o.label) +
                        " is past the end of the code (" +
                        std::to_string(kernel_.code.size()) + " instructions)");
        }
        break;
      case OperandRole::kMemory:
        CheckMemoryOperand(index, inst, i);
        break;
    }
  }
}

}  // namespace

bool IsAddressSpaceAllowed(Opcode op, ScalarType type, AddressSpace space) {
  if (!ValidOpcode(op) || !ValidSpace(space)) return false;
  const ShapeInfo& shape = GetShapeInfo(GetOpInfo(op).shape);
  // (The type only matters where the two columns differ: atomics.)
  const AddressSpaceSet allowed =
      shape.float_spaces != shape.spaces && IsFloat(type) ? shape.float_spaces
                                                          : shape.spaces;
  return (allowed & Bit(space)) != 0;
}

Diagnostics VerifyKernel(const Module& module, const Kernel& kernel,
                         const VerifyOptions& options) {
  Diagnostics out;
  KernelVerifier(module, kernel, options, &out).Run();
  return out;
}

Diagnostics VerifyKernel(const Module& module, const Kernel& kernel,
                         std::string_view after_pass) {
  return VerifyKernel(module, kernel, VerifyOptions{.after_pass = after_pass});
}

Diagnostics Verify(const Module& module, std::string_view after_pass) {
  Diagnostics out;
  std::set<std::string> names;
  for (const Kernel& kernel : module.kernels) {
    if (!names.insert(kernel.name).second) {
      Diagnostic d;
      if (!module.files.empty()) d.file = module.files[0];
      d.message = (after_pass.empty()
                       ? std::string()
                       : "after pass '" + std::string(after_pass) + "': ") +
                  "duplicate kernel name '" + kernel.name + "'";
      out.push_back(std::move(d));
    }
    Diagnostics k = VerifyKernel(module, kernel, after_pass);
    out.insert(out.end(), std::make_move_iterator(k.begin()),
               std::make_move_iterator(k.end()));
  }
  return out;
}

Diagnostics Verify(const Module& module) { return Verify(module, {}); }

}  // namespace mtlemu::isa
