// The TTIR reader (compiler/triton/ttir/reader.h) on any text, then what
// follows for IR that reads: the block IR's verifier and printer (the
// printer never fails, also on IR the verifier rejects).
#include "compiler/triton/ir/printer.h"
#include "compiler/triton/ir/verifier.h"
#include "compiler/triton/ttir/reader.h"
#include "tests/fuzz/fuzz_check.h"

using namespace mtlemu;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto read = triton::ttir::ReadTtir(fuzz::AsText(data, size), "fuzz.ttir");
  if (!read.ok()) return 0;
  const triton::ir::Module& module = *read.value();
  (void)triton::ir::Verify(module);
  (void)triton::ir::PrintModule(module);
  return 0;
}
