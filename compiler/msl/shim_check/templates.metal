// Templates: function templates over scalar and vector types, class
// templates, constexpr template arguments, and a function as a template
// argument (`template <auto F>`; `template <float (*F)(float)>` is not
// accepted by clang 16's C++ for OpenCL, see BUILTINS.md).
#include <metal_stdlib>
using namespace metal;

template <typename T, int N>
struct Accum {
  T v[N];
  void clear() {
    for (int i = 0; i < N; ++i) v[i] = T(0);
  }
  T total() const {
    T s = T(0);
    for (int i = 0; i < N; ++i) s += v[i];
    return s;
  }
};

template <typename T>
T square(T x) { return x * x; }

template <typename T>
T relu(T x) { return max(x, T(0)); }

template <typename T, typename U>
T convert_to(U x) { return static_cast<T>(x); }

// Deducing a vector type and taking its element type and size from the
// traits. (Deducing T and N through metal::vec<T, N> does not work here:
// vec<bfloat, N> must be bfloatN, so vec is an alias through a class
// template; see metal_types.)
template <typename V>
make_scalar_t<V> hsum(V v) {
  make_scalar_t<V> s = 0;
#pragma unroll
  for (int i = 0; i < vec_elements_v<V>; ++i) s += v[i];
  return s;
}

float twice(float x) { return 2.0f * x; }
template <auto F>
float apply(float x) { return F(x); }

template <typename T>
void scale_impl(device T* out, constant T& s, uint gid) {
  out[gid] = relu(square(out[gid]) * s);
}

kernel void scale_f(device float* o [[buffer(0)]], constant float& s [[buffer(1)]],
                    uint gid [[thread_position_in_grid]]) {
  scale_impl<float>(o, s, gid);
  o[gid] += apply<twice>(o[gid]);
}
kernel void scale_h4(device half4* o [[buffer(0)]], constant half4& s [[buffer(1)]],
                     uint gid [[thread_position_in_grid]]) {
  scale_impl<half4>(o, s, gid);
  Accum<float, 4> acc;
  acc.clear();
  acc.v[gid % 4] = convert_to<float>(o[gid].x);
  o[gid].y = half(acc.total()) + hsum(o[gid]) + hsum(float3(1, 2, 3));
}
// EXPECT: air.fmax.f32 air.fmax.f16
