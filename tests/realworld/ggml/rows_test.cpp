// llama.cpp's Metal backend (ggml's src/ggml-metal/ggml-metal.metal):
// get_rows of every kind.
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

// --- get_rows of every kind -------------------------------------------------
// ggml_metal_library_get_pipeline_get_rows: kernel_get_rows_TYPE;
// ggml_metal_op_get_rows: kargs at 0 (ne00t: ne00 / 16 for quantized
// types, whose threads dequantize 16 values each), src0 at 1, the int32
// row numbers at 2, dst (f32) at 3; nw0 * ne10 x ne11 x ne12 threadgroups
// of nth = min(ne00t, the pipeline's maximum), nw0 = ceil(ne00t / nth).
struct GgmlKargsGetRows {
  int32_t ne00t, ne00;
  uint64_t nb01, nb02, nb03;
  int32_t ne10;
  uint64_t nb10, nb11, nb12;
  uint64_t nb1, nb2, nb3;
};

TEST(GgmlMetal, GetRowsOfEveryKind) {
  REQUIRE_GGML();
  constexpr int64_t ne00 = 256, ne01 = 9, ne10 = 5;
  const std::vector<int32_t> ids = {3, 0, 8, 3, 5};
  for (const BlockType& type : BlockTypes()) {
    SCOPED_TRACE(type.name);
    KernelHarness h = GgmlKernel(std::string("kernel_get_rows_") + type.name);
    ASSERT_TRUE(h.status().ok()) << h.status().error().message;
    const Encoded src = RandomRows(type, ne00, ne01, 41);
    const uint64_t row_bytes =
        type.quantized ? ne00 / 32 * type.bytes : ne00 * type.bytes;
    GgmlKargsGetRows args{};
    args.ne00t = static_cast<int32_t>(type.quantized ? ne00 / 16 : ne00);
    args.ne00 = static_cast<int32_t>(ne00);
    args.nb01 = row_bytes;
    args.nb02 = args.nb03 = row_bytes * ne01;
    args.ne10 = static_cast<int32_t>(ne10);
    args.nb10 = 4;
    args.nb11 = args.nb12 = 4 * ne10;
    args.nb1 = ne00 * 4;
    args.nb2 = args.nb3 = ne00 * 4 * ne10;
    h.SetBytes(0, args);
    h.SetBuffer(1, src.bytes);
    h.SetBuffer(2, ids);
    h.SetBuffer(3, std::vector<float>(ne00 * ne10, -1));
    const uint64_t nth = std::min<uint64_t>(
        args.ne00t, h.pipeline().maxTotalThreadsPerThreadgroup());
    const uint64_t nw0 = (args.ne00t + nth - 1) / nth;
    ASSERT_TRUE(RunsThreadgroups(h, {nw0 * ne10, 1, 1}, {nth, 1, 1}));
    std::vector<double> want(ne00 * ne10);
    for (int64_t r = 0; r < ne10; ++r) {
      for (int64_t i = 0; i < ne00; ++i) {
        want[r * ne00 + i] = src.values[ids[r] * ne00 + i];
      }
    }
    // Dequantization multiplies in half in places: a half's rounding of
    // the largest value.
    EXPECT_TRUE(Near(h.Read<float>(3), want, 1e-3, 2e-3));
  }
}

// --- copies and conversions: kernel_cpy_*
// ------------------------------------- ggml_metal_library_get_pipeline_cpy:
// kernel_cpy_SRC_DST, no constants; ggml_metal_op_cpy: kargs at 0, src0 at 1,
// dst at 2; nk0 = ne00 (ne00 / 16 from a quantized type, ne00 / 32 into one),
// nth = min(nk0 ne01, 256); rows of one-value types batched nrptg to a
// threadgroup; nw0 * ceil(ne01 / nrptg) x ne02 x ne03 threadgroups of nth x
// nrptg. dst may have another shape than src0 (a reshape): element n of src0 in
// its own order is element n of dst.

struct GgmlKargsCpy {
  int64_t nk0, ne00, ne01, ne02, ne03;
  uint64_t nb00, nb01, nb02, nb03;
  int64_t ne0, ne1, ne2, ne3;
  uint64_t nb0, nb1, nb2, nb3;
};

