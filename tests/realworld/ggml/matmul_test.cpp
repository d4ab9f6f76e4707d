// llama.cpp's Metal backend (ggml's src/ggml-metal/ggml-metal.metal):
// matrix-vector products of every kind.
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

// dst[i12][i1][i0] = sum over k of src0[i12 / r2][i0][k] * src1[i12][i1][k]:
// ne01 rows of ne00 values (a, ne02 = ne12 / r2 matrices of them) times
// ne11 vectors (x, ne12 batches of them), in double; `scale` the largest sum
// of the terms' magnitudes, for tolerances relative to it.
struct Products {
  std::vector<double> values;
  double scale = 0;
};
Products Multiply(const std::vector<float>& a, const std::vector<float>& x,
                  int64_t ne00, int64_t ne01, int64_t ne11, int64_t ne12,
                  int64_t r2) {
  Products p;
  p.values.resize(ne01 * ne11 * ne12);
  for (int64_t i2 = 0; i2 < ne12; ++i2) {
    const float* m = &a[(i2 / r2) * ne01 * ne00];
    for (int64_t i1 = 0; i1 < ne11; ++i1) {
      const float* v = &x[(i2 * ne11 + i1) * ne00];
      for (int64_t i0 = 0; i0 < ne01; ++i0) {
        double sum = 0, size = 0;
        for (int64_t k = 0; k < ne00; ++k) {
          sum += double(m[i0 * ne00 + k]) * v[k];
          size += std::fabs(double(m[i0 * ne00 + k]) * v[k]);
        }
        p.values[(i2 * ne11 + i1) * ne01 + i0] = sum;
        p.scale = std::max(p.scale, size);
      }
    }
  }
  return p;
}

// Sums of products in float, relative to the terms' size: f32's rounding;
// half's where the kernels convert src1 or partial sums to half in places
// (f16 and the quantized types); bfloat's 8 bits where a kernel rounds src1
// to bfloat (mul_mm's bf16 tiles).
double ProductTolerance(const BlockType& type) {
  const std::string name = type.name;
  if (name == "f32") return 1e-5;
  return name == "bf16" ? 4e-3 : 2e-3;
}

// The last threadgroup of a matrix-vector kernel reads whole groups of
// rows, past ne01: in llama.cpp the tensor lies inside a larger MTLBuffer
// (ggml's allocator), so the rows after it are there; here they are
// `rows` rows of padding.
std::vector<uint8_t> Padded(std::vector<uint8_t> bytes, uint64_t row_bytes,
                            int64_t rows) {
  bytes.resize(bytes.size() + row_bytes * rows, 0);
  return bytes;
}

// --- matrix x vector: kernel_mul_mv_* --------------------------------------
// ggml_metal_library_get_pipeline_mul_mv: for f32/f16 src0, _short (ne00
// < 32: 1 SIMD group, 32 rows each), else nsg = min(4, ceil(ne00 / 128))
// SIMD groups of 2 rows, _4 where ne00 % 4 == 0, 64 floats of threadgroup
// memory; q4_0 .. q5_1: N_SG 2 SIMD groups of N_R0 4 rows; q8_0: 4 of 2,
// 64 floats. Function constants FC_MUL_MV + 0 nsg, + 2 ne12, + 3 r2, + 4
// r3. ggml_metal_op_mul_mat (its mul_mv branch): kargs at 0, src0, src1
// (f32), dst at 1, 2, 3; ceil(ne01 / nr0) (f32, f16, q8_0) or ceil(ne01 /
// (nr0 nsg)) (the others) x ne11 x ne12 ne13 threadgroups of 32 x nsg.

struct GgmlKargsMulMv {
  int32_t ne00, ne01, ne02;
  uint64_t nb00, nb01, nb02, nb03;
  int32_t ne10, ne11, ne12;
  uint64_t nb10, nb11, nb12, nb13;
  int32_t ne0, ne1, nr0;
  int16_t r2, r3;
};

