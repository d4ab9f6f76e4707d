// Everyday MSL idioms: grid positions as vectors, pointers and references in
// every address space, vector conversions (float <-> uchar, packed <->
// vector), ternaries on vectors, qualified metal:: calls, simd_vote to
// integers, structs with constructors in device memory.
#include <metal_stdlib>
using namespace metal;

struct Particle {
  packed_float3 pos;
  float mass;
  float4 color;
  Particle() = default;
  Particle(float3 p, float m) : pos(p), mass(m), color(float4(1)) {}
};

static void accumulate(thread float4& acc, device const float4* src, uint i) { acc += src[i]; }
static float load_tg(threadgroup const float* tg, uint i) { return tg[i]; }

kernel void idioms(device Particle* ps [[buffer(0)]],
                   device const float4* src [[buffer(1)]],
                   device uchar4* pixels [[buffer(2)]],
                   device uint* counts [[buffer(3)]],
                   constant float4x4& xf [[buffer(4)]],
                   uint3 gid [[thread_position_in_grid]],
                   uint3 grid [[threads_per_grid]],
                   ushort lane [[thread_index_in_simdgroup]]) {
  threadgroup float tg[32];
  const uint i = gid.x + gid.y * grid.x + gid.z * grid.x * grid.y;
  float4 acc = float4(0);
  accumulate(acc, src, i);
  thread float4* pa = &acc;
  pa->w = 1.0f;
  tg[lane] = acc.x;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  acc.x += load_tg(tg, (lane + 1) % 32);
  // Conversions: float -> uchar with clamping, packed <-> vector.
  pixels[i] = uchar4(clamp(acc * 255.0f, 0.0f, 255.0f));
  Particle p = ps[i];
  float3 pos = p.pos;
  pos += float3(acc.xyz) * p.mass;
  ps[i] = Particle(pos, p.mass * 0.5f);
  ps[i].color = transpose(xf) * float4(float3(ps[i].pos), 1.0f);
  ps[i].color.rgb = acc.x > 0.5f ? float3(1) : float3(0, 0.5, 1);
  // Votes to integers.
  const simd_vote v = simd_ballot(acc.x > 0.0f);
  counts[i] = popcount(uint(ulong(v))) + (v.any() ? 1 : 0) + metal::min(lane, ushort(3)) +
              uint(metal::precise::sqrt(float(i))) + uint(metal::fast::exp(0.0f));
  const int3 signs = select(int3(-1), int3(1), acc.xyz > 0.0f);
  counts[i + 1] = uint(signs.x + signs.y + signs.z) + as_type<uint2>(ulong(i)).x;
  const half2 hh = half2(acc.xy);
  counts[i + 2] = as_type<uint>(hh) + uint(numeric_limits<float>::max() > 0.0f);
  // Normalized-integer packing.
  const float4 unpacked = unpack_unorm4x8_to_float(counts[i + 3]) + unpack_snorm4x8_to_float(counts[i + 4]);
  counts[i + 3] = pack_float_to_unorm4x8(unpacked) ^ pack_float_to_snorm2x16(unpacked.xy) ^
                  pack_half_to_unorm2x16(unpack_unorm2x16_to_half(counts[i + 5]));
}
// EXPECT: air.simd_ballot air.popcount.u32 air.fmin.f32 air.fmax.f32 air.threadgroup_barrier air.rint.f32
