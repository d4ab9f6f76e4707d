#include "compiler/triton/ir/verifier.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/triton/ir/ttir_syntax.h"

namespace mtlemu::triton::ir {
namespace {

std::string TypeText(const Type* t) { return t ? t->ToString() : "<null>"; }

std::vector<int64_t> ShapeOf(const Type* t) {
  return t->IsTensor() ? t->shape() : std::vector<int64_t>{};
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (k > 0) s += "x";
    s += std::to_string(shape[k]);
  }
  return s;
}

bool IsPtrLike(const Type* t) { return t->ScalarType()->IsPointer(); }
// What a pointer-like type loads: see tt.load.
const Type* PointeeOf(const Type* t) {
  if (t->IsPointer()) return t->pointee();
  if (t->IsTensor() && t->element()->IsPointer()) {
    return Type::Tensor(t->shape(), t->element()->pointee());
  }
  return nullptr;
}
const Type* I1Like(const Type* t) { return t->WithElement(Type::I1()); }

const char* OpNameOr(const Operation* op, const char* fallback) {
  return op ? op->name() : fallback;
}

class Verifier {
 public:
  Verifier(const Module& module, std::string_view pass)
      : module_(module), pass_(pass) {}

  Status Run() {
    for (const auto& f : module_.functions()) Function(*f);
    if (errors_.empty()) return {};
    std::string message;
    for (const std::string& e : errors_) {
      if (!message.empty()) message += "\n";
      message += e;
    }
    return Error{message};
  }

 private:
  // --- reporting -------------------------------------------------------------

  std::string Where(const SourceLocation& loc) const {
    if (loc.known()) {
      return loc.file + ":" + std::to_string(loc.line) + ":" +
             std::to_string(loc.column + 1);
    }
    if (function_ != nullptr && function_->loc().known()) {
      return Where(function_->loc());
    }
    return "<unknown location>";
  }

  void Report(const SourceLocation& loc, const std::string& what,
              const std::string& message) {
    std::string line = Where(loc) + ": error: " + what + ": " + message;
    if (!pass_.empty()) line += " (IR after '" + std::string(pass_) + "')";
    errors_.push_back(std::move(line));
  }

  // An op without a location is reported at the nearest op around it that
  // has one (then at its function).
  void Bad(const Operation& op, const std::string& message) {
    const Operation* at = &op;
    while (at != nullptr && !at->loc().known()) at = at->parent_op();
    Report(at != nullptr ? at->loc() : op.loc(), op.name(), message);
  }

  // --- structure -------------------------------------------------------------

  void Function(const ir::Function& f) {
    function_ = &f;
    const std::string what = "tt.func @" + f.name();
    const Block& body = *f.body();
    if (static_cast<int>(f.arg_info().size()) != body.num_args()) {
      Report(f.loc(), what,
             std::to_string(f.arg_info().size()) + " argument infos for " +
                 std::to_string(body.num_args()) + " arguments");
    }
    visible_.clear();
    Region(body, nullptr, 0);
    const Operation* last = body.back();
    if (last == nullptr || last->code() != OpCode::kReturn) {
      Report(f.loc(), what, "the body does not end in tt.return");
    }
  }

  // A block (a function body or the region `index` of `parent`): its ops
  // in order, each seeing the values defined before it here and around.
  void Region(const Block& block, const Operation* parent, int index) {
    visible_.emplace_back();
    for (int i = 0; i < block.num_args(); ++i) {
      if (block.arg(i)->type() == nullptr) {
        Report(parent ? parent->loc() : function_->loc(),
               OpNameOr(parent, "tt.func"),
               "block argument " + std::to_string(i) + " has no type");
      }
      visible_.back().insert(block.arg(i));
    }
    const auto& ops = block.ops();
    for (size_t k = 0; k < ops.size(); ++k) {
      const Operation& op = *ops[k];
      Operands(op);
      if (IsTerminator(op.code()) && k + 1 != ops.size()) {
        Bad(op, "a terminator must be the last op of its block");
      }
      if (IsTerminator(op.code())) TerminatorPlace(op, parent, index);
      Op(op);
      for (int r = 0; r < op.num_regions(); ++r) Region(*op.region(r), &op, r);
      for (int r = 0; r < op.num_results(); ++r) {
        if (op.result(r)->type() == nullptr) {
          Bad(op, "result " + std::to_string(r) + " has no type");
        }
        visible_.back().insert(op.result(r));
      }
    }
    visible_.pop_back();
    if (parent != nullptr) RegionEnd(block, *parent, index);
  }

  bool Visible(const Value* v) const {
    for (const auto& frame : visible_) {
      if (frame.count(v)) return true;
    }
    return false;
  }

  static std::string Describe(const Value* v) {
    if (!v->name().empty()) return "'%" + v->name() + "'";
    if (v->defining_op() != nullptr) {
      return "result " + std::to_string(v->result_index()) + " of " +
             v->defining_op()->name();
    }
    return "block argument " + std::to_string(v->arg_index());
  }

  void Operands(const Operation& op) {
    for (int i = 0; i < op.num_operands(); ++i) {
      const Value* v = op.operand(i);
      if (v == nullptr) {
        Bad(op, "operand " + std::to_string(i) + " is null");
      } else if (v->type() == nullptr) {
        Bad(op, "operand " + std::to_string(i) + " has no type");
      } else if (!Visible(v)) {
        Bad(op, "operand " + std::to_string(i) + " (" + Describe(v) +
                    ") is not defined before this use (SSA dominance)");
      }
    }
  }

  // The op that must end region `index` of `parent`.
  static OpCode TerminatorFor(const Operation& parent, int index) {
    switch (parent.code()) {
      case OpCode::kReduce:
        return OpCode::kReduceReturn;
      case OpCode::kScan:
        return OpCode::kScanReturn;
      case OpCode::kMapElementwise:
        return OpCode::kMapElementwiseReturn;
      case OpCode::kWhile:
        return index == 0 ? OpCode::kCondition : OpCode::kYield;
      default:
        return OpCode::kYield;
    }
  }

  void TerminatorPlace(const Operation& op, const Operation* parent,
                       int index) {
    const OpCode want =
        parent == nullptr ? OpCode::kReturn : TerminatorFor(*parent, index);
    if (op.code() == want) return;
    Bad(op, std::string("cannot end ") +
                (parent ? "a region of " + std::string(parent->name())
                        : std::string("a function body")) +
                " (" + OpName(want) + " does)");
  }

  void RegionEnd(const Block& block, const Operation& parent, int index) {
    const Operation* last = block.back();
    if (last != nullptr && IsTerminator(last->code())) return;
    // An scf.if without results may leave its else region empty.
    if (parent.code() == OpCode::kIf && index == 1 && block.empty() &&
        parent.num_results() == 0) {
      return;
    }
    Bad(parent, "region " + std::to_string(index) + " does not end in " +
                    OpName(TerminatorFor(parent, index)));
  }

