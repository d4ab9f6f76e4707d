// LLVM's printed form of a value, a type or a constant expression, as the
// back end's error messages quote it.
#pragma once

#include <llvm/Support/raw_ostream.h>

#include <string>

namespace mtlemu::air {

// Without the indentation LLVM prints an instruction with.
template <class T>
std::string LlvmText(const T& v) {
  std::string text;
  llvm::raw_string_ostream out(text);
  v.print(out);
  out.flush();
  const size_t start = text.find_first_not_of(' ');
  return start == std::string::npos ? text : text.substr(start);
}

}  // namespace mtlemu::air
