// llama.cpp's Metal backend (ggml's src/ggml-metal/ggml-metal.metal):
// rotary position embeddings, ggml's norm (adjacent pairs) and neox (halves)
// layouts, with YaRN's scaling, frequency factors, partial rotation and the
// backward pass. Each kernel runs as ggml's host dispatches it
// (ggml-metal-ops.cpp, ggml_metal_op_rope; ggml-metal-device.cpp,
// ggml_metal_library_get_pipeline_rope), checked against a reference
// written here from the op's definition, in double. support.h says where
// ggml's snapshot comes from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/realworld/ggml/support.h"

namespace mtlemu::ggml {
namespace {

using testing::KernelHarness;
using testing::RunsThreadgroups;

// ggml_metal_kargs_rope (ggml-metal-impl.h).
struct GgmlKargsRope {
  int32_t ne00, ne01, ne02, ne03;
  uint64_t nb00, nb01, nb02, nb03;
  int32_t ne0, ne1, ne2, ne3;
  uint64_t nb0, nb1, nb2, nb3;
  int32_t n_past, n_dims, n_offs, n_ctx_orig;
  float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
  int32_t sect_0, sect_1, sect_2, sect_3;
  bool src2, inplace;
};

struct Rope {
  bool neox = false;
  bool half = false;
  bool back = false;
  int32_t n_dims = 64;
  int32_t n_ctx_orig = 4096;
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;
  float ext_factor = 0.0f;
  float attn_factor = 1.0f;
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
  bool freq_factors = false;
};

// YaRN's correction dimension: where a rotation of n_rot turns over the
// original context falls among the n_dims.
double CorrDim(const Rope& r, double n_rot) {
  return r.n_dims * std::log(r.n_ctx_orig / (n_rot * 2 * M_PI)) /
         (2 * std::log(double(r.freq_base)));
}

// x [ne0 = head size, ne1 = heads, ne2 = tokens] rotated: in each head of
// token t at position p, pair i of the first n_dims dimensions turns by p
// base^(-2i / n_dims) (over its frequency factor), interpolated by
// freq_scale and, with YaRN (ext_factor), blended back towards the
// unscaled angle for the fast-turning pairs and scaled in magnitude; the
// pairs are (2i, 2i + 1) (norm) or (i, i + n_dims / 2) (neox); the other
// dimensions are copied. The backward pass turns the other way.
std::vector<double> RopeReference(const Rope& r, const std::vector<float>& x,
                                  const std::vector<int32_t>& pos,
                                  const std::vector<float>& factors,
                                  int64_t ne0, int64_t ne1, int64_t ne2) {
  std::vector<double> y(x.begin(), x.end());
  const double low = std::max(0.0, std::floor(CorrDim(r, r.beta_fast)));
  const double high =
      std::min(r.n_dims - 1.0, std::ceil(CorrDim(r, r.beta_slow)));
  for (int64_t t = 0; t < ne2; ++t) {
    for (int64_t h = 0; h < ne1; ++h) {
      const int64_t row = (t * ne1 + h) * ne0;
      for (int64_t i = 0; i < r.n_dims / 2; ++i) {
        double theta_extrap =
            pos[t] * std::pow(double(r.freq_base), -2.0 * i / r.n_dims);
        if (r.freq_factors) theta_extrap /= factors[i];
        double theta = r.freq_scale * theta_extrap;
        double mscale = r.attn_factor;
        if (r.ext_factor != 0) {
          const double ramp =
              (1 -
               std::clamp((i - low) / std::max(0.001, high - low), 0.0, 1.0)) *
              r.ext_factor;
          theta = theta * (1 - ramp) + theta_extrap * ramp;
          mscale *= 1 + 0.1 * std::log(1 / double(r.freq_scale));
        }
        const double c = std::cos(theta) * mscale;
        const double s = std::sin(theta) * mscale * (r.back ? -1 : 1);
        const int64_t a = r.neox ? i : 2 * i;
        const int64_t b = r.neox ? i + r.n_dims / 2 : 2 * i + 1;
        const double x0 = x[row + a], x1 = x[row + b];
        y[row + a] = x0 * c - x1 * s;
        y[row + b] = x0 * s + x1 * c;
      }
    }
  }
  return y;
}

void RunRope(const Rope& r) {
  const std::string kernel = std::string("kernel_rope_") +
                             (r.neox ? "neox" : "norm") +
                             (r.half ? "_f16" : "_f32");
  SCOPED_TRACE(kernel + (r.back ? " back" : "") + " n_dims " +
               std::to_string(r.n_dims) + " ext_factor " +
               std::to_string(r.ext_factor));
  // FC_ROPE + 0: imrope (multi-section only), + 1: the backward pass.
  KernelHarness h = GgmlKernel(
      kernel, {{"800", "false"}, {"801", r.back ? "true" : "false"}});
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  constexpr int64_t ne0 = 64, ne1 = 4, ne2 = 5;
  const std::vector<int32_t> pos = {0, 3, 17, 100, 511};
  std::vector<float> x = Random(ne0 * ne1 * ne2, 91);
  if (r.half) x = RoundedToHalf(x);
  std::vector<float> factors = Random(r.n_dims / 2, 92, 1.0f, 8.0f);
  const Shape s = Contiguous(r.half ? 2 : 4, ne0, ne1, ne2);
  GgmlKargsRope args{};
  args.ne00 = args.ne0 = ne0;
  args.ne01 = args.ne1 = ne1;
  args.ne02 = args.ne2 = ne2;
  args.ne03 = args.ne3 = 1;
  for (int i = 0; i < 4; ++i) (&args.nb00)[i] = (&args.nb0)[i] = s.nb[i];
  args.n_dims = r.n_dims;
  args.n_ctx_orig = r.n_ctx_orig;
  args.freq_base = r.freq_base;
  args.freq_scale = r.freq_scale;
  args.ext_factor = r.ext_factor;
  args.attn_factor = r.attn_factor;
  args.beta_fast = r.beta_fast;
  args.beta_slow = r.beta_slow;
  args.src2 = r.freq_factors;
  h.SetBytes(0, args);
  if (r.half) {
    h.SetBuffer(1, ToHalf(x));
    h.SetBuffer(4, std::vector<uint16_t>(x.size(), 0));
  } else {
    h.SetBuffer(1, x);
    h.SetBuffer(4, std::vector<float>(x.size(), 0));
  }
  h.SetBuffer(2, pos);
  if (r.freq_factors) {
    h.SetBuffer(3, factors);
  } else {
    h.SetSameBuffer(3, 1);  // the host binds src0 where there is no src2
  }
  // ne01 x ne02 x ne03 threadgroups of min(1024, ne00) threads.
  ASSERT_TRUE(RunsThreadgroups(h, {ne1, ne2, 1}, {ne0, 1, 1}));
  const std::vector<float> got =
      r.half ? FromHalf(h.Read<uint16_t>(4)) : h.Read<float>(4);
  std::vector<double> want = RopeReference(r, x, pos, factors, ne0, ne1, ne2);
  if (r.half) {
    for (double& w : want) w = RoundedToHalf({float(w)})[0];
  }
  // Angles up to 511 radians in float: a few 1e-5 of a radian.
  EXPECT_TRUE(Near(got, want, r.half ? 2e-3 : 1e-4, r.half ? 4e-3 : 2e-4));
}

TEST(GgmlMetal, RopeNormAndNeox) {
  REQUIRE_GGML();
  for (const bool neox : {false, true}) {
    for (const bool half : {false, true}) {
      Rope r;
      r.neox = neox;
      r.half = half;
      RunRope(r);
    }
  }
}

TEST(GgmlMetal, RopeWithYarnFrequencyFactorsAndPartialRotation) {
  REQUIRE_GGML();
  for (const bool neox : {false, true}) {
    Rope r;
    r.neox = neox;
    r.n_dims = 32;  // the last 32 of 64 dimensions are copied
    r.freq_scale = 0.25f;
    r.ext_factor = 1.0f;
    r.attn_factor = 0.9f;
    r.n_ctx_orig = 512;
    RunRope(r);
    r.freq_factors = true;  // Llama 3's rope_freqs
    r.ext_factor = 0.0f;
    RunRope(r);
  }
}

TEST(GgmlMetal, RopeBackward) {
  REQUIRE_GGML();
  for (const bool neox : {false, true}) {
    Rope r;
    r.neox = neox;
    r.back = true;
    RunRope(r);
  }
}

}  // namespace
}  // namespace mtlemu::ggml
