// llama.cpp's Metal backend (ggml's src/ggml-metal/ggml-metal.metal):
// softmax with masks and ALiBi, norm and rms_norm with their fused ops.
// Each kernel runs as ggml's host dispatches it (ggml-metal-ops.cpp: the
// bytes struct at index 0, the buffers after it, the grid;
// ggml-metal-device.cpp: the pipeline's name and function constants),
// checked against a reference written here from what the operation means,
// in double. support.h says where ggml's snapshot comes from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "isa/numeric.h"
#include "tests/realworld/ggml/support.h"

namespace mtlemu::ggml {
namespace {

using testing::KernelHarness;
using testing::RunsThreadgroups;

// --- softmax with mask and ALiBi: kernel_soft_max, kernel_soft_max_4 ---------
// ggml_metal_library_get_pipeline_soft_max: kernel_soft_max_{f32,f16}
// after the mask's type, _4 where ne00 % 4 == 0, 32 floats of threadgroup
// memory; ggml_metal_op_soft_max: kargs at 0, src0 at 1, the mask at 2 and
// the sinks at 3 (src0 itself where there is none: the kernel tests for
// that), dst at 4; ne01 x ne02 x ne03 threadgroups of nth threads, 32
// doubled while nth < ne00 (/4) and nth * rows < 256; m0, m1 and
// n_head_log2 from max_bias as the host computes them.

struct GgmlKargsSoftMax {
  int32_t ne00, ne01, ne02;
  uint64_t nb01, nb02, nb03;
  int32_t ne11, ne12, ne13;
  uint64_t nb11, nb12, nb13;
  uint64_t nb1, nb2, nb3;
  float scale, max_bias, m0, m1;
  int32_t n_head_log2;
};

// softmax(x * scale + slope(head) * mask) over each row of [ne00, ne01,
// ne02]; the mask [ne00, ne01] (f32 or f16, or none) is the same for every
// head.
void RunSoftMax(int64_t ne00, int64_t ne01, int64_t ne02, const char* mask,
                float scale, float max_bias) {
  SCOPED_TRACE("soft_max ne00 " + std::to_string(ne00) + " mask " + mask +
               " max_bias " + std::to_string(max_bias));
  const bool c4 = ne00 % 4 == 0;
  const bool half_mask = std::string(mask) == "f16";
  const bool has_mask = std::string(mask) != "none";
  const std::string kernel = std::string("kernel_soft_max_") +
                             (half_mask ? "f16" : "f32") + (c4 ? "_4" : "");
  KernelHarness h = GgmlKernel(kernel);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  const Shape s = Contiguous(4, ne00, ne01, ne02);
  const Shape m = Contiguous(half_mask ? 2 : 4, ne00, ne01);
  std::vector<float> x = Random(s.elements(), 21, -4.0f, 4.0f);
  std::vector<float> mk = Random(m.elements(), 22, -2.0f, 0.0f);
  if (half_mask) mk = FromHalf(ToHalf(mk));
  const HostAlibi alibi = HostAlibiArgs(ne02, max_bias);
  GgmlKargsSoftMax args{};
  args.ne00 = static_cast<int32_t>(ne00);
  args.ne01 = static_cast<int32_t>(ne01);
  args.ne02 = static_cast<int32_t>(ne02);
  args.nb01 = s.nb[1];
  args.nb02 = s.nb[2];
  args.nb03 = s.nb[3];
  args.ne11 = static_cast<int32_t>(m.ne[1]);
  args.ne12 = static_cast<int32_t>(m.ne[2]);
  args.ne13 = static_cast<int32_t>(m.ne[3]);
  args.nb11 = m.nb[1];
  args.nb12 = m.nb[2];
  args.nb13 = m.nb[3];
  args.nb1 = s.nb[1];
  args.nb2 = s.nb[2];
  args.nb3 = s.nb[3];
  args.scale = scale;
  args.max_bias = max_bias;
  args.m0 = alibi.m0;
  args.m1 = alibi.m1;
  args.n_head_log2 = alibi.n_head_log2;
  h.SetBytes(0, args);
  h.SetBuffer(1, x);
  // No mask, no sinks: src0's own buffer, as the host binds it.
  if (has_mask && half_mask) {
    h.SetBuffer(2, ToHalf(mk));
  } else if (has_mask) {
    h.SetBuffer(2, mk);
  } else {
    h.SetSameBuffer(2, 1);
  }
  h.SetSameBuffer(3, 1);
  h.SetBuffer(4, std::vector<float>(s.elements(), 0));
  ASSERT_TRUE(h.SetThreadgroupMemoryLength(32 * sizeof(float), 0).ok());
  uint64_t nth = 32;
  const int64_t per_thread = c4 ? ne00 / 4 : ne00;
  while (static_cast<int64_t>(nth) < per_thread &&
         nth * static_cast<uint64_t>(ne01 * ne02) < 256) {
    nth *= 2;
  }
  ASSERT_TRUE(RunsThreadgroups(
      h, {static_cast<uint64_t>(ne01), static_cast<uint64_t>(ne02), 1},
      {nth, 1, 1}));
  const std::vector<float> got = h.Read<float>(4);
  std::vector<double> want(x.size());
  for (int64_t i2 = 0; i2 < ne02; ++i2) {
    const double slope = AlibiSlope(i2, ne02, max_bias);
    for (int64_t i1 = 0; i1 < ne01; ++i1) {
      const int64_t row = (i2 * ne01 + i1) * ne00;
      double max = -INFINITY;
      std::vector<double> v(ne00);
      for (int64_t i0 = 0; i0 < ne00; ++i0) {
        v[i0] = double(x[row + i0]) * scale +
                (has_mask ? slope * mk[i1 * ne00 + i0] : 0.0);
        max = std::max(max, v[i0]);
      }
      double sum = 0;
      for (double& e : v) sum += (e = std::exp(e - max));
      for (int64_t i0 = 0; i0 < ne00; ++i0) want[row + i0] = v[i0] / sum;
    }
  }
  EXPECT_TRUE(Near(got, want, 1e-5, 1e-7));
}

TEST(GgmlMetal, SoftMaxWithMasksAndAlibi) {
  REQUIRE_GGML();
  RunSoftMax(100, 3, 4, "none", 0.7f, 0.0f);
  RunSoftMax(100, 3, 4, "f32", 0.7f, 0.0f);
  RunSoftMax(128, 3, 4, "f32", 0.125f, 8.0f);  // ALiBi, 4 heads
  RunSoftMax(96, 2, 6, "f16", 1.0f, 8.0f);     // 6 heads: m0 and m1
  RunSoftMax(1000, 2, 1, "f16", 0.5f, 0.0f);   // more than a SIMD group
}

// --- norm and rms_norm, with the fused mul and add: kernel_*norm_fuse_impl --
// ggml_metal_library_get_pipeline_norm: kernel_{norm,rms_norm}{,_mul,
// _mul_add}_f32{,_4} (_4 where ne00 % 4 == 0), 32 floats of threadgroup
// memory; ggml_metal_op_norm: kargs at 0 (ne00_t: ne00 in float4s where
// it divides), src0 at 1, the fused mul's and add's src1 at 2 and 3 (src0
// where not fused), dst at 4; ne01 x ne02 x ne03 threadgroups of nth: 32
// doubled while below ne00_t, at most the pipeline's maximum, rounded to
// the SIMD groups ne00_t needs.

struct GgmlKargsNorm {
  int32_t ne00, ne00_t;
  uint64_t nb1, nb2, nb3;
  float eps;
  int32_t nef1[3], nef2[3], nef3[3];
  uint64_t nbf1[3], nbf2[3], nbf3[3];
};

// y = norm(x) [* w [+ b]] over rows of [ne00, ne01, ne02]; w and b are one
// row each (broadcast over rows: nef1 = 1).
void RunNorm(bool rms, int fuse, int64_t ne00, int64_t ne01, int64_t ne02) {
  const bool c4 = ne00 % 4 == 0;
  const std::string kernel =
      std::string(rms ? "kernel_rms_norm" : "kernel_norm") +
      (fuse == 2   ? "_mul"
       : fuse == 3 ? "_mul_add"
                   : "") +
      "_f32" + (c4 ? "_4" : "");
  SCOPED_TRACE(kernel + " ne00 " + std::to_string(ne00));
  KernelHarness h = GgmlKernel(kernel);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  const Shape s = Contiguous(4, ne00, ne01, ne02);
  const std::vector<float> x = Random(s.elements(), 31, -3.0f, 3.0f);
  const std::vector<float> w = Random(ne00, 32, 0.5f, 1.5f);
  const std::vector<float> b = Random(ne00, 33);
  GgmlKargsNorm args{};
  args.ne00 = static_cast<int32_t>(ne00);
  args.ne00_t = static_cast<int32_t>(c4 ? ne00 / 4 : ne00);
  args.nb1 = s.nb[1];
  args.nb2 = s.nb[2];
  args.nb3 = s.nb[3];
  args.eps = 1e-5f;
  args.nef1[0] = static_cast<int32_t>(ne01);
  args.nef2[0] = static_cast<int32_t>(ne02);
  args.nef3[0] = 1;
  args.nbf1[0] = s.nb[1];
  args.nbf2[0] = s.nb[2];
  args.nbf3[0] = s.nb[3];
  for (int j = 1; j < 3; ++j) {  // the fused operands: one row each
    args.nef1[j] = args.nef2[j] = args.nef3[j] = 1;
    args.nbf1[j] = args.nbf2[j] = args.nbf3[j] = ne00 * 4;
  }
  h.SetBytes(0, args);
  h.SetBuffer(1, x);
  if (fuse >= 2) {
    h.SetBuffer(2, w);
  } else {
    h.SetSameBuffer(2, 1);
  }
  if (fuse == 3) {
    h.SetBuffer(3, b);
  } else {
    h.SetSameBuffer(3, 1);
  }
  h.SetBuffer(4, std::vector<float>(s.elements(), 0));
  ASSERT_TRUE(h.SetThreadgroupMemoryLength(32 * sizeof(float), 0).ok());
  const uint64_t max_threads = h.pipeline().maxTotalThreadsPerThreadgroup();
  uint64_t nth = 32;
  while (nth < static_cast<uint64_t>(args.ne00_t) && nth < max_threads) {
    nth *= 2;
  }
  nth = std::min<uint64_t>(nth, max_threads);
  nth = std::min<uint64_t>(nth, (args.ne00_t + 31) / 32 * 32);
  ASSERT_TRUE(RunsThreadgroups(
      h, {static_cast<uint64_t>(ne01), static_cast<uint64_t>(ne02), 1},
      {nth, 1, 1}));
  const std::vector<float> got = h.Read<float>(4);
  std::vector<double> want(x.size());
  for (int64_t r = 0; r < ne01 * ne02; ++r) {
    const float* row = &x[r * ne00];
    double mean = 0;
    if (!rms) {
      for (int64_t i = 0; i < ne00; ++i) mean += row[i];
      mean /= ne00;
    }
    double var = 0;
    for (int64_t i = 0; i < ne00; ++i) var += (row[i] - mean) * (row[i] - mean);
    var /= ne00;
    const double scale = 1 / std::sqrt(var + 1e-5);
    for (int64_t i = 0; i < ne00; ++i) {
      double y = (row[i] - mean) * scale;
      if (fuse >= 2) y *= w[i];
      if (fuse == 3) y += b[i];
      want[r * ne00 + i] = y;
    }
  }
  EXPECT_TRUE(Near(got, want, 1e-5, 1e-5));
}

TEST(GgmlMetal, NormsWithFusedMulAndAdd) {
  REQUIRE_GGML();
  for (const bool rms : {false, true}) {
    for (int fuse = 1; fuse <= 3; ++fuse) {
      RunNorm(rms, fuse, 100, 3, 2);   // scalar kernel, 4 SIMD groups
      RunNorm(rms, fuse, 4096, 2, 1);  // _4, 1024 float4s: 32 SIMD groups
    }
  }
}

}  // namespace
}  // namespace mtlemu::ggml
