// Common, geometric and relational functions.
#include <metal_stdlib>
using namespace metal;

kernel void shading(device float3* n [[buffer(0)]], device float4* c [[buffer(1)]],
                    device half4* h [[buffer(2)]], device float* s [[buffer(3)]],
                    device bool* flags [[buffer(4)]],
                    uint gid [[thread_position_in_grid]]) {
  const float3 N = normalize(n[gid]);
  const float3 L = normalize(float3(1, 1, 0.5));
  const float3 R = reflect(-L, N);
  const float3 T = refract(-L, N, 1.0f / 1.33f);
  const float3 F = faceforward(N, -L, N);
  const float ndl = saturate(dot(N, L));
  float4 col = c[gid];
  col.rgb = mix(col.rgb, float3(1.0f), 0.25f) * ndl;
  col.rgb += smoothstep(0.2f, 0.8f, col.rgb) * step(0.5f, col.a);
  col = clamp(col, 0.0f, 1.0f);
  col.a = sign(col.a - 0.5f) + length(R) + distance(T, F) + length_squared(N) +
          distance_squared(R, T) + cross(N, L).z;
  c[gid] = col;
  half4 hc = h[gid];
  h[gid] = clamp(mix(hc, half4(1.0h), half4(0.5h)), half4(0.0h), half4(1.0h)) +
           half4(dot(hc.xyz, hc.zyx)) + saturate(hc) + smoothstep(half4(0.0h), half4(1.0h), hc) +
           sign(hc) + step(half4(0.5h), hc);
  const float4 sel = select(col, float4(0.0f), col > 0.9f);
  const float sx = select(s[gid], 1.0f, isnan(s[gid]));
  const bool4 m = col < float4(0.5f);
  s[gid] = sel.x + sx + float(all(m)) + float(any(m)) + mix(1.0f, 2.0f, 0.5f) + clamp(s[gid], 0, 1);
  flags[gid] = all(col.xy > 0.0f) && any(isinf(col)) && !all(isfinite(col.xyz));
  const int3 iv = select(int3(1), int3(2), bool3(true, false, m.z));
  s[gid + 1] = float(iv.x + iv.y + iv.z);
}
// EXPECT: air.rsqrt.f32 air.sqrt.f32 air.fmin.f32 air.fmax.f32 air.fmin.f16
// EXPECT: air.isnan.f32 air.isinf.f32 air.isfinite.f32
