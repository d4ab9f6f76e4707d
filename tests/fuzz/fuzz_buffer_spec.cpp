// The parsers of the command line's buffer arguments (cli/buffer_spec.h) on
// any text: --buffer, --bytes, --threadgroup-memory, --constant and the
// sizes of --grid/--groups/--threadgroup, and one value of each scalar type.
// A generated buffer is made when it is small (the parser accepts up to
// kMaxGeneratedBufferBytes).
#include <string_view>
#include <variant>
#include <vector>

#include "cli/buffer_spec.h"
#include "isa/scalar_type.h"
#include "tests/fuzz/fuzz_check.h"

using namespace mtlemu;

namespace {

constexpr uint64_t kMaxMaterializedBytes = uint64_t{1} << 16;

void Materialize(const cli::BufferSource& source) {
  const auto* generated = std::get_if<cli::GeneratedBuffer>(&source);
  if (generated == nullptr) return;  // a .npy path: nothing is read
  const uint64_t bytes =
      generated->count * static_cast<uint64_t>(isa::SizeOf(generated->type));
  if (bytes > kMaxMaterializedBytes) return;
  MTLEMU_FUZZ_CHECK(cli::MaterializeBuffer(*generated).size() == bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view arg = fuzz::AsText(data, size);

  if (Result<cli::BufferSpec> spec = cli::ParseBufferSpec(arg); spec.ok()) {
    MTLEMU_FUZZ_CHECK(spec.value().index >= 0 &&
                      spec.value().index <= cli::kMaxBindIndex);
    Materialize(spec.value().source);
  }
  if (Result<cli::BufferSource> source = cli::ParseBufferSource(arg);
      source.ok()) {
    Materialize(source.value());
  }
  if (Result<cli::BytesSpec> bytes = cli::ParseBytesSpec(arg); bytes.ok()) {
    MTLEMU_FUZZ_CHECK(bytes.value().bytes.size() <= cli::kMaxSetBytesLength);
  }
  (void)cli::ParseThreadgroupMemorySpec(arg);
  (void)cli::ParseFunctionConstant(arg);
  (void)cli::ParseSize3("--grid", arg);
  for (int t = 0; t < isa::kNumScalarTypes; ++t) {
    const auto type = static_cast<isa::ScalarType>(t);
    if (Result<std::vector<uint8_t>> value = cli::ParseScalarValue(type, arg);
        value.ok()) {
      MTLEMU_FUZZ_CHECK(value.value().size() ==
                        static_cast<size_t>(isa::SizeOf(type)));
    }
  }
  return 0;
}
