#include "cli/buffer_spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace mtlemu::cli {
namespace {

using isa::ScalarType;

::testing::AssertionResult Contains(const std::string& s,
                                    const std::string& part) {
  if (s.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << s << "' does not contain '" << part << "'";
}

// Parses a --buffer argument that must be a generated buffer.
GeneratedBuffer Generated(const std::string& arg) {
  Result<BufferSpec> r = ParseBufferSpec(arg);
  EXPECT_TRUE(r.ok()) << arg << ": " << r.error().message;
  if (!r.ok()) return {};
  EXPECT_TRUE(std::holds_alternative<GeneratedBuffer>(r.value().source));
  return std::get<GeneratedBuffer>(r.value().source);
}

std::vector<uint8_t> Make(const std::string& arg) {
  return MaterializeBuffer(Generated(arg));
}

// Element i of little-endian `bytes` with elements of `size` bytes.
uint64_t Element(const std::vector<uint8_t>& bytes, int size, size_t i) {
  uint64_t v = 0;
  for (int b = size - 1; b >= 0; --b) v = (v << 8) | bytes[i * size + b];
  return v;
}

std::string BufferError(const std::string& arg) {
  Result<BufferSpec> r = ParseBufferSpec(arg);
  return r.ok() ? "" : r.error().message;
}

// One value of `type` from ParseScalarValue, as an integer; fails the test
// if it does not parse.
uint64_t Value(ScalarType type, const std::string& text) {
  Result<std::vector<uint8_t>> r = ParseScalarValue(type, text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.error().message;
  if (!r.ok()) return 0;
  EXPECT_EQ(r.value().size(), static_cast<size_t>(isa::SizeOf(type)));
  return Element(r.value(), isa::SizeOf(type), 0);
}

std::string ValueError(ScalarType type, const std::string& text) {
  Result<std::vector<uint8_t>> r = ParseScalarValue(type, text);
  return r.ok() ? "" : r.error().message;
}

// SplitMix64's published outputs for seed 0.
constexpr uint64_t kSplitMix0[] = {0xe220a8397b1dcdafu, 0x6e789e6aa1b965f4u,
                                   0x06c45d188009454fu};

TEST(ParseBufferSpecTest, NpyPath) {
  Result<BufferSpec> r = ParseBufferSpec("3=data/in=1.npy");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().index, 3);
  ASSERT_TRUE(std::holds_alternative<NpyBuffer>(r.value().source));
  EXPECT_EQ(std::get<NpyBuffer>(r.value().source).path, "data/in=1.npy");

  r = ParseBufferSpec("30=/tmp/X.NPY");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().index, 30);
  EXPECT_EQ(std::get<NpyBuffer>(r.value().source).path, "/tmp/X.NPY");
}

TEST(ParseBufferSpecTest, Generators) {
  GeneratedBuffer g = Generated("0=float[16]:zeros");
  EXPECT_EQ(g.type, ScalarType::kFloat);
  EXPECT_EQ(g.count, 16u);
  EXPECT_EQ(g.generator, GeneratorKind::kZeros);

  g = Generated("1=ushort[0x10]:iota");
  EXPECT_EQ(g.type, ScalarType::kUShort);
  EXPECT_EQ(g.count, 16u);
  EXPECT_EQ(g.generator, GeneratorKind::kIota);

  g = Generated("2=half[3]:fill(1.5)");
  EXPECT_EQ(g.generator, GeneratorKind::kFill);
  EXPECT_EQ(g.fill_value, (std::vector<uint8_t>{0x00, 0x3e}));

  g = Generated("4=bfloat[1]:random(0xDEADbeef)");
  EXPECT_EQ(g.type, ScalarType::kBFloat);
  EXPECT_EQ(g.generator, GeneratorKind::kRandom);
  EXPECT_EQ(g.seed, 0xdeadbeefu);

  g = Generated("5=ulong[1]:random(18446744073709551615)");
  EXPECT_EQ(g.seed, UINT64_MAX);

  // uninit: zeros, but marked as never written (for --check init).
  g = Generated("6=int[3]:uninit");
  EXPECT_EQ(g.generator, GeneratorKind::kUninit);
  Result<BufferData> data = LoadBufferData(g);
  ASSERT_TRUE(data.ok());
  EXPECT_TRUE(data.value().uninitialized);
  EXPECT_EQ(data.value().bytes, std::vector<uint8_t>(12, 0));
  data = LoadBufferData(Generated("6=int[3]:zeros"));
  ASSERT_TRUE(data.ok());
  EXPECT_FALSE(data.value().uninitialized);
}

TEST(ParseBufferSpecTest, Errors) {
  EXPECT_EQ(BufferError("3=floot[16]:zeros"),
            "--buffer '3=floot[16]:zeros': unknown type 'floot' (expected one "
            "of bool, char, uchar, short, ushort, int, uint, long, ulong, "
            "half, bfloat, float)");
  EXPECT_EQ(BufferError("31=float[16]:zeros"),
            "--buffer '31=float[16]:zeros': buffer index '31' is out of range "
            "(expected 0..30)");
  EXPECT_EQ(BufferError("99999999999999999999999=a.npy"),
            "--buffer '99999999999999999999999=a.npy': buffer index "
            "'99999999999999999999999' is out of range (expected 0..30)");
  EXPECT_EQ(BufferError("-1=a.npy"),
            "--buffer '-1=a.npy': buffer index '-1' is not an integer "
            "(expected 0..30)");
  EXPECT_EQ(BufferError("=a.npy"),
            "--buffer '=a.npy': buffer index '' is not an integer (expected "
            "0..30)");
  EXPECT_EQ(BufferError("a.npy"), "--buffer 'a.npy': expected INDEX=SPEC");
  EXPECT_EQ(BufferError("0=a.txt"),
            "--buffer '0=a.txt': expected a path ending in .npy or "
            "TYPE[COUNT]:GEN, got 'a.txt'");
  EXPECT_EQ(BufferError("0=.npy"),
            "--buffer '0=.npy': expected a path ending in .npy or "
            "TYPE[COUNT]:GEN, got '.npy'");
  EXPECT_EQ(BufferError("0=float[0]:zeros"),
            "--buffer '0=float[0]:zeros': count must be positive, got 0");
  EXPECT_EQ(BufferError("0=float[-3]:zeros"),
            "--buffer '0=float[-3]:zeros': count '-3' is not a positive "
            "integer");
  EXPECT_EQ(BufferError("0=float[]:zeros"),
            "--buffer '0=float[]:zeros': count '' is not a positive integer");
  EXPECT_EQ(BufferError("0=float[16:zeros"),
            "--buffer '0=float[16:zeros': missing ']' after the count in "
            "TYPE[COUNT]");
  EXPECT_EQ(BufferError("0=float[16]zeros"),
            "--buffer '0=float[16]zeros': expected ':' and a generator after "
            "'float[16]'");
  EXPECT_EQ(BufferError("0=float[16]:ones"),
            "--buffer '0=float[16]:ones': unknown generator 'ones' (expected "
            "zeros, uninit, iota, fill(V) or random(SEED))");
  EXPECT_EQ(BufferError("0=float[16]:fill(1"),
            "--buffer '0=float[16]:fill(1': unknown generator 'fill(1' "
            "(expected zeros, uninit, iota, fill(V) or random(SEED))");
  EXPECT_EQ(BufferError("0=uchar[4]:fill(256)"),
            "--buffer '0=uchar[4]:fill(256)': fill value: '256' is out of "
            "range for uchar (0..255)");
  EXPECT_EQ(BufferError("0=float[4]:fill()"),
            "--buffer '0=float[4]:fill()': fill value: '' is not a number "
            "(expected e.g. 1.5, -2e3, 0x1p-4, inf, nan)");
  EXPECT_EQ(BufferError("0=int[4]:random(x)"),
            "--buffer '0=int[4]:random(x)': seed 'x' is not a 64-bit unsigned "
            "integer");
  EXPECT_EQ(BufferError("0=int[4]:random(-1)"),
            "--buffer '0=int[4]:random(-1)': seed '-1' is not a 64-bit "
            "unsigned integer");
  EXPECT_EQ(BufferError("0=float[1073741825]:zeros"),
            "--buffer '0=float[1073741825]:zeros': count '1073741825' of float "
            "exceeds the limit of 4294967296 bytes");
  EXPECT_TRUE(Contains(BufferError("0=float[99999999999999999999]:zeros"),
                       "exceeds the limit"));
  // The largest allowed count parses (it is not materialized here).
  EXPECT_EQ(BufferError("0=float[1073741824]:zeros"), "");
}

TEST(ParseBufferSourceTest, SpecAloneWithoutTheOption) {
  Result<BufferSource> r = ParseBufferSource("x.npy");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(std::get<NpyBuffer>(r.value()).path, "x.npy");
  r = ParseBufferSource("half[8]:iota");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(std::get<GeneratedBuffer>(r.value()).type, ScalarType::kHalf);
  EXPECT_EQ(std::get<GeneratedBuffer>(r.value()).count, 8u);
  r = ParseBufferSource("float[0]:zeros");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "count must be positive, got 0");
}

