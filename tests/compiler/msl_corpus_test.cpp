// The MSL corpus (tests/compiler/msl_corpus/*.metal): each kernel is
// compiled from its file, run on inputs generated here, and every output
// element is compared with a reference computed in plain C++ (in double
// where rounding matters).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "compiler/msl_compiler.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using testing::KernelHarness;
using testing::Runs;

// --- helpers -----------------------------------------------------------------

std::string ReadCorpusFile(const std::string& name) {
  const std::string path =
      std::string(MTLEMU_TEST_DATA_DIR "/compiler/msl_corpus/") + name +
      ".metal";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Compiles corpus file NAME.metal, lowering only `kernel`.
KernelHarness CompileCorpus(const std::string& name, const std::string& kernel,
                            const msl::CompileOptions& options = {}) {
  return KernelHarness(compiler::CompileMsl(ReadCorpusFile(name),
                                            name + ".metal", options, {kernel}),
                       kernel);
}

// Reports the first few mismatches of a comparison loop and the total, so a
// broken kernel does not print thousands of lines.
class Mismatches {
 public:
  explicit Mismatches(std::string what) : what_(std::move(what)) {}
  Mismatches(const Mismatches&) = delete;
  Mismatches& operator=(const Mismatches&) = delete;
  ~Mismatches() {
    if (count_ > kShown) {
      ADD_FAILURE() << what_ << ": " << count_ << " mismatches in all";
    }
  }
  // `describe` is called only on a mismatch.
  void Check(bool ok, const std::function<std::string()>& describe) {
    if (ok) return;
    if (count_ < kShown) ADD_FAILURE() << what_ << ": " << describe();
    ++count_;
  }
  int count() const { return count_; }
  // Elements from `from` on (guards after the output) still hold `sentinel`.
  template <class T>
  void CheckGuards(const std::vector<T>& v, size_t from,
                   std::type_identity_t<T> sentinel) {
    for (size_t k = from; k < v.size(); ++k) {
      Check(v[k] == sentinel,
            [&] { return "guard element " + std::to_string(k) + " written"; });
    }
  }

 private:
  static constexpr int kShown = 12;
  std::string what_;
  int count_ = 0;
};

template <class... Args>
std::string Str(const Args&... args) {
  std::ostringstream s;
  s.precision(9);
  (s << ... << args);
  return s.str();
}

// IEEE half bits <-> double (only exactly representable values are
// encoded; the tests build half inputs from such values).
double HalfToDouble(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 31, mantissa = h & 1023;
  double v;
  if (exponent == 0) {
    v = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    v = mantissa ? NAN : INFINITY;
  } else {
    v = std::ldexp(1024 + mantissa, exponent - 25);
  }
  return sign ? -v : v;
}

uint16_t ExactHalf(double v) {
  if (v == 0) return std::signbit(v) ? 0x8000 : 0;
  const uint16_t sign = v < 0 ? 0x8000 : 0;
  int e;
  std::frexp(std::fabs(v), &e);  // |v| = m * 2^e, m in [0.5, 1)
  const int biased = e + 14;
  EXPECT_TRUE(biased >= 1 && biased <= 30) << v << " is not a normal half";
  const double scaled = std::ldexp(std::fabs(v), 11 - e);  // in [1024, 2048)
  EXPECT_EQ(scaled, std::floor(scaled)) << v << " is not exact in half";
  return sign | static_cast<uint16_t>(biased << 10) |
         static_cast<uint16_t>(static_cast<int>(scaled) - 1024);
}

// Round-toward-zero encoding of a double in the range of normal halves
// (for generating inputs; the references use the decoded value).
uint16_t TruncatedHalf(double v) {
  if (std::fabs(v) < std::ldexp(1.0, -14)) return 0;
  int e;
  std::frexp(std::fabs(v), &e);
  const double scaled = std::floor(std::ldexp(std::fabs(v), 11 - e));
  return ExactHalf(std::copysign(std::ldexp(scaled, e - 11), v));
}

// Error of `got` against the exact value `want`, in units in the last place
// of `want` in a binary format with `mantissa_bits` fraction bits and
// smallest normal exponent `min_exponent`.
double UlpError(double got, double want, int mantissa_bits, int min_exponent) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isnan(got) || std::isinf(got) || std::isinf(want)) {
    return got == want ? 0 : INFINITY;
  }
  int e = min_exponent + 1;
  if (want != 0) std::frexp(want, &e);  // want = m * 2^e, m in [0.5, 1)
  const int lead = std::max(e - 1, min_exponent);
  return std::fabs(got - want) / std::ldexp(1.0, lead - mantissa_bits);
}
double FloatUlps(float got, double want) {
  return UlpError(got, want, 23, -126);
}
double HalfUlps(uint16_t got, double want) {
  return UlpError(HalfToDouble(got), want, 10, -14);
}
double FloatUlpOf(double want) {
  int e = -125;
  if (want != 0) std::frexp(want, &e);
  return std::ldexp(1.0, std::max(e - 1, -126) - 23);
}

// Multiples of 1/8 in [-4, 4]: products and short sums of them are exact in
// float and half.
float Eighths(std::mt19937& rng, bool nonzero = false) {
  std::uniform_int_distribution<int> d(-32, 32);
  int k = d(rng);
  while (nonzero && k == 0) k = d(rng);
  return static_cast<float>(k) / 8.0f;
}

// --- 1. float4 and half4 vectors ---------------------------------------------

