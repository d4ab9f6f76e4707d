// Statements and structured control flow.
#include "compiler/triton/frontend/codegen.h"

#include <functional>
#include <set>

#include "compiler/triton/frontend/builtins.h"
#include "compiler/triton/frontend/compilation.h"
#include "compiler/triton/frontend/module_scope.h"

namespace mtlemu::triton::frontend {
namespace {

// The names a statement list assigns (at any depth, not in nested defs).
void AssignedNames(const py::Expr* target, std::set<std::string>& out) {
  if (target == nullptr) return;
  if (const auto* n = py::As<py::NameExpr>(target)) {
    out.insert(n->id);
  } else if (const auto* t = py::As<py::TupleExpr>(target)) {
    for (const auto& e : t->elts) AssignedNames(e.get(), out);
  } else if (const auto* l = py::As<py::ListExpr>(target)) {
    for (const auto& e : l->elts) AssignedNames(e.get(), out);
  } else if (const auto* s = py::As<py::StarredExpr>(target)) {
    AssignedNames(s->value.get(), out);
  }
}

void AssignedNames(const py::Body& body, std::set<std::string>& out) {
  for (const py::StmtPtr& sp : body) {
    const py::Stmt* s = sp.get();
    if (const auto* a = py::As<py::AssignStmt>(s)) {
      for (const auto& t : a->targets) AssignedNames(t.get(), out);
    } else if (const auto* a2 = py::As<py::AugAssignStmt>(s)) {
      AssignedNames(a2->target.get(), out);
    } else if (const auto* a3 = py::As<py::AnnAssignStmt>(s)) {
      AssignedNames(a3->target.get(), out);
    } else if (const auto* f = py::As<py::ForStmt>(s)) {
      AssignedNames(f->target.get(), out);
      AssignedNames(f->body, out);
      AssignedNames(f->orelse, out);
    } else if (const auto* w = py::As<py::WhileStmt>(s)) {
      AssignedNames(w->body, out);
      AssignedNames(w->orelse, out);
    } else if (const auto* i = py::As<py::IfStmt>(s)) {
      AssignedNames(i->body, out);
      AssignedNames(i->orelse, out);
    }
  }
}

bool ContainsReturn(const py::Body& body) {
  for (const py::StmtPtr& sp : body) {
    const py::Stmt* s = sp.get();
    if (s->kind == py::StmtKind::kReturn) return true;
    if (const auto* i = py::As<py::IfStmt>(s)) {
      if (ContainsReturn(i->body) || ContainsReturn(i->orelse)) return true;
    } else if (const auto* f = py::As<py::ForStmt>(s)) {
      if (ContainsReturn(f->body)) return true;
    } else if (const auto* w = py::As<py::WhileStmt>(s)) {
      if (ContainsReturn(w->body)) return true;
    }
  }
  return false;
}

// The same value: one IR handle, or equal compile-time values.
bool Same(const PyValue& a, const PyValue& b) {
  if (a.is_tensor() || b.is_tensor()) {
    return a.is_tensor() && b.is_tensor() &&
           a.tensor().handle == b.tensor().handle &&
           a.tensor().dtype == b.tensor().dtype;
  }
  if (a.is(PyValue::Kind::kTuple) && b.is(PyValue::Kind::kTuple)) {
    if (a.items().size() != b.items().size()) return false;
    for (size_t i = 0; i < a.items().size(); ++i) {
      if (!Same(a.items()[i], b.items()[i])) return false;
    }
    return true;
  }
  if (a.is(PyValue::Kind::kTensorDesc) || b.is(PyValue::Kind::kTensorDesc)) {
    return a.is(PyValue::Kind::kTensorDesc) &&
           b.is(PyValue::Kind::kTensorDesc) &&
           a.descriptor().handle == b.descriptor().handle;
  }
  return a.kind() == b.kind() && a.Equals(b);
}

// Numbers become tensors where a value must live in IR (loop-carried,
// yielded); tuples element by element.
PyValue Materialize(Semantic& sem, const PyValue& v) {
  if (v.is_number()) return PyValue::TensorValue(sem.ToTensor(v));
  if (v.is(PyValue::Kind::kTuple)) {
    std::vector<PyValue> items;
    for (const PyValue& i : v.items()) items.push_back(Materialize(sem, i));
    return PyValue::Tuple(std::move(items));
  }
  return v;
}

std::string TypeOf(const PyValue& v) {
  if (v.is_tensor()) return Semantic::TypeText(v.tensor());
  if (v.is(PyValue::Kind::kTuple)) {
    std::string s = "(";
    for (size_t i = 0; i < v.items().size(); ++i) {
      s += (i ? ", " : "") + TypeOf(v.items()[i]);
    }
    return s + ")";
  }
  return v.TypeName() + " " + v.Repr();
}

// The same structure and tensor types.
bool SameType(const PyValue& a, const PyValue& b) {
  if (a.is_tensor() && b.is_tensor()) {
    return a.tensor().dtype == b.tensor().dtype &&
           a.tensor().shape == b.tensor().shape;
  }
  if (a.is(PyValue::Kind::kTuple) && b.is(PyValue::Kind::kTuple)) {
    if (a.items().size() != b.items().size()) return false;
    for (size_t i = 0; i < a.items().size(); ++i) {
      if (!SameType(a.items()[i], b.items()[i])) return false;
    }
    return true;
  }
  if (a.is(PyValue::Kind::kTensorDesc) && b.is(PyValue::Kind::kTensorDesc)) {
    return a.descriptor().handle->type() == b.descriptor().handle->type();
  }
  return a.is_constexpr() && b.is_constexpr() && a.Equals(b);
}

}  // namespace

void FlattenTensors(const PyValue& v, std::vector<Tensor>& out) {
  if (v.is_tensor()) {
    out.push_back(v.tensor());
  } else if (v.is(PyValue::Kind::kTensorDesc)) {
    const TensorDescriptor& d = v.descriptor();
    out.push_back(Tensor{d.handle, DType::Void(), {}});
  } else if (v.is(PyValue::Kind::kTuple)) {
    for (const PyValue& i : v.items()) FlattenTensors(i, out);
  }
}

PyValue RebuildFromTensors(const PyValue& shape_of,
                           const std::vector<Tensor>& tensors, size_t& next) {
  if (shape_of.is_tensor()) {
    Tensor t = tensors[next++];
    return PyValue::TensorValue(t);
  }
  if (shape_of.is(PyValue::Kind::kTensorDesc)) {
    TensorDescriptor d = shape_of.descriptor();
    d.handle = tensors[next++].handle;
    return PyValue::Descriptor(d);
  }
  if (shape_of.is(PyValue::Kind::kTuple)) {
    std::vector<PyValue> items;
    for (const PyValue& i : shape_of.items()) {
      items.push_back(RebuildFromTensors(i, tensors, next));
    }
    return PyValue::Tuple(std::move(items));
  }
  return shape_of;
}

namespace {

// `v` with each of its tensors (and descriptors) replaced by a new IR value
// of the same type that `make` gives: a block argument, an op's result.
PyValue WithNewValues(const PyValue& v,
                      const std::function<ir::Value*(const ir::Type*)>& make) {
  std::vector<Tensor> ts;
  FlattenTensors(v, ts);
  std::vector<Tensor> fresh;
  for (const Tensor& t : ts) {
    fresh.push_back(Tensor{make(t.handle->type()), t.dtype, t.shape});
  }
  size_t next = 0;
  return RebuildFromTensors(v, fresh, next);
}

}  // namespace

CodeGen::CodeGen(Compilation& compilation, ir::Builder* builder)
    : compilation_(compilation), builder_(builder) {
  if (builder_ != nullptr) semantic_ = std::make_unique<Semantic>(*builder_);
}

ir::Builder& CodeGen::builder() {
  if (builder_ == nullptr) {
    Fail(
        "this expression is not a compile-time constant (it needs a "
        "tensor operation)");
  }
  return *builder_;
}

Semantic& CodeGen::semantic() {
  builder();
  return *semantic_;
}

void CodeGen::SetLoc(const SourceLocation& loc, const Frame& frame) {
  const Frame* f = &frame;
  SourceLocation l = loc;
  while (f != nullptr && f->module != nullptr && f->module->library()) {
    l = f->call_loc;
    f = f->caller;
  }
  loc_ = l;
  if (builder_ != nullptr) builder_->set_loc(l);
}

void CodeGen::RunBody(const py::Body& body, Frame& frame) {
  ExecBody(body, 0, frame);
}

CodeGen::Flow CodeGen::ExecBody(const py::Body& body, size_t start,
                                Frame& frame) {
  for (size_t i = start; i < body.size(); ++i) {
    Flow f;
    try {
      f = ExecStmt(body, i, frame);
    } catch (CompileError& e) {
      if (!e.loc.known()) {
        SetLoc(body[i]->loc, frame);
        e.loc = loc_;
      }
      throw;
    }
    if (f != Flow::kNext) return f;
  }
  return Flow::kNext;
}

CodeGen::Flow CodeGen::ExecBranch(const py::Body& inner, const py::Body& body,
                                  size_t index, Frame& frame) {
  frame.rest.push_back({&body, index + 1, &inner});
  Flow f;
  try {
    f = ExecBody(inner, 0, frame);
  } catch (...) {
    frame.rest.pop_back();
    throw;
  }
  frame.rest.pop_back();
  return f;
}

CodeGen::Flow CodeGen::ExecRest(const py::Body& body, size_t start,
                                Frame& frame) {
  Flow f = ExecBody(body, start, frame);
  const std::vector<Frame::Rest> saved = frame.rest;
  while (f == Flow::kNext && !frame.rest.empty()) {
    const Frame::Rest r = frame.rest.back();
    frame.rest.pop_back();
    f = ExecBody(*r.outer, r.next, frame);
  }
  frame.rest = saved;
  return f;
}

void CodeGen::Assign(const py::Expr& target, const PyValue& value,
                     Frame& frame) {
  if (const auto* n = py::As<py::NameExpr>(&target)) {
    // The IR value takes the Python name (%offsets), as Triton's does.
    if (value.is_tensor() && value.tensor().handle->name().empty() &&
        value.tensor().handle->defining_op() != nullptr) {
      value.tensor().handle->set_name(n->id);
    }
    frame.locals[n->id] = value;
    frame.constexpr_names.erase(n->id);
    return;
  }
  const std::vector<py::ExprPtr>* elts = nullptr;
  if (const auto* t = py::As<py::TupleExpr>(&target)) elts = &t->elts;
  if (const auto* l = py::As<py::ListExpr>(&target)) elts = &l->elts;
  if (elts != nullptr) {
    if (!value.is(PyValue::Kind::kTuple)) {
      Fail("cannot unpack non-iterable " + value.TypeName() + " object");
    }
    if (value.items().size() != elts->size()) {
      Fail("expected " + std::to_string(elts->size()) +
           " values to unpack, got " + std::to_string(value.items().size()));
    }
    for (size_t i = 0; i < elts->size(); ++i) {
      Assign(*(*elts)[i], value.items()[i], frame);
    }
    return;
  }
  if (target.kind == py::ExprKind::kSubscript) {
    Fail(
        "Triton tensors are immutable: assignment to an element or a slice "
        "is not supported");
  }
  Fail("unsupported assignment target");
}

CodeGen::Flow CodeGen::ExecStmt(const py::Body& body, size_t index,
                                Frame& frame) {
  const py::Stmt& s = *body[index];
  SetLoc(s.loc, frame);
  switch (s.kind) {
    case py::StmtKind::kExpr: {
      const auto& e = static_cast<const py::ExprStmt&>(s);
      if (e.value->kind == py::ExprKind::kConstant) return Flow::kNext;
      Eval(*e.value, frame);
      return Flow::kNext;
    }
    case py::StmtKind::kAssign: {
      const auto& a = static_cast<const py::AssignStmt&>(s);
      PyValue v = Eval(*a.value, frame);
      for (const py::ExprPtr& t : a.targets) Assign(*t, v, frame);
      return Flow::kNext;
    }
    case py::StmtKind::kAugAssign: {
      const auto& a = static_cast<const py::AugAssignStmt&>(s);
      if (a.target->kind != py::ExprKind::kName) {
        Fail(
            "augmented assignment is only supported on names in Triton "
            "kernels");
      }
      PyValue current = Eval(*a.target, frame);
      PyValue rhs = Eval(*a.value, frame);
      SetLoc(s.loc, frame);
      Assign(*a.target, BinaryOp(a.op, current, rhs), frame);
      return Flow::kNext;
    }
    case py::StmtKind::kAnnAssign: {
      const auto& a = static_cast<const py::AnnAssignStmt&>(s);
      if (!a.value) return Flow::kNext;
      PyValue v = Eval(*a.value, frame);
      const py::Expr* ann = a.annotation.get();
      const auto* attr = py::As<py::AttributeExpr>(ann);
      const auto* name = py::As<py::NameExpr>(ann);
      const bool constexpr_annotation = (attr && attr->attr == "constexpr") ||
                                        (name && name->id == "constexpr");
      if (constexpr_annotation && !v.is_constexpr()) {
        Fail(
            "a variable annotated tl.constexpr must be given a compile-time "
            "value");
      }
      Assign(*a.target, v, frame);
      if (const auto* n = py::As<py::NameExpr>(a.target.get());
          n != nullptr && constexpr_annotation) {
        frame.constexpr_names.insert(n->id);
      }
      return Flow::kNext;
    }
    case py::StmtKind::kReturn: {
      const auto& r = static_cast<const py::ReturnStmt&>(s);
      if (frame.loop_depth > 0) {
        Fail(
            "Cannot have `return` statements inside `while` or `for` "
            "statements in triton.");
      }
      frame.returned = r.value ? Eval(*r.value, frame) : PyValue::None();
      return Flow::kReturn;
    }
    case py::StmtKind::kIf:
      return ExecIf(static_cast<const py::IfStmt&>(s), body, index, frame);
    case py::StmtKind::kFor:
      return ExecFor(static_cast<const py::ForStmt&>(s), frame);
    case py::StmtKind::kWhile:
      return ExecWhile(static_cast<const py::WhileStmt&>(s), frame);
    case py::StmtKind::kPass:
      return Flow::kNext;
    case py::StmtKind::kBreak:
      return Flow::kBreak;
    case py::StmtKind::kContinue:
      return Flow::kContinue;
    case py::StmtKind::kAssert: {
      const auto& a = static_cast<const py::AssertStmt&>(s);
      PyValue cond = Eval(*a.test, frame);
      PyValue msg = a.msg ? Eval(*a.msg, frame) : PyValue::String("");
      SetLoc(s.loc, frame);
      if (cond.is_constexpr()) {
        if (!cond.Truthy()) {
          Fail("AssertionError" +
               (msg.is(PyValue::Kind::kString) && !msg.as_string().empty()
                    ? ": " + msg.as_string()
                    : std::string()));
        }
        return Flow::kNext;
      }
      CallBuiltin(BuiltinId::kDeviceAssert, *this, frame, s.loc, {cond, msg},
                  {});
      return Flow::kNext;
    }
    case py::StmtKind::kFunctionDef:
      Fail("nested function definitions are not supported in Triton kernels");
    case py::StmtKind::kClassDef:
      Fail("unsupported AST node type: ClassDef");
    case py::StmtKind::kWith:
      Fail("unsupported AST node type: With");
    case py::StmtKind::kRaise:
      Fail("unsupported AST node type: Raise");
    case py::StmtKind::kTry:
      Fail("unsupported AST node type: Try");
    case py::StmtKind::kImport:
    case py::StmtKind::kImportFrom:
      Fail("imports inside a Triton kernel are not supported");
    case py::StmtKind::kGlobal:
      Fail("unsupported AST node type: Global");
    case py::StmtKind::kNonlocal:
      Fail("unsupported AST node type: Nonlocal");
    case py::StmtKind::kDelete:
      Fail("unsupported AST node type: Delete");
    case py::StmtKind::kUnparsed:
      Fail(static_cast<const py::UnparsedStmt&>(s).error);
  }
  Fail("unsupported statement");
}

// --- if
// ------------------------------------------------------------------------------

CodeGen::Flow CodeGen::ExecIf(const py::IfStmt& s, const py::Body& body,
                              size_t index, Frame& frame) {
  PyValue cond = Eval(*s.test, frame);
  if (cond.is_constexpr()) {
    return ExecBranch(cond.Truthy() ? s.body : s.orelse, body, index, frame);
  }
  SetLoc(s.loc, frame);
  if (cond.is_tensor() && cond.tensor().is_block() &&
      cond.tensor().numel() == 1) {
    // Triton's `if` on a one-element tensor: its element (`.item()`).
    std::optional<PyValue> item =
        compilation_.LookupGlobal(compilation_.prelude(), "_item", s.loc);
    cond = CallJit(item->function(), {cond}, {}, s.loc, &frame);
    SetLoc(s.loc, frame);
  }
  Tensor c = Condition(cond);
  ir::Builder& b = builder();
  const bool returns = ContainsReturn(s.body) || ContainsReturn(s.orelse);

  if (returns) {
    // A branch that returns: the statements after the `if` belong to the
    // branches that fall through to them, and the function ends here.
    if (frame.loop_depth > 0) {
      Fail(
          "Cannot have `return` statements inside `while` or `for` "
          "statements in triton.");
    }
    // The bodies around this one must be branches of `if`s (constant or
    // not), each with its rest; a static loop's body has none.
    const py::Body* outer = &frame.def->body;
    for (const Frame::Rest& r : frame.rest) {
      if (r.outer != outer) break;
      outer = r.inner;
    }
    if (outer != &body) {
      Fail(
          "a `return` inside an `if` with a non-constant condition is only "
          "supported outside loops (tl.static_range included)");
    }
    ir::Operation* op = b.Create(ir::OpCode::kIf, {c.handle}, {});
    ir::Block* regions[2] = {op->add_region(), op->add_region()};
    const py::Body* branches[2] = {&s.body, &s.orelse};
    PyValue returned[2], merged[2];
    ir::Block* saved = b.block();
    const std::map<std::string, PyValue> before = frame.locals;
    for (int i = 0; i < 2; ++i) {
      b.set_block(regions[i]);
      frame.locals = before;
      frame.returned.reset();
      Flow f = ExecBranch(*branches[i], body, index, frame);
      if (f == Flow::kNext) f = ExecRest(body, index + 1, frame);
      if (f == Flow::kBreak || f == Flow::kContinue) {
        Fail(
            "break/continue inside an `if` with a non-constant condition "
            "is not supported");
      }
      returned[i] = frame.returned.value_or(PyValue::None());
      // A number becomes a tensor in the region that returns it (unused
      // when both branches return the same constant).
      merged[i] = Materialize(semantic(), returned[i]);
    }
    if (Same(returned[0], returned[1]) && returned[0].is_constexpr()) {
      merged[0] = merged[1] = returned[0];
    }
    if (!SameType(merged[0], merged[1]) &&
        !(merged[0].is_constexpr() && merged[1].is_constexpr() &&
          merged[0].Equals(merged[1]))) {
      Fail("Return type mismatch: " + TypeOf(merged[0]) + " and " +
           TypeOf(merged[1]) +
           " (the branches of an `if` return values of different types)");
    }
    std::vector<Tensor> ts[2];
    for (int i = 0; i < 2; ++i) {
      b.set_block(regions[i]);
      FlattenTensors(merged[i], ts[i]);
      std::vector<ir::Value*> handles;
      for (const Tensor& t : ts[i]) handles.push_back(t.handle);
      b.Create(ir::OpCode::kYield, handles, {});
    }
    b.set_block(saved);
    std::vector<Tensor> results;
    for (const Tensor& t : ts[0]) {
      results.push_back(
          Tensor{op->add_result(t.handle->type()), t.dtype, t.shape});
    }
    size_t next = 0;
    frame.returned = RebuildFromTensors(merged[0], results, next);
    frame.locals = before;
    return Flow::kReturn;
  }

  ir::Operation* op = b.Create(ir::OpCode::kIf, {c.handle}, {});
  ir::Block* regions[2] = {op->add_region(), op->add_region()};
  const py::Body* branches[2] = {&s.body, &s.orelse};
  std::map<std::string, PyValue> after[2];
  ir::Block* saved = b.block();
  const std::map<std::string, PyValue> before = frame.locals;
  for (int i = 0; i < 2; ++i) {
    b.set_block(regions[i]);
    frame.locals = before;
    Flow f = ExecBody(*branches[i], 0, frame);
    if (f != Flow::kNext) {
      Fail(
          "break/continue inside an `if` with a non-constant condition is "
          "not supported");
    }
    after[i] = frame.locals;
  }
  // The names to yield: changed in a branch, or new in both.
  std::vector<std::string> names;
  std::set<std::string> all;
  for (auto& a : after) {
    for (auto& [k, v] : a) all.insert(k);
  }
  for (const std::string& k : all) {
    const bool in0 = after[0].count(k), in1 = after[1].count(k);
    auto old = before.find(k);
    if (old == before.end()) {
      if (in0 && in1) names.push_back(k);
      continue;
    }
    const PyValue& v0 = in0 ? after[0].at(k) : old->second;
    const PyValue& v1 = in1 ? after[1].at(k) : old->second;
    if (!Same(v0, old->second) || !Same(v1, old->second)) names.push_back(k);
  }
  std::map<std::string, PyValue> result_locals = before;
  std::vector<std::pair<std::string, PyValue>> yielded;  // name, shape
  std::vector<ir::Value*> handles[2];
  for (const std::string& k : names) {
    PyValue v[2];
    for (int i = 0; i < 2; ++i) {
      v[i] = after[i].count(k) ? after[i].at(k) : before.at(k);
    }
    if (v[0].is_constexpr() && v[1].is_constexpr() && Same(v[0], v[1])) {
      result_locals[k] = v[0];
      continue;
    }
    for (int i = 0; i < 2; ++i) {
      b.set_block(regions[i]);
      v[i] = Materialize(semantic(), v[i]);
    }
    if (!SameType(v[0], v[1])) {
      Fail("Mismatched type for " + k + " between then block (" + TypeOf(v[0]) +
           ") and else block (" + TypeOf(v[1]) + ")");
    }
    for (int i = 0; i < 2; ++i) {
      std::vector<Tensor> ts;
      FlattenTensors(v[i], ts);
      for (const Tensor& t : ts) handles[i].push_back(t.handle);
    }
    yielded.emplace_back(k, v[0]);
  }
  SetLoc(s.loc, frame);
  for (int i = 0; i < 2; ++i) {
    b.set_block(regions[i]);
    b.Create(ir::OpCode::kYield, handles[i], {});
  }
  b.set_block(saved);
  for (auto& [k, shape] : yielded) {
    std::vector<Tensor> ts;
    FlattenTensors(shape, ts);
    std::vector<Tensor> results;
    for (const Tensor& t : ts) {
      results.push_back(
          Tensor{op->add_result(t.handle->type()), t.dtype, t.shape});
    }
    size_t next = 0;
    result_locals[k] = RebuildFromTensors(shape, results, next);
  }
  frame.locals = std::move(result_locals);
  return Flow::kNext;
}

// --- for
// -----------------------------------------------------------------------------

CodeGen::Flow CodeGen::ExecFor(const py::ForStmt& s, Frame& frame) {
  PyValue iter = Eval(*s.iter, frame);
  SetLoc(s.loc, frame);
  if (iter.is(PyValue::Kind::kTuple))
    return ExecStaticLoop(s, iter.items(), frame);
  if (!iter.is(PyValue::Kind::kRange)) {
    Fail(
        "a Triton `for` loop iterates over range(), tl.range(), "
        "tl.static_range() or a tuple, not " +
        iter.TypeName());
  }
  if (iter.range_is_static()) {
    const __int128 lb = ConstInt(iter.items()[0], "tl.static_range's start");
    const __int128 ub = ConstInt(iter.items()[1], "tl.static_range's end");
    const __int128 step = ConstInt(iter.items()[2], "tl.static_range's step");
    if (step == 0) Fail("tl.static_range's step must not be zero");
    std::vector<PyValue> items;
    for (__int128 i = lb; step > 0 ? i < ub : i > ub; i += step) {
      items.push_back(PyValue::Int(i));
      if (items.size() > 100000)
        Fail("tl.static_range unrolls too many iterations");
    }
    return ExecStaticLoop(s, items, frame);
  }
  if (!s.orelse.empty())
    Fail("`for ... else` is not supported in Triton kernels");
  ExecDynamicFor(s, iter, frame);
  return Flow::kNext;
}

CodeGen::Flow CodeGen::ExecStaticLoop(const py::ForStmt& s,
                                      const std::vector<PyValue>& items,
                                      Frame& frame) {
  for (const PyValue& item : items) {
    Assign(*s.target, item, frame);
    Flow f = ExecBody(s.body, 0, frame);
    if (f == Flow::kBreak) return Flow::kNext;
    if (f == Flow::kReturn) return f;
  }
  return ExecBody(s.orelse, 0, frame);
}

void CodeGen::ExecDynamicFor(const py::ForStmt& s, const PyValue& range,
                             Frame& frame) {
  ir::Builder& b = builder();
  Semantic& sem = semantic();
  PyValue lbv = range.items()[0], ubv = range.items()[1],
          stepv = range.items()[2];
  bool negative_step = false;
  if (stepv.is_constexpr()) {
    const __int128 st = ConstInt(stepv, "the loop step");
    if (st == 0) Fail("the loop step must not be zero");
    if (st < 0) {
      negative_step = true;
      stepv = PyValue::Int(-st);
      std::swap(lbv, ubv);
    }
  }
  Tensor lb = sem.ToTensor(lbv), ub = sem.ToTensor(ubv),
         step = sem.ToTensor(stepv);
  for (const Tensor* t : {&lb, &ub, &step}) {
    if (t->is_block() || !t->dtype->is_int()) {
      Fail("loop bounds must be integer scalars, got " +
           Semantic::TypeText(*t));
    }
  }
  const DType* iv_type = Semantic::IntegerPromote(
      Semantic::IntegerPromote(lb.dtype, ub.dtype), step.dtype);
  if (iv_type->is_bool()) iv_type = DType::I32();
  lb = sem.Cast(lb, iv_type);
  ub = sem.Cast(ub, iv_type);
  step = sem.Cast(step, iv_type);

  const auto* target = py::As<py::NameExpr>(s.target.get());
  if (target == nullptr)
    Fail("the target of a `for` over a range must be a name");

  std::set<std::string> assigned;
  AssignedNames(s.body, assigned);
  const std::map<std::string, PyValue> before = frame.locals;
  std::map<std::string, PyValue> init;  // the loop-carried values
  for (const std::string& n : assigned) {
    if (n == target->id) continue;
    auto it = before.find(n);
    if (it != before.end()) init[n] = it->second;
  }

  // Runs the body on a block whose arguments stand for the iteration
  // values; returns the values at the end of the body.
  auto run_body = [&](ir::Block* block,
                      const std::map<std::string, PyValue>& carried,
                      std::map<std::string, PyValue>& end_values) {
    ir::Value* iv_arg = block->add_arg(iv_type->ToIr(), target->id);
    frame.locals = before;
    for (auto& [n, v] : carried) {
      frame.locals[n] = WithNewValues(
          v, [&](const ir::Type* t) { return block->add_arg(t, n); });
    }
    ir::Block* saved = b.block();
    b.set_block(block);
    Tensor iv{iv_arg, iv_type, {}};
    if (negative_step) {
      // range(hi, lo, -s) runs lo..hi upward: the value is ub - iv + lb.
      iv = sem.Binary(frontend::BinaryOp::kAdd,
                      PyValue::TensorValue(sem.Binary(
                          frontend::BinaryOp::kSub, PyValue::TensorValue(ub),
                          PyValue::TensorValue(iv))),
                      PyValue::TensorValue(lb));
    }
    frame.locals[target->id] = PyValue::TensorValue(iv);
    ++frame.loop_depth;
    Flow f = ExecBody(s.body, 0, frame);
    --frame.loop_depth;
    if (f == Flow::kBreak || f == Flow::kContinue) {
      Fail(
          "break and continue are not supported in a loop with a "
          "non-constant range (use tl.static_range for an unrolled loop)");
    }
    end_values = frame.locals;
    b.set_block(saved);
  };

  // Which variables the loop carries: run the body on scratch blocks until
  // the set is stable (a number that the body changes becomes a tensor).
  std::map<std::string, PyValue> carried;
  for (auto& [n, v] : init) carried[n] = v;
  std::map<std::string, PyValue> end;
  for (int attempt = 0;; ++attempt) {
    std::map<std::string, PyValue> materialized;
    for (auto& [n, v] : carried) {
      if (v.is_constexpr()) continue;
      materialized[n] = v;
    }
    ir::Block scratch;
    run_body(&scratch, materialized, end);
    // The scratch block's ops and arguments are gone after this scope; only
    // the names' compile-time values and types are compared.
    bool changed = false;
    std::map<std::string, PyValue> next;
    for (auto& [n, v] : carried) {
      auto it = end.find(n);
      if (it == end.end()) continue;
      const PyValue& start = materialized.count(n) ? materialized[n] : v;
      // A block argument stands for the value: it changed when the body
      // yields something other than the argument itself.
      bool same;
      if (v.is_constexpr()) {
        same = it->second.is_constexpr() && it->second.Equals(v);
      } else {
        std::vector<Tensor> a;
        FlattenTensors(it->second, a);
        same = true;
        for (const Tensor& t : a) {
          same &= t.handle->owner_block() == &scratch;
        }
        same &= !a.empty();
        (void)start;
      }
      if (same) continue;
      if (v.is_constexpr()) {
        if (!v.is_number() && !v.is(PyValue::Kind::kTuple)) {
          Fail("loop-carried variable '" + n + "' changes a compile-time " +
               v.TypeName() + " value in a loop");
        }
        PyValue m = Materialize(sem, v);
        next[n] = m;
        changed = true;
      } else {
        next[n] = v;
      }
    }
    // Tensors unchanged by the body are not carried.
    if (!changed) {
      carried = next;
      break;
    }
    carried = next;
    if (attempt > 4) Fail("cannot determine the loop-carried variables");
  }

  // The loop.
  SetLoc(s.loc, frame);
  std::vector<ir::Value*> operands = {lb.handle, ub.handle, step.handle};
  for (auto& [n, v] : carried) {
    std::vector<Tensor> ts;
    FlattenTensors(v, ts);
    for (const Tensor& t : ts) operands.push_back(t.handle);
  }
  ir::Operation* op = b.Create(ir::OpCode::kFor, operands, {});
  ir::Block* body = op->add_region();
  run_body(body, carried, end);
  std::vector<ir::Value*> yields;
  for (auto& [n, v] : carried) {
    PyValue e = end.at(n);
    if (e.is_constexpr()) {
      ir::Block* saved = b.block();
      b.set_block(body);
      e = Materialize(sem, e);
      b.set_block(saved);
    }
    if (!SameType(e, v)) {
      Fail("Loop-carried variable " + n + " has initial type " + TypeOf(v) +
           " but is re-assigned to " + TypeOf(e) +
           " in loop! Please make sure that the type stays consistent.");
    }
    std::vector<Tensor> ts;
    FlattenTensors(e, ts);
    for (const Tensor& t : ts) yields.push_back(t.handle);
  }
  {
    ir::Block* saved = b.block();
    b.set_block(body);
    SetLoc(s.loc, frame);
    b.Create(ir::OpCode::kYield, yields, {});
    b.set_block(saved);
  }
  frame.locals = before;
  for (auto& [n, v] : carried) {
    frame.locals[n] =
        WithNewValues(v, [&](const ir::Type* t) { return op->add_result(t); });
  }
}

// --- while
// ---------------------------------------------------------------------------

CodeGen::Flow CodeGen::ExecWhile(const py::WhileStmt& s, Frame& frame) {
  if (!s.orelse.empty())
    Fail("`while ... else` is not supported in Triton kernels");
  ir::Builder& b = builder();
  Semantic& sem = semantic();
  std::set<std::string> assigned;
  AssignedNames(s.body, assigned);
  const std::map<std::string, PyValue> before = frame.locals;
  std::map<std::string, PyValue> carried;
  for (const std::string& n : assigned) {
    auto it = before.find(n);
    if (it == before.end()) continue;
    carried[n] = it->second;
  }
  // Numbers the body changes are carried as tensors; find them first.
  auto bind_args = [&](ir::Block* block,
                       const std::map<std::string, PyValue>& vals) {
    frame.locals = before;
    for (auto& [n, v] : vals) {
      frame.locals[n] = WithNewValues(
          v, [&](const ir::Type* t) { return block->add_arg(t, n); });
    }
  };
  for (int attempt = 0;; ++attempt) {
    std::map<std::string, PyValue> tensors;
    for (auto& [n, v] : carried) {
      if (!v.is_constexpr()) tensors[n] = v;
    }
    ir::Block scratch;
    bind_args(&scratch, tensors);
    ir::Block* saved = b.block();
    b.set_block(&scratch);
    ++frame.loop_depth;
    Flow f = ExecBody(s.body, 0, frame);
    --frame.loop_depth;
    b.set_block(saved);
    if (f != Flow::kNext) {
      Fail("break, continue and return are not supported in a `while` loop");
    }
    bool changed = false;
    std::map<std::string, PyValue> next;
    for (auto& [n, v] : carried) {
      const PyValue& e = frame.locals.at(n);
      if (v.is_constexpr()) {
        if (e.is_constexpr() && e.Equals(v)) continue;
        next[n] = Materialize(sem, v);
        changed = true;
      } else {
        std::vector<Tensor> a;
        FlattenTensors(e, a);
        bool same = !a.empty();
        for (const Tensor& t : a) same &= t.handle->owner_block() == &scratch;
        if (!same) next[n] = v;
      }
    }
    frame.locals = before;
    carried = next;
    if (!changed) break;
    if (attempt > 4) Fail("cannot determine the loop-carried variables");
  }

  SetLoc(s.loc, frame);
  std::vector<ir::Value*> operands;
  for (auto& [n, v] : carried) {
    std::vector<Tensor> ts;
    FlattenTensors(v, ts);
    for (const Tensor& t : ts) operands.push_back(t.handle);
  }
  ir::Operation* op = b.Create(ir::OpCode::kWhile, operands, {});
  ir::Block* before_region = op->add_region();
  ir::Block* after_region = op->add_region();
  ir::Block* saved = b.block();
  // before: the condition.
  bind_args(before_region, carried);
  b.set_block(before_region);
  PyValue cond = Eval(*s.test, frame);
  SetLoc(s.test->loc, frame);
  Tensor c = Condition(cond);
  std::vector<ir::Value*> pass = {c.handle};
  for (const auto& a : before_region->args()) pass.push_back(a.get());
  b.Create(ir::OpCode::kCondition, pass, {});
  // after: the body.
  bind_args(after_region, carried);
  b.set_block(after_region);
  ++frame.loop_depth;
  ExecBody(s.body, 0, frame);
  --frame.loop_depth;
  std::vector<ir::Value*> yields;
  for (auto& [n, v] : carried) {
    PyValue e = Materialize(sem, frame.locals.at(n));
    if (!SameType(e, v)) {
      Fail("Loop-carried variable " + n + " has initial type " + TypeOf(v) +
           " but is re-assigned to " + TypeOf(e) +
           " in loop! Please make sure that the type stays consistent.");
    }
    std::vector<Tensor> ts;
    FlattenTensors(e, ts);
    for (const Tensor& t : ts) yields.push_back(t.handle);
  }
  SetLoc(s.loc, frame);
  b.Create(ir::OpCode::kYield, yields, {});
  b.set_block(saved);
  frame.locals = before;
  for (auto& [n, v] : carried) {
    frame.locals[n] =
        WithNewValues(v, [&](const ir::Type* t) { return op->add_result(t); });
  }
  return Flow::kNext;
}

}  // namespace mtlemu::triton::frontend