  // --- per-op rules ----------------------------------------------------------

  // Counts; false (reported) when they are not as given. max_operands < 0:
  // no upper bound.
  bool Counts(const Operation& op, int min_operands, int max_operands,
              int results, int regions = 0) {
    bool ok = true;
    const int n = op.num_operands();
    if (n < min_operands || (max_operands >= 0 && n > max_operands)) {
      std::string want = std::to_string(min_operands);
      if (max_operands != min_operands) {
        want = max_operands < 0 ? "at least " + want
                                : want + " to " + std::to_string(max_operands);
      }
      Bad(op, "has " + std::to_string(n) + " operands, expected " + want);
      ok = false;
    }
    if (results >= 0 && op.num_results() != results) {
      Bad(op, "has " + std::to_string(op.num_results()) +
                  " results, expected " + std::to_string(results));
      ok = false;
    }
    if (op.num_regions() != regions) {
      Bad(op, "has " + std::to_string(op.num_regions()) +
                  " regions, expected " + std::to_string(regions));
      ok = false;
    }
    if (!ok) return false;
    for (const Value* v : op.operands()) {
      if (v == nullptr || v->type() == nullptr) return false;
    }
    for (int r = 0; r < op.num_results(); ++r) {
      if (op.result(r)->type() == nullptr) return false;
    }
    return true;
  }

  const Type* T(const Operation& op, int operand) const {
    return op.operand(operand)->type();
  }
  const Type* R(const Operation& op, int result = 0) const {
    return op.result(result)->type();
  }

  // The element domain of an op with kIntElements/kFloatElements.
  bool Domain(const Operation& op, const Type* t, const char* what) {
    const Type* e = t->ScalarType();
    if (HasIntElements(op.code()) && !e->IsInt()) {
      Bad(op, std::string(what) + " must hold integers, not " + TypeText(t));
      return false;
    }
    if (HasFloatElements(op.code()) && !e->IsFloat()) {
      Bad(op, std::string(what) + " must hold floats, not " + TypeText(t));
      return false;
    }
    return true;
  }

  void SameType(const Operation& op, const Type* got, const Type* want,
                const std::string& what) {
    if (got != want) {
      Bad(op,
          what + " has type " + TypeText(got) + ", expected " + TypeText(want));
    }
  }

  void SameShape(const Operation& op, const Type* a, const Type* b,
                 const std::string& what_a, const std::string& what_b) {
    if (ShapeOf(a) != ShapeOf(b)) {
      Bad(op, what_a + " shape " + ShapeText(ShapeOf(a)) + " does not match " +
                  what_b + " shape " + ShapeText(ShapeOf(b)));
    }
  }

  // A symbolic attribute: present (unless optional) and spelled right.
  void EnumAttr(const Operation& op, const char* key, bool optional = false) {
    const Attribute* a = op.attr(key);
    if (a == nullptr) {
      if (!optional) Bad(op, std::string("missing attribute '") + key + "'");
      return;
    }
    const EnumAttrInfo* info = EnumAttrOf(op.code(), key);
    const auto* s = std::get_if<std::string>(a);
    if (info != nullptr && (s == nullptr || !EnumValue(*info, *s))) {
      Bad(op, std::string("attribute '") + key + "' must be one of " +
                  EnumNames(*info));
    }
  }

  template <class T>
  const T* AttrOf(const Operation& op, const char* key, const char* kind,
                  bool optional = false) {
    const Attribute* a = op.attr(key);
    if (a == nullptr) {
      if (!optional) Bad(op, std::string("missing attribute '") + key + "'");
      return nullptr;
    }
    const T* v = std::get_if<T>(a);
    if (v == nullptr) {
      Bad(op, std::string("attribute '") + key + "' must be " + kind);
    }
    return v;
  }

  void Op(const Operation& op) {
    switch (FormOf(op.code())) {
      case OpForm::kConstant:
        return Constant(op);
      case OpForm::kBinary:
        return Elementwise(op, 2);
      case OpForm::kUnary:
        return Elementwise(op, 1);
      case OpForm::kTernary:
        return Elementwise(op, 3);
      case OpForm::kCompare:
        return Compare(op);
      case OpForm::kSelect:
        return Select(op);
      case OpForm::kCast:
        return Cast(op);
      case OpForm::kArrowCast:
        return ArrowCast(op);
      case OpForm::kCustom:
        return Custom(op);
    }
  }

  void Constant(const Operation& op) {
    if (!Counts(op, 0, 0, 1)) return;
    const Attribute* v = op.attr("value");
    const Type* r = R(op);
    if (v == nullptr) return Bad(op, "missing attribute 'value'");
    if (const auto* i = std::get_if<IntAttr>(v)) {
      if (i->type != r || !r->IsInt()) {
        Bad(op, "integer value of type " + TypeText(i->type) +
                    " for a result of type " + TypeText(r));
      }
    } else if (const auto* f = std::get_if<FloatAttr>(v)) {
      if (f->type != r || !r->IsFloat()) {
        Bad(op, "float value of type " + TypeText(f->type) +
                    " for a result of type " + TypeText(r));
      }
    } else if (std::holds_alternative<bool>(*v)) {
      if (!r->IsInt(1))
        Bad(op, "bool value for a result of type " + TypeText(r));
    } else if (const auto* d = std::get_if<DenseAttr>(v)) {
      if (d->type != r || !r->IsTensor()) {
        Bad(op, "dense value of type " + TypeText(d->type) +
                    " for a result of type " + TypeText(r));
      } else if (d->values.size() != 1 &&
                 static_cast<int64_t>(d->values.size()) != r->NumElements()) {
        Bad(op, "dense value has " + std::to_string(d->values.size()) +
                    " elements, " + TypeText(r) + " has " +
                    std::to_string(r->NumElements()));
      } else if (r->element()->IsPointer()) {
        Bad(op, "a constant tensor of pointers");
      }
    } else {
      Bad(op, "'value' must be a number or a dense tensor");
    }
  }

  void Elementwise(const Operation& op, int n) {
    if (!Counts(op, n, n, 1)) return;
    const Type* r = R(op);
    for (int i = 0; i < n; ++i) {
      SameType(op, T(op, i), r, "operand " + std::to_string(i));
    }
    Domain(op, r, "the result");
  }

  void Compare(const Operation& op) {
    if (!Counts(op, 2, 2, 1)) return;
    EnumAttr(op, "predicate");
    SameType(op, T(op, 1), T(op, 0), "operand 1");
    if (Domain(op, T(op, 0), "the operands")) {
      SameType(op, R(op), I1Like(T(op, 0)), "the result");
    }
  }