TEST(MslCorpus, Float4ArithmeticSwizzlesPackedFloat3AndMatrix) {
  KernelHarness h = CompileCorpus("vectors_float4", "float_vectors");
  constexpr uint32_t n = 64;
  std::mt19937 rng(1);
  std::vector<float> a(4 * n), b(4 * n), parts(4 * n), m(16);
  for (float& v : a) v = Eighths(rng);
  for (float& v : b) v = Eighths(rng, /*nonzero=*/true);
  for (float& v : parts) v = Eighths(rng);
  std::uniform_int_distribution<int> quarter(-8, 8);
  for (float& v : m) v = static_cast<float>(quarter(rng)) / 4.0f;
  h.SetBuffer(0, a);
  h.SetBuffer(1, b);
  h.SetBuffer(2, parts);  // {packed_float3 pos; float mass} per thread
  h.SetBytesRaw(3, m.data(), 16 * sizeof(float));  // float4x4: 4 columns
  h.SetBuffer(4, std::vector<float>(32 * n + 16, -777.0f));
  h.SetBuffer(5, std::vector<float>(3 * n + 8, -777.0f));
  ASSERT_TRUE(Runs(h, {n}, {32}));
  const std::vector<float> out = h.Read<float>(4);
  const std::vector<float> pout = h.Read<float>(5);

  Mismatches exact("float_vectors (exact results)");
  Mismatches approx("float_vectors (length, normalize, distance)");
  for (uint32_t i = 0; i < n; ++i) {
    double x[4], y[4];
    for (int c = 0; c < 4; ++c) {
      x[c] = a[4 * i + c];
      y[c] = b[4 * i + c];
    }
    double want[8][4];
    for (int c = 0; c < 4; ++c) {
      const double named[4] = {x[0], y[1], x[2], y[3]};
      const double named2[4] = {x[0], x[1], y[2], x[3]};
      want[0][c] = x[c] * y[c] + named[c] - named2[c] * 0.5;
    }
    {
      const double zyxw[4] = {x[2], x[1], x[0], y[3]};
      const double wzyx[4] = {y[3], y[2], y[1], y[0]};
      const double xxyy[4] = {x[0], x[0], x[1], x[1]};
      const double yyww[4] = {y[1], y[1], x[3], x[3]};
      for (int c = 0; c < 4; ++c) {
        want[1][c] = zyxw[c] + wzyx[c] * xxyy[c] - yyww[c];
      }
    }
    // v = x; v.xz = y.yw; v.rgb = v.bgr + (1, 2, 3); v.w = -v.w;
    // v.yx += (10, 20).
    want[2][0] = y[3] + 1 + 20;
    want[2][1] = x[1] + 2 + 10;
    want[2][2] = y[1] + 3;
    want[2][3] = -x[3];
    {
      const double c0[4] = {x[0], x[1], y[2], 1};
      const double c1[4] = {2, y[0], y[1], y[2]};
      const double c2[4] = {3, 3, x[2], x[3]};
      const double c3[4] = {y[3], x[3], 4, -1};
      for (int c = 0; c < 4; ++c) {
        want[3][c] = c0[c] + c1[c] + c2[c] + 0.5 + c3[c];
      }
    }
    const double dot4 = x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3];
    const double len_x3 = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    const double len_y4 =
        std::sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2] + y[3] * y[3]);
    const double len_y3 = std::sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
    const double dist = std::sqrt((x[0] - y[0]) * (x[0] - y[0]) +
                                  (x[1] - y[1]) * (x[1] - y[1]) +
                                  (x[2] - y[2]) * (x[2] - y[2]));
    want[4][0] = dot4;
    want[4][1] = len_x3;
    want[4][2] = x[0] * y[2] + x[1] * y[3];
    want[4][3] = len_y4;
    want[5][0] = y[0] / len_y3;
    want[5][1] = y[1] / len_y3;
    want[5][2] = y[2] / len_y3;
    want[5][3] = dist;
    for (int c = 0; c < 4; ++c) {
      want[6][c] = std::clamp(x[c], -1.0, 2.0) + (x[c] + (y[c] - x[c]) * 0.25) +
                   (x[c] < y[c] ? y[c] : x[c]) * 4;
      want[7][c] = 0;
      for (int k = 0; k < 4; ++k) want[7][c] += m[4 * k + c] * x[k];
    }
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 4; ++c) {
        const float got = out[32 * i + 4 * r + c];
        const auto describe = [&] {
          return Str("thread ", i, " o[", r, "].", "xyzw"[c], " = ", got,
                     ", want ", want[r][c]);
        };
        const bool approximate = (r == 4 && (c == 1 || c == 3)) || r == 5;
        if (approximate) {
          // sqrt, rsqrt and a division or two: a few float ulps.
          approx.Check(std::fabs(got - want[r][c]) <=
                           4 * FloatUlpOf(std::max(1.0, std::fabs(want[r][c]))),
                       describe);
        } else {
          exact.Check(got == want[r][c], describe);
        }
      }
    }
    const double pos[3] = {parts[4 * i], parts[4 * i + 1], parts[4 * i + 2]};
    const double mass = parts[4 * i + 3];
    const double want_p[3] = {pos[2] * mass + x[3], pos[0] * mass + pos[0],
                              pos[1] * mass + pos[1]};
    for (int c = 0; c < 3; ++c) {
      exact.Check(pout[3 * i + c] == want_p[c], [&] {
        return Str("thread ", i, " packed_float3 out[", c,
                   "] = ", pout[3 * i + c], ", want ", want_p[c]);
      });
    }
  }
  for (uint32_t k = 32 * n; k < out.size(); ++k) {
    exact.Check(out[k] == -777.0f, [&] { return Str("out[", k, "] written"); });
  }
  for (uint32_t k = 3 * n; k < pout.size(); ++k) {
    exact.Check(pout[k] == -777.0f, [&] {
      return Str("packed_float3 buffer element ", k,
                 " written (packed_float3 must be 12 bytes)");
    });
  }
}

TEST(MslCorpus, Half4ArithmeticAndSwizzles) {
  KernelHarness h = CompileCorpus("vectors_half4", "half_vectors");
  constexpr uint32_t n = 64;
  std::mt19937 rng(2);
  std::vector<double> a(4 * n), b(4 * n);
  std::vector<uint16_t> ah(4 * n), bh(4 * n);
  for (uint32_t k = 0; k < 4 * n; ++k) {
    a[k] = Eighths(rng);
    b[k] = Eighths(rng);
    ah[k] = ExactHalf(a[k]);
    bh[k] = ExactHalf(b[k]);
  }
  h.SetBuffer(0, ah);
  h.SetBuffer(1, bh);
  h.SetBuffer(2, std::vector<uint16_t>(24 * n + 8, 0x7c01));
  ASSERT_TRUE(Runs(h, {n}, {32}));
  const std::vector<uint16_t> out = h.Read<uint16_t>(2);
  Mismatches check("half_vectors");
  for (uint32_t i = 0; i < n; ++i) {
    const double* x = &a[4 * i];
    const double* y = &b[4 * i];
    double want[6][4];
    for (int c = 0; c < 4; ++c) {
      const double named[4] = {y[0], x[1], y[2], x[3]};
      want[0][c] = x[c] * y[c] + x[3 - c] - named[c];
      const double rgba[4] = {x[0], x[1], y[2], y[3]};
      const double xxyy[4] = {y[0], y[0], y[1], y[1]};
      const double ctor[4] = {1, x[2], x[1], x[0]};
      want[1][c] = rgba[c] * 2 - xxyy[c] + ctor[c];
      want[3][c] = std::clamp(x[c], -1.0, 1.5) + (x[c] + (y[c] - x[c]) * 0.5) +
                   (x[c] > y[c] ? x[c] : y[c]);
      const double fy[4] = {y[2], y[3], y[0], y[1]};
      want[5][c] = x[c] * 0.25 + fy[c];
    }
    // v = x; v.rgb = y.bgr; v.a += 1; v.yw = v.wy * (0.5, -2).
    const double v[4] = {y[2], y[1], y[0], x[3] + 1};
    want[2][0] = v[0];
    want[2][1] = v[3] * 0.5;
    want[2][2] = v[2];
    want[2][3] = v[1] * -2;
    want[4][0] = x[0] * y[0] + x[1] * y[1];
    want[4][1] = x[0] + x[1] + x[2] + x[3];
    want[4][2] = std::fabs(x[0]);
    want[4][3] = x[3];
    for (int r = 0; r < 6; ++r) {
      for (int c = 0; c < 4; ++c) {
        const uint16_t got = out[24 * i + 4 * r + c];
        check.Check(HalfToDouble(got) == want[r][c], [&] {
          return Str("thread ", i, " o[", r, "].", "xyzw"[c], " = ",
                     HalfToDouble(got), " (0x", std::hex, got, std::dec,
                     "), want ", want[r][c]);
        });
      }
    }
  }
  for (uint32_t k = 24 * n; k < out.size(); ++k) {
    check.Check(out[k] == 0x7c01, [&] { return Str("out[", k, "] written"); });
  }
}

// --- 2. templates ----------------------------------------------------------

TEST(MslCorpus, TemplateHelperAtThreeTypesAndOverloadsBesideMetal) {
  KernelHarness h = CompileCorpus("template_helpers", "template_helpers");
  constexpr uint32_t n = 33;
  std::vector<float> xf(n);
  std::vector<int32_t> xi(n);
  std::vector<uint16_t> xh(n);
  for (uint32_t i = 0; i < n; ++i) {
    xf[i] = -2.0f + static_cast<float>(i) / 8.0f;  // [-2, 2] in 1/8 steps
    xi[i] = static_cast<int32_t>(i) - 16;
    xh[i] = ExactHalf(xf[i]);
  }
  h.SetBuffer(0, xf);
  h.SetBuffer(1, xi);
  h.SetBuffer(2, xh);
  h.SetBuffer(3, std::vector<float>(3 * n));
  h.SetBuffer(4, std::vector<int32_t>(n));
  h.SetBuffer(5, std::vector<uint16_t>(n));
  ASSERT_TRUE(Runs(h, {n}, {32}));
  const std::vector<float> of = h.Read<float>(3);
  const std::vector<int32_t> oi = h.Read<int32_t>(4);
  const std::vector<uint16_t> oh = h.Read<uint16_t>(5);
  Mismatches check("template_helpers");
  for (uint32_t i = 0; i < n; ++i) {
    const double f = xf[i];
    const int64_t k = xi[i];
    const double poly_f = (3 * f + 2) * f - 7;  // exact in float and half
    const double want0 = poly_f + (f + 1 + 2);
    const int64_t want_i = (3 * k + 2) * k - 7 + (k + 5);
    const double want1 =
        std::max(f, 0.5) + (std::max({f, -f, static_cast<double>(k)}) + 1000);
    const double want2 = (std::fabs(f) + 2) + 5 * std::fabs(f);
    check.Check(of[3 * i] == want0, [&] {
      return Str("poly<float>(", f, ") + sum_of = ", of[3 * i], ", want ",
                 want0);
    });
    check.Check(oi[i] == want_i, [&] {
      return Str("poly<int>(", k, ") + sum_of = ", oi[i], ", want ", want_i);
    });
    check.Check(HalfToDouble(oh[i]) == poly_f, [&] {
      return Str("poly<half>(", f, ") = ", HalfToDouble(oh[i]), ", want ",
                 poly_f);
    });
    check.Check(of[3 * i + 1] == want1, [&] {
      return Str("max(f, 0.5) + user max(f, -f, i) at f=", f, " i=", k, ": ",
                 of[3 * i + 1], ", want ", want1);
    });
    check.Check(std::fabs(of[3 * i + 2] - want2) <= 2 * FloatUlpOf(want2), [&] {
      return Str("user length(Pt) + metal::length(float2) at ", f, ": ",
                 of[3 * i + 2], ", want ", want2);
    });
  }
}

