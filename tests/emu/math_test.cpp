// The float math and rounding functions (sqrt ... ldexp, floor ... fract)
// at f32, f16 and bf16 against double-precision references. Functions
// Metal specifies as correctly rounded must match bit for bit; the others
// must stay within Metal's ULP bounds (MSL specification, "Numerical
// Compliance": the precise-math single-precision table for float, the
// half-precision table, <= 1 ulp, for half and bfloat). Each function runs
// over a few thousand f32 values (special values, domain edges, random
// ones) and over every half and bfloat bit pattern; the largest error is
// printed per function and type. Then hand-computed special cases.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/support/alu_kernel.h"

namespace mtlemu {
namespace {

using testing::AluOp;
using testing::ExpectAluRows;
using testing::FloatValue;
using testing::Operands;
using testing::RoundToFloat;
using testing::ScalarType;

constexpr double kPi = std::numbers::pi;

// sin(pi x), cos(pi x), tan(pi x) with the argument reduced exactly first,
// so no rounding of pi * x is involved.
double SinPiRef(double x) {
  if (std::isinf(x)) return NAN;
  double r = std::remainder(x, 2.0);  // exact, in [-1, 1]
  if (r > 0.5) r = 1 - r;             // sin(pi r) = sin(pi (1 - r))
  if (r < -0.5) r = -1 - r;
  if (r == 0) return std::copysign(0.0, x);
  return std::sin(kPi * r);
}
double CosPiRef(double x) {
  if (std::isinf(x)) return NAN;
  const double r = std::fabs(std::remainder(x, 2.0));  // cos(pi r), r in [0, 1]
  return SinPiRef(0.5 - r);                            // exact argument
}
// tan has period 1; at n + 1/2 the pole is +inf for even n, -inf for odd.
double TanPiRef(double x) {
  if (std::isinf(x)) return NAN;
  const double r = std::remainder(x, 1.0);  // in [-0.5, 0.5]
  if (r == 0.5) return INFINITY;
  if (r == -0.5) return -INFINITY;
  const double t = SinPiRef(r) / CosPiRef(r);
  // At integers: +0 for even n, -0 for odd n (sinpi(n) / cospi(n)).
  if (t == 0) return std::copysign(0.0, x) * CosPiRef(x);
  return t;
}

struct MathCase {
  const char* mnemonic;
  // The exact result (bound 0) or a double-precision reference, for the
  // values x, y of the operands (y is ldexp's integer exponent).
  double (*reference)(ScalarType t, double x, double y);
  double float_ulps;  // Metal's bound at f32; 0: correctly rounded
  double half_ulps;   // at f16 and bf16; 0: correctly rounded
  double lo, hi;      // where many random f32 inputs are drawn
};

#define REF1(expr) [](ScalarType, double x, double) -> double { return expr; }
#define REF2(expr) [](ScalarType, double x, double y) -> double { return expr; }

// fract: x - floor(x), clamped below 1 (to the largest value of the type
// under 1); 0 for infinities.
double FractRef(ScalarType t, double x, double) {
  if (std::isinf(x)) return 0;
  return std::min(x - std::floor(x), FloatValue(t, testing::MaxBelowOne(t)));
}

double CopySignRef(ScalarType, double x, double y) {
  return std::copysign(x, y);
}

// Bounds: float from the precise-math single-precision table of the MSL
// specification (1.0 / x, sqrt, ldexp, fmod, the rounding functions exact;
// rsqrt 2 ulp; atan, atanh, tanh 5; tan, tanpi, atan2 6; pow 16; the
// others 4); half and bfloat from its half-precision table (<= 1 ulp, the
// same functions exact).
const MathCase kCases[] = {
    {"floor", REF1(std::floor(x)), 0, 0, -100, 100},
    {"ceil", REF1(std::ceil(x)), 0, 0, -100, 100},
    {"trunc", REF1(std::trunc(x)), 0, 0, -100, 100},
    {"rint", REF1(std::nearbyint(x)), 0, 0, -100, 100},
    {"round", REF1(std::round(x)), 0, 0, -100, 100},
    {"fract", FractRef, 0, 0, -100, 100},
    {"sqrt", REF1(std::sqrt(x)), 0, 0, 0, 1000},
    {"rsqrt", REF1(1 / std::sqrt(x)), 2, 1, 0, 1000},
    {"rcp", REF1(1 / x), 0, 0, -1000, 1000},
    {"exp2", REF1(std::exp2(x)), 4, 1, -130, 130},
    {"log2", REF1(std::log2(x)), 4, 1, 0, 1000},
    {"exp", REF1(std::exp(x)), 4, 1, -90, 90},
    {"log", REF1(std::log(x)), 4, 1, 0, 1000},
    {"exp10", REF1(std::pow(10.0, x)), 4, 1, -40, 40},
    {"log10", REF1(std::log10(x)), 4, 1, 0, 1000},
    {"sin", REF1(std::sin(x)), 4, 1, -100, 100},
    {"cos", REF1(std::cos(x)), 4, 1, -100, 100},
    {"tan", REF1(std::tan(x)), 6, 1, -100, 100},
    {"sinpi", REF1(SinPiRef(x)), 4, 1, -10, 10},
    {"cospi", REF1(CosPiRef(x)), 4, 1, -10, 10},
    {"tanpi", REF1(TanPiRef(x)), 6, 1, -10, 10},
    {"asin", REF1(std::asin(x)), 4, 1, -1, 1},
    {"acos", REF1(std::acos(x)), 4, 1, -1, 1},
    {"atan", REF1(std::atan(x)), 5, 1, -100, 100},
    {"sinh", REF1(std::sinh(x)), 4, 1, -90, 90},
    {"cosh", REF1(std::cosh(x)), 4, 1, -90, 90},
    {"tanh", REF1(std::tanh(x)), 5, 1, -10, 10},
    {"asinh", REF1(std::asinh(x)), 4, 1, -1000, 1000},
    {"acosh", REF1(std::acosh(x)), 4, 1, 1, 1000},
    {"atanh", REF1(std::atanh(x)), 5, 1, -1, 1},
    {"atan2", REF2(std::atan2(x, y)), 6, 1, -100, 100},
    {"pow", REF2(std::pow(x, y)), 16, 1, 0, 20},
    {"fmod", REF2(std::fmod(x, y)), 0, 0, -100, 100},
    {"copysign", CopySignRef, 0, 0, -100, 100},
    {"ldexp", REF2(std::ldexp(x, static_cast<int>(y))), 0, 0, -100, 100},
};

#undef REF1
#undef REF2

// Values every function sees, as doubles (rounded to the type).
const double kSpecials[] = {
    0.0,       -0.0,       1.0,        -1.0,     0.5,      -0.5,
    2.0,       -2.0,       0.25,       -0.25,    1.5,      -1.5,
    2.5,       -2.5,       3.0,        0.75,     1e-3,     -1e-3,
    1e-7,      1e-30,      10.0,       100.0,    -100.0,   1e6 + 0.5,
    8388609.0, 16777216.0, 1e10,       1e30,     -1e30,    kPi / 2,
    -kPi / 2,  kPi,        kPi / 4,    88.72283, 88.72284, 89.0,
    -87.33654, -103.27893, -104.0,     127.9,    128.0,    -126.0,
    -149.0,    -150.0,     38.5,       38.6,     -45.0,    0.9999999,
    1.0000001, -0.9999999, -1.0000001, 65504.0,  65520.0,  11.09,
    -17.3,     4.0,        1.0 / 3};

std::vector<uint64_t> FloatInputs(const MathCase& c, ScalarType t) {
  std::vector<uint64_t> v = testing::EdgeValues(t);
  for (double d : kSpecials) v.push_back(RoundToFloat(t, d));
  if (t != ScalarType::kFloat) {  // every bit pattern
    for (uint64_t bits = 0; bits < 0x10000; ++bits) v.push_back(bits);
    return v;
  }
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> uniform(c.lo, c.hi);
  std::uniform_real_distribution<double> exponent(-40, 40);
  for (int i = 0; i < 1500; ++i) {
    v.push_back(RoundToFloat(t, uniform(rng)));
    v.push_back(static_cast<uint32_t>(rng()));  // any exponent, NaNs too
    const double magnitude = std::pow(2.0, exponent(rng));
    v.push_back(RoundToFloat(t, (rng() & 1) ? magnitude : -magnitude));
  }
  return v;
}

// Pairs for the binary functions: specials against specials, then random
// pairs (random bits, and values from the function's range).
std::vector<Operands> BinaryInputs(const MathCase& c, const AluOp& op) {
  const ScalarType t = op.type;
  const bool ldexp = op.sources[1] == ScalarType::kInt;
  std::vector<uint64_t> firsts = testing::EdgeValues(t);
  for (double d : kSpecials) firsts.push_back(RoundToFloat(t, d));
  std::vector<uint64_t> seconds = firsts;
  if (ldexp) {
    seconds.clear();
    for (int n :
         {0,    1,    -1,   2,   15,   16,   -14,        -15,
          -24,  -25,  24,   127, 128,  -126, -127,       -133,
          -134, -149, -150, 254, -300, 1000, 0x7fffffff, -0x7fffffff - 1}) {
      seconds.push_back(static_cast<uint32_t>(n));
    }
  }
  std::vector<Operands> inputs;
  for (uint64_t a : firsts) {
    for (uint64_t b : seconds) inputs.push_back({a, b});
  }
  std::mt19937_64 rng(777);
  std::uniform_real_distribution<double> uniform(c.lo, c.hi);
  std::uniform_int_distribution<int> small_exponent(-300, 300);
  const int count = t == ScalarType::kFloat ? 2000 : 10000;
  for (int i = 0; i < count; ++i) {
    const uint64_t mask = testing::TypeMask(t);
    const uint64_t a = i % 2 ? rng() & mask : RoundToFloat(t, uniform(rng));
    uint64_t b = i % 3 ? rng() & mask : RoundToFloat(t, uniform(rng));
    if (c.mnemonic == std::string("pow") && i % 4 == 0) {
      b = RoundToFloat(t, uniform(rng) - 10);  // moderate exponents
    }
    if (ldexp) b = static_cast<uint32_t>(small_exponent(rng));
    inputs.push_back({a, b});
  }
  return inputs;
}

std::vector<std::string> SweepInstructions(const MathCase& c) {
  const std::optional<isa::Opcode> op = isa::OpcodeFromMnemonic(c.mnemonic);
  if (!op) return {};
  return testing::InstructionsAtEveryType(*op);
}

// The operands' values: floats decoded, ldexp's exponent as an integer.
double OperandValue(ScalarType source, uint64_t bits) {
  if (source == ScalarType::kInt) {
    return static_cast<double>(static_cast<int32_t>(bits));
  }
  return FloatValue(source, bits);
}

// How gtest names a parameter in messages.
void PrintTo(const MathCase& c, std::ostream* os) { *os << c.mnemonic; }

class MathSweep : public ::testing::TestWithParam<MathCase> {};

TEST_P(MathSweep, WithinMetalsBoundAtEveryType) {
  const MathCase& c = GetParam();
  const std::vector<std::string> texts = SweepInstructions(c);
  ASSERT_FALSE(texts.empty()) << c.mnemonic << " is not an opcode";
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    Result<AluOp> parsed = testing::ParseAluOp(text);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    const AluOp& op = parsed.value();
    const ScalarType t = op.type;
    std::vector<Operands> inputs;
    if (op.sources.size() == 1) {
      for (uint64_t x : FloatInputs(c, t)) inputs.push_back({x});
    } else {
      inputs = BinaryInputs(c, op);
    }
    const double bound = t == ScalarType::kFloat ? c.float_ulps : c.half_ulps;
    const bool exact = bound == 0;
    double max_error = 0;
    for (bool skip_odd : {false, true}) {
      testing::AluRunOptions options;
      options.skip_odd_threads = skip_odd;
      Result<std::vector<uint64_t>> got =
          testing::RunAlu(text, inputs, options);
      ASSERT_TRUE(got.ok()) << got.error().message;
      int failures = 0;
      for (size_t i = 0; i < inputs.size() && failures < 10; ++i) {
        const uint64_t out = got.value()[i];
        if (skip_odd && i % 2) {
          EXPECT_EQ(out, testing::kAluSentinel & 0xffffffffu) << "thread " << i;
          continue;
        }
        const Operands& x = inputs[i];
        const double want =
            c.reference(t, OperandValue(op.sources[0], x[0]),
                        x.size() > 1 ? OperandValue(op.sources[1], x[1]) : 0.0);
        const uint64_t bits = out & testing::ResultMask(t);
        double error = testing::UlpError(t, bits, want);
        // NaN results are the canonical NaN (isa/README.md), except from
        // copysign, which only sets a sign bit.
        if (std::isnan(want) && c.reference != CopySignRef &&
            bits != testing::CanonicalNaN(t)) {
          error = INFINITY;
        }
        if (exact && !std::isnan(want)) {
          const uint64_t want_bits = RoundToFloat(t, want);
          // fract's zeros may have either sign (Metal does not say).
          const bool any_zero = c.reference == FractRef && want == 0;
          const uint64_t sign = testing::SignBit(t);
          if ((any_zero ? bits & ~sign : bits) != want_bits) error = INFINITY;
        }
        max_error = std::max(max_error, error);
        if (!(error <= (exact ? 0.5 : bound))) {
          ++failures;
          ADD_FAILURE() << text << " " << testing::Hex(x[0])
                        << (x.size() > 1 ? ", " + testing::Hex(x[1]) : "")
                        << " = " << testing::Hex(bits) << " ("
                        << FloatValue(t, bits) << "), want " << want << " ("
                        << error << " ulp)";
        }
      }
    }
    char bound_text[32];
    std::snprintf(bound_text, sizeof bound_text, "%g ulp", bound);
    std::printf(
        "[ ulp      ] %-14s max error %.4f ulp over %6zu inputs "
        "(bound: %s)\n",
        text.c_str(), max_error, inputs.size(),
        exact ? "correctly rounded" : bound_text);
  }
}

INSTANTIATE_TEST_SUITE_P(Every, MathSweep, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<MathCase>& info) {
                           return std::string(info.param.mnemonic);
                         });

