// Half-precision math functions, one per column, as math_float.metal:
// out[i * NUM_FUNCS + f] = f(x[i * NUM_FUNCS + f], y[i * NUM_FUNCS + f]),
// checked against double precision within Metal's half-precision bounds.
#include <metal_stdlib>
using namespace metal;

#define NUM_FUNCS 10

kernel void math_half(device const half* xs [[buffer(0)]],
                      device const half* ys [[buffer(1)]],
                      device half* out [[buffer(2)]],
                      uint i [[thread_position_in_grid]]) {
  device const half* x = xs + NUM_FUNCS * i;
  device const half* y = ys + NUM_FUNCS * i;
  device half* o = out + NUM_FUNCS * i;
  o[0] = exp(x[0]);
  o[1] = log(x[1]);
  o[2] = sin(x[2]);
  o[3] = cos(x[3]);
  o[4] = sqrt(x[4]);
  o[5] = rsqrt(x[5]);
  o[6] = tanh(x[6]);
  o[7] = exp2(x[7]);
  o[8] = pow(x[8], y[8]);
  o[9] = fma(x[9], y[9], half(0.25h));
}