TEST(MslCorpus, FunctionPointerTemplateParameter) {
  KernelHarness h =
      CompileCorpus("template_function_pointer", "function_pointer_template");
  constexpr uint32_t n = 33;
  std::vector<float> in(n);
  for (uint32_t i = 0; i < n; ++i) {
    in[i] = -2.0f + static_cast<float>(i) / 8.0f;
  }
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<float>(3 * n));
  ASSERT_TRUE(Runs(h, {n}, {32}));
  const std::vector<float> out = h.Read<float>(1);
  Mismatches check("function_pointer_template");
  for (uint32_t i = 0; i < n; ++i) {
    const double x = in[i];
    const auto sq1 = [](double v) { return v * v + 1; };
    const double want[3] = {4 * x, sq1(sq1(x)), 8 * x + sq1(x)};
    for (int r = 0; r < 3; ++r) {
      check.Check(out[3 * i + r] == want[r], [&] {
        return Str("x=", x, " result ", r, ": ", out[3 * i + r], ", want ",
                   want[r]);
      });
    }
  }
}

// --- 3. exclusive scan -------------------------------------------------------

TEST(MslCorpus, ExclusiveScanWithSimdPrefixSums) {
  // Threadgroups of 256 and of 96 threads; the grid is not a multiple of
  // either, so the last threadgroup is partial (77 threads).
  for (const uint32_t group : {256u, 96u}) {
    SCOPED_TRACE(Str("threadgroup ", group));
    KernelHarness h = CompileCorpus("exclusive_scan", "exclusive_scan");
    const uint32_t n = 3072 + 77;
    std::vector<int32_t> in(n);
    for (uint32_t i = 0; i < n; ++i) {
      in[i] = static_cast<int32_t>((i * 7919u) % 101u) - 50;
    }
    h.SetBuffer(0, in);
    h.SetBuffer(1, std::vector<int32_t>(n + 32, 12345));
    h.SetBuffer(2, std::vector<int32_t>(n + 32, 12345));
    ASSERT_TRUE(Runs(h, {n}, {group}));
    const std::vector<int32_t> simd_scan = h.Read<int32_t>(1);
    const std::vector<int32_t> out = h.Read<int32_t>(2);
    Mismatches check("exclusive_scan");
    int32_t running = 0, simd_running = 0;
    for (uint32_t i = 0; i < n; ++i) {
      // Threadgroup sizes are multiples of 32: SIMD groups start at
      // multiples of 32 in the grid.
      if (i % 32 == 0) simd_running = 0;
      check.Check(simd_scan[i] == simd_running, [&] {
        return Str("simd_prefix_exclusive_sum at ", i, ": ", simd_scan[i],
                   ", want ", simd_running);
      });
      check.Check(out[i] == running, [&] {
        return Str("exclusive scan at ", i, ": ", out[i], ", want ", running);
      });
      running += in[i];
      simd_running += in[i];
    }
    for (uint32_t i = n; i < n + 32; ++i) {
      check.Check(out[i] == 12345 && simd_scan[i] == 12345,
                  [&] { return Str("element ", i, " past the end written"); });
    }
  }
}

// --- 4. transpose
// --------------------------------------------------------------

TEST(MslCorpus, TransposeThroughPaddedThreadgroupTile) {
  const std::pair<uint32_t, uint32_t> shapes[] = {
      {50, 37}, {33, 70}, {16, 16}, {1, 20}, {17, 1}};
  for (const auto& [cols, rows] : shapes) {
    SCOPED_TRACE(Str(rows, " x ", cols));
    KernelHarness h = CompileCorpus("transpose_tile", "transpose_tile");
    std::vector<uint32_t> in(cols * rows);
    for (uint32_t y = 0; y < rows; ++y) {
      for (uint32_t x = 0; x < cols; ++x) {
        in[y * cols + x] = (y << 16) ^ (x * 2654435761u);
      }
    }
    constexpr uint32_t kGuard = 40, kSentinel = 0xdeadbeef;
    h.SetBuffer(0, in);
    h.SetBuffer(1, std::vector<uint32_t>(cols * rows + kGuard, kSentinel));
    const uint32_t dims[2] = {cols, rows};
    h.SetBytes(2, dims);
    ASSERT_TRUE(h.DispatchThreadgroups({(cols + 15) / 16, (rows + 15) / 16, 1},
                                       {16, 16, 1})
                    .ok());
    ASSERT_EQ(h.error(), nullptr) << h.error()->message;
    const std::vector<uint32_t> out = h.Read<uint32_t>(1);
    Mismatches check("transpose_tile");
    for (uint32_t y = 0; y < rows; ++y) {
      for (uint32_t x = 0; x < cols; ++x) {
        // out is cols x rows: out[x][y] = in[y][x].
        check.Check(out[x * rows + y] == in[y * cols + x], [&] {
          return Str("out[", x, "][", y, "] = ", out[x * rows + y], ", want ",
                     in[y * cols + x]);
        });
      }
    }
    check.CheckGuards(out, cols * rows, kSentinel);
  }
}

// --- 5. tiled matrix multiply ------------------------------------------------

// C[r][c] of A (M x K) times B (K x N), both row-major, in double, and the
// sum of the products' magnitudes (for a rounding bound).
struct Dot {
  double value = 0, magnitude = 0;
};
template <class T>
Dot ReferenceProduct(const std::vector<T>& A, const std::vector<T>& B,
                     uint32_t N, uint32_t K, uint32_t r, uint32_t c) {
  Dot d;
  for (uint32_t k = 0; k < K; ++k) {
    const double p = static_cast<double>(A[r * K + k]) * B[k * N + c];
    d.value += p;
    d.magnitude += std::fabs(p);
  }
  return d;
}

TEST(MslCorpus, TiledMatmulInThreadgroupMemory) {
  struct Dims {
    uint32_t M, N, K;
  };
  const Dims cases[] = {{37, 50, 45}, {16, 16, 16}, {1, 33, 17}, {40, 7, 64}};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (const Dims& d : cases) {
    SCOPED_TRACE(Str("M=", d.M, " N=", d.N, " K=", d.K));
    KernelHarness h = CompileCorpus("tiled_matmul", "tiled_matmul");
    std::vector<float> A(d.M * d.K), B(d.K * d.N);
    for (float& v : A) v = value(rng);
    for (float& v : B) v = value(rng);
    constexpr float kSentinel = -12345.0f;
    h.SetBuffer(0, A);
    h.SetBuffer(1, B);
    h.SetBuffer(2, std::vector<float>(d.M * d.N + 16, kSentinel));
    h.SetBytes(3, d);
    ASSERT_TRUE(h.DispatchThreadgroups({(d.N + 15) / 16, (d.M + 15) / 16, 1},
                                       {16, 16, 1})
                    .ok());
    ASSERT_EQ(h.error(), nullptr) << h.error()->message;
    const std::vector<float> C = h.Read<float>(2);
    Mismatches check("tiled_matmul");
    for (uint32_t r = 0; r < d.M; ++r) {
      for (uint32_t c = 0; c < d.N; ++c) {
        const auto [want, magnitude] = ReferenceProduct(A, B, d.N, d.K, r, c);
        // K roundings of a float sum: |error| <= K * 2^-24 * sum |a b|
        // (and a little for the fused or separate multiply).
        const double tolerance = (d.K + 2) * std::ldexp(magnitude, -24);
        const float got = C[r * d.N + c];
        check.Check(std::fabs(got - want) <= tolerance, [&] {
          return Str("C[", r, "][", c, "] = ", got, ", want ", want,
                     " (tolerance ", tolerance, ")");
        });
      }
    }
    check.CheckGuards(C, d.M * d.N, kSentinel);
  }
}

