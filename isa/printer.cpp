#include "isa/printer.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <string_view>

#include "isa/assembler.h"
#include "isa/numeric.h"
#include "isa/opcode.h"
#include "isa/shape.h"
#include "isa/special_register.h"

namespace mtlemu::isa {
namespace {

constexpr std::string_view kIndent = "    ";

bool ValidOpcode(Opcode op) { return static_cast<int>(op) < kNumOpcodes; }
bool ValidType(ScalarType t) { return static_cast<int>(t) < kNumScalarTypes; }

std::string Hex(uint64_t bits, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%0*llx", digits,
                static_cast<unsigned long long>(bits));
  return buf;
}

// d.ddd x 10^exponent, as plain decimal for moderate exponents and
// scientific otherwise; plain numbers always have a '.'.
std::string RenderDecimal(bool negative, std::string digits, int exponent) {
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int n = static_cast<int>(digits.size());
  std::string out = negative ? "-" : "";
  if (exponent >= -5 && exponent < 16) {
    if (exponent >= 0) {
      if (n > exponent + 1) {
        out +=
            digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
      } else {
        out += digits + std::string(exponent + 1 - n, '0') + ".0";
      }
    } else {
      out += "0." + std::string(-exponent - 1, '0') + digits;
    }
  } else {
    out += digits.substr(0, 1);
    if (n > 1) out += "." + digits.substr(1);
    out += "e" + std::to_string(exponent);
  }
  return out;
}

std::string PrintFloat(uint64_t raw, ScalarType type) {
  const int width = SizeOf(type) * 8;
  const uint64_t bits = raw & ((uint64_t{1} << width) - 1);
  float value;
  if (type == ScalarType::kFloat) {
    value = std::bit_cast<float>(static_cast<uint32_t>(bits));
  } else if (type == ScalarType::kHalf) {
    value = HalfBitsToFloat(static_cast<uint16_t>(bits));
  } else {
    value = BFloatBitsToFloat(static_cast<uint16_t>(bits));
  }
  if (std::isnan(value)) return Hex(bits, width / 4);
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  // Integers print exactly ("65504.0", not the shorter "65500.0").
  if (std::fabs(value) < 16777216.0f && value == std::trunc(value)) {
    return std::to_string(static_cast<int64_t>(value)) + ".0";
  }
  for (int precision = 0; precision <= 9; ++precision) {
    char buf[64];
    const std::to_chars_result r =
        std::to_chars(buf, buf + sizeof(buf), std::fabs(value),
                      std::chars_format::scientific, precision);
    if (r.ec != std::errc()) break;
    const std::string_view s(buf, r.ptr - buf);
    const size_t e = s.find('e');
    if (e == std::string_view::npos) break;
    std::string digits;
    for (char c : s.substr(0, e)) {
      if (c != '.') digits += c;
    }
    int exponent = 0;
    std::string_view exp_text = s.substr(e + 1);
    if (!exp_text.empty() && exp_text[0] == '+') exp_text.remove_prefix(1);
    std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(),
                    exponent);
    std::string text = RenderDecimal(std::signbit(value), digits, exponent);
    if (ParseImmediate(text, type) == bits) return text;
  }
  return Hex(bits, width / 4);
}

std::string PrintMemory(const MemoryRef& m) {
  std::string out = "[";
  const bool has_base = m.base_kind == OperandKind::kRegister ||
                        m.base_kind == OperandKind::kUniform;
  if (has_base) {
    out += (m.base_kind == OperandKind::kRegister ? "r" : "u") +
           std::to_string(m.base);
  }
  if (m.has_index) {
    if (has_base) out += " + ";
    const std::string reg = "r" + std::to_string(m.index);
    out += m.index_signed ? "sext(" + reg + ")" : reg;
    if (m.scale != 1 || !has_base) out += "*" + std::to_string(m.scale);
  }
  if (m.displacement != 0 || (!has_base && !m.has_index)) {
    const int64_t d = m.displacement;
    if (!has_base && !m.has_index) {
      out += std::to_string(d);
    } else {
      out += (d < 0 ? " - " : " + ") + std::to_string(d < 0 ? -d : d);
    }
  }
  return out + "]";
}

