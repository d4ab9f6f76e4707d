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

namespace mtlemu::bench {

struct PeerCase {
  std::string name;
  std::string work;
  const char* kernel;
  std::vector<std::vector<float>> buffers;  // initial contents
  int output;                               // which buffer is compared
  std::vector<uint8_t> bytes;  // the by-value argument after the buffers
  size_t grid[2];
  size_t group[2];
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
                   BytesOf(k),
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
       BytesOf(n),
       {n, n},
       {16, 16}});
  return cases;
}

}  // namespace mtlemu::bench
