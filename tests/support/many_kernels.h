// A source in the shape of llama.cpp's ggml-metal.metal, for the tests of
// sources of many kernels (compiler/kernel_parts.h,
// compiler/msl_front_ends.h): a kernel template instantiated `n` times by
// [[host_name]], plain kernels between the instantiations, and a helper
// from a user header, "scale.h" (kScaleHeader), a second file in the file
// table.
#pragma once

#include <string>

namespace mtlemu::testing {

inline constexpr const char* kScaleHeader =
    "template <int K, typename T>\n"
    "T Scale(T v) { return v * T(K); }\n";

// axpy_K (K in 0 .. n-1: y = K * x + y, float for even K, int for odd),
// widen_K for K % 50 in {7, 31} (half4 and float4: y = float4(x) * K),
// plain_K for K % 40 == 17 (y = K * i), and first (y = i), before them all.
inline std::string ManyKernels(int n) {
  std::string s = R"(#include <metal_stdlib>
#include "scale.h"
using namespace metal;
template <int K, typename T>
kernel void axpy(device const T* x [[buffer(0)]], device T* y [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
  y[i] = Scale<K>(x[i]) + y[i];
}
// Metal converts each element of (float4)h; clang takes it for a bit cast
// of another size, an error the front end compiles again rewritten
// (RetrySites): only the half4 instantiations have it.
template <int K, typename T4>
kernel void widen(device const T4* x [[buffer(0)]],
                  device float4* y [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
  y[i] = (float4)(x[i]) * float(K);
}
kernel void first(device float* y [[buffer(0)]],
                  uint i [[thread_position_in_grid]]) { y[i] = i; }
)";
  for (int k = 0; k < n; ++k) {
    const char* type = k % 2 == 0 ? "float" : "int";
    s += "template [[host_name(\"axpy_" + std::to_string(k) +
         "\")]] kernel void axpy<" + std::to_string(k) + ", " + type +
         ">(device const " + type + "*, device " + type + "*, uint);\n";
    if (k % 50 == 7 || k % 50 == 31) {
      const char* t4 = k % 50 == 7 ? "half4" : "float4";
      s += "template [[host_name(\"widen_" + std::to_string(k) +
           "\")]] kernel void widen<" + std::to_string(k) + ", " + t4 +
           ">(device const " + t4 + "*, device float4*, uint);\n";
    }
    if (k % 40 == 17) {
      s += "kernel void plain_" + std::to_string(k) +
           "(device float* y [[buffer(0)]], uint i "
           "[[thread_position_in_grid]]) { y[i] = " +
           std::to_string(k) + " * i; }\n";
    }
  }
  return s;
}

}  // namespace mtlemu::testing
