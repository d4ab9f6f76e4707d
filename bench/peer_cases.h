// The launches of the PoCL comparison, described once for both runtimes:
// each kernel of peer_kernels.h with its inputs, grid and threadgroup.
// Shared by peer_bench.cpp (mtlemu) and pocl_runner.cpp (PoCL), which run
// in separate processes (PoCL's Clang 15 and mtlemu's Clang 16 cannot share
// one), so both must build the same inputs from the same description.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bench/mlx_steel_gemm.h"

namespace mtlemu::bench {

// A kernel of tests/compiler/triton/kernels/basics.py, launched as Triton
// launches it: its pointer arguments are the case's buffers, in order, then
// the others by name (constexprs too, as text), over `grid` programs.
struct TritonLaunch {
  const char* kernel = nullptr;
  std::vector<std::string> buffers;
  std::vector<std::pair<std::string, std::string>> scalars;
  size_t grid[3] = {1, 1, 1};
};

// A kernel of an MLX snapshot (MTLEMU_MLX_DIR), launched as MLX launches
// it: `file` under mlx/backend/metal/kernels/, compiled as MLX's build
// does (-I the snapshot) with these function constants by index; the
// case's buffers, then `values`, at the [[buffer]] indices `indices`; a
// grid of `grid` threads, or of threadgroups with `threadgroups`.
struct MlxLaunch {
  const char* file = nullptr;
  const char* kernel = nullptr;
  std::vector<std::pair<std::string, std::string>> constants;
  std::vector<std::vector<uint8_t>> values;
  std::vector<int> indices;
  bool threadgroups = false;
  size_t grid[3] = {1, 1, 1};
  size_t group[3] = {1, 1, 1};
};

struct PeerCase {
  std::string name;
  std::string work;
  const char* kernel;  // in kPeerOpenCl (PoCL) and, unless `triton`, kPeerMsl
  std::vector<std::vector<float>> buffers;  // initial contents
  int output;                               // which buffer is compared
  // The by-value arguments after the buffers, in order.
  std::vector<std::vector<uint8_t>> values;
  size_t grid[2];
  size_t group[2];
  // mtlemu runs this Triton kernel instead of the MSL one.
  TritonLaunch triton = {};
  // The largest difference from PoCL's output, relative to the larger of
  // the two values, that counts as the same result (0: the same bits;
  // where the two sum or round in another order).
  double tolerance = 0;
  // Or this MLX kernel.
  MlxLaunch mlx = {};
};

inline std::vector<float> Ramp(size_t n, int period, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] =
        static_cast<float>(static_cast<int>(i % period) - period / 2) * scale;
  }
  return v;
}

template <class T>
std::vector<uint8_t> BytesOf(const T& value) {
  std::vector<uint8_t> bytes(sizeof value);
  std::memcpy(bytes.data(), &value, sizeof value);
  return bytes;
}

