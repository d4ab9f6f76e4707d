// The smaller commands: asm, disasm, chips.
#pragma once

#include <string>

namespace mtlemu::cli {

// Assembles and verifies FILE; writes the binary module to `output` when
// given, else prints the canonical text. Returns an ExitCode.
int AsmCommand(const std::string& file, const std::string& output);
// Prints the text form of a binary module (or of ISA text, canonicalized).
int DisasmCommand(const std::string& file);
// Lists the chips with their limits.
int ChipsCommand();

}  // namespace mtlemu::cli
