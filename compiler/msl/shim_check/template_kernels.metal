// Templated kernels with explicit instantiations, as MSL writes them. This
// needs `kernel` as an annotation (C++ for OpenCL forbids kernel templates);
// the front end turns [[host_name("x")]] into the GNU annotate spelling.
// FLAGS: -DMTLEMU_KERNEL_AS_ANNOTATION
#include <metal_stdlib>
using namespace metal;

template <typename T>
kernel void unary_exp(device const T* in [[buffer(0)]], device T* out [[buffer(1)]],
                      uint gid [[thread_position_in_grid]]) {
  out[gid] = exp(in[gid]);
}
template __attribute__((annotate("metal.host_name", "unary_exp_f32"))) kernel void
unary_exp<float>(device const float*, device float*, uint);
template __attribute__((annotate("metal.host_name", "unary_exp_f16"))) kernel void
unary_exp<half>(device const half*, device half*, uint);
template __attribute__((annotate("metal.host_name", "unary_exp_f32x4"))) kernel void
unary_exp<float4>(device const float4*, device float4*, uint);
// EXPECT: air.exp.f32 air.exp.f16
