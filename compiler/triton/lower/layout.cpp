#include "compiler/triton/lower/layout.h"

#include <algorithm>
#include <cassert>
#include <functional>

#include "isa/simdgroup_matrix_layout.h"

namespace mtlemu::triton::lower {
namespace {

int Log2(int64_t v) {
  int b = 0;
  while ((int64_t{1} << b) < v) ++b;
  return b;
}

// Flat bits of `shape`, low bit first, as (dim, bit-within-dim).
std::vector<std::pair<int, int>> BitsOf(const std::vector<int64_t>& shape) {
  std::vector<std::pair<int, int>> bits;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    for (int b = 0; b < Log2(shape[d]); ++b) bits.emplace_back(d, b);
  }
  return bits;
}

int FlatBit(const std::vector<int64_t>& shape, int dim, int bit) {
  int low = 0;
  for (int d = static_cast<int>(shape.size()) - 1; d > dim; --d)
    low += Log2(shape[d]);
  return low + bit;
}

// Maps every input bit of `l` through `f` (flat bit -> new flat bit or -1);
// register bits that map to -1 are dropped.
Layout MapBits(const Layout& l, const std::vector<int64_t>& shape,
               const std::function<int(int)>& f);

}  // namespace

bool IsPowerOfTwoShape(const std::vector<int64_t>& shape) {
  for (int64_t d : shape) {
    if (d <= 0 || (d & (d - 1)) != 0) return false;
  }
  return true;
}

int Layout::flat_bits() const {
  int n = 0;
  for (int64_t d : shape) n += Log2(d);
  return n;
}

int Layout::dim_low_bit(int d) const { return FlatBit(shape, d, 0); }
int Layout::dim_bits(int d) const { return Log2(shape[d]); }

int Layout::dim_of_bit(int bit) const {
  for (int d = rank() - 1; d >= 0; --d) {
    const int low = dim_low_bit(d);
    if (bit >= low && bit < low + dim_bits(d)) return d;
  }
  return -1;
}

int64_t Layout::SlotFlat(int slot) const {
  int64_t flat = 0;
  for (size_t i = 0; i < reg.size(); ++i) {
    if ((slot >> i) & 1) flat |= int64_t{1} << reg[i];
  }
  return flat;
}

int Layout::SlotOfFlat(int64_t flat) const {
  int slot = 0;
  int64_t covered = 0;
  for (size_t i = 0; i < reg.size(); ++i) {
    if ((flat >> reg[i]) & 1) slot |= 1 << i;
    covered |= int64_t{1} << reg[i];
  }
  return (flat & ~covered) == 0 ? slot : -1;
}

uint32_t Layout::replicated_lane_mask() const {
  uint32_t m = 0;
  for (size_t i = 0; i < lane.size(); ++i) {
    if (lane[i] < 0) m |= 1u << i;
  }
  return m;
}

uint32_t Layout::replicated_warp_mask() const {
  uint32_t m = 0;
  for (size_t i = 0; i < warp.size(); ++i) {
    if (warp[i] < 0) m |= 1u << i;
  }
  return m;
}

std::string Layout::ToString() const {
  auto bit_name = [&](int b) -> std::string {
    if (b < 0) return "-";
    const int d = dim_of_bit(b);
    return "d" + std::to_string(d) + "." + std::to_string(b - dim_low_bit(d));
  };
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += (i ? ", " : "") + std::to_string(shape[i]);
  }
  s += "] reg(";
  for (size_t i = 0; i < reg.size(); ++i)
    s += (i ? " " : "") + bit_name(reg[i]);
  s += ") lane(";
  for (size_t i = 0; i < lane.size(); ++i)
    s += (i ? " " : "") + bit_name(lane[i]);
  s += ") warp(";
  for (size_t i = 0; i < warp.size(); ++i)
    s += (i ? " " : "") + bit_name(warp[i]);
  return s + ")";
}

Layout Blocked(const std::vector<int64_t>& shape, int num_warps) {
  Layout l;
  l.shape = shape;
  const int bits = l.flat_bits();
  int next = 0;
  l.lane.assign(kLaneBits, -1);
  for (int i = 0; i < kLaneBits; ++i) {
    if (next < bits) l.lane[i] = next++;
  }
  l.warp.assign(Log2(num_warps), -1);
  for (size_t i = 0; i < l.warp.size(); ++i) {
    if (next < bits) l.warp[i] = next++;
  }
  while (next < bits) l.reg.push_back(next++);
  return l;
}

