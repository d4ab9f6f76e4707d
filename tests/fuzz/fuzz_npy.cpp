// The .npy reader (cli/npy.h, ParseNpy: what ReadNpy does with a file's
// bytes) on any bytes. An array that reads must have as many bytes of data
// as its shape says.
#include <span>

#include "cli/npy.h"
#include "isa/scalar_type.h"
#include "tests/fuzz/fuzz_check.h"

using namespace mtlemu;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Result<cli::NpyArray> array =
      cli::ParseNpy(std::span<const uint8_t>(data, size), "fuzz.npy");
  if (!array.ok()) return 0;
  const cli::NpyArray& a = array.value();
  MTLEMU_FUZZ_CHECK(a.data.size() ==
                    a.ElementCount() *
                        static_cast<uint64_t>(isa::SizeOf(a.type)));
  return 0;
}
