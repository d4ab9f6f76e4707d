// The Triton corpus (kernels/corpus.py): each kernel run on the emulator
// and checked against a plain C++ reference (float64 where it sums).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tests/compiler/triton/triton_harness.h"

namespace mtlemu::testing {
namespace {

const std::string kCorpus = TritonKernelFile("corpus.py");

// C = A x B in float64 for row-major A[M,K], B[K,N].
std::vector<double> MatMul(const std::vector<float>& a,
                           const std::vector<float>& b, int M, int N, int K) {
  std::vector<double> c(static_cast<size_t>(M) * N);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(a[i * K + k]) * b[k * N + j];
      c[i * N + j] = s;
    }
  }
  return c;
}

void RunGroupedMatmul(const char* dtype, double tol) {
  const int block_n = 64;
  const int M = 200, N = 136, K = 96;
  TritonHarness h(kCorpus);
  std::vector<float> a = RandomFloats(M * K, 11), b = RandomFloats(K * N, 12);
  const bool f32 = std::string(dtype) == "fp32";
  const bool f16 = std::string(dtype) == "fp16";
  // The inputs as the kernel sees them (rounded to fp16 / bf16).
  std::vector<float> ra = a, rb = b;
  std::shared_ptr<Buffer> c;
  if (f32) {
    h.Buffer("a_ptr", dtype, a);
    h.Buffer("b_ptr", dtype, b);
    c = h.Buffer("c_ptr", "fp32", std::vector<float>(M * N));
  } else {
    auto conv = f16 ? ToHalf : ToBFloat;
    auto back = f16 ? HalfToFloat : BFloatToFloat;
    std::vector<uint16_t> ha = conv(a), hb = conv(b);
    for (size_t i = 0; i < a.size(); ++i) ra[i] = back(ha[i]);
    for (size_t i = 0; i < b.size(); ++i) rb[i] = back(hb[i]);
    h.Buffer("a_ptr", dtype, ha);
    h.Buffer("b_ptr", dtype, hb);
    c = h.Buffer("c_ptr", "fp32", std::vector<float>(M * N));
  }
  h.Arg("M", M);
  h.Arg("N", N);
  h.Arg("K", K);
  h.Arg("stride_am", K);
  h.Arg("stride_ak", 1);
  h.Arg("stride_bk", N);
  h.Arg("stride_bn", 1);
  h.Arg("stride_cm", N);
  h.Arg("stride_cn", 1);
  h.Arg("BLOCK_M", 32);
  h.Arg("BLOCK_N", block_n);
  h.Arg("BLOCK_K", 32);
  h.Arg("GROUP_M", 4);
  const int programs = ((M + 31) / 32) * ((N + block_n - 1) / block_n);
  ASSERT_EQ(
      h.Run("grouped_matmul_kernel", {static_cast<uint64_t>(programs), 1, 1}),
      "")
      << h.compiled().msl;
  std::vector<double> want = MatMul(ra, rb, M, N, K);
  std::vector<float> got = Read<float>(c);
  for (int i = 0; i < M * N; ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i])))
        << dtype << " " << i;
  }
}

TEST(TritonCorpus, GroupedMatmulFp32) { RunGroupedMatmul("fp32", 1e-5); }
TEST(TritonCorpus, GroupedMatmulFp16) { RunGroupedMatmul("fp16", 1e-5); }
TEST(TritonCorpus, GroupedMatmulBf16) { RunGroupedMatmul("bf16", 1e-5); }

