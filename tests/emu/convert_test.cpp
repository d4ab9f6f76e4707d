// cvt and cvt_sat between every pair of scalar types, against a plain C++
// reference: integers exact in 128 bits, floats decoded and rounded by
// tests/support/alu_kernel (integers straight to the format, not through
// double or float). Then hand-computed cases: truncation toward zero,
// saturation at both ends, NaN -> 0, nearest-even rounding of integers,
// overflow to infinity, bool destinations, wrap versus saturate.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <iostream>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "tests/support/alu_kernel.h"

namespace mtlemu {
namespace {

using testing::AluOp;
using testing::AluWant;
using testing::ExpectAluRows;
using testing::FloatValue;
using testing::Int128;
using testing::IntMax;
using testing::IntMin;
using testing::IntRegister;
using testing::IntValue;
using testing::Operands;
using testing::ScalarType;

// isa/README.md: float -> integer rounds toward zero and saturates, NaN
// gives 0; integer or float -> float rounds to nearest even; integers wrap
// (cvt) or saturate (cvt_sat); any -> bool is nonzero -> 1 (a NaN is
// nonzero). cvt_sat to a float type is cvt.
AluWant Convert(ScalarType dst, ScalarType src, bool saturate, uint64_t bits) {
  if (isa::IsFloat(src)) {
    const double v = FloatValue(src, bits);
    if (dst == ScalarType::kBool) return {v != 0 ? 1u : 0u};
    if (isa::IsFloat(dst)) {
      if (std::isnan(v)) return {0, true};
      return {testing::RoundToFloat(dst, v)};
    }
    if (std::isnan(v)) return {0};
    const double t = std::trunc(v);
    if (t <= static_cast<double>(IntMin(dst)))
      return {IntRegister(dst, IntMin(dst))};
    if (t >= static_cast<double>(IntMax(dst)))
      return {IntRegister(dst, IntMax(dst))};
    return {IntRegister(dst, static_cast<Int128>(t))};
  }
  const Int128 n = IntValue(src, bits);
  if (dst == ScalarType::kBool) return {n != 0 ? 1u : 0u};
  if (isa::IsFloat(dst)) return {testing::RoundIntToFloat(dst, n)};
  return {IntRegister(dst, saturate ? testing::Saturate(dst, n) : n)};
}

// Integers that sit on the edges of some conversion: type limits, float
// rounding ties and overflow thresholds.
const Int128 kIntegers[] = {
    0,
    1,
    -1,
    127,
    128,
    255,
    256,
    -128,
    -129,
    300,
    -300,
    32767,
    32768,
    65535,
    65536,
    -32768,
    -32769,
    2049,
    2051,
    65504,
    65519,
    65520,
    16777216,
    16777217,
    16777219,
    (Int128{1} << 24) + (Int128{1} << 16) + 1,  // a bfloat tie plus one
    (Int128{1} << 31) - 1,
    Int128{1} << 31,
    -(Int128{1} << 31) - 1,
    (Int128{1} << 32) - 1,
    Int128{1} << 32,
    (Int128{1} << 53) + 1,
    (Int128{1} << 63) - 1,
    -(Int128{1} << 63),
    (Int128{1} << 64) - 1,
    (Int128{1} << 63) + (Int128{1} << 39) + 1,  // a float tie plus one
    (Int128{1} << 63) + (Int128{1} << 39),      // a float tie
};

// Floats around integer limits and rounding boundaries.
const double kFloats[] = {
    0.4,
    -0.4,
    0.5,
    -0.5,
    0.99999,
    -0.99999,
    1.5,
    -1.5,
    2.5,
    127.5,
    127.99,
    128,
    255.5,
    256,
    -128.5,
    -128.99,
    -129,
    32767.5,
    32768,
    -32768.9,
    65535.9,
    65536,
    65519.99,
    65520,
    2147483520.0,
    2147483648.0,
    -2147483648.0,
    -2147483904.0,
    4294967040.0,
    4294967296.0,
    9223371487098961920.0,
    9223372036854775808.0,
    -9223372036854775808.0,
    18446742974197923840.0,
    18446744073709551616.0,
    1e30,
    -1e30,
    1e-40,
    1.00390625,
    1.01171875,
};

std::vector<uint64_t> SourceValues(ScalarType src) {
  std::vector<uint64_t> v = testing::EdgeValues(src);
  if (src == ScalarType::kBool) return v;
  if (isa::IsFloat(src)) {
    for (double d : kFloats) v.push_back(testing::RoundToFloat(src, d));
  } else {
    for (Int128 n : kIntegers) v.push_back(testing::IntBits(src, n));
  }
  return v;
}

struct ConvertCase {
  const char* op;  // cvt or cvt_sat
  ScalarType dst;
};

std::vector<ConvertCase> AllCases() {
  std::vector<ConvertCase> cases;
  for (const char* op : {"cvt", "cvt_sat"}) {
    for (int d = 0; d < isa::kNumScalarTypes; ++d) {
      cases.push_back({op, static_cast<ScalarType>(d)});
    }
  }
  return cases;
}

// The instructions the sweep of `c` runs: one per source type the opcode
// table allows.
std::vector<std::string> SweepInstructions(const ConvertCase& c) {
  const isa::OpInfo& info = isa::GetOpInfo(*isa::OpcodeFromMnemonic(c.op));
  std::vector<std::string> texts;
  if (!(info.types & isa::Bit(c.dst))) return texts;
  for (int s = 0; s < isa::kNumScalarTypes; ++s) {
    const auto src = static_cast<ScalarType>(s);
    if (!(info.types & isa::Bit(src))) continue;
    texts.push_back(std::string(c.op) + "." +
                    std::string(isa::IsaSuffix(c.dst)) + "." +
                    std::string(isa::IsaSuffix(src)));
  }
  return texts;
}

// How gtest names a parameter in messages.
void PrintTo(const ConvertCase& c, std::ostream* os) {
  *os << c.op << "." << isa::IsaSuffix(c.dst);
}

class ConvertSweep : public ::testing::TestWithParam<ConvertCase> {};

TEST_P(ConvertSweep, MatchesTheReferenceFromEverySourceType) {
  const ConvertCase& c = GetParam();
  const std::vector<std::string> texts = SweepInstructions(c);
  ASSERT_FALSE(texts.empty());
  for (const std::string& text : texts) {
    Result<AluOp> op = testing::ParseAluOp(text);
    ASSERT_TRUE(op.ok()) << op.error().message;
    const ScalarType src = op.value().type2;
    const bool saturate = op.value().op == isa::Opcode::kCvtSat;
    const std::vector<Operands> inputs =
        testing::CombineInputs(op.value(), {SourceValues(src)}, 300);
    const auto reference = [&](const Operands& x) {
      return Convert(c.dst, src, saturate, x[0]);
    };
    for (bool skip_odd : {false, true}) {
      testing::CheckAlu(op.value(), inputs, reference, skip_odd);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Every, ConvertSweep, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<ConvertCase>& info) {
                           return std::string(info.param.op) + "_" +
                                  std::string(isa::IsaSuffix(info.param.dst));
                         });

TEST(ConvertCoverage, SweepCoversEveryPairOfTypes) {
  std::set<std::string> expected;
  for (int i = 0; i < isa::kNumOpcodes; ++i) {
    const auto op = static_cast<isa::Opcode>(i);
    const isa::OpInfo& info = isa::GetOpInfo(op);
    if (info.shape != isa::OpShape::kConvert) continue;
    for (int d = 0; d < isa::kNumScalarTypes; ++d) {
      for (int s = 0; s < isa::kNumScalarTypes; ++s) {
        const auto dst = static_cast<ScalarType>(d);
        const auto src = static_cast<ScalarType>(s);
        if ((info.types & isa::Bit(dst)) && (info.types & isa::Bit(src))) {
          expected.insert(std::string(info.mnemonic) + "." +
                          std::string(isa::IsaSuffix(dst)) + "." +
                          std::string(isa::IsaSuffix(src)));
        }
      }
    }
  }
  std::set<std::string> covered;
  for (const ConvertCase& c : AllCases()) {
    for (const std::string& text : SweepInstructions(c)) {
      ASSERT_TRUE(testing::ParseAluOp(text).ok()) << text;
      covered.insert(text);
    }
  }
  EXPECT_EQ(covered, expected);
  std::cout << "[ convert  ] " << covered.size()
            << " (opcode, destination, source) triples swept\n";
}

// --- hand-computed cases -----------------------------------------------------

uint64_t F32(float f) { return std::bit_cast<uint32_t>(f); }
constexpr uint64_t kNaN = 0x7fc00000u;
constexpr uint64_t kI32Min = 0x80000000u;
constexpr uint64_t kI32Max = 0x7fffffffu;
constexpr uint64_t kAll32 = 0xffffffffu;
constexpr uint64_t kAll64 = ~0ull;

TEST(ConvertEdges, FloatToIntegerTruncatesAndSaturates) {
  ExpectAluRows("cvt.i32.f32", {{{F32(2.9f)}, 2},
                                {{F32(-2.9f)}, 0xfffffffeu},
                                {{F32(-0.0f)}, 0},
                                {{kNaN}, 0},
                                {{F32(INFINITY)}, kI32Max},
                                {{F32(-INFINITY)}, kI32Min},
                                {{F32(3e9f)}, kI32Max},
                                {{F32(-3e9f)}, kI32Min},
                                {{F32(2147483520.0f)}, 2147483520u},
                                {{F32(2147483648.0f)}, kI32Max}});
  ExpectAluRows("cvt.u32.f32", {{{F32(-1.0f)}, 0},
                                {{F32(-0.5f)}, 0},
                                {{F32(4294967040.0f)}, 4294967040u},
                                {{F32(4294967296.0f)}, kAll32},
                                {{kNaN}, 0}});
  ExpectAluRows(
      "cvt.u8.f32",
      {{{F32(255.9f)}, 255}, {{F32(256.0f)}, 255}, {{F32(-3.0f)}, 0}});
  ExpectAluRows("cvt.i8.f32", {{{F32(127.9f)}, 127},
                               {{F32(-128.9f)}, 0xffffff80u},
                               {{F32(-129.0f)}, 0xffffff80u},
                               {{F32(-1.5f)}, kAll32}});
  ExpectAluRows("cvt_sat.i16.f32",
                {{{F32(40000.0f)}, 0x7fff}, {{F32(-40000.0f)}, 0xffff8000u}});
  ExpectAluRows("cvt.i64.f32",
                {{{F32(9223371487098961920.0f)}, 9223371487098961920ull},
                 {{F32(9223372036854775808.0f)}, 0x7fffffffffffffffull},
                 {{F32(-INFINITY)}, 0x8000000000000000ull}});
  ExpectAluRows("cvt.u64.f32",
                {{{F32(18446742974197923840.0f)}, 18446742974197923840ull},
                 {{F32(18446744073709551616.0f)}, kAll64},
                 {{kNaN}, 0},
                 {{F32(-5.0f)}, 0}});
  ExpectAluRows("cvt.i16.f16", {{{0x7bff}, 0x7fff}, {{0xfc00}, 0xffff8000u}});
  ExpectAluRows("cvt.u16.f16", {{{0x7bff}, 65504}, {{0x7e00}, 0}});
  ExpectAluRows("cvt.i32.bf16", {{{0x7f7f}, kI32Max}, {{0xc020}, kAll32 - 1}});
}

TEST(ConvertEdges, IntegerToFloatRoundsToNearestEven) {
  ExpectAluRows("cvt.f32.i32", {{{16777217}, F32(16777216.0f)},
                                {{16777219}, F32(16777220.0f)},
                                {{kI32Min}, F32(-2147483648.0f)},
                                {{kI32Max}, F32(2147483648.0f)}});
  ExpectAluRows("cvt.f32.u32", {{{kAll32}, F32(4294967296.0f)}});
  ExpectAluRows("cvt.f32.u64",
                {{{kAll64}, F32(18446744073709551616.0f)},
                 // 2^63 + 2^39 + 1 is just above a tie: rounds up.
                 {{(1ull << 63) + (1ull << 39) + 1}, 0x5f000001u},
                 {{(1ull << 63) + (1ull << 39)}, 0x5f000000u}});
  ExpectAluRows("cvt.f32.i64", {{{0x8000000000000000ull}, 0xdf000000u}});
  ExpectAluRows("cvt.f16.i32", {{{2049}, 0x6800},
                                {{2051}, 0x6802},
                                {{65519}, 0x7bff},
                                {{65520}, 0x7c00},          // overflows to inf
                                {{0xfffeee90u}, 0xfc00}});  // -70000
  ExpectAluRows("cvt.f16.u64", {{{kAll64}, 0x7c00}});
  // 2^24 + 2^16 + 1 lies just above a bfloat tie: 2^24 + 2^17. Rounding
  // to float first gives the tie itself, which goes to even 2^24.
  ExpectAluRows("cvt.bf16.i32", {{{(1u << 24) + (1u << 16) + 1}, 0x4b81},
                                 {{(1u << 24) + (1u << 16)}, 0x4b80}});
  ExpectAluRows("cvt.bf16.u64", {{{(1ull << 40) + (1ull << 32) + 1}, 0x5381}});
  ExpectAluRows("cvt.f32.b8", {{{1}, F32(1.0f)}, {{0}, 0}});
}

TEST(ConvertEdges, FloatToFloat) {
  ExpectAluRows("cvt.f16.f32", {{{F32(65520.0f)}, 0x7c00},
                                {{F32(65519.99f)}, 0x7bff},
                                {{F32(1e-8f)}, 0},
                                {{F32(std::ldexp(1.5f, -25))}, 0x0001},
                                {{F32(-0.0f)}, 0x8000},
                                {{F32(INFINITY)}, 0x7c00}});
  ExpectAluRows("cvt.f32.f16", {{{0x0001}, F32(std::ldexp(1.0f, -24))},
                                {{0xfbff}, F32(-65504.0f)}});
  ExpectAluRows("cvt.bf16.f32", {{{F32(1.00390625f)}, 0x3f80},  // tie: even
                                 {{F32(1.01171875f)}, 0x3f82},  // tie: even
                                 {{F32(3.4028235e38f)}, 0x7f80}});
  ExpectAluRows("cvt.f16.bf16", {{{0x5015}, 0x7c00}, {{0x3380}, 0x0001}});
  ExpectAluRows("cvt.bf16.f16", {{{0x0001}, 0x3380}, {{0x7bff}, 0x4780}});
}

TEST(ConvertEdges, BoolDestinationIsNonzero) {
  ExpectAluRows("cvt.b8.i32", {{{2}, 1}, {{0}, 0}, {{256}, 1}, {{kAll32}, 1}});
  ExpectAluRows("cvt.b8.i64", {{{1ull << 32}, 1}, {{0}, 0}});
  ExpectAluRows("cvt.b8.f32", {{{F32(-0.0f)}, 0},
                               {{F32(0.5f)}, 1},
                               {{kNaN}, 1},
                               {{1}, 1}});  // the smallest denormal
  ExpectAluRows("cvt.b8.f16", {{{0x8000}, 0}, {{0x0001}, 1}});
  ExpectAluRows("cvt_sat.b8.u8", {{{255}, 1}});
  ExpectAluRows("cvt.i32.b8", {{{1}, 1}, {{0}, 0}});
}

TEST(ConvertEdges, NarrowIntegersWrapWithoutSatAndSaturateWithIt) {
  ExpectAluRows("cvt.u8.i32", {{{300}, 44}, {{kAll32}, 0xff}});
  ExpectAluRows("cvt_sat.u8.i32", {{{300}, 255}, {{kAll32}, 0}});
  ExpectAluRows("cvt.i8.i32", {{{200}, 0xffffffc8u}});
  ExpectAluRows("cvt_sat.i8.i32", {{{200}, 127}, {{0xffffff38u}, 0xffffff80u}});
  ExpectAluRows("cvt.i8.u8", {{{255}, kAll32}});
  ExpectAluRows("cvt_sat.i8.u8", {{{255}, 127}});
  ExpectAluRows("cvt.u32.i32", {{{kAll32}, kAll32}});
  ExpectAluRows("cvt_sat.u32.i32", {{{kAll32}, 0}});
  ExpectAluRows("cvt_sat.i32.u32", {{{kAll32}, kI32Max}});
  ExpectAluRows("cvt.u64.i32", {{{kAll32}, kAll64}});  // sign-extends
  ExpectAluRows("cvt_sat.u64.i32", {{{kAll32}, 0}});
  ExpectAluRows("cvt.i64.u32", {{{kAll32}, 0xffffffffull}});
  ExpectAluRows("cvt.i32.i64", {{{(1ull << 40) + 5}, 5}});
  ExpectAluRows("cvt_sat.i32.i64", {{{1ull << 40}, kI32Max}});
  ExpectAluRows("cvt_sat.u16.i64", {{{kAll64 - 4}, 0}});
  ExpectAluRows("cvt_sat.i64.u64", {{{kAll64}, 0x7fffffffffffffffull}});
  ExpectAluRows("cvt_sat.u64.i64", {{{kAll64}, 0}});
  ExpectAluRows("cvt.u16.i8", {{{0x80}, 0xff80}});
  ExpectAluRows("cvt_sat.u16.i8", {{{0x80}, 0}});
  ExpectAluRows("cvt.i16.u16", {{{0x8000}, 0xffff8000u}});
}

}  // namespace
}  // namespace mtlemu
