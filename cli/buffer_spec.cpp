#include "cli/buffer_spec.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

#include "cli/npy.h"
#include "isa/numeric.h"

namespace mtlemu::cli {
namespace {

using isa::ScalarKind;
using isa::ScalarType;

Error ArgError(std::string_view option, std::string_view arg,
               const std::string& what) {
  return Error{std::string(option) + " '" + std::string(arg) + "': " + what};
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string TypeList() {
  std::string s;
  for (int i = 0; i < isa::kNumScalarTypes; ++i) {
    if (i > 0) s += ", ";
    s += isa::MetalName(static_cast<ScalarType>(i));
  }
  return s;
}

Result<ScalarType> ParseType(std::string_view text) {
  if (std::optional<ScalarType> t = isa::ScalarTypeFromMetalName(text)) {
    return *t;
  }
  return Error{"unknown type " + Quote(text) + " (expected one of " +
               TypeList() + ")"};
}

enum class IntParse { kOk, kSyntax, kOverflow };

// Decimal or 0x hex, no sign, no spaces.
IntParse ParseU64(std::string_view s, uint64_t* out) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return IntParse::kSyntax;
  uint64_t v = 0;
  bool overflow = false;
  for (char c : s) {
    uint64_t digit;
    if (c >= '0' && c <= '9') {
      digit = static_cast<uint64_t>(c - '0');
    } else if (base == 16 && c >= 'a' && c <= 'f') {
      digit = static_cast<uint64_t>(c - 'a' + 10);
    } else if (base == 16 && c >= 'A' && c <= 'F') {
      digit = static_cast<uint64_t>(c - 'A' + 10);
    } else {
      return IntParse::kSyntax;
    }
    if (v > (std::numeric_limits<uint64_t>::max() - digit) / base) {
      overflow = true;
    }
    v = v * base + digit;
  }
  if (overflow) return IntParse::kOverflow;
  *out = v;
  return IntParse::kOk;
}

// Splits "INDEX=REST" and checks INDEX is a slot 0..kMaxBindIndex. `what`
// names the index in errors ("buffer index").
Result<int> ParseIndex(std::string_view option, std::string_view arg,
                       std::string_view format, std::string_view what,
                       std::string_view* rest) {
  const size_t eq = arg.find('=');
  if (eq == std::string_view::npos) {
    return ArgError(option, arg, "expected " + std::string(format));
  }
  const std::string_view text = arg.substr(0, eq);
  const std::string range =
      "(expected 0.." + std::to_string(kMaxBindIndex) + ")";
  uint64_t index;
  switch (ParseU64(text, &index)) {
    case IntParse::kSyntax:
      return ArgError(option, arg,
                      std::string(what) + " " + Quote(text) +
                          " is not an integer " + range);
    case IntParse::kOverflow:
      index = std::numeric_limits<uint64_t>::max();
      break;
    case IntParse::kOk:
      break;
  }
  if (index > kMaxBindIndex) {
    return ArgError(
        option, arg,
        std::string(what) + " " + Quote(text) + " is out of range " + range);
  }
  *rest = arg.substr(eq + 1);
  return static_cast<int>(index);
}

void StoreLE(uint64_t v, int size, uint8_t* out) {
  for (int i = 0; i < size; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

// The bits of `f` as an element of the float type `type`.
uint64_t FloatBits(ScalarType type, float f) {
  switch (type) {
    case ScalarType::kHalf:
      return isa::FloatToHalfBits(f);
    case ScalarType::kBFloat:
      return isa::FloatToBFloatBits(f);
    default:
      return std::bit_cast<uint32_t>(f);
  }
}

bool IsInfBits(ScalarType type, uint64_t bits) {
  switch (type) {
    case ScalarType::kHalf:
      return (bits & 0x7fff) == 0x7c00;
    case ScalarType::kBFloat:
      return (bits & 0x7fff) == 0x7f80;
    default:
      return (bits & 0x7fffffff) == 0x7f800000;
  }
}

Result<uint64_t> ParseFloatBits(ScalarType type, std::string_view text) {
  const std::string s(text);
  const std::string not_number =
      Quote(text) + " is not a number (expected e.g. 1.5, -2e3, 0x1p-4, inf, " +
      "nan)";
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) {
    return Error{not_number};
  }
  char* end = nullptr;
  errno = 0;
  // half and bfloat from the double, rounded once (as the assembler does).
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return Error{not_number};
  const bool in_range = !(std::isinf(d) && errno == ERANGE);
  uint64_t bits;
  if (type == ScalarType::kHalf) {
    bits = isa::DoubleToHalfBits(d);
  } else if (type == ScalarType::kBFloat) {
    bits = isa::DoubleToBFloatBits(d);
  } else {
    bits = std::bit_cast<uint32_t>(std::strtof(s.c_str(), nullptr));
  }
  if (IsInfBits(type, bits) && !(std::isinf(d) && in_range)) {
    return Error{Quote(text) + " is out of range for " +
                 std::string(isa::MetalName(type))};
  }
  return bits;
}

Result<uint64_t> ParseIntegerBits(ScalarType type, std::string_view text) {
  const int bits = 8 * isa::SizeOf(type);
  const bool is_signed = isa::IsSigned(type);
  const uint64_t max_positive =
      is_signed ? (uint64_t{1} << (bits - 1)) - 1
                : std::numeric_limits<uint64_t>::max() >> (64 - bits);
  const uint64_t max_negative = is_signed ? uint64_t{1} << (bits - 1) : 0;
  std::string_view digits = text;
  const bool negative = !digits.empty() && digits[0] == '-';
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    digits.remove_prefix(1);
  }
  uint64_t magnitude;
  const IntParse parse = ParseU64(digits, &magnitude);
  if (parse == IntParse::kSyntax) {
    return Error{Quote(text) + " is not an integer (expected decimal or " +
                 "0x hex)"};
  }
  if (parse == IntParse::kOverflow ||
      magnitude > (negative ? max_negative : max_positive)) {
    const std::string min =
        is_signed ? "-" + std::to_string(max_negative) : "0";
    return Error{Quote(text) + " is out of range for " +
                 std::string(isa::MetalName(type)) + " (" + min + ".." +
                 std::to_string(max_positive) + ")"};
  }
  return negative ? uint64_t{0} - magnitude : magnitude;
}

// A float holding `i` rounded to `bits` significant bits, to nearest even.
// The result is exact in float for bits <= 24, so converting it on to a
// narrower type is exact too (or overflows to inf): one rounding only.
float RoundToSignificantBits(uint64_t i, int bits) {
  const int width = static_cast<int>(std::bit_width(i));
  if (width <= bits) return static_cast<float>(i);
  const int shift = width - bits;
  uint64_t q = i >> shift;
  const uint64_t rem = i & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  return std::ldexp(static_cast<float>(q), shift);
}

uint64_t IotaBits(ScalarType type, uint64_t i) {
  switch (type) {
    case ScalarType::kBool:
      return i != 0;
    case ScalarType::kFloat:
      return FloatBits(type, RoundToSignificantBits(i, 24));
    case ScalarType::kHalf:
      return FloatBits(type, RoundToSignificantBits(i, 11));
    case ScalarType::kBFloat:
      return FloatBits(type, RoundToSignificantBits(i, 8));
    default:
      return i;  // StoreLE keeps the low bytes: wraps like a C++ conversion.
  }
}

// SplitMix64 (Steele, Lea, Flood 2014), written out so every platform gets
// the same sequence.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

uint64_t RandomBits(ScalarType type, uint64_t x) {
  switch (isa::KindOf(type)) {
    case ScalarKind::kFloat:
      return FloatBits(type, static_cast<float>(x >> 40) * 0x1p-23f - 1.0f);
    case ScalarKind::kSigned:
      return static_cast<uint64_t>(static_cast<int64_t>(x % 201) - 100);
    case ScalarKind::kUnsigned:
      return x % 101;
    case ScalarKind::kBool:
      return x >> 63;
  }
  return 0;
}

// TYPE[COUNT]:GEN; errors say what is wrong without naming the option.
Result<GeneratedBuffer> ParseGenerated(std::string_view spec) {
  const size_t lb = spec.find('[');
  if (lb == std::string_view::npos) {
    return Error{"expected a path ending in .npy or TYPE[COUNT]:GEN, got " +
                 Quote(spec)};
  }
  GeneratedBuffer buffer;
  Result<ScalarType> type = ParseType(spec.substr(0, lb));
  if (!type.ok()) return Error{type.error().message};
  buffer.type = type.value();

  const size_t rb = spec.find(']', lb);
  if (rb == std::string_view::npos) {
    return Error{"missing ']' after the count in TYPE[COUNT]"};
  }
  const std::string_view count_text = spec.substr(lb + 1, rb - lb - 1);
  const uint64_t elem_size = isa::SizeOf(buffer.type);
  switch (ParseU64(count_text, &buffer.count)) {
    case IntParse::kSyntax:
      return Error{"count " + Quote(count_text) + " is not a positive integer"};
    case IntParse::kOverflow:
      buffer.count = std::numeric_limits<uint64_t>::max();
      break;
    case IntParse::kOk:
      break;
  }
  if (buffer.count == 0) {
    return Error{"count must be positive, got 0"};
  }
  if (buffer.count > kMaxGeneratedBufferBytes / elem_size) {
    return Error{"count " + Quote(count_text) + " of " +
                 std::string(isa::MetalName(buffer.type)) +
                 " exceeds the limit of " +
                 std::to_string(kMaxGeneratedBufferBytes) + " bytes"};
  }

  std::string_view gen = spec.substr(rb + 1);
  if (gen.empty() || gen[0] != ':') {
    return Error{"expected ':' and a generator after " +
                 Quote(spec.substr(0, rb + 1))};
  }
  gen.remove_prefix(1);
  auto call_arg =
      [&](std::string_view name) -> std::optional<std::string_view> {
    if (gen.size() >= name.size() + 2 && gen.starts_with(name) &&
        gen[name.size()] == '(' && gen.back() == ')') {
      return gen.substr(name.size() + 1, gen.size() - name.size() - 2);
    }
    return std::nullopt;
  };
  if (gen == "zeros") {
    buffer.generator = GeneratorKind::kZeros;
  } else if (gen == "uninit") {
    buffer.generator = GeneratorKind::kUninit;
  } else if (gen == "iota") {
    buffer.generator = GeneratorKind::kIota;
  } else if (std::optional<std::string_view> v = call_arg("fill")) {
    buffer.generator = GeneratorKind::kFill;
    Result<std::vector<uint8_t>> value = ParseScalarValue(buffer.type, *v);
    if (!value.ok()) {
      return Error{"fill value: " + value.error().message};
    }
    buffer.fill_value = std::move(value).value();
  } else if (std::optional<std::string_view> seed = call_arg("random")) {
    buffer.generator = GeneratorKind::kRandom;
    if (ParseU64(*seed, &buffer.seed) != IntParse::kOk) {
      return Error{"seed " + Quote(*seed) +
                   " is not a 64-bit unsigned integer"};
    }
  } else {
    return Error{"unknown generator " + Quote(gen) +
                 " (expected zeros, uninit, iota, fill(V) or random(SEED))"};
  }
  return buffer;
}

}  // namespace

bool IsNpyPath(std::string_view s) {
  if (s.size() <= 4) return false;
  const std::string_view ext = s.substr(s.size() - 4);
  return ext[0] == '.' &&
         std::tolower(static_cast<unsigned char>(ext[1])) == 'n' &&
         std::tolower(static_cast<unsigned char>(ext[2])) == 'p' &&
         std::tolower(static_cast<unsigned char>(ext[3])) == 'y';
}

Result<std::vector<uint8_t>> ParseScalarValue(ScalarType type,
                                              std::string_view text) {
  uint64_t bits;
  switch (isa::KindOf(type)) {
    case ScalarKind::kBool:
      if (text == "true" || text == "1") {
        bits = 1;
      } else if (text == "false" || text == "0") {
        bits = 0;
      } else {
        return Error{Quote(text) +
                     " is not a bool (expected true, false, 0 or 1)"};
      }
      break;
    case ScalarKind::kFloat: {
      Result<uint64_t> r = ParseFloatBits(type, text);
      if (!r.ok()) return r.error();
      bits = r.value();
      break;
    }
    case ScalarKind::kSigned:
    case ScalarKind::kUnsigned: {
      Result<uint64_t> r = ParseIntegerBits(type, text);
      if (!r.ok()) return r.error();
      bits = r.value();
      break;
    }
    default:
      return Error{"unsupported type"};
  }
  std::vector<uint8_t> out(isa::SizeOf(type));
  StoreLE(bits, isa::SizeOf(type), out.data());
  return out;
}

Result<BufferSpec> ParseBufferSpec(std::string_view arg) {
  constexpr std::string_view kOption = "--buffer";
  BufferSpec spec;
  std::string_view rest;
  Result<int> index =
      ParseIndex(kOption, arg, "INDEX=SPEC", "buffer index", &rest);
  if (!index.ok()) return index.error();
  spec.index = index.value();
  Result<BufferSource> source = ParseBufferSource(rest);
  if (!source.ok()) return ArgError(kOption, arg, source.error().message);
  spec.source = std::move(source).value();
  return spec;
}

Result<BufferSource> ParseBufferSource(std::string_view spec) {
  if (IsNpyPath(spec)) return BufferSource{NpyBuffer{std::string(spec)}};
  Result<GeneratedBuffer> generated = ParseGenerated(spec);
  if (!generated.ok()) return generated.error();
  return BufferSource{std::move(generated).value()};
}

Result<BufferData> LoadBufferData(const BufferSource& source) {
  BufferData data;
  if (const auto* npy = std::get_if<NpyBuffer>(&source)) {
    Result<NpyArray> read = ReadNpy(npy->path);
    if (!read.ok()) return read.error();
    NpyArray& array = read.value();
    data.type = array.type;
    data.shape = std::move(array.shape);
    data.bytes = std::move(array.data);
    return data;
  }
  const auto& generated = std::get<GeneratedBuffer>(source);
  data.type = generated.type;
  data.shape = {generated.count};
  data.bytes = MaterializeBuffer(generated);
  data.uninitialized = generated.generator == GeneratorKind::kUninit;
  return data;
}

std::vector<uint8_t> MaterializeBuffer(const GeneratedBuffer& buffer) {
  const int size = isa::SizeOf(buffer.type);
  std::vector<uint8_t> out(buffer.count * size);
  switch (buffer.generator) {
    case GeneratorKind::kZeros:
    case GeneratorKind::kUninit:
      break;
    case GeneratorKind::kFill:
      if (buffer.fill_value.size() == static_cast<size_t>(size)) {
        for (uint64_t i = 0; i < buffer.count; ++i) {
          std::memcpy(out.data() + i * size, buffer.fill_value.data(), size);
        }
      }
      break;
    case GeneratorKind::kIota:
      for (uint64_t i = 0; i < buffer.count; ++i) {
        StoreLE(IotaBits(buffer.type, i), size, out.data() + i * size);
      }
      break;
    case GeneratorKind::kRandom: {
      SplitMix64 rng(buffer.seed);
      for (uint64_t i = 0; i < buffer.count; ++i) {
        StoreLE(RandomBits(buffer.type, rng.Next()), size,
                out.data() + i * size);
      }
      break;
    }
  }
  return out;
}

Result<BytesSpec> ParseBytesSpec(std::string_view arg) {
  constexpr std::string_view kOption = "--bytes";
  constexpr std::string_view kFormat = "INDEX=TYPE:V[,V...]";
  BytesSpec spec;
  std::string_view rest;
  Result<int> index = ParseIndex(kOption, arg, kFormat, "buffer index", &rest);
  if (!index.ok()) return index.error();
  spec.index = index.value();

  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos) {
    return ArgError(kOption, arg, "expected " + std::string(kFormat));
  }
  Result<ScalarType> type = ParseType(rest.substr(0, colon));
  if (!type.ok()) return ArgError(kOption, arg, type.error().message);
  spec.type = type.value();

