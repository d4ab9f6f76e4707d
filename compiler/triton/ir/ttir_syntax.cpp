#include "compiler/triton/ir/ttir_syntax.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace mtlemu::triton::ir {
namespace {

// The enums, as Triton's TritonAttrDefs.td and MLIR's arith dialect
// number them.
constexpr EnumCase kCacheModifier[] = {{"none", 1}, {"ca", 2}, {"cg", 3},
                                       {"wb", 4},   {"cs", 5}, {"wt", 6},
                                       {"cv", 7}};
constexpr EnumCase kEvictionPolicy[] = {
    {"evict_normal", 1}, {"evict_first", 2}, {"evict_last", 3}};
constexpr EnumCase kPaddingOption[] = {{"zero", 1}, {"nan", 2}};
constexpr EnumCase kMemSemantic[] = {
    {"relaxed", 1}, {"acquire", 2}, {"release", 3}, {"acq_rel", 4}};
constexpr EnumCase kMemSyncScope[] = {{"gpu", 1}, {"cta", 2}, {"sys", 3}};
constexpr EnumCase kRmwOp[] = {
    {"and", 1}, {"or", 2},  {"xor", 3},  {"add", 4},  {"fadd", 5},
    {"max", 6}, {"min", 7}, {"umax", 8}, {"umin", 9}, {"exch", 10}};
constexpr EnumCase kDescriptorReduceKind[] = {
    {"add", 1}, {"min", 2}, {"max", 3}, {"inc", 4},
    {"dec", 5}, {"and", 6}, {"or", 7},  {"xor", 8}};
constexpr EnumCase kRoundingMode[] = {{"rtz", 0}, {"rtne", 1}};
constexpr EnumCase kPropagateNan[] = {{"none", 0}, {"all", 0xFFFF}};
constexpr EnumCase kInputPrecision[] = {
    {"tf32", 0}, {"tf32x3", 1}, {"ieee", 2}, {"bf16x3", 3}, {"bf16x6", 4}};
constexpr EnumCase kScaleDotElemType[] = {{"e4m3", 0}, {"e5m2", 1}, {"e2m3", 2},
                                          {"e3m2", 3}, {"e2m1", 4}, {"bf16", 5},
                                          {"fp16", 6}};
constexpr EnumCase kCmpIPredicate[] = {
    {"eq", 0},  {"ne", 1},  {"slt", 2}, {"sle", 3}, {"sgt", 4},
    {"sge", 5}, {"ult", 6}, {"ule", 7}, {"ugt", 8}, {"uge", 9}};
constexpr EnumCase kCmpFPredicate[] = {
    {"false", 0}, {"oeq", 1},  {"ogt", 2},  {"oge", 3},
    {"olt", 4},   {"ole", 5},  {"one", 6},  {"ord", 7},
    {"ueq", 8},   {"ugt", 9},  {"uge", 10}, {"ult", 11},
    {"ule", 12},  {"une", 13}, {"uno", 14}, {"true", 15}};

constexpr EnumAttrInfo kCacheInfo{"CacheModifier", kCacheModifier, 32};
constexpr EnumAttrInfo kEvictInfo{"EvictionPolicy", kEvictionPolicy, 32};
constexpr EnumAttrInfo kPaddingInfo{"PaddingOption", kPaddingOption, 32};
constexpr EnumAttrInfo kSemInfo{"MemSemantic", kMemSemantic, 32};
constexpr EnumAttrInfo kScopeInfo{"MemSyncScope", kMemSyncScope, 32};
constexpr EnumAttrInfo kRmwInfo{"RMWOp", kRmwOp, 32};
constexpr EnumAttrInfo kReduceKindInfo{"DescriptorReduceKind",
                                       kDescriptorReduceKind, 32};
constexpr EnumAttrInfo kRoundingInfo{"RoundingMode", kRoundingMode, 32};
constexpr EnumAttrInfo kPropagateNanInfo{"PropagateNan", kPropagateNan, 32};
constexpr EnumAttrInfo kPrecisionInfo{"InputPrecision", kInputPrecision, 32};
constexpr EnumAttrInfo kElemTypeInfo{"ScaleDotElemType", kScaleDotElemType, 32};
constexpr EnumAttrInfo kCmpIInfo{"CmpIPredicate", kCmpIPredicate, 64};
constexpr EnumAttrInfo kCmpFInfo{"CmpFPredicate", kCmpFPredicate, 64};

// Which attribute of which op holds which enum.
struct EnumAttrRow {
  OpCode code;
  const char* key;
  const EnumAttrInfo* info;
};
constexpr EnumAttrRow kEnumAttrs[] = {
    {OpCode::kLoad, "cache", &kCacheInfo},
    {OpCode::kLoad, "evict", &kEvictInfo},
    {OpCode::kLoad, "padding", &kPaddingInfo},
    {OpCode::kStore, "cache", &kCacheInfo},
    {OpCode::kStore, "evict", &kEvictInfo},
    {OpCode::kDescriptorLoad, "cache", &kCacheInfo},
    {OpCode::kDescriptorLoad, "evict", &kEvictInfo},
    {OpCode::kMakeTensorDesc, "padding", &kPaddingInfo},
    {OpCode::kAtomicRMW, "atomic_rmw_op", &kRmwInfo},
    {OpCode::kAtomicRMW, "sem", &kSemInfo},
    {OpCode::kAtomicRMW, "scope", &kScopeInfo},
    {OpCode::kAtomicCAS, "sem", &kSemInfo},
    {OpCode::kAtomicCAS, "scope", &kScopeInfo},
    {OpCode::kDescriptorReduce, "kind", &kReduceKindInfo},
    {OpCode::kFpToFp, "rounding", &kRoundingInfo},
    {OpCode::kClampF, "propagateNan", &kPropagateNanInfo},
    {OpCode::kDot, "inputPrecision", &kPrecisionInfo},
    {OpCode::kDotScaled, "a_elem_type", &kElemTypeInfo},
    {OpCode::kDotScaled, "b_elem_type", &kElemTypeInfo},
    {OpCode::kCmpI, "predicate", &kCmpIInfo},
    {OpCode::kCmpF, "predicate", &kCmpFInfo},
};

// The bits of a format's significand, the implicit one included (APFloat's
// "precision").
int SignificandBits(FloatFormat f) {
  switch (f) {
    case FloatFormat::kF16:
      return 11;
    case FloatFormat::kBF16:
      return 8;
    case FloatFormat::kF32:
      return 24;
    case FloatFormat::kF64:
      return 53;
    case FloatFormat::kF8E4M3FN:
    case FloatFormat::kF8E4M3FNUZ:
    case FloatFormat::kF8E4M3B11FNUZ:
      return 4;
    case FloatFormat::kF8E5M2:
    case FloatFormat::kF8E5M2FNUZ:
      return 3;
  }
  return 24;
}

// A finite, nonzero magnitude as decimal digits (most significant first,
// no trailing zeros) times 10^exp10: exact, as LLVM's APFloat computes
// them. glibc's printf prints the exact expansion when asked for enough
// digits (a double needs at most 767).
struct Decimal {
  std::string digits;
  int exp10 = 0;
};

Decimal ExactDecimal(double magnitude) {
  char buf[900];
  std::snprintf(buf, sizeof buf, "%.800e", magnitude);
  Decimal d;
  const char* p = buf;
  d.digits.push_back(*p++);
  if (*p == '.') ++p;
  while (*p >= '0' && *p <= '9') d.digits.push_back(*p++);
  int exp = 0;
  if (*p == 'e') {
    ++p;
    std::from_chars(*p == '+' ? p + 1 : p, buf + sizeof buf, exp);
  }
  d.exp10 = exp - static_cast<int>(d.digits.size() - 1);
  while (d.digits.size() > 1 && d.digits.back() == '0') {
    d.digits.pop_back();
    ++d.exp10;
  }
  return d;
}

// Rounds to `precision` significant digits, half up (APFloat's rule), and
// drops trailing zeros.
void RoundDigits(Decimal& d, size_t precision) {
  if (d.digits.size() <= precision) return;
  const bool up = d.digits[precision] >= '5';
  d.exp10 += static_cast<int>(d.digits.size() - precision);
  d.digits.resize(precision);
  if (up) {
    size_t i = precision;
    while (i > 0 && d.digits[i - 1] == '9') {
      d.digits[i - 1] = '0';
      --i;
    }
    if (i == 0) {
      d.digits = "1";
      d.exp10 += static_cast<int>(precision);
    } else {
      ++d.digits[i - 1];
    }
  }
  while (d.digits.size() > 1 && d.digits.back() == '0') {
    d.digits.pop_back();
    ++d.exp10;
  }
}

std::string Scientific(const Decimal& d, size_t precision, bool truncate_zero) {
  const size_t n = d.digits.size();
  const int exp = d.exp10 + static_cast<int>(n) - 1;
  std::string s(1, d.digits[0]);
  s += '.';
  if (n == 1 && truncate_zero) {
    s += '0';
  } else {
    s.append(d.digits, 1, std::string::npos);
  }
  if (!truncate_zero && precision > n - 1) s.append(precision - n + 1, '0');
  s += truncate_zero ? 'E' : 'e';
  s += exp >= 0 ? '+' : '-';
  std::string e = std::to_string(exp >= 0 ? exp : -exp);
  if (!truncate_zero && e.size() < 2) e.insert(0, "0");
  return s + e;
}

// APFloat::toString(Str, /*FormatPrecision=*/0, /*FormatMaxPadding=*/3).
std::string ShortestForm(Decimal d, FloatFormat format) {
  const size_t precision = 2 + SignificandBits(format) * 59 / 196;
  constexpr int kMaxPadding = 3;
  RoundDigits(d, precision);
  const int n = static_cast<int>(d.digits.size());
  bool scientific;
  if (d.exp10 >= 0) {
    scientific =
        d.exp10 > kMaxPadding || n + d.exp10 > static_cast<int>(precision);
  } else {
    const int msd = d.exp10 + n - 1;
    scientific = msd >= 0 ? false : -msd > kMaxPadding;
  }
  if (scientific) return Scientific(d, precision, true);
  if (d.exp10 >= 0) return d.digits + std::string(d.exp10, '0');
  const int whole = d.exp10 + n;
  if (whole > 0) {
    return d.digits.substr(0, whole) + "." + d.digits.substr(whole);
  }
  return "0." + std::string(-whole, '0') + d.digits;
}

// The value a decimal literal denotes in `format`.
std::optional<double> ParseIn(std::string_view s, FloatFormat format) {
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (format == FloatFormat::kF32) {
    float f = 0;
    auto r = std::from_chars(begin, end, f);
    if (r.ec != std::errc() || r.ptr != end) return std::nullopt;
    return f;
  }
  double d = 0;
  auto r = std::from_chars(begin, end, d);
  if (r.ec != std::errc() || r.ptr != end) return std::nullopt;
  return RoundToFloat(d, format);
}

std::string HexBits(uint64_t bits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llX",
                static_cast<unsigned long long>(bits));
  return buf;
}

}  // namespace