  void Select(const Operation& op) {
    if (!Counts(op, 3, 3, 1)) return;
    const Type* c = T(op, 0);
    const Type* r = R(op);
    SameType(op, T(op, 1), r, "the true value");
    SameType(op, T(op, 2), r, "the false value");
    if (c != Type::I1() && c != I1Like(r)) {
      Bad(op, "the condition has type " + TypeText(c) + ", expected i1 or " +
                  TypeText(I1Like(r)));
    }
  }

  void Cast(const Operation& op) {
    if (!Counts(op, 1, 1, 1)) return;
    const Type* from = T(op, 0);
    const Type* to = R(op);
    SameShape(op, to, from, "result", "operand");
    const Type* a = from->ScalarType();
    const Type* b = to->ScalarType();
    enum Kind { kInt, kFloat };
    enum Width { kWider, kNarrower, kSame };
    struct Rule {
      Kind from, to;
      Width width;
    };
    Rule rule;
    switch (op.code()) {
      case OpCode::kExtSI:
      case OpCode::kExtUI:
        rule = {kInt, kInt, kWider};
        break;
      case OpCode::kTruncI:
        rule = {kInt, kInt, kNarrower};
        break;
      case OpCode::kSIToFP:
      case OpCode::kUIToFP:
        rule = {kInt, kFloat, kSame};
        break;
      case OpCode::kFPToSI:
      case OpCode::kFPToUI:
        rule = {kFloat, kInt, kSame};
        break;
      case OpCode::kExtF:
        rule = {kFloat, kFloat, kWider};
        break;
      case OpCode::kTruncF:
        rule = {kFloat, kFloat, kNarrower};
        break;
      case OpCode::kBitcast:
        if (a->IsPointer() || b->IsPointer() || a->bits() != b->bits()) {
          Bad(op, "cannot bitcast " + TypeText(from) + " to " + TypeText(to));
        }
        return;
      default:
        return Bad(op, "no rule for this cast (verifier)");
    }
    auto is = [](const Type* t, Kind k) {
      return k == kInt ? t->IsInt() : t->IsFloat();
    };
    bool ok = is(a, rule.from) && is(b, rule.to);
    if (ok && rule.width == kWider) ok = b->bits() > a->bits();
    if (ok && rule.width == kNarrower) ok = b->bits() < a->bits();
    if (!ok) {
      Bad(op, "cannot convert " + TypeText(from) + " to " + TypeText(to));
    }
  }

  void ArrowCast(const Operation& op) {
    if (!Counts(op, 1, 1, 1)) return;
    const Type* from = T(op, 0);
    const Type* to = R(op);
    const std::vector<int64_t> in = ShapeOf(from);
    const std::vector<int64_t> out = ShapeOf(to);
    const bool same_element = from->ScalarType() == to->ScalarType();
    switch (op.code()) {
      case OpCode::kSplat:
        if (!from->IsScalar())
          return Bad(op, "splats a scalar, not " + TypeText(from));
        if (!to->IsTensor() || to->element() != from) {
          Bad(op,
              "a splat of " + TypeText(from) + " cannot be " + TypeText(to));
        }
        return;
      case OpCode::kBroadcast: {
        if (!from->IsTensor() || !to->IsTensor() || !same_element) {
          return Bad(
              op, "cannot broadcast " + TypeText(from) + " to " + TypeText(to));
        }
        bool ok = in.size() == out.size();
        for (size_t k = 0; ok && k < in.size(); ++k) {
          ok = in[k] == out[k] || in[k] == 1;
        }
        if (!ok) {
          Bad(op, "cannot broadcast shape " + ShapeText(in) + " to " +
                      ShapeText(out));
        }
        return;
      }
      case OpCode::kExpandDims: {
        const IntAttr* axis = AttrOf<IntAttr>(op, "axis", "an integer");
        if (axis == nullptr) return;
        if (!from->IsTensor() || !to->IsTensor() || !same_element) {
          return Bad(op,
                     "cannot expand " + TypeText(from) + " to " + TypeText(to));
        }
        if (axis->value < 0 || axis->value > static_cast<int64_t>(in.size())) {
          return Bad(op, "axis " + std::to_string(axis->value) +
                             " is out of range for rank " +
                             std::to_string(in.size()));
        }
        std::vector<int64_t> want = in;
        want.insert(want.begin() + axis->value, 1);
        if (out != want) {
          Bad(op, "shape " + ShapeText(in) + " with a new axis " +
                      std::to_string(axis->value) + " is " + ShapeText(want) +
                      ", not " + ShapeText(out));
        }
        return;
      }
      case OpCode::kReshape:
        if (!from->IsTensor() || !to->IsTensor() || !same_element) {
          return Bad(
              op, "cannot reshape " + TypeText(from) + " to " + TypeText(to));
        }
        if (from->NumElements() != to->NumElements()) {
          Bad(op, "shape " + ShapeText(in) + " has " +
                      std::to_string(from->NumElements()) + " elements, " +
                      ShapeText(out) + " has " +
                      std::to_string(to->NumElements()));
        }
        return;
      case OpCode::kTrans: {
        if (!from->IsTensor() || !to->IsTensor() || !same_element) {
          return Bad(
              op, "cannot transpose " + TypeText(from) + " to " + TypeText(to));
        }
        const ArrayAttr* order = AttrOf<ArrayAttr>(op, "order", "an array");
        if (order == nullptr) return;
        std::vector<int64_t> sorted = order->values;
        std::sort(sorted.begin(), sorted.end());
        bool permutation = sorted.size() == in.size();
        for (size_t k = 0; permutation && k < sorted.size(); ++k) {
          permutation = sorted[k] == static_cast<int64_t>(k);
        }
        if (!permutation) {
          return Bad(op, "order is not a permutation of the " +
                             std::to_string(in.size()) + " dimensions");
        }
        std::vector<int64_t> want;
        for (int64_t d : order->values) want.push_back(in[d]);
        if (out != want) {
          Bad(op, "shape " + ShapeText(in) + " permuted is " + ShapeText(want) +
                      ", not " + ShapeText(out));
        }
        return;
      }
      case OpCode::kIntToPtr:
        SameShape(op, to, from, "result", "operand");
        if (!from->ScalarType()->IsInt(64) || !IsPtrLike(to)) {
          Bad(op, "converts i64 to pointers, not " + TypeText(from) + " to " +
                      TypeText(to));
        }
        return;
      case OpCode::kPtrToInt:
        SameShape(op, to, from, "result", "operand");
        if (!IsPtrLike(from) || !to->ScalarType()->IsInt(64)) {
          Bad(op, "converts pointers to i64, not " + TypeText(from) + " to " +
                      TypeText(to));
        }
        return;
      case OpCode::kBitcastTT: {
        SameShape(op, to, from, "result", "operand");
        const Type* a = from->ScalarType();
        const Type* b = to->ScalarType();
        if (a->IsPointer() != b->IsPointer() ||
            (!a->IsPointer() && a->bits() != b->bits())) {
          Bad(op, "cannot bitcast " + TypeText(from) + " to " + TypeText(to));
        }
        return;
      }
      default:
        return Bad(op, "no rule for this op (verifier)");
    }
  }