TEST(TritonCorpus, LayerNormForwardAndBackward) {
  const int rows = 48, n = 500;
  const float eps = 1e-5f;
  TritonHarness fwd(kCorpus);
  std::vector<float> x = RandomFloats(rows * n, 21), w = RandomFloats(n, 22),
                     b = RandomFloats(n, 23);
  fwd.Buffer("X", "fp32", x);
  auto y = fwd.Buffer("Y", "fp32", std::vector<float>(rows * n));
  fwd.Buffer("W", "fp32", w);
  fwd.Buffer("B", "fp32", b);
  auto mean = fwd.Buffer("Mean", "fp32", std::vector<float>(rows));
  auto rstd = fwd.Buffer("Rstd", "fp32", std::vector<float>(rows));
  fwd.Arg("stride", n);
  fwd.Arg("N", n);
  fwd.Arg("eps", "1e-5");
  fwd.Arg("BLOCK_SIZE", 128);
  ASSERT_EQ(fwd.Run("layer_norm_fwd", {rows, 1, 1}), "") << fwd.compiled().msl;
  std::vector<double> ref_mean(rows), ref_rstd(rows);
  std::vector<float> gy = Read<float>(y), gm = Read<float>(mean),
                     gr = Read<float>(rstd);
  for (int r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int c = 0; c < n; ++c) m += x[r * n + c];
    m /= n;
    for (int c = 0; c < n; ++c) v += (x[r * n + c] - m) * (x[r * n + c] - m);
    v /= n;
    ref_mean[r] = m;
    ref_rstd[r] = 1 / std::sqrt(v + eps);
    ASSERT_NEAR(gm[r], m, 1e-5);
    ASSERT_NEAR(gr[r], ref_rstd[r], 1e-4 * ref_rstd[r]);
    for (int c = 0; c < n; ++c) {
      const double want = (x[r * n + c] - m) * ref_rstd[r] * w[c] + b[c];
      ASSERT_NEAR(gy[r * n + c], want, 1e-4 * (1 + std::fabs(want)))
          << r << "," << c;
    }
  }

  // Backward: dx per row, dw and db summed over rows in 4 locked partials.
  const int group = 4;
  TritonHarness bwd(kCorpus);
  bwd.SkipTtirRoundTrip();  // partial sums in lock order vary
  std::vector<float> dy = RandomFloats(rows * n, 24);
  auto dx = bwd.Buffer("DX", "fp32", std::vector<float>(rows * n));
  bwd.Buffer("DY", "fp32", dy);
  auto dw = bwd.Buffer("DW", "fp32", std::vector<float>(group * n));
  auto db = bwd.Buffer("DB", "fp32", std::vector<float>(group * n));
  bwd.Buffer("X", "fp32", x);
  bwd.Buffer("W", "fp32", w);
  bwd.Buffer("Mean", "fp32", gm);
  bwd.Buffer("Rstd", "fp32", gr);
  bwd.Buffer("Lock", "int32", std::vector<int32_t>(2 * group));
  bwd.Arg("stride", n);
  bwd.Arg("N", n);
  bwd.Arg("GROUP_SIZE_M", group);
  bwd.Arg("BLOCK_SIZE_N", 512);
  ASSERT_EQ(bwd.Run("layer_norm_bwd_dx_fused", {rows, 1, 1}), "")
      << bwd.compiled().msl;
  std::vector<float> gdx = Read<float>(dx), gdw = Read<float>(dw),
                     gdb = Read<float>(db);
  std::vector<double> sum_dw(n), sum_db(n);
  for (int r = 0; r < rows; ++r) {
    double c1 = 0, c2 = 0;
    std::vector<double> xhat(n), wdy(n);
    for (int c = 0; c < n; ++c) {
      xhat[c] = (x[r * n + c] - gm[r]) * double(gr[r]);
      wdy[c] = double(w[c]) * dy[r * n + c];
      c1 += xhat[c] * wdy[c];
      c2 += wdy[c];
      sum_dw[c] += dy[r * n + c] * xhat[c];
      sum_db[c] += dy[r * n + c];
    }
    c1 /= n;
    c2 /= n;
    for (int c = 0; c < n; ++c) {
      const double want = (wdy[c] - (xhat[c] * c1 + c2)) * gr[r];
      ASSERT_NEAR(gdx[r * n + c], want, 1e-4 * (1 + std::fabs(want)))
          << r << "," << c;
    }
  }
  for (int c = 0; c < n; ++c) {
    double got_dw = 0, got_db = 0;
    for (int g = 0; g < group; ++g) {
      got_dw += gdw[g * n + c];
      got_db += gdb[g * n + c];
    }
    ASSERT_NEAR(got_dw, sum_dw[c], 1e-3 * (1 + std::fabs(sum_dw[c]))) << c;
    ASSERT_NEAR(got_db, sum_db[c], 1e-3 * (1 + std::fabs(sum_db[c]))) << c;
  }
}