const EnumAttrInfo* EnumAttrOf(OpCode code, std::string_view key) {
  for (const EnumAttrRow& row : kEnumAttrs) {
    if (row.code == code && key == row.key) return row.info;
  }
  return nullptr;
}

std::optional<int64_t> EnumValue(const EnumAttrInfo& info,
                                 std::string_view name) {
  for (const EnumCase& c : info.cases) {
    if (name == c.name) return c.value;
  }
  return std::nullopt;
}

const char* EnumName(const EnumAttrInfo& info, int64_t value) {
  for (const EnumCase& c : info.cases) {
    if (c.value == value) return c.name;
  }
  return nullptr;
}

std::string EnumNames(const EnumAttrInfo& info) {
  std::string s;
  for (const EnumCase& c : info.cases) {
    if (!s.empty()) s += ", ";
    s += c.name;
  }
  return s;
}

std::string FormatFloat(double value, FloatFormat format) {
  const uint64_t bits = FloatToBits(value, format);
  const double v = FloatFromBits(bits, format);
  if (std::isnan(v) || std::isinf(v)) return HexBits(bits);
  const std::string sign = std::signbit(v) ? "-" : "";
  if (v == 0) return sign + "0.000000e+00";
  const Decimal exact = ExactDecimal(std::fabs(v));
  auto round_trips = [&](const std::string& s) {
    std::optional<double> back = ParseIn(s, format);
    return back && FloatToBits(*back, format) == bits;
  };
  // APFloat::toString(Str, /*FormatPrecision=*/6, /*FormatMaxPadding=*/0,
  // /*TruncateZero=*/false), as MLIR's printFloatValue tries first.
  Decimal six = exact;
  RoundDigits(six, 6);
  const std::string first = sign + Scientific(six, 6, false);
  if (round_trips(first)) return first;
  // Else APFloat's default form, which has enough digits to round-trip,
  // when it reads back as a float (it has a '.').
  const std::string shortest = sign + ShortestForm(exact, format);
  if (shortest.find('.') != std::string::npos) return shortest;
  return HexBits(bits);
}

int64_t SignExtend(int64_t value, int bits) {
  if (bits >= 64 || bits <= 0) return value;
  if (bits == 1) return value & 1;
  const int shift = 64 - bits;
  return static_cast<int64_t>(static_cast<uint64_t>(value) << shift) >> shift;
}

std::string QuoteString(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "\"";
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      out += ch;
    } else {
      out += '\\';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out + "\"";
}

}  // namespace mtlemu::triton::ir
