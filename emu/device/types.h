// Small value types of Metal's API.
#pragma once

#include <cstdint>

namespace mtlemu {

// MTLSize.
struct MTLSize {
  uint64_t width = 1;
  uint64_t height = 1;
  uint64_t depth = 1;

  uint64_t Total() const { return width * height * depth; }
};

}  // namespace mtlemu