  void Custom(const Operation& op) {
    switch (op.code()) {
      case OpCode::kGetProgramId:
      case OpCode::kGetNumPrograms: {
        if (!Counts(op, 0, 0, 1)) return;
        SameType(op, R(op), Type::I32(), "the result");
        const IntAttr* axis = AttrOf<IntAttr>(op, "axis", "an integer");
        if (axis != nullptr && (axis->value < 0 || axis->value > 2)) {
          Bad(op, "axis must be 0, 1 or 2, not " + std::to_string(axis->value));
        }
        return;
      }
      case OpCode::kMakeRange: {
        if (!Counts(op, 0, 0, 1)) return;
        const IntAttr* start = AttrOf<IntAttr>(op, "start", "an integer");
        const IntAttr* end = AttrOf<IntAttr>(op, "end", "an integer");
        const Type* r = R(op);
        if (!r->IsTensor() || r->rank() != 1 || !r->element()->IsInt(32)) {
          return Bad(op, "makes a 1-D tensor of i32, not " + TypeText(r));
        }
        if (start != nullptr && end != nullptr &&
            end->value - start->value != r->shape()[0]) {
          Bad(op, "range [" + std::to_string(start->value) + ", " +
                      std::to_string(end->value) + ") does not have " +
                      std::to_string(r->shape()[0]) + " elements");
        }
        return;
      }
      case OpCode::kCat:
        if (!Counts(op, 2, 2, 1)) return;
        SameType(op, T(op, 1), T(op, 0), "the second operand");
        if (!T(op, 0)->IsTensor() || !R(op)->IsTensor() ||
            R(op)->element() != T(op, 0)->element() ||
            R(op)->rank() != T(op, 0)->rank() ||
            R(op)->NumElements() != 2 * T(op, 0)->NumElements()) {
          Bad(op,
              "two " + TypeText(T(op, 0)) + " cannot make " + TypeText(R(op)));
        }
        return;
      case OpCode::kJoin: {
        if (!Counts(op, 2, 2, 1)) return;
        SameType(op, T(op, 1), T(op, 0), "the second operand");
        if (!T(op, 0)->IsTensor()) {
          return Bad(op, "joins two tensors, not " + TypeText(T(op, 0)) +
                             " (scalars are first expanded to 1 element)");
        }
        std::vector<int64_t> want = ShapeOf(T(op, 0));
        want.push_back(2);
        if (!R(op)->IsTensor() || R(op)->element() != T(op, 0)->ScalarType() ||
            R(op)->shape() != want) {
          Bad(op, "joining two " + TypeText(T(op, 0)) + " gives shape " +
                      ShapeText(want) + ", not " + TypeText(R(op)));
        }
        return;
      }
      case OpCode::kSplit: {
        if (!Counts(op, 1, 1, 2)) return;
        const Type* src = T(op, 0);
        if (src->IsTensor() && src->rank() < 2 && src->shape().back() == 2) {
          return Bad(op,
                     "splits a tensor of rank 2 or more (a tensor of 2 "
                     "is first expanded to 1x2), not " +
                         TypeText(src));
        }
        if (!src->IsTensor() || src->shape().back() != 2) {
          return Bad(op, "splits a tensor whose last dimension is 2, not " +
                             TypeText(src));
        }
        std::vector<int64_t> want = src->shape();
        want.pop_back();
        const Type* half = src->WithShape(want);
        SameType(op, R(op, 0), half, "result 0");
        SameType(op, R(op, 1), half, "result 1");
        return;
      }
      case OpCode::kGather: {
        if (!Counts(op, 2, 2, 1)) return;
        const Type* src = T(op, 0);
        const Type* idx = T(op, 1);
        const IntAttr* axis = AttrOf<IntAttr>(op, "axis", "an integer");
        if (!src->IsTensor() || !idx->IsTensor() || !idx->element()->IsInt() ||
            src->rank() != idx->rank()) {
          return Bad(op,
                     "gathers from a tensor with integer indices of its "
                     "rank, not " +
                         TypeText(src) + " and " + TypeText(idx));
        }
        SameType(op, R(op), idx->WithElement(src->element()), "the result");
        if (axis == nullptr) return;
        if (axis->value < 0 || axis->value >= src->rank()) {
          return Bad(
              op, "axis " + std::to_string(axis->value) + " is out of range");
        }
        for (int d = 0; d < src->rank(); ++d) {
          if (d != axis->value && idx->shape()[d] > src->shape()[d]) {
            Bad(op, "index shape " + ShapeText(idx->shape()) +
                        " is larger than source shape " +
                        ShapeText(src->shape()) + " off the axis");
            break;
          }
        }
        return;
      }
      case OpCode::kHistogram:
        if (!Counts(op, 1, 2, 1)) return;
        if (!T(op, 0)->IsTensor() || T(op, 0)->rank() != 1 ||
            !T(op, 0)->element()->IsInt() || !R(op)->IsTensor() ||
            R(op)->rank() != 1 || !R(op)->element()->IsInt()) {
          Bad(op, "maps a 1-D integer tensor to a 1-D integer tensor, not " +
                      TypeText(T(op, 0)) + " to " + TypeText(R(op)));
        }
        if (op.num_operands() == 2) {
          SameType(op, T(op, 1), I1Like(T(op, 0)), "the mask");
        }
        return;
      case OpCode::kUnsplat:
        if (!Counts(op, 1, 1, 1)) return;
        if (!T(op, 0)->IsTensor() || T(op, 0)->NumElements() != 1) {
          return Bad(
              op, "takes a tensor of one element, not " + TypeText(T(op, 0)));
        }
        SameType(op, R(op), T(op, 0)->element(), "the result");
        return;
      case OpCode::kAddPtr: {
        if (!Counts(op, 2, 2, 1)) return;
        const Type* ptr = T(op, 0);
        const Type* offset = T(op, 1);
        if (!IsPtrLike(ptr))
          return Bad(op, "the pointer has type " + TypeText(ptr));
        if (!offset->ScalarType()->IsInt()) {
          Bad(op, "the offset must be an integer, not " + TypeText(offset));
        }
        SameShape(op, offset, ptr, "offset", "pointer");
        SameType(op, R(op), ptr, "the result");
        return;
      }
      case OpCode::kLoad:
        return Load(op);
      case OpCode::kStore:
        return Store(op);
      case OpCode::kAtomicRMW: {
        if (!Counts(op, 2, 3, 1)) return;
        EnumAttr(op, "atomic_rmw_op");
        EnumAttr(op, "sem");
        EnumAttr(op, "scope");
        const Type* val = T(op, 1);
        if (val->ScalarType()->IsPointer())
          return Bad(op, "the value is a pointer");
        SameType(op, T(op, 0),
                 val->WithElement(Type::Pointer(val->ScalarType())),
                 "the pointer");
        if (op.num_operands() == 3)
          SameType(op, T(op, 2), I1Like(val), "the mask");
        SameType(op, R(op), val, "the result");
        return;
      }
      case OpCode::kAtomicCAS: {
        if (!Counts(op, 3, 3, 1)) return;
        EnumAttr(op, "sem");
        EnumAttr(op, "scope");
        const Type* val = T(op, 2);
        if (val->ScalarType()->IsPointer())
          return Bad(op, "the value is a pointer");
        SameType(op, T(op, 1), val, "the compared value");
        SameType(op, T(op, 0),
                 val->WithElement(Type::Pointer(val->ScalarType())),
                 "the pointer");
        SameType(op, R(op), val, "the result");
        return;
      }
      case OpCode::kMakeTensorPtr: {
        if (!Counts(op, 1, -1, 1)) return;
        const int n = op.num_operands();
        const Type* r = R(op);
        if ((n - 1) % 3 != 0 || !r->IsBlockPointer() ||
            r->pointee()->rank() != (n - 1) / 3) {
          return Bad(op,
                     "needs a base and shape, strides and offsets for "
                     "each dimension of its block, " +
                         std::to_string(n) + " operands for " + TypeText(r));
        }
        const int rank = (n - 1) / 3;
        SameType(op, T(op, 0),
                 Type::Pointer(r->pointee()->element(), r->address_space()),
                 "the base");
        for (int k = 0; k < rank; ++k) {
          SameType(op, T(op, 1 + k), Type::I64(), "shape " + std::to_string(k));
          SameType(op, T(op, 1 + rank + k), Type::I64(),
                   "stride " + std::to_string(k));
          SameType(op, T(op, 1 + 2 * rank + k), Type::I32(),
                   "offset " + std::to_string(k));
        }
        Permutation(op, "order", rank);
        return;
      }
      case OpCode::kAdvance: {
        if (!Counts(op, 1, -1, 1)) return;
        const Type* p = T(op, 0);
        if (!p->IsBlockPointer())
          return Bad(op, "advances a block pointer, not " + TypeText(p));
        if (op.num_operands() - 1 != p->pointee()->rank()) {
          return Bad(op, "needs one offset per dimension of " + TypeText(p));
        }
        for (int k = 1; k < op.num_operands(); ++k) {
          SameType(op, T(op, k), Type::I32(),
                   "offset " + std::to_string(k - 1));
        }
        SameType(op, R(op), p, "the result");
        return;
      }
      case OpCode::kMakeTensorDesc: {
        if (!Counts(op, 1, -1, 1)) return;
        const int n = op.num_operands();
        const Type* r = R(op);
        if ((n - 1) % 2 != 0 || !r->IsTensorDesc() ||
            r->element()->rank() != (n - 1) / 2) {
          return Bad(op,
                     "needs a base and a shape and a stride per "
                     "dimension of its block, " +
                         std::to_string(n) + " operands for " + TypeText(r));
        }
        const int rank = (n - 1) / 2;
        if (!T(op, 0)->IsPointer() ||
            T(op, 0)->pointee() != r->element()->element()) {
          Bad(op, "the base has type " + TypeText(T(op, 0)) +
                      ", expected a "
                      "pointer to " +
                      TypeText(r->element()->element()));
        }
        for (int k = 0; k < rank; ++k) {
          SameType(op, T(op, 1 + k), Type::I32(), "shape " + std::to_string(k));
          SameType(op, T(op, 1 + rank + k), Type::I64(),
                   "stride " + std::to_string(k));
        }
        EnumAttr(op, "padding", true);
        return;
      }
      case OpCode::kDescriptorLoad: {
        if (!Counts(op, 1, -1, 1)) return;
        const Type* d = T(op, 0);
        if (!d->IsTensorDesc())
          return Bad(op,
                     "loads through a tensor descriptor, not " + TypeText(d));
        DescriptorIndices(op, d, 1);
        BlockMatches(op, d, R(op), "the result");
        EnumAttr(op, "cache", true);
        EnumAttr(op, "evict", true);
        return;
      }
      case OpCode::kDescriptorStore:
      case OpCode::kDescriptorReduce: {
        if (!Counts(op, 2, -1, 0)) return;
        const Type* d = T(op, 0);
        if (!d->IsTensorDesc())
          return Bad(op,
                     "stores through a tensor descriptor, not " + TypeText(d));
        DescriptorIndices(op, d, 2);
        BlockMatches(op, d, T(op, 1), "the value");
        if (op.code() == OpCode::kDescriptorReduce) EnumAttr(op, "kind");
        return;
      }
      case OpCode::kDescriptorGather:
      case OpCode::kDescriptorScatter: {
        const bool gather = op.code() == OpCode::kDescriptorGather;
        if (!Counts(op, gather ? 3 : 4, gather ? 3 : 4, gather ? 1 : 0)) return;
        const Type* d = T(op, 0);
        const Type* x = T(op, 1);
        if (!d->IsTensorDesc() || d->element()->rank() != 2) {
          return Bad(op,
                     "needs a descriptor of a 2-D block, not " + TypeText(d));
        }
        if (!x->IsTensor() || x->rank() != 1 || !x->element()->IsInt()) {
          return Bad(
              op, "x offsets must be a 1-D integer tensor, not " + TypeText(x));
        }
        SameType(op, T(op, 2), Type::I32(), "the y offset");
        const Type* rows = Type::Tensor(
            {x->shape()[0], d->element()->shape()[1]}, d->element()->element());
        SameType(op, gather ? R(op) : T(op, 3), rows,
                 gather ? "the result" : "the value");
        return;
      }
      case OpCode::kDot:
        return Dot(op);
      case OpCode::kDotScaled:
        return DotScaled(op);
      case OpCode::kReduce:
      case OpCode::kScan:
        return ReduceOrScan(op);
      case OpCode::kMapElementwise:
        return MapElementwise(op);
      case OpCode::kReduceReturn:
      case OpCode::kScanReturn:
      case OpCode::kMapElementwiseReturn:
      case OpCode::kYield:
      case OpCode::kCondition:
      case OpCode::kReturn:
        return Terminator(op);
      case OpCode::kFpToFp: {
        if (!Counts(op, 1, 1, 1)) return;
        const Type* from = T(op, 0);
        const Type* to = R(op);
        SameShape(op, to, from, "result", "operand");
        if (!from->ScalarType()->IsFloat() || !to->ScalarType()->IsFloat()) {
          return Bad(op, "converts floats, not " + TypeText(from) + " to " +
                             TypeText(to));
        }
        EnumAttr(op, "rounding", true);
        if (to->ScalarType()->bits() < from->ScalarType()->bits() &&
            op.attr("rounding") == nullptr) {
          Bad(op, "narrowing " + TypeText(from) + " to " + TypeText(to) +
                      " needs a rounding mode");
        }
        return;
      }
      case OpCode::kClampF:
        Elementwise(op, 3);
        EnumAttr(op, "propagateNan");
        return;
      case OpCode::kExternElementwise: {
        if (!Counts(op, 0, -1, 1)) return;
        for (int i = 0; i < op.num_operands(); ++i) {
          SameShape(op, T(op, i), R(op), "operand " + std::to_string(i),
                    "result");
        }
        AttrOf<std::string>(op, "libname", "a string");
        AttrOf<std::string>(op, "libpath", "a string");
        AttrOf<std::string>(op, "symbol", "a string");
        AttrOf<bool>(op, "pure", "a bool");
        return;
      }
      case OpCode::kElementwiseInlineAsm: {
        if (!Counts(op, 0, -1, -1)) return;
        if (op.num_results() == 0) Bad(op, "has no results");
        const Type* shape_of = op.num_operands() > 0  ? T(op, 0)
                               : op.num_results() > 0 ? R(op)
                                                      : nullptr;
        for (int i = 0; shape_of && i < op.num_operands(); ++i) {
          SameShape(op, T(op, i), shape_of, "operand " + std::to_string(i),
                    "operand 0");
        }
        for (int i = 0; shape_of && i < op.num_results(); ++i) {
          SameShape(op, R(op, i), shape_of, "result " + std::to_string(i),
                    op.num_operands() > 0 ? "operand 0" : "result 0");
        }
        AttrOf<std::string>(op, "asm_string", "a string");
        AttrOf<std::string>(op, "constraints", "a string");
        AttrOf<bool>(op, "pure", "a bool");
        AttrOf<IntAttr>(op, "packed_element", "an integer");
        return;
      }
      case OpCode::kPrint: {
        if (!Counts(op, 0, -1, 0)) return;
        AttrOf<std::string>(op, "prefix", "a string");
        AttrOf<bool>(op, "hex", "a bool");
        const ArrayAttr* is_signed =
            AttrOf<ArrayAttr>(op, "isSigned", "an array");
        if (is_signed != nullptr &&
            static_cast<int>(is_signed->values.size()) != op.num_operands()) {
          Bad(op, "isSigned has " + std::to_string(is_signed->values.size()) +
                      " entries for " + std::to_string(op.num_operands()) +
                      " operands");
        }
        return;
      }
      case OpCode::kAssert:
        if (!Counts(op, 1, 1, 0)) return;
        if (!T(op, 0)->ScalarType()->IsInt(1)) {
          Bad(op, "the condition must be i1 or a tensor of i1, not " +
                      TypeText(T(op, 0)));
        }
        AttrOf<std::string>(op, "message", "a string");
        return;
      case OpCode::kBarrier:
        Counts(op, 0, 0, 0);
        return;
      case OpCode::kAssume:
        if (!Counts(op, 1, 1, 0)) return;
        SameType(op, T(op, 0), Type::I1(), "the condition");
        return;
      case OpCode::kPoison:
        Counts(op, 0, 0, 1);
        return;
      case OpCode::kCall:
        return Call(op);
      case OpCode::kFor:
        return For(op);
      case OpCode::kIf:
        return If(op);
      case OpCode::kWhile:
        return While(op);
      default:
        return Bad(op, "no rule for this op (verifier)");
    }
  }

