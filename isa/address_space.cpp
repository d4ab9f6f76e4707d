#include "isa/address_space.h"

namespace mtlemu::isa {

std::string_view AddressSpaceName(AddressSpace space) {
  switch (space) {
    case AddressSpace::kNone:
      return "none";
    case AddressSpace::kDevice:
      return "device";
    case AddressSpace::kConstant:
      return "constant";
    case AddressSpace::kThreadgroup:
      return "threadgroup";
    case AddressSpace::kThread:
      return "thread";
  }
  return "?";
}

bool IsWideAddressSpace(AddressSpace space) {
  return space == AddressSpace::kDevice || space == AddressSpace::kConstant;
}

}  // namespace mtlemu::isa
