// bfloat scalars and vectors (storage, conversion, arithmetic via float),
// numeric_limits, metal::vec and metal::array.
#include <metal_stdlib>
using namespace metal;

kernel void bf16(device bfloat* b [[buffer(0)]], device bfloat4* b4 [[buffer(1)]],
                 device float4* f4 [[buffer(2)]], device half* h [[buffer(3)]],
                 uint gid [[thread_position_in_grid]]) {
  static_assert(sizeof(bfloat) == 2 && sizeof(bfloat4) == 8 && sizeof(bfloat3) == 8, "bfloat layout");
  bfloat x = b[gid];
  bfloat y = 1.5f;
  bfloat z = x * y + x;          // bfloat op bfloat: bfloat
  z += 2.0f;
  float w = z * 0.5f;            // bfloat op float: float
  b[gid] = -z;
  b[gid + 1] = bfloat(w);
  b[gid + 2] = sqrt(x) + exp(y) + max(x, y) + clamp(x, bfloat(0.0f), bfloat(1.0f)) + abs(x) + fma(x, y, z);
  bfloat4 v = b4[gid];
  b4[gid] = bfloat4(float4(v) * 2.0f);
  bfloat4 u = bfloat4(1.0f, x, 2, w);
  f4[gid] = v * u + float4(v.x, v.y, v[2], v.w);
  h[gid] = half(float(x)) + half(isnan(x) ? 1 : 0) + half(isinf(y) || signbit(z) ? 1 : 0);
  b[gid + 3] = numeric_limits<bfloat>::max();
  f4[gid + 1] = float4(numeric_limits<float>::infinity(), numeric_limits<half>::epsilon(),
                       float(numeric_limits<int>::max()), float(numeric_limits<ushort>::lowest()));
  vec<float, 4> fv = f4[gid];
  bool2 bv = fv.xy > 0.0f;
  array<float, 3> arr = {{1.0f, 2.0f, 3.0f}};
  f4[gid + 2] = fv + float(bv.x) + arr[gid % arr.size()];
}
// EXPECT: air.convert.bf16.f32 air.sqrt.f32 air.exp.f32 air.fma.f32