  void Permutation(const Operation& op, const char* key, int rank) {
    const ArrayAttr* order = AttrOf<ArrayAttr>(op, key, "an array");
    if (order == nullptr) return;
    std::vector<int64_t> sorted = order->values;
    std::sort(sorted.begin(), sorted.end());
    bool ok = static_cast<int>(sorted.size()) == rank;
    for (int k = 0; ok && k < rank; ++k) ok = sorted[k] == k;
    if (!ok) {
      Bad(op, std::string(key) + " is not a permutation of " +
                  std::to_string(rank) + " dimensions");
    }
  }

  void DescriptorIndices(const Operation& op, const Type* desc, int first) {
    const int n = op.num_operands() - first;
    if (n != desc->element()->rank()) {
      Bad(op, std::to_string(n) + " indices for a block of rank " +
                  std::to_string(desc->element()->rank()));
    }
    for (int k = first; k < op.num_operands(); ++k) {
      SameType(op, T(op, k), Type::I32(), "index " + std::to_string(k - first));
    }
  }

  void BlockMatches(const Operation& op, const Type* desc, const Type* t,
                    const std::string& what) {
    const Type* block = desc->element();
    if (!t->IsTensor() || t->element() != block->element() ||
        t->NumElements() != block->NumElements()) {
      Bad(op, what + " has type " + TypeText(t) + ", the descriptor's block " +
                  TypeText(block));
    }
  }

