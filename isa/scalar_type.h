// Scalar types shared by the ISA, the emulator and the command line, with
// Metal's names. See scalar_types.def for the table.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace mtlemu::isa {

enum class ScalarKind : uint8_t { kBool, kSigned, kUnsigned, kFloat };

enum class ScalarType : uint8_t {
#define X(e, metal, suffix, size, kind) e,
#include "isa/scalar_types.def"
#undef X
};

inline constexpr int kNumScalarTypes = 0
#define X(e, metal, suffix, size, kind) +1
#include "isa/scalar_types.def"
#undef X
    ;

// Metal's spelling: "float", "uint", "bfloat", ...
std::string_view MetalName(ScalarType t);
// ISA mnemonic suffix: "f32", "u32", "bf16", ...
std::string_view IsaSuffix(ScalarType t);
int SizeOf(ScalarType t);
ScalarKind KindOf(ScalarType t);

inline bool IsFloat(ScalarType t) { return KindOf(t) == ScalarKind::kFloat; }
inline bool IsSigned(ScalarType t) { return KindOf(t) == ScalarKind::kSigned; }
inline bool IsInteger(ScalarType t) {
  return KindOf(t) == ScalarKind::kSigned ||
         KindOf(t) == ScalarKind::kUnsigned || KindOf(t) == ScalarKind::kBool;
}
// 64-bit types occupy a register pair.
inline bool IsWide(ScalarType t) { return SizeOf(t) == 8; }

std::optional<ScalarType> ScalarTypeFromMetalName(std::string_view name);
std::optional<ScalarType> ScalarTypeFromIsaSuffix(std::string_view suffix);

}  // namespace mtlemu::isa
