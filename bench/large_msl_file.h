// A large MSL file as real libraries write them (MLX, llama.cpp): constant
// tables, function constants that nobody sets, functor templates, kernel
// templates with threadgroup memory instantiated under [[host_name]] for
// many types and operations, and plain kernels besides. For the compiler
// benchmark: one kernel of it is lowered.
#pragma once

#include <string>

namespace mtlemu::bench {

inline std::string LargeMslFile() {
  std::string s = R"(#include <metal_stdlib>
using namespace metal;

constant bool has_bias [[function_constant(0)]];
constant int activation [[function_constant(1)]];
constant float scale_override [[function_constant(2)]];
constant bool use_scale = is_function_constant_defined(scale_override);

struct Add { template <typename T> T operator()(T a, T b) const { return a + b; } };
struct Sub { template <typename T> T operator()(T a, T b) const { return a - b; } };
struct Mul { template <typename T> T operator()(T a, T b) const { return a * b; } };
struct Max { template <typename T> T operator()(T a, T b) const { return metal::max(a, b); } };
struct Min { template <typename T> T operator()(T a, T b) const { return metal::min(a, b); } };
struct Avg { template <typename T> T operator()(T a, T b) const { return (a + b) / T(2); } };
struct Sq { template <typename T> T operator()(T a, T b) const { return (a - b) * (a - b); } };
struct Fst { template <typename T> T operator()(T a, T) const { return a; } };

template <typename T> T activate(T x) {
  if (activation == 1) return metal::max(x, T(0));
  if (activation == 2) return x / (T(1) + T(metal::exp(-float(x))));
  return x;
}

template <typename T, typename Op>
[[kernel]] void binary_vv(device const T* a [[buffer(0)]],
                          device const T* b [[buffer(1)]],
                          device T* out [[buffer(2)]],
                          constant uint& n [[buffer(3)]],
                          uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = activate(Op()(a[i], b[i]));
}

template <typename T, typename Op>
[[kernel]] void binary_strided(device const T* a [[buffer(0)]],
                               device const T* b [[buffer(1)]],
                               device T* out [[buffer(2)]],
                               constant int4& shape [[buffer(3)]],
                               constant int4& a_strides [[buffer(4)]],
                               constant int4& b_strides [[buffer(5)]],
                               uint3 pos [[thread_position_in_grid]]) {
  if (int(pos.x) >= shape.x || int(pos.y) >= shape.y || int(pos.z) >= shape.z) return;
  const int ai = int(pos.x) * a_strides.x + int(pos.y) * a_strides.y + int(pos.z) * a_strides.z;
  const int bi = int(pos.x) * b_strides.x + int(pos.y) * b_strides.y + int(pos.z) * b_strides.z;
  out[(int(pos.z) * shape.y + int(pos.y)) * shape.x + int(pos.x)] = Op()(a[ai], b[bi]);
}

template <typename T, typename Op, int N>
[[kernel]] void reduce_rows(device const T* in [[buffer(0)]],
                            device T* out [[buffer(1)]],
                            constant uint& row_size [[buffer(2)]],
                            uint row [[threadgroup_position_in_grid]],
                            uint lid [[thread_position_in_threadgroup]],
                            uint lane [[thread_index_in_simdgroup]],
                            uint sg [[simdgroup_index_in_threadgroup]]) {
  threadgroup T partial[N / 32];
  T acc = in[row * row_size + lid];
  for (uint k = lid + N; k < row_size; k += N) acc = Op()(acc, in[row * row_size + k]);
  acc = simd_sum(acc);
  if (lane == 0) partial[sg] = acc;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0) {
    T v = lane < N / 32 ? partial[lane] : T(0);
    v = simd_sum(v);
    if (lid == 0) out[row] = has_bias ? v + T(1) : v;
  }
}

template <typename T>
[[kernel]] void scale_rows(device T* x [[buffer(0)]],
                           constant float& scale [[buffer(1)]],
                           uint2 pos [[thread_position_in_grid]],
                           uint2 size [[threads_per_grid]]) {
  const float s = use_scale ? scale_override : scale;
  x[pos.y * size.x + pos.x] = T(float(x[pos.y * size.x + pos.x]) * s);
}

)";
  // Constant tables.
  for (int t = 0; t < 24; ++t) {
    s += "constant float table" + std::to_string(t) + "[256] = {";
    for (int i = 0; i < 256; ++i) {
      s += std::to_string(0.001 * (i * (t + 3) % 997) - 0.25) +
           (i + 1 < 256 ? "f, " : "f");
    }
    s += "};\n";
  }
  // [[host_name]] instantiations: types x operations x kernel templates.
  const char* types[] = {"float", "half", "int", "uint", "short", "ushort"};
  const char* ops[] = {"Add", "Sub", "Mul", "Max", "Min", "Avg", "Sq", "Fst"};
  for (const char* t : types) {
    for (const char* op : ops) {
      const std::string suffix = std::string(op) + "_" + t;
      s += "template [[host_name(\"vv_" + suffix +
           "\")]] [[kernel]] decltype(binary_vv<" + t + ", " + op +
           ">) binary_vv<" + t + ", " + op + ">;\n";
      s += "template [[host_name(\"strided_" + suffix +
           "\")]] [[kernel]] decltype(binary_strided<" + t + ", " + op +
           ">) binary_strided<" + t + ", " + op + ">;\n";
      for (int n : {64, 128, 256, 512, 1024}) {
        const std::string ns = std::to_string(n);
        s += "template [[host_name(\"reduce" + ns + "_" + suffix +
             "\")]] [[kernel]] decltype(reduce_rows<" + t + ", " + op + ", " +
             ns + ">) reduce_rows<" + t + ", " + op + ", " + ns + ">;\n";
      }
    }
    s += std::string("template [[host_name(\"scale_") + t +
         "\")]] [[kernel]] decltype(scale_rows<" + t + ">) scale_rows<" + t +
         ">;\n";
  }
  // Plain kernels, each reading one of the tables.
  for (int i = 0; s.size() < 500 * 1024; ++i) {
    const std::string n = std::to_string(i);
    const std::string table = "table" + std::to_string(i % 24);
    s += "kernel void plain" + n +
         "(device float* a [[buffer(0)]], device const float4* b "
         "[[buffer(1)]],\n    uint id [[thread_position_in_grid]]) {\n"
         "  float x = a[id];\n  float4 v = b[id % 64];\n"
         "  for (int j = 0; j < " +
         std::to_string(i % 7 + 1) + "; ++j) x = fma(x, v.x, " + table +
         "[(id + j) & 255]);\n"
         "  v.yz = v.zy * " +
         n + ".0f;\n  a[id] = sqrt(fabs(x)) + sin(x) + dot(v, v);\n}\n";
  }
  return s;
}

}  // namespace mtlemu::bench