// Adding a math opcode (or a type to one) without a case here fails.
TEST(MathCoverage, SweepCoversEveryMathOpcodeAtEveryType) {
  std::set<std::string> expected;
  for (int i = 0; i < isa::kNumOpcodes; ++i) {
    const auto op = static_cast<isa::Opcode>(i);
    if (!testing::IsFloatMathOpcode(op)) continue;
    for (const std::string& text : testing::InstructionsAtEveryType(op)) {
      expected.insert(text);
    }
  }
  std::set<std::string> covered;
  for (const MathCase& c : kCases) {
    for (const std::string& text : SweepInstructions(c)) {
      ASSERT_TRUE(testing::ParseAluOp(text).ok()) << text;
      covered.insert(text);
    }
  }
  EXPECT_EQ(covered, expected);
}

// --- hand-computed special cases ---------------------------------------------

uint64_t F32(float f) { return std::bit_cast<uint32_t>(f); }
uint64_t F16(double d) { return RoundToFloat(ScalarType::kHalf, d); }
constexpr uint64_t kNaN = 0x7fc00000u;
const uint64_t kInf = F32(INFINITY);
const uint64_t kMinusInf = F32(-INFINITY);
const uint64_t kMinusZero = F32(-0.0f);

// Every row's result is the canonical NaN of the type.
void ExpectNaN(const std::string& op, const std::vector<Operands>& inputs) {
  const ScalarType t = testing::ParseAluOp(op).value().result;
  std::vector<testing::AluRow> rows;
  for (const Operands& in : inputs)
    rows.push_back({in, testing::CanonicalNaN(t)});
  ExpectAluRows(op, rows);
}

