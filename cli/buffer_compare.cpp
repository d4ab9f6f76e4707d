#include "cli/buffer_compare.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "isa/numeric.h"

namespace mtlemu::cli {
namespace {

// Element i as a double (exact for every type up to 53 bits; 64-bit
// integers are compared as integers below).
double AsDouble(isa::ScalarType t, const uint8_t* p) {
  switch (t) {
    case isa::ScalarType::kFloat: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case isa::ScalarType::kHalf: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return isa::HalfBitsToFloat(h);
    }
    case isa::ScalarType::kBFloat: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return isa::BFloatBitsToFloat(h);
    }
    default:
      return 0;
  }
}

int64_t AsInteger(isa::ScalarType t, const uint8_t* p) {
  const int size = isa::SizeOf(t);
  uint64_t bits = 0;
  std::memcpy(&bits, p, size);
  if (isa::IsSigned(t) && size < 8 && (bits >> (8 * size - 1)) & 1) {
    bits |= ~uint64_t{0} << (8 * size);  // sign-extend
  }
  return static_cast<int64_t>(bits);
}

}  // namespace

Status CheckComparable(isa::ScalarType type, uint64_t buffer_bytes,
                       const NpyArray& expected) {
  const bool compatible =
      expected.type == type || (type == isa::ScalarType::kBFloat &&
                                expected.type == isa::ScalarType::kUShort);
  if (!compatible) {
    return Error{fmt::format("expected data is {}, the buffer holds {}",
                             isa::MetalName(expected.type),
                             isa::MetalName(type))};
  }
  const uint64_t size = isa::SizeOf(type);
  const uint64_t count = expected.data.size() / size;
  if (count != buffer_bytes / size) {
    return Error{fmt::format("expected {} elements, the buffer has {}", count,
                             buffer_bytes / size)};
  }
  return {};
}

Result<Comparison> CompareBuffer(isa::ScalarType type,
                                 std::span<const uint8_t> actual,
                                 const NpyArray& expected,
                                 const Tolerance& tolerance) {
  if (Status s = CheckComparable(type, actual.size(), expected); !s.ok()) {
    return s.error();
  }
  const size_t size = static_cast<size_t>(isa::SizeOf(type));
  const uint64_t count = expected.data.size() / size;
  Comparison c;
  c.elements = count;
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t* a = actual.data() + i * size;
    const uint8_t* e = expected.data.data() + i * size;
    if (isa::IsFloat(type)) {
      const double x = AsDouble(type, a), y = AsDouble(type, e);
      // An expected infinity is matched by itself only: inf - inf is NaN,
      // and an infinite tolerance would take any value.
      if (x == y || (std::isnan(x) && std::isnan(y)) ||
          (std::isfinite(y) &&
           std::fabs(x - y) <=
               tolerance.atol + tolerance.rtol * std::fabs(y))) {
        continue;
      }
      if (c.mismatches < 5) {
        c.first_mismatches +=
            fmt::format("  [{}] got {}, expected {}\n", i, x, y);
      }
    } else {
      const int64_t x = AsInteger(type, a), y = AsInteger(type, e);
      if (x == y) continue;
      if (c.mismatches < 5) {
        c.first_mismatches +=
            isa::IsSigned(type)
                ? fmt::format("  [{}] got {}, expected {}\n", i, x, y)
                : fmt::format("  [{}] got {}, expected {}\n", i,
                              static_cast<uint64_t>(x),
                              static_cast<uint64_t>(y));
      }
    }
    ++c.mismatches;
  }
  return c;
}

}  // namespace mtlemu::cli