TEST(LoadBufferDataTest, GeneratedHasItsCountAsShape) {
  Result<BufferSource> source = ParseBufferSource("ushort[3]:iota");
  ASSERT_TRUE(source.ok());
  Result<BufferData> data = LoadBufferData(source.value());
  ASSERT_TRUE(data.ok()) << data.error().message;
  EXPECT_EQ(data.value().type, ScalarType::kUShort);
  EXPECT_EQ(data.value().shape, std::vector<uint64_t>{3});
  EXPECT_EQ(data.value().bytes, (std::vector<uint8_t>{0, 0, 1, 0, 2, 0}));
  Result<BufferData> missing = LoadBufferData(NpyBuffer{"/nonexistent.npy"});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.error().message, "/nonexistent.npy"));
}

TEST(MaterializeTest, Zeros) {
  EXPECT_EQ(Make("0=int[3]:zeros"), std::vector<uint8_t>(12, 0));
  EXPECT_EQ(Make("0=bool[2]:zeros"), std::vector<uint8_t>(2, 0));
}

TEST(MaterializeTest, IotaIntegersWrap) {
  const std::vector<uint8_t> u8 = Make("0=uchar[300]:iota");
  ASSERT_EQ(u8.size(), 300u);
  EXPECT_EQ(u8[0], 0);
  EXPECT_EQ(u8[255], 255);
  EXPECT_EQ(u8[256], 0);
  EXPECT_EQ(u8[299], 43);

  const std::vector<uint8_t> i8 = Make("0=char[201]:iota");
  EXPECT_EQ(i8[127], 0x7f);
  EXPECT_EQ(i8[128], 0x80);  // -128
  EXPECT_EQ(i8[200], 0xc8);  // -56

  const std::vector<uint8_t> i16 = Make("0=short[3]:iota");
  EXPECT_EQ(i16, (std::vector<uint8_t>{0, 0, 1, 0, 2, 0}));

  const std::vector<uint8_t> i64 = Make("0=long[2]:iota");
  EXPECT_EQ(i64, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 0,  //
                                       1, 0, 0, 0, 0, 0, 0, 0}));

  EXPECT_EQ(Make("0=bool[3]:iota"), (std::vector<uint8_t>{0, 1, 1}));
}

