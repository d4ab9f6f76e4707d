// Facts of TTIR's text form that the printer (printer.h) and the reader
// (compiler/triton/ttir/reader.h) share: the integers behind symbolic
// attributes, and floats written as MLIR writes them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "compiler/triton/ir/ir.h"

namespace mtlemu::triton::ir {

// --- symbolic attributes ----------------------------------------------------
//
// The IR holds a symbolic attribute (a cmpi predicate, a load's cache
// modifier) as the string TTIR's custom syntax spells ("slt", "ca"). MLIR's
// generic form and attribute dictionaries write the enum's integer instead
// ("predicate = 2 : i64", "padding = 1 : i32"); these tables translate.

struct EnumCase {
  const char* name;
  int64_t value;
};

struct EnumAttrInfo {
  const char* enum_name;  // "CacheModifier", for messages
  std::span<const EnumCase> cases;
  int bits;  // the integer type of its generic form: i32 or i64
};

// The enum that attribute `key` of `code` holds, or null when `key` is not
// a symbolic attribute of that op.
const EnumAttrInfo* EnumAttrOf(OpCode code, std::string_view key);
std::optional<int64_t> EnumValue(const EnumAttrInfo& info,
                                 std::string_view name);
// The spelling of `value`, or null.
const char* EnumName(const EnumAttrInfo& info, int64_t value);
// "eq, ne, slt, ..." for messages.
std::string EnumNames(const EnumAttrInfo& info);

// --- numbers -----------------------------------------------------------------

// A float as MLIR prints it for `format`: "1.000000e+00" when six
// significant digits give the value back exactly, else the shortest form
// that does ("9.99999974E-6", "3.14159274"), else the bits in hexadecimal
// ("0xFF800000" for -inf, and for NaNs).
std::string FormatFloat(double value, FloatFormat format);

// `value` sign-extended from the low `bits` bits (how MLIR prints a
// signless integer of that width). bits == 1 gives 0 or 1.
int64_t SignExtend(int64_t value, int bits);

// A string literal with MLIR's escapes: printable ASCII as is, except " and
// \, and every other byte as \XX (a newline is "\0A").
std::string QuoteString(std::string_view s);

}  // namespace mtlemu::triton::ir
