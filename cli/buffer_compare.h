// Comparing a buffer with expected values (`mtlemu run --expect`): floats
// within a tolerance (|actual - expected| <= atol + rtol * |expected|, NaN
// equal to NaN), integers exactly.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "cli/npy.h"
#include "common/result.h"
#include "isa/scalar_type.h"

namespace mtlemu::cli {

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};

struct Comparison {
  uint64_t elements = 0;
  uint64_t mismatches = 0;
  std::string first_mismatches;  // up to 5 lines "  [i] got X, expected Y"
};

// Whether `expected` can be compared with a buffer of `buffer_bytes` of
// `type`: the same element type (ushort for bfloat) and count.
Status CheckComparable(isa::ScalarType type, uint64_t buffer_bytes,
                       const NpyArray& expected);

// Fails when the expected array's element type or count does not fit.
Result<Comparison> CompareBuffer(isa::ScalarType type,
                                 std::span<const uint8_t> actual,
                                 const NpyArray& expected,
                                 const Tolerance& tolerance);

}  // namespace mtlemu::cli
