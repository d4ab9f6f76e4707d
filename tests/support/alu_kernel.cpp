#include "tests/support/alu_kernel.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "tests/support/kernel_harness.h"

namespace mtlemu::testing {
namespace {

using isa::OpShape;

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// The layout of a float format: mantissa bits, exponent bits, bias.
struct FloatLayout {
  int mantissa;
  int exponent;
  int bias;
};

FloatLayout LayoutOf(ScalarType t) {
  switch (t) {
    case ScalarType::kHalf:
      return {10, 5, 15};
    case ScalarType::kBFloat:
      return {7, 8, 127};
    default:
      return {23, 8, 127};
  }
}

}  // namespace

Result<AluOp> ParseAluOp(std::string_view text) {
  const std::vector<std::string_view> parts = Split(text, '.');
  AluOp op;
  op.text = std::string(text);
  const std::optional<Opcode> code = isa::OpcodeFromMnemonic(parts[0]);
  if (!code) return Error{"unknown mnemonic in '" + op.text + "'"};
  op.op = *code;
  const isa::OpShape shape = isa::GetOpInfo(op.op).shape;
  const size_t want_types = shape == OpShape::kConvert ? 2 : 1;
  if (parts.size() != 1 + want_types) {
    return Error{"'" + op.text + "' needs " + std::to_string(want_types) +
                 " type suffix(es)"};
  }
  std::vector<ScalarType> types;
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::optional<ScalarType> t = isa::ScalarTypeFromIsaSuffix(parts[i]);
    if (!t) return Error{"unknown type in '" + op.text + "'"};
    types.push_back(*t);
  }
  const ScalarType t = types[0];
  op.type = t;
  op.result = t;
  switch (shape) {
    case OpShape::kUnary:
      op.sources = {t};
      break;
    case OpShape::kBinary:
      op.sources = {t, t};
      break;
    case OpShape::kBinaryInt:
      op.sources = {t, ScalarType::kInt};
      break;
    case OpShape::kTernary:
      op.sources = {t, t, t};
      break;
    case OpShape::kCompare:
      op.sources = {t, t};
      op.result = ScalarType::kUInt;
      break;
    case OpShape::kTest:
      op.sources = {t};
      op.result = ScalarType::kUInt;
      break;
    case OpShape::kSelect:
      op.sources = {ScalarType::kUInt, t, t};
      break;
    case OpShape::kConvert:
      op.type2 = types[1];
      op.sources = {types[1]};
      break;
    default:
      return Error{"'" + op.text + "' is not an ALU instruction"};
  }
  return op;
}

bool IsAluOpcode(Opcode op) {
  const isa::OpInfo& info = isa::GetOpInfo(op);
  if (info.cluster != 0) return false;
  switch (info.shape) {
    case OpShape::kUnary:
    case OpShape::kBinary:
    case OpShape::kBinaryInt:
    case OpShape::kTernary:
    case OpShape::kCompare:
    case OpShape::kTest:
    case OpShape::kSelect:
      return true;
    default:
      return false;
  }
}

bool IsFloatMathOpcode(Opcode op) {
  const isa::OpInfo& info = isa::GetOpInfo(op);
  return IsAluOpcode(op) && info.types == isa::type_sets::kFloats &&
         (info.shape == OpShape::kUnary || info.shape == OpShape::kBinary ||
          info.shape == OpShape::kBinaryInt);
}

std::vector<std::string> InstructionsAtEveryType(Opcode op) {
  const isa::OpInfo& info = isa::GetOpInfo(op);
  std::vector<std::string> texts;
  for (int i = 0; i < isa::kNumScalarTypes; ++i) {
    const auto t = static_cast<ScalarType>(i);
    if (info.types & isa::Bit(t)) {
      texts.push_back(std::string(info.mnemonic) + "." +
                      std::string(isa::IsaSuffix(t)));
    }
  }
  return texts;
}

