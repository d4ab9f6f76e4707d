// A function template used at three types (float, int, half), a template
// deducing from vectors, and user overloads next to metal:: functions
// (a three-argument max and a length() of a user struct) with
// `using namespace metal` in effect, so that overload resolution must pick
// metal::max / metal::length for the library signatures and the user's
// functions for the others.
#include <metal_stdlib>
using namespace metal;

template <typename T>
T poly(T x) {
  return (T(3) * x + T(2)) * x - T(7);
}

// Deduces the vector type and takes its element type and size from the
// traits (mtlemu cannot deduce T and N through metal::vec<T, N>, which
// must also name bfloatN: see the shims' metal_types).
template <typename V>
make_scalar_t<V> sum_of(V v) {
  make_scalar_t<V> s = 0;
  for (int k = 0; k < vec_elements_v<V>; ++k) s += v[k];
  return s;
}

struct Pt {
  float x, y;
};

// Not in metal::: three arguments.
float max(float a, float b, float c) {
  return metal::max(metal::max(a, b), c) + 1000.0f;
}
// Not in metal::: a user type.
float length(Pt p) { return fabs(p.x) + fabs(p.y); }

// of: 3 floats per thread.
kernel void template_helpers(device const float* xf [[buffer(0)]],
                             device const int* xi [[buffer(1)]],
                             device const half* xh [[buffer(2)]],
                             device float* of [[buffer(3)]],
                             device int* oi [[buffer(4)]],
                             device half* oh [[buffer(5)]],
                             uint i [[thread_position_in_grid]]) {
  const float f = xf[i];
  of[3 * i] = poly(f) + sum_of(float3(f, 1.0f, 2.0f));
  oi[i] = poly(xi[i]) + sum_of(int2(xi[i], 5));
  oh[i] = poly(xh[i]);
  // metal::max (two arguments) and the user's max (three).
  of[3 * i + 1] = max(f, 0.5f) + max(f, -f, float(xi[i]));
  // The user's length(Pt) and metal::length(float2).
  of[3 * i + 2] = length(Pt{f, -2.0f}) + length(float2(3.0f, 4.0f) * f);
}