TEST(MaterializeTest, IotaFloats) {
  const std::vector<uint8_t> f = Make("0=float[3]:iota");
  EXPECT_EQ(Element(f, 4, 0), 0x00000000u);
  EXPECT_EQ(Element(f, 4, 1), 0x3f800000u);
  EXPECT_EQ(Element(f, 4, 2), 0x40000000u);

  const std::vector<uint8_t> h = Make("0=half[65521]:iota");
  EXPECT_EQ(Element(h, 2, 1), 0x3c00u);
  EXPECT_EQ(Element(h, 2, 2), 0x4000u);
  EXPECT_EQ(Element(h, 2, 2049), 0x6800u);   // 2049 ties to even: 2048
  EXPECT_EQ(Element(h, 2, 2051), 0x6802u);   // 2051 ties to even: 2052
  EXPECT_EQ(Element(h, 2, 65519), 0x7bffu);  // 65504, the largest half
  EXPECT_EQ(Element(h, 2, 65520), 0x7c00u);  // rounds up to inf

  const std::vector<uint8_t> b = Make("0=bfloat[260]:iota");
  EXPECT_EQ(Element(b, 2, 1), 0x3f80u);
  EXPECT_EQ(Element(b, 2, 3), 0x4040u);
  EXPECT_EQ(Element(b, 2, 257), 0x4380u);  // ties to even: 256
  EXPECT_EQ(Element(b, 2, 259), 0x4382u);  // ties to even: 260
}

