// Integer functions on every integer type, scalar and vector.
#include <metal_stdlib>
using namespace metal;

template <typename T>
T bits_of(T x, T y) {
  T r = clz(x) + ctz(y) + popcount(x) + reverse_bits(y);
  r += rotate(x, y) + mulhi(x, y) + addsat(x, y) + subsat(x, y) + hadd(x, y) + rhadd(x, y);
  r += T(absdiff(x, y)) + abs(x) + min(x, y) + max(x, y) + clamp(x, y, T(100));
  r += extract_bits(x, 3u, 5u) + insert_bits(x, y, 4u, 8u);
  r += madhi(x, y, x) + madsat(x, y, x) + min3(x, y, T(7)) + max3(x, y, T(7)) + median3(x, y, T(7));
  return r;
}

kernel void ints(device char* c [[buffer(0)]], device uchar* uc [[buffer(1)]],
                 device short* s [[buffer(2)]], device ushort* us [[buffer(3)]],
                 device int* i [[buffer(4)]], device uint* u [[buffer(5)]],
                 device long* l [[buffer(6)]], device ulong* ul [[buffer(7)]],
                 uint gid [[thread_position_in_grid]]) {
  c[gid] = bits_of(c[gid], c[gid + 1]);
  uc[gid] = bits_of(uc[gid], uc[gid + 1]);
  s[gid] = bits_of(s[gid], s[gid + 1]);
  us[gid] = bits_of(us[gid], us[gid + 1]);
  i[gid] = bits_of(i[gid], i[gid + 1]) + mad24(i[gid], 3, 4) + mul24(i[gid], 5);
  u[gid] = bits_of(u[gid], u[gid + 1]) + mad24(u[gid], 3u, 4u);
  l[gid] = bits_of(l[gid], l[gid + 1]);
  ul[gid] = bits_of(ul[gid], ul[gid + 1]);
  // Mixed argument types.
  u[gid + 2] = min(u[gid], 4) + max(i[gid], 0u) + clamp(us[gid], 0, 1000);
}

kernel void int_vectors(device int4* i4 [[buffer(0)]], device uint2* u2 [[buffer(1)]],
                        device ushort3* s3 [[buffer(2)]], device ulong4* l4 [[buffer(3)]],
                        uint gid [[thread_position_in_grid]]) {
  int4 a = i4[gid], b = i4[gid + 1];
  i4[gid] = clz(a) + popcount(b) + rotate(a, b) + abs(a) + min(a, b) + max(a, 0) +
            clamp(a, -5, 5) + extract_bits(a, 2u, 3u) + insert_bits(a, b, 1u, 2u) +
            addsat(a, b) + mulhi(a, b) + hadd(a, b);
  u2[gid] = absdiff(a.xy, b.zw) + ctz(u2[gid]) + reverse_bits(u2[gid]);
  s3[gid] = subsat(s3[gid], ushort3(1)) + rhadd(s3[gid], s3[gid + 1]) + median3(s3[gid], s3[gid + 1], ushort3(3));
  l4[gid] = madsat(l4[gid], l4[gid + 1], l4[gid + 2]) + popcount(l4[gid]);
}
// EXPECT: air.clz.i8 air.clz.u8 air.clz.i16 air.clz.u16 air.clz.i32 air.clz.u32 air.clz.i64 air.clz.u64
// EXPECT: air.ctz.i32 air.popcount.u64 air.reverse_bits.u16 air.rotate.i32 air.mulhi.i64 air.mulhi.u64
// EXPECT: air.addsat.i8 air.subsat.u16 air.hadd.i32 air.rhadd.u16 air.absdiff.i32 air.absdiff.u8