  void Load(const Operation& op) {
    if (!Counts(op, 1, 3, 1)) return;
    const Type* ptr = T(op, 0);
    const Type* pointee = PointeeOf(ptr);
    if (pointee == nullptr) {
      return Bad(op, "loads through a pointer or a tensor of pointers, not " +
                         TypeText(ptr));
    }
    SameType(op, R(op), pointee, "the result");
    if (op.num_operands() > 1) {
      if (ptr->IsBlockPointer()) {
        return Bad(op, "a block-pointer load takes no mask or other");
      }
      const Type* mask = T(op, 1);
      if (!mask->ScalarType()->IsInt(1)) {
        Bad(op, "the mask must hold i1, not " + TypeText(mask));
      } else {
        SameShape(op, mask, ptr, "mask", "pointer");
      }
    }
    if (op.num_operands() > 2) SameType(op, T(op, 2), pointee, "other");
    EnumAttr(op, "cache", true);
    EnumAttr(op, "evict", true);
    EnumAttr(op, "padding", true);
    AttrOf<bool>(op, "isVolatile", "a bool", true);
    BoundaryCheck(op, ptr);
  }

  void Store(const Operation& op) {
    if (!Counts(op, 2, 3, 0)) return;
    const Type* ptr = T(op, 0);
    const Type* pointee = PointeeOf(ptr);
    if (pointee == nullptr) {
      return Bad(op, "stores through a pointer or a tensor of pointers, not " +
                         TypeText(ptr));
    }
    const Type* value = T(op, 1);
    if (ShapeOf(value) != ShapeOf(pointee)) {
      SameShape(op, value, ptr, "value", "pointer");
    } else {
      SameType(op, value, pointee, "the value");
    }
    if (op.num_operands() > 2) {
      if (ptr->IsBlockPointer()) {
        return Bad(op, "a block-pointer store takes no mask");
      }
      const Type* mask = T(op, 2);
      if (!mask->ScalarType()->IsInt(1)) {
        Bad(op, "the mask must hold i1, not " + TypeText(mask));
      } else {
        SameShape(op, mask, ptr, "mask", "pointer");
      }
    }
    EnumAttr(op, "cache", true);
    EnumAttr(op, "evict", true);
    BoundaryCheck(op, ptr);
  }

