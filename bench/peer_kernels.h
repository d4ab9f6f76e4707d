// The kernels of the PoCL comparison (peer_bench.cpp), each written twice:
// in MSL for mtlemu and in OpenCL C for PoCL, doing the same work in the
// same order, so that both write the same bits.
#pragma once

namespace mtlemu::bench {

inline constexpr char kPeerMsl[] = R"(#include <metal_stdlib>
using namespace metal;
kernel void vector_add(device const float* a [[buffer(0)]],
                       device const float* b [[buffer(1)]],
                       device float* c [[buffer(2)]],
                       uint i [[thread_position_in_grid]]) {
  c[i] = a[i] + b[i];
}
kernel void fma_chain(device float* data [[buffer(0)]],
                      constant float2& k [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
  float x = data[i];
  for (int j = 0; j < 1024; ++j) x = fma(x, k.x, k.y);
  data[i] = x;
}
kernel void reduce(device const float* in [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   uint tid [[thread_position_in_threadgroup]],
                   uint gid [[thread_position_in_grid]],
                   uint group [[threadgroup_position_in_grid]]) {
  threadgroup float partial[256];
  partial[tid] = in[gid];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint s = 128; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (tid == 0) out[group] = partial[0];
}
kernel void matmul(device const float* a [[buffer(0)]],
                   device const float* b [[buffer(1)]],
                   device float* c [[buffer(2)]],
                   constant uint& n [[buffer(3)]],
                   uint2 tid [[thread_position_in_threadgroup]],
                   uint2 gid [[thread_position_in_grid]]) {
  threadgroup float ta[16][16];
  threadgroup float tb[16][16];
  float acc = 0.0f;
  for (uint k0 = 0; k0 < n; k0 += 16) {
    ta[tid.y][tid.x] = a[gid.y * n + k0 + tid.x];
    tb[tid.y][tid.x] = b[(k0 + tid.y) * n + gid.x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 0; k < 16; ++k) acc = fma(ta[tid.y][k], tb[k][tid.x], acc);
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  c[gid.y * n + gid.x] = acc;
}
)";

inline constexpr char kPeerOpenCl[] = R"(
__kernel void vector_add(__global const float* a, __global const float* b,
                         __global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
__kernel void fma_chain(__global float* data, float2 k) {
  size_t i = get_global_id(0);
  float x = data[i];
  // PoCL vectorizes across work-items only once the kernel's own loop is
  // gone: 8x quicker with this than without (mtlemu's compiler unrolls by
  // itself).
#pragma unroll
  for (int j = 0; j < 1024; ++j) x = fma(x, k.x, k.y);
  data[i] = x;
}
__kernel void reduce(__global const float* in, __global float* out) {
  __local float partial[256];
  uint tid = get_local_id(0);
  partial[tid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = 128; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (tid == 0) out[get_group_id(0)] = partial[0];
}
__kernel void matmul(__global const float* a, __global const float* b,
                     __global float* c, uint n) {
  __local float ta[16][16];
  __local float tb[16][16];
  uint tx = get_local_id(0), ty = get_local_id(1);
  uint gx = get_global_id(0), gy = get_global_id(1);
  float acc = 0.0f;
  for (uint k0 = 0; k0 < n; k0 += 16) {
    ta[ty][tx] = a[gy * n + k0 + tx];
    tb[ty][tx] = b[(k0 + ty) * n + gx];
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint k = 0; k < 16; ++k) acc = fma(ta[ty][k], tb[k][tx], acc);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  c[gy * n + gx] = acc;
}
// One work-group of 128 per row: its largest value, then the sum of the
// exponentials, each a tree over the work-group.
__kernel void softmax_rows(__global float* out, __global const float* in,
                           uint stride, uint n) {
  __local float part[128];
  uint row = get_group_id(0), tid = get_local_id(0);
  __global const float* x = in + row * stride;
  float m = -INFINITY;
  for (uint c = tid; c < n; c += 128) m = fmax(m, x[c]);
  part[tid] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = 64; s > 0; s >>= 1) {
    if (tid < s) part[tid] = fmax(part[tid], part[tid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = part[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  float sum = 0.0f;
  for (uint c = tid; c < n; c += 128) sum += exp(x[c] - m);
  part[tid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = 64; s > 0; s >>= 1) {
    if (tid < s) part[tid] += part[tid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  sum = part[0];
  for (uint c = tid; c < n; c += 128) out[row * stride + c] = exp(x[c] - m) / sum;
}
)";

}  // namespace mtlemu::bench