DotWarpGrid ChooseDotWarpGrid(int64_t m, int64_t n, int num_warps) {
  // Split the warps between rows and columns of 8x8 tiles, rows first as
  // Triton's MMA layouts do, never more warps on a side than tiles.
  DotWarpGrid g;
  const int64_t tiles_m = m / 8, tiles_n = n / 8;
  int warps = num_warps;
  while (warps > 1) {
    const bool can_m = g.warps_m * 2 <= tiles_m;
    const bool can_n = g.warps_n * 2 <= tiles_n;
    if (!can_m && !can_n) break;
    if (can_m && (!can_n || tiles_m / g.warps_m >= tiles_n / g.warps_n)) {
      g.warps_m *= 2;
    } else {
      g.warps_n *= 2;
    }
    warps /= 2;
  }
  return g;
}

namespace {

// A layout of an [R, C] matrix of 8x8 simdgroup_matrix tiles: lanes in
// Apple's order inside a tile, register bit 0 the tile element, then the
// tile column and row bits that warps do not split. Warp bits
// [row_warp, row_warp + row_split) split the tile rows (the top row bits),
// [col_warp, col_warp + col_split) the tile columns; other warp bits hold
// copies.
Layout TileLayout(int64_t rows, int64_t cols, int row_split, int row_warp,
                  int col_split, int col_warp, int num_warps) {
  Layout l;
  l.shape = {rows, cols};
  const int rb = Log2(rows), cb = Log2(cols);
  auto row_bit = [&](int b) { return cb + b; };
  auto col_bit = [&](int b) { return b; };
  // Inside a tile (isa/simdgroup_matrix_layout.h): lane bit 0 is column
  // bit 1, lane bits 1-2 row bits 0-1, lane bit 3 column bit 2, lane bit 4
  // row bit 2; the element number is column bit 0.
  static_assert(
      isa::SimdgroupMatrixCol(1, 0) == 2 && isa::SimdgroupMatrixRow(2) == 1 &&
      isa::SimdgroupMatrixRow(4) == 2 && isa::SimdgroupMatrixCol(8, 0) == 4 &&
      isa::SimdgroupMatrixRow(16) == 4 && isa::SimdgroupMatrixCol(0, 1) == 1);
  l.lane = {col_bit(1), row_bit(0), row_bit(1), col_bit(2), row_bit(2)};
  l.reg.push_back(col_bit(0));
  const int tile_col_bits = cb - 3, tile_row_bits = rb - 3;
  assert(col_split <= tile_col_bits && row_split <= tile_row_bits);
  for (int b = 0; b < tile_col_bits - col_split; ++b)
    l.reg.push_back(col_bit(3 + b));
  for (int b = 0; b < tile_row_bits - row_split; ++b)
    l.reg.push_back(row_bit(3 + b));
  l.warp.assign(Log2(num_warps), -1);
  for (int b = 0; b < row_split; ++b) {
    l.warp[row_warp + b] = row_bit(3 + tile_row_bits - row_split + b);
  }
  for (int b = 0; b < col_split; ++b) {
    l.warp[col_warp + b] = col_bit(3 + tile_col_bits - col_split + b);
  }
  return l;
}

}  // namespace

// Warp bits: the low log2(warps_m) split M, the next log2(warps_n) split N,
// in A, B and C alike, so that one warp holds matching tiles of the three.
Layout DotResult(int64_t m, int64_t n, int num_warps) {
  const DotWarpGrid g = ChooseDotWarpGrid(m, n, num_warps);
  const int wm = Log2(g.warps_m), wn = Log2(g.warps_n);
  return TileLayout(m, n, wm, 0, wn, wm, num_warps);
}

Layout DotOperandA(int64_t m, int64_t k, int64_t n, int num_warps) {
  const DotWarpGrid g = ChooseDotWarpGrid(m, n, num_warps);
  return TileLayout(m, k, Log2(g.warps_m), 0, 0, 0, num_warps);
}

Layout DotOperandB(int64_t k, int64_t n, int64_t m, int num_warps) {
  const DotWarpGrid g = ChooseDotWarpGrid(m, n, num_warps);
  const int wm = Log2(g.warps_m);
  return TileLayout(k, n, 0, 0, Log2(g.warps_n), wm, num_warps);
}