std::string PrintOperand(const Instruction& inst, int position,
                         const std::map<uint32_t, std::string>& names) {
  const Operand& o = inst.operands[position];
  switch (o.kind) {
    case OperandKind::kRegister:
      return "r" + std::to_string(o.reg);
    case OperandKind::kUniform:
      return "u" + std::to_string(o.reg);
    case OperandKind::kImmediate:
      return PrintImmediate(o.imm, OperandType(inst, position));
    case OperandKind::kSpecial:
      if (static_cast<int>(o.special) >= kNumSpecialRegisters) {
        return "%<invalid " + std::to_string(static_cast<int>(o.special)) + ">";
      }
      return "%" + std::string(SpecialRegisterName(o.special));
    case OperandKind::kLabel: {
      auto it = names.find(o.label);
      return it != names.end() ? it->second : "L" + std::to_string(o.label);
    }
    case OperandKind::kMemory:
      return PrintMemory(o.mem);
    case OperandKind::kNone:
      return "<none>";
  }
  return "<invalid operand>";
}

std::string EscapeString(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x" + Hex(c, 2).substr(2);
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

void PrintKernelTo(const Kernel& k, std::string& out) {
  out += ".kernel " + k.name + "\n";
  for (const BufferArgument& b : k.buffers) {
    out +=
        ".buffer " + std::to_string(b.index) + " u" +
        std::to_string(b.uniform) + " " +
        std::string(AddressSpaceName(b.space)) + " " +
        (b.element && ValidType(*b.element) ? std::string(MetalName(*b.element))
                                            : std::string("void"));
    if (!b.name.empty()) out += " " + b.name;
    out += "\n";
  }
  for (const ThreadgroupArgument& t : k.threadgroup_arguments) {
    out += ".threadgroup " + std::to_string(t.index) + " u" +
           std::to_string(t.uniform);
    if (!t.name.empty()) out += " " + t.name;
    out += "\n";
  }
  if (k.constant_data_uniform >= 0 || !k.constant_data.empty()) {
    out += ".constant_data u" + std::to_string(k.constant_data_uniform) + " " +
           std::to_string(k.constant_data.size()) + "\n";
    constexpr size_t kBytesPerLine = 32;
    constexpr char kHexDigits[] = "0123456789abcdef";
    for (size_t i = 0; i < k.constant_data.size(); i += kBytesPerLine) {
      out += ".data ";
      const size_t end = std::min(k.constant_data.size(), i + kBytesPerLine);
      for (size_t j = i; j < end; ++j) {
        out += kHexDigits[k.constant_data[j] >> 4];
        out += kHexDigits[k.constant_data[j] & 15];
      }
      out += "\n";
    }
  }
  if (k.static_threadgroup_memory != 0) {
    out += ".threadgroup_memory " +
           std::to_string(k.static_threadgroup_memory) + "\n";
  }
  if (k.thread_memory != 0) {
    out += ".thread_memory " + std::to_string(k.thread_memory) + "\n";
  }
  if (k.max_total_threads_per_threadgroup != 0) {
    out += ".max_total_threads_per_threadgroup " +
           std::to_string(k.max_total_threads_per_threadgroup) + "\n";
  }
  const std::map<uint32_t, std::string> names = LabelNames(k);
  auto label_it = names.begin();
  // The location set by the last .loc printed; file 0 when none is active.
  SourceLocation loc;
  for (size_t i = 0; i < k.code.size(); ++i) {
    const Instruction& inst = k.code[i];
    for (; label_it != names.end() && label_it->first <= i; ++label_it) {
      out += label_it->second + ":\n";
    }
    const SourceLocation& l = inst.location;
    if (l.file != 0) {
      if (!(loc == l)) {
        out += std::string(kIndent) + ".loc " + std::to_string(l.file) + " " +
               std::to_string(l.line);
        if (l.column != 0) out += " " + std::to_string(l.column);
        out += "\n";
        loc = l;
      }
    } else if (loc.file != 0) {
      out += std::string(kIndent) + ".loc 0 0\n";
      loc = SourceLocation{};
    }
    out += std::string(kIndent) + PrintInstruction(inst, names) + "\n";
  }
  for (; label_it != names.end(); ++label_it) {
    out += label_it->second + ":\n";
  }
  out += ".end\n";
}

}  // namespace