  void BoundaryCheck(const Operation& op, const Type* ptr) {
    const ArrayAttr* dims =
        AttrOf<ArrayAttr>(op, "boundaryCheck", "an array", true);
    if (dims == nullptr || dims->values.empty()) return;
    if (!ptr->IsBlockPointer()) {
      return Bad(op, "boundaryCheck needs a block pointer");
    }
    for (int64_t d : dims->values) {
      if (d < 0 || d >= ptr->pointee()->rank()) {
        Bad(op, "boundaryCheck dimension " + std::to_string(d) +
                    " is out of range");
      }
    }
  }

  void Dot(const Operation& op) {
    if (!Counts(op, 3, 3, 1)) return;
    const Type* a = T(op, 0);
    const Type* b = T(op, 1);
    const Type* c = T(op, 2);
    EnumAttr(op, "inputPrecision", true);
    SameType(op, R(op), c, "the result");
    if (!a->IsTensor() || !b->IsTensor() || !c->IsTensor() ||
        a->element()->IsPointer() || b->element()->IsPointer() ||
        c->element()->IsPointer()) {
      return Bad(op, "multiplies tensors of numbers, not " + TypeText(a) +
                         " and " + TypeText(b));
    }
    const int rank = a->rank();
    if ((rank != 2 && rank != 3) || b->rank() != rank || c->rank() != rank) {
      return Bad(op, "operands must all be 2-D (or 3-D, batched), not " +
                         ShapeText(a->shape()) + ", " + ShapeText(b->shape()) +
                         " and " + ShapeText(c->shape()));
    }
    const auto& as = a->shape();
    const auto& bs = b->shape();
    const auto& cs = c->shape();
    const int m = rank - 2;  // the row dimension
    if (as[m + 1] != bs[m]) {
      return Bad(op, "shapes " + ShapeText(as) + " and " + ShapeText(bs) +
                         " do not agree on K");
    }
    if (cs[m] != as[m] || cs[m + 1] != bs[m + 1] ||
        (rank == 3 && (as[0] != bs[0] || cs[0] != as[0]))) {
      Bad(op,
          ShapeText(as) + " * " + ShapeText(bs) + " is not " + ShapeText(cs));
    }
    if (a->element()->IsFloat() != b->element()->IsFloat()) {
      Bad(op, "mixes integer and float operands");
    }
  }

  void DotScaled(const Operation& op) {
    if (!Counts(op, 3, 5, 1)) return;
    const std::vector<int64_t> seg = op.array_attr("operandSegmentSizes");
    if (seg.size() != 5 || seg[0] != 1 || seg[1] != 1 || seg[2] != 1 ||
        seg[3] < 0 || seg[3] > 1 || seg[4] < 0 || seg[4] > 1 ||
        3 + seg[3] + seg[4] != op.num_operands()) {
      return Bad(op,
                 "operandSegmentSizes must say which of a_scale and "
                 "b_scale are present");
    }
    EnumAttr(op, "a_elem_type");
    EnumAttr(op, "b_elem_type");
    SameType(op, R(op), T(op, 2), "the result");
    if (!T(op, 2)->IsTensor() || !T(op, 2)->element()->IsFloat()) {
      Bad(op, "accumulates into floats, not " + TypeText(T(op, 2)));
    }
  }

  // tt.reduce and tt.scan: operands of one shape, a combiner taking two
  // elements of each.
  void ReduceOrScan(const Operation& op) {
    const bool reduce = op.code() == OpCode::kReduce;
    if (!Counts(op, 1, -1, op.num_operands(), 1)) return;
    const int n = op.num_operands();
    const Type* first = T(op, 0);
    if (!first->IsTensor()) return Bad(op, "operand 0 is not a tensor");
    for (int i = 1; i < n; ++i) {
      if (!T(op, i)->IsTensor() || T(op, i)->shape() != first->shape()) {
        return Bad(op, "operand " + std::to_string(i) + " shape " +
                           ShapeText(ShapeOf(T(op, i))) +
                           " does not match operand 0 shape " +
                           ShapeText(first->shape()));
      }
    }
    const IntAttr* axis = AttrOf<IntAttr>(op, "axis", "an integer");
    if (!reduce) AttrOf<bool>(op, "reverse", "a bool", true);
    if (axis == nullptr) return;
    if (axis->value < 0 || axis->value >= first->rank()) {
      return Bad(op, "axis " + std::to_string(axis->value) +
                         " is out of range for rank " +
                         std::to_string(first->rank()));
    }
    std::vector<int64_t> reduced = first->shape();
    reduced.erase(reduced.begin() + axis->value);
    for (int i = 0; i < n; ++i) {
      const Type* want =
          reduce ? T(op, i)->element()->WithShape(reduced) : T(op, i);
      SameType(op, R(op, i), want, "result " + std::to_string(i));
    }
    const Block& body = *op.region(0);
    if (body.num_args() != 2 * n) {
      return Bad(op, "the combiner takes " + std::to_string(body.num_args()) +
                         " arguments, expected " + std::to_string(2 * n));
    }
    for (int i = 0; i < 2 * n; ++i) {
      SameType(op, body.arg(i)->type(), T(op, i % n)->element(),
               "combiner argument " + std::to_string(i));
    }
    const Operation* ret = body.back();
    if (ret != nullptr && ret->code() == TerminatorFor(op, 0)) {
      if (ret->num_operands() != n) {
        return Bad(*ret, "returns " + std::to_string(ret->num_operands()) +
                             " values, the combiner of " + std::to_string(n) +
                             " operands returns " + std::to_string(n));
      }
      for (int i = 0; i < n; ++i) {
        if (ret->operand(i) == nullptr) continue;
        SameType(*ret, ret->operand(i)->type(), T(op, i)->element(),
                 "value " + std::to_string(i));
      }
    }
  }