// The four cases at `scale` times the sizes (1: a vector add and a
// reduction of 16M floats, 1M threads of 1024 FMAs, a 512^3 matmul).
inline std::vector<PeerCase> PeerCases(double scale) {
  const auto scaled = [scale](size_t n) {
    const auto s = static_cast<size_t>(static_cast<double>(n) * scale);
    return std::max<size_t>(256, s / 256 * 256);
  };
  const auto millions = [](size_t n) {
    return n >= (1u << 20) ? std::to_string(n >> 20) + "M"
                           : std::to_string(n >> 10) + "K";
  };
  std::vector<PeerCase> cases;
  const size_t add = scaled(size_t{1} << 24);
  cases.push_back(
      {"vector add",
       millions(add) + " floats",
       "vector_add",
       {Ramp(add, 101, 0.5f), Ramp(add, 37, 0.25f), std::vector<float>(add)},
       2,
       {},
       {add, 1},
       {256, 1}});
  const size_t fma = scaled(size_t{1} << 20);
  const float k[2] = {0.999f, 0.001f};
  cases.push_back({"FMA chain",
                   millions(fma) + " threads x 1024 FMA",
                   "fma_chain",
                   {Ramp(fma, 97, 0.01f)},
                   0,
                   {BytesOf(k)},
                   {fma, 1},
                   {256, 1}});
  const size_t reduce = scaled(size_t{1} << 24);
  cases.push_back({"threadgroup reduction",
                   millions(reduce) + " floats, 256 threads",
                   "reduce",
                   {Ramp(reduce, 61, 0.125f), std::vector<float>(reduce / 256)},
                   1,
                   {},
                   {reduce, 1},
                   {256, 1}});
  // The matmul's work grows as n^3.
  const auto n = static_cast<uint32_t>(
      std::max(1.0, std::round(32 * std::cbrt(scale))) * 16);
  cases.push_back(
      {"16x16 tiled matmul",
       std::to_string(n) + "^3",
       "matmul",
       {Ramp(size_t{n} * n, 13, 0.25f), Ramp(size_t{n} * n, 7, 0.5f),
        std::vector<float>(size_t{n} * n)},
       2,
       {BytesOf(n)},
       {n, n},
       {16, 16}});

  // The Triton kernels of mtlemu's tests beside OpenCL C doing the same
  // work: the vector add and the matmul against the same OpenCL kernels
  // as above (their inputs are sums of small multiples of 1/8, exact in any
  // order), a row softmax against a work-group per row.
  const auto text = [](size_t v) { return std::to_string(v); };
  PeerCase triton_add = cases[0];
  triton_add.name = "Triton vector add";
  triton_add.triton = {"add_kernel",
                       {"x_ptr", "y_ptr", "output_ptr"},
                       {{"n_elements", text(add)}, {"BLOCK_SIZE", "1024"}},
                       {(add + 1023) / 1024, 1, 1}};
  cases.push_back(triton_add);
  const size_t rows = scaled(size_t{1} << 14), cols = 781;
  cases.push_back(
      {"Triton softmax",
       text(rows) + " rows x " + text(cols),
       "softmax_rows",
       {std::vector<float>(rows * cols), Ramp(rows * cols, 29, 0.125f)},
       0,
       {BytesOf(static_cast<uint32_t>(cols)),
        BytesOf(static_cast<uint32_t>(cols))},
       {rows * 128, 1},
       {128, 1},
       {"softmax_kernel",
        {"out_ptr", "in_ptr"},
        {{"in_row_stride", text(cols)},
         {"out_row_stride", text(cols)},
         {"n_cols", text(cols)},
         {"BLOCK_SIZE", "1024"}},
        {rows, 1, 1}},
       1e-5});
  PeerCase triton_matmul = cases[3];
  triton_matmul.name = "Triton matmul";
  triton_matmul.triton = {"matmul_kernel",
                          {"a_ptr", "b_ptr", "c_ptr"},
                          {{"M", text(n)},
                           {"N", text(n)},
                           {"K", text(n)},
                           {"stride_am", text(n)},
                           {"stride_ak", "1"},
                           {"stride_bk", text(n)},
                           {"stride_bn", "1"},
                           {"stride_cm", text(n)},
                           {"stride_cn", "1"},
                           {"BLOCK_M", "32"},
                           {"BLOCK_N", "32"},
                           {"BLOCK_K", "32"}},
                          {n / 32, n / 32, 1}};
  cases.push_back(triton_matmul);

  // MLX's kernels for the same work, dispatched as MLX's backend does:
  // binary_op_gpu (binary.cpp) for two contiguous float32 arrays of 2^16 or
  // more elements, two per thread in threadgroups of 1024; Matmul::eval_gpu
  // (matmul.cpp) for row-contiguous float32 operands, the steel GEMM
  // (mlx_steel_gemm.h).
  PeerCase mlx_add = cases[0];
  mlx_add.name = "MLX add (vvn_Addfloat32)";
  mlx_add.mlx = {"binary.metal",
                 "vvn_Addfloat32",
                 {},
                 {BytesOf(static_cast<uint32_t>(add))},
                 {0, 1, 2, 3},
                 false,
                 {add / 2, 1, 1},
                 {1024, 1, 1}};
  cases.push_back(mlx_add);
  // The steel GEMM as mlx_steel_gemm.h launches it.
  const auto side = static_cast<int32_t>(n);
  const SteelGemmParams params = SteelGemmParamsFor(side, side, side);
  PeerCase mlx_gemm = cases[3];
  mlx_gemm.name = "MLX steel GEMM";
  mlx_gemm.mlx = {kSteelGemmFile,
                  kSteelGemmKernel,
                  SteelGemmConstants(side, side, side),
                  {BytesOf(params)},
                  {0, 1, 3, 4},
                  true,
                  {static_cast<size_t>(params.tiles_n),
                   static_cast<size_t>(params.tiles_m), 1},
                  {32, kSteelWn, kSteelWm}};
  cases.push_back(mlx_gemm);
  return cases;
}

}  // namespace mtlemu::bench
