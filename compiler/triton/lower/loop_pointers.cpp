#include "compiler/triton/lower/loop_pointers.h"

#include <memory>
#include <vector>

namespace mtlemu::triton::lower {
namespace {

using ir::Block;
using ir::OpCode;
using ir::Operation;
using ir::Type;
using ir::Value;

// scf.for's operands: lower bound, upper bound, step, then the initial
// values of the iteration arguments; its body's arguments: the induction
// variable, then the iteration arguments.
constexpr int kFirstInit = 3;

size_t IndexIn(const Block& block, const Operation* op) {
  for (size_t i = 0; i < block.ops().size(); ++i) {
    if (block.ops()[i].get() == op) return i;
  }
  return block.ops().size();
}

// Replaces `from` by `to` in every operand of the ops of `block` (and
// their regions), but for the ops in `except`.
void ReplaceUses(Block& block, const Value* from, Value* to,
                 const std::vector<const Operation*>& except) {
  for (const auto& op : block.ops()) {
    bool skip = false;
    for (const Operation* e : except) skip |= e == op.get();
    if (!skip) {
      for (int i = 0; i < op->num_operands(); ++i) {
        if (op->operand(i) == from) op->set_operand(i, to);
      }
    }
    for (int r = 0; r < op->num_regions(); ++r) {
      ReplaceUses(*op->region(r), from, to, except);
    }
  }
}

std::unique_ptr<Operation> NewOp(OpCode code, const SourceLocation& loc,
                                 std::vector<Value*> operands,
                                 const Type* result) {
  auto op = std::make_unique<Operation>(code, loc);
  for (Value* v : operands) op->add_operand(v);
  op->add_result(result);
  return op;
}

// `s` as i64: itself, or its sign extension inserted at `index` of `block`.
Value* ToI64(Value* s, Block& block, size_t index, const SourceLocation& loc) {
  if (s->type() == Type::I64()) return s;
  return block.Insert(index, NewOp(OpCode::kExtSI, loc, {s}, Type::I64()))
      ->result();
}

// The offsets of `init` = addptr(splat(base), offsets), as they nearly
// always are, or null.
Value* InitOffsets(const Value* init) {
  const Operation* add = init->defining_op();
  if (add == nullptr || add->code() != OpCode::kAddPtr) return nullptr;
  const Operation* splat = add->operand(0)->defining_op();
  if (splat == nullptr || splat->code() != OpCode::kSplat) return nullptr;
  return add->operand(1);
}

// The pointers `init` moved by `acc` elements (of acc's type, i32 or i64),
// inserted at `index` of `block`. With init = addptr(splat(base),
// offsets), the offsets are added first, addptr(splat(base), offsets +
// acc), so that no pointer is loop-invariant: the MSL compiler would hoist
// it out of the loop and keep it in two registers per element. Else
// addptr(init, splat(acc)).
Value* PointersAt(Value* init, Value* acc, Block& block, size_t index,
                  const SourceLocation& loc) {
  const Type* t = init->type();
  auto insert = [&](std::unique_ptr<Operation> op) {
    return block.Insert(index++, std::move(op))->result();
  };
  const Type* acc_t = acc->type();
  const Type* accs = Type::Tensor(t->shape(), acc_t);
  Value* moved = insert(NewOp(OpCode::kSplat, loc, {acc}, accs));
  Value* base = init;
  if (Value* offsets = InitOffsets(init)) {
    base = init->defining_op()->operand(0);
    if (offsets->type()->element() != acc_t) {
      offsets = insert(NewOp(OpCode::kExtSI, loc, {offsets}, accs));
    }
    moved = insert(NewOp(OpCode::kAddI, loc, {offsets, moved}, accs));
  }
  return insert(NewOp(OpCode::kAddPtr, loc, {base, moved}, t));
}

// The scalar step of `yielded` = addptr(arg, splat(s)), or null.
Value* ScalarStep(const Value* yielded, const Value* arg) {
  const Operation* add = yielded->defining_op();
  if (add == nullptr || add->code() != OpCode::kAddPtr ||
      add->operand(0) != arg) {
    return nullptr;
  }
  const Operation* splat = add->operand(1)->defining_op();
  if (splat == nullptr || splat->code() != OpCode::kSplat) return nullptr;
  Value* s = splat->operand(0);
  if (!s->type()->IsInt() || s->type()->bits() < 8) return nullptr;
  return s;
}

int Rewrite(Operation& loop) {
  Block& body = *loop.region(0);
  Operation* yield = body.terminator();
  Block* outer = loop.parent_block();
  if (yield == nullptr || outer == nullptr) return 0;
  int rewritten = 0;
  const int args = loop.num_operands() - kFirstInit;
  for (int i = 0; i < args; ++i) {
    Value* arg = body.arg(i + 1);
    const Type* t = arg->type();
    if (!t->IsTensor() || !t->element()->IsPointer() ||
        t->element()->IsBlockPointer()) {
      continue;
    }
    Value* step = ScalarStep(yield->operand(i), arg);
    if (step == nullptr) continue;
    const SourceLocation loc = yield->operand(i)->defining_op()->loc();
    Value* init = loop.operand(kFirstInit + i);
    // acc: a new iteration argument, 0 on entry; i32 when the offsets and
    // the step are (the pointers then hold base + sext(offset + acc), which
    // differs from Triton's base + sext(offset) + sext(acc) only past 2^31
    // elements from the base: compiler/triton/README.md says so).
    const Value* offsets = InitOffsets(init);
    const Type* acc_t = offsets != nullptr &&
                                offsets->type()->element() == Type::I32() &&
                                step->type() == Type::I32()
                            ? Type::I32()
                            : Type::I64();
    Value* zero = outer
                      ->Insert(IndexIn(*outer, &loop),
                               NewOp(OpCode::kConstant, loc, {}, acc_t))
                      ->result();
    zero->defining_op()->set_attr("value", ir::IntAttr{0, acc_t});
    loop.add_operand(zero);
    Value* acc = body.add_arg(acc_t);
    Value* acc_result = loop.add_result(acc_t);
    // In the body: the pointers from init and acc; yield acc + step.
    Value* pointers = PointersAt(init, acc, body, 0, loc);
    ReplaceUses(body, arg, pointers, {pointers->defining_op()});
    const size_t at_yield = IndexIn(body, yield);
    Value* step_t =
        acc_t == step->type() ? step : ToI64(step, body, at_yield, loc);
    Value* next = body.Insert(IndexIn(body, yield),
                              NewOp(OpCode::kAddI, loc, {acc, step_t}, acc_t))
                      ->result();
    yield->set_operand(i, arg);  // the argument itself: loop-invariant
    yield->add_operand(next);
    // After the loop: the final pointers, where they are used.
    Value* result = loop.result(i);
    const size_t after = IndexIn(*outer, &loop) + 1;
    Value* final_pointers = PointersAt(init, acc_result, *outer, after, loc);
    ReplaceUses(*outer, result, final_pointers,
                {final_pointers->defining_op()});
    ++rewritten;
  }
  return rewritten;
}

}  // namespace

int StrengthReduceLoopPointers(ir::Function& function) {
  std::vector<Operation*> loops;
  ir::Walk(*function.body(), [&](const Operation* op) {
    if (op->code() == OpCode::kFor) loops.push_back(const_cast<Operation*>(op));
  });
  int n = 0;
  for (Operation* loop : loops) n += Rewrite(*loop);
  return n;
}

}  // namespace mtlemu::triton::lower
