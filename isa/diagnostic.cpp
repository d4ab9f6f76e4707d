#include "isa/diagnostic.h"

namespace mtlemu::isa {

std::string Diagnostic::ToString() const {
  std::string out = file.empty() ? "<input>" : file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  out += ": error: " + message;
  return out;
}

std::string FormatDiagnostics(const Diagnostics& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) {
    out += d.ToString();
    out += '\n';
  }
  return out;
}

}  // namespace mtlemu::isa
