// The Python syntax tree the Triton front end reads: the statements and
// expressions of Python 3 that a @triton.jit function, a module's imports
// and constants, and the decorators around them (@triton.autotune configs,
// @triton.heuristics lambdas) are written in. Shaped after CPython's `ast`
// module (same node names and fields), so Triton's own code generator
// (python/triton/compiler/code_generator.py) reads as a guide.
//
// Top-level statements the parser cannot read (syntax outside this subset:
// `match`, `async def`, class bodies it does not need...) become an
// UnparsedStmt carrying the error, so a file's other kernels still compile;
// the front end reports the error only if something it needs is inside.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/triton/source_location.h"

namespace mtlemu::triton::py {

// --- expressions -------------------------------------------------------------

enum class ExprKind {
  kName,        // x
  kConstant,    // 1, 2.5, True, None, "text", ...
  kUnaryOp,     // -x, not x, ~x, +x
  kBinOp,       // x + y, x @ y, ...
  kBoolOp,      // x and y and z, x or y
  kCompare,     // a < b <= c, x is None, x not in y
  kIfExp,       // a if c else b
  kCall,        // f(a, *b, k=v, **d)
  kAttribute,   // x.attr
  kSubscript,   // x[i], x[:, None], x[1:2:3]
  kSlice,       // lower:upper:step (only inside a subscript)
  kTuple,       // (a, b) or a, b
  kList,        // [a, b]
  kDict,        // {k: v}
  kStarred,     // *x (in calls, tuples and assignment targets)
  kLambda,      // lambda args: body
  kListComp,    // [elt for x in it if c ...]
  kGeneratorExp,// (elt for x in it)
  kJoinedStr,   // f"...{x!r:>4}..."
  kFormattedValue,  // one {x} of an f-string
};

enum class UnaryOpKind { kUAdd, kUSub, kNot, kInvert };
enum class BinOpKind {
  kAdd, kSub, kMult, kMatMult, kDiv, kFloorDiv, kMod, kPow,
  kLShift, kRShift, kBitOr, kBitXor, kBitAnd,
};
enum class BoolOpKind { kAnd, kOr };
enum class CmpOpKind { kEq, kNotEq, kLt, kLtE, kGt, kGtE, kIs, kIsNot, kIn, kNotIn };

// Python's spelling of an operator ("+", "//", "not in", ...).
const char* Spelling(UnaryOpKind op);
const char* Spelling(BinOpKind op);
const char* Spelling(BoolOpKind op);
const char* Spelling(CmpOpKind op);

struct Expr {
  explicit Expr(ExprKind k) : kind(k) {}
  virtual ~Expr() = default;
  ExprKind kind;
  SourceLocation loc;  // where the expression starts
  int end_line = 0;    // where it ends (line 1-based, column 0-based,
  int end_column = 0;  // one past the last character)
};
using ExprPtr = std::unique_ptr<Expr>;

struct NameExpr : Expr {
  NameExpr() : Expr(ExprKind::kName) {}
  std::string id;
};

// A literal. Python integers are unbounded; `int_value` holds those that fit
// in 64 bits (as Triton's int64/uint64 do) and `int_overflow` marks the rest,
// which the front end rejects where they are used.
struct ConstantExpr : Expr {
  enum class Type { kNone, kBool, kInt, kFloat, kString, kBytes, kEllipsis };
  ConstantExpr() : Expr(ExprKind::kConstant) {}
  Type type = Type::kNone;
  bool bool_value = false;
  // kInt: the value as an unsigned 64-bit pattern; int literals are never
  // negative in Python's grammar (-1 is USub applied to 1).
  uint64_t int_value = 0;
  bool int_overflow = false;  // the literal does not fit in 64 bits
  double float_value = 0;     // kFloat (also "1e3", "inf" is not a literal)
  bool imaginary = false;     // 1j: parsed, rejected by the front end
  std::string string_value;   // kString / kBytes, escapes decoded, adjacent
                              // literals concatenated
};

struct UnaryOpExpr : Expr {
  UnaryOpExpr() : Expr(ExprKind::kUnaryOp) {}
  UnaryOpKind op = UnaryOpKind::kUSub;
  ExprPtr operand;
};

struct BinOpExpr : Expr {
  BinOpExpr() : Expr(ExprKind::kBinOp) {}
  BinOpKind op = BinOpKind::kAdd;
  ExprPtr left, right;
};

struct BoolOpExpr : Expr {
  BoolOpExpr() : Expr(ExprKind::kBoolOp) {}
  BoolOpKind op = BoolOpKind::kAnd;
  std::vector<ExprPtr> values;  // two or more
};

// left ops[0] comparators[0] ops[1] comparators[1] ...
struct CompareExpr : Expr {
  CompareExpr() : Expr(ExprKind::kCompare) {}
  ExprPtr left;
  std::vector<CmpOpKind> ops;
  std::vector<ExprPtr> comparators;
};

struct IfExpExpr : Expr {
  IfExpExpr() : Expr(ExprKind::kIfExp) {}
  ExprPtr test, body, orelse;
};

struct Keyword {
  SourceLocation loc;
  std::optional<std::string> arg;  // nullopt for **value
  ExprPtr value;
};

struct CallExpr : Expr {
  CallExpr() : Expr(ExprKind::kCall) {}
  ExprPtr func;
  std::vector<ExprPtr> args;  // a StarredExpr for *value
  std::vector<Keyword> keywords;
};

struct AttributeExpr : Expr {
  AttributeExpr() : Expr(ExprKind::kAttribute) {}
  ExprPtr value;
  std::string attr;
};

// x[i] has slice = i; x[a, b] has slice = Tuple(a, b); x[1:2] has a Slice.
struct SubscriptExpr : Expr {
  SubscriptExpr() : Expr(ExprKind::kSubscript) {}
  ExprPtr value;
  ExprPtr slice;
};

struct SliceExpr : Expr {
  SliceExpr() : Expr(ExprKind::kSlice) {}
  ExprPtr lower, upper, step;  // each may be null
};

struct TupleExpr : Expr {
  TupleExpr() : Expr(ExprKind::kTuple) {}
  std::vector<ExprPtr> elts;
  bool parenthesized = false;
};

struct ListExpr : Expr {
  ListExpr() : Expr(ExprKind::kList) {}
  std::vector<ExprPtr> elts;
};

struct DictExpr : Expr {
  DictExpr() : Expr(ExprKind::kDict) {}
  std::vector<ExprPtr> keys;  // a null key is **values[i]
  std::vector<ExprPtr> values;
};

struct StarredExpr : Expr {
  StarredExpr() : Expr(ExprKind::kStarred) {}
  ExprPtr value;
};

// One parameter of a def or lambda.
struct Arg {
  SourceLocation loc;
  std::string name;
  ExprPtr annotation;  // may be null
  ExprPtr default_value;  // may be null
};

struct Arguments {
  std::vector<Arg> posonly;  // before a `/`
  std::vector<Arg> args;
  std::optional<Arg> vararg;  // *args
  std::vector<Arg> kwonly;    // after `*` or *args
  std::optional<Arg> kwarg;   // **kwargs
};

struct LambdaExpr : Expr {
  LambdaExpr() : Expr(ExprKind::kLambda) {}
  Arguments args;
  ExprPtr body;
};

struct Comprehension {
  ExprPtr target;  // a Name or a Tuple of targets
  ExprPtr iter;
  std::vector<ExprPtr> ifs;
};

// [elt for ...] and (elt for ...).
struct ComprehensionExpr : Expr {
  explicit ComprehensionExpr(ExprKind k) : Expr(k) {}
  ExprPtr elt;
  std::vector<Comprehension> generators;
};

// An f-string: its literal parts (ConstantExpr strings) and FormattedValues.
struct JoinedStrExpr : Expr {
  JoinedStrExpr() : Expr(ExprKind::kJoinedStr) {}
  std::vector<ExprPtr> values;
};

struct FormattedValueExpr : Expr {
  FormattedValueExpr() : Expr(ExprKind::kFormattedValue) {}
  ExprPtr value;
  char conversion = 0;  // 0, 's', 'r' or 'a'
  ExprPtr format_spec;  // a JoinedStr or null
};

// --- statements --------------------------------------------------------------

enum class StmtKind {
  kFunctionDef,
  kClassDef,
  kReturn,
  kAssign,
  kAugAssign,
  kAnnAssign,
  kFor,
  kWhile,
  kIf,
  kWith,
  kRaise,
  kTry,
  kAssert,
  kImport,
  kImportFrom,
  kGlobal,
  kNonlocal,
  kExpr,
  kPass,
  kBreak,
  kContinue,
  kDelete,
  kUnparsed,  // a top-level statement the parser could not read
};

struct Stmt {
  explicit Stmt(StmtKind k) : kind(k) {}
  virtual ~Stmt() = default;
  StmtKind kind;
  SourceLocation loc;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct FunctionDefStmt : Stmt {
  FunctionDefStmt() : Stmt(StmtKind::kFunctionDef) {}
  std::string name;
  Arguments args;
  Body body;
  std::vector<ExprPtr> decorators;  // in source order, outermost first
  ExprPtr returns;                  // the -> annotation, may be null
  bool is_async = false;
  // The function's source text (from the first decorator to the end of the
  // body) and its first line, for messages and cache keys.
  std::string source;
  int first_line = 0;
};

struct ClassDefStmt : Stmt {
  ClassDefStmt() : Stmt(StmtKind::kClassDef) {}
  std::string name;
  std::vector<ExprPtr> bases;
  std::vector<Keyword> keywords;
  Body body;
  std::vector<ExprPtr> decorators;
};

struct ReturnStmt : Stmt {
  ReturnStmt() : Stmt(StmtKind::kReturn) {}
  ExprPtr value;  // may be null
};

// targets[0] = targets[1] = ... = value
struct AssignStmt : Stmt {
  AssignStmt() : Stmt(StmtKind::kAssign) {}
  std::vector<ExprPtr> targets;
  ExprPtr value;
};

struct AugAssignStmt : Stmt {
  AugAssignStmt() : Stmt(StmtKind::kAugAssign) {}
  ExprPtr target;
  BinOpKind op = BinOpKind::kAdd;
  ExprPtr value;
};

// target: annotation [= value]
struct AnnAssignStmt : Stmt {
  AnnAssignStmt() : Stmt(StmtKind::kAnnAssign) {}
  ExprPtr target;
  ExprPtr annotation;
  ExprPtr value;  // may be null
};

struct ForStmt : Stmt {
  ForStmt() : Stmt(StmtKind::kFor) {}
  ExprPtr target;
  ExprPtr iter;
  Body body;
  Body orelse;
};

struct WhileStmt : Stmt {
  WhileStmt() : Stmt(StmtKind::kWhile) {}
  ExprPtr test;
  Body body;
  Body orelse;
};

struct IfStmt : Stmt {
  IfStmt() : Stmt(StmtKind::kIf) {}
  ExprPtr test;
  Body body;
  Body orelse;  // `elif` is an IfStmt alone in orelse
};

struct WithItem {
  ExprPtr context_expr;
  ExprPtr optional_vars;  // may be null
};

struct WithStmt : Stmt {
  WithStmt() : Stmt(StmtKind::kWith) {}
  std::vector<WithItem> items;
  Body body;
};

struct RaiseStmt : Stmt {
  RaiseStmt() : Stmt(StmtKind::kRaise) {}
  ExprPtr exc;    // may be null
  ExprPtr cause;  // may be null
};

struct ExceptHandler {
  SourceLocation loc;
  ExprPtr type;  // may be null (bare except)
  std::string name;
  Body body;
};

struct TryStmt : Stmt {
  TryStmt() : Stmt(StmtKind::kTry) {}
  Body body;
  std::vector<ExceptHandler> handlers;
  Body orelse;
  Body finalbody;
};

struct AssertStmt : Stmt {
  AssertStmt() : Stmt(StmtKind::kAssert) {}
  ExprPtr test;
  ExprPtr msg;  // may be null
};

struct Alias {
  SourceLocation loc;
  std::string name;    // dotted for `import a.b.c`; "*" for `from m import *`
  std::string asname;  // empty when not given
};

struct ImportStmt : Stmt {
  ImportStmt() : Stmt(StmtKind::kImport) {}
  std::vector<Alias> names;
};

struct ImportFromStmt : Stmt {
  ImportFromStmt() : Stmt(StmtKind::kImportFrom) {}
  std::string module;  // dotted; empty for `from . import x`
  int level = 0;       // the number of leading dots
  std::vector<Alias> names;
};

// `global a, b` and `nonlocal a, b`.
struct NamesStmt : Stmt {
  explicit NamesStmt(StmtKind k) : Stmt(k) {}
  std::vector<std::string> names;
};

struct ExprStmt : Stmt {
  ExprStmt() : Stmt(StmtKind::kExpr) {}
  ExprPtr value;
};

// pass, break, continue.
struct SimpleStmt : Stmt {
  explicit SimpleStmt(StmtKind k) : Stmt(k) {}
};

struct DeleteStmt : Stmt {
  DeleteStmt() : Stmt(StmtKind::kDelete) {}
  std::vector<ExprPtr> targets;
};

// A top-level statement outside the subset: what was wrong, where. `first_line`
// to `last_line` is the statement's extent.
struct UnparsedStmt : Stmt {
  UnparsedStmt() : Stmt(StmtKind::kUnparsed) {}
  std::string error;  // "invalid syntax", "unsupported: match statement", ...
  SourceLocation error_loc;
  int last_line = 0;
  // The name a def or class statement would bind, when it could be read
  // (so that a reference to it can say why it is unavailable).
  std::string defines;
};

struct Module {
  std::string file;
  std::string source;
  Body body;
};

// dyn_cast for the node kinds: As<CallExpr>(e) is null unless e is a call.
template <class T>
T* As(Expr* e) {
  return dynamic_cast<T*>(e);
}
template <class T>
const T* As(const Expr* e) {
  return dynamic_cast<const T*>(e);
}
template <class T>
T* As(Stmt* s) {
  return dynamic_cast<T*>(s);
}
template <class T>
const T* As(const Stmt* s) {
  return dynamic_cast<const T*>(s);
}

}  // namespace mtlemu::triton::py
