// The spir64 address spaces of the front end's IR (LLVM's numbers), by
// name: what the passes and instruction selection compare pointers with.
#pragma once

namespace mtlemu::air {

inline constexpr unsigned kPrivateAddressSpace = 0;
inline constexpr unsigned kDeviceAddressSpace = 1;
inline constexpr unsigned kConstantAddressSpace = 2;
inline constexpr unsigned kThreadgroupAddressSpace = 3;
inline constexpr unsigned kGenericAddressSpace = 4;

}  // namespace mtlemu::air