// --- 6. simdgroup_matrix multiplies ------------------------------------------

TEST(MslCorpus, SimdgroupFloat8x8MatmulSeveralSimdGroups) {
  struct Dims {
    uint32_t M, N, K;
  } d{40, 48, 40};
  KernelHarness h =
      CompileCorpus("simdgroup_matmul_float", "simdgroup_matmul_float");
  // Multiples of 1/2 in [-4, 4]: every product and partial sum is exact in
  // float, whatever the order of accumulation.
  std::mt19937 rng(6);
  std::uniform_int_distribution<int> halves(-8, 8);
  std::vector<float> A(d.M * d.K), B(d.K * d.N);
  for (float& v : A) v = static_cast<float>(halves(rng)) / 2.0f;
  for (float& v : B) v = static_cast<float>(halves(rng)) / 2.0f;
  constexpr float kSentinel = -12345.0f;
  h.SetBuffer(0, A);
  h.SetBuffer(1, B);
  h.SetBuffer(2, std::vector<float>(d.M * d.N + 64, kSentinel));
  h.SetBytes(3, d);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  ASSERT_TRUE(
      h.DispatchThreadgroups({d.N / 16, (d.M + 15) / 16, 1}, {128, 1, 1}).ok());
  ASSERT_EQ(h.error(), nullptr) << h.error()->message;
  const std::vector<float> C = h.Read<float>(2);
  Mismatches check("simdgroup_matmul_float");
  for (uint32_t r = 0; r < d.M; ++r) {
    for (uint32_t c = 0; c < d.N; ++c) {
      const double want = ReferenceProduct(A, B, d.N, d.K, r, c).value;
      check.Check(C[r * d.N + c] == want, [&] {
        return Str("C[", r, "][", c, "] = ", C[r * d.N + c], ", want ", want);
      });
    }
  }
  check.CheckGuards(C, d.M * d.N, kSentinel);
}

TEST(MslCorpus, SimdgroupHalf8x8MatmulThroughThreadgroupMemory) {
  struct Dims {
    uint32_t M, N, K;
  } d{24, 32, 24};
  KernelHarness h =
      CompileCorpus("simdgroup_matmul_half", "simdgroup_matmul_half");
  // Multiples of 1/4 in [-2, 2]: products are multiples of 1/16 and every
  // partial sum (|s| <= 96) is exact in half.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> quarters(-8, 8);
  std::vector<double> A(d.M * d.K), B(d.K * d.N);
  std::vector<uint16_t> Ah(A.size()), Bh(B.size());
  for (size_t k = 0; k < A.size(); ++k) {
    A[k] = quarters(rng) / 4.0;
    Ah[k] = ExactHalf(A[k]);
  }
  for (size_t k = 0; k < B.size(); ++k) {
    B[k] = quarters(rng) / 4.0;
    Bh[k] = ExactHalf(B[k]);
  }
  h.SetBuffer(0, Ah);
  h.SetBuffer(1, Bh);
  h.SetBuffer(2, std::vector<uint16_t>(d.M * d.N + 64, 0x7c01));
  h.SetBytes(3, d);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  ASSERT_TRUE(h.DispatchThreadgroups({d.N / 16, d.M / 8, 1}, {64, 1, 1}).ok());
  ASSERT_EQ(h.error(), nullptr) << h.error()->message;
  const std::vector<uint16_t> C = h.Read<uint16_t>(2);
  Mismatches check("simdgroup_matmul_half");
  for (uint32_t r = 0; r < d.M; ++r) {
    for (uint32_t c = 0; c < d.N; ++c) {
      const double want = ReferenceProduct(A, B, d.N, d.K, r, c).value;
      const uint16_t got = C[r * d.N + c];
      check.Check(HalfToDouble(got) == want, [&] {
        return Str("C[", r, "][", c, "] = ", HalfToDouble(got), " (0x",
                   std::hex, got, std::dec, "), want ", want);
      });
    }
  }
  check.CheckGuards(C, d.M * d.N, 0x7c01);
}

// --- 7. integer bit functions
// --------------------------------------------------

constexpr int kNumIntResults = 18;
const char* const kIntResultNames[kNumIntResults] = {
    "popcount",     "clz",         "ctz",   "reverse_bits", "rotate",
    "extract_bits", "insert_bits", "mulhi", "absdiff",      "addsat",
    "subsat",       "hadd",        "rhadd", "madsat",       "madhi",
    "abs",          "shl",         "shr"};

// The reference for one row of integer_bits.metal, in 128-bit arithmetic.
template <class T>
std::vector<T> IntegerBitsReference(T x, T y, T z, uint32_t i) {
  using U = std::make_unsigned_t<T>;
  using I128 = __int128;
  constexpr int W = sizeof(T) * 8;
  constexpr I128 kMin = std::numeric_limits<T>::min();
  constexpr I128 kMax = std::numeric_limits<T>::max();
  const auto wrap = [](I128 v) {
    return static_cast<T>(static_cast<U>(static_cast<unsigned __int128>(v)));
  };
  const auto sat = [](I128 v) {
    return static_cast<T>(v < kMin ? kMin : (v > kMax ? kMax : v));
  };
  const auto field_mask = [](uint32_t bits) -> uint64_t {
    return bits >= 64 ? ~0ull : (1ull << bits) - 1;
  };
  const uint64_t ux = static_cast<U>(x), uy = static_cast<U>(y),
                 uz = static_cast<U>(z);
  const uint32_t offset = (i * 7u) % W;
  const uint32_t bits = (i * 5u) % (W - offset + 1u);

  std::vector<T> r(kNumIntResults);
  r[0] = static_cast<T>(std::popcount(static_cast<U>(x)));
  r[1] = static_cast<T>(std::countl_zero(static_cast<U>(x)));
  r[2] = static_cast<T>(std::countr_zero(static_cast<U>(x)));
  uint64_t rev = 0;
  for (int b = 0; b < W; ++b) rev |= ((ux >> b) & 1) << (W - 1 - b);
  r[3] = wrap(rev);
  const uint32_t s = uy % W;
  r[4] = wrap(s == 0 ? ux : ((ux << s) | (ux >> (W - s))));
  if (bits == 0) {
    r[5] = 0;
    r[6] = x;
  } else {
    uint64_t f = (ux >> offset) & field_mask(bits);
    if (std::is_signed_v<T> && ((f >> (bits - 1)) & 1)) f |= ~field_mask(bits);
    r[5] = wrap(f);
    const uint64_t mask = field_mask(bits) << offset;
    r[6] = wrap((ux & ~mask) | ((uy << offset) & mask));
  }
  const I128 product = static_cast<I128>(x) * static_cast<I128>(y);
  const T hi = wrap(product >> W);
  r[7] = hi;
  const I128 diff = static_cast<I128>(x) - y;
  r[8] = wrap(diff < 0 ? -diff : diff);
  r[9] = sat(static_cast<I128>(x) + y);
  r[10] = sat(diff);
  r[11] = wrap((static_cast<I128>(x) + y) >> 1);
  r[12] = wrap((static_cast<I128>(x) + y + 1) >> 1);
  r[13] = sat(product + z);
  r[14] = wrap(static_cast<I128>(static_cast<U>(hi)) + static_cast<U>(z));
  r[15] = wrap(x < 0 ? -static_cast<I128>(x) : static_cast<I128>(x));
  r[16] = wrap(static_cast<I128>(ux << (uy % W)));
  r[17] = wrap(static_cast<I128>(x) >> (uz % W));
  return r;
}

