// Special registers (Metal's kernel input attributes), from
// special_registers.def.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace mtlemu::isa {

enum class SpecialRegister : uint8_t {
#define SR(e, name, per_lane, per_simdgroup) e,
#include "isa/special_registers.def"
#undef SR
};

inline constexpr int kNumSpecialRegisters = 0
#define SR(e, name, per_lane, per_simdgroup) +1
#include "isa/special_registers.def"
#undef SR
    ;

std::string_view SpecialRegisterName(SpecialRegister sr);
// True when lanes of one SIMD group see different values.
bool VariesPerLane(SpecialRegister sr);
// True when SIMD groups of one threadgroup see different values.
bool VariesPerSimdgroup(SpecialRegister sr);
std::optional<SpecialRegister> SpecialRegisterFromName(std::string_view name);
// The registers a Metal kernel input attribute reads: its x, y and z rows
// ("thread_position_in_grid"), or one row three times for a scalar
// ("thread_index_in_simdgroup"), aliases followed; nullopt if none.
std::optional<std::array<SpecialRegister, 3>> SpecialRegistersOfAttribute(
    std::string_view attribute);

}  // namespace mtlemu::isa
