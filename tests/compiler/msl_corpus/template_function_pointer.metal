// A template with a function-pointer template parameter
// (template <float (*F)(float)>), instantiated with two user functions and
// used twice, plus a function-pointer parameter of a class template.
#include <metal_stdlib>
using namespace metal;

float twice(float x) { return 2.0f * x; }
float square_plus_one(float x) { return x * x + 1.0f; }

template <float (*F)(float)>
float apply_twice(float x) {
  return F(F(x));
}

template <float (*F)(float), int N>
struct Repeat {
  static float run(float x) {
    for (int k = 0; k < N; ++k) x = F(x);
    return x;
  }
};

// out: 3 floats per thread.
kernel void function_pointer_template(device const float* in [[buffer(0)]],
                                      device float* out [[buffer(1)]],
                                      uint i [[thread_position_in_grid]]) {
  const float x = in[i];
  out[3 * i] = apply_twice<twice>(x);
  out[3 * i + 1] = apply_twice<square_plus_one>(x);
  out[3 * i + 2] =
      Repeat<twice, 3>::run(x) + Repeat<square_plus_one, 1>::run(x);
}
