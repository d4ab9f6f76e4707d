// The code generator: runs a @triton.jit function's Python body the way
// Triton's CodeGenerator (python/triton/compiler/code_generator.py) does,
// folding compile-time values and building block IR for tensors.
//
// - Compile-time values (constexpr) follow Python's rules; tensors follow
//   Triton's (semantic.h). Jit functions called from a kernel are inlined,
//   with their constexpr arguments specialized.
// - `if` on a constexpr runs one branch; on a tensor it becomes scf.if,
//   yielding the variables either branch assigns. A branch that returns
//   makes the rest of the function the other branch.
// - `for` over range/tl.range becomes scf.for, over tl.static_range (or a
//   tuple) it is unrolled; `while` becomes scf.while. The variables a loop
//   carries are found by running its body once on a scratch block.
// - Locations: each op gets the location of the Python expression that
//   made it; inside the library prelude, the location of the user's call.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/triton/frontend/compile_error.h"
#include "compiler/triton/frontend/py_value.h"
#include "compiler/triton/frontend/semantic.h"
#include "compiler/triton/ir/ir.h"
#include "compiler/triton/python/ast.h"

namespace mtlemu::triton::frontend {

class Compilation;

// One activation of a Python function (or the module level): its local
// names and where it was called from.
struct Frame {
  std::map<std::string, PyValue> locals;
  const ModuleScope* module = nullptr;
  const py::FunctionDefStmt* def = nullptr;  // null at module level
  Frame* caller = nullptr;
  SourceLocation call_loc;  // the caller's call expression
  std::optional<PyValue> returned;
  int loop_depth = 0;  // dynamic loops around the current statement
  // Names bound to a tl.constexpr (constexpr parameters, `x: tl.constexpr
  // = ...`): their `.type` is constexpr_type(value), where a number bound
  // by a plain assignment is a tensor of its dtype, as in Triton.
  std::set<std::string> constexpr_names;
  // What runs after the body being executed, innermost last: `inner` is
  // a branch of an `if` that is statement `next - 1` of `outer`. A branch
  // that returns under a non-constant condition runs these itself (the
  // statements after it become part of the branches that fall through).
  struct Rest {
    const py::Body* outer;
    size_t next;
    const py::Body* inner;
  };
  std::vector<Rest> rest;
};

class CodeGen {
 public:
  // `builder` may be null: then only compile-time values can be computed
  // (module-level constants, constexpr_function bodies, defaults); an
  // expression that needs IR is an error saying the value is not constant.
  CodeGen(Compilation& compilation, ir::Builder* builder);

  Compilation& compilation() { return compilation_; }
  bool has_builder() const { return builder_ != nullptr; }
  ir::Builder& builder();
  Semantic& semantic();

  // Evaluates `expr` in `frame`.
  PyValue Eval(const py::Expr& expr, Frame& frame);
  // `v.n` (getattr(v, n) with a constant name): modules, tensors, dtypes,
  // enums; an error naming the type when `v` has no such attribute.
  PyValue Attribute(PyValue v, const std::string& n, const SourceLocation& loc);
  // Calls a function value (jit function, builtin, lambda) with arguments.
  PyValue Call(const PyValue& callee, std::vector<PyValue> args,
               std::vector<std::pair<std::string, PyValue>> kwargs,
               const SourceLocation& loc, Frame& frame);
  // Inlines jit function `f` with its parameters bound; returns what it
  // returns (None when it returns nothing).
  PyValue CallJit(const FunctionRef& f, std::vector<PyValue> args,
                  std::vector<std::pair<std::string, PyValue>> kwargs,
                  const SourceLocation& loc, Frame* caller);
  // Runs a function body in an already-bound frame (the kernel's).
  void RunBody(const py::Body& body, Frame& frame);

  // Generates the combiner region of tt.reduce / tt.scan: `fn` called on
  // the region's arguments (one value per operand, twice), results yielded
  // with `terminator`.
  void BuildCombiner(ir::Operation* op, const PyValue& fn,
                     const std::vector<const DType*>& dtypes,
                     ir::OpCode terminator, const SourceLocation& loc,
                     Frame& frame);

