// How MLX's Matmul::eval_gpu (mlx/backend/metal/matmul.cpp,
// steel_matmul_regular_axpby) launches its steel GEMM
// (steel/gemm/kernels/steel_gemm_fused.metal) for row-contiguous float32
// operands on the 'g' architectures (applegpu_g13g, g14g, g15g): the tile
// GEMM_TPARAM_MACRO picks (nn: bm 64, bn 64, bk 16, wm 2, wn 2), the
// function constants by index (has_batch 10, use_out_source 100,
// do_axpby 110, align_M/N/K 200-202), GEMMParams at [[buffer(4)]], A 0,
// B 1, D 3, threadgroups (ceil(N / bn), ceil(M / bm), 1) of (32, wn, wm).
// Shared by mlx_gemm_bench.cpp and peer_cases.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mtlemu::bench {

inline constexpr int kSteelBm = 64, kSteelBn = 64, kSteelBk = 16, kSteelWm = 2,
                     kSteelWn = 2;
inline constexpr char kSteelGemmFile[] =
    "steel/gemm/kernels/steel_gemm_fused.metal";
inline constexpr char kSteelGemmKernel[] =
    "steel_gemm_fused_nn_float32_float32_bm64_bn64_bk16_wm2_wn2";

// GEMMParams (steel/gemm/params.h) as the host lays it out.
struct SteelGemmParams {
  int32_t M, N, K, lda, ldb, ldd, tiles_n, tiles_m;
  int64_t batch_stride_a, batch_stride_b, batch_stride_d;
  int32_t swizzle_log, gemm_k_iterations_aligned, batch_ndim;
};
static_assert(sizeof(SteelGemmParams) == 72);

// One M x K by K x N product, swizzle_log 0.
inline SteelGemmParams SteelGemmParamsFor(int32_t M, int32_t N, int32_t K) {
  const int32_t tiles_n = (N + kSteelBn - 1) / kSteelBn;
  const int32_t tiles_m = (M + kSteelBm - 1) / kSteelBm;
  return {
      M, N, K, K, N, N, tiles_n, tiles_m, 0, 0, int64_t{M} * N, 0, K / kSteelBk,
      1};
}

// The function constants, by index, for that product.
inline std::vector<std::pair<std::string, std::string>> SteelGemmConstants(
    int32_t M, int32_t N, int32_t K) {
  const auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  return {{"10", "false"},
          {"100", "false"},
          {"110", "false"},
          {"200", flag(M % kSteelBm == 0)},
          {"201", flag(N % kSteelBn == 0)},
          {"202", flag(K % kSteelBk == 0)}};
}

}  // namespace mtlemu::bench
