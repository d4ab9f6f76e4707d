// floatNxM / halfNxM: constructors, products, transpose, determinant, a
// matrix in a constant buffer.
#include <metal_stdlib>
using namespace metal;

struct Uniforms {
  float4x4 mvp;
  float3x3 normal;
  float2x2 rot;
};

kernel void transform(constant Uniforms& u [[buffer(0)]],
                      device float4* pos [[buffer(1)]],
                      device float3* nrm [[buffer(2)]],
                      device half4* hp [[buffer(3)]],
                      device float* det [[buffer(4)]],
                      uint gid [[thread_position_in_grid]]) {
  static_assert(sizeof(float3x3) == 48 && sizeof(float4x4) == 64 && sizeof(half2x2) == 8, "layout");
  pos[gid] = u.mvp * pos[gid];
  nrm[gid] = normalize(u.normal * nrm[gid]);
  float4x4 m = u.mvp;
  float4x4 id(1.0f);
  float4x4 cols(float4(1, 0, 0, 0), float4(0, 1, 0, 0), float4(0, 0, 1, 0), float4(1, 2, 3, 1));
  float2x2 r2(0.0f, 1.0f, -1.0f, 0.0f);
  float3x2 m32(float2(1, 2), float2(3, 4), float2(5, 6));
  float2x3 t = transpose(m32);
  float4 v = pos[gid] * m;            // row vector times matrix
  m = m * id + cols * 2.0f - transpose(cols);
  m *= id;
  m[3].xyz += float3(1.0f);
  pos[gid + 1] = m * v + float4(t * float2(1, 1), 0) + float4((r2 * u.rot)[1], 0, 0);
  half4x4 hm = half4x4(m);
  hp[gid] = hm * hp[gid];
  det[gid] = determinant(m) + determinant(u.normal) + determinant(r2) + m32[2].y;
}
