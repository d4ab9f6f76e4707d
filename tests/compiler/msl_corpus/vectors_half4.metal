// half4 arithmetic with swizzles: component reads (.xyzw, .rgba), swizzled
// reads, swizzle assignment, constructors from mixed scalars and vectors,
// clamp/mix/select, dot, and half <-> float vector conversions.
#include <metal_stdlib>
using namespace metal;

// out: 6 half4 per thread.
kernel void half_vectors(device const half4* a [[buffer(0)]],
                         device const half4* b [[buffer(1)]],
                         device half4* out [[buffer(2)]],
                         uint i [[thread_position_in_grid]]) {
  const half4 x = a[i];
  const half4 y = b[i];
  device half4* o = out + 6 * i;

  // 0: arithmetic and a reversed swizzle.
  o[0] = x * y + x.wzyx - half4(y.r, x.g, y.b, x.a);

  // 1: constructors and repeated components.
  o[1] = half4(x.rg, y.ba) * 2.0h - y.xxyy + half4(1.0h, x.zyx);

  // 2: swizzle assignment.
  half4 v = x;
  v.rgb = y.bgr;
  v.a += 1.0h;
  v.yw = v.wy * half2(0.5h, -2.0h);
  o[2] = v;

  // 3: clamp, mix, select.
  o[3] = clamp(x, half(-1.0h), half(1.5h)) + mix(x, y, half(0.5h)) +
         select(y, x, x > y);

  // 4: dot (small exact values) and length.
  o[4] = half4(dot(x.xy, y.xy), dot(x, half4(1.0h)), length(half2(x.x, 0.0h)),
               x.w);

  // 5: through float and back.
  const float4 f = float4(x) * 0.25f + float4(y.zw, y.xy);
  o[5] = half4(f);
}
