// The arithmetic, bit, comparison, test and select opcodes, at every type
// each allows, against plain C++ references: exact integer arithmetic in
// 128 bits, floats decoded and rounded by tests/support/alu_kernel (not by
// the emulator's conversions). Each runs over edge values and random ones,
// with every thread active and with odd threads branched around it; then
// hand-computed cases for the edges isa/README.md and Metal define.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <iostream>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/support/alu_kernel.h"

namespace mtlemu {
namespace {

using testing::AluOp;
using testing::AluRunOptions;
using testing::AluWant;
using testing::ExpectAluRows;
using testing::FloatValue;
using testing::Int128;
using testing::IntRegister;
using testing::IntValue;
using testing::Operands;
using testing::RunAlu;
using testing::ScalarType;

using Reference = AluWant (*)(ScalarType t, const Operands& x);

AluWant Exactly(uint64_t bits) { return {bits}; }
AluWant Either(uint64_t a, uint64_t b) { return {a, false, true, b}; }
AluWant IntResult(ScalarType t, Int128 v) { return {IntRegister(t, v)}; }
// The exact value `v` rounded to float type t; NaN is the canonical NaN.
AluWant Rounded(ScalarType t, double v) {
  return {testing::RoundToFloat(t, v)};
}
AluWant Flag(bool b) { return {b ? 1u : 0u}; }

// --- references --------------------------------------------------------------

Int128 A(ScalarType t, const Operands& x) { return IntValue(t, x[0]); }
Int128 B(ScalarType t, const Operands& x) { return IntValue(t, x[1]); }
Int128 C(ScalarType t, const Operands& x) { return IntValue(t, x[2]); }
double FA(ScalarType t, const Operands& x) { return FloatValue(t, x[0]); }
double FB(ScalarType t, const Operands& x) { return FloatValue(t, x[1]); }
double FC(ScalarType t, const Operands& x) { return FloatValue(t, x[2]); }
bool Float(ScalarType t) { return isa::IsFloat(t); }
bool Signed(ScalarType t) { return isa::IsSigned(t); }
int Width(ScalarType t) { return testing::BitWidth(t); }
uint64_t Bits(ScalarType t, uint64_t x) { return x & testing::TypeMask(t); }
// The bit pattern `bits` as a value of t, in a register.
AluWant BitResult(ScalarType t, uint64_t bits) {
  return IntResult(t, IntValue(t, bits));
}
// The product wrapped modulo 2^128 (as unsigned, so never overflowing).
Int128 WrappingProduct(Int128 a, Int128 b) {
  using U = unsigned __int128;
  return static_cast<Int128>(static_cast<U>(a) * static_cast<U>(b));
}
// A wrapped 64-bit product plus an operand can pass 128 bits too.
Int128 WrappingSum(Int128 a, Int128 b) {
  using U = unsigned __int128;
  return static_cast<Int128>(static_cast<U>(a) + static_cast<U>(b));
}
uint32_t ShiftAmount(ScalarType t, uint64_t b) {
  return static_cast<uint32_t>(b) & (Width(t) - 1);
}

AluWant Mov(ScalarType t, const Operands& x) {
  return Float(t) ? Exactly(x[0]) : IntResult(t, A(t, x));
}
AluWant Add(ScalarType t, const Operands& x) {
  return Float(t) ? Rounded(t, FA(t, x) + FB(t, x))
                  : IntResult(t, A(t, x) + B(t, x));
}
AluWant Sub(ScalarType t, const Operands& x) {
  return Float(t) ? Rounded(t, FA(t, x) - FB(t, x))
                  : IntResult(t, A(t, x) - B(t, x));
}
AluWant Mul(ScalarType t, const Operands& x) {
  return Float(t) ? Rounded(t, FA(t, x) * FB(t, x))
                  : IntResult(t, WrappingProduct(A(t, x), B(t, x)));
}
// Integer x / 0 is all ones; INT_MIN / -1 wraps to INT_MIN.
AluWant Div(ScalarType t, const Operands& x) {
  if (Float(t)) return Rounded(t, FA(t, x) / FB(t, x));
  if (B(t, x) == 0) return IntResult(t, -1);
  return IntResult(t, A(t, x) / B(t, x));
}
// x % 0 is x; INT_MIN % -1 is 0.
AluWant Rem(ScalarType t, const Operands& x) {
  if (B(t, x) == 0) return IntResult(t, A(t, x));
  return IntResult(t, A(t, x) % B(t, x));
}
AluWant MulHi(ScalarType t, const Operands& x) {
  const int w = Width(t);
  if (Signed(t)) return IntResult(t, (A(t, x) * B(t, x)) >> w);
  using U = unsigned __int128;
  const U p = static_cast<U>(A(t, x)) * static_cast<U>(B(t, x));
  return IntResult(t, static_cast<Int128>(p >> w));
}
AluWant Fma(ScalarType t, const Operands& x) {
  return Rounded(t, testing::FmaRoundToOdd(FA(t, x), FB(t, x), FC(t, x)));
}
AluWant Mad(ScalarType t, const Operands& x) {
  return IntResult(t, WrappingSum(WrappingProduct(A(t, x), B(t, x)), C(t, x)));
}
// Float min/max: a NaN operand gives the other one; equal operands (+0 and
// -0) may give either.
AluWant MinMax(ScalarType t, const Operands& x, bool is_min) {
  if (!Float(t)) {
    const bool first = is_min ? A(t, x) <= B(t, x) : A(t, x) >= B(t, x);
    return IntResult(t, first ? A(t, x) : B(t, x));
  }
  const double a = FA(t, x);
  const double b = FB(t, x);
  if (std::isnan(a)) return Exactly(x[1]);
  if (std::isnan(b)) return Exactly(x[0]);
  if (a == b) return Either(x[0], x[1]);
  return Exactly((is_min ? a < b : a > b) ? x[0] : x[1]);
}
AluWant Min(ScalarType t, const Operands& x) { return MinMax(t, x, true); }
AluWant Max(ScalarType t, const Operands& x) { return MinMax(t, x, false); }
// Float abs and neg are sign-bit operations (NaNs too).
AluWant Abs(ScalarType t, const Operands& x) {
  if (Float(t)) return Exactly(x[0] & ~testing::SignBit(t));
  const Int128 a = A(t, x);
  return IntResult(t, a < 0 ? -a : a);
}
AluWant Neg(ScalarType t, const Operands& x) {
  if (Float(t)) return Exactly(x[0] ^ testing::SignBit(t));
  return IntResult(t, -A(t, x));
}
// |a - b| without overflow, then as the destination type's bits.
AluWant AbsDiff(ScalarType t, const Operands& x) {
  const Int128 d = A(t, x) - B(t, x);
  return IntResult(t, d < 0 ? -d : d);
}
AluWant AddSat(ScalarType t, const Operands& x) {
  return IntResult(t, testing::Saturate(t, A(t, x) + B(t, x)));
}
AluWant SubSat(ScalarType t, const Operands& x) {
  return IntResult(t, testing::Saturate(t, A(t, x) - B(t, x)));
}
// (a + b) >> 1 and (a + b + 1) >> 1 without overflow (>> floors).
AluWant HAdd(ScalarType t, const Operands& x) {
  return IntResult(t, (A(t, x) + B(t, x)) >> 1);
}
AluWant RHAdd(ScalarType t, const Operands& x) {
  return IntResult(t, (A(t, x) + B(t, x) + 1) >> 1);
}
AluWant And(ScalarType t, const Operands& x) {
  return BitResult(t, x[0] & x[1]);
}
AluWant Or(ScalarType t, const Operands& x) {
  return BitResult(t, x[0] | x[1]);
}
AluWant Xor(ScalarType t, const Operands& x) {
  return BitResult(t, x[0] ^ x[1]);
}
AluWant Not(ScalarType t, const Operands& x) { return BitResult(t, ~x[0]); }
// Shift amounts are taken modulo the width.
AluWant Shl(ScalarType t, const Operands& x) {
  return BitResult(t, Bits(t, x[0]) << ShiftAmount(t, x[1]));
}
AluWant Shr(ScalarType t, const Operands& x) {
  return IntResult(t, A(t, x) >> ShiftAmount(t, x[1]));
}
AluWant Rotl(ScalarType t, const Operands& x) {
  const uint64_t a = Bits(t, x[0]);
  const uint32_t s = ShiftAmount(t, x[1]);
  if (s == 0) return BitResult(t, a);
  return BitResult(t, (a << s) | (a >> (Width(t) - s)));
}
AluWant Popcount(ScalarType t, const Operands& x) {
  return IntResult(t, std::popcount(Bits(t, x[0])));
}
AluWant Clz(ScalarType t, const Operands& x) {
  return IntResult(t, Width(t) - std::bit_width(Bits(t, x[0])));
}
AluWant Ctz(ScalarType t, const Operands& x) {
  const uint64_t a = Bits(t, x[0]);
  return IntResult(t, a == 0 ? Width(t) : std::countr_zero(a));
}
AluWant ReverseBits(ScalarType t, const Operands& x) {
  uint64_t r = 0;
  for (int i = 0; i < Width(t); ++i) {
    if ((x[0] >> i) & 1) r |= 1ull << (Width(t) - 1 - i);
  }
  return BitResult(t, r);
}

// Comparisons: ordered float comparisons are false with a NaN, ne true.
template <typename Cmp>
AluWant Compare(ScalarType t, const Operands& x, Cmp cmp) {
  if (Float(t)) return Flag(cmp(FA(t, x), FB(t, x)));
  return Flag(cmp(A(t, x), B(t, x)));
}
AluWant Eq(ScalarType t, const Operands& x) {
  return Compare(t, x, [](auto a, auto b) { return a == b; });
}
AluWant Ne(ScalarType t, const Operands& x) {
  return Compare(t, x, [](auto a, auto b) { return !(a == b); });
}
AluWant Lt(ScalarType t, const Operands& x) {
  return Compare(t, x, [](auto a, auto b) { return a < b; });
}
AluWant Le(ScalarType t, const Operands& x) {
  return Compare(t, x, [](auto a, auto b) { return a <= b; });
}
AluWant Gt(ScalarType t, const Operands& x) {
  return Compare(t, x, [](auto a, auto b) { return a > b; });
}
AluWant Ge(ScalarType t, const Operands& x) {
  return Compare(t, x, [](auto a, auto b) { return a >= b; });
}
AluWant IsNan(ScalarType t, const Operands& x) {
  return Flag(std::isnan(FA(t, x)));
}
AluWant IsInf(ScalarType t, const Operands& x) {
  return Flag(std::isinf(FA(t, x)));
}
AluWant IsFinite(ScalarType t, const Operands& x) {
  return Flag(std::isfinite(FA(t, x)));
}
AluWant SignBit(ScalarType t, const Operands& x) {
  return Flag((x[0] & testing::SignBit(t)) != 0);
}
// select.T d, c, a, b: the register of a or b, unchanged.
AluWant Select(ScalarType t, const Operands& x) {
  return Mov(t, {static_cast<uint32_t>(x[0]) != 0 ? x[1] : x[2]});
}

struct AluCase {
  const char* mnemonic;
  Reference reference;
};

const AluCase kCases[] = {
    {"mov", Mov},
    {"add", Add},
    {"sub", Sub},
    {"mul", Mul},
    {"div", Div},
    {"rem", Rem},
    {"mulhi", MulHi},
    {"fma", Fma},
    {"mad", Mad},
    {"min", Min},
    {"max", Max},
    {"abs", Abs},
    {"neg", Neg},
    {"absdiff", AbsDiff},
    {"addsat", AddSat},
    {"subsat", SubSat},
    {"hadd", HAdd},
    {"rhadd", RHAdd},
    {"and", And},
    {"or", Or},
    {"xor", Xor},
    {"not", Not},
    {"shl", Shl},
    {"shr", Shr},
    {"rotl", Rotl},
    {"popcount", Popcount},
    {"clz", Clz},
    {"ctz", Ctz},
    {"reverse_bits", ReverseBits},
    {"eq", Eq},
    {"ne", Ne},
    {"lt", Lt},
    {"le", Le},
    {"gt", Gt},
    {"ge", Ge},
    {"isnan", IsNan},
    {"isinf", IsInf},
    {"isfinite", IsFinite},
    {"signbit", SignBit},
    {"select", Select},
};

// The instructions the sweep of `c` runs: its opcode at every type the
// opcode table allows.
std::vector<std::string> SweepInstructions(const AluCase& c) {
  const std::optional<isa::Opcode> op = isa::OpcodeFromMnemonic(c.mnemonic);
  if (!op) return {};
  return testing::InstructionsAtEveryType(*op);
}

// Every combination of the sources' edge values, then random ones.
std::vector<Operands> SweepInputs(const AluOp& op) {
  std::vector<std::vector<uint64_t>> edges;
  for (ScalarType t : op.sources) {
    const bool condition = op.op == isa::Opcode::kSelect && edges.empty();
    edges.push_back(
        condition ? std::vector<uint64_t>{0, 1, 2, 0x80000000u, 0xffffffffu}
                  : testing::EdgeValues(t));
  }
  return testing::CombineInputs(op, edges, 300);
}

// How gtest names a parameter in messages.
void PrintTo(const AluCase& c, std::ostream* os) { *os << c.mnemonic; }

class AluSweep : public ::testing::TestWithParam<AluCase> {};

TEST_P(AluSweep, MatchesTheReferenceAtEveryTypeAndMask) {
  const AluCase& c = GetParam();
  const std::vector<std::string> texts = SweepInstructions(c);
  ASSERT_FALSE(texts.empty()) << c.mnemonic << " is not an opcode";
  for (const std::string& text : texts) {
    Result<AluOp> op = testing::ParseAluOp(text);
    ASSERT_TRUE(op.ok()) << op.error().message;
    const std::vector<Operands> inputs = SweepInputs(op.value());
    const ScalarType t = op.value().type;
    const auto reference = [&](const Operands& x) { return c.reference(t, x); };
    for (bool skip_odd : {false, true}) {
      testing::CheckAlu(op.value(), inputs, reference, skip_odd);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Every, AluSweep, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<AluCase>& info) {
                           return std::string(info.param.mnemonic);
                         });

// Adding an opcode (or a type to one) without a reference here fails.
TEST(AluCoverage, SweepCoversEveryAluOpcodeAtEveryType) {
  std::set<std::string> expected;
  for (int i = 0; i < isa::kNumOpcodes; ++i) {
    const auto op = static_cast<isa::Opcode>(i);
    if (!testing::IsAluOpcode(op) || testing::IsFloatMathOpcode(op)) continue;
    for (const std::string& text : testing::InstructionsAtEveryType(op)) {
      expected.insert(text);
    }
  }
  std::set<std::string> covered;
  for (const AluCase& c : kCases) {
    for (const std::string& text : SweepInstructions(c)) {
      Result<AluOp> op = testing::ParseAluOp(text);
      ASSERT_TRUE(op.ok()) << op.error().message;
      covered.insert(text);
    }
  }
  EXPECT_EQ(covered, expected);
  std::cout << "[ alu      ] " << covered.size()
            << " (opcode, type) pairs swept\n";
}

// --- hand-computed cases -----------------------------------------------------

constexpr uint64_t kI32Min = 0x80000000u;
constexpr uint64_t kI32Max = 0x7fffffffu;
constexpr uint64_t kI64Min = 0x8000000000000000ull;
constexpr uint64_t kI64Max = 0x7fffffffffffffffull;
constexpr uint64_t kAll32 = 0xffffffffu;
constexpr uint64_t kAll64 = ~0ull;

uint64_t F32(float f) { return std::bit_cast<uint32_t>(f); }
// Bits of half/bfloat values that are exact in those formats.
uint64_t F16(double d) { return testing::RoundToFloat(ScalarType::kHalf, d); }
uint64_t BF16(double d) {
  return testing::RoundToFloat(ScalarType::kBFloat, d);
}

// The float-format reference itself, against constants from the IEEE 754
// and bfloat16 encodings and against the compiler's double -> float.
TEST(AluReference, FloatFormatsMatchKnownEncodings) {
  EXPECT_EQ(F16(1.0), 0x3c00u);
  EXPECT_EQ(F16(-2.0), 0xc000u);
  EXPECT_EQ(F16(65504.0), 0x7bffu);
  EXPECT_EQ(F16(65520.0), 0x7c00u);  // the halfway case overflows
  EXPECT_EQ(F16(std::ldexp(1.0, -24)), 0x0001u);
  EXPECT_EQ(F16(std::ldexp(1.0, -25)), 0x0000u);  // halfway to even 0
  EXPECT_EQ(F16(std::ldexp(3.0, -26)), 0x0001u);
  EXPECT_EQ(F16(2049.0), 0x6800u);  // 2048: ties to even
  EXPECT_EQ(F16(2051.0), 0x6802u);  // 2052
  EXPECT_EQ(BF16(1.0), 0x3f80u);
  EXPECT_EQ(BF16(257.0), 0x4380u);  // 256
  EXPECT_EQ(F32(1.0f), testing::RoundToFloat(ScalarType::kFloat, 1.0));
  EXPECT_EQ(testing::CanonicalNaN(ScalarType::kHalf), 0x7e00u);
  EXPECT_EQ(testing::CanonicalNaN(ScalarType::kBFloat), 0x7fc0u);
  EXPECT_EQ(testing::CanonicalNaN(ScalarType::kFloat), 0x7fc00000u);
  EXPECT_EQ(testing::MaxBelowOne(ScalarType::kHalf), 0x3bffu);
  EXPECT_EQ(testing::RoundIntToFloat(ScalarType::kFloat, 16777217),
            F32(16777216.0f));
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const double d = std::bit_cast<double>(rng());
    if (std::isnan(d)) continue;
    ASSERT_EQ(testing::RoundToFloat(ScalarType::kFloat, d),
              F32(static_cast<float>(d)))
        << d;
    const uint64_t h = rng() & 0xffff;
    if (!testing::IsNaNBits(ScalarType::kHalf, h)) {
      ASSERT_EQ(F16(FloatValue(ScalarType::kHalf, h)), h);
    }
    const int64_t n = static_cast<int64_t>(rng()) >> (rng() % 64);
    ASSERT_EQ(testing::RoundIntToFloat(ScalarType::kFloat, n),
              F32(static_cast<float>(n)))
        << n;
  }
}

TEST(AluEdges, IntegerArithmeticWrapsAtEveryWidth) {
  ExpectAluRows("add.i8",
                {{{127, 1}, 0xffffff80u}, {{0xff, 0xff}, 0xfffffffeu}});
  ExpectAluRows("add.u8", {{{255, 1}, 0}, {{200, 100}, 44}});
  ExpectAluRows("add.i16", {{{32767, 1}, 0xffff8000u}});
  ExpectAluRows("add.u16", {{{65535, 2}, 1}});
  ExpectAluRows("add.i32", {{{kI32Max, 1}, kI32Min}});
  ExpectAluRows("add.u32", {{{kAll32, 1}, 0}});
  ExpectAluRows("add.i64", {{{kI64Max, 1}, kI64Min}});
  ExpectAluRows("add.u64", {{{kAll64, 1}, 0}, {{kAll32, 1}, 0x100000000ull}});
  ExpectAluRows("sub.u8", {{{0, 1}, 0xff}});
  ExpectAluRows("sub.i8", {{{0x80, 1}, 0x7f}});
  ExpectAluRows("sub.u64", {{{0, 1}, kAll64}});
  ExpectAluRows("mul.i8", {{{16, 16}, 0}, {{0x80, 0xff}, 0xffffff80u}});
  ExpectAluRows("mul.u16", {{{256, 256}, 0}, {{255, 257}, 0xffff}});
  ExpectAluRows("mul.i32", {{{65536, 65536}, 0}, {{kI32Min, kAll32}, kI32Min}});
  ExpectAluRows("mul.u64", {{{1ull << 32, 1ull << 32}, 0}});
  ExpectAluRows("mad.i16", {{{200, 200, 1}, 0xffff9c41u}});  // 40001 wraps
  ExpectAluRows("neg.i8", {{{0x80}, 0xffffff80u}});
  ExpectAluRows("abs.i32", {{{kI32Min}, kI32Min}, {{kAll32}, 1}});
  ExpectAluRows("abs.i8", {{{0x80}, 0xffffff80u}});
  ExpectAluRows("abs.i64", {{{kI64Min}, kI64Min}});
}

TEST(AluEdges, DivisionAndRemainderByZeroAndOverflow) {
  ExpectAluRows("div.i32", {{{7, 0}, kAll32},
                            {{kI32Min, kAll32}, kI32Min},
                            {{0xfffffff9u, 2}, 0xfffffffdu},  // -7 / 2 = -3
                            {{7, 0xfffffffeu}, 0xfffffffdu}});
  ExpectAluRows("div.u32", {{{7, 0}, kAll32}, {{kAll32, 2}, kI32Max}});
  ExpectAluRows("div.i8", {{{0x80, 0xff}, 0xffffff80u}, {{5, 0}, kAll32}});
  ExpectAluRows("div.u8", {{{5, 0}, 0xff}});
  ExpectAluRows("div.i16", {{{0x8000, 0xffff}, 0xffff8000u}});
  ExpectAluRows("div.u16", {{{5, 0}, 0xffff}});
  ExpectAluRows("div.i64", {{{kI64Min, kAll64}, kI64Min}, {{1, 0}, kAll64}});
  ExpectAluRows("div.u64", {{{1, 0}, kAll64}});
  ExpectAluRows("rem.i32", {{{7, 0}, 7},
                            {{0xfffffff9u, 0}, 0xfffffff9u},
                            {{kI32Min, kAll32}, 0},
                            {{0xfffffff9u, 2}, kAll32},  // -7 % 2 = -1
                            {{7, 0xfffffffeu}, 1}});
  ExpectAluRows("rem.u32", {{{7, 0}, 7}, {{kAll32, 10}, 5}});
  ExpectAluRows("rem.i8", {{{0x80, 0xff}, 0}, {{0x80, 0}, 0xffffff80u}});
  ExpectAluRows("rem.i64", {{{kI64Min, kAll64}, 0}, {{kI64Min, 0}, kI64Min}});
  ExpectAluRows("rem.u64", {{{kAll64, 0}, kAll64}});
}

TEST(AluEdges, ShiftAmountsAreModuloTheWidth) {
  ExpectAluRows("shl.i32", {{{1, 31}, kI32Min},
                            {{1, 32}, 1},
                            {{1, 33}, 2},
                            {{1, kAll32}, kI32Min}});  // -1 -> 31
  ExpectAluRows("shr.i32", {{{0xfffffff8u, 1}, 0xfffffffcu},
                            {{kI32Min, 31}, kAll32},
                            {{kI32Min, 32}, kI32Min}});
  ExpectAluRows("shr.u32", {{{kI32Min, 31}, 1}, {{kI32Min, 63}, 1}});
  ExpectAluRows("shl.i8",
                {{{1, 7}, 0xffffff80u}, {{1, 8}, 1}, {{3, 0xff}, 0xffffff80u}});
  ExpectAluRows("shl.u8", {{{1, 7}, 0x80}, {{0x81, 1}, 0x02}});
  ExpectAluRows("shr.i8", {{{0x80, 7}, kAll32}, {{0x80, 8}, 0xffffff80u}});
  ExpectAluRows("shr.u8", {{{0x80, 7}, 1}, {{0x80, 9}, 0x40}});
  ExpectAluRows("shl.i16", {{{1, 15}, 0xffff8000u}, {{1, 16}, 1}});
  ExpectAluRows("shr.u16", {{{0x8000, 15}, 1}, {{0x8000, 17}, 0x4000}});
  ExpectAluRows("shl.u64", {{{1, 63}, kI64Min}, {{1, 64}, 1}, {{1, 65}, 2}});
  ExpectAluRows("shr.i64", {{{kI64Min, 63}, kAll64}, {{kI64Min, 64}, kI64Min}});
  ExpectAluRows("shr.u64", {{{kI64Min, 63}, 1}});
  ExpectAluRows("rotl.u32", {{{0x80000001u, 1}, 3},
                             {{0x12345678u, 32}, 0x12345678u},
                             {{0x12345678u, 4}, 0x23456781u}});
  ExpectAluRows("rotl.u8", {{{0x81, 1}, 0x03}, {{0x81, 9}, 0x03}});
  ExpectAluRows("rotl.i8", {{{0x81, 4}, 0x18}, {{0x18, 4}, 0xffffff81u}});
  ExpectAluRows("rotl.u16", {{{0x8001, 1}, 3}});
  ExpectAluRows("rotl.u64", {{{kI64Min | 1, 1}, 3}, {{kI64Min, 64}, kI64Min}});
}

TEST(AluEdges, BitCountsIncludingZeroAndAllOnes) {
  ExpectAluRows("popcount.u32", {{{0}, 0}, {{kAll32}, 32}, {{0x80000001u}, 2}});
  ExpectAluRows("popcount.i8", {{{0xff}, 8}, {{0x80}, 1}});
  ExpectAluRows("popcount.u64", {{{kAll64}, 64}, {{0}, 0}});
  ExpectAluRows("clz.u32", {{{0}, 32}, {{1}, 31}, {{kAll32}, 0}});
  ExpectAluRows("clz.i16", {{{0xffff}, 0}, {{0}, 16}, {{1}, 15}});
  ExpectAluRows("clz.u8", {{{0}, 8}, {{1}, 7}});
  ExpectAluRows("clz.u64", {{{0}, 64}, {{1}, 63}});
  ExpectAluRows("ctz.u32", {{{0}, 32}, {{kI32Min}, 31}, {{kAll32}, 0}});
  ExpectAluRows("ctz.i8", {{{0}, 8}, {{0x80}, 7}});
  ExpectAluRows("ctz.i64", {{{0}, 64}, {{kI64Min}, 63}});
  ExpectAluRows("reverse_bits.u32", {{{1}, kI32Min},
                                     {{0}, 0},
                                     {{kAll32}, kAll32},
                                     {{0x12345678u}, 0x1e6a2c48u}});
  ExpectAluRows("reverse_bits.i8", {{{1}, 0xffffff80u}, {{0xff}, kAll32}});
  ExpectAluRows("reverse_bits.u16", {{{1}, 0x8000}, {{0x00ff}, 0xff00}});
  ExpectAluRows("reverse_bits.u64", {{{1}, kI64Min}, {{kAll64}, kAll64}});
  ExpectAluRows("not.u8", {{{0}, 0xff}});
  ExpectAluRows("not.i8", {{{0}, kAll32}});
}

TEST(AluEdges, MulHiSignedAndUnsigned) {
  ExpectAluRows("mulhi.u32",
                {{{kAll32, kAll32}, 0xfffffffeu}, {{kI32Min, 2}, 1}});
  ExpectAluRows("mulhi.i32", {{{kAll32, kAll32}, 0},
                              {{kI32Min, kI32Min}, 0x40000000u},
                              {{kI32Min, kI32Max}, 0xc0000000u},
                              {{kAll32, 1}, kAll32}});
  ExpectAluRows("mulhi.u64",
                {{{kAll64, kAll64}, kAll64 - 1}, {{kI64Min, 2}, 1}});
  ExpectAluRows("mulhi.i64", {{{kI64Min, kI64Min}, 1ull << 62},
                              {{kAll64, 1}, kAll64},
                              {{kI64Min, kI64Max}, 0xc000000000000000ull}});
  ExpectAluRows("mulhi.u8", {{{255, 255}, 254}});
  ExpectAluRows("mulhi.i8", {{{0x80, 0x80}, 64}, {{0x80, 0x7f}, 0xffffffc0u}});
  ExpectAluRows("mulhi.u16", {{{0xffff, 0xffff}, 0xfffe}});
}

TEST(AluEdges, SaturatingAndHalvingArithmetic) {
  ExpectAluRows("addsat.i8", {{{100, 100}, 127}, {{0x9c, 0x9c}, 0xffffff80u}});
  ExpectAluRows("addsat.u8", {{{200, 100}, 255}});
  ExpectAluRows("subsat.u8", {{{10, 20}, 0}});
  ExpectAluRows("subsat.i8", {{{0x9c, 100}, 0xffffff80u}, {{100, 0x9c}, 127}});
  ExpectAluRows("addsat.i16", {{{0x7fff, 1}, 0x7fff}});
  ExpectAluRows("subsat.u16", {{{0, 1}, 0}});
  ExpectAluRows("addsat.i32",
                {{{kI32Max, 1}, kI32Max}, {{kI32Min, kAll32}, kI32Min}});
  ExpectAluRows("subsat.i32",
                {{{kI32Min, 1}, kI32Min}, {{0, kI32Min}, kI32Max}});
  ExpectAluRows("addsat.u32", {{{kAll32, 1}, kAll32}});
  ExpectAluRows("subsat.u32", {{{0, 1}, 0}});
  ExpectAluRows("addsat.i64",
                {{{kI64Max, 1}, kI64Max}, {{kI64Min, kAll64}, kI64Min}});
  ExpectAluRows("subsat.i64",
                {{{kI64Max, kAll64}, kI64Max}, {{0, kI64Min}, kI64Max}});
  ExpectAluRows("addsat.u64", {{{kAll64, 1}, kAll64}});
  ExpectAluRows("subsat.u64", {{{0, 1}, 0}});
  ExpectAluRows("hadd.i32", {{{kI32Max, kI32Max}, kI32Max},
                             {{kAll32, 0}, kAll32},
                             {{kI32Min, kI32Min}, kI32Min}});
  ExpectAluRows("rhadd.i32", {{{kAll32, 0}, 0}, {{kI32Max, kI32Max}, kI32Max}});
  ExpectAluRows("hadd.u32",
                {{{kAll32, kAll32}, kAll32}, {{kAll32, 0}, kI32Max}});
  ExpectAluRows("rhadd.u32", {{{kAll32, 0}, kI32Min}});
  ExpectAluRows("hadd.u8", {{{255, 1}, 128}});
  ExpectAluRows("rhadd.u8", {{{255, 0}, 128}});
  ExpectAluRows("hadd.i64",
                {{{kI64Min, kI64Min}, kI64Min}, {{kI64Max, kI64Max}, kI64Max}});
  ExpectAluRows("rhadd.u64", {{{kAll64, kAll64}, kAll64}});
  ExpectAluRows("absdiff.i32",
                {{{kI32Min, kI32Max}, kAll32}, {{5, 0xfffffffbu}, 10}});
  ExpectAluRows("absdiff.u32", {{{0, kAll32}, kAll32}});
  ExpectAluRows("absdiff.i8", {{{0x80, 0x7f}, kAll32}});  // 255 as i8 bits
  ExpectAluRows("absdiff.u64", {{{0, kAll64}, kAll64}});
}

TEST(AluEdges, FloatMinMaxReturnTheOtherOperandForNaN) {
  const uint64_t nan = F32(NAN);
  ExpectAluRows("min.f32", {{{nan, F32(1)}, F32(1)},
                            {{F32(1), nan}, F32(1)},
                            {{nan, F32(-INFINITY)}, F32(-INFINITY)}});
  ExpectAluRows("max.f32",
                {{{nan, F32(-1)}, F32(-1)}, {{F32(2), nan}, F32(2)}});
  ExpectAluRows("min.f16",
                {{{0x7e00, F16(1)}, F16(1)}, {{F16(-3), 0xfe00}, F16(-3)}});
  ExpectAluRows("max.bf16", {{{0x7fc0, BF16(1)}, BF16(1)}});
  Result<std::vector<uint64_t>> both = RunAlu("min.f32", {{nan, nan}});
  ASSERT_TRUE(both.ok()) << both.error().message;
  EXPECT_TRUE(
      std::isnan(std::bit_cast<float>(static_cast<uint32_t>(both.value()[0]))));
}

TEST(AluEdges, FloatComparisonsWithNaNAreFalseExceptNe) {
  for (const char* type : {"f32", "f16", "bf16"}) {
    const ScalarType t = *isa::ScalarTypeFromIsaSuffix(type);
    const uint64_t nan = testing::CanonicalNaN(t);
    const uint64_t one = testing::RoundToFloat(t, 1.0);
    for (const char* cmp : {"eq", "lt", "le", "gt", "ge", "ne"}) {
      const uint64_t want = std::string(cmp) == "ne" ? 1 : 0;
      ExpectAluRows(
          std::string(cmp) + "." + type,
          {{{nan, one}, want}, {{one, nan}, want}, {{nan, nan}, want}});
    }
    const uint64_t zero = 0;
    const uint64_t minus_zero = testing::SignBit(t);
    ExpectAluRows(std::string("eq.") + type, {{{zero, minus_zero}, 1}});
    ExpectAluRows(std::string("lt.") + type, {{{minus_zero, zero}, 0}});
    ExpectAluRows(std::string("le.") + type, {{{minus_zero, zero}, 1}});
  }
}

TEST(AluEdges, SelectCopiesTheChosenRegister) {
  ExpectAluRows("select.f32", {{{1, F32(NAN), F32(1)}, F32(NAN)},
                               {{0, F32(1), F32(-0.0f)}, F32(-0.0f)},
                               {{0x80000000u, 5, 6}, 5}});
  ExpectAluRows("select.i8", {{{2, 0x80, 1}, 0xffffff80u}});
  ExpectAluRows("select.u64", {{{0, 1, kAll64}, kAll64}});
  ExpectAluRows("select.b8", {{{1, 1, 0}, 1}, {{0, 1, 0}, 0}});
  ExpectAluRows("mov.f16", {{{0x7e01}, 0x7e01}, {{0x8000}, 0x8000}});
}

// fma rounds once: a * b + c where the product alone would round away the
// answer, and halfway cases of half and bfloat that rounding the exact
// result to float first would break.
TEST(AluEdges, FmaRoundsOnce) {
  const float e = std::ldexp(1.0f, -23);
  // (1 + 2^-23)(1 - 2^-23) - 1 = -2^-46 exactly; a product rounded to float
  // first gives 0.
  ExpectAluRows("fma.f32", {{{F32(1 + e), F32(1 - e), F32(-1)},
                             F32(std::ldexp(-1.0f, -46))}});
  EXPECT_EQ(std::fma(1.0 + e, 1.0 - e, -1.0), std::ldexp(-1.0, -46));
  // 1.333984375 * 1.5 = 2 + 2^-10, halfway between the halves 2 and
  // 2 + 2^-9; + 2^-24 puts it above: 2 + 2^-9. (In float the sum is the
  // halfway value, which rounds to even 2.)
  ExpectAluRows(
      "fma.f16",
      {{{F16(1.333984375), F16(1.5), F16(std::ldexp(1.0, -24))},
        F16(2.001953125)},
       {{F16(1.333984375), F16(1.5), F16(-std::ldexp(1.0, -24))}, F16(2.0)}});
  // 1.75 * 1.15625 = 2 + 3 * 2^-7, halfway between the bfloats 2 + 2^-6 and
  // 2 + 2^-5; - 2^-60 puts it below: 2 + 2^-6.
  ExpectAluRows("fma.bf16",
                {{{BF16(1.75), BF16(1.15625), BF16(-std::ldexp(1.0, -60))},
                  BF16(2.015625)},
                 {{BF16(1.75), BF16(1.15625), BF16(std::ldexp(1.0, -60))},
                  BF16(2.03125)}});
}

TEST(AluEdges, HalfAndBFloatRoundToNearestEvenAndOverflowToInf) {
  ExpectAluRows("add.f16",
                {{{F16(2048), F16(1)}, F16(2048)},  // 2049: tie
                 {{F16(2050), F16(1)}, F16(2052)},  // 2051: tie
                 {{F16(65504), F16(16)}, 0x7c00},   // 65520: tie
                 {{F16(65504), F16(8)}, F16(65504)},
                 {{F16(std::ldexp(1.0, -24)), F16(std::ldexp(1.0, -24))},
                  F16(std::ldexp(1.0, -23))}});
  ExpectAluRows("mul.f16", {{{F16(256), F16(256)}, 0x7c00},
                            {{F16(-256), F16(256)}, 0xfc00},
                            {{F16(std::ldexp(1.0, -14)), F16(0.5)}, 0x0200},
                            {{F16(std::ldexp(1.0, -24)), F16(0.5)}, 0x0000}});
  ExpectAluRows("sub.f16", {{{F16(1), F16(std::ldexp(1.0, -12))}, F16(1)}});
  ExpectAluRows("add.bf16", {{{BF16(256), BF16(1)}, BF16(256)},
                             {{BF16(258), BF16(1)}, BF16(260)}});
  ExpectAluRows("mul.bf16", {{{0x7f7f, BF16(2)}, 0x7f80}});
  ExpectAluRows("div.f16", {{{F16(1), F16(3)}, 0x3555}});  // 0.33325
}

TEST(AluEdges, FloatSpecialValues) {
  const uint64_t nan = 0x7fc00000u;
  ExpectAluRows("div.f32", {{{F32(1), F32(0)}, F32(INFINITY)},
                            {{F32(-1), F32(0)}, F32(-INFINITY)},
                            {{F32(1), F32(-0.0f)}, F32(-INFINITY)},
                            {{F32(0), F32(0)}, nan}});
  // Denormals are kept, not flushed.
  ExpectAluRows("mul.f32", {{{F32(std::ldexp(1.0f, -126)), F32(0.5f)},
                             F32(std::ldexp(1.0f, -127))},
                            {{F32(INFINITY), F32(0)}, nan}});
  ExpectAluRows("add.f32", {{{F32(INFINITY), F32(-INFINITY)}, nan},
                            {{0x7fc00123u, F32(1)}, nan},  // canonical NaN
                            {{F32(-0.0f), F32(-0.0f)}, F32(-0.0f)},
                            {{F32(-0.0f), F32(0.0f)}, F32(0.0f)}});
  ExpectAluRows("add.f16", {{{0x7e01, F16(1)}, 0x7e00}});
  ExpectAluRows("add.bf16", {{{0x7fc1, BF16(1)}, 0x7fc0}});
  ExpectAluRows("sub.f16", {{{0x7c00, 0x7c00}, 0x7e00}});
  ExpectAluRows("neg.f32", {{{F32(0)}, F32(-0.0f)}});
  ExpectAluRows("abs.f16", {{{0x8000}, 0}, {{0xfc00}, 0x7c00}});
  ExpectAluRows("isnan.f16", {{{0x7c01}, 1}, {{0x7c00}, 0}});
  ExpectAluRows("isinf.bf16", {{{0xff80}, 1}, {{0x7f7f}, 0}});
  ExpectAluRows("isfinite.f32",
                {{{F32(INFINITY)}, 0}, {{0x00000001u}, 1}, {{nan}, 0}});
  ExpectAluRows("signbit.f32",
                {{{F32(-0.0f)}, 1}, {{0xffc00000u}, 1}, {{F32(0)}, 0}});
}

// The sweep's kernels run every op in SIMD groups cut short by the grid; this
// one has a single threadgroup of 39 threads, whose last SIMD group has 7.
TEST(AluMasks, LastSimdGroupOfSevenThreads) {
  std::vector<Operands> inputs;
  for (uint32_t i = 0; i < 39; ++i) inputs.push_back({i * 1000003u, i + 7});
  AluRunOptions options;
  options.threadgroup_width = 39;
  for (bool skip : {false, true}) {
    options.skip_odd_threads = skip;
    Result<std::vector<uint64_t>> got = RunAlu("mul.u32", inputs, options);
    ASSERT_TRUE(got.ok()) << got.error().message;
    for (uint32_t i = 0; i < 39; ++i) {
      const uint64_t want = skip && i % 2
                                ? testing::kAluSentinel & 0xffffffffu
                                : (i * 1000003u) * (i + 7) & 0xffffffffu;
      EXPECT_EQ(got.value()[i], want)
          << "thread " << i << (skip ? " skip" : "");
    }
  }
}

}  // namespace
}  // namespace mtlemu
