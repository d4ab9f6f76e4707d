// A data-dependent loop with a different trip count in every lane: Collatz
// step counts. Lanes leave early in three ways: a return before the loop
// (start 0), a return from inside the loop (the step limit), and a break;
// after the loop the lanes still running reconverge and take a simd_max
// over themselves, which must see exactly those lanes.
#include <metal_stdlib>
using namespace metal;

kernel void collatz(device const uint* start [[buffer(0)]],
                    device uint* steps [[buffer(1)]],
                    device uint* peak [[buffer(2)]],
                    device uint* group_max [[buffer(3)]],
                    constant uint& limit [[buffer(4)]],
                    uint i [[thread_position_in_grid]]) {
  uint x = start[i];
  if (x == 0) {
    steps[i] = 0xffffffffu;
    return;
  }
  uint n = 0, hi = x;
  while (true) {
    if (x == 1) break;
    if (n >= limit) {
      steps[i] = 0x80000000u | n;
      peak[i] = hi;
      return;
    }
    x = (x & 1u) ? 3u * x + 1u : x / 2u;
    hi = max(hi, x);
    ++n;
  }
  steps[i] = n;
  peak[i] = hi;
  group_max[i] = simd_max(n);
}
