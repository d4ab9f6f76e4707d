#include "compiler/triton/ir/types.h"

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace mtlemu::triton::ir {
namespace {

using Key = std::tuple<TypeKind, int, FloatFormat, const Type*, int,
                       std::vector<int64_t>, const Type*>;

// The intern table: every distinct type once, for the life of the process.
const Type* Intern(TypeKind kind, int bits, FloatFormat format,
                   const Type* pointee, int address_space,
                   std::vector<int64_t> shape, const Type* element) {
  static std::mutex mutex;
  static auto* table = new std::map<Key, std::unique_ptr<Type>>;
  std::lock_guard<std::mutex> lock(mutex);
  Key key{kind, bits, format, pointee, address_space, shape, element};
  auto it = table->find(key);
  if (it != table->end()) return it->second.get();
  auto type = std::make_unique<Type>(kind, bits, format, pointee, address_space,
                                     std::move(shape), element);
  const Type* out = type.get();
  table->emplace(std::move(key), std::move(type));
  return out;
}

int FormatBits(FloatFormat f) {
  switch (f) {
    case FloatFormat::kF16:
    case FloatFormat::kBF16:
      return 16;
    case FloatFormat::kF32:
      return 32;
    case FloatFormat::kF64:
      return 64;
    case FloatFormat::kF8E4M3FN:
    case FloatFormat::kF8E5M2:
    case FloatFormat::kF8E4M3FNUZ:
    case FloatFormat::kF8E5M2FNUZ:
    case FloatFormat::kF8E4M3B11FNUZ:
      return 8;
  }
  return 0;
}

}  // namespace

const Type* Type::Int(int bits) {
  return Intern(TypeKind::kInt, bits, FloatFormat::kF32, nullptr, 0, {},
                nullptr);
}

const Type* Type::Float(FloatFormat format) {
  return Intern(TypeKind::kFloat, FormatBits(format), format, nullptr, 0, {},
                nullptr);
}

const Type* Type::Pointer(const Type* pointee, int address_space) {
  return Intern(TypeKind::kPointer, 64, FloatFormat::kF32, pointee,
                address_space, {}, nullptr);
}

const Type* Type::Tensor(std::vector<int64_t> shape, const Type* element) {
  return Intern(TypeKind::kTensor, 0, FloatFormat::kF32, nullptr, 0,
                std::move(shape), element);
}

const Type* Type::TensorDesc(const Type* block_type) {
  return Intern(TypeKind::kTensorDesc, 0, FloatFormat::kF32, nullptr, 0, {},
                block_type);
}

int64_t Type::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

const Type* Type::WithShape(const std::vector<int64_t>& shape) const {
  const Type* scalar = ScalarType();
  return shape.empty() ? scalar : Tensor(shape, scalar);
}

const Type* Type::WithElement(const Type* element) const {
  return IsTensor() ? Tensor(shape_, element) : element;
}

const char* FloatFormatName(FloatFormat format) {
  switch (format) {
    case FloatFormat::kF16:
      return "f16";
    case FloatFormat::kBF16:
      return "bf16";
    case FloatFormat::kF32:
      return "f32";
    case FloatFormat::kF64:
      return "f64";
    case FloatFormat::kF8E4M3FN:
      return "f8E4M3FN";
    case FloatFormat::kF8E5M2:
      return "f8E5M2";
    case FloatFormat::kF8E4M3FNUZ:
      return "f8E4M3FNUZ";
    case FloatFormat::kF8E5M2FNUZ:
      return "f8E5M2FNUZ";
    case FloatFormat::kF8E4M3B11FNUZ:
      return "f8E4M3B11FNUZ";
  }
  return "?";
}

std::string Type::ToString() const {
  switch (kind_) {
    case TypeKind::kInt:
      return "i" + std::to_string(bits_);
    case TypeKind::kFloat:
      return FloatFormatName(format_);
    case TypeKind::kPointer: {
      std::string s = "!tt.ptr<" + pointee_->ToString();
      if (address_space_ != 1) s += ", " + std::to_string(address_space_);
      return s + ">";
    }
    case TypeKind::kTensor: {
      std::string s = "tensor<";
      for (int64_t d : shape_) s += std::to_string(d) + "x";
      return s + element_->ToString() + ">";
    }
    case TypeKind::kTensorDesc:
      return "!tt.tensordesc<" + element_->ToString() + ">";
  }
  return "?";
}

// --- float encodings ---------------------------------------------------------

FloatEncoding FloatEncodingOf(FloatFormat f) {
  switch (f) {
    case FloatFormat::kF16:
      return {5, 10, 15, NonFinite::kIeee};
    case FloatFormat::kBF16:
      return {8, 7, 127, NonFinite::kIeee};
    case FloatFormat::kF32:
      return {8, 23, 127, NonFinite::kIeee};
    case FloatFormat::kF64:
      return {11, 52, 1023, NonFinite::kIeee};
    case FloatFormat::kF8E4M3FN:
      return {4, 3, 7, NonFinite::kFn};
    case FloatFormat::kF8E5M2:
      return {5, 2, 15, NonFinite::kIeee};
    case FloatFormat::kF8E4M3FNUZ:
      return {4, 3, 8, NonFinite::kFnuz};
    case FloatFormat::kF8E5M2FNUZ:
      return {5, 2, 16, NonFinite::kFnuz};
    case FloatFormat::kF8E4M3B11FNUZ:
      return {4, 3, 15, NonFinite::kFn};
  }
  return {8, 23, 127, NonFinite::kIeee};
}

namespace {

// f32 and f64 are handled as the host's float and double.
using MiniFloat = FloatEncoding;

uint64_t MiniNaN(const MiniFloat& m, bool negative, uint64_t payload) {
  const int bits = 1 + m.exponent_bits + m.mantissa_bits;
  const uint64_t sign = negative ? uint64_t{1} << (bits - 1) : 0;
  const uint64_t exp_mask = ((uint64_t{1} << m.exponent_bits) - 1)
                            << m.mantissa_bits;
  const uint64_t mant_mask = (uint64_t{1} << m.mantissa_bits) - 1;
  switch (m.non_finite) {
    case NonFinite::kIeee: {
      uint64_t mant = payload & mant_mask;
      if (mant == 0) mant = uint64_t{1} << (m.mantissa_bits - 1);  // quiet
      return sign | exp_mask | mant;
    }
    case NonFinite::kFn:
      return sign | exp_mask | mant_mask;
    case NonFinite::kFnuz:
      return uint64_t{1} << (bits - 1);
  }
  return 0;
}

uint64_t MiniEncode(double value, const MiniFloat& m) {
  const int bits = 1 + m.exponent_bits + m.mantissa_bits;
  const bool negative = std::signbit(value);
  const uint64_t sign = negative ? uint64_t{1} << (bits - 1) : 0;
  const uint64_t max_exp_field = (uint64_t{1} << m.exponent_bits) - 1;
  if (std::isnan(value)) {
    uint64_t d;
    std::memcpy(&d, &value, sizeof d);
    // Keep the payload's top bits, as a narrowing conversion does.
    return MiniNaN(m, negative,
                   (d & ((uint64_t{1} << 52) - 1)) >> (52 - m.mantissa_bits));
  }
  if (std::isinf(value)) {
    if (m.non_finite == NonFinite::kIeee) {
      return sign | (max_exp_field << m.mantissa_bits);
    }
    return MiniNaN(m, negative, 0);
  }
  const double x = std::fabs(value);
  if (x == 0) return m.non_finite == NonFinite::kFnuz ? 0 : sign;
  int e2 = 0;
  std::frexp(x, &e2);  // x = f * 2^e2, f in [0.5, 1)
  int exp = e2 - 1;    // the power of two of the leading bit
  const int min_exp = 1 - m.bias;
  uint64_t encoded;
  if (exp < min_exp) {
    // Subnormal: a multiple of 2^(min_exp - mantissa_bits). Rounding up to
    // 2^mantissa_bits gives the smallest normal number, as it should.
    encoded = static_cast<uint64_t>(
        std::nearbyint(std::ldexp(x, m.mantissa_bits - min_exp)));
  } else {
    double mant = std::nearbyint(std::ldexp(x, m.mantissa_bits - exp));
    if (mant >= std::ldexp(1.0, m.mantissa_bits + 1)) {
      mant = std::ldexp(mant, -1);  // rounded up to the next power of two
      ++exp;
    }
    const uint64_t exp_field = static_cast<uint64_t>(exp + m.bias);
    encoded =
        (exp_field << m.mantissa_bits) |
        (static_cast<uint64_t>(mant) & ((uint64_t{1} << m.mantissa_bits) - 1));
  }
  // Past the largest finite value?
  const uint64_t magnitude_limit = [&] {
    switch (m.non_finite) {
      case NonFinite::kIeee:  // the infinity pattern
        return max_exp_field << m.mantissa_bits;
      case NonFinite::kFn:  // the NaN pattern
        return (max_exp_field << m.mantissa_bits) |
               ((uint64_t{1} << m.mantissa_bits) - 1);
      case NonFinite::kFnuz:  // one past the all-ones pattern
        return uint64_t{1} << (bits - 1);
    }
    return uint64_t{0};
  }();
  if (encoded >= magnitude_limit) {
    if (m.non_finite == NonFinite::kIeee) return sign | magnitude_limit;
    return MiniNaN(m, negative, 0);
  }
  if (m.non_finite == NonFinite::kFnuz && encoded == 0) return 0;
  return sign | encoded;
}

double MiniDecode(uint64_t bits_value, const MiniFloat& m) {
  const int bits = 1 + m.exponent_bits + m.mantissa_bits;
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  bits_value &= mask;
  const bool negative = (bits_value >> (bits - 1)) & 1;
  const uint64_t exp_field =
      (bits_value >> m.mantissa_bits) & ((uint64_t{1} << m.exponent_bits) - 1);
  const uint64_t mant = bits_value & ((uint64_t{1} << m.mantissa_bits) - 1);
  const uint64_t max_exp_field = (uint64_t{1} << m.exponent_bits) - 1;
  switch (m.non_finite) {
    case NonFinite::kIeee:
      if (exp_field == max_exp_field) {
        if (mant == 0) return negative ? -INFINITY : INFINITY;
        return negative ? -NAN : NAN;
      }
      break;
    case NonFinite::kFn:
      if (exp_field == max_exp_field &&
          mant == (uint64_t{1} << m.mantissa_bits) - 1) {
        return negative ? -NAN : NAN;
      }
      break;
    case NonFinite::kFnuz:
      if (bits_value == uint64_t{1} << (bits - 1)) return NAN;
      break;
  }
  double magnitude;
  if (exp_field == 0) {
    magnitude =
        std::ldexp(static_cast<double>(mant), 1 - m.bias - m.mantissa_bits);
  } else {
    magnitude =
        std::ldexp(static_cast<double>(mant | (uint64_t{1} << m.mantissa_bits)),
                   static_cast<int>(exp_field) - m.bias - m.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

}  // namespace

uint64_t FloatToBits(double value, FloatFormat format) {
  if (format == FloatFormat::kF64) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
  }
  if (format == FloatFormat::kF32) {
    const float f = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return bits;
  }
  return MiniEncode(value, FloatEncodingOf(format));
}

double FloatFromBits(uint64_t bits, FloatFormat format) {
  if (format == FloatFormat::kF64) {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  if (format == FloatFormat::kF32) {
    const uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
  }
  return MiniDecode(bits, FloatEncodingOf(format));
}

double RoundToFloat(double value, FloatFormat format) {
  return FloatFromBits(FloatToBits(value, format), format);
}

}  // namespace mtlemu::triton::ir