template <class T>
void CheckIntegerBits(const std::string& kernel) {
  SCOPED_TRACE(kernel);
  using U = std::make_unsigned_t<T>;
  constexpr int W = sizeof(T) * 8;
  const T lo = std::numeric_limits<T>::min(),
          hi = std::numeric_limits<T>::max();
  const std::vector<T> edges = {
      T(0),
      T(1),
      static_cast<T>(U(~U(0))),  // -1, or the maximum
      lo,
      hi,
      static_cast<T>(lo + 1),
      static_cast<T>(hi - 1),
      T(2),
      static_cast<T>(U(0x5555555555555555ull)),
      static_cast<T>(U(0xaaaaaaaaaaaaaaaaull)),
      static_cast<T>(U(0x0f0f0f0f0f0f0f0full)),
      T(7),
      T(W),
      T(W + 1),
      static_cast<T>(U(0x8000000000000001ull >> (64 - W)) | U(1)),
      static_cast<T>(-3),
  };
  std::vector<T> xs, ys, zs;
  for (T x : edges) {
    for (T y : edges) {
      xs.push_back(x);
      ys.push_back(y);
      zs.push_back(edges[(xs.size() * 7) % edges.size()]);
    }
  }
  std::mt19937_64 rng(W * 31 + std::is_signed_v<T>);
  while (xs.size() % 32 != 0 || xs.size() < 320) {
    xs.push_back(static_cast<T>(rng()));
    ys.push_back(static_cast<T>(rng()));
    zs.push_back(static_cast<T>(rng()));
  }
  const uint32_t n = static_cast<uint32_t>(xs.size());

  KernelHarness h = CompileCorpus("integer_bits", kernel);
  h.SetBuffer(0, xs);
  h.SetBuffer(1, ys);
  h.SetBuffer(2, zs);
  h.SetBuffer(3, std::vector<T>(kNumIntResults * n));
  ASSERT_TRUE(Runs(h, {n}, {64}));
  const std::vector<T> out = h.Read<T>(3);
  Mismatches check(kernel);
  for (uint32_t i = 0; i < n; ++i) {
    const std::vector<T> want = IntegerBitsReference<T>(xs[i], ys[i], zs[i], i);
    for (int f = 0; f < kNumIntResults; ++f) {
      const T got = out[kNumIntResults * i + f];
      check.Check(got == want[f], [&] {
        const uint32_t offset = (i * 7u) % W;
        return Str(kIntResultNames[f], " x=", int64_t(xs[i]),
                   " y=", int64_t(ys[i]), " z=", int64_t(zs[i]), " (offset ",
                   offset, ", bits ", (i * 5u) % (W - offset + 1u), "): got ",
                   int64_t(got), ", want ", int64_t(want[f]));
      });
    }
  }
}

TEST(MslCorpus, IntegerBitFunctionsInt) {
  CheckIntegerBits<int32_t>("bits_int");
}
TEST(MslCorpus, IntegerBitFunctionsUint) {
  CheckIntegerBits<uint32_t>("bits_uint");
}
TEST(MslCorpus, IntegerBitFunctionsShort) {
  CheckIntegerBits<int16_t>("bits_short");
}
TEST(MslCorpus, IntegerBitFunctionsUshort) {
  CheckIntegerBits<uint16_t>("bits_ushort");
}
TEST(MslCorpus, IntegerBitFunctionsChar) {
  CheckIntegerBits<int8_t>("bits_char");
}
TEST(MslCorpus, IntegerBitFunctionsUchar) {
  CheckIntegerBits<uint8_t>("bits_uchar");
}

// --- 8. math functions
// -----------------------------------------------------------

double SinPi(double x) {
  double r = std::remainder(x, 2.0);  // exact, in [-1, 1]
  if (r > 0.5) r = 1 - r;
  if (r < -0.5) r = -1 - r;
  return r == 0 ? 0.0 : std::sin(std::numbers::pi * r);
}
double CosPi(double x) {
  return SinPi(0.5 - std::fabs(std::remainder(x, 2.0)));
}

// One column of math_float.metal.
struct FloatMathCase {
  const char* name;
  double (*reference)(float x, float y, float z);
  // Inputs (x, y, z) for one row.
  void (*inputs)(std::mt19937& rng, float& x, float& y, float& z);
  // Metal's precise-math bound in ulps (0.5: correctly rounded; 0: the
  // exact value, compared with ==).
  double precise;
  // The fast-math bound in ulps for these inputs, or a negative value when
  // the fast-math table has no ulp bound there (not checked).
  double (*fast)(double x, double want);
  // (x, y, z) rows checked before the random ones.
  std::vector<std::array<float, 3>> specials;
};

float Uniform(std::mt19937& rng, double lo, double hi) {
  return static_cast<float>(
      std::uniform_real_distribution<double>(lo, hi)(rng));
}
// A positive float 2^e * [1, 2) with e uniform in [lo, hi].
float LogUniform(std::mt19937& rng, int lo, int hi) {
  const int e = std::uniform_int_distribution<int>(lo, hi)(rng);
  return std::ldexp(Uniform(rng, 1.0, 2.0), e);
}
float SignedLogUniform(std::mt19937& rng, int lo, int hi) {
  const float v = LogUniform(rng, lo, hi);
  return (rng() & 1) ? -v : v;
}

#define IN(lo, hi)                                      \
  [](std::mt19937& rng, float& x, float& y, float& z) { \
    x = Uniform(rng, lo, hi);                           \
    y = 1.0f;                                           \
    z = 0.0f;                                           \
  }
#define REF(expr)                              \
  [](float fx, float fy, float fz) -> double { \
    const double x = fx, y = fy, z = fz;       \
    (void)x, (void)y, (void)z;                 \
    return expr;                               \
  }
#define FAST(expr)                      \
  [](double x, double want) -> double { \
    (void)x, (void)want;                \
    return expr;                        \
  }
constexpr double kNoFastBound = -1;
// An absolute error bound as ulps of `want`.
double AbsAsUlps(double bound, double want) { return bound / FloatUlpOf(want); }