TEST(MaterializeTest, Fill) {
  EXPECT_EQ(Make("0=half[2]:fill(1.5)"),
            (std::vector<uint8_t>{0x00, 0x3e, 0x00, 0x3e}));
  EXPECT_EQ(
      Make("0=int[2]:fill(-2)"),
      (std::vector<uint8_t>{0xfe, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff}));
  EXPECT_EQ(Make("0=bool[3]:fill(true)"), (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(Make("0=float[1]:fill(-0)"), (std::vector<uint8_t>{0, 0, 0, 0x80}));
}

TEST(MaterializeTest, RandomMatchesSplitMix64) {
  // Independent reference: SplitMix64's outputs for seed 0, mapped as the
  // header documents.
  const std::vector<uint8_t> u = Make("0=ulong[3]:random(0)");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Element(u, 8, i), kSplitMix0[i] % 101) << i;
  }
  EXPECT_EQ(Element(u, 8, 0), 67u);

  const std::vector<uint8_t> s = Make("0=int[3]:random(0)");
  EXPECT_EQ(static_cast<int32_t>(Element(s, 4, 0)), -30);
  EXPECT_EQ(static_cast<int32_t>(Element(s, 4, 1)), -52);
  EXPECT_EQ(static_cast<int32_t>(Element(s, 4, 2)), 21);

  const std::vector<uint8_t> f = Make("0=float[3]:random(0)");
  for (int i = 0; i < 3; ++i) {
    const float expected =
        static_cast<float>(kSplitMix0[i] >> 40) / 8388608.0f - 1.0f;
    EXPECT_EQ(Element(f, 4, i), std::bit_cast<uint32_t>(expected)) << i;
  }
  EXPECT_EQ(std::bit_cast<float>(static_cast<uint32_t>(Element(f, 4, 0))),
            0.7666215896606445f);

  EXPECT_EQ(Make("0=bool[3]:random(0)"), (std::vector<uint8_t>{1, 0, 0}));
}

TEST(MaterializeTest, RandomIsDeterministicAndSeedDependent) {
  for (const char* type :
       {"bool", "char", "uchar", "short", "ushort", "int", "uint", "long",
        "ulong", "half", "bfloat", "float"}) {
    const std::string spec = std::string("0=") + type + "[256]:random(";
    EXPECT_EQ(Make(spec + "7)"), Make(spec + "7)")) << type;
    EXPECT_NE(Make(spec + "7)"), Make(spec + "8)")) << type;
  }
}

