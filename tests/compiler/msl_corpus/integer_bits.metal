// Integer bit and saturating functions on int, uint, short, ushort, char
// and uchar: popcount, clz, ctz, reverse_bits, rotate, extract_bits,
// insert_bits, mulhi, absdiff, addsat, subsat, hadd, rhadd, madsat, madhi,
// abs, and shifts (a left shift on the unsigned bits, an arithmetic right
// shift for signed types) by every amount below the width. One kernel per
// type, instantiated from one template; the inputs include 0, -1, the
// type's minimum and maximum.
#include <metal_stdlib>
using namespace metal;

#define NUM_RESULTS 18

// offset and bits for extract_bits / insert_bits, offset + bits <= width.
template <typename T>
void bit_fields(uint i, thread uint& offset, thread uint& bits) {
  const uint width = sizeof(T) * 8;
  offset = (i * 7u) % width;
  bits = (i * 5u) % (width - offset + 1u);
}

template <typename T>
void int_ops(device const T* xs, device const T* ys, device const T* zs,
             device T* out, uint i) {
  const T x = xs[i], y = ys[i], z = zs[i];
  uint offset, bits;
  bit_fields<T>(i, offset, bits);
  device T* o = out + NUM_RESULTS * i;
  o[0] = popcount(x);
  o[1] = clz(x);
  o[2] = ctz(x);
  o[3] = reverse_bits(x);
  o[4] = rotate(x, y);
  o[5] = extract_bits(x, offset, bits);
  o[6] = insert_bits(x, y, offset, bits);
  o[7] = mulhi(x, y);
  o[8] = T(absdiff(x, y));
  o[9] = addsat(x, y);
  o[10] = subsat(x, y);
  o[11] = hadd(x, y);
  o[12] = rhadd(x, y);
  o[13] = madsat(x, y, z);
  o[14] = madhi(x, y, z);
  o[15] = abs(x);
  const uint width = sizeof(T) * 8;
  o[16] = T(make_unsigned_t<T>(x) << (uint(y) % width));
  o[17] = T(x >> (uint(z) % width));
}

#define INT_KERNEL(T)                                                     \
  kernel void bits_##T(                                                   \
      device const T* xs [[buffer(0)]], device const T* ys [[buffer(1)]], \
      device const T* zs [[buffer(2)]], device T* out [[buffer(3)]],      \
      uint i [[thread_position_in_grid]]) {                               \
    int_ops<T>(xs, ys, zs, out, i);                                       \
  }

INT_KERNEL(int)
INT_KERNEL(uint)
INT_KERNEL(short)
INT_KERNEL(ushort)
INT_KERNEL(char)
INT_KERNEL(uchar)