// The columns of math_float.metal, in order. Precise bounds: the MSL
// specification's single-precision table with fast math off (as
// tests/emu/math_test.cpp). Fast bounds: its fast-math table where that
// gives an ulp or absolute bound for the inputs (exp 3 + floor(|1.16 x|),
// exp2 3 + floor(|x|), log and log2 absolute 2^-21 and 2^-22 in [0.5, 2],
// else 3 and 2 ulp; sin and cos absolute 2^-13 in [-pi, pi]; asin, acos,
// atan 5; atan2 6; rsqrt 2; x / y 2.5; the exact functions exact); sqrt's
// 3 ulp is derived from its definition there as x * rsqrt(x).
const FloatMathCase kFloatMath[32] =
    {
        {"exp",
         REF(std::exp(x)),
         IN(-80, 80),
         4,
         FAST(3 + std::floor(std::fabs(1.16 * x))),
         {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {88.5f, 0, 0}, {-87, 0, 0}}},
        {"exp2",
         REF(std::exp2(x)),
         IN(-120, 120),
         4,
         FAST(3 + std::floor(std::fabs(x))),
         {{0, 0, 0},
          {1, 0, 0},
          {-1, 0, 0},
          {10, 0, 0},
          {-126, 0, 0},
          {127, 0, 0},
          {0.5f, 0, 0}}},
        {"exp10",
         REF(std::pow(10.0, x)),
         IN(-35, 35),
         4,
         FAST(kNoFastBound),
         {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {2, 0, 0}, {-0.5f, 0, 0}}},
        {"log",
         REF(std::log(x)),
         [](std::mt19937& rng, float& x, float& y, float& z) {
           x = LogUniform(rng, -60, 60), y = 1, z = 0;
         },
         4,
         FAST(x >= 0.5 && x <= 2 ? AbsAsUlps(std::ldexp(1.0, -21), want) : 3),
         {{1, 0, 0}, {2, 0, 0}, {0.5f, 0, 0}, {1e30f, 0, 0}, {1e-30f, 0, 0}}},
        {"log2",
         REF(std::log2(x)),
         [](std::mt19937& rng, float& x, float& y, float& z) {
           x = LogUniform(rng, -60, 60), y = 1, z = 0;
         },
         4,
         FAST(x >= 0.5 && x <= 2 ? AbsAsUlps(std::ldexp(1.0, -22), want) : 2),
         {{1, 0, 0},
          {2, 0, 0},
          {0.5f, 0, 0},
          {1024, 0, 0},
          {0x1p-100f, 0, 0},
          {3, 0, 0}}},
        {"log10",
         REF(std::log10(x)),
         [](std::mt19937& rng, float& x, float& y, float& z) {
           x = LogUniform(rng, -60, 60), y = 1, z = 0;
         },
         4,
         FAST(kNoFastBound),
         {{1, 0, 0}, {10, 0, 0}, {1000, 0, 0}, {0.1f, 0, 0}}},
        {"sin",
         REF(std::sin(x)),
         IN(-100, 100),
         4,
         FAST(std::fabs(x) <= std::numbers::pi
                  ? AbsAsUlps(std::ldexp(1.0, -13), want)
                  : kNoFastBound),
         {{0, 0, 0},
          {0x1.921fb6p+0f, 0, 0},
          {0x1.921fb6p+1f, 0, 0},
          {-0x1.921fb6p+1f, 0, 0},
          {1e-3f, 0, 0},
          {100, 0, 0}}},
        {"cos",
         REF(std::cos(x)),
         IN(-100, 100),
         4,
         FAST(std::fabs(x) <= std::numbers::pi
                  ? AbsAsUlps(std::ldexp(1.0, -13), want)
                  : kNoFastBound),
         {{0, 0, 0},
          {0x1.921fb6p+0f, 0, 0},
          {0x1.921fb6p+1f, 0, 0},
          {-1, 0, 0},
          {100, 0, 0}}},
        {"tan",
         REF(std::tan(x)),
         IN(-100, 100),
         6,
         FAST(kNoFastBound),
         {{0, 0, 0},
          {1, 0, 0},
          {0x1.921fb6p+0f, 0, 0},
          {-0x1.921fb4p+0f, 0, 0}}},
        {"asin",
         REF(std::asin(x)),
         IN(-1, 1),
         4,
         FAST(5),
         {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0.5f, 0, 0}, {1e-3f, 0, 0}}},
        {"acos",
         REF(std::acos(x)),
         IN(-1, 1),
         4,
         FAST(5),
         {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0.5f, 0, 0}, {0.99999994f, 0, 0}}},
        {"atan",
         REF(std::atan(x)),
         IN(-100, 100),
         5,
         FAST(5),
         {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {1e10f, 0, 0}, {1e-3f, 0, 0}}},
        {"sinh",
         REF(std::sinh(x)),
         IN(-80, 80),
         4,
         FAST(kNoFastBound),
         {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {1e-3f, 0, 0}, {88, 0, 0}}},
        {"cosh",
         REF(std::cosh(x)),
         IN(-80, 80),
         4,
         FAST(kNoFastBound),
         {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {-88, 0, 0}}},
        {"tanh",
         REF(std::tanh(x)),
         IN(-10, 10),
         5,
         FAST(kNoFastBound),
         {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {1e-3f, 0, 0}, {20, 0, 0}}},
        {"asinh",
         REF(std::asinh(x)),
         IN(-1000, 1000),
         4,
         FAST(kNoFastBound),
         {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {1e-3f, 0, 0}, {1e30f, 0, 0}}},
        {"pow",
         REF(std::pow(x, y)),
         [](std::mt19937& rng, float& x, float& y, float& z) {
           x = Uniform(rng, 0.1, 20), y = Uniform(rng, -10, 10), z = 0;
         },
         16,
         FAST(kNoFastBound),
         {{2, 10, 0},
          {4, 0.5f, 0},
          {9, -0.5f, 0},
          {-2, 3, 0},
          {-2, 2, 0},
          {1, 100, 0},
          {0, 2, 0},
          {10, -3, 0}}},
        {"sqrt",
         REF(std::sqrt(x)),
         [](std::mt19937& rng, float& x, float& y, float& z) {
           x = LogUniform(rng, -100, 100), y = 1, z = 0;
         },
         0.5,
         FAST(3),
         {{0, 0, 0},
          {1, 0, 0},
          {4, 0, 0},
          {2, 0, 0},
          {0x1p-126f, 0, 0},
          {3e38f, 0, 0}}},
        {"rsqrt",
         REF(1 / std::sqrt(x)),
         [](std::mt19937& rng, float& x, float& y, float& z) {
           x = LogUniform(rng, -100, 100), y = 1, z = 0;
         },
         2,
         FAST(2),
         {{1, 0, 0}, {4, 0, 0}, {0.25f, 0, 0}, {2, 0, 0}, {1e30f, 0, 0}}},
        {"atan2",
         REF(std::atan2(x, y)),
         [](std::mt19937& rng, float& x, float& y, float& z) {
           x = Uniform(rng, -100, 100), y = Uniform(rng, -100, 100), z = 0;
         },
         6,
         FAST(6),
         {{1, 1, 0},
          {-1, -1, 0},
          {0, 1, 0},
          {1, 0, 0},
          {0, -1, 0},
          {-1, 0, 0},
          {3, -4, 0}}},
        {"fma",
         REF(std::fma(fx, fy, fz)),  // fmaf: correctly rounded
         [](std::mt19937& rng, float& x, float& y, float& z) {
           x = SignedLogUniform(rng, -20, 20),
           y = SignedLogUniform(rng, -20, 20);
           z = -x * y * Uniform(rng, 0.5, 2.0);  // cancellation
         },
         0,
         FAST(0),
         {{1, 1, 0},
          {2, 3, -6},
          {0x1.000002p+0f, 0x1.000002p+0f, -1},
          {1e19f, 1e19f, -1e38f}}},
        {"fmod",
         REF(std::fmod(x, y)),  // exact
         [](std::mt19937& rng, float& x, float& y, float& z) {
           x = Uniform(rng, -1000, 1000), y = SignedLogUniform(rng, -4, 4),
           z = 0;
         },
         0,
         FAST(0),
         {{5.5f, 2, 0}, {-5.5f, 2, 0}, {1, 0.1f, 0}, {1e30f, 3, 0}, {0, 1, 0}}},
        {"floor",
         REF(std::floor(x)),
         IN(-100, 100),
         0,
         FAST(0),
         {{-0.5f, 0, 0}, {2, 0, 0}, {-2.5f, 0, 0}, {8388607.5f, 0, 0}}},
        {"ceil",
         REF(std::ceil(x)),
         IN(-100, 100),
         0,
         FAST(0),
         {{-0.5f, 0, 0}, {0.5f, 0, 0}, {-2, 0, 0}, {-8388607.5f, 0, 0}}},
        {"round",
         REF(std::round(x)),
         IN(-100, 100),
         0,
         FAST(0),
         {{2.5f, 0, 0},
          {-2.5f, 0, 0},
          {0.5f, 0, 0},
          {-0.5f, 0, 0},
          {1.5f, 0, 0},
          {0.49999997f, 0, 0}}},
        {"trunc",
         REF(std::trunc(x)),
         IN(-100, 100),
         0,
         FAST(0),
         {{-2.5f, 0, 0}, {2.5f, 0, 0}, {-0.5f, 0, 0}, {8388607.5f, 0, 0}}},
        {"divide",
         REF(x / y),
         [](std::mt19937& rng, float& x, float& y, float& z) {
           x = SignedLogUniform(rng, -30, 30),
           y = SignedLogUniform(rng, -30, 30);
           z = 0;
         },
         0.5,
         FAST(2.5),
         {{1, 3, 0}, {-7, 2, 0}, {1, 1e-30f, 0}, {3e38f, 2, 0}, {0, 5, 0}}},
        {"sinpi",
         REF(SinPi(x)),
         IN(-10, 10),
         4,
         FAST(kNoFastBound),
         {{0.5f, 0, 0},
          {1, 0, 0},
          {1.5f, 0, 0},
          {-0.5f, 0, 0},
          {0.25f, 0, 0},
          {1e-3f, 0, 0}}},
        {"cospi",
         REF(CosPi(x)),
         IN(-10, 10),
         4,
         FAST(kNoFastBound),
         {{0.5f, 0, 0}, {1, 0, 0}, {0, 0, 0}, {0.25f, 0, 0}, {-1.5f, 0, 0}}},
        {"acosh",
         REF(std::acosh(x)),
         IN(1, 1000),
         4,
         FAST(kNoFastBound),
         {{1, 0, 0}, {2, 0, 0}, {1e30f, 0, 0}, {1.0000001f, 0, 0}}},
        {"atanh",
         REF(std::atanh(x)),
         IN(-0.999, 0.999),
         5,
         FAST(kNoFastBound),
         {{0, 0, 0},
          {0.5f, 0, 0},
          {-0.5f, 0, 0},
          {1e-3f, 0, 0},
          {0.99999994f, 0, 0}}},
        {"powr",
         REF(std::pow(x, y)),
         [](std::mt19937& rng, float& x, float& y, float& z) {
           x = Uniform(rng, 0.1, 20), y = Uniform(rng, -10, 10), z = 0;
         },
         16,
         FAST(kNoFastBound),
         {{2, 3, 0}, {4, 0.5f, 0}, {0.5f, -2, 0}, {1, 50, 0}}},
};