TEST(MathEdges, RoundingFunctions) {
  ExpectAluRows("floor.f32", {{{F32(-0.5f)}, F32(-1)},
                              {{kMinusZero}, kMinusZero},
                              {{F32(2.5f)}, F32(2)}});
  ExpectAluRows("ceil.f32",
                {{{F32(-0.5f)}, kMinusZero}, {{F32(0.2f)}, F32(1)}});
  ExpectAluRows("trunc.f32",
                {{{F32(-0.7f)}, kMinusZero}, {{F32(2.7f)}, F32(2)}});
  ExpectAluRows("rint.f32", {{{F32(0.5f)}, 0},
                             {{F32(1.5f)}, F32(2)},
                             {{F32(2.5f)}, F32(2)},
                             {{F32(-2.5f)}, F32(-2)},
                             {{F32(-0.5f)}, kMinusZero}});
  ExpectAluRows("round.f32", {{{F32(2.5f)}, F32(3)},
                              {{F32(-2.5f)}, F32(-3)},
                              {{F32(-0.4f)}, kMinusZero},
                              {{F32(8388609.0f)}, F32(8388609.0f)}});
  ExpectAluRows("fract.f32", {{{F32(-0.25f)}, F32(0.75f)},
                              {{F32(1.75f)}, F32(0.75f)},
                              {{F32(-1e-30f)}, F32(0x1.fffffep-1f)}});
  // x - floor(x) of the smallest negative half is 1 - 2^-24, which rounds
  // to 1 in half: the result must still be below 1.
  ExpectAluRows("fract.f16", {{{0x8001}, 0x3bff}, {{F16(-0.25)}, F16(0.75)}});
  ExpectAluRows("fract.bf16", {{{0x8001}, 0x3f7f}});
  ExpectNaN("fract.f32", {{kNaN}});
  ExpectNaN("fract.f16", {{0x7e00}});
  ExpectNaN("floor.f32", {{kNaN}});
}

