// The smaller commands: asm, disasm, chips.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/triton_args.h"

namespace mtlemu::cli {

// Assembles and verifies FILE; writes the binary module to `output` when
// given, else prints the canonical text. Returns an ExitCode.
int AsmCommand(const std::string& file, const std::string& output);
// Prints the text form of a binary module (or of ISA text, canonicalized).
int DisasmCommand(const std::string& file);
// Lists the chips with their limits.
int ChipsCommand();

struct CompileCommandOptions {
  std::string file;
  std::vector<std::string> kernels;  // .metal: those only; Triton: one
  std::optional<std::string> emit;   // isa, or Triton: ttir, layouts, msl
  TritonOptions triton;              // .py, .ttir, .mlir
  std::vector<std::string> defines;  // NAME or NAME=VALUE
  std::vector<std::string> include_directories;  // -I DIR
  std::vector<std::string> constants;            // NAME|INDEX=TYPE:VALUE
  bool no_fast_math = false;
  bool emit_llvm = false;
};
// Compiles an MSL file; prints its ISA, or the LLVM IR and the kernels'
// argument tables (--emit-llvm). Compiles a Triton kernel for its --arg
// values; prints its ISA or the stage --emit names.
int CompileCommand(const CompileCommandOptions& options);

}  // namespace mtlemu::cli
