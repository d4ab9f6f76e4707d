// The Triton front end's Python parser (compiler/triton/python/parser.h) on
// any text, as a file (ParseModule) and as a command-line value
// (ParseExpression). Its contract: never throws, never crashes, nesting
// bounded.
#include "compiler/triton/python/parser.h"
#include "tests/fuzz/fuzz_check.h"

using namespace mtlemu;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::AsText(data, size);
  (void)triton::py::ParseModule(text, "fuzz.py");
  (void)triton::py::ParseExpression(text, "fuzz.py");
  return 0;
}