std::string AluKernelText(const AluOp& op, bool skip_odd_threads) {
  std::ostringstream s;
  s << ".kernel alu_op\n";
  for (size_t k = 0; k < op.sources.size(); ++k) {
    s << ".buffer " << k << " u" << 2 * k << " device void src" << k << "\n";
  }
  s << ".buffer 3 u6 device void dst\n";
  s << "    mov.u32 r0, %thread_position_in_grid.x\n";
  std::string operands;
  for (size_t k = 0; k < op.sources.size(); ++k) {
    const ScalarType t = op.sources[k];
    const int reg = 2 + 2 * static_cast<int>(k);
    s << "    ld.device." << isa::IsaSuffix(t) << " r" << reg << ", [u" << 2 * k
      << " + r0*" << isa::SizeOf(t) << "]\n";
    operands += ", r" + std::to_string(reg);
  }
  s << "    mov.u32 r8, " << Hex(kAluSentinel & 0xffffffffu) << "\n";
  s << "    mov.u32 r9, " << Hex(kAluSentinel >> 32) << "\n";
  if (skip_odd_threads) {
    s << "    and.u32 r1, r0, 1\n";
    s << "    bnz r1, done, done\n";
  }
  s << "    " << op.text << " r8" << operands << "\n";
  s << "done:\n";
  if (isa::IsWide(op.result)) {
    s << "    st.device.u64 [u6 + r0*8], r8\n";
  } else {
    s << "    st.device.u32 [u6 + r0*4], r8\n";
  }
  s << "    exit\n.end\n";
  return s.str();
}

Result<std::vector<uint64_t>> RunAlu(std::string_view op_text,
                                     const std::vector<Operands>& threads,
                                     const AluRunOptions& options) {
  Result<AluOp> parsed = ParseAluOp(op_text);
  if (!parsed.ok()) return parsed.error();
  const AluOp& op = parsed.value();
  const std::string text = AluKernelText(op, options.skip_odd_threads);
  KernelHarness h(text);
  if (!h.status().ok()) {
    return Error{h.status().error().message + "\nin kernel:\n" + text};
  }
  const size_t n = threads.size();
  if (n == 0) return std::vector<uint64_t>{};
  for (size_t k = 0; k < op.sources.size(); ++k) {
    const int size = isa::SizeOf(op.sources[k]);
    std::vector<uint8_t> bytes(n * size);
    for (size_t i = 0; i < n; ++i) {
      if (threads[i].size() != op.sources.size()) {
        return Error{op.text + " takes " + std::to_string(op.sources.size()) +
                     " sources; thread " + std::to_string(i) + " has " +
                     std::to_string(threads[i].size())};
      }
      const uint64_t v = threads[i][k];
      std::memcpy(&bytes[i * size], &v, size);  // little-endian low bytes
    }
    h.SetBufferBytes(static_cast<int>(k), bytes.data(), bytes.size());
  }
  // A few elements past the grid must stay untouched.
  const size_t extra = 8;
  const bool wide = isa::IsWide(op.result);
  if (wide) {
    h.SetBuffer(3, std::vector<uint64_t>(n + extra, ~kAluSentinel));
  } else {
    h.SetBuffer(3, std::vector<uint32_t>(n + extra,
                                         static_cast<uint32_t>(~kAluSentinel)));
  }
  const uint32_t width = options.threadgroup_width;
  Status s = h.DispatchThreads({static_cast<uint32_t>(n), 1, 1}, {width, 1, 1});
  if (!s.ok()) return Error{s.error().message};
  if (h.error() != nullptr) return Error{h.error()->message};
  std::vector<uint64_t> out;
  if (wide) {
    out = h.Read<uint64_t>(3);
  } else {
    const std::vector<uint32_t> words = h.Read<uint32_t>(3);
    out.assign(words.begin(), words.end());
  }
  const uint64_t untouched =
      wide ? ~kAluSentinel : (~kAluSentinel & 0xffffffffu);
  for (size_t i = n; i < n + extra; ++i) {
    if (out[i] != untouched) {
      return Error{"element " + std::to_string(i) + " past the grid of " +
                   std::to_string(n) + " threads was written"};
    }
  }
  out.resize(n);
  return out;
}

// --- checking ----------------------------------------------------------------

std::string Hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

namespace {

std::string Describe(const Operands& x) {
  std::string s;
  for (uint64_t v : x) s += (s.empty() ? "" : ", ") + Hex(v);
  return s;
}

}  // namespace

uint64_t ResultMask(ScalarType t) {
  if (t == ScalarType::kHalf || t == ScalarType::kBFloat) return 0xffff;
  return isa::IsWide(t) ? ~0ull : 0xffffffffull;
}

