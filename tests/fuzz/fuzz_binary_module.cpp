// The binary module reader (isa/binary_module.h) on any bytes, then what
// the command line does with a kernel file that is a binary module
// (cli/kernel_file.cpp, LoadLibrary; Device::newLibraryWithModule): the
// verifier. A module that reads must serialize to bytes that read back
// equal.
#include <span>
#include <string>
#include <vector>

#include "isa/binary_module.h"
#include "isa/verifier.h"
#include "tests/fuzz/fuzz_check.h"

using namespace mtlemu;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  if (!isa::IsBinaryModule(bytes)) return 0;
  isa::Module module;
  std::string error;
  if (!isa::DeserializeModule(bytes, module, error)) return 0;

  isa::Module read;
  MTLEMU_FUZZ_CHECK(
      isa::DeserializeModule(isa::SerializeModule(module), read, error));
  MTLEMU_FUZZ_CHECK(read == module);

  (void)isa::Verify(module);
  return 0;
}
