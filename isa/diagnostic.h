// Diagnostics are values: library code returns them, the command line
// prints them. Format: "file:line:col: error: message".
#pragma once

#include <string>
#include <vector>

namespace mtlemu::isa {

struct Diagnostic {
  std::string file;
  int line = 0;    // 1-based; 0 when not tied to a line
  int column = 0;  // 1-based; 0 when not tied to a column
  std::string message;

  std::string ToString() const;
};

using Diagnostics = std::vector<Diagnostic>;

// All diagnostics, one per line.
std::string FormatDiagnostics(const Diagnostics& diagnostics);

}  // namespace mtlemu::isa
