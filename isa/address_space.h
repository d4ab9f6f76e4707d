// Metal's address spaces. Their own header because the shape table
// (shapes.def) lists the spaces each memory shape may access, and the
// instruction form (instruction.h) builds on that table.
#pragma once

#include <cstdint>
#include <string_view>

namespace mtlemu::isa {

// Device and constant pointers are 64-bit GPU virtual addresses;
// threadgroup and thread addresses are 32-bit offsets.
enum class AddressSpace : uint8_t {
  kNone,
  kDevice,
  kConstant,
  kThreadgroup,
  kThread
};
std::string_view AddressSpaceName(AddressSpace space);
bool IsWideAddressSpace(AddressSpace space);  // 64-bit addresses

// A set of AddressSpaces as a bit mask (bit i = AddressSpace i).
using AddressSpaceSet = uint8_t;
constexpr AddressSpaceSet Bit(AddressSpace s) {
  return static_cast<AddressSpaceSet>(1u << static_cast<int>(s));
}

}  // namespace mtlemu::isa