bool Matches(ScalarType result, uint64_t got, const AluWant& want) {
  const uint64_t mask = ResultMask(result);
  got &= mask;
  if (want.any_nan) return isa::IsFloat(result) && IsNaNBits(result, got);
  return got == (want.bits & mask) ||
         (want.has_alt && got == (want.alt & mask));
}

void CheckAlu(const AluOp& op, const std::vector<Operands>& inputs,
              const std::function<AluWant(const Operands&)>& reference,
              bool skip_odd_threads) {
  SCOPED_TRACE(op.text + (skip_odd_threads ? " (odd threads inactive)" : ""));
  AluRunOptions options;
  options.skip_odd_threads = skip_odd_threads;
  Result<std::vector<uint64_t>> got = RunAlu(op.text, inputs, options);
  ASSERT_TRUE(got.ok()) << got.error().message;
  const uint64_t mask = ResultMask(op.result);
  const uint64_t sentinel =
      kAluSentinel & (isa::IsWide(op.result) ? ~0ull : 0xffffffffull);
  int failures = 0;
  for (size_t i = 0; i < inputs.size() && failures < 10; ++i) {
    const uint64_t out = got.value()[i];
    if (skip_odd_threads && i % 2 == 1) {
      if (out != sentinel) {
        ++failures;
        ADD_FAILURE() << "inactive thread " << i
                      << " was written: " << Hex(out);
      }
      continue;
    }
    const AluWant want = reference(inputs[i]);
    if (!Matches(op.result, out, want)) {
      ++failures;
      ADD_FAILURE() << op.text << " " << Describe(inputs[i]) << " = "
                    << Hex(out & mask) << ", want "
                    << (want.any_nan ? std::string("a NaN") : Hex(want.bits))
                    << (want.has_alt ? " or " + Hex(want.alt) : "");
    }
  }
}

void ExpectAluRows(const std::string& op, const std::vector<AluRow>& rows) {
  SCOPED_TRACE(op);
  Result<AluOp> parsed = ParseAluOp(op);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  std::vector<Operands> inputs;
  for (const AluRow& r : rows) inputs.push_back(r.in);
  Result<std::vector<uint64_t>> got = RunAlu(op, inputs);
  ASSERT_TRUE(got.ok()) << got.error().message;
  const uint64_t mask = ResultMask(parsed.value().result);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(Hex(got.value()[i] & mask), Hex(rows[i].want & mask))
        << op << " " << Describe(rows[i].in);
  }
}

std::vector<Operands> CombineInputs(
    const AluOp& op, const std::vector<std::vector<uint64_t>>& per_source,
    int random_count) {
  std::vector<Operands> inputs = {{}};
  for (const std::vector<uint64_t>& values : per_source) {
    std::vector<Operands> next;
    for (const Operands& prefix : inputs) {
      for (uint64_t v : values) {
        next.push_back(prefix);
        next.back().push_back(v);
      }
    }
    inputs = std::move(next);
  }
  std::vector<std::vector<uint64_t>> random;
  for (size_t k = 0; k < op.sources.size(); ++k) {
    random.push_back(RandomValues(op.sources[k], random_count,
                                  static_cast<uint32_t>(k + 1)));
  }
  for (int i = 0; i < random_count; ++i) {
    Operands x;
    for (const std::vector<uint64_t>& r : random) x.push_back(r[i]);
    inputs.push_back(x);
  }
  return inputs;
}

// --- integer references ------------------------------------------------------

int BitWidth(ScalarType t) { return 8 * isa::SizeOf(t); }

uint64_t TypeMask(ScalarType t) {
  return BitWidth(t) == 64 ? ~0ull : (1ull << BitWidth(t)) - 1;
}

Int128 IntMin(ScalarType t) {
  if (!isa::IsSigned(t)) return 0;
  return -(static_cast<Int128>(1) << (BitWidth(t) - 1));
}

Int128 IntMax(ScalarType t) {
  if (t == ScalarType::kBool) return 1;
  if (isa::IsSigned(t))
    return (static_cast<Int128>(1) << (BitWidth(t) - 1)) - 1;
  return (static_cast<Int128>(1) << BitWidth(t)) - 1;
}