std::map<uint32_t, std::string> LabelNames(const Kernel& kernel) {
  std::map<uint32_t, std::string> names = kernel.labels;
  std::set<std::string> used;
  for (const auto& [index, name] : names) used.insert(name);
  for (const Instruction& inst : kernel.code) {
    if (!ValidOpcode(inst.op)) continue;
    for (int i = 0; i < inst.NumOperands(); ++i) {
      const Operand& o = inst.operands[i];
      if (o.kind != OperandKind::kLabel || names.count(o.label)) continue;
      std::string name = "L" + std::to_string(o.label);
      for (int n = 1; used.count(name); ++n) {
        name = "L" + std::to_string(o.label) + "_" + std::to_string(n);
      }
      used.insert(name);
      names.emplace(o.label, std::move(name));
    }
  }
  return names;
}

std::string PrintImmediate(uint64_t bits, ScalarType type) {
  if (!ValidType(type)) return Hex(bits, 1);
  const int width = SizeOf(type) * 8;
  const uint64_t mask = width == 64 ? UINT64_MAX : (uint64_t{1} << width) - 1;
  if (IsFloat(type)) return PrintFloat(bits, type);
  const uint64_t v = bits & mask;
  if (IsSigned(type)) {
    const uint64_t sign = uint64_t{1} << (width - 1);
    const int64_t s = static_cast<int64_t>((v ^ sign) - sign);
    return std::to_string(s);
  }
  return std::to_string(v);
}

std::string PrintInstruction(const Instruction& inst,
                             const std::map<uint32_t, std::string>& names) {
  if (!ValidOpcode(inst.op)) {
    return "<invalid opcode " + std::to_string(static_cast<int>(inst.op)) + ">";
  }
  const OpShape shape = inst.info().shape;
  std::string out(inst.info().mnemonic);
  if (ShapeHasSpace(shape)) {
    out += ".";
    out += AddressSpaceName(inst.space);
  }
  if (ShapeHasModifier(shape, Modifier::kVector) && inst.vector != 1) {
    out += ".v" + std::to_string(inst.vector);
  }
  auto suffix = [](ScalarType t) {
    return ValidType(t)
               ? std::string(IsaSuffix(t))
               : "<invalid type " + std::to_string(static_cast<int>(t)) + ">";
  };
  if (ShapeHasType(shape)) out += "." + suffix(inst.type);
  if (ShapeHasModifier(shape, Modifier::kType2)) {
    out += "." + suffix(inst.type2);
  }
  if (ShapeHasModifier(shape, Modifier::kTranspose) && inst.transpose) {
    out += ".transpose";
  }
  if (ShapeHasModifier(shape, Modifier::kMemFlags)) {
    if (inst.mem_flags == 0) out += ".mem_none";
    for (int bit = 0; bit < 8; ++bit) {
      if (!(inst.mem_flags & (1u << bit))) continue;
      out += ".";
      out += bit < kNumMemFlags ? std::string(MemFlagName(bit))
                                : "<invalid flag " + std::to_string(bit) + ">";
    }
  }
  for (int i = 0; i < inst.NumOperands(); ++i) {
    out += i == 0 ? " " : ", ";
    out += PrintOperand(inst, i, names);
  }
  return out;
}

std::string PrintInstruction(const Instruction& inst, const Kernel& kernel) {
  return PrintInstruction(inst, LabelNames(kernel));
}

std::string PrintKernel(const Kernel& kernel) {
  std::string out;
  PrintKernelTo(kernel, out);
  return out;
}

std::string PrintModule(const Module& module) {
  std::string out;
  for (size_t i = 1; i < module.files.size(); ++i) {
    out += ".file " + std::to_string(i) + " " + EscapeString(module.files[i]) +
           "\n";
  }
  for (size_t i = 0; i < module.kernels.size(); ++i) {
    if (!out.empty()) out += "\n";
    PrintKernelTo(module.kernels[i], out);
  }
  return out;
}

}  // namespace mtlemu::isa
