// Where each block tensor of a function lives (its home layout), decided
// before any code is written.
//
// A value is *rematerializable* when it is a constant, a range, a splat of
// a scalar, or elementwise arithmetic and shape operations on such values:
// it has no home and is computed wherever a use needs it, in the layout
// the use needs (the address arithmetic of loads and stores, masks).
// Every other tensor has one home:
//   - tl.load: its pointer's home, or its mask's; a load whose only use
//     is tl.dot (directly or through casts) loads straight into the dot
//     operand layout; otherwise the default blocked layout;
//   - elementwise ops: the home of their first tensor operand that has
//     one (the others are computed or converted there);
//   - shape ops: their operand's home renamed (layout.h);
//   - tl.reduce: the operand's home with the axis removed;
//   - tl.dot: the simdgroup_matrix tile layout;
//   - loop-carried values and scf results: the home of what is yielded,
//     else of the initial value, else blocked (found by iterating to a
//     fixed point).
#pragma once

#include <map>
#include <optional>

#include "compiler/triton/ir/ir.h"
#include "compiler/triton/lower/layout.h"

namespace mtlemu::triton::lower {

class LayoutAssignment {
 public:
  LayoutAssignment(const ir::Function& function, int num_warps);

  int num_warps() const { return num_warps_; }
  // Whether `v` (a tensor) is computed where it is used.
  bool rematerializable(const ir::Value* v) const;
  // The home of a tensor that is not rematerializable.
  const Layout& home(const ir::Value* v) const;
  // A layout for `v` when nothing else decides one: its home, or blocked.
  Layout HomeOrBlocked(const ir::Value* v) const;
  // The layout a store (or atomic) works in: its pointer's home, else its
  // value's, else blocked.
  Layout StoreLayout(const ir::Operation& op) const;
  // The number of uses of each value.
  int uses(const ir::Value* v) const;

 private:
  bool ComputeRematerializable(const ir::Value* v);
  void AssignBlock(const ir::Block& block);
  void AssignOp(const ir::Operation& op);
  void SetHome(const ir::Value* v, Layout l);
  std::optional<Layout> Known(const ir::Value* v) const;
  void FindDotLoads(const ir::Block& block);
  // The preferred layout of a load that `arg` (a loop's block argument)
  // feeds, through elementwise ops in the loop body.
  std::optional<Layout> DemandedInside(const ir::Value& arg) const;

  int num_warps_;
  std::map<const ir::Value*, bool> remat_;
  std::map<const ir::Value*, Layout> home_;
  std::map<const ir::Value*, Layout> preferred_;  // loads feeding tl.dot
  std::map<const ir::Value*, int> uses_;
  bool changed_ = false;
};

}  // namespace mtlemu::triton::lower