TEST(MaterializeTest, RandomRanges) {
  constexpr size_t kN = 20000;
  {
    const std::vector<uint8_t> v = Make("0=char[20000]:random(1)");
    std::set<int> seen;
    for (uint8_t b : v) seen.insert(static_cast<int8_t>(b));
    EXPECT_EQ(seen.size(), 201u);
    EXPECT_EQ(*seen.begin(), -100);
    EXPECT_EQ(*seen.rbegin(), 100);
  }
  {
    const std::vector<uint8_t> v = Make("0=uint[20000]:random(2)");
    std::set<uint64_t> seen;
    for (size_t i = 0; i < kN; ++i) seen.insert(Element(v, 4, i));
    EXPECT_EQ(seen.size(), 101u);
    EXPECT_EQ(*seen.begin(), 0u);
    EXPECT_EQ(*seen.rbegin(), 100u);
  }
  {
    const std::vector<uint8_t> v = Make("0=long[20000]:random(3)");
    for (size_t i = 0; i < kN; ++i) {
      const int64_t x = static_cast<int64_t>(Element(v, 8, i));
      ASSERT_GE(x, -100);
      ASSERT_LE(x, 100);
    }
  }
  {
    const std::vector<uint8_t> v = Make("0=bool[20000]:random(4)");
    size_t ones = 0;
    for (uint8_t b : v) {
      ASSERT_LE(b, 1);
      ones += b;
    }
    EXPECT_GT(ones, kN * 45 / 100);
    EXPECT_LT(ones, kN * 55 / 100);
  }
  {
    const std::vector<uint8_t> v = Make("0=float[20000]:random(5)");
    double sum = 0;
    float lo = 1, hi = -1;
    for (size_t i = 0; i < kN; ++i) {
      const float x =
          std::bit_cast<float>(static_cast<uint32_t>(Element(v, 4, i)));
      ASSERT_GE(x, -1.0f);
      ASSERT_LT(x, 1.0f);
      sum += x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    EXPECT_LT(std::abs(sum / kN), 0.05);
    EXPECT_LT(lo, -0.99f);
    EXPECT_GT(hi, 0.99f);
  }
  {
    // half and bfloat: in [-1, 1] (rounding may reach 1.0), sign mixed.
    for (const char* spec :
         {"0=half[20000]:random(6)", "0=bfloat[20000]:random(6)"}) {
      const std::vector<uint8_t> v = Make(spec);
      size_t negative = 0;
      for (size_t i = 0; i < kN; ++i) {
        const uint64_t bits = Element(v, 2, i);
        const uint64_t one = spec[2] == 'h' ? 0x3c00 : 0x3f80;
        ASSERT_LE(bits & 0x7fff, one) << spec << " " << i;
        negative += bits >> 15;
      }
      EXPECT_GT(negative, kN * 45 / 100) << spec;
      EXPECT_LT(negative, kN * 55 / 100) << spec;
    }
  }
}

TEST(ParseScalarValueTest, Integers) {
  EXPECT_EQ(Value(ScalarType::kUChar, "255"), 255u);
  EXPECT_EQ(Value(ScalarType::kUChar, "0xff"), 255u);
  EXPECT_EQ(Value(ScalarType::kChar, "-128"), 0x80u);
  EXPECT_EQ(Value(ScalarType::kChar, "127"), 0x7fu);
  EXPECT_EQ(Value(ScalarType::kShort, "0x7FFF"), 0x7fffu);
  EXPECT_EQ(Value(ScalarType::kShort, "-0x8000"), 0x8000u);
  EXPECT_EQ(Value(ScalarType::kShort, "+5"), 5u);
  EXPECT_EQ(Value(ScalarType::kUShort, "65535"), 0xffffu);
  EXPECT_EQ(Value(ScalarType::kInt, "-1"), 0xffffffffu);
  EXPECT_EQ(Value(ScalarType::kInt, "-2147483648"), 0x80000000u);
  EXPECT_EQ(Value(ScalarType::kUInt, "4294967295"), 0xffffffffu);
  EXPECT_EQ(Value(ScalarType::kUInt, "-0"), 0u);
  EXPECT_EQ(Value(ScalarType::kUInt, "007"), 7u);
  EXPECT_EQ(Value(ScalarType::kLong, "-9223372036854775808"),
            0x8000000000000000u);
  EXPECT_EQ(Value(ScalarType::kLong, "9223372036854775807"),
            0x7fffffffffffffffu);
  EXPECT_EQ(Value(ScalarType::kULong, "0xffffffffffffffff"), UINT64_MAX);
  EXPECT_EQ(Value(ScalarType::kULong, "18446744073709551615"), UINT64_MAX);

  EXPECT_EQ(ValueError(ScalarType::kUChar, "256"),
            "'256' is out of range for uchar (0..255)");
  EXPECT_EQ(ValueError(ScalarType::kChar, "-129"),
            "'-129' is out of range for char (-128..127)");
  EXPECT_EQ(ValueError(ScalarType::kShort, "0x8000"),
            "'0x8000' is out of range for short (-32768..32767)");
  EXPECT_EQ(ValueError(ScalarType::kUInt, "-1"),
            "'-1' is out of range for uint (0..4294967295)");
  EXPECT_EQ(ValueError(ScalarType::kLong, "9223372036854775808"),
            "'9223372036854775808' is out of range for long "
            "(-9223372036854775808..9223372036854775807)");
  EXPECT_EQ(ValueError(ScalarType::kULong, "18446744073709551616"),
            "'18446744073709551616' is out of range for ulong "
            "(0..18446744073709551615)");
  for (const char* bad :
       {"", "-", "0x", "1.5", " 1", "1 ", "abc", "0x1g", "--1", "1e3"}) {
    EXPECT_TRUE(Contains(ValueError(ScalarType::kInt, bad),
                         "is not an integer (expected decimal or 0x hex)"))
        << bad;
  }
}

TEST(ParseScalarValueTest, Bool) {
  EXPECT_EQ(Value(ScalarType::kBool, "true"), 1u);
  EXPECT_EQ(Value(ScalarType::kBool, "1"), 1u);
  EXPECT_EQ(Value(ScalarType::kBool, "false"), 0u);
  EXPECT_EQ(Value(ScalarType::kBool, "0"), 0u);
  for (const char* bad : {"yes", "True", "2", "", "01"}) {
    EXPECT_EQ(ValueError(ScalarType::kBool, bad),
              "'" + std::string(bad) +
                  "' is not a bool (expected true, false, 0 or 1)");
  }
}

TEST(ParseScalarValueTest, Floats) {
  EXPECT_EQ(Value(ScalarType::kFloat, "1.5"), 0x3fc00000u);
  EXPECT_EQ(Value(ScalarType::kFloat, "-0"), 0x80000000u);
  EXPECT_EQ(Value(ScalarType::kFloat, "1e-3"), 0x3a83126fu);
  EXPECT_EQ(Value(ScalarType::kFloat, "0x1.8p1"), 0x40400000u);
  EXPECT_EQ(Value(ScalarType::kFloat, "inf"), 0x7f800000u);
  EXPECT_EQ(Value(ScalarType::kFloat, "-infinity"), 0xff800000u);
  EXPECT_EQ(Value(ScalarType::kFloat, "1e-50"), 0u);  // underflows to 0
  const uint64_t nan = Value(ScalarType::kFloat, "nan");
  EXPECT_EQ(nan & 0x7f800000u, 0x7f800000u);
  EXPECT_NE(nan & 0x007fffffu, 0u);

  EXPECT_EQ(Value(ScalarType::kHalf, "1.5"), 0x3e00u);
  EXPECT_EQ(Value(ScalarType::kHalf, "-2"), 0xc000u);
  EXPECT_EQ(Value(ScalarType::kHalf, "65504"), 0x7bffu);
  EXPECT_EQ(Value(ScalarType::kHalf, "0.1"), 0x2e66u);
  EXPECT_EQ(Value(ScalarType::kHalf, "-0"), 0x8000u);
  EXPECT_EQ(Value(ScalarType::kHalf, "inf"), 0x7c00u);
  EXPECT_EQ(Value(ScalarType::kHalf, "0x1p-24"), 0x0001u);  // subnormal
  EXPECT_EQ(Value(ScalarType::kHalf, "nan") & 0x7c00u, 0x7c00u);

  EXPECT_EQ(Value(ScalarType::kBFloat, "1.5"), 0x3fc0u);
  EXPECT_EQ(Value(ScalarType::kBFloat, "-1"), 0xbf80u);
  EXPECT_EQ(Value(ScalarType::kBFloat, "3.140625"), 0x4049u);
  EXPECT_EQ(Value(ScalarType::kBFloat, "-inf"), 0xff80u);

  // Rounded once, as the assembler rounds its literals: 1 + 2^-11 + 2^-30
  // lies just above the tie between the halves 1 and 1 + 2^-10 (so rounds
  // up), but rounds to the tie itself as a float (whose tie rounds to
  // even, down); likewise 1 + 2^-8 + 2^-30 for bfloat.
  EXPECT_EQ(Value(ScalarType::kHalf, "1.000488282181322574615478515625"),
            0x3c01u);
  EXPECT_EQ(Value(ScalarType::kHalf, "-1.000488282181322574615478515625"),
            0xbc01u);
  EXPECT_EQ(Value(ScalarType::kBFloat, "1.003906250931322574615478515625"),
            0x3f81u);
  EXPECT_EQ(Value(ScalarType::kHalf, "1.00048828125"), 0x3c00u);  // the tie

  EXPECT_EQ(ValueError(ScalarType::kFloat, "1e39"),
            "'1e39' is out of range for float");
  EXPECT_EQ(ValueError(ScalarType::kHalf, "70000"),
            "'70000' is out of range for half");
  EXPECT_EQ(ValueError(ScalarType::kHalf, "65520"),
            "'65520' is out of range for half");
  EXPECT_EQ(ValueError(ScalarType::kBFloat, "3.4e38"),
            "'3.4e38' is out of range for bfloat");
  for (const char* bad : {"", " 1", "1 ", "1.5x", "one", "1,5", "--1"}) {
    EXPECT_EQ(ValueError(ScalarType::kFloat, bad),
              "'" + std::string(bad) +
                  "' is not a number (expected e.g. 1.5, -2e3, 0x1p-4, inf, "
                  "nan)");
  }
}

TEST(ParseBytesSpecTest, Values) {
  Result<BytesSpec> r = ParseBytesSpec("2=float:1.5,-2");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().index, 2);
  EXPECT_EQ(r.value().type, ScalarType::kFloat);
  EXPECT_EQ(r.value().bytes, (std::vector<uint8_t>{0x00, 0x00, 0xc0, 0x3f, 0x00,
                                                   0x00, 0x00, 0xc0}));

  // Packed with no padding.
  r = ParseBytesSpec("0=ushort:1,0x203,65535");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().bytes, (std::vector<uint8_t>{1, 0, 3, 2, 0xff, 0xff}));

  r = ParseBytesSpec("30=half:1.5");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().bytes, (std::vector<uint8_t>{0x00, 0x3e}));

  // Exactly 4096 bytes is allowed.
  std::string many = "0=float:0";
  for (int i = 1; i < 1024; ++i) many += ",0";
  r = ParseBytesSpec(many);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().bytes.size(), 4096u);
}