  std::string_view values = rest.substr(colon + 1);
  const size_t size = isa::SizeOf(spec.type);
  const size_t count =
      static_cast<size_t>(std::count(values.begin(), values.end(), ',')) + 1;
  if (count * size > kMaxSetBytesLength) {
    return ArgError(kOption, arg,
                    std::to_string(count) + " " +
                        std::string(isa::MetalName(spec.type)) + " values (" +
                        std::to_string(count * size) +
                        " bytes) exceed setBytes' limit of " +
                        std::to_string(kMaxSetBytesLength) + " bytes");
  }
  for (size_t n = 1; n <= count; ++n) {
    const size_t comma = values.find(',');
    const std::string_view value = values.substr(0, comma);
    values.remove_prefix(comma == std::string_view::npos ? values.size()
                                                         : comma + 1);
    if (value.empty()) {
      return ArgError(kOption, arg,
                      "value " + std::to_string(n) + " is empty (expected " +
                          std::string(kFormat) + ")");
    }
    Result<std::vector<uint8_t>> bytes = ParseScalarValue(spec.type, value);
    if (!bytes.ok()) {
      return ArgError(
          kOption, arg,
          "value " + std::to_string(n) + ": " + bytes.error().message);
    }
    spec.bytes.insert(spec.bytes.end(), bytes.value().begin(),
                      bytes.value().end());
  }
  return spec;
}