#undef IN
#undef REF
#undef FAST

void CheckFloatMath(bool fast_math) {
  constexpr uint32_t kFuncs = 32, kRows = 512;
  std::vector<float> xs(kFuncs * kRows), ys(xs.size()), zs(xs.size());
  std::mt19937 rng(8);
  for (uint32_t f = 0; f < kFuncs; ++f) {
    for (uint32_t i = 0; i < kRows; ++i) {
      float& x = xs[i * kFuncs + f];
      float& y = ys[i * kFuncs + f];
      float& z = zs[i * kFuncs + f];
      const std::vector<std::array<float, 3>>& specials =
          kFloatMath[f].specials;
      if (i < specials.size()) {
        x = specials[i][0], y = specials[i][1], z = specials[i][2];
      } else {
        kFloatMath[f].inputs(rng, x, y, z);
      }
    }
  }
  msl::CompileOptions options;
  options.fast_math = fast_math;
  KernelHarness h = CompileCorpus("math_float", "math_float", options);
  h.SetBuffer(0, xs);
  h.SetBuffer(1, ys);
  h.SetBuffer(2, zs);
  h.SetBuffer(3, std::vector<float>(xs.size()));
  ASSERT_TRUE(Runs(h, {kRows}, {64}));
  const std::vector<float> out = h.Read<float>(3);
  for (uint32_t f = 0; f < kFuncs; ++f) {
    const FloatMathCase& c = kFloatMath[f];
    Mismatches check(Str(c.name, fast_math ? " (fast math)" : " (precise)"));
    double worst = 0;
    for (uint32_t i = 0; i < kRows; ++i) {
      const uint32_t k = i * kFuncs + f;
      const double want = c.reference(xs[k], ys[k], zs[k]);
      const float got = out[k];
      const double bound = fast_math ? c.fast(xs[k], want) : c.precise;
      if (bound < 0) continue;
      if (bound == 0) {
        check.Check(got == static_cast<float>(want), [&] {
          return Str(c.name, "(", xs[k], ", ", ys[k], ", ", zs[k], ") = ", got,
                     ", want exactly ", static_cast<float>(want));
        });
        continue;
      }
      const double error = FloatUlps(got, want);
      worst = std::max(worst, error);
      check.Check(error <= bound, [&] {
        return Str(c.name, "(", xs[k], ", ", ys[k], ") = ", got, ", want ",
                   want, ": ", error, " ulp > ", bound);
      });
    }
    ::testing::Test::RecordProperty(Str(c.name, "_max_ulp"), Str(worst));
  }
}

TEST(MslCorpus, FloatMathWithinPreciseBounds) { CheckFloatMath(false); }
TEST(MslCorpus, FloatMathWithinFastMathBounds) { CheckFloatMath(true); }

struct HalfMathCase {
  const char* name;
  double (*reference)(double x, double y);
  double lo, hi, ylo, yhi;  // input ranges
  double bound;             // ulps of half; 0.5: correctly rounded
};

const HalfMathCase kHalfMath[10] = {
    {"exp", [](double x, double) { return std::exp(x); }, -9, 10, 0, 0, 1},
    {"log", [](double x, double) { return std::log(x); }, 1e-4, 60000, 0, 0, 1},
    {"sin", [](double x, double) { return std::sin(x); }, -10, 10, 0, 0, 1},
    {"cos", [](double x, double) { return std::cos(x); }, -10, 10, 0, 0, 1},
    {"sqrt", [](double x, double) { return std::sqrt(x); }, 0, 1000, 0, 0, 0.5},
    {"rsqrt", [](double x, double) { return 1 / std::sqrt(x); }, 1e-3, 1000, 0,
     0, 1},
    {"tanh", [](double x, double) { return std::tanh(x); }, -5, 5, 0, 0, 1},
    {"exp2", [](double x, double) { return std::exp2(x); }, -14, 15, 0, 0, 1},
    {"pow", [](double x, double y) { return std::pow(x, y); }, 0.25, 8, -4, 4,
     1},
    {"fma", [](double x, double y) { return x * y + 0.25; }, -8, 8, -8, 8, 0.5},
};

void CheckHalfMath(bool fast_math) {
  constexpr uint32_t kFuncs = 10, kRows = 256;
  std::vector<uint16_t> xs(kFuncs * kRows), ys(xs.size());
  std::mt19937 rng(9);
  for (uint32_t f = 0; f < kFuncs; ++f) {
    const HalfMathCase& c = kHalfMath[f];
    for (uint32_t i = 0; i < kRows; ++i) {
      xs[i * kFuncs + f] = TruncatedHalf(Uniform(rng, c.lo, c.hi));
      ys[i * kFuncs + f] = TruncatedHalf(Uniform(rng, c.ylo, c.yhi));
    }
    xs[f] = ExactHalf(c.lo < 1 && c.hi > 1 ? 1.0 : c.lo);  // one exact case
  }
  msl::CompileOptions options;
  options.fast_math = fast_math;
  KernelHarness h = CompileCorpus("math_half", "math_half", options);
  h.SetBuffer(0, xs);
  h.SetBuffer(1, ys);
  h.SetBuffer(2, std::vector<uint16_t>(xs.size()));
  ASSERT_TRUE(Runs(h, {kRows}, {64}));
  const std::vector<uint16_t> out = h.Read<uint16_t>(2);
  for (uint32_t f = 0; f < kFuncs; ++f) {
    const HalfMathCase& c = kHalfMath[f];
    Mismatches check(Str("half ", c.name));
    for (uint32_t i = 0; i < kRows; ++i) {
      const uint32_t k = i * kFuncs + f;
      const double x = HalfToDouble(xs[k]), y = HalfToDouble(ys[k]);
      const double want = c.reference(x, y);
      const double error = HalfUlps(out[k], want);
      check.Check(error <= c.bound, [&] {
        return Str(c.name, "(", x, ", ", y, ") = ", HalfToDouble(out[k]),
                   ", want ", want, ": ", error, " ulp > ", c.bound);
      });
    }
  }
}

TEST(MslCorpus, HalfMathWithinHalfPrecisionBounds) {
  CheckHalfMath(false);
  CheckHalfMath(true);
}

// --- 9. a grid that is not a multiple of the threadgroup
// ----------------------