// A plain type of the copies: f32, f16, or i32.
struct PlainType {
  const char* name;
  uint64_t size;
};

std::vector<uint8_t> EncodePlain(const PlainType& t,
                                 const std::vector<float>& v) {
  const std::string name = t.name;
  if (name == "f16") return Bytes(ToHalf(v));
  if (name == "bf16") return Bytes(ToBfloat(v));
  if (name == "i32") {
    std::vector<int32_t> i(v.size());
    for (size_t k = 0; k < v.size(); ++k) i[k] = static_cast<int32_t>(v[k]);
    return Bytes(i);
  }
  return Bytes(v);
}

std::vector<float> DecodePlain(const PlainType& t,
                               const std::vector<uint8_t>& b) {
  const std::string name = t.name;
  if (name == "i32") {
    std::vector<float> v(b.size() / 4);
    for (size_t k = 0; k < v.size(); ++k) {
      int32_t i;
      std::memcpy(&i, &b[4 * k], 4);
      v[k] = static_cast<float>(i);
    }
    return v;
  }
  return Decode(BlockTypeNamed(name), b);
}

// The host's threadgroups for a copy whose rows hold nk0 units of work.
struct CpyGrid {
  uint64_t groups[3];
  uint64_t threads[3];
};
CpyGrid HostCpyGrid(int64_t nk0, int64_t ne01, int64_t ne02, int64_t ne03,
                    bool blocks) {
  int64_t nth = std::min<int64_t>(nk0 * ne01, 256);
  int64_t nrptg = 1;
  if (!blocks && nth > nk0) {
    nrptg = (nth + nk0 - 1) / nk0;
    nth = nk0;
    if (nrptg * nth > 256) --nrptg;
  }
  nth = std::min(nth, nk0);
  const int64_t nw0 = nrptg == 1 ? (nk0 + nth - 1) / nth : 1;
  return {{static_cast<uint64_t>(nw0 * (ne01 + nrptg - 1) / nrptg),
           static_cast<uint64_t>(ne02), static_cast<uint64_t>(ne03)},
          {static_cast<uint64_t>(nth), static_cast<uint64_t>(nrptg), 1}};
}

void SetShapes(GgmlKargsCpy& args, const Shape& src, const Shape& dst) {
  for (int i = 0; i < 4; ++i) {
    (&args.ne00)[i] = src.ne[i];
    (&args.nb00)[i] = src.nb[i];
    (&args.ne0)[i] = dst.ne[i];
    (&args.nb0)[i] = dst.nb[i];
  }
}

// src0 of `from` with strides `src` (a view of `storage` elements) copied
// into a contiguous dst of `to` and shape dst_ne.
void RunPlainCpy(const PlainType& from, const PlainType& to, const Shape& src,
                 int64_t storage, const int64_t (&dst_ne)[4]) {
  const std::string kernel =
      std::string("kernel_cpy_") + from.name + "_" + to.name;
  SCOPED_TRACE(kernel + " ne00 " + std::to_string(src.ne[0]) + " nb00 " +
               std::to_string(src.nb[0]));
  KernelHarness h = GgmlKernel(kernel);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  // Integers are copied exactly, and converted from floats by truncation.
  std::vector<float> x = Random(storage, 61, -100.0f, 100.0f);
  const std::vector<float> in = DecodePlain(from, EncodePlain(from, x));
  const Shape dst =
      Contiguous(to.size, dst_ne[0], dst_ne[1], dst_ne[2], dst_ne[3]);
  ASSERT_EQ(dst.elements(), src.elements());
  GgmlKargsCpy args{};
  args.nk0 = src.ne[0];
  SetShapes(args, src, dst);
  h.SetBytes(0, args);
  h.SetBuffer(1, EncodePlain(from, x));
  h.SetBuffer(2, std::vector<uint8_t>(dst.elements() * to.size, 0xFF));
  const CpyGrid g =
      HostCpyGrid(args.nk0, src.ne[1], src.ne[2], src.ne[3], false);
  ASSERT_TRUE(RunsThreadgroups(h, {g.groups[0], g.groups[1], g.groups[2]},
                               {g.threads[0], g.threads[1], g.threads[2]}));
  std::vector<double> want(dst.elements());
  int64_t n = 0;
  for (int64_t i3 = 0; i3 < src.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < src.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < src.ne[1]; ++i1) {
        for (int64_t i0 = 0; i0 < src.ne[0]; ++i0) {
          const uint64_t at =
              i0 * src.nb[0] + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3];
          const double v = in[at / from.size];
          const std::string t = to.name;
          want[n++] = t == "i32"    ? std::trunc(v)
                      : t == "f16"  ? RoundedToHalf({float(v)})[0]
                      : t == "bf16" ? FromBfloat(ToBfloat({float(v)}))[0]
                                    : v;
        }
      }
    }
  }
  EXPECT_TRUE(Near(DecodePlain(to, h.Read<uint8_t>(2)), want, 0, 0));
}