TEST(ParseBytesSpecTest, Errors) {
  auto error = [](const std::string& arg) {
    Result<BytesSpec> r = ParseBytesSpec(arg);
    return r.ok() ? "" : r.error().message;
  };
  EXPECT_EQ(error("0=int:1,,2"),
            "--bytes '0=int:1,,2': value 2 is empty (expected "
            "INDEX=TYPE:V[,V...])");
  EXPECT_EQ(error("0=int:"),
            "--bytes '0=int:': value 1 is empty (expected "
            "INDEX=TYPE:V[,V...])");
  EXPECT_EQ(error("0=int:1,"),
            "--bytes '0=int:1,': value 2 is empty (expected "
            "INDEX=TYPE:V[,V...])");
  EXPECT_EQ(error("0=uchar:1,300"),
            "--bytes '0=uchar:1,300': value 2: '300' is out of range for "
            "uchar (0..255)");
  EXPECT_EQ(error("0=int"), "--bytes '0=int': expected INDEX=TYPE:V[,V...]");
  EXPECT_EQ(error("int:1"), "--bytes 'int:1': expected INDEX=TYPE:V[,V...]");
  EXPECT_EQ(error("0=integer:1"),
            "--bytes '0=integer:1': unknown type 'integer' (expected one of "
            "bool, char, uchar, short, ushort, int, uint, long, ulong, half, "
            "bfloat, float)");
  EXPECT_EQ(error("31=int:1"),
            "--bytes '31=int:1': buffer index '31' is out of range (expected "
            "0..30)");
  std::string many = "0=float:0";
  for (int i = 1; i < 1025; ++i) many += ",0";
  EXPECT_TRUE(Contains(error(many),
                       "1025 float values (4100 bytes) exceed setBytes' limit "
                       "of 4096 bytes"));
  std::string bytes = "0=uchar:0";
  for (int i = 1; i < 4097; ++i) bytes += ",0";
  EXPECT_TRUE(Contains(error(bytes), "exceed setBytes' limit of 4096 bytes"));
}

