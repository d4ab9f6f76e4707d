// Special registers (Metal's kernel input attributes), from
// special_registers.def.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace mtlemu::isa {

enum class SpecialRegister : uint8_t {
#define SR(e, name, per_lane) e,
#include "isa/special_registers.def"
#undef SR
};

inline constexpr int kNumSpecialRegisters = 0
#define SR(e, name, per_lane) +1
#include "isa/special_registers.def"
#undef SR
    ;

std::string_view SpecialRegisterName(SpecialRegister sr);
// True when lanes of one SIMD group see different values.
bool VariesPerLane(SpecialRegister sr);
std::optional<SpecialRegister> SpecialRegisterFromName(std::string_view name);

}  // namespace mtlemu::isa