TEST(GgmlMetal, CopiesBetweenPlainTypes) {
  REQUIRE_GGML();
  const PlainType f32{"f32", 4}, f16{"f16", 2}, bf16{"bf16", 2}, i32{"i32", 4};
  const std::vector<std::pair<PlainType, PlainType>> pairs = {
      {f32, f32}, {f32, f16}, {f16, f32},  {f16, f16},  {f32, i32},
      {i32, f32}, {i32, i32}, {f32, bf16}, {bf16, f32}, {bf16, bf16}};
  for (const auto& [from, to] : pairs) {
    // Short rows batched 5 to a threadgroup; long rows over 2 threadgroups.
    RunPlainCpy(from, to, Contiguous(from.size, 37, 5, 3), 37 * 5 * 3,
                {37, 5, 3, 1});
    RunPlainCpy(from, to, Contiguous(from.size, 300, 4), 300 * 4,
                {300, 4, 1, 1});
  }
  // ggml_cont of a transpose (src0 a [6, 8] view of an [8, 6] matrix),
  // into a [12, 4] reshape; and one plane of a 3-d view with padded rows.
  for (const PlainType& t : {f32, f16}) {
    Shape transposed{{6, 8, 1, 1},
                     {8 * t.size, t.size, 48 * t.size, 48 * t.size}};
    RunPlainCpy(t, f32, transposed, 48, {12, 4, 1, 1});
    Shape padded{{10, 3, 2, 1},
                 {t.size, 16 * t.size, 64 * t.size, 128 * t.size}};
    RunPlainCpy(t, f16, padded, 128, {10, 3, 2, 1});
  }
}

// Quantizing copies: kernel_cpy_f32_QTYPE. What a block of 32 means is
// ggml-common.h's format (support.h); what the quantizer chooses is ggml's
// reference (ggml-quants.c, quantize_row_*_ref): the scale d from the
// block's largest magnitude M (signed, for the types without a minimum) or
// its range, each value the nearest code (q4_0 and q5_0 clamp the top one).
struct Quantizer {
  const char* name;
  // The scale a block of `v` gets, before it is rounded to half.
  double (*scale)(const float* v);
  double max_error;  // in units of the scale
};

double SignedMax(const float* v) {
  float m = 0;
  for (int j = 0; j < 32; ++j) {
    if (std::fabs(v[j]) > std::fabs(m)) m = v[j];
  }
  return m;
}
double Range(const float* v) {
  return *std::max_element(v, v + 32) - *std::min_element(v, v + 32);
}

