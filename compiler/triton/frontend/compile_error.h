// The front end's errors. Code generation is deeply recursive (expressions
// inside inlined jit functions inside loops), so errors travel as an
// exception inside the front end and become a Result at its boundary
// (frontend.h); nothing throws out of the library. A CompileError raised
// without a location gets the location of the innermost Python node being
// generated.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compiler/triton/source_location.h"

namespace mtlemu::triton::frontend {

struct CompileError {
  std::string message;
  SourceLocation loc;  // unknown until the code generator attaches one
  // "in 'helper' called from file:line" lines, innermost first.
  std::vector<std::string> call_stack;
};

// Throws a CompileError with `message` (Triton's wording where it has one).
[[noreturn]] inline void Fail(std::string message) {
  throw CompileError{std::move(message), {}, {}};
}
[[noreturn]] inline void FailAt(const SourceLocation& loc,
                                std::string message) {
  throw CompileError{std::move(message), loc, {}};
}

}  // namespace mtlemu::triton::frontend