TEST(TritonCorpus, AttentionForward) {
  const int seq = 100, d = 32;
  TritonHarness h(kCorpus);
  std::vector<float> q = RandomFloats(seq * d, 31, -1, 1),
                     k = RandomFloats(seq * d, 32, -1, 1),
                     v = RandomFloats(seq * d, 33, -1, 1);
  std::vector<uint16_t> hq = ToHalf(q), hk = ToHalf(k), hv = ToHalf(v);
  for (int i = 0; i < seq * d; ++i) {
    q[i] = HalfToFloat(hq[i]);
    k[i] = HalfToFloat(hk[i]);
    v[i] = HalfToFloat(hv[i]);
  }
  h.Buffer("Q", "fp16", hq);
  h.Buffer("K", "fp16", hk);
  h.Buffer("V", "fp16", hv);
  auto out = h.Buffer("Out", "fp32", std::vector<float>(seq * d));
  const double scale = 1.0 / std::sqrt(double(d));
  h.Arg("sm_scale", std::to_string(scale));
  h.Arg("seq_len", seq);
  h.Arg("stride_qm", d);
  h.Arg("stride_km", d);
  h.Arg("stride_vm", d);
  h.Arg("stride_om", d);
  h.Arg("BLOCK_M", 32);
  h.Arg("BLOCK_N", 32);
  h.Arg("HEAD_DIM", d);
  ASSERT_EQ(h.Run("attention_fwd", {(seq + 31) / 32, 1, 1}), "")
      << h.compiled().msl;
  std::vector<float> got = Read<float>(out);
  for (int i = 0; i < seq; ++i) {
    std::vector<double> s(seq);
    double m = -INFINITY, l = 0;
    for (int j = 0; j < seq; ++j) {
      double dot = 0;
      for (int c = 0; c < d; ++c) dot += double(q[i * d + c]) * k[j * d + c];
      s[j] = dot * scale;
      m = std::max(m, s[j]);
    }
    for (int j = 0; j < seq; ++j) l += std::exp(s[j] - m);
    for (int c = 0; c < d; ++c) {
      double o = 0;
      for (int j = 0; j < seq; ++j) o += std::exp(s[j] - m) / l * v[j * d + c];
      // p is rounded to fp16 before the second dot, as in the kernel.
      ASSERT_NEAR(got[i * d + c], o, 2e-3) << i << "," << c;
    }
  }
}

TEST(TritonCorpus, CumsumOfIntegersAndFloats) {
  const int rows = 3, n = 300;
  for (const char* dtype : {"int32", "fp32"}) {
    TritonHarness h(kCorpus);
    std::shared_ptr<Buffer> y;
    std::vector<double> want(rows * n);
    if (std::string(dtype) == "int32") {
      std::vector<int32_t> x(rows * n);
      for (int i = 0; i < rows * n; ++i) x[i] = (i * 7919) % 23 - 11;
      h.Buffer("x_ptr", dtype, x);
      y = h.Buffer("y_ptr", dtype, std::vector<int32_t>(rows * n));
      for (int r = 0; r < rows; ++r) {
        double s = 0;
        for (int c = 0; c < n; ++c) want[r * n + c] = s += x[r * n + c];
      }
    } else {
      std::vector<float> x = RandomFloats(rows * n, 41);
      h.Buffer("x_ptr", dtype, x);
      y = h.Buffer("y_ptr", dtype, std::vector<float>(rows * n));
      for (int r = 0; r < rows; ++r) {
        double s = 0;
        for (int c = 0; c < n; ++c) want[r * n + c] = s += x[r * n + c];
      }
    }
    h.Arg("n_cols", n);
    h.Arg("BLOCK", 512);
    ASSERT_EQ(h.Run("cumsum_kernel", {rows, 1, 1}), "") << h.compiled().msl;
    for (int i = 0; i < rows * n; ++i) {
      const double got = std::string(dtype) == "int32" ? Read<int32_t>(y)[i]
                                                       : Read<float>(y)[i];
      ASSERT_NEAR(got, want[i], 1e-4 * (1 + std::fabs(want[i])))
          << dtype << " " << i;
    }
  }
}