TEST(GgmlMetal, QuantizingCopies) {
  REQUIRE_GGML();
  const std::vector<Quantizer> quantizers = {
      {"q8_0",
       [](const float* v) {
         double amax = 0;
         for (int j = 0; j < 32; ++j)
           amax = std::max<double>(amax, std::fabs(v[j]));
         return amax / 127;
       },
       0.5},
      {"q4_0", [](const float* v) { return SignedMax(v) / -8; }, 1.0},
      {"q4_1", [](const float* v) { return Range(v) / 15; }, 0.5},
      {"q5_0", [](const float* v) { return SignedMax(v) / -16; }, 1.0},
      {"q5_1", [](const float* v) { return Range(v) / 31; }, 0.5},
  };
  constexpr int64_t ne00 = 128, ne01 = 3;
  for (const Quantizer& q : quantizers) {
    SCOPED_TRACE(q.name);
    const BlockType& type = BlockTypeNamed(q.name);
    KernelHarness h = GgmlKernel(std::string("kernel_cpy_f32_") + q.name);
    ASSERT_TRUE(h.status().ok()) << h.status().error().message;
    const std::vector<float> x = Random(ne00 * ne01, 71);
    const Shape src = Contiguous(4, ne00, ne01);
    Shape dst = Contiguous(type.bytes, ne00 / 32, ne01);
    dst.ne[0] = ne00;  // ggml's ne counts values, nb[1] the row's bytes
    GgmlKargsCpy args{};
    args.nk0 = ne00 / 32;
    SetShapes(args, src, dst);
    args.nb0 = type.bytes;
    h.SetBytes(0, args);
    h.SetBuffer(1, x);
    h.SetBuffer(2, std::vector<uint8_t>(type.BytesOf(ne00 * ne01), 0));
    const CpyGrid g = HostCpyGrid(args.nk0, ne01, 1, 1, true);
    ASSERT_TRUE(RunsThreadgroups(h, {g.groups[0], g.groups[1], g.groups[2]},
                                 {g.threads[0], g.threads[1], g.threads[2]}));
    const std::vector<uint8_t> out = h.Read<uint8_t>(2);
    const std::vector<float> got = Decode(type, out);
    for (int64_t b = 0; b < ne00 * ne01 / 32; ++b) {
      const double d = q.scale(&x[b * 32]);
      uint16_t dh;
      std::memcpy(&dh, &out[b * type.bytes], 2);
      // The scale as ggml rounds it to half.
      EXPECT_NEAR(isa::HalfBitsToFloat(dh), d, std::fabs(d) * 1e-3)
          << "block " << b;
      std::vector<double> want(x.begin() + b * 32, x.begin() + b * 32 + 32);
      const std::vector<float> block(got.begin() + b * 32,
                                     got.begin() + b * 32 + 32);
      // Half a step (a step where the top code is clamped), and the
      // rounding of d and the minimum to half.
      EXPECT_TRUE(Near(block, want, 0, q.max_error * std::fabs(d) + 4e-3))
          << "block " << b;
    }
  }
}

// Dequantizing copies: kernel_cpy_QTYPE_f32 and _f16, 16 values a thread.
TEST(GgmlMetal, DequantizingCopies) {
  REQUIRE_GGML();
  constexpr int64_t ne00 = 128, ne01 = 3;
  for (const BlockType& type : BlockTypes()) {
    if (!type.quantized) continue;
    for (const PlainType& to : {PlainType{"f32", 4}, PlainType{"f16", 2}}) {
      const std::string kernel =
          std::string("kernel_cpy_") + type.name + "_" + to.name;
      SCOPED_TRACE(kernel);
      KernelHarness h = GgmlKernel(kernel);
      ASSERT_TRUE(h.status().ok()) << h.status().error().message;
      const Encoded src = RandomRows(type, ne00, ne01, 81);
      Shape s = Contiguous(type.bytes, ne00 / 32, ne01);
      s.ne[0] = ne00;
      const Shape dst = Contiguous(to.size, ne00, ne01);
      GgmlKargsCpy args{};
      args.nk0 = ne00 / 16;
      SetShapes(args, s, dst);
      h.SetBytes(0, args);
      h.SetBuffer(1, src.bytes);
      h.SetBuffer(2, std::vector<uint8_t>(dst.elements() * to.size, 0xFF));
      const CpyGrid g = HostCpyGrid(args.nk0, ne01, 1, 1, true);
      ASSERT_TRUE(RunsThreadgroups(h, {g.groups[0], g.groups[1], g.groups[2]},
                                   {g.threads[0], g.threads[1], g.threads[2]}));
      std::vector<double> want(src.values.begin(), src.values.end());
      const bool half = std::string(to.name) == "f16";
      for (double& w : want) {
        if (half) w = isa::HalfBitsToFloat(isa::FloatToHalfBits(float(w)));
      }
      // The dequantizers multiply in half or float: a half's rounding.
      EXPECT_TRUE(Near(DecodePlain(to, h.Read<uint8_t>(2)), want, 1e-3, 2e-3));
    }
  }
}

}  // namespace
}  // namespace mtlemu::ggml
