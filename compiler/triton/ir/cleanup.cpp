#include "compiler/triton/ir/cleanup.h"

#include <map>

namespace mtlemu::triton::ir {
namespace {

void CountUses(const Block& block, std::map<const Value*, int>& uses) {
  Walk(block, [&](const Operation* op) {
    for (const Value* v : op->operands()) ++uses[v];
  });
}

bool Unused(const Operation& op, const std::map<const Value*, int>& uses) {
  if (!IsPure(op.code()) || op.num_results() == 0) return false;
  for (int i = 0; i < op.num_results(); ++i) {
    if (uses.count(op.result(i))) return false;
  }
  return true;
}

int Sweep(Block& block, const std::map<const Value*, int>& uses) {
  int removed = 0;
  for (size_t i = block.ops().size(); i-- > 0;) {
    Operation& op = *block.ops()[i];
    if (Unused(op, uses)) {
      block.Take(i);
      ++removed;
      continue;
    }
    for (int r = 0; r < op.num_regions(); ++r)
      removed += Sweep(*op.region(r), uses);
  }
  return removed;
}

}  // namespace

int RemoveUnusedOps(Function& function) {
  int total = 0;
  for (;;) {
    std::map<const Value*, int> uses;
    CountUses(*function.body(), uses);
    const int removed = Sweep(*function.body(), uses);
    if (removed == 0) return total;
    total += removed;
  }
}

}  // namespace mtlemu::triton::ir
