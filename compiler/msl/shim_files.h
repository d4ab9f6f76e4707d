// The <metal_stdlib> shim headers, embedded in the binary (generated from
// compiler/msl/shim/ by embed_shims.cmake).
#pragma once

#include <cstddef>

namespace mtlemu::msl {

struct ShimFile {
  const char* name;  // e.g. "metal_stdlib"
  const char* text;
};

extern const ShimFile kShimFiles[];
extern const size_t kNumShimFiles;
// The header every compilation includes first (address-space and keyword
// macros), or nullptr when the shims have none.
extern const char* const kShimPrelude;

}  // namespace mtlemu::msl
