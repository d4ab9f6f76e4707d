// How a block tensor is spread over the threads of a program (a
// threadgroup of num_warps SIMD groups of 32 lanes): a bit layout.
//
// Triton's shapes are powers of two, so an element's row-major flat index
// is a string of bits, and a layout says, for each bit of a thread's
// register (slot) number, of its lane and of its SIMD group (warp), which
// flat-index bit it sets. Each flat-index bit is set by exactly one of
// them; lane and warp bits that set none hold copies (the tensor is
// replicated over them). This is Triton's LinearLayout restricted to
// permutations, and it covers what the lowering needs:
//   - blocked layouts (consecutive lanes on consecutive elements),
//   - the simdgroup_matrix layout of tl.dot's operands and result (Apple's
//     lane order, isa/simdgroup_matrix_layout.h),
//   - reductions (the reduced axis's bits become copies or disappear),
// and the shape operations are renamings of bits: reshape keeps every bit
// (row-major), expand_dims adds a dimension of no bits, a permutation
// permutes the bits of the dimensions, and a broadcast reads the operand
// through the bits it has.
//
// A thread (lane l, warp w) holds slots s = 0 .. 2^regs-1; slot s holds
// the element whose flat index is
//   OR over register bits i of ((s >> i) & 1) << reg[i]
//   | OR over lane bits i of ((l >> i) & 1) << lane[i]   (lane[i] >= 0)
//   | OR over warp bits i of ((w >> i) & 1) << warp[i]   (warp[i] >= 0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mtlemu::triton::lower {

inline constexpr int kLaneBits = 5;  // 32 lanes per SIMD group

struct Layout {
  std::vector<int64_t> shape;
  std::vector<int> reg;   // flat-index bit of each register bit
  std::vector<int> lane;  // kLaneBits entries: a flat-index bit or -1
  std::vector<int> warp;  // log2(num_warps) entries: a bit or -1

  bool operator==(const Layout&) const = default;
  int rank() const { return static_cast<int>(shape.size()); }
  int slots() const { return 1 << reg.size(); }
  int flat_bits() const;  // log2 of the element count
  // The bits of flat index that dimension d occupies: [low, low + count).
  int dim_low_bit(int d) const;
  int dim_bits(int d) const;
  // The dimension a flat-index bit belongs to, and its bit within it.
  int dim_of_bit(int bit) const;

  // The flat index a slot contributes (the register part).
  int64_t SlotFlat(int slot) const;
  // The slot whose register part is `flat` (its lane/warp bits ignored),
  // or -1 when no slot has exactly those register bits.
  int SlotOfFlat(int64_t flat) const;
  // Lanes and warps holding copies: a thread is canonical when its bits
  // here are zero (one writer per element).
  uint32_t replicated_lane_mask() const;
  uint32_t replicated_warp_mask() const;
  bool replicated() const {
    return replicated_lane_mask() != 0 || replicated_warp_mask() != 0;
  }

  // A key for maps, and the text `mtlemu compile --emit layouts` prints:
  // "[32, 32] reg(0:c0 1:r4) lane(c1 c2 ...) warp(r2 r3)".
  std::string ToString() const;
};

// Whether every dimension is a power of two (what a layout needs).
bool IsPowerOfTwoShape(const std::vector<int64_t>& shape);

// The default layout of `shape`: consecutive lanes on consecutive flat
// indices, then warps, then registers (what Triton's default blocked
// encoding does with one element per thread per step): a warp's load of
// one register touches 32 consecutive elements.
Layout Blocked(const std::vector<int64_t>& shape, int num_warps);

// tl.dot's layouts for C[M, N] = A[M, K] x B[K, N] with num_warps SIMD
// groups: the warps form a grid of warps_m x warps_n (DotWarpGrid), each
// owning a block of 8x8 tiles of C; every tile is a simdgroup_matrix in
// Apple's lane layout (its element 0/1 in register bit 0). A and B tiles
// hold the K dimension in registers; warps that share rows of A (columns
// of B) hold copies.
struct DotWarpGrid {
  int warps_m = 1, warps_n = 1;
};
DotWarpGrid ChooseDotWarpGrid(int64_t m, int64_t n, int num_warps);
// Whether an M x K by K x N dot is made of whole 8x8 simdgroup_matrix
// tiles (these layouts); a smaller one sums element by element.
inline bool IsTiledDot(int64_t m, int64_t k, int64_t n) {
  return m % 8 == 0 && k % 8 == 0 && n % 8 == 0;
}
Layout DotResult(int64_t m, int64_t n, int num_warps);
Layout DotOperandA(int64_t m, int64_t k, int64_t n, int num_warps);
Layout DotOperandB(int64_t k, int64_t n, int64_t m, int num_warps);
// The register part of tile (row_tile, col_tile)'s element e (0/1) for a
// lane: the slot of a DotResult/DotOperand layout holding it.
int DotTileSlot(const Layout& l, int64_t row_tile, int64_t col_tile, int e);

// --- the shape operations, as renamings of bits
// ----------------------------------

// The layout of `operand_shape` that a broadcast to `result`'s shape reads
// from: the bits of stretched dimensions become copies (register bits that
// set them are dropped).
Layout BroadcastOperand(const Layout& result,
                        const std::vector<int64_t>& operand_shape);
// A layout of `result_shape` that a broadcast of `operand` fills without
// moving data: the new dimensions' bits take the operand's copy lanes and
// warps first (lowest first), then new register bits.
Layout BroadcastResult(const Layout& operand,
                       const std::vector<int64_t>& result_shape);
// Reshape keeps row-major order: the same bits, another shape.
Layout Reshaped(const Layout& l, const std::vector<int64_t>& shape);
// The operand layout of a permutation (tt.trans order) with this result.
Layout PermuteOperand(const Layout& result, const std::vector<int>& order,
                      const std::vector<int64_t>& operand_shape);
// The result layout of a permutation of `operand`.
Layout PermuteResult(const Layout& operand, const std::vector<int>& order);
// A reduction over `axis`: the axis's bits become copies (lanes, warps) or
// disappear (registers). The result has rank - 1 dimensions.
Layout Reduced(const Layout& operand, int axis);
// tt.join: a new minor dimension of 2 in a new register bit 0; the
// operands' layout from the result's, and the result's from an operand's.
Layout JoinResult(const Layout& operand);
// tt.split's result layout from its operand (the minor bit must be a
// register bit: `SplitOperandOk`).
bool SplitOperandOk(const Layout& operand);
Layout SplitResult(const Layout& operand);
// tt.cat of two 1-D tensors: the top bit selects the operand, a new
// register bit.
Layout CatResult(const Layout& operand);

}  // namespace mtlemu::triton::lower
