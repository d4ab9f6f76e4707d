#include "isa/scalar_type.h"

#include <array>

namespace mtlemu::isa {
namespace {

struct ScalarTypeInfo {
  std::string_view metal_name;
  std::string_view isa_suffix;
  int size;
  ScalarKind kind;
};

constexpr std::array<ScalarTypeInfo, kNumScalarTypes> kInfo = {{
#define X(e, metal, suffix, size, kind) {metal, suffix, size, ScalarKind::kind},
#include "isa/scalar_types.def"
#undef X
}};

const ScalarTypeInfo& Info(ScalarType t) { return kInfo[static_cast<int>(t)]; }

}  // namespace

std::string_view MetalName(ScalarType t) { return Info(t).metal_name; }
std::string_view IsaSuffix(ScalarType t) { return Info(t).isa_suffix; }
int SizeOf(ScalarType t) { return Info(t).size; }
ScalarKind KindOf(ScalarType t) { return Info(t).kind; }

std::optional<ScalarType> ScalarTypeFromMetalName(std::string_view name) {
  for (int i = 0; i < kNumScalarTypes; ++i) {
    if (kInfo[i].metal_name == name) return static_cast<ScalarType>(i);
  }
  return std::nullopt;
}

std::optional<ScalarType> ScalarTypeFromIsaSuffix(std::string_view suffix) {
  for (int i = 0; i < kNumScalarTypes; ++i) {
    if (kInfo[i].isa_suffix == suffix) return static_cast<ScalarType>(i);
  }
  return std::nullopt;
}

}  // namespace mtlemu::isa
