// What the fuzz targets share: the libFuzzer entry point's declaration and
// a check that stops the target (a crash to libFuzzer, which saves the
// input) when a property that must hold for every input does not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace mtlemu::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

[[noreturn]] inline void CheckFailed(const char* what, const char* file,
                                     int line) {
  std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", file, line, what);
  std::abort();
}

}  // namespace mtlemu::fuzz

#define MTLEMU_FUZZ_CHECK(cond)                                          \
  do {                                                                   \
    if (!(cond)) ::mtlemu::fuzz::CheckFailed(#cond, __FILE__, __LINE__); \
  } while (0)