TEST(MslCorpus, RaggedTwoDimensionalGridWritesEachElementOnce) {
  struct Shape {
    uint32_t w, h;
  };
  for (const Shape s :
       {Shape{100, 37}, Shape{16, 8}, Shape{7, 3}, Shape{33, 17}}) {
    SCOPED_TRACE(Str("grid ", s.w, " x ", s.h, ", threadgroup 16 x 8"));
    KernelHarness h = CompileCorpus("ragged_grid", "ragged_grid");
    const uint32_t n = s.w * s.h;
    constexpr uint32_t kGuard = 64, kSentinel = 0xdeadbeef;
    h.SetBuffer(0, std::vector<uint32_t>(n + kGuard, kSentinel));
    h.SetBuffer(1, std::vector<uint32_t>(n + kGuard, 0));
    h.SetBuffer(2, std::vector<uint32_t>(2 * n + kGuard, kSentinel));
    ASSERT_TRUE(Runs(h, {s.w, s.h}, {16, 8}));
    const std::vector<uint32_t> ids = h.Read<uint32_t>(0);
    const std::vector<uint32_t> counts = h.Read<uint32_t>(1);
    const std::vector<uint32_t> shape = h.Read<uint32_t>(2);
    Mismatches check("ragged_grid");
    for (uint32_t y = 0; y < s.h; ++y) {
      for (uint32_t x = 0; x < s.w; ++x) {
        const uint32_t idx = y * s.w + x;
        const uint32_t tpt_x = std::min(16u, s.w - x / 16 * 16);
        const uint32_t tpt_y = std::min(8u, s.h - y / 8 * 8);
        const uint32_t want_shape =
            ((y % 8) << 24) | ((x % 16) << 16) | (tpt_y << 8) | tpt_x;
        const uint32_t want_group = ((y / 8) << 16) | ((x / 16) << 1) | 1;
        check.Check(counts[idx] == 1, [&] {
          return Str("(", x, ", ", y, ") ran ", counts[idx], " times");
        });
        check.Check(ids[idx] == ((y << 16) | x), [&] {
          return Str("(", x, ", ", y, ") id 0x", std::hex, ids[idx]);
        });
        check.Check(shape[2 * idx] == want_shape, [&] {
          return Str("(", x, ", ", y, ") lid/threads_per_threadgroup 0x",
                     std::hex, shape[2 * idx], ", want 0x", want_shape);
        });
        check.Check(shape[2 * idx + 1] == want_group, [&] {
          return Str("(", x, ", ", y, ") threadgroup/consistency 0x", std::hex,
                     shape[2 * idx + 1], ", want 0x", want_group);
        });
      }
    }
    for (uint32_t k = n; k < n + kGuard; ++k) {
      check.Check(ids[k] == kSentinel && counts[k] == 0,
                  [&] { return Str("element ", k, " past the grid written"); });
    }
    for (uint32_t k = 2 * n; k < shape.size(); ++k) {
      check.Check(shape[k] == kSentinel,
                  [&] { return Str("shape element ", k, " past the end"); });
    }
  }
}

// --- 10. division by zero
// --------------------------------------------------------

template <class T>
void CheckDivision(const std::string& kernel) {
  SCOPED_TRACE(kernel);
  const T lo = std::numeric_limits<T>::min(),
          hi = std::numeric_limits<T>::max();
  const T all_ones = static_cast<T>(~std::make_unsigned_t<T>(0));
  std::vector<T> as, bs;
  const T dividends[] = {T(0), T(1), T(7),     T(100),
                         lo,   hi,   all_ones, static_cast<T>(lo + 1),
                         T(42)};
  const T divisors[] = {T(0), T(1), T(3), all_ones, lo, hi, T(0), T(16)};
  for (T a : dividends) {
    for (T b : divisors) {
      as.push_back(a);
      bs.push_back(b);
    }
  }
  std::mt19937_64 rng(sizeof(T) * 2 + std::is_signed_v<T>);
  while (as.size() % 32 != 0 || as.size() < 128) {
    as.push_back(static_cast<T>(rng()));
    bs.push_back(rng() % 3 == 0 ? T(0) : static_cast<T>(rng() >> 7));
  }
  const uint32_t n = static_cast<uint32_t>(as.size());
  KernelHarness h = CompileCorpus("divide_by_zero", kernel);
  h.SetBuffer(0, as);
  h.SetBuffer(1, bs);
  h.SetBuffer(2, std::vector<T>(n, T(99)));
  h.SetBuffer(3, std::vector<T>(n, T(99)));
  ASSERT_TRUE(Runs(h, {n}, {32}));
  const std::vector<T> q = h.Read<T>(2);
  const std::vector<T> r = h.Read<T>(3);
  Mismatches check(kernel);
  for (uint32_t i = 0; i < n; ++i) {
    const T a = as[i], b = bs[i];
    T want_q, want_r;
    if (b == 0) {
      want_q = all_ones;
      want_r = a;
    } else if (std::is_signed_v<T> && a == lo && b == all_ones) {
      want_q = lo;  // INT_MIN / -1 wraps
      want_r = 0;
    } else {
      want_q = static_cast<T>(a / b);
      want_r = static_cast<T>(a % b);
    }
    check.Check(q[i] == want_q && r[i] == want_r, [&] {
      return Str(int64_t(a), " / ", int64_t(b), " = ", int64_t(q[i]), " rem ",
                 int64_t(r[i]), "; want ", int64_t(want_q), " rem ",
                 int64_t(want_r));
    });
  }
}

TEST(MslCorpus, IntegerDivisionByZeroFollowsTheIsa) {
  CheckDivision<int32_t>("div_int");
  CheckDivision<uint32_t>("div_uint");
  CheckDivision<int64_t>("div_long");
  CheckDivision<uint64_t>("div_ulong");
  CheckDivision<int16_t>("div_short");
  CheckDivision<uint8_t>("div_uchar");
}

// --- 11. divergent data-dependent loop
// -----------------------------------------

TEST(MslCorpus, CollatzDivergentLoopWithEarlyReturns) {
  KernelHarness h = CompileCorpus("collatz", "collatz");
  constexpr uint32_t n = 1000, kLimit = 150, kSentinel = 0x12345678;
  std::vector<uint32_t> start(n);
  for (uint32_t i = 0; i < n; ++i) {
    start[i] = i % 97 == 5 ? 0 : (i * 2654435761u) % 99999u + 1;
  }
  start[1] = 1;
  start[2] = 27;     // 111 steps
  start[3] = 97;     // 118 steps
  start[4] = 77031;  // 350 steps: stopped at the limit
  h.SetBuffer(0, start);
  h.SetBuffer(1, std::vector<uint32_t>(n, kSentinel));
  h.SetBuffer(2, std::vector<uint32_t>(n, kSentinel));
  h.SetBuffer(3, std::vector<uint32_t>(n, kSentinel));
  h.SetBytes(4, kLimit);
  ASSERT_TRUE(Runs(h, {n}, {64}));
  const std::vector<uint32_t> steps = h.Read<uint32_t>(1);
  const std::vector<uint32_t> peak = h.Read<uint32_t>(2);
  const std::vector<uint32_t> group_max = h.Read<uint32_t>(3);

  std::vector<uint32_t> want_steps(n), want_peak(n, kSentinel);
  std::vector<bool> finished(n, false);
  int limited = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t x = start[i];
    if (x == 0) {
      want_steps[i] = 0xffffffffu;
      continue;
    }
    uint32_t s = 0;
    uint64_t top = x;
    while (x != 1 && s < kLimit) {
      x = (x & 1) ? 3 * x + 1 : x / 2;
      top = std::max(top, x);
      ++s;
    }
    ASSERT_LT(top, 1ull << 32) << start[i];
    want_peak[i] = static_cast<uint32_t>(top);
    if (x == 1) {
      want_steps[i] = s;
      finished[i] = true;
    } else {
      want_steps[i] = 0x80000000u | s;
      ++limited;
    }
  }
  ASSERT_GT(limited, 0);
  Mismatches check("collatz");
  for (uint32_t i = 0; i < n; ++i) {
    check.Check(steps[i] == want_steps[i] && peak[i] == want_peak[i], [&] {
      return Str("start ", start[i], ": steps 0x", std::hex, steps[i],
                 " peak 0x", peak[i], ", want 0x", want_steps[i], " and 0x",
                 want_peak[i]);
    });
    // simd_max over the lanes of the SIMD group (32 consecutive threads)
    // that left the loop by the break.
    uint32_t want_max = kSentinel;
    if (finished[i]) {
      want_max = 0;
      for (uint32_t j = i / 32 * 32; j < std::min(n, i / 32 * 32 + 32); ++j) {
        if (finished[j]) want_max = std::max(want_max, want_steps[j]);
      }
    }
    check.Check(group_max[i] == want_max, [&] {
      return Str("thread ", i, " simd_max after the loop: ", group_max[i],
                 ", want ", want_max);
    });
  }
}

}  // namespace
}  // namespace mtlemu