Int128 IntValue(ScalarType t, uint64_t bits) {
  bits &= TypeMask(t);
  if (t == ScalarType::kBool) return bits != 0;
  const int w = BitWidth(t);
  if (isa::IsSigned(t) && ((bits >> (w - 1)) & 1)) {
    return static_cast<Int128>(bits) - (static_cast<Int128>(1) << w);
  }
  return static_cast<Int128>(bits);
}

uint64_t IntBits(ScalarType t, Int128 v) {
  return static_cast<uint64_t>(v) & TypeMask(t);
}

Int128 Saturate(ScalarType t, Int128 v) {
  if (v < IntMin(t)) return IntMin(t);
  if (v > IntMax(t)) return IntMax(t);
  return v;
}

uint64_t IntRegister(ScalarType t, Int128 v) {
  const Int128 wrapped = IntValue(t, IntBits(t, v));
  if (BitWidth(t) == 64) return static_cast<uint64_t>(wrapped);
  return static_cast<uint64_t>(wrapped) & 0xffffffffu;
}

// --- float references --------------------------------------------------------

double FloatValue(ScalarType t, uint64_t bits) {
  const FloatLayout f = LayoutOf(t);
  const int width = 1 + f.exponent + f.mantissa;
  const bool negative = (bits >> (width - 1)) & 1;
  const uint64_t exp_field = (bits >> f.mantissa) & ((1u << f.exponent) - 1);
  const uint64_t mantissa = bits & ((1ull << f.mantissa) - 1);
  double v;
  if (exp_field == (1u << f.exponent) - 1) {
    v = mantissa != 0 ? std::nan("") : INFINITY;
  } else if (exp_field == 0) {
    v = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa);
  } else {
    v = std::ldexp(static_cast<double>(mantissa | (1ull << f.mantissa)),
                   static_cast<int>(exp_field) - f.bias - f.mantissa);
  }
  return negative ? -v : v;
}

uint64_t SignBit(ScalarType t) { return 1ull << (BitWidth(t) - 1); }

uint64_t Infinity(ScalarType t) {
  const FloatLayout f = LayoutOf(t);
  return ((1ull << f.exponent) - 1) << f.mantissa;
}

uint64_t CanonicalNaN(ScalarType t) {
  return Infinity(t) | (1ull << (LayoutOf(t).mantissa - 1));
}

uint64_t MaxFinite(ScalarType t) { return Infinity(t) - 1; }

uint64_t MinNormal(ScalarType t) { return 1ull << LayoutOf(t).mantissa; }

uint64_t MaxBelowOne(ScalarType t) {
  const FloatLayout f = LayoutOf(t);
  return (static_cast<uint64_t>(f.bias) << f.mantissa) - 1;
}

bool IsNaNBits(ScalarType t, uint64_t bits) {
  return (bits & (SignBit(t) - 1)) > Infinity(t);
}

uint64_t RoundToFloat(ScalarType t, double x) {
  if (std::isnan(x)) return CanonicalNaN(t);
  const FloatLayout f = LayoutOf(t);
  const uint64_t sign = std::signbit(x) ? SignBit(t) : 0;
  const double a = std::fabs(x);
  if (std::isinf(a)) return sign | Infinity(t);
  if (a == 0) return sign;
  const int emin = 1 - f.bias;
  const int emax = f.bias;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int lead = std::max(e - 1, emin);
  const int quantum = lead - f.mantissa;
  // Exact: a power-of-two scaling. Nearest even in the default mode.
  uint64_t m = static_cast<uint64_t>(std::nearbyint(std::ldexp(a, -quantum)));
  if (m == 0) return sign;
  if (m == (2ull << f.mantissa)) {  // rounded up into the next binade
    m >>= 1;
    ++lead;
  }
  if (m < (1ull << f.mantissa)) return sign | m;  // subnormal
  if (lead > emax) return sign | Infinity(t);
  const uint64_t exp_field = static_cast<uint64_t>(lead + f.bias);
  return sign | (exp_field << f.mantissa) | (m - (1ull << f.mantissa));
}