int DotTileSlot(const Layout& l, int64_t row_tile, int64_t col_tile, int e) {
  const int cb = Log2(l.shape[1]);
  const int64_t flat = ((row_tile * 8) << cb) | (col_tile * 8) | e;
  return l.SlotOfFlat(flat);
}

namespace {

Layout MapBits(const Layout& l, const std::vector<int64_t>& shape,
               const std::function<int(int)>& f) {
  Layout out;
  out.shape = shape;
  for (int b : l.reg) {
    const int m = f(b);
    if (m >= 0) out.reg.push_back(m);
  }
  for (int b : l.lane) out.lane.push_back(b < 0 ? -1 : f(b));
  for (int b : l.warp) out.warp.push_back(b < 0 ? -1 : f(b));
  return out;
}

}  // namespace

Layout BroadcastOperand(const Layout& result,
                        const std::vector<int64_t>& operand_shape) {
  return MapBits(result, operand_shape, [&](int b) {
    const int d = result.dim_of_bit(b);
    if (operand_shape[d] == 1) return -1;
    return FlatBit(operand_shape, d, b - result.dim_low_bit(d));
  });
}

Layout BroadcastResult(const Layout& operand,
                       const std::vector<int64_t>& result_shape) {
  Layout out = MapBits(operand, result_shape, [&](int b) {
    const int d = operand.dim_of_bit(b);
    return FlatBit(result_shape, d, b - operand.dim_low_bit(d));
  });
  // The stretched dimensions' bits, low first.
  std::vector<int> fresh;
  for (auto [d, bit] : BitsOf(result_shape)) {
    if (operand.shape[d] == 1) fresh.push_back(FlatBit(result_shape, d, bit));
  }
  size_t next = 0;
  for (int& b : out.lane) {
    if (b < 0 && next < fresh.size()) b = fresh[next++];
  }
  for (int& b : out.warp) {
    if (b < 0 && next < fresh.size()) b = fresh[next++];
  }
  while (next < fresh.size()) out.reg.push_back(fresh[next++]);
  return out;
}

Layout Reshaped(const Layout& l, const std::vector<int64_t>& shape) {
  Layout out = l;
  out.shape = shape;
  return out;
}

Layout PermuteOperand(const Layout& result, const std::vector<int>& order,
                      const std::vector<int64_t>& operand_shape) {
  // result dim i is operand dim order[i].
  return MapBits(result, operand_shape, [&](int b) {
    const int i = result.dim_of_bit(b);
    return FlatBit(operand_shape, order[i], b - result.dim_low_bit(i));
  });
}

Layout PermuteResult(const Layout& operand, const std::vector<int>& order) {
  std::vector<int64_t> shape;
  std::vector<int> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    shape.push_back(operand.shape[order[i]]);
    inverse[order[i]] = static_cast<int>(i);
  }
  return MapBits(operand, shape, [&](int b) {
    const int d = operand.dim_of_bit(b);
    return FlatBit(shape, inverse[d], b - operand.dim_low_bit(d));
  });
}

Layout Reduced(const Layout& operand, int axis) {
  std::vector<int64_t> shape = operand.shape;
  shape.erase(shape.begin() + axis);
  return MapBits(operand, shape, [&](int b) {
    const int d = operand.dim_of_bit(b);
    if (d == axis) return -1;
    const int nd = d > axis ? d - 1 : d;
    return FlatBit(shape, nd, b - operand.dim_low_bit(d));
  });
}

Layout JoinResult(const Layout& operand) {
  std::vector<int64_t> shape = operand.shape;
  shape.push_back(2);
  Layout out = MapBits(operand, shape, [](int b) { return b + 1; });
  out.reg.insert(out.reg.begin(), 0);
  return out;
}

bool SplitOperandOk(const Layout& operand) {
  return std::find(operand.reg.begin(), operand.reg.end(), 0) !=
         operand.reg.end();
}

Layout SplitResult(const Layout& operand) {
  std::vector<int64_t> shape(operand.shape.begin(), operand.shape.end() - 1);
  return MapBits(operand, shape, [](int b) { return b == 0 ? -1 : b - 1; });
}

Layout CatResult(const Layout& operand) {
  Layout out = operand;
  out.shape = {operand.shape[0] * 2};
  out.reg.push_back(operand.flat_bits());
  return out;
}

}  // namespace mtlemu::triton::lower