// associative_scan with a combiner that does not commute (composing affine
// maps: h = a * h_prev + b), forward and reverse, along either axis, with
// the axis in registers, lanes or SIMD groups, and on tensors smaller than
// the program (copies in lanes and SIMD groups).
TEST(TritonCorpus, LinearRecurrenceScan) {
  struct Config {
    int rows, cols, axis, warps;
  };
  for (const Config c :
       {Config{8, 128, 1, 4}, Config{128, 8, 0, 4}, Config{4, 512, 1, 8},
        Config{512, 2, 0, 2}, Config{2, 16, 1, 4}, Config{16, 2, 0, 4},
        Config{32, 32, 0, 1}, Config{32, 32, 1, 1}}) {
    for (const bool reverse : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << c.rows << "x" << c.cols << " axis " << c.axis << " warps "
                   << c.warps << (reverse ? " reverse" : ""));
      const int n = c.rows * c.cols;
      TritonHarness h(kCorpus);
      const std::vector<float> a = RandomFloats(n, 71, 0.5f, 1.0f);
      const std::vector<float> b = RandomFloats(n, 72);
      h.Buffer("a_ptr", "fp32", a);
      h.Buffer("b_ptr", "fp32", b);
      auto out = h.Buffer("h_ptr", "fp32", std::vector<float>(n));
      h.Arg("ROWS", c.rows);
      h.Arg("COLS", c.cols);
      h.Arg("AXIS", c.axis);
      h.Arg("REVERSE", reverse ? "True" : "False");
      ASSERT_EQ(h.Run("linear_recurrence_kernel", {1, 1, 1}, c.warps), "")
          << h.compiled().msl;
      const std::vector<float> got = Read<float>(out);
      // Each line along the axis, in scan order: h = a * h_prev + b.
      const int lines = c.axis == 1 ? c.rows : c.cols;
      const int len = c.axis == 1 ? c.cols : c.rows;
      for (int line = 0; line < lines; ++line) {
        double hv = 0;
        for (int k = 0; k < len; ++k) {
          const int pos = reverse ? len - 1 - k : k;
          const int i = c.axis == 1 ? line * c.cols + pos : pos * c.cols + line;
          hv = k == 0 ? b[i] : a[i] * hv + b[i];
          ASSERT_NEAR(got[i], hv, 1e-4 * (1 + std::fabs(hv)))
              << "element " << i;
        }
      }
    }
  }
}

TEST(TritonCorpus, Argmax) {
  const int rows = 16, n = 90;
  TritonHarness h(kCorpus);
  std::vector<float> x = RandomFloats(rows * n, 51);
  x[3 * n + 7] = x[3 * n + 50] = 9;  // a tie: the first index wins
  h.Buffer("x_ptr", "fp32", x);
  auto out = h.Buffer("out_ptr", "int32", std::vector<int32_t>(rows));
  h.Arg("n_cols", n);
  h.Arg("ROWS", 8);
  h.Arg("BLOCK", 128);
  ASSERT_EQ(h.Run("argmax_kernel", {2, 1, 1}), "") << h.compiled().msl;
  std::vector<int32_t> got = Read<int32_t>(out);
  for (int r = 0; r < rows; ++r) {
    const auto* row = &x[r * n];
    const int want = static_cast<int>(std::max_element(row, row + n) - row);
    EXPECT_EQ(got[r], want) << r;
  }
}

TEST(TritonCorpus, AtomicHistogram) {
  const int n = 1000, bins = 8;
  TritonHarness h(kCorpus);
  std::vector<int32_t> x(n);
  std::vector<int32_t> want(bins);
  for (int i = 0; i < n; ++i) {
    x[i] = (i * 37 + i / 7) % bins;
    ++want[x[i]];
  }
  h.Buffer("x_ptr", "int32", x);
  auto hist = h.Buffer("hist_ptr", "int32", std::vector<int32_t>(bins));
  h.Arg("n", n);
  h.Arg("NUM_BINS", bins);
  h.Arg("BLOCK", 256);
  ASSERT_EQ(h.Run("histogram_kernel", {4, 1, 1}), "") << h.compiled().msl;
  EXPECT_EQ(Read<int32_t>(hist), want);
}

