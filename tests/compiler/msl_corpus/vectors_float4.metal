// float4 arithmetic through every vector idiom a shader uses: component
// reads by .xyzw and .rgba, swizzled reads (.zyx, .wzyx, .xxyy), swizzle
// assignment (v.xz = ..., v.rgb = ...), constructors from mixed scalars and
// vectors, dot/length/normalize/clamp/mix/select, float4x4 * float4, and a
// struct holding a packed_float3 read from and written to a buffer.
#include <metal_stdlib>
using namespace metal;

struct Particle {
  packed_float3 pos;  // 12 bytes, 4-byte aligned
  float mass;         // at offset 12
};

// out: 8 float4 per thread; pout: one packed_float3 (12 bytes) per thread.
kernel void float_vectors(device const float4* a [[buffer(0)]],
                          device const float4* b [[buffer(1)]],
                          device const Particle* parts [[buffer(2)]],
                          constant float4x4& m [[buffer(3)]],
                          device float4* out [[buffer(4)]],
                          device packed_float3* pout [[buffer(5)]],
                          uint i [[thread_position_in_grid]]) {
  const float4 x = a[i];
  const float4 y = b[i];
  device float4* o = out + 8 * i;

  // 0: arithmetic, components by name.
  o[0] = x * y + float4(x.x, y.g, x.b, y.w) - float4(x.r, x.y, y.z, x.a) * 0.5f;

  // 1: swizzled reads.
  o[1] = float4(x.zyx, y.w) + y.wzyx * x.xxyy - float4(y.yy, x.ww);

  // 2: swizzle assignment.
  float4 v = x;
  v.xz = y.yw;
  v.rgb = v.bgr + float3(1.0f, 2.0f, 3.0f);
  v.w = -v.w;
  v.yx += float2(10.0f, 20.0f);
  o[2] = v;

  // 3: constructors from mixed scalars and vectors.
  const float2 p = x.xy;
  const float3 q = y.xyz;
  o[3] = float4(p, y.z, 1.0f) + float4(2.0f, q) + float4(float2(3.0f), x.zw) +
         float4(0.5f) + float4(y.w, float2(x.w, 4.0f), -1.0f);

  // 4, 5: geometric functions.
  const float3 n = normalize(y.xyz);
  o[4] = float4(dot(x, y), length(x.xyz), dot(x.xy, y.zw), length(y));
  o[5] = float4(n, distance(x.xyz, y.xyz));

  // 6: clamp, mix, select (select(a, b, c) is c ? b : a per component).
  o[6] = clamp(x, -1.0f, 2.0f) + mix(x, y, 0.25f) + select(x, y, x < y) * 4.0f;

  // 7: float4x4 (column-major) times float4.
  o[7] = m * x;

  // packed_float3 in and out.
  const Particle pt = parts[i];
  const float3 pos = pt.pos;
  pout[i] = pos.zxy * pt.mass + float3(x.w, pos.x, pt.pos[1]);
}