TEST(MathEdges, SpecialValuesOfTheMathFunctions) {
  ExpectAluRows(
      "sqrt.f32",
      {{{kMinusZero}, kMinusZero}, {{kInf}, kInf}, {{F32(4)}, F32(2)}});
  ExpectNaN("sqrt.f32", {{F32(-1)}, {kMinusInf}});
  ExpectAluRows("rsqrt.f32", {{{0}, kInf}, {{kInf}, 0}, {{F32(4)}, F32(0.5f)}});
  ExpectAluRows(
      "rcp.f32",
      {{{kMinusZero}, kMinusInf}, {{kInf}, 0}, {{F32(-4)}, F32(-0.25f)}});
  ExpectAluRows("log.f32", {{{0}, kMinusInf},
                            {{kMinusZero}, kMinusInf},
                            {{F32(1)}, 0},
                            {{kInf}, kInf}});
  ExpectNaN("log.f32", {{F32(-1)}});
  ExpectNaN("log2.f16", {{F16(-1)}});
  ExpectAluRows("exp.f32",
                {{{kMinusInf}, 0}, {{0}, F32(1)}, {{F32(89)}, kInf}});
  ExpectAluRows("exp2.f32", {{{F32(128)}, kInf},
                             {{F32(-149)}, 1},
                             {{F32(-151)}, 0},
                             {{F32(10)}, F32(1024)}});
  ExpectAluRows("exp2.f16", {{{F16(16)}, 0x7c00}, {{F16(-24)}, 0x0001}});
  ExpectAluRows("exp10.f32", {{{F32(2)}, F32(100)}, {{F32(39)}, kInf}});
  ExpectAluRows("log10.f32", {{{F32(1000)}, F32(3)}});
  ExpectAluRows("sinpi.f32", {{{kMinusZero}, kMinusZero},
                              {{F32(1)}, 0},
                              {{F32(-1)}, kMinusZero},
                              {{F32(0.5f)}, F32(1)},
                              {{F32(2)}, 0},
                              {{F32(-3)}, kMinusZero},
                              {{F32(16777216.0f)}, 0}});
  ExpectNaN("sinpi.f32", {{kInf}, {kNaN}});
  ExpectAluRows("cospi.f32", {{{F32(0.5f)}, 0},
                              {{F32(-0.5f)}, 0},
                              {{F32(1.5f)}, 0},
                              {{F32(1)}, F32(-1)},
                              {{0}, F32(1)}});
  // tanpi(n) is sinpi(n) / cospi(n): +0 for even n, -0 for odd n; at
  // n + 1/2 the pole is +inf for even n, -inf for odd n.
  ExpectAluRows("tanpi.f32", {{{kMinusZero}, kMinusZero},
                              {{F32(1)}, kMinusZero},
                              {{F32(-1)}, 0},
                              {{F32(2)}, 0},
                              {{F32(0.25f)}, F32(1)},
                              {{F32(0.5f)}, kInf},
                              {{F32(-0.5f)}, kMinusInf},
                              {{F32(1.5f)}, kMinusInf},
                              {{F32(2.5f)}, kInf}});
  ExpectAluRows("tanpi.f16", {{{F16(0.5)}, 0x7c00}, {{F16(-0.25)}, F16(-1)}});
  ExpectNaN("asin.f32", {{F32(1.0000001f)}});
  ExpectAluRows("atanh.f32", {{{F32(1)}, kInf}, {{F32(-1)}, kMinusInf}});
  ExpectAluRows("acosh.f32", {{{F32(1)}, 0}});
  ExpectAluRows("atan2.f32",
                {{{0, kMinusZero}, F32(std::numbers::pi_v<float>)},
                 {{kMinusZero, kMinusZero}, F32(-std::numbers::pi_v<float>)},
                 {{0, 0}, 0},
                 {{kMinusZero, 0}, kMinusZero},
                 {{F32(1), 0}, F32(std::numbers::pi_v<float> / 2)}});
  ExpectAluRows("pow.f32", {{{F32(-2), F32(3)}, F32(-8)},
                            {{0, F32(-1)}, kInf},
                            {{kNaN, 0}, F32(1)},
                            {{F32(1), kNaN}, F32(1)},
                            {{F32(2), F32(-149)}, 1}});
  ExpectNaN("pow.f32", {{F32(-8), F32(1.0f / 3)}});
  ExpectAluRows("fmod.f32", {{{F32(5.5f), F32(2)}, F32(1.5f)},
                             {{F32(-5.5f), F32(2)}, F32(-1.5f)},
                             {{F32(5), kInf}, F32(5)}});
  ExpectNaN("fmod.f32", {{F32(1), 0}, {kInf, F32(1)}});
  ExpectAluRows("copysign.f32",
                {{{F32(1), kMinusZero}, F32(-1)}, {{kMinusInf, 0}, kInf}});
  ExpectAluRows("copysign.f16", {{{F16(2), 0x8000}, F16(-2)}});
  ExpectAluRows("ldexp.f32", {{{F32(1), 127}, F32(0x1p127f)},
                              {{F32(1), 128}, kInf},
                              {{F32(1), static_cast<uint32_t>(-149)}, 1},
                              {{F32(1), static_cast<uint32_t>(-150)}, 0},
                              {{F32(1.5f), static_cast<uint32_t>(-149)}, 2},
                              {{F32(1), 0x7fffffff}, kInf},
                              {{F32(-1), 0x80000000u}, kMinusZero}});
  ExpectAluRows("ldexp.f16", {{{F16(1), 15}, 0x7800},
                              {{F16(1), 16}, 0x7c00},
                              {{F16(1), static_cast<uint32_t>(-24)}, 0x0001}});
}

}  // namespace
}  // namespace mtlemu