  // The source location ops get now (the innermost user location).
  const SourceLocation& current_loc() const { return loc_; }
  void SetLoc(const SourceLocation& loc, const Frame& frame);

  // A compile-time value, or an error naming `what` ("the axis").
  static __int128 ConstInt(const PyValue& v, const std::string& what);
  // Whether a parameter annotation says tl.constexpr.
  static bool IsConstexprAnnotation(const py::Expr* annotation);

 private:
  enum class Flow { kNext, kReturn, kBreak, kContinue };

  Flow ExecBody(const py::Body& body, size_t start, Frame& frame);
  Flow ExecStmt(const py::Body& body, size_t index, Frame& frame);
  void Assign(const py::Expr& target, const PyValue& value, Frame& frame);
  Flow ExecIf(const py::IfStmt& s, const py::Body& body, size_t index,
              Frame& frame);
  // Runs `inner`, a branch of statement `index` of `body`, with what
  // follows that statement as its rest.
  Flow ExecBranch(const py::Body& inner, const py::Body& body, size_t index,
                  Frame& frame);
  // Runs `body` from `start`, then the frame's rest, outermost last.
  Flow ExecRest(const py::Body& body, size_t start, Frame& frame);
  Flow ExecFor(const py::ForStmt& s, Frame& frame);
  Flow ExecWhile(const py::WhileStmt& s, Frame& frame);
  Flow ExecStaticLoop(const py::ForStmt& s, const std::vector<PyValue>& items,
                      Frame& frame);
  void ExecDynamicFor(const py::ForStmt& s, const PyValue& range, Frame& frame);

  PyValue EvalBinOp(const py::BinOpExpr& e, Frame& frame);
  PyValue EvalUnary(const py::UnaryOpExpr& e, Frame& frame);
  PyValue EvalCompare(const py::CompareExpr& e, Frame& frame);
  PyValue EvalBoolOp(const py::BoolOpExpr& e, Frame& frame);
  PyValue EvalIfExp(const py::IfExpExpr& e, Frame& frame);
  PyValue EvalCall(const py::CallExpr& e, Frame& frame);
  PyValue EvalAttribute(const py::AttributeExpr& e, Frame& frame);

  PyValue EvalSubscript(const py::SubscriptExpr& e, Frame& frame);
  PyValue EvalName(const py::NameExpr& e, Frame& frame);
  PyValue CallLambda(const PyValue& lambda, std::vector<PyValue> args,
                     std::vector<std::pair<std::string, PyValue>> kwargs,
                     const SourceLocation& loc, Frame& frame);

 public:
  // Python arithmetic on two compile-time values (ints, floats, bools,
  // strings, tuples), or nullopt when either is not compile-time.
  static std::optional<PyValue> FoldBinary(py::BinOpKind op, const PyValue& a,
                                           const PyValue& b);
  // `a op b` on any two values: folded, or Triton's tensor semantics.
  PyValue BinaryOp(py::BinOpKind op, const PyValue& a, const PyValue& b);
  PyValue CompareOp(py::CmpOpKind op, const PyValue& a, const PyValue& b);
  // A value as a scalar tensor condition (i1), for dynamic control flow.
  Tensor Condition(const PyValue& v);

 private:
  Compilation& compilation_;
  ir::Builder* builder_;
  std::unique_ptr<Semantic> semantic_;
  SourceLocation loc_;
  int call_depth_ = 0;
};

// Values flattened to the tensors they hold (for yields and block
// arguments) and rebuilt from them: a tuple's tensors in order, a
// compile-time value none.
void FlattenTensors(const PyValue& v, std::vector<Tensor>& out);
PyValue RebuildFromTensors(const PyValue& shape_of,
                           const std::vector<Tensor>& tensors, size_t& next);

}  // namespace mtlemu::triton::frontend