TEST(TritonCorpus, CustomReduceCombiner) {
  const int n = 256;
  TritonHarness h(kCorpus);
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = float((i * 13) % 50);
  h.Buffer("x_ptr", "fp32", x);
  auto m = h.Buffer("max_ptr", "fp32", std::vector<float>(1));
  auto c = h.Buffer("count_ptr", "int32", std::vector<int32_t>(1));
  h.Arg("BLOCK", n);
  ASSERT_EQ(h.Run("custom_reduce_kernel", {1, 1, 1}), "") << h.compiled().msl;
  const float want_max = *std::max_element(x.begin(), x.end());
  EXPECT_EQ(Read<float>(m)[0], want_max);
  EXPECT_EQ(Read<int32_t>(c)[0], std::count(x.begin(), x.end(), want_max));
}

TEST(TritonCorpus, TwoDimensionalBroadcasting) {
  const int M = 16, N = 64;
  TritonHarness h(kCorpus);
  std::vector<float> x = RandomFloats(M, 61), y = RandomFloats(N, 62);
  h.Buffer("x_ptr", "fp32", x);
  h.Buffer("y_ptr", "fp32", y);
  auto out = h.Buffer("out_ptr", "fp32", std::vector<float>(M * N));
  h.Arg("M", M);
  h.Arg("N", N);
  ASSERT_EQ(h.Run("outer_kernel", {1, 1, 1}), "") << h.compiled().msl;
  std::vector<float> got = Read<float>(out);
  // Triton's enable_fp_fusion (on by default): x * y + j is one fma.
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j)
      ASSERT_EQ(got[i * N + j], std::fma(x[i], y[j], static_cast<float>(j)))
          << i << "," << j;
  }
}

TEST(TritonCorpus, IntegerDivisionTruncatesLikeC) {
  std::vector<int32_t> a = {7,  -7,  7,    -7,         0,  1,
                            -1, 100, -100, 2147483647, 13, -13};
  std::vector<int32_t> b = {2, 2, -2, -2, 3, -3, 3, 7, 7, -1, 5, 5};
  const int n = static_cast<int>(a.size());
  TritonHarness h(kCorpus);
  h.Buffer("a_ptr", "int32", a);
  h.Buffer("b_ptr", "int32", b);
  auto q = h.Buffer("q_ptr", "int32", std::vector<int32_t>(n));
  auto r = h.Buffer("r_ptr", "int32", std::vector<int32_t>(n));
  h.Arg("n", n);
  h.Arg("BLOCK", 16);
  ASSERT_EQ(h.Run("int_div_mod_kernel", {1, 1, 1}), "") << h.compiled().msl;
  std::vector<int32_t> gq = Read<int32_t>(q), gr = Read<int32_t>(r);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(gq[i], a[i] / b[i]) << a[i] << " // " << b[i];
    EXPECT_EQ(gr[i], a[i] % b[i]) << a[i] << " % " << b[i];
  }
}

TEST(TritonCorpus, WhileLoopWithARuntimeBound) {
  std::vector<float> x = {1, 3, 0.5f, 100, 7};
  TritonHarness h(kCorpus);
  h.Buffer("x_ptr", "fp32", x);
  auto out = h.Buffer("out_ptr", "int32", std::vector<int32_t>(x.size()));
  h.Arg("limit", "64.0");
  ASSERT_EQ(h.Run("while_kernel", {x.size(), 1, 1}), "") << h.compiled().msl;
  std::vector<int32_t> got = Read<int32_t>(out);
  for (size_t i = 0; i < x.size(); ++i) {
    int steps = 0;
    for (float v = x[i]; v < 64; v *= 2) ++steps;
    EXPECT_EQ(got[i], steps) << i;
  }
}