// The kargs of mul_mv and mul_mv_ext (the same fields but mul_mv's nr0):
// ne01 contiguous rows of ne00 values of `type` times ne11 contiguous f32
// vectors, one matrix.
template <class Kargs>
Kargs VectorProductArgs(const BlockType& type, int64_t ne00, int64_t ne01,
                        int64_t ne11) {
  Kargs args{};
  args.ne00 = static_cast<int32_t>(ne00);
  args.ne01 = static_cast<int32_t>(ne01);
  args.ne02 = 1;
  args.nb00 = type.bytes;
  args.nb01 = type.BytesOf(ne00);
  args.nb02 = args.nb03 = args.nb01 * ne01;
  args.ne10 = static_cast<int32_t>(ne00);
  args.ne11 = static_cast<int32_t>(ne11);
  args.ne12 = 1;
  args.nb10 = 4;
  args.nb11 = 4 * ne00;
  args.nb12 = args.nb13 = 4 * ne00 * ne11;
  args.ne0 = static_cast<int32_t>(ne01);
  args.ne1 = static_cast<int32_t>(ne11);
  args.r2 = args.r3 = 1;
  return args;
}

// dst[i1][i0] = sum over k of src0[i0][k] * src1[i1][k]: ne01 rows of
// `type` times ne11 vectors of ne00 floats.
void RunMulMv(const BlockType& type, int64_t ne00, int64_t ne01, int64_t ne11) {
  const std::string t = type.name;
  int nsg, nr0;
  uint64_t smem = 0;
  std::string suffix;
  if (!type.quantized) {
    if (ne00 < 32) {
      nsg = 1;
      nr0 = 32;
      suffix = "_short";
    } else {
      nsg = static_cast<int>(std::min<int64_t>(4, (ne00 + 127) / 128));
      nr0 = 2;
      smem = 32 * sizeof(float) * nr0;
      suffix = ne00 % 4 == 0 ? "_4" : "";
    }
  } else if (t == "q8_0") {
    nsg = 4;
    nr0 = 2;
    smem = 32 * sizeof(float) * nr0;
  } else {
    nsg = 2;
    nr0 = 4;
  }
  const std::string kernel = "kernel_mul_mv_" + t + "_f32" + suffix;
  SCOPED_TRACE(kernel + " ne00 " + std::to_string(ne00));
  KernelHarness h = GgmlKernel(
      kernel,
      {{"600", std::to_string(nsg)}, {"602", "1"}, {"603", "1"}, {"604", "1"}});
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  const Encoded a = RandomRows(type, ne00, ne01, 51);
  const std::vector<float> x = Random(ne00 * ne11, 52);
  GgmlKargsMulMv args =
      VectorProductArgs<GgmlKargsMulMv>(type, ne00, ne01, ne11);
  args.nr0 = nr0;
  h.SetBytes(0, args);
  h.SetBuffer(1, Padded(a.bytes, args.nb01, nr0 * nsg));
  h.SetBuffer(2, x);
  h.SetBuffer(3, std::vector<float>(ne01 * ne11, -1));
  // The host sets it, 0 included.
  ASSERT_TRUE(h.SetThreadgroupMemoryLength(smem, 0).ok());
  const bool by_rows = !type.quantized || t == "q8_0";
  const uint64_t rows_per_group = by_rows ? nr0 : nr0 * nsg;
  ASSERT_TRUE(RunsThreadgroups(h,
                               {(ne01 + rows_per_group - 1) / rows_per_group,
                                static_cast<uint64_t>(ne11), 1},
                               {32, static_cast<uint64_t>(nsg), 1}));
  const Products want = Multiply(a.values, x, ne00, ne01, ne11, 1, 1);
  const double rtol = ProductTolerance(type);
  EXPECT_TRUE(Near(h.Read<float>(3), want.values, rtol, rtol * want.scale));
}

TEST(GgmlMetal, MatrixVectorProductsOfEveryKind) {
  REQUIRE_GGML();
  for (const BlockType& type : BlockTypes()) {
    RunMulMv(type, 512, 13, 3);
    if (!type.quantized) {
      RunMulMv(type, 100, 7, 2);  // not a multiple of 4
      RunMulMv(type, 20, 40, 2);  // _short
    }
  }
}

