// Integer division and remainder with divisors that are zero in some lanes
// (and INT_MIN / -1), at int, uint, long, ulong, short and uchar. Metal
// leaves these undefined; the emulator's ISA defines x / 0 as all ones and
// x % 0 = x, INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0. The process must
// not crash (x86's idiv traps on both).
#include <metal_stdlib>
using namespace metal;

template <typename T>
void div_rem(device const T* a, device const T* b, device T* q, device T* r,
             uint i) {
  q[i] = a[i] / b[i];
  r[i] = a[i] % b[i];
}

#define DIV_KERNEL(T)                                                       \
  kernel void div_##T(device const T* a [[buffer(0)]],                      \
                      device const T* b [[buffer(1)]],                      \
                      device T* q [[buffer(2)]], device T* r [[buffer(3)]], \
                      uint i [[thread_position_in_grid]]) {                 \
    div_rem<T>(a, b, q, r, i);                                              \
  }

DIV_KERNEL(int)
DIV_KERNEL(uint)
DIV_KERNEL(long)
DIV_KERNEL(ulong)
DIV_KERNEL(short)
DIV_KERNEL(uchar)