Result<ThreadgroupMemorySpec> ParseThreadgroupMemorySpec(std::string_view arg) {
  constexpr std::string_view kOption = "--threadgroup-memory";
  ThreadgroupMemorySpec spec;
  std::string_view rest;
  Result<int> index = ParseIndex(kOption, arg, "INDEX=BYTES",
                                 "threadgroup memory index", &rest);
  if (!index.ok()) return index.error();
  spec.index = index.value();
  switch (ParseU64(rest, &spec.length)) {
    case IntParse::kOk:
      return spec;
    case IntParse::kSyntax:
      return ArgError(
          kOption, arg,
          "length " + Quote(rest) + " is not a non-negative integer");
    case IntParse::kOverflow:
      break;
  }
  return ArgError(kOption, arg,
                  "length " + Quote(rest) + " does not fit in 64 bits");
}

Result<Size3> ParseSize3(std::string_view option, std::string_view arg) {
  constexpr const char* kNames[] = {"x", "y", "z"};
  const size_t commas =
      static_cast<size_t>(std::count(arg.begin(), arg.end(), ','));
  if (commas > 2) {
    return ArgError(option, arg,
                    "expected X[,Y[,Z]] (at most 3 components), got " +
                        std::to_string(commas + 1));
  }
  uint32_t out[3] = {1, 1, 1};
  std::string_view rest = arg;
  for (size_t i = 0; i <= commas; ++i) {
    const size_t comma = rest.find(',');
    const std::string_view text = rest.substr(0, comma);
    rest.remove_prefix(comma == std::string_view::npos ? rest.size()
                                                       : comma + 1);
    const std::string which = "component " + std::to_string(i + 1) + " (" +
                              kNames[i] + ") " + Quote(text);
    uint64_t v = 0;
    const IntParse parse = ParseU64(text, &v);
    if (parse == IntParse::kSyntax || (parse == IntParse::kOk && v == 0)) {
      return ArgError(option, arg, which + " is not a positive integer");
    }
    if (parse == IntParse::kOverflow ||
        v > std::numeric_limits<uint32_t>::max()) {
      return ArgError(option, arg, which + " does not fit in 32 bits");
    }
    out[i] = static_cast<uint32_t>(v);
  }
  return Size3{out[0], out[1], out[2]};
}

Result<std::pair<std::string, std::string>> ParseFunctionConstant(
    std::string_view arg) {
  const size_t eq = arg.find('=');
  const size_t colon = arg.find(':', eq == std::string_view::npos ? 0 : eq);
  if (eq == std::string_view::npos || eq == 0 ||
      colon == std::string_view::npos || colon + 1 >= arg.size()) {
    return ArgError("--constant", arg,
                    "expected NAME=TYPE:VALUE or INDEX=TYPE:VALUE");
  }
  const std::string_view type_name = arg.substr(eq + 1, colon - eq - 1);
  const std::optional<isa::ScalarType> type =
      isa::ScalarTypeFromMetalName(type_name);
  if (!type) {
    return ArgError("--constant", arg,
                    "unknown type " + Quote(type_name) + " (expected one of " +
                        TypeList() + ")");
  }
  const std::string_view value = arg.substr(colon + 1);
  Result<std::vector<uint8_t>> checked = ParseScalarValue(*type, value);
  if (!checked.ok())
    return ArgError("--constant", arg, checked.error().message);
  return std::pair<std::string, std::string>{std::string(arg.substr(0, eq)),
                                             std::string(value)};
}

}  // namespace mtlemu::cli
