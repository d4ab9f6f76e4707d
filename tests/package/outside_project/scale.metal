#include <metal_stdlib>
using namespace metal;

struct Affine {
  float scale;
  float offset;
};

kernel void scale_and_offset(device const float* in [[buffer(0)]],
                             device float* out [[buffer(1)]],
                             constant Affine& a [[buffer(2)]],
                             uint id [[thread_position_in_grid]]) {
  out[id] = in[id] * a.scale + a.offset;
}