// --- matrix x matrix: kernel_mul_mm_* ---------------------------------------
// ggml_metal_op_mul_mat takes the simdgroup-matrix kernel where ne00 >= 64
// and ne11 > 8; ggml_metal_library_get_pipeline_mul_mm: kernel_mul_mm_T_f32,
// FC_MUL_MM + 0 bc_inp (ne00 % 32 != 0), + 1 bc_out (ne0 % 64 or ne1 % 32:
// partial tiles), + 2 ne12, + 3 ne13, + 4 r2, + 5 r3 (shorts); without
// Metal 4's tensors (M1 to M4): tiles of 64 x 32, 4 SIMD groups, 8192 bytes
// of threadgroup memory with bc_out, else 6144. ceil(ne11 / 32) x ceil(ne01
// / 64) x ne12 ne13 threadgroups of 32 x 4. src0 (and src1, which is f32)
// are multiplied in half.

struct GgmlKargsMulMm {
  int32_t ne00, ne02;
  uint64_t nb01, nb02, nb03;
  int32_t ne12;
  uint64_t nb10, nb11, nb12, nb13;
  int32_t ne0, ne1;
  int16_t r2, r3;
};

void RunMulMm(const BlockType& type, int64_t ne00, int64_t ne01, int64_t ne11,
              int64_t ne12 = 1, int64_t r2 = 1) {
  const std::string kernel = std::string("kernel_mul_mm_") + type.name + "_f32";
  SCOPED_TRACE(kernel + " " + std::to_string(ne00) + " x " +
               std::to_string(ne01) + " x " + std::to_string(ne11) + " x " +
               std::to_string(ne12));
  const bool bc_inp = ne00 % 32 != 0;
  const bool bc_out = ne01 % 64 != 0 || ne11 % 32 != 0;
  KernelHarness h = GgmlKernel(kernel, {{"700", bc_inp ? "true" : "false"},
                                        {"701", bc_out ? "true" : "false"},
                                        {"702", std::to_string(ne12)},
                                        {"703", "1"},
                                        {"704", std::to_string(r2)},
                                        {"705", "1"}});
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  const int64_t ne02 = ne12 / r2;
  const Encoded a = RandomRows(type, ne00, ne01 * ne02, 101);
  const std::vector<float> x = Random(ne00 * ne11 * ne12, 102);
  GgmlKargsMulMm args{};
  args.ne00 = static_cast<int32_t>(ne00);
  args.ne02 = static_cast<int32_t>(ne02);
  args.nb01 = type.BytesOf(ne00);
  args.nb02 = args.nb01 * ne01;
  args.nb03 = args.nb02 * ne02;
  args.ne12 = static_cast<int32_t>(ne12);
  args.nb10 = 4;
  args.nb11 = 4 * ne00;
  args.nb12 = args.nb11 * ne11;
  args.nb13 = args.nb12 * ne12;
  args.ne0 = static_cast<int32_t>(ne01);
  args.ne1 = static_cast<int32_t>(ne11);
  args.r2 = static_cast<int16_t>(r2);
  args.r3 = 1;
  h.SetBytes(0, args);
  h.SetBuffer(1, a.bytes);
  h.SetBuffer(2, x);
  h.SetBuffer(3, std::vector<float>(ne01 * ne11 * ne12, -1));
  ASSERT_TRUE(h.SetThreadgroupMemoryLength(bc_out ? 8192 : 6144, 0).ok());
  ASSERT_TRUE(RunsThreadgroups(
      h,
      {static_cast<uint64_t>((ne11 + 31) / 32),
       static_cast<uint64_t>((ne01 + 63) / 64), static_cast<uint64_t>(ne12)},
      {32, 4, 1}));
  const Products want = Multiply(a.values, x, ne00, ne01, ne11, ne12, r2);
  // Products of halves (src1 rounded to half; to bfloat for bf16), summed
  // in float.
  const double rtol = std::max(2e-3, ProductTolerance(type));
  EXPECT_TRUE(Near(h.Read<float>(3), want.values, rtol, rtol * want.scale));
}

