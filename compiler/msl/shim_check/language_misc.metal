// Language features: #pragma unroll, static_assert, constexpr, program-scope
// constant arrays and structs, enums, namespaces, lambdas, references to
// threadgroup memory, pointers to device memory in structs, identifiers that
// are OpenCL keywords (local, global, generic, pipe).
#include <metal_stdlib>
using namespace metal;

constant float weights[5] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};
constant int2 offsets[] = {int2(-1, 0), int2(1, 0), int2(0, -1), int2(0, 1)};
struct Coeffs {
  float a, b;
  int n;
};
constant Coeffs coeffs = {1.5f, -0.5f, 3};
constexpr constant uint kRadius = 2;
// Vector, bool-vector, bfloat and matrix constructors in constant initializers
// (constexpr: no dynamic initialization, no global constructor).
constant float4 palette[] = {float4(1, 0, 0, 1), float4(0.5), float4(), float4(1.0h, 2, 3, 4)};
constant bool2 bmask = bool2(true, false);
constant bfloat bscale = 0.5f;
constant float3x3 to_yuv = float3x3(0.299f, -0.14713f, 0.615f, 0.587f, -0.28886f, -0.51499f,
                                    0.114f, 0.436f, -0.10001f);
constant float2x2 rot90(float2(0, 1), float2(-1, 0));
constant float4x4 identity4(1.0f);
static_assert(kRadius * 2 + 1 == sizeof(weights) / sizeof(weights[0]), "taps");

enum class Mode : uint { kCopy = 0, kBlur = 1 };

namespace detail {
constexpr int cube(int x) { return x * x * x; }
static_assert(cube(3) == 27, "constexpr evaluation");
inline float tap(device const float* in, int i, uint n) { return in[clamp(i, 0, int(n) - 1)]; }
}  // namespace detail

struct View {
  device float* data;
  uint size;
  float at(uint i) const { return data[i % size]; }
};

static float accumulate(threadgroup float& slot, float v) {
  slot += v;
  return slot;
}

kernel void blur(device const float* in [[buffer(0)]],
                 device float* out [[buffer(1)]],
                 constant uint& n [[buffer(2)]],
                 constant Mode& mode [[buffer(3)]],
                 uint gid [[thread_position_in_grid]],
                 uint tid [[thread_index_in_threadgroup]]) {
  threadgroup float scratch[64];
  if (gid >= n) return;
  float local = 0.0f;    // `local` and `global` are ordinary names in MSL
  float global = 1.0f;
  int generic = 2, pipe = 3;
  if (mode == Mode::kCopy) {
    out[gid] = in[gid];
    return;
  }
#pragma unroll
  for (int k = -int(kRadius); k <= int(kRadius); ++k)
    local += weights[k + kRadius] * detail::tap(in, int(gid) + k, n);
#pragma unroll(4)
  for (int k = 0; k < 4; ++k) local += float(offsets[k].x + offsets[k].y);
  auto scale = [&](float x) { return x * coeffs.a + coeffs.b * float(coeffs.n); };
  scratch[tid % 64] = 0.0f;
  local = accumulate(scratch[tid % 64], scale(local));
  View v{out, n};
  const float3 yuv = to_yuv * palette[gid % 4].rgb;
  local += yuv.x + (rot90 * float2(1, 0)).y + identity4[gid % 4][1] + (bmask[gid % 2] ? 1.0f : 0.0f) +
           float(bscale);
  out[gid] = local * global + float(generic + pipe + detail::cube(2)) + v.at(gid + 1) * 0.0f;
}
