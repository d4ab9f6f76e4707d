// One ISA instruction and its operands, as the assembler produces them and
// the printer, verifier and executor consume them.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "isa/address_space.h"
#include "isa/opcode.h"
#include "isa/scalar_type.h"
#include "isa/special_register.h"

namespace mtlemu::isa {

// Metal's mem_flags for barriers, as bits.
enum MemFlags : uint8_t {
  kMemNone = 0,
  kMemDevice = 1,
  kMemThreadgroup = 2,
  kMemTexture = 4,
  kMemThreadgroupImageblock = 8,
};
inline constexpr int kNumMemFlags = 4;
std::string_view MemFlagName(int bit_index);  // "mem_device", ...

inline constexpr int kSimdWidth = 32;
inline constexpr int kMaxRegisters = 256;  // r0..r255 per lane
inline constexpr int kMaxUniforms = 256;   // u0..u255 per SIMD group

enum class OperandKind : uint8_t {
  kNone,
  kRegister,   // rN: 32 bits per lane (64-bit values: rN low, rN+1 high)
  kUniform,    // uN: one 32-bit value for the whole SIMD group (read-only)
  kImmediate,  // literal, stored as the raw bits of the operand's type
  kSpecial,    // %thread_position_in_grid.x, ...
  kLabel,      // a branch target: index of the instruction it names
  kMemory,     // [base + index*scale + displacement]
};

// A memory operand. The base is a register or uniform (a pair for device
// and constant addresses) or absent (threadgroup/thread offset 0); the index
// is an optional 32-bit register, zero- or sign-extended, times scale.
struct MemoryRef {
  OperandKind base_kind = OperandKind::kNone;  // kRegister, kUniform or kNone
  uint16_t base = 0;
  bool has_index = false;
  bool index_signed = false;
  uint16_t index = 0;  // register number
  uint8_t scale = 1;   // 1, 2, 4, 8 or 16
  int32_t displacement = 0;

  bool operator==(const MemoryRef&) const = default;
};

struct Operand {
  OperandKind kind = OperandKind::kNone;
  uint16_t reg = 0;  // register or uniform number
  SpecialRegister special = SpecialRegister::kThreadPositionInGridX;
  uint64_t imm = 0;    // immediate bits
  uint32_t label = 0;  // instruction index (labels resolved)
  MemoryRef mem;

  bool operator==(const Operand&) const = default;

  static Operand Reg(int r) {
    Operand o;
    o.kind = OperandKind::kRegister;
    o.reg = static_cast<uint16_t>(r);
    return o;
  }
  static Operand Uniform(int u) {
    Operand o;
    o.kind = OperandKind::kUniform;
    o.reg = static_cast<uint16_t>(u);
    return o;
  }
  static Operand Imm(uint64_t bits) {
    Operand o;
    o.kind = OperandKind::kImmediate;
    o.imm = bits;
    return o;
  }
  static Operand Special(SpecialRegister sr) {
    Operand o;
    o.kind = OperandKind::kSpecial;
    o.special = sr;
    return o;
  }
  static Operand Label(uint32_t target) {
    Operand o;
    o.kind = OperandKind::kLabel;
    o.label = target;
    return o;
  }
  static Operand Memory(const MemoryRef& m) {
    Operand o;
    o.kind = OperandKind::kMemory;
    o.mem = m;
    return o;
  }
};

// Where an instruction came from: a file of the module's file table and a
// line/column in it (the kernel's own source line, or the ISA text line).
struct SourceLocation {
  uint16_t file = 0;  // index into Module::files
  uint32_t line = 0;  // 0: unknown
  uint32_t column = 0;

  bool operator==(const SourceLocation&) const = default;
};

struct Instruction {
  Opcode op = Opcode::kExit;
  ScalarType type = ScalarType::kUInt;   // the instruction's type (.T)
  ScalarType type2 = ScalarType::kUInt;  // cvt: the source type
  AddressSpace space = AddressSpace::kNone;
  uint8_t vector = 1;                            // ld/st: 1..4 elements
  uint8_t mem_flags = 0;                         // barriers: MemFlags bits
  bool transpose = false;                        // simdgroup_load/store
  std::array<Operand, kMaxOperands> operands{};  // in text order
  SourceLocation location;

  bool operator==(const Instruction&) const = default;

  const OpInfo& info() const { return GetOpInfo(op); }
  int NumOperands() const;
};

// The type a given operand position holds (for immediates and register
// widths; shapes.def says which). For memory and label operands the result
// is meaningless.
ScalarType OperandType(const Instruction& inst, int position);

// How many consecutive 32-bit registers the operand at `position` spans:
// 2 for 64-bit types, 2 per lane for an 8x8 matrix, vector * width for
// ld/st data.
int OperandRegisterSpan(const Instruction& inst, int position);

// True for the operand positions an instruction writes.
bool IsDestination(const Instruction& inst, int position);

}  // namespace mtlemu::isa