TEST(TritonCorpus, EarlyReturnLeavesTheRestUntouched) {
  const int n = 300;
  TritonHarness h(kCorpus);
  auto x = h.Buffer("x_ptr", "fp32", std::vector<float>(512, -1.0f));
  h.Arg("n", n);
  h.Arg("BLOCK", 128);
  ASSERT_EQ(h.Run("early_exit_kernel", {4, 1, 1}), "") << h.compiled().msl;
  std::vector<float> got = Read<float>(x);
  for (int i = 0; i < 512; ++i)
    EXPECT_EQ(got[i], i < n ? float(i) : -1.0f) << i;
}

TEST(TritonCorpus, BlockPointersWithBoundaryChecks) {
  const int M = 50, N = 70;
  TritonHarness h(kCorpus);
  std::vector<float> src = RandomFloats(M * N, 71);
  h.Buffer("src", "fp32", src);
  auto dst = h.Buffer("dst", "fp32", std::vector<float>(N * M));
  h.Arg("M", M);
  h.Arg("N", N);
  h.Arg("stride_m", N);
  h.Arg("BLOCK_M", 32);
  h.Arg("BLOCK_N", 32);
  ASSERT_EQ(h.Run("block_ptr_copy_kernel", {2, 3, 1}), "") << h.compiled().msl;
  std::vector<float> got = Read<float>(dst);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j)
      ASSERT_EQ(got[j * M + i], 2 * src[i * N + j]) << i << "," << j;
  }
}

TEST(TritonCorpus, TensorDescriptors) {
  const int M = 40, N = 48;
  TritonHarness h(kCorpus);
  std::vector<float> a = RandomFloats(M * N, 81), b = RandomFloats(M * N, 82);
  h.Buffer("a", "fp32", a);
  h.Buffer("b", "fp32", b);
  auto out = h.Buffer("out", "fp32", std::vector<float>(M * N));
  h.Arg("M", M);
  h.Arg("N", N);
  h.Arg("BLOCK_M", 16);
  h.Arg("BLOCK_N", 32);
  ASSERT_EQ(h.Run("descriptor_add_kernel", {3, 2, 1}), "") << h.compiled().msl;
  std::vector<float> got = Read<float>(out);
  for (int i = 0; i < M * N; ++i) ASSERT_EQ(got[i], a[i] + b[i]) << i;
}

TEST(TritonCorpus, SortAscendingAndDescending) {
  const int rows = 3, n = 64;
  for (bool descending : {false, true}) {
    TritonHarness h(kCorpus);
    std::vector<float> x = RandomFloats(rows * n, 91);
    h.Buffer("x_ptr", "fp32", x);
    auto out = h.Buffer("out_ptr", "fp32", std::vector<float>(rows * n));
    h.Arg("DESCENDING", descending ? "True" : "False");
    h.Arg("N", n);
    ASSERT_EQ(h.Run("sort_kernel", {rows, 1, 1}), "") << h.compiled().msl;
    std::vector<float> got = Read<float>(out);
    for (int r = 0; r < rows; ++r) {
      std::vector<float> want(x.begin() + r * n, x.begin() + (r + 1) * n);
      std::sort(want.begin(), want.end());
      if (descending) std::reverse(want.begin(), want.end());
      for (int c = 0; c < n; ++c)
        ASSERT_EQ(got[r * n + c], want[c]) << r << "," << c;
    }
  }
}

TEST(TritonCorpus, Flip) {
  const int n = 128;
  TritonHarness h(kCorpus);
  std::vector<float> x = RandomFloats(n, 92);
  h.Buffer("x_ptr", "fp32", x);
  auto out = h.Buffer("out_ptr", "fp32", std::vector<float>(n));
  h.Arg("N", n);
  ASSERT_EQ(h.Run("flip_kernel", {1, 1, 1}), "") << h.compiled().msl;
  std::vector<float> got = Read<float>(out);
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], x[n - 1 - i]) << i;
}

