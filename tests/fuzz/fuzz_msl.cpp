// The MSL compiler (compiler/msl_compiler.h, CompileMsl: the preprocessor,
// Clang's front end, the IR pipeline and instruction selection, as
// `mtlemu run kernel.metal` and `mtlemu compile` use it) on any source
// text, every kernel lowered. A module that compiles has passed the
// verifier; one that does not is an error value. An "internal compiler
// error" is an error too, not a crash: the fuzzer looks for crashes, hangs
// and memory blow-ups.
#include <string>

#include "compiler/msl_compiler.h"
#include "tests/fuzz/fuzz_check.h"

using namespace mtlemu;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const msl::CompileOptions options;
  (void)compiler::CompileMsl(fuzz::AsText(data, size), "fuzz.metal", options);
  return 0;
}