TEST(ParseThreadgroupMemorySpecTest, ValuesAndErrors) {
  Result<ThreadgroupMemorySpec> r = ParseThreadgroupMemorySpec("1=1024");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().index, 1);
  EXPECT_EQ(r.value().length, 1024u);

  r = ParseThreadgroupMemorySpec("30=0");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().index, 30);
  EXPECT_EQ(r.value().length, 0u);

  auto error = [](const std::string& arg) {
    Result<ThreadgroupMemorySpec> e = ParseThreadgroupMemorySpec(arg);
    return e.ok() ? "" : e.error().message;
  };
  EXPECT_EQ(error("31=16"),
            "--threadgroup-memory '31=16': threadgroup memory index '31' is "
            "out of range (expected 0..30)");
  EXPECT_EQ(error("0=-4"),
            "--threadgroup-memory '0=-4': length '-4' is not a non-negative "
            "integer");
  EXPECT_EQ(error("0="),
            "--threadgroup-memory '0=': length '' is not a non-negative "
            "integer");
  EXPECT_EQ(error("0=99999999999999999999"),
            "--threadgroup-memory '0=99999999999999999999': length "
            "'99999999999999999999' does not fit in 64 bits");
  EXPECT_EQ(error("1024"), "--threadgroup-memory '1024': expected INDEX=BYTES");
}

