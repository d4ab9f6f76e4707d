// A position in a Triton kernel's source: the Python file (or the TTIR's
// loc(...) of it). Lines are 1-based; columns are 0-based, as Python's
// ast.col_offset and as Triton prints them in TTIR; diagnostics print
// column + 1.
#pragma once

#include <string>

namespace mtlemu::triton {

struct SourceLocation {
  std::string file;  // as given on the command line or in the TTIR loc
  int line = 0;      // 0: unknown
  int column = 0;

  bool known() const { return line > 0; }
};

}  // namespace mtlemu::triton
