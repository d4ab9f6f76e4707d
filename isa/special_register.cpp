#include "isa/special_register.h"

#include <array>

namespace mtlemu::isa {
namespace {

struct SpecialRegisterInfo {
  std::string_view name;
  bool per_lane;
};

constexpr std::array<SpecialRegisterInfo, kNumSpecialRegisters> kInfo = {{
#define SR(e, name, per_lane) {name, per_lane},
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

std::optional<SpecialRegister> SpecialRegisterFromName(std::string_view name) {
  for (int i = 0; i < kNumSpecialRegisters; ++i) {
    if (kInfo[i].name == name) return static_cast<SpecialRegister>(i);
  }
  return std::nullopt;
}

}  // namespace mtlemu::isa