uint64_t RoundIntToFloat(ScalarType t, Int128 v) {
  const bool negative = v < 0;
  unsigned __int128 a = negative ? -static_cast<unsigned __int128>(v)
                                 : static_cast<unsigned __int128>(v);
  const int keep = LayoutOf(t).mantissa + 1;
  int length = 0;
  for (unsigned __int128 x = a; x != 0; x >>= 1) ++length;
  int shift = 0;
  if (length > keep) {
    shift = length - keep;
    const unsigned __int128 rest =
        a & ((static_cast<unsigned __int128>(1) << shift) - 1);
    const unsigned __int128 half = static_cast<unsigned __int128>(1)
                                   << (shift - 1);
    a >>= shift;
    if (rest > half || (rest == half && (a & 1))) ++a;
  }
  // At most keep + 1 bits now: exact in a double, and exact in format t
  // unless out of its range (RoundToFloat then overflows it).
  const double exact = std::ldexp(static_cast<double>(a), shift);
  return RoundToFloat(t, negative ? -exact : exact);
}

double FmaRoundToOdd(double a, double b, double c) {
  const double p = a * b;  // exact: the factors have at most 24 bits
  double s = p + c;
  if (!std::isfinite(s) || !std::isfinite(p) || !std::isfinite(c)) return s;
  // TwoSum: p + c == s + e exactly.
  const double bb = s - p;
  const double e = (p - (s - bb)) + (c - bb);
  if (e != 0 && (std::bit_cast<uint64_t>(s) & 1) == 0) {
    s = std::nextafter(s, e > 0 ? INFINITY : -INFINITY);
  }
  return s;
}

double UlpError(ScalarType t, uint64_t got, double want) {
  const double g = FloatValue(t, got);
  if (std::isnan(want) || std::isnan(g)) {
    return std::isnan(want) && std::isnan(g) ? 0 : INFINITY;
  }
  if (std::isinf(want)) return g == want ? 0 : INFINITY;
  const FloatLayout f = LayoutOf(t);
  const int emin = 1 - f.bias;
  const int emax = f.bias;
  // An infinity is right (within half an ulp) where `want` rounds to it;
  // elsewhere it counts as the first value past the largest finite one.
  if (std::isinf(g) && RoundToFloat(t, want) == got) return 0.5;
  double value = g;
  if (std::isinf(g)) value = std::copysign(std::ldexp(1.0, emax + 1), g);
  int e = emin + 1;
  if (want != 0) std::frexp(want, &e);
  const int lead = std::clamp(e - 1, emin, emax);
  const double ulp = std::ldexp(1.0, lead - f.mantissa);
  return std::fabs(value - want) / ulp;
}

// --- inputs ------------------------------------------------------------------

std::vector<uint64_t> EdgeValues(ScalarType t) {
  std::vector<uint64_t> v;
  if (t == ScalarType::kBool) return {0, 1};
  if (isa::IsFloat(t)) {
    const uint64_t s = SignBit(t);
    const uint64_t inf = Infinity(t);
    const uint64_t nan = CanonicalNaN(t);
    for (uint64_t bits : {uint64_t{0}, uint64_t{1}, MinNormal(t) - 1,
                          MinNormal(t), MaxFinite(t), MaxBelowOne(t), inf}) {
      v.push_back(bits);
      v.push_back(bits | s);
    }
    v.push_back(nan);
    v.push_back(nan | s | 1);  // negative, with a payload
    for (double d : {1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 3.0, 0.1, -1.0 / 3, 100.0,
                     -7.75, 1024.5, 65504.0, 1e-3}) {
      v.push_back(RoundToFloat(t, d));
    }
    return v;
  }
  const int w = BitWidth(t);
  for (Int128 x :
       {Int128{0}, Int128{1}, Int128{2}, Int128{-1}, Int128{-2}, Int128{3},
        Int128{7}, Int128{-8}, IntMin(t), IntMin(t) + 1, IntMax(t),
        IntMax(t) - 1, Int128{w - 1}, Int128{w}, Int128{w + 1}, Int128{100},
        Int128{-100}, static_cast<Int128>(0x5555555555555555ull),
        static_cast<Int128>(0x8000000000000001ull)}) {
    v.push_back(IntBits(t, x));
  }
  return v;
}

std::vector<uint64_t> RandomValues(ScalarType t, int count, uint32_t seed) {
  std::mt19937_64 rng(seed * 2654435761u + static_cast<uint32_t>(t));
  std::vector<uint64_t> v(count);
  for (uint64_t& x : v) {
    x = rng() & TypeMask(t);
    if (t == ScalarType::kBool) x &= 1;
  }
  return v;
}

}  // namespace mtlemu::testing
