// Where the elements of an 8x8 simdgroup_matrix live: which two elements
// of the matrix each of the 32 lanes holds, in the two registers of the
// ISA's matrix operand (element 0 in the first, element 1 in the second).
// Every part of the emulator that maps lanes to matrix elements uses this
// pair of functions; the MSL shim (compiler/msl/shim/metal_simdgroup_matrix,
// `__mtl_sgm_row`/`__mtl_sgm_col`) repeats it in MSL and must agree.
//
// The layout is Apple's, not a free choice: Metal code reads and writes
// elements through `thread_elements()` and computes their coordinates
// itself. MLX does it in mlx/backend/metal/kernels/steel/gemm/mma.h,
// BaseMMAFrag::get_coord (github.com/ml-explore/mlx; steel/attn/mma.h and
// conv.metal repeat it): with qid = lane / 4,
//   row = (qid & 4) + (lane / 2) % 4,  col = (qid & 2) * 2 + (lane % 2) * 2,
// and the lane holds (row, col) and (row, col + 1). Philip Turner's
// MetalFlashAttention (simdgroup_matrix_internals.hpp) draws the same
// placement, quad by quad:
//
//   lane:  0     1     2     3     4     5     6     7
//        (0,0) (0,2) (1,0) (1,2) (2,0) (2,2) (3,0) (3,2)
//   lane:  8     9    10    11    12    13    14    15
//        (0,4) (0,6) (1,4) (1,6) (2,4) (2,6) (3,4) (3,6)
//   lanes 16..31: the same, 4 rows down.
#pragma once

namespace mtlemu::isa {

inline constexpr int kSimdgroupMatrixElementsPerLane = 2;

// The row of both elements that `lane` (0..31) holds.
constexpr int SimdgroupMatrixRow(int lane) {
  const int quad = lane / 4;
  return (quad & 4) + (lane / 2) % 4;
}

// The column of element `element` (0 or 1) of `lane`.
constexpr int SimdgroupMatrixCol(int lane, int element) {
  const int quad = lane / 4;
  return (quad & 2) * 2 + (lane % 2) * 2 + element;
}

namespace simdgroup_matrix_layout_internal {
// Every element of the 8x8 matrix is held by exactly one lane.
constexpr bool CoversEveryElementOnce() {
  int count[8][8] = {};
  for (int lane = 0; lane < 32; ++lane) {
    for (int e = 0; e < kSimdgroupMatrixElementsPerLane; ++e) {
      ++count[SimdgroupMatrixRow(lane)][SimdgroupMatrixCol(lane, e)];
    }
  }
  for (const auto& row : count) {
    for (int n : row) {
      if (n != 1) return false;
    }
  }
  return true;
}
}  // namespace simdgroup_matrix_layout_internal

static_assert(simdgroup_matrix_layout_internal::CoversEveryElementOnce());

}  // namespace mtlemu::isa