TEST(TritonCorpus, Gelu) {
  const int n = 1000;
  TritonHarness h(kCorpus);
  std::vector<float> x = RandomFloats(n, 93, -5, 5);
  h.Buffer("x_ptr", "fp32", x);
  auto out = h.Buffer("out_ptr", "fp32", std::vector<float>(n));
  h.Arg("n", n);
  h.Arg("BLOCK", 256);
  ASSERT_EQ(h.Run("gelu_kernel", {4, 1, 1}), "") << h.compiled().msl;
  std::vector<float> got = Read<float>(out);
  for (int i = 0; i < n; ++i) {
    const double want = 0.5 * x[i] * (1 + std::erf(x[i] / std::sqrt(2.0)));
    ASSERT_NEAR(got[i], want, 2e-6 * (1 + std::fabs(want))) << x[i];
  }
}

}  // namespace
}  // namespace mtlemu::testing

namespace mtlemu::testing {
namespace {

// examples/triton/: the kernels of the original design, as the triton_metal
// package runs them (each in its own script).
std::string Example(const char* name) {
  return std::string(MTLEMU_SOURCE_DIR) + "/examples/triton/" + name;
}

TEST(TritonOriginalDesign, VectorAdd) {
  const int n = 5000;
  TritonHarness h(Example("vector_add.py"));
  std::vector<float> x = RandomFloats(n, 101), y = RandomFloats(n, 102);
  h.Buffer("x_ptr", "fp32", x);
  h.Buffer("y_ptr", "fp32", y);
  auto out = h.Buffer("output_ptr", "fp32", std::vector<float>(n));
  h.Arg("n_elements", n);
  h.Arg("BLOCK_SIZE", 1024);
  ASSERT_EQ(h.Run("add_kernel", {(n + 1023) / 1024, 1, 1}), "");
  std::vector<float> got = Read<float>(out);
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], x[i] + y[i]) << i;
}

TEST(TritonOriginalDesign, MatrixMultiply) {
  const int M = 70, N = 50, K = 45;
  TritonHarness h(Example("matmul.py"));
  std::vector<float> a = RandomFloats(M * K, 103), b = RandomFloats(K * N, 104);
  h.Buffer("a_ptr", "fp32", a);
  h.Buffer("b_ptr", "fp32", b);
  auto c = h.Buffer("c_ptr", "fp32", std::vector<float>(M * N));
  for (auto [name, v] :
       std::vector<std::pair<const char*, int>>{{"M", M},
                                                {"N", N},
                                                {"K", K},
                                                {"stride_am", K},
                                                {"stride_ak", 1},
                                                {"stride_bk", N},
                                                {"stride_bn", 1},
                                                {"stride_cm", N},
                                                {"stride_cn", 1},
                                                {"BLOCK_SIZE_M", 32},
                                                {"BLOCK_SIZE_N", 32},
                                                {"BLOCK_SIZE_K", 16}}) {
    h.Arg(name, v);
  }
  ASSERT_EQ(h.Run("matmul_kernel", {3, 2, 1}), "") << h.compiled().msl;
  std::vector<float> got = Read<float>(c);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k) want += double(a[i * K + k]) * b[k * N + j];
      ASSERT_NEAR(got[i * N + j], want, 1e-5 * (1 + std::fabs(want)))
          << i << "," << j;
    }
  }
}

TEST(TritonOriginalDesign, StridedAccess) {
  const int n = 1000, stride = 3;
  TritonHarness h(Example("strided.py"));
  std::vector<float> x = RandomFloats(n, 105);
  h.Buffer("x_ptr", "fp32", x);
  auto out = h.Buffer("output_ptr", "fp32", std::vector<float>(n, -7.0f));
  h.Arg("n_elements", n);
  h.Arg("stride", stride);
  h.Arg("BLOCK_SIZE", 128);
  // Each program covers BLOCK_SIZE indices, `stride` apart, from its start.
  ASSERT_EQ(h.Run("strided_kernel", {(n + 127) / 128, 1, 1}), "")
      << h.compiled().msl;
  std::vector<float> got = Read<float>(out);
  std::vector<float> want(n, -7.0f);
  for (int pid = 0; pid < (n + 127) / 128; ++pid) {
    for (int i = 0; i < 128; ++i) {
      const int index = pid * 128 + i * stride;
      if (index < n) want[index] = x[index] * 2.0f;
    }
  }
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace mtlemu::testing