TEST(ParseSize3Test, Values) {
  auto size = [](const std::string& arg) {
    Result<Size3> r = ParseSize3("--grid", arg);
    EXPECT_TRUE(r.ok()) << arg << ": " << r.error().message;
    return r.ok() ? std::vector<uint32_t>{r.value().x, r.value().y, r.value().z}
                  : std::vector<uint32_t>{};
  };
  EXPECT_EQ(size("64"), (std::vector<uint32_t>{64, 1, 1}));
  EXPECT_EQ(size("4,8"), (std::vector<uint32_t>{4, 8, 1}));
  EXPECT_EQ(size("1,2,3"), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(size("0x10,1"), (std::vector<uint32_t>{16, 1, 1}));
  EXPECT_EQ(size("4294967295"), (std::vector<uint32_t>{4294967295u, 1, 1}));
}

TEST(ParseSize3Test, Errors) {
  auto error = [](const std::string& option, const std::string& arg) {
    Result<Size3> r = ParseSize3(option, arg);
    return r.ok() ? "" : r.error().message;
  };
  EXPECT_EQ(error("--grid", "4,0"),
            "--grid '4,0': component 2 (y) '0' is not a positive integer");
  EXPECT_EQ(error("--groups", "4,8,5000000000"),
            "--groups '4,8,5000000000': component 3 (z) '5000000000' does not "
            "fit in 32 bits");
  EXPECT_EQ(error("--threadgroup", "4294967296"),
            "--threadgroup '4294967296': component 1 (x) '4294967296' does "
            "not fit in 32 bits");
  EXPECT_EQ(error("--grid", "99999999999999999999"),
            "--grid '99999999999999999999': component 1 (x) "
            "'99999999999999999999' does not fit in 32 bits");
  EXPECT_EQ(error("--grid", "1,2,3,4"),
            "--grid '1,2,3,4': expected X[,Y[,Z]] (at most 3 components), got "
            "4");
  EXPECT_EQ(error("--grid", ""),
            "--grid '': component 1 (x) '' is not a positive integer");
  EXPECT_EQ(error("--grid", "1,,2"),
            "--grid '1,,2': component 2 (y) '' is not a positive integer");
  EXPECT_EQ(error("--grid", "8,"),
            "--grid '8,': component 2 (y) '' is not a positive integer");
  EXPECT_EQ(error("--grid", "-1"),
            "--grid '-1': component 1 (x) '-1' is not a positive integer");
  EXPECT_EQ(error("--grid", "2x2"),
            "--grid '2x2': component 1 (x) '2x2' is not a positive integer");
}

}  // namespace
}  // namespace mtlemu::cli

namespace mtlemu::cli {
namespace {

TEST(FunctionConstantSpec, ParsesNameOrIndexAndChecksTheValue) {
  Result<std::pair<std::string, std::string>> by_name =
      ParseFunctionConstant("scale=float:2.5");
  ASSERT_TRUE(by_name.ok()) << by_name.error().message;
  EXPECT_EQ(by_name.value().first, "scale");
  EXPECT_EQ(by_name.value().second, "2.5");
  Result<std::pair<std::string, std::string>> by_index =
      ParseFunctionConstant("3=bool:true");
  ASSERT_TRUE(by_index.ok());
  EXPECT_EQ(by_index.value().first, "3");
  EXPECT_FALSE(ParseFunctionConstant("x=int:2.5").ok());
  EXPECT_FALSE(ParseFunctionConstant("x=floot:1").ok());
  EXPECT_FALSE(ParseFunctionConstant("x").ok());
  EXPECT_FALSE(ParseFunctionConstant("=int:1").ok());
}

}  // namespace
}  // namespace mtlemu::cli