  void MapElementwise(const Operation& op) {
    if (!Counts(op, 1, -1, -1, 1)) return;
    const IntAttr* pack = AttrOf<IntAttr>(op, "pack", "an integer");
    const Type* first = T(op, 0);
    for (int i = 0; i < op.num_operands(); ++i) {
      if (!T(op, i)->IsTensor()) {
        return Bad(op, "operand " + std::to_string(i) + " is not a tensor");
      }
      SameShape(op, T(op, i), first, "operand " + std::to_string(i),
                "operand 0");
    }
    for (int i = 0; i < op.num_results(); ++i) {
      SameShape(op, R(op, i), first, "result " + std::to_string(i),
                "operand 0");
    }
    if (pack == nullptr) return;
    if (pack->value < 1) return Bad(op, "pack must be at least 1");
    const Block& body = *op.region(0);
    if (body.num_args() != op.num_operands() * pack->value) {
      Bad(op, "the region takes " + std::to_string(body.num_args()) +
                  " arguments, expected " +
                  std::to_string(op.num_operands() * pack->value));
    }
    const Operation* ret = body.back();
    if (ret != nullptr && ret->code() == OpCode::kMapElementwiseReturn &&
        ret->num_operands() != op.num_results() * pack->value) {
      Bad(*ret, "returns " + std::to_string(ret->num_operands()) +
                    " values, expected " +
                    std::to_string(op.num_results() * pack->value));
    }
  }

  void Terminator(const Operation& op) {
    if (!Counts(op, op.code() == OpCode::kCondition ? 1 : 0, -1, 0)) return;
    const Operation* parent = op.parent_op();
    if (op.code() == OpCode::kReturn) {
      if (parent != nullptr || function_ == nullptr) return;
      TypesMatch(op, op.operands(), function_->result_types(), 0,
                 "the function returns");
      return;
    }
    if (parent == nullptr) return;  // placement is reported elsewhere
    const Block* block = op.parent_block();
    if (op.code() == OpCode::kYield) {
      std::vector<const Type*> want;
      if (parent->code() == OpCode::kFor || parent->code() == OpCode::kIf) {
        for (int r = 0; r < parent->num_results(); ++r) {
          want.push_back(parent->result(r)->type());
        }
      } else if (parent->code() == OpCode::kWhile &&
                 parent->num_regions() == 2 && block == parent->region(1)) {
        for (const Value* v : parent->operands()) {
          want.push_back(v ? v->type() : nullptr);
        }
      } else {
        return;
      }
      TypesMatch(op, op.operands(), want, 0,
                 std::string(parent->name()) + " expects");
      return;
    }
    if (op.code() == OpCode::kCondition) {
      if (T(op, 0) != Type::I1()) {
        Bad(op, "the condition must be i1, not " + TypeText(T(op, 0)));
      }
      if (parent->code() != OpCode::kWhile) return;
      std::vector<const Type*> want;
      for (int r = 0; r < parent->num_results(); ++r) {
        want.push_back(parent->result(r)->type());
      }
      TypesMatch(op, op.operands(), want, 1, "scf.while's results are");
    }
  }

  // operands[from...] against `want`.
  void TypesMatch(const Operation& op, const std::vector<Value*>& values,
                  const std::vector<const Type*>& want, size_t from,
                  const std::string& what) {
    const size_t n = values.size() - from;
    if (n != want.size()) {
      return Bad(op, "gives " + std::to_string(n) + " values, " + what + " " +
                         std::to_string(want.size()));
    }
    for (size_t k = 0; k < n; ++k) {
      if (values[from + k] == nullptr) continue;
      const Type* t = values[from + k]->type();
      if (t != want[k]) {
        Bad(op, "value " + std::to_string(k) + " has type " + TypeText(t) +
                    ", " + what + " " + TypeText(want[k]));
      }
    }
  }

  void Call(const Operation& op) {
    if (!Counts(op, 0, -1, -1)) return;
    const std::string* callee = AttrOf<std::string>(op, "callee", "a string");
    if (callee == nullptr) return;
    const ir::Function* f = module_.Find(*callee);
    if (f == nullptr) return Bad(op, "no function @" + *callee);
    std::vector<const Type*> params;
    for (int i = 0; i < f->body()->num_args(); ++i) {
      params.push_back(f->body()->arg(i)->type());
    }
    TypesMatch(op, op.operands(), params, 0, "@" + *callee + " takes");
    std::vector<const Type*> results;
    for (int r = 0; r < op.num_results(); ++r) {
      results.push_back(R(op, r));
    }
    if (results != f->result_types()) {
      Bad(op, "the results do not match what @" + *callee + " returns");
    }
  }

  void For(const Operation& op) {
    if (!Counts(op, 3, -1, op.num_operands() - 3, 1)) return;
    const Type* iv = T(op, 0);
    if (!iv->IsInt())
      return Bad(op, "the bounds must be integers, not " + TypeText(iv));
    SameType(op, T(op, 1), iv, "the upper bound");
    SameType(op, T(op, 2), iv, "the step");
    const Block& body = *op.region(0);
    const int inits = op.num_operands() - 3;
    if (body.num_args() != inits + 1) {
      return Bad(op, "the body takes " + std::to_string(body.num_args()) +
                         " arguments, expected the induction variable and " +
                         std::to_string(inits) + " iteration values");
    }
    SameType(op, body.arg(0)->type(), iv, "the induction variable");
    for (int k = 0; k < inits; ++k) {
      const Type* init = T(op, 3 + k);
      SameType(op, body.arg(k + 1)->type(), init,
               "iteration argument " + std::to_string(k));
      SameType(op, R(op, k), init, "result " + std::to_string(k));
    }
  }

  void If(const Operation& op) {
    if (!Counts(op, 1, 1, -1, 2)) return;
    SameType(op, T(op, 0), Type::I1(), "the condition");
    for (int r = 0; r < 2; ++r) {
      if (op.region(r)->num_args() != 0) {
        Bad(op, "region " + std::to_string(r) + " takes arguments");
      }
    }
    if (op.num_results() > 0 && op.region(1)->empty()) {
      Bad(op, "has results but no else region");
    }
  }

  void While(const Operation& op) {
    if (!Counts(op, 0, -1, -1, 2)) return;
    const Block& before = *op.region(0);
    const Block& after = *op.region(1);
    if (before.num_args() != op.num_operands()) {
      return Bad(op, "the before region takes " +
                         std::to_string(before.num_args()) + " arguments for " +
                         std::to_string(op.num_operands()) + " initial values");
    }
    for (int k = 0; k < op.num_operands(); ++k) {
      SameType(op, before.arg(k)->type(), T(op, k),
               "before argument " + std::to_string(k));
    }
    if (after.num_args() != op.num_results()) {
      return Bad(op, "the after region takes " +
                         std::to_string(after.num_args()) + " arguments for " +
                         std::to_string(op.num_results()) + " results");
    }
    for (int k = 0; k < op.num_results(); ++k) {
      SameType(op, after.arg(k)->type(), R(op, k),
               "after argument " + std::to_string(k));
    }
  }

  const Module& module_;
  std::string_view pass_;
  const ir::Function* function_ = nullptr;
  std::vector<std::unordered_set<const Value*>> visible_;
  std::vector<std::string> errors_;
};

}  // namespace

Status Verify(const Module& module, std::string_view after_pass) {
  return Verifier(module, after_pass).Run();
}

}  // namespace mtlemu::triton::ir
