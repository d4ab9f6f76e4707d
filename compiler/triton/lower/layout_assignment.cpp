#include "compiler/triton/lower/layout_assignment.h"

#include <algorithm>
#include <set>

#include "compiler/triton/lower/kernel_lowering.h"

namespace mtlemu::triton::lower {
namespace {

using ir::OpCode;

bool IsTensor(const ir::Value* v) { return v->type()->IsTensor(); }

// Ops that compute their result in any layout from their operands in it
// (or in layouts derived from it), with no side effect.
bool IsRematerializableOp(OpCode c) {
  switch (c) {
    case OpCode::kConstant:
    case OpCode::kMakeRange:
    case OpCode::kSplat:
    case OpCode::kBroadcast:
    case OpCode::kExpandDims:
    case OpCode::kReshape:
    case OpCode::kTrans:
      return true;
    default:
      return ir::IsElementwise(c) && c != OpCode::kExternElementwise;
  }
}

// Casts a dot operand may pass through between its load and the dot.
bool IsCastLike(OpCode c) {
  switch (c) {
    case OpCode::kExtF:
    case OpCode::kTruncF:
    case OpCode::kFpToFp:
    case OpCode::kSIToFP:
    case OpCode::kUIToFP:
    case OpCode::kBitcastTT:
    case OpCode::kExtSI:
    case OpCode::kExtUI:
    case OpCode::kTruncI:
      return true;
    default:
      return false;
  }
}

}  // namespace

LayoutAssignment::LayoutAssignment(const ir::Function& function, int num_warps)
    : num_warps_(num_warps) {
  ir::Walk(*function.body(), [&](const ir::Operation* op) {
    for (const ir::Value* v : op->operands()) ++uses_[v];
  });
  ir::Walk(*function.body(), [&](const ir::Operation* op) {
    for (int i = 0; i < op->num_results(); ++i) {
      ComputeRematerializable(op->result(i));
    }
  });
  FindDotLoads(*function.body());
  // Loops make homes depend on themselves: repeat until nothing changes.
  for (int round = 0; round < 8; ++round) {
    changed_ = false;
    AssignBlock(*function.body());
    if (!changed_) break;
  }
}

int LayoutAssignment::uses(const ir::Value* v) const {
  auto it = uses_.find(v);
  return it == uses_.end() ? 0 : it->second;
}

bool LayoutAssignment::ComputeRematerializable(const ir::Value* v) {
  if (!IsTensor(v)) return false;
  auto it = remat_.find(v);
  if (it != remat_.end()) return it->second;
  const ir::Operation* op = v->defining_op();
  bool r = op != nullptr && IsRematerializableOp(op->code());
  if (r) {
    for (const ir::Value* o : op->operands()) {
      if (IsTensor(o) && !ComputeRematerializable(o)) r = false;
    }
  }
  remat_[v] = r;
  return r;
}

bool LayoutAssignment::rematerializable(const ir::Value* v) const {
  auto it = remat_.find(v);
  return it != remat_.end() && it->second;
}

const Layout& LayoutAssignment::home(const ir::Value* v) const {
  auto it = home_.find(v);
  if (it == home_.end()) {
    // A lowering bug, reported rather than read past the map's end.
    const ir::Operation* def = v->defining_op();
    throw LowerError{"internal error: no layout for a value of type " +
                         v->type()->ToString(),
                     def != nullptr ? def->loc() : SourceLocation()};
  }
  return it->second;
}

std::optional<Layout> LayoutAssignment::Known(const ir::Value* v) const {
  if (!IsTensor(v) || rematerializable(v)) return std::nullopt;
  auto it = home_.find(v);
  if (it == home_.end()) return std::nullopt;
  return it->second;
}

Layout LayoutAssignment::HomeOrBlocked(const ir::Value* v) const {
  if (std::optional<Layout> l = Known(v)) return *l;
  return Blocked(v->type()->shape(), num_warps_);
}

Layout LayoutAssignment::StoreLayout(const ir::Operation& op) const {
  const ir::Value* first_tensor = nullptr;
  for (const ir::Value* v : op.operands()) {
    if (std::optional<Layout> l = Known(v)) return *l;
    if (first_tensor == nullptr && IsTensor(v)) first_tensor = v;
  }
  return Blocked(first_tensor != nullptr ? first_tensor->type()->shape()
                                         : std::vector<int64_t>{},
                 num_warps_);
}

void LayoutAssignment::SetHome(const ir::Value* v, Layout l) {
  auto it = home_.find(v);
  if (it != home_.end() && it->second == l) return;
  home_[v] = std::move(l);
  changed_ = true;
}

void LayoutAssignment::FindDotLoads(const ir::Block& block) {
  ir::Walk(block, [&](const ir::Operation* op) {
    if (op->code() != OpCode::kDot || op->operand(0)->type()->rank() != 2)
      return;
    const auto& as = op->operand(0)->type()->shape();
    const auto& bs = op->operand(1)->type()->shape();
    const int64_t m = as[0], k = as[1], n = bs[1];
    if (!IsTiledDot(m, k, n)) return;
    for (int which = 0; which < 2; ++which) {
      const ir::Value* v = op->operand(which);
      while (v->defining_op() != nullptr &&
             IsCastLike(v->defining_op()->code()) && uses(v) == 1) {
        v = v->defining_op()->operand(0);
      }
      const ir::Operation* def = v->defining_op();
      if (def == nullptr || def->code() != OpCode::kLoad || uses(v) != 1 ||
          def->operand(0)->type()->IsBlockPointer()) {
        continue;
      }
      preferred_[v] = which == 0 ? DotOperandA(m, k, n, num_warps_)
                                 : DotOperandB(k, n, m, num_warps_);
    }
  });
}

std::optional<Layout> LayoutAssignment::DemandedInside(
    const ir::Value& arg) const {
  // A loop-carried pointer tensor whose loads feed tl.dot is best kept in
  // the dot operand's layout: follow the value through elementwise ops
  // (its own update, `ptrs += step`) to a load with a preferred layout.
  std::vector<const ir::Value*> work = {&arg};
  std::set<const ir::Value*> seen;
  const ir::Block* block = arg.owner_block();
  while (!work.empty()) {
    const ir::Value* v = work.back();
    work.pop_back();
    if (!seen.insert(v).second) continue;
    for (const auto& op : block->ops()) {
      const bool uses = std::find(op->operands().begin(), op->operands().end(),
                                  v) != op->operands().end();
      if (!uses) continue;
      if (op->code() == OpCode::kLoad && op->operand(0) == v) {
        if (auto p = preferred_.find(op->result()); p != preferred_.end()) {
          return p->second;
        }
      }
      if (ir::IsElementwise(op->code()) && op->num_results() == 1 &&
          op->result()->type()->shape() == v->type()->shape()) {
        work.push_back(op->result());
      }
    }
  }
  return std::nullopt;
}

void LayoutAssignment::AssignBlock(const ir::Block& block) {
  for (const auto& op : block.ops()) AssignOp(*op);
}

void LayoutAssignment::AssignOp(const ir::Operation& op) {
  auto result_shape = [&](int i) { return op.result(i)->type()->shape(); };
  auto tensor_result = [&](int i) {
    return i < op.num_results() && IsTensor(op.result(i)) &&
           !rematerializable(op.result(i));
  };
  switch (op.code()) {
    case OpCode::kFor:
    case OpCode::kWhile:
    case OpCode::kIf: {
      ir::Block* body = op.region(op.code() == OpCode::kWhile ? 1 : 0);
      const int first_init = op.code() == OpCode::kFor ? 3 : 0;
      const int first_arg = op.code() == OpCode::kFor ? 1 : 0;
      const int n = op.num_results();
      // The homes of the carried values from the last round (or the
      // initial values), then the regions, then the yields decide.
      for (int i = 0; i < n; ++i) {
        if (!IsTensor(op.result(i))) continue;
        std::optional<Layout> l = Known(op.result(i));
        if (!l && op.code() != OpCode::kIf) {
          l = Known(op.operand(first_init + i));
        }
        if (!l && op.code() == OpCode::kFor) {
          l = DemandedInside(*body->arg(first_arg + i));
        }
        if (!l) l = Blocked(result_shape(i), num_warps_);
        SetHome(op.result(i), *l);
        if (op.code() == OpCode::kFor) SetHome(body->arg(first_arg + i), *l);
        if (op.code() == OpCode::kWhile) {
          SetHome(op.region(0)->arg(i), *l);
          SetHome(op.region(1)->arg(i), *l);
        }
      }
      for (int r = 0; r < op.num_regions(); ++r) AssignBlock(*op.region(r));
      // Each result: the first region whose terminator knows a home.
      for (int i = 0; i < n; ++i) {
        if (!IsTensor(op.result(i))) continue;
        for (int r = 0; r < op.num_regions(); ++r) {
          const ir::Operation* term = op.region(r)->terminator();
          if (term == nullptr) continue;
          const int skip = term->code() == OpCode::kCondition ? 1 : 0;
          if (i + skip >= term->num_operands()) continue;
          std::optional<Layout> l = Known(term->operand(i + skip));
          if (!l) continue;
          SetHome(op.result(i), *l);
          if (op.code() == OpCode::kFor) SetHome(body->arg(first_arg + i), *l);
          if (op.code() == OpCode::kWhile) {
            SetHome(op.region(0)->arg(i), *l);
            SetHome(op.region(1)->arg(i), *l);
          }
          break;
        }
      }
      return;
    }
    case OpCode::kLoad:
    case OpCode::kDescriptorLoad: {
      if (!tensor_result(0)) return;
      const ir::Value* r = op.result();
      if (auto p = preferred_.find(r); p != preferred_.end()) {
        SetHome(r, p->second);
        return;
      }
      if (op.code() == OpCode::kLoad &&
          !op.operand(0)->type()->IsBlockPointer()) {
        for (const ir::Value* v : op.operands()) {
          if (std::optional<Layout> l = Known(v)) {
            SetHome(r, *l);
            return;
          }
        }
      }
      SetHome(r, Blocked(result_shape(0), num_warps_));
      return;
    }
    case OpCode::kAtomicRMW:
    case OpCode::kAtomicCAS:
      if (tensor_result(0)) SetHome(op.result(), StoreLayout(op));
      return;
    case OpCode::kBroadcast:
      if (tensor_result(0)) {
        SetHome(op.result(),
                BroadcastResult(home(op.operand(0)), result_shape(0)));
      }
      return;
    case OpCode::kExpandDims:
    case OpCode::kReshape:
      if (tensor_result(0)) {
        SetHome(op.result(), Reshaped(home(op.operand(0)), result_shape(0)));
      }
      return;
    case OpCode::kTrans:
      if (tensor_result(0)) {
        std::vector<int64_t> o = op.array_attr("order");
        SetHome(op.result(),
                PermuteResult(home(op.operand(0)),
                              std::vector<int>(o.begin(), o.end())));
      }
      return;
    case OpCode::kReduce: {
      const Layout src = HomeOrBlocked(op.operand(0));
      const int axis = static_cast<int>(op.int_attr("axis"));
      for (int i = 0; i < op.num_results(); ++i) {
        if (IsTensor(op.result(i))) SetHome(op.result(i), Reduced(src, axis));
      }
      AssignBlock(*op.region(0));
      return;
    }
    case OpCode::kScan: {
      const Layout src = HomeOrBlocked(op.operand(0));
      for (int i = 0; i < op.num_results(); ++i) SetHome(op.result(i), src);
      AssignBlock(*op.region(0));
      return;
    }
    case OpCode::kDot: {
      const auto& s = result_shape(0);
      if (s.size() == 2 &&
          IsTiledDot(s[0], op.operand(0)->type()->shape()[1], s[1])) {
        SetHome(op.result(), DotResult(s[0], s[1], num_warps_));
      } else {
        SetHome(op.result(), Blocked(s, num_warps_));
      }
      return;
    }
    case OpCode::kJoin:
      SetHome(op.result(), JoinResult(HomeOrBlocked(op.operand(0))));
      return;
    case OpCode::kSplit: {
      Layout src = HomeOrBlocked(op.operand(0));
      if (!SplitOperandOk(src))
        src = JoinResult(Blocked(result_shape(0), num_warps_));
      SetHome(op.result(0), SplitResult(src));
      SetHome(op.result(1), SplitResult(src));
      return;
    }
    case OpCode::kCat:
      SetHome(op.result(), CatResult(HomeOrBlocked(op.operand(0))));
      return;
    case OpCode::kGather:
      SetHome(op.result(), HomeOrBlocked(op.operand(1)));
      return;
    case OpCode::kHistogram:
      SetHome(op.result(), Blocked(result_shape(0), num_warps_));
      return;
    default:
      break;
  }
  for (int r = 0; r < op.num_regions(); ++r) AssignBlock(*op.region(r));
  for (int i = 0; i < op.num_results(); ++i) {
    if (!tensor_result(i)) continue;
    // Elementwise (or other) ops: the first operand home.
    std::optional<Layout> l;
    for (const ir::Value* v : op.operands()) {
      if (v->type()->IsTensor() && v->type()->shape() == result_shape(i)) {
        l = Known(v);
        if (l) break;
      }
    }
    SetHome(op.result(i), l ? *l : Blocked(result_shape(i), num_warps_));
  }
}

}  // namespace mtlemu::triton::lower
