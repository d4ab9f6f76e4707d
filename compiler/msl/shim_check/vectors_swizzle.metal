// float4/half4 arithmetic, swizzles, swizzle assignment, every vector
// constructor form, conversions by value, as_type, packed types, bool vectors.
#include <metal_stdlib>
using namespace metal;

struct Vertex {
  packed_float3 position;  // 12 bytes
  packed_half4 color;      // 8 bytes, 2-byte aligned
  float w;
};
static_assert(sizeof(Vertex) == 24, "packed layout");
static_assert(sizeof(float3) == 16 && alignof(float4) == 16, "vector layout");
static_assert(sizeof(half3) == 8 && sizeof(bool4) == 4 && sizeof(char3) == 4, "vector layout");

kernel void vectors(device float4* f4 [[buffer(0)]],
                    device half4* h4 [[buffer(1)]],
                    device int4* i4 [[buffer(2)]],
                    device Vertex* verts [[buffer(3)]],
                    device uint* u [[buffer(4)]],
                    device bool4* b4 [[buffer(5)]],
                    uint gid [[thread_position_in_grid]]) {
  float4 v = f4[gid];
  v.rgba = v.bgra;           // swizzle assignment
  v.xy = v.zw * 2.0f;        // partial swizzle assignment
  v.w += v.x;
  float2 p = v.yx;
  float3 q = v.xyz;
  // Constructor forms: splat, concatenation, conversion, empty.
  float4 a = float4(1.0f);
  float4 b = float4(p, 0, 1);
  float4 c = float4(q, 1.0);
  float4 d = float4(0.5, p, 2);
  float4 e = float4(1, 2, 3, 4);
  float4 z = float4();
  float4 conv = float4(i4[gid]);   // by value: 1 -> 1.0f
  int4 back = int4(v * 10.0f);     // truncation toward zero
  uint2 u2 = uint2(7u);
  float2 f2 = float2(u2);
  half4 h = half4(v);              // float -> half rounding
  h = h * half(0.5) + half4(h.xy, h.zw);
  h4[gid] = h + 1.0h;
  i4[gid] = back + int4(u2.x, u2.y, 0, 1);
  f4[gid] = a + b + c + d + e + z + conv + float4(f2, f2);
  // Vector comparisons and bool vectors.
  bool4 gt = v > a;
  bool4 both = gt && (b < c);
  b4[gid] = both;
  if (all(v > 0.0f) || any(both) || !gt.x) u[gid] = 1;
  // as_type: bit casts.
  u[gid + 1] = as_type<uint>(v.x);
  half2 hh = as_type<half2>(u[gid + 2]);
  f4[gid + 1] = float4(float2(hh), as_type<float2>(i4[gid + 1].xy));
  // Packed types.
  Vertex vx = verts[gid];
  float3 pos = vx.position;
  pos = pos * 2.0f + float3(1);
  verts[gid].position = pos;
  verts[gid].position += 1.0f;
  float4 col = float4(vx.color);
  verts[gid].w = col.a + vx.position[1];
  // Integer vectors and element access.
  int4 iv = i4[gid];
  iv[2] = iv.x ^ iv.w;
  iv.yz = iv.zy << 1;
  i4[gid + 2] = iv;
  uchar4 c4 = uchar4(iv & 0xff);
  u[gid + 3] = as_type<uint>(c4);
  ushort3 s3 = ushort3(c4.xyz);
  u[gid + 4] = s3.x + s3.y + s3.z;
}
// Conversions by value, not bit casts: float4(int4), int4(float4), half4(float4).
// EXPECT-IR: sitofp <4 x i32>
// EXPECT-IR: fptosi <4 x float>
// EXPECT-IR: fptrunc <4 x float>