TEST(GgmlMetal, MatrixMatrixProductsOfEveryKind) {
  REQUIRE_GGML();
  for (const BlockType& type : BlockTypes()) {
    RunMulMm(type, 128, 64, 32);       // whole tiles
    RunMulMm(type, 96, 70, 20, 2, 2);  // partial tiles; src0 broadcast
    if (!type.quantized) RunMulMm(type, 100, 40, 12);  // ne00 % 32 != 0
  }
}

// --- a few vectors: kernel_mul_mv_ext_*
// --------------------------------------- ggml_metal_op_mul_mat's first branch:
// src1 f32, ne00 % 128 == 0 and 2 <= ne11 <= 8 (the types of BlockTypes()): nsg
// 2, nxpsg 16 threads along a row where ne00 % 256 == 0 and ne11 < 3, else 8;
// r0ptg = 32 / nxpsg * nsg rows and r1ptg (2, 3, 4 or 5 after ne11) vectors a
// threadgroup; ggml_metal_library_get_pipeline_mul_mv_ext:
// kernel_mul_mv_ext_T_f32_r1_N, FC_MUL_MV + 0 nsg, + 1 nxpsg, + 2 ne12, + 3 r2,
// + 4 r3; kargs at 0, src0, src1, dst at 1, 2, 3; ceil(ne01 / r0ptg) x
// ceil(ne11 / r1ptg) x ne12 ne13 threadgroups of 32 x nsg.

struct GgmlKargsMulMvExt {
  int32_t ne00, ne01, ne02;
  uint64_t nb00, nb01, nb02, nb03;
  int32_t ne10, ne11, ne12;
  uint64_t nb10, nb11, nb12, nb13;
  int32_t ne0, ne1;
  int16_t r2, r3;
};

void RunMulMvExt(const BlockType& type, int64_t ne00, int64_t ne01,
                 int64_t ne11) {
  constexpr int nsg = 2;
  const int nxpsg = ne00 % 256 == 0 && ne11 < 3 ? 16 : 8;
  const int r0ptg = 32 / nxpsg * nsg;
  const int r1ptg = ne11 == 2                ? 2
                    : ne11 == 3 || ne11 == 6 ? 3
                    : ne11 == 5              ? 5
                                             : 4;
  const std::string kernel = std::string("kernel_mul_mv_ext_") + type.name +
                             "_f32_r1_" + std::to_string(r1ptg);
  SCOPED_TRACE(kernel + " ne00 " + std::to_string(ne00) + " ne11 " +
               std::to_string(ne11));
  KernelHarness h = GgmlKernel(kernel, {{"600", std::to_string(nsg)},
                                        {"601", std::to_string(nxpsg)},
                                        {"602", "1"},
                                        {"603", "1"},
                                        {"604", "1"}});
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  const Encoded a = RandomRows(type, ne00, ne01, 111);
  const std::vector<float> x = Random(ne00 * ne11, 112);
  const GgmlKargsMulMvExt args =
      VectorProductArgs<GgmlKargsMulMvExt>(type, ne00, ne01, ne11);
  h.SetBytes(0, args);
  h.SetBuffer(1, Padded(a.bytes, args.nb01, r0ptg));
  h.SetBuffer(2, x);
  h.SetBuffer(3, std::vector<float>(ne01 * ne11, -1));
  ASSERT_TRUE(
      RunsThreadgroups(h,
                       {static_cast<uint64_t>((ne01 + r0ptg - 1) / r0ptg),
                        static_cast<uint64_t>((ne11 + r1ptg - 1) / r1ptg), 1},
                       {32, nsg, 1}));
  const Products want = Multiply(a.values, x, ne00, ne01, ne11, 1, 1);
  const double rtol = ProductTolerance(type);
  EXPECT_TRUE(Near(h.Read<float>(3), want.values, rtol, rtol * want.scale));
}

TEST(GgmlMetal, ProductsWithAFewVectorsOfEveryKind) {
  REQUIRE_GGML();
  for (const BlockType& type : BlockTypes()) {
    RunMulMvExt(type, 256, 13, 2);  // 16 threads a row, r1_2
    for (const int64_t ne11 : {3, 5, 7}) RunMulMvExt(type, 128, 13, ne11);
  }
}

}  // namespace
}  // namespace mtlemu::ggml
