// The binary form of a Module: what `mtlemu asm -o` writes and the compile
// cache stores. Little-endian, versioned; reading checks every length and
// value, so a damaged file is an error, never a crash.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "isa/module.h"

namespace mtlemu::isa {

inline constexpr char kBinaryModuleMagic[8] = {'M', 'T', 'L', 'E',
                                               'M', 'U', 'B', '\0'};
// 3: simdgroup_matrix registers hold elements in Apple's lane layout
// (isa/simdgroup_matrix_layout.h); modules of version 2 assumed another.
// 4: the trap opcode (the opcodes after exit are numbered one higher).
inline constexpr uint32_t kBinaryModuleVersion = 4;

std::vector<uint8_t> SerializeModule(const Module& module);
// True for data that starts with the magic (a binary module, maybe damaged).
bool IsBinaryModule(std::span<const uint8_t> data);
// False with `error` set when the data is not a valid module of this
// version. The result still needs Verify() before it runs.
bool DeserializeModule(std::span<const uint8_t> data, Module& module,
                       std::string& error);

}  // namespace mtlemu::isa
