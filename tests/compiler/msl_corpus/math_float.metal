// Single-precision math functions, one per column of a row of inputs:
// out[i * NUM_FUNCS + f] = f(x[i * NUM_FUNCS + f], y[i * NUM_FUNCS + f]).
// The test compiles this with and without fast math and checks each result
// against a double-precision reference within the bound of Metal's
// precise or fast math table.
#include <metal_stdlib>
using namespace metal;

#define NUM_FUNCS 32

kernel void math_float(device const float* xs [[buffer(0)]],
                       device const float* ys [[buffer(1)]],
                       device const float* zs [[buffer(2)]],
                       device float* out [[buffer(3)]],
                       uint i [[thread_position_in_grid]]) {
  device const float* x = xs + NUM_FUNCS * i;
  device const float* y = ys + NUM_FUNCS * i;
  device const float* z = zs + NUM_FUNCS * i;
  device float* o = out + NUM_FUNCS * i;
  o[0] = exp(x[0]);
  o[1] = exp2(x[1]);
  o[2] = exp10(x[2]);
  o[3] = log(x[3]);
  o[4] = log2(x[4]);
  o[5] = log10(x[5]);
  o[6] = sin(x[6]);
  o[7] = cos(x[7]);
  o[8] = tan(x[8]);
  o[9] = asin(x[9]);
  o[10] = acos(x[10]);
  o[11] = atan(x[11]);
  o[12] = sinh(x[12]);
  o[13] = cosh(x[13]);
  o[14] = tanh(x[14]);
  o[15] = asinh(x[15]);
  o[16] = pow(x[16], y[16]);
  o[17] = sqrt(x[17]);
  o[18] = rsqrt(x[18]);
  o[19] = atan2(x[19], y[19]);
  o[20] = fma(x[20], y[20], z[20]);
  o[21] = fmod(x[21], y[21]);
  o[22] = floor(x[22]);
  o[23] = ceil(x[23]);
  o[24] = round(x[24]);
  o[25] = trunc(x[25]);
  o[26] = x[26] / y[26];
  o[27] = sinpi(x[27]);
  o[28] = cospi(x[28]);
  o[29] = acosh(x[29]);
  o[30] = atanh(x[30]);
  o[31] = powr(x[31], y[31]);
}
