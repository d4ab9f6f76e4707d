// saxpy with a parameter struct in a constant buffer: copying the struct,
// passing it by value and calling a member function on it.
#include <metal_stdlib>
using namespace metal;

struct Params {
  float a;
  uint n;
  uint stride;
  float bias() const { return a * 0.5; }
};

static float axpy(Params p, float x, float y) { return fma(p.a, x, y) + p.bias(); }

kernel void saxpy(constant Params& p [[buffer(0)]],
                  device const float* x [[buffer(1)]],
                  device float* y [[buffer(2)]],
                  uint gid [[thread_position_in_grid]]) {
  Params q = p;  // a copy out of constant memory
  if (gid >= q.n) return;
  uint i = gid * p.stride;
  y[i] = axpy(p, x[i], y[i]) + p.bias();
}
// EXPECT: air.fma.f32
