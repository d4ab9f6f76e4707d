#include "isa/special_register.h"

#include <array>

namespace mtlemu::isa {
namespace {

struct SpecialRegisterInfo {
  std::string_view name;
  bool per_lane;
  bool per_simdgroup;
};

constexpr std::array<SpecialRegisterInfo, kNumSpecialRegisters> kInfo = {{
#define SR(e, name, per_lane, per_simdgroup) {name, per_lane, per_simdgroup},
#include "isa/special_registers.def"
#undef SR
}};

}  // namespace

std::string_view SpecialRegisterName(SpecialRegister sr) {
  return kInfo[static_cast<int>(sr)].name;
}

bool VariesPerLane(SpecialRegister sr) {
  return kInfo[static_cast<int>(sr)].per_lane;
}

bool VariesPerSimdgroup(SpecialRegister sr) {
  return kInfo[static_cast<int>(sr)].per_simdgroup;
}

std::optional<SpecialRegister> SpecialRegisterFromName(std::string_view name) {
  for (int i = 0; i < kNumSpecialRegisters; ++i) {
    if (kInfo[i].name == name) return static_cast<SpecialRegister>(i);
  }
  return std::nullopt;
}

std::optional<std::array<SpecialRegister, 3>> SpecialRegistersOfAttribute(
    std::string_view attribute) {
#define SR_ALIAS(alias, same_as) \
  if (attribute == alias) attribute = same_as;
#define SR(e, name, per_lane, per_simdgroup)
#include "isa/special_registers.def"
#undef SR
  std::array<SpecialRegister, 3> xyz{};
  int found = 0;  // a bit per component
  for (int i = 0; i < kNumSpecialRegisters; ++i) {
    const auto sr = static_cast<SpecialRegister>(i);
    const std::string_view name = kInfo[i].name;
    if (name == attribute) return std::array{sr, sr, sr};
    if (name.size() == attribute.size() + 2 && name.starts_with(attribute) &&
        name[attribute.size()] == '.' && name.back() >= 'x' &&
        name.back() <= 'z') {
      xyz[name.back() - 'x'] = sr;
      found |= 1 << (name.back() - 'x');
    }
  }
  if (found == 7) return xyz;
  return std::nullopt;
}

}  // namespace mtlemu::isa
