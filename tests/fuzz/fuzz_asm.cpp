// The ISA assembler (isa/assembler.h) on any text, then what the command
// line does with a module that assembles: the verifier, and for a verified
// module the round trips it promises (isa/printer.h: printing, reassembling
// and printing again gives the same text; isa/binary_module.h: a module
// serialized reads back equal).
#include <span>
#include <string>
#include <vector>

#include "isa/assembler.h"
#include "isa/binary_module.h"
#include "isa/printer.h"
#include "isa/verifier.h"
#include "tests/fuzz/fuzz_check.h"

using namespace mtlemu;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const isa::AssembleResult assembled =
      isa::Assemble(fuzz::AsText(data, size), "fuzz.s");
  if (!assembled.ok()) return 0;
  if (!isa::Verify(assembled.module).empty()) return 0;

  const std::string printed = isa::PrintModule(assembled.module);
  const isa::AssembleResult again = isa::Assemble(printed, "fuzz.s");
  MTLEMU_FUZZ_CHECK(again.ok());
  MTLEMU_FUZZ_CHECK(isa::Verify(again.module).empty());
  MTLEMU_FUZZ_CHECK(isa::PrintModule(again.module) == printed);

  const std::vector<uint8_t> binary = isa::SerializeModule(assembled.module);
  isa::Module read;
  std::string error;
  MTLEMU_FUZZ_CHECK(isa::DeserializeModule(binary, read, error));
  MTLEMU_FUZZ_CHECK(read == assembled.module);
  return 0;
}
