// The assembler: the text form of README.md -> Module.
//
// Assemble() checks the syntax and everything needed to encode the module
// (mnemonics, modifiers, operand counts and kinds, register numbers,
// immediates, memory references, labels, directives). The semantic rules
// (types allowed per opcode, address spaces, register spans, terminators,
// argument tables, limits) are the verifier's: run Verify() on the result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "isa/diagnostic.h"
#include "isa/module.h"
#include "isa/scalar_type.h"

namespace mtlemu::isa {

struct AssembleResult {
  Module module;
  Diagnostics diagnostics;

  bool ok() const { return diagnostics.empty(); }
};

// Errors the assembler reports before it gives up (one more diagnostic then
// says that it stopped).
inline constexpr int kMaxAssemblerErrors = 20;

// Assembles `text`. module.files[0] is `file_name`; diagnostics name it.
// Every instruction gets a SourceLocation: file 0, its own line and the
// column of its mnemonic, or the location set by the last `.loc` directive
// in its kernel (`.loc 0 0` returns to the default).
// Never fails hard: on errors the module is partial and diagnostics list
// them ("file:line:col: error: ..."), at most kMaxAssemblerErrors + 1.
AssembleResult Assemble(std::string_view text, std::string_view file_name);

// Parses one immediate literal of the text form (`42`, `-0x10`, `1.5e-3`,
// `inf`, `nan`, `0x3f800000`, ...) as the raw bits of `type`: integers as
// two's complement of the type's width, zero-extended; f32 as its bits;
// f16/bf16 bits in the low 16 bits. `0x` literals are raw bits for float
// types. Returns nullopt, with a message in *error when given, if the
// literal is malformed or out of range for the type.
std::optional<uint64_t> ParseImmediate(std::string_view text, ScalarType type,
                                       std::string* error = nullptr);

}  // namespace mtlemu::isa
