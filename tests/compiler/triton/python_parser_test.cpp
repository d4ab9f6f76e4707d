#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/triton/python/ast.h"
#include "compiler/triton/python/lexer.h"
#include "compiler/triton/python/parse_cache.h"
#include "compiler/triton/python/parser.h"

namespace mtlemu::triton::py {
namespace {

// --- dumping trees as S-expressions
// --------------------------------------------

std::string Dump(const Expr* e);
std::string Dump(const Stmt& s);

std::string Quote(std::string_view s) {
  std::string out = "'";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out + "'";
}

std::string FloatText(double v) {
  if (std::isinf(v)) return "inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string List(const std::vector<ExprPtr>& list) {
  std::string out;
  for (const ExprPtr& e : list) {
    if (!out.empty()) out += ", ";
    out += Dump(e.get());
  }
  return out;
}

std::string DumpBody(const Body& body) {
  std::string out = "[";
  for (const StmtPtr& s : body) {
    if (out.size() > 1) out += "; ";
    out += Dump(*s);
  }
  return out + "]";
}

std::string DumpArg(const Arg& a) {
  std::string out = a.name;
  if (a.annotation) out += ": " + Dump(a.annotation.get());
  if (a.default_value) out += "=" + Dump(a.default_value.get());
  return out;
}

// Python-like: (a, b=Const(1), /, c, *args, d, **kw)
std::string DumpArguments(const Arguments& a) {
  std::vector<std::string> parts;
  for (const Arg& p : a.posonly) parts.push_back(DumpArg(p));
  if (!a.posonly.empty()) parts.push_back("/");
  for (const Arg& p : a.args) parts.push_back(DumpArg(p));
  if (a.vararg) {
    parts.push_back("*" + DumpArg(*a.vararg));
  } else if (!a.kwonly.empty()) {
    parts.push_back("*");
  }
  for (const Arg& p : a.kwonly) parts.push_back(DumpArg(p));
  if (a.kwarg) parts.push_back("**" + DumpArg(*a.kwarg));
  std::string out = "(";
  for (size_t i = 0; i < parts.size(); ++i) {
    out += (i ? ", " : "") + parts[i];
  }
  return out + ")";
}

std::string DumpKeywords(const std::vector<Keyword>& keywords) {
  std::string out;
  for (const Keyword& k : keywords) {
    out += ", ";
    out += k.arg ? *k.arg + "=" : "**";
    out += Dump(k.value.get());
  }
  return out;
}

std::string DumpGenerators(const std::vector<Comprehension>& generators) {
  std::string out;
  for (const Comprehension& g : generators) {
    out += " for " + Dump(g.target.get()) + " in " + Dump(g.iter.get());
    for (const ExprPtr& c : g.ifs) out += " if " + Dump(c.get());
  }
  return out;
}

std::string Dump(const Expr* e) {
  if (!e) return "_";
  switch (e->kind) {
    case ExprKind::kName:
      return "Name(" + As<NameExpr>(e)->id + ")";
    case ExprKind::kConstant: {
      const auto* c = As<ConstantExpr>(e);
      switch (c->type) {
        case ConstantExpr::Type::kNone:
          return "Const(None)";
        case ConstantExpr::Type::kBool:
          return c->bool_value ? "Const(True)" : "Const(False)";
        case ConstantExpr::Type::kInt:
          return c->int_overflow
                     ? "Const(int-overflow)"
                     : "Const(" + std::to_string(c->int_value) + ")";
        case ConstantExpr::Type::kFloat:
          return "Const(" + FloatText(c->float_value) +
                 (c->imaginary ? "j" : "") + ")";
        case ConstantExpr::Type::kString:
          return "Const(" + Quote(c->string_value) + ")";
        case ConstantExpr::Type::kBytes:
          return "Const(b" + Quote(c->string_value) + ")";
        case ConstantExpr::Type::kEllipsis:
          return "Const(...)";
      }
      return "Const(?)";
    }
    case ExprKind::kUnaryOp: {
      const auto* u = As<UnaryOpExpr>(e);
      return std::string("UnaryOp(") + Spelling(u->op) + ", " +
             Dump(u->operand.get()) + ")";
    }
    case ExprKind::kBinOp: {
      const auto* b = As<BinOpExpr>(e);
      return std::string("BinOp(") + Spelling(b->op) + ", " +
             Dump(b->left.get()) + ", " + Dump(b->right.get()) + ")";
    }
    case ExprKind::kBoolOp: {
      const auto* b = As<BoolOpExpr>(e);
      return std::string("BoolOp(") + Spelling(b->op) + ", " + List(b->values) +
             ")";
    }
    case ExprKind::kCompare: {
      const auto* c = As<CompareExpr>(e);
      std::string out = "Compare(" + Dump(c->left.get());
      for (size_t i = 0; i < c->ops.size(); ++i) {
        out += std::string(", ") + Spelling(c->ops[i]) + ", " +
               Dump(c->comparators[i].get());
      }
      return out + ")";
    }
    case ExprKind::kIfExp: {
      const auto* i = As<IfExpExpr>(e);
      return "IfExp(" + Dump(i->test.get()) + ", " + Dump(i->body.get()) +
             ", " + Dump(i->orelse.get()) + ")";
    }
    case ExprKind::kCall: {
      const auto* c = As<CallExpr>(e);
      std::string out = "Call(" + Dump(c->func.get());
      if (!c->args.empty()) out += ", " + List(c->args);
      return out + DumpKeywords(c->keywords) + ")";
    }
    case ExprKind::kAttribute: {
      const auto* a = As<AttributeExpr>(e);
      return "Attr(" + Dump(a->value.get()) + ", " + a->attr + ")";
    }
    case ExprKind::kSubscript: {
      const auto* s = As<SubscriptExpr>(e);
      return "Sub(" + Dump(s->value.get()) + ", " + Dump(s->slice.get()) + ")";
    }
    case ExprKind::kSlice: {
      const auto* s = As<SliceExpr>(e);
      return "Slice(" + Dump(s->lower.get()) + ", " + Dump(s->upper.get()) +
             ", " + Dump(s->step.get()) + ")";
    }
    case ExprKind::kTuple:
      return "Tuple(" + List(As<TupleExpr>(e)->elts) + ")";
    case ExprKind::kList:
      return "List(" + List(As<ListExpr>(e)->elts) + ")";
    case ExprKind::kDict: {
      const auto* d = As<DictExpr>(e);
      std::string out = "Dict(";
      for (size_t i = 0; i < d->keys.size(); ++i) {
        if (i) out += ", ";
        out += d->keys[i] ? Dump(d->keys[i].get()) + ": " : "**";
        out += Dump(d->values[i].get());
      }
      return out + ")";
    }
    case ExprKind::kStarred:
      return "Starred(" + Dump(As<StarredExpr>(e)->value.get()) + ")";
    case ExprKind::kLambda: {
      const auto* l = As<LambdaExpr>(e);
      return "Lambda(" + DumpArguments(l->args) + "; " + Dump(l->body.get()) +
             ")";
    }
    case ExprKind::kListComp:
    case ExprKind::kGeneratorExp: {
      const auto* c = As<ComprehensionExpr>(e);
      return std::string(e->kind == ExprKind::kListComp ? "ListComp("
                                                        : "GenExp(") +
             Dump(c->elt.get()) + DumpGenerators(c->generators) + ")";
    }
    case ExprKind::kJoinedStr:
      return "JoinedStr(" + List(As<JoinedStrExpr>(e)->values) + ")";
    case ExprKind::kFormattedValue: {
      const auto* f = As<FormattedValueExpr>(e);
      std::string out = "FV(" + Dump(f->value.get());
      if (f->conversion) out += std::string(", !") + f->conversion;
      if (f->format_spec) out += ", spec=" + Dump(f->format_spec.get());
      return out + ")";
    }
  }
  return "?";
}

std::string Dump(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::kFunctionDef: {
      const auto* f = As<FunctionDefStmt>(&s);
      std::string out = "FunctionDef(" + f->name + DumpArguments(f->args);
      if (f->returns) out += " -> " + Dump(f->returns.get());
      if (!f->decorators.empty()) out += ", deco=[" + List(f->decorators) + "]";
      return out + ", " + DumpBody(f->body) + ")";
    }
    case StmtKind::kClassDef: {
      const auto* c = As<ClassDefStmt>(&s);
      std::string out = "ClassDef(" + c->name;
      if (!c->bases.empty()) out += ", bases=[" + List(c->bases) + "]";
      out += DumpKeywords(c->keywords);
      if (!c->decorators.empty()) out += ", deco=[" + List(c->decorators) + "]";
      return out + ", " + DumpBody(c->body) + ")";
    }
    case StmtKind::kReturn:
      return "Return(" + Dump(As<ReturnStmt>(&s)->value.get()) + ")";
    case StmtKind::kAssign: {
      const auto* a = As<AssignStmt>(&s);
      return "Assign([" + List(a->targets) + "], " + Dump(a->value.get()) + ")";
    }
    case StmtKind::kAugAssign: {
      const auto* a = As<AugAssignStmt>(&s);
      return "AugAssign(" + Dump(a->target.get()) + ", " + Spelling(a->op) +
             "=, " + Dump(a->value.get()) + ")";
    }
    case StmtKind::kAnnAssign: {
      const auto* a = As<AnnAssignStmt>(&s);
      return "AnnAssign(" + Dump(a->target.get()) + ", " +
             Dump(a->annotation.get()) + ", " + Dump(a->value.get()) + ")";
    }
    case StmtKind::kFor: {
      const auto* f = As<ForStmt>(&s);
      return "For(" + Dump(f->target.get()) + ", " + Dump(f->iter.get()) +
             ", " + DumpBody(f->body) + ", " + DumpBody(f->orelse) + ")";
    }
    case StmtKind::kWhile: {
      const auto* w = As<WhileStmt>(&s);
      return "While(" + Dump(w->test.get()) + ", " + DumpBody(w->body) + ", " +
             DumpBody(w->orelse) + ")";
    }
    case StmtKind::kIf: {
      const auto* i = As<IfStmt>(&s);
      return "If(" + Dump(i->test.get()) + ", " + DumpBody(i->body) + ", " +
             DumpBody(i->orelse) + ")";
    }
    case StmtKind::kWith: {
      const auto* w = As<WithStmt>(&s);
      std::string out = "With([";
      for (size_t i = 0; i < w->items.size(); ++i) {
        if (i) out += ", ";
        out += Dump(w->items[i].context_expr.get());
        if (w->items[i].optional_vars) {
          out += " as " + Dump(w->items[i].optional_vars.get());
        }
      }
      return out + "], " + DumpBody(w->body) + ")";
    }
    case StmtKind::kRaise: {
      const auto* r = As<RaiseStmt>(&s);
      return "Raise(" + Dump(r->exc.get()) + ", " + Dump(r->cause.get()) + ")";
    }
    case StmtKind::kTry: {
      const auto* t = As<TryStmt>(&s);
      std::string out = "Try(" + DumpBody(t->body) + ", [";
      for (size_t i = 0; i < t->handlers.size(); ++i) {
        const ExceptHandler& h = t->handlers[i];
        if (i) out += ", ";
        out += "Except(" + Dump(h.type.get());
        if (!h.name.empty()) out += " as " + h.name;
        out += ", " + DumpBody(h.body) + ")";
      }
      return out + "], " + DumpBody(t->orelse) + ", " + DumpBody(t->finalbody) +
             ")";
    }
    case StmtKind::kAssert: {
      const auto* a = As<AssertStmt>(&s);
      return "Assert(" + Dump(a->test.get()) + ", " + Dump(a->msg.get()) + ")";
    }
    case StmtKind::kImport:
    case StmtKind::kImportFrom: {
      const std::vector<Alias>& names = s.kind == StmtKind::kImport
                                            ? As<ImportStmt>(&s)->names
                                            : As<ImportFromStmt>(&s)->names;
      std::string out;
      if (s.kind == StmtKind::kImport) {
        out = "Import(";
      } else {
        const auto* f = As<ImportFromStmt>(&s);
        out = "ImportFrom(" + std::string(f->level, '.') + f->module + ", ";
      }
      for (size_t i = 0; i < names.size(); ++i) {
        if (i) out += ", ";
        out += names[i].name;
        if (!names[i].asname.empty()) out += " as " + names[i].asname;
      }
      return out + ")";
    }
    case StmtKind::kGlobal:
    case StmtKind::kNonlocal: {
      const auto* n = As<NamesStmt>(&s);
      std::string out = s.kind == StmtKind::kGlobal ? "Global(" : "Nonlocal(";
      for (size_t i = 0; i < n->names.size(); ++i) {
        out += (i ? ", " : "") + n->names[i];
      }
      return out + ")";
    }
    case StmtKind::kExpr:
      return "Expr(" + Dump(As<ExprStmt>(&s)->value.get()) + ")";
    case StmtKind::kPass:
      return "Pass";
    case StmtKind::kBreak:
      return "Break";
    case StmtKind::kContinue:
      return "Continue";
    case StmtKind::kDelete:
      return "Delete(" + List(As<DeleteStmt>(&s)->targets) + ")";
    case StmtKind::kUnparsed: {
      const auto* u = As<UnparsedStmt>(&s);
      std::string out =
          "Unparsed(" + u->error + " @" + std::to_string(u->error_loc.line) +
          ":" + std::to_string(u->error_loc.column) + ", lines " +
          std::to_string(u->loc.line) + "-" + std::to_string(u->last_line);
      if (!u->defines.empty()) out += ", defines " + u->defines;
      return out + ")";
    }
  }
  return "?";
}

// --- helpers
// ---------------------------------------------------------------------

// The dump of one expression, or "ERROR: message".
std::string E(std::string_view text) {
  Result<ExprPtr> r = ParseExpression(text, "t.py");
  if (!r.ok()) return "ERROR: " + r.error().message;
  return Dump(r.value().get());
}

// The dump of a module, one top-level statement per line, or "ERROR: ...".
std::string S(std::string_view source) {
  Result<Module> r = ParseModule(source, "t.py");
  if (!r.ok()) return "ERROR: " + r.error().message;
  std::string out;
  for (const StmtPtr& s : r.value().body) {
    if (!out.empty()) out += "\n";
    out += Dump(*s);
  }
  return out;
}

// The error of a module's only statement, which must be unparsed, as
// "line:col: message" (col 1-based, as printed).
std::string StmtError(std::string_view source) {
  Result<Module> r = ParseModule(source, "t.py");
  if (!r.ok()) return "FATAL: " + r.error().message;
  for (const StmtPtr& s : r.value().body) {
    if (const auto* u = As<UnparsedStmt>(s.get())) {
      return std::to_string(u->error_loc.line) + ":" +
             std::to_string(u->error_loc.column + 1) + ": " + u->error;
    }
  }
  return "no error";
}

// Tokens as "KIND(text)" separated by spaces.
std::string Tokens(std::string_view source) {
  Result<std::vector<Token>> r = Tokenize(source, "t.py");
  if (!r.ok()) return "ERROR: " + r.error().message;
  std::string out;
  for (const Token& t : r.value()) {
    if (!out.empty()) out += " ";
    switch (t.kind) {
      case TokenKind::kEndMarker:
        out += "END";
        break;
      case TokenKind::kNewline:
        out += "NL";
        break;
      case TokenKind::kIndent:
        out += "INDENT";
        break;
      case TokenKind::kDedent:
        out += "DEDENT";
        break;
      case TokenKind::kName:
        out += "NAME(" + std::string(t.text) + ")";
        break;
      case TokenKind::kNumber:
        out += "NUM(" + std::string(t.text) + ")";
        break;
      case TokenKind::kString:
        out += "STR(" + Quote(t.value) + ")";
        break;
      case TokenKind::kFStringStart:
        out += "FSTART(" + std::string(t.text) + ")";
        break;
      case TokenKind::kFStringMiddle:
        out += "FMID(" + Quote(t.value) + ")";
        break;
      case TokenKind::kFStringEnd:
        out += "FEND(" + std::string(t.text) + ")";
        break;
      case TokenKind::kOp:
        out += "OP(" + std::string(t.text) + ")";
        break;
      case TokenKind::kError:
        out += "ERR(" + t.value + ")";
        break;
    }
  }
  return out;
}

std::string Repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// --- tokenizer
// ---------------------------------------------------------------------

TEST(PythonLexerTest, IndentationMakesIndentAndDedent) {
  EXPECT_EQ(Tokens("if x:\n    y = 1\n\n    # comment\nz\n"),
            "NAME(if) NAME(x) OP(:) NL INDENT NAME(y) OP(=) NUM(1) NL DEDENT "
            "NAME(z) NL END");
  EXPECT_EQ(Tokens("if a:\n  if b:\n    c\nd"),
            "NAME(if) NAME(a) OP(:) NL INDENT NAME(if) NAME(b) OP(:) NL INDENT "
            "NAME(c) NL DEDENT DEDENT NAME(d) NL END");
  // Dedents close at the end of the input, with no final newline.
  EXPECT_EQ(Tokens("if a:\n  b"),
            "NAME(if) NAME(a) OP(:) NL INDENT NAME(b) NL DEDENT END");
  EXPECT_EQ(Tokens(""), "END");
  EXPECT_EQ(Tokens("\n\n  # only a comment\n"), "END");
}

TEST(PythonLexerTest, LinesJoinInsideBracketsAndAfterBackslash) {
  EXPECT_EQ(Tokens("x = (1,\n     2)\n"),
            "NAME(x) OP(=) OP(() NUM(1) OP(,) NUM(2) OP()) NL END");
  EXPECT_EQ(Tokens("x = [\n  1,  # one\n\n  2]\n"),
            "NAME(x) OP(=) OP([) NUM(1) OP(,) NUM(2) OP(]) NL END");
  EXPECT_EQ(Tokens("x = 1 + \\\n    2\ny"),
            "NAME(x) OP(=) NUM(1) OP(+) NUM(2) NL NAME(y) NL END");
}

TEST(PythonLexerTest, TabsFollowPython) {
  // A tab goes to the next multiple of 8; consistent uses are fine.
  EXPECT_EQ(
      Tokens("if x:\n\ty\n\tz\n"),
      "NAME(if) NAME(x) OP(:) NL INDENT NAME(y) NL NAME(z) NL DEDENT END");
  EXPECT_EQ(
      Tokens("if x:\n  \ty\n  \tz\n"),
      "NAME(if) NAME(x) OP(:) NL INDENT NAME(y) NL NAME(z) NL DEDENT END");
  // Two spaces and a tab reach column 8 as one tab does, but not with tabs
  // counted as one column: Python's TabError.
  EXPECT_EQ(Tokens("if x:\n  \ty\n\tz\n"),
            "ERROR: t.py:3:2: error: inconsistent use of tabs and spaces in "
            "indentation");
  EXPECT_EQ(Tokens("if x:\n\ty\n        z\n"),
            "ERROR: t.py:3:9: error: inconsistent use of tabs and spaces in "
            "indentation");
  EXPECT_EQ(Tokens("if x:\n        y\n\tz\n"),
            "ERROR: t.py:3:2: error: inconsistent use of tabs and spaces in "
            "indentation");
  EXPECT_EQ(Tokens("if a:\n    if b:\n        c\n  d\n"),
            "ERROR: t.py:4:3: error: unindent does not match any outer "
            "indentation level");
}

TEST(PythonLexerTest, CrLfBomAndFormFeed) {
  EXPECT_EQ(Tokens("\xEF\xBB\xBFx = 1\r\nif y:\r\n  z\r\n"),
            "NAME(x) OP(=) NUM(1) NL NAME(if) NAME(y) OP(:) NL INDENT NAME(z) "
            "NL DEDENT END");
  Result<std::vector<Token>> r = Tokenize("a\r\nb\rc\n", "t.py");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value()[2].line, 2);
  EXPECT_EQ(r.value()[4].line, 3);
  EXPECT_EQ(Tokens("x\n\f  y\n"), "NAME(x) NL INDENT NAME(y) NL DEDENT END");
}

TEST(PythonLexerTest, Operators) {
  EXPECT_EQ(Tokens("-> := **= //= >>= <<= ... @ @= != == <= >= << >> ** //"),
            "OP(->) OP(:=) OP(**=) OP(//=) OP(>>=) OP(<<=) OP(...) OP(@) "
            "OP(@=) OP(!=) OP(==) OP(<=) OP(>=) OP(<<) OP(>>) OP(**) OP(//) NL "
            "END");
  EXPECT_EQ(Tokens("a+=b-=c*=d/=e%=f&=g|=h^=i~j;k.l,m"),
            "NAME(a) OP(+=) NAME(b) OP(-=) NAME(c) OP(*=) NAME(d) OP(/=) "
            "NAME(e) OP(%=) NAME(f) OP(&=) NAME(g) OP(|=) NAME(h) OP(^=) "
            "NAME(i) OP(~) NAME(j) OP(;) NAME(k) OP(.) NAME(l) OP(,) NAME(m) "
            "NL END");
}

TEST(PythonLexerTest, NumbersAndNames) {
  EXPECT_EQ(Tokens("0 1_000 0x_fF 0o17 0B10 1. .5 1e-3 1.5E+3j 10J 00"),
            "NUM(0) NUM(1_000) NUM(0x_fF) NUM(0o17) NUM(0B10) NUM(1.) NUM(.5) "
            "NUM(1e-3) NUM(1.5E+3j) NUM(10J) NUM(00) NL END");
  EXPECT_EQ(Tokens("1if x else 2"),
            "NUM(1) NAME(if) NAME(x) NAME(else) NUM(2) NL END");
  EXPECT_EQ(Tokens("café _x1 __init__"),
            "NAME(café) NAME(_x1) NAME(__init__) NL END");
  EXPECT_EQ(Tokens("1 .real"), "NUM(1) OP(.) NAME(real) NL END");
}

TEST(PythonLexerTest, BadTokensAreErrorTokens) {
  EXPECT_EQ(Tokens("1_ 2"), "ERR(invalid decimal literal) NUM(2) NL END");
  // CPython points at a misplaced underscore or a bad digit.
  EXPECT_EQ(E("x + 1_000_"),
            "ERROR: t.py:1:10: error: invalid decimal literal");
  EXPECT_EQ(E("x + 0o8"),
            "ERROR: t.py:1:7: error: invalid digit '8' in octal literal");
  EXPECT_EQ(E("x + 1abc"), "ERROR: t.py:1:5: error: invalid decimal literal");
  EXPECT_EQ(Tokens("1__0"), "ERR(invalid decimal literal) NL END");
  EXPECT_EQ(Tokens("0x"), "ERR(invalid hexadecimal literal) NL END");
  EXPECT_EQ(Tokens("0b102"), "ERR(invalid digit '2' in binary literal) NL END");
  EXPECT_EQ(Tokens("0o8"), "ERR(invalid digit '8' in octal literal) NL END");
  EXPECT_EQ(Tokens("012"),
            "ERR(leading zeros in decimal integer literals are not permitted; "
            "use an 0o prefix for octal integers) NL END");
  EXPECT_EQ(Tokens("1abc"), "ERR(invalid decimal literal) NL END");
  EXPECT_EQ(Tokens("1.__class__"), "ERR(invalid decimal literal) NL END");
  EXPECT_EQ(Tokens("a $ b"),
            "NAME(a) ERR(invalid character '$' (U+0024)) NAME(b) NL END");
  EXPECT_EQ(Tokens("a \xE2\x82\xAC"),
            "NAME(a) ERR(invalid character '\xE2\x82\xAC' (U+20AC)) NL END");
  EXPECT_EQ(Tokens("x = \xE2\x80\x9Cquoted\xE2\x80\x9D"),
            "NAME(x) OP(=) ERR(invalid character '\xE2\x80\x9C' (U+201C)) "
            "NAME(quoted) ERR(invalid character '\xE2\x80\x9D' (U+201D)) NL "
            "END");
  EXPECT_EQ(Tokens("\xFF"), "ERR(invalid UTF-8 byte 0xff) NL END");
  EXPECT_EQ(Tokens("a \\ b"),
            "NAME(a) ERR(unexpected character after line continuation "
            "character) NAME(b) NL END");
  EXPECT_EQ(Tokens("'abc\nx"),
            "ERR(unterminated string literal (detected at line 1)) NL NAME(x) "
            "NL END");
  EXPECT_EQ(Tokens("a)"), "NAME(a) ERR(unmatched ')') NL END");
  EXPECT_EQ(Tokens("(a]"),
            "OP(() NAME(a) ERR(closing parenthesis ']' does not match opening "
            "parenthesis '(') NL END");
  EXPECT_EQ(Tokens("(a\n]"),
            "OP(() NAME(a) ERR(closing parenthesis ']' does not match opening "
            "parenthesis '(' on line 1) NL END");
}

TEST(PythonLexerTest, FatalErrors) {
  EXPECT_EQ(Tokens("x = '''abc\n\ny = 1\n"),
            "ERROR: t.py:1:5: error: unterminated triple-quoted string literal "
            "(detected at line 3)");
  EXPECT_EQ(Tokens("x = '''abc"),
            "ERROR: t.py:1:5: error: unterminated triple-quoted string literal "
            "(detected at line 1)");
  EXPECT_EQ(Tokens("x = f'''{y}\n"),
            "ERROR: t.py:1:5: error: unterminated triple-quoted f-string "
            "literal (detected at line 1)");
  EXPECT_EQ(Tokens("foo(a,\n  b[1\n"),
            "ERROR: t.py:2:4: error: '[' was never closed");
  EXPECT_EQ(Tokens("foo(a, 'b\nc\n"),
            "ERROR: t.py:1:8: error: unterminated string literal (detected at "
            "line 1)")
      << "the unterminated string explains the unclosed bracket";
  EXPECT_EQ(Tokens(std::string_view("x\n y = \0", 8)),
            "ERROR: t.py:2:6: error: source code cannot contain null bytes");
  EXPECT_EQ(Tokens("x = 1 + \\"),
            "ERROR: t.py:1:9: error: unexpected EOF while parsing");
  std::string deep;
  for (int i = 0; i < 101; ++i) deep += std::string(i, ' ') + "if x:\n";
  EXPECT_EQ(Tokens(deep),
            "ERROR: t.py:101:101: error: too many levels of indentation");
}

TEST(PythonLexerTest, Strings) {
  EXPECT_EQ(Tokens(R"('a' "b" '''c
d''' """e""")"),
            "STR('a') STR('b') STR('c\\nd') STR('e') NL END");
  EXPECT_EQ(Tokens(R"('\n\t\\\'\"\a\x41\101\0\u00e9\U0001F600\q')"),
            "STR('\\n\\t\\\\\\'\"\\x07A"
            "A\\x00\\xc3\\xa9\\xf0\\x9f\\x98\\x80\\\\q')"
            " NL END");
  EXPECT_EQ(Tokens(R"(r'\n\'' R"\d" rb'\x' Br'a' u'x' U"y")"),
            "STR('\\\\n\\\\\\'') STR('\\\\d') STR('\\\\x') STR('a') STR('x') "
            "STR('y') NL END");
  EXPECT_EQ(Tokens("'a\\\nb'"), "STR('ab') NL END");
  EXPECT_EQ(Tokens("'''a\r\nb'''"), "STR('a\\nb') NL END");
  EXPECT_EQ(Tokens(R"(b'\xff\n' B"\u1234")"),
            "STR('\\xff\\n') STR('\\\\u1234') NL END");
  EXPECT_EQ(Tokens("b'\xC3\xA9'"),
            "ERR(bytes can only contain ASCII literal characters) NL END");
  EXPECT_EQ(Tokens(R"('\x4')"),
            "ERR((unicode error) truncated \\xXX escape) NL END");
  EXPECT_EQ(Tokens(R"('\N{DASH}')"),
            "ERR(unsupported: \\N{...} escapes) NL END");
  EXPECT_EQ(Tokens("bu'x'"), "NAME(bu) STR('x') NL END")
      << "bu is not a prefix";
}

TEST(PythonLexerTest, FStringTokens) {
  EXPECT_EQ(Tokens(R"(f"a{x!r:>{w}}b")"),
            "FSTART(f\") FMID('a') OP({) NAME(x) OP(!) NAME(r) OP(:) FMID('>') "
            "OP({) NAME(w) OP(}) OP(}) FMID('b') FEND(\") NL END");
  EXPECT_EQ(Tokens(R"(f'{{x}} {y=}')"),
            "FSTART(f') FMID('{x} ') OP({) NAME(y) OP(=) OP(}) FEND(') NL END");
  // Python 3.12: the field may reuse the quote and nest f-strings.
  EXPECT_EQ(Tokens(R"(f"{d["k"]}{f"{1}"}")"),
            "FSTART(f\") OP({) NAME(d) OP([) STR('k') OP(]) OP(}) OP({) "
            "FSTART(f\") OP({) NUM(1) OP(}) FEND(\") OP(}) FEND(\") NL END");
  EXPECT_EQ(Tokens(R"(f"{x:=5}{a!=b}")"),
            "FSTART(f\") OP({) NAME(x) OP(:) FMID('=5') OP(}) OP({) NAME(a) "
            "OP(!=) NAME(b) OP(}) FEND(\") NL END");
  EXPECT_EQ(Tokens(R"(rf"\d{x}" Fr'')"),
            "FSTART(rf\") FMID('\\\\d') OP({) NAME(x) OP(}) FEND(\") "
            "FSTART(Fr') FEND(') NL END");
  EXPECT_EQ(Tokens("f'a}b'"),
            "FSTART(f') FMID('a') ERR(f-string: single '}' is not allowed) "
            "FMID('b') FEND(') NL END");
  EXPECT_EQ(Tokens("f'abc\nx"),
            "FSTART(f') FMID('abc') ERR(unterminated f-string literal "
            "(detected at line 1)) NL NAME(x) NL END");
  // A multi-line field in a single-quoted f-string (Python 3.12).
  EXPECT_EQ(Tokens("f'{1 +\n 2}'"),
            "FSTART(f') OP({) NUM(1) OP(+) NUM(2) OP(}) FEND(') NL END");
}

// --- precedence and associativity
// ----------------------------------------------------

TEST(PythonParserTest, ArithmeticPrecedence) {
  EXPECT_EQ(E("a + b * 2"), "BinOp(+, Name(a), BinOp(*, Name(b), Const(2)))");
  EXPECT_EQ(E("a * b + 2"), "BinOp(+, BinOp(*, Name(a), Name(b)), Const(2))");
  EXPECT_EQ(E("(a + b) * 2"), "BinOp(*, BinOp(+, Name(a), Name(b)), Const(2))");
  EXPECT_EQ(E("a - b - c"), "BinOp(-, BinOp(-, Name(a), Name(b)), Name(c))");
  EXPECT_EQ(E("a / b * c // d % e @ f"),
            "BinOp(@, BinOp(%, BinOp(//, BinOp(*, BinOp(/, Name(a), Name(b)), "
            "Name(c)), Name(d)), Name(e)), Name(f))");
  EXPECT_EQ(E("a + b - c + d"),
            "BinOp(+, BinOp(-, BinOp(+, Name(a), Name(b)), Name(c)), Name(d))");
}

TEST(PythonParserTest, PowerAndUnary) {
  EXPECT_EQ(E("-2**2"), "UnaryOp(-, BinOp(**, Const(2), Const(2)))");
  EXPECT_EQ(E("a ** b ** c"),
            "BinOp(**, Name(a), BinOp(**, Name(b), Name(c)))");
  EXPECT_EQ(E("2 ** -1"), "BinOp(**, Const(2), UnaryOp(-, Const(1)))");
  EXPECT_EQ(E("-x ** -y"),
            "UnaryOp(-, BinOp(**, Name(x), UnaryOp(-, Name(y))))");
  EXPECT_EQ(E("a ** b * c"), "BinOp(*, BinOp(**, Name(a), Name(b)), Name(c))");
  EXPECT_EQ(E("a * b ** c"), "BinOp(*, Name(a), BinOp(**, Name(b), Name(c)))");
  EXPECT_EQ(E("-a * b"), "BinOp(*, UnaryOp(-, Name(a)), Name(b))");
  EXPECT_EQ(E("~a + +b"), "BinOp(+, UnaryOp(~, Name(a)), UnaryOp(+, Name(b)))");
  EXPECT_EQ(E("- - ~x"), "UnaryOp(-, UnaryOp(-, UnaryOp(~, Name(x))))");
  EXPECT_EQ(E("a.b ** c[0]"),
            "BinOp(**, Attr(Name(a), b), Sub(Name(c), Const(0)))");
  EXPECT_EQ(E("2 ** f(x) ** 3"),
            "BinOp(**, Const(2), BinOp(**, Call(Name(f), Name(x)), Const(3)))");
}

TEST(PythonParserTest, BitwiseAndShiftLevels) {
  EXPECT_EQ(E("a | b ^ c & d << e + f * g"),
            "BinOp(|, Name(a), BinOp(^, Name(b), BinOp(&, Name(c), BinOp(<<, "
            "Name(d), BinOp(+, Name(e), BinOp(*, Name(f), Name(g)))))))");
  EXPECT_EQ(E("a * b + c << d & e ^ f | g"),
            "BinOp(|, BinOp(^, BinOp(&, BinOp(<<, BinOp(+, BinOp(*, Name(a), "
            "Name(b)), Name(c)), Name(d)), Name(e)), Name(f)), Name(g))");
  EXPECT_EQ(E("a << b >> c"),
            "BinOp(>>, BinOp(<<, Name(a), Name(b)), Name(c))");
  EXPECT_EQ(E("a | b | c"), "BinOp(|, BinOp(|, Name(a), Name(b)), Name(c))");
  EXPECT_EQ(E("a & b == c"),
            "Compare(BinOp(&, Name(a), Name(b)), ==, Name(c))");
  EXPECT_EQ(E("x >> 1 & 0xff"),
            "BinOp(&, BinOp(>>, Name(x), Const(1)), Const(255))");
}

TEST(PythonParserTest, Comparisons) {
  EXPECT_EQ(E("a < b <= c"), "Compare(Name(a), <, Name(b), <=, Name(c))");
  EXPECT_EQ(E("a == b != c > d >= e"),
            "Compare(Name(a), ==, Name(b), !=, Name(c), >, Name(d), >=, "
            "Name(e))");
  EXPECT_EQ(E("x is not None"), "Compare(Name(x), is not, Const(None))");
  EXPECT_EQ(E("x is None"), "Compare(Name(x), is, Const(None))");
  EXPECT_EQ(E("x not in y"), "Compare(Name(x), not in, Name(y))");
  EXPECT_EQ(E("x in y in z"), "Compare(Name(x), in, Name(y), in, Name(z))");
  EXPECT_EQ(E("a + b < c | d"),
            "Compare(BinOp(+, Name(a), Name(b)), <, BinOp(|, Name(c), "
            "Name(d)))");
  EXPECT_EQ(E("x == -1"), "Compare(Name(x), ==, UnaryOp(-, Const(1)))");
}

TEST(PythonParserTest, BooleanOperators) {
  EXPECT_EQ(E("not a == b"), "UnaryOp(not, Compare(Name(a), ==, Name(b)))");
  EXPECT_EQ(E("not a and b or c"),
            "BoolOp(or, BoolOp(and, UnaryOp(not, Name(a)), Name(b)), "
            "Name(c))");
  EXPECT_EQ(E("a or b and c"),
            "BoolOp(or, Name(a), BoolOp(and, Name(b), Name(c)))");
  EXPECT_EQ(E("a and b and c"), "BoolOp(and, Name(a), Name(b), Name(c))");
  EXPECT_EQ(E("a or b or c"), "BoolOp(or, Name(a), Name(b), Name(c))");
  EXPECT_EQ(E("not not x"), "UnaryOp(not, UnaryOp(not, Name(x)))");
  EXPECT_EQ(E("a < b and b < c"),
            "BoolOp(and, Compare(Name(a), <, Name(b)), Compare(Name(b), <, "
            "Name(c)))");
  EXPECT_EQ(E("not a | b"), "UnaryOp(not, BinOp(|, Name(a), Name(b)))");
}

TEST(PythonParserTest, ConditionalAndLambda) {
  EXPECT_EQ(E("a if b else c"), "IfExp(Name(b), Name(a), Name(c))");
  EXPECT_EQ(E("a if b else c if d else e"),
            "IfExp(Name(b), Name(a), IfExp(Name(d), Name(c), Name(e)))");
  EXPECT_EQ(E("a or b if c or d else e and f"),
            "IfExp(BoolOp(or, Name(c), Name(d)), BoolOp(or, Name(a), "
            "Name(b)), BoolOp(and, Name(e), Name(f)))");
  EXPECT_EQ(E("lambda: a if b else c"),
            "Lambda((); IfExp(Name(b), Name(a), Name(c)))");
  EXPECT_EQ(E("a if b else lambda: c"),
            "IfExp(Name(b), Name(a), Lambda((); Name(c)))");
  EXPECT_EQ(E("lambda x, y=1, *a, k, m=2, **kw: x"),
            "Lambda((x, y=Const(1), *a, k, m=Const(2), **kw); Name(x))");
  EXPECT_EQ(E("lambda a, /, b, *, c: a"), "Lambda((a, /, b, *, c); Name(a))");
  EXPECT_EQ(E("lambda: lambda: 0"), "Lambda((); Lambda((); Const(0)))");
  EXPECT_EQ(E("(lambda x: x)(1)"), "Call(Lambda((x); Name(x)), Const(1))");
}

// --- atoms and literals
// ------------------------------------------------------------

TEST(PythonParserTest, IntegerLiterals) {
  EXPECT_EQ(E("0"), "Const(0)");
  EXPECT_EQ(E("123"), "Const(123)");
  EXPECT_EQ(E("1_000_000"), "Const(1000000)");
  EXPECT_EQ(E("0x_fF"), "Const(255)");
  EXPECT_EQ(E("0XFF"), "Const(255)");
  EXPECT_EQ(E("0o17"), "Const(15)");
  EXPECT_EQ(E("0O7_7"), "Const(63)");
  EXPECT_EQ(E("0b1010"), "Const(10)");
  EXPECT_EQ(E("0B1_0"), "Const(2)");
  EXPECT_EQ(E("00"), "Const(0)");
  EXPECT_EQ(E("0_0"), "Const(0)");
  EXPECT_EQ(E("18446744073709551615"), "Const(18446744073709551615)");
  EXPECT_EQ(E("0xffff_ffff_ffff_ffff"), "Const(18446744073709551615)");
  EXPECT_EQ(E("18446744073709551616"), "Const(int-overflow)");
  EXPECT_EQ(E("0x1_0000_0000_0000_0000"), "Const(int-overflow)");
  EXPECT_EQ(E("-1"), "UnaryOp(-, Const(1))");
}

TEST(PythonParserTest, FloatAndImaginaryLiterals) {
  EXPECT_EQ(E("1.5"), "Const(1.5)");
  EXPECT_EQ(E("1."), "Const(1.0)");
  EXPECT_EQ(E(".5"), "Const(0.5)");
  EXPECT_EQ(E("1e3"), "Const(1000.0)");
  EXPECT_EQ(E("1E-3"), "Const(0.001)");
  EXPECT_EQ(E("1.5e+3"), "Const(1500.0)");
  EXPECT_EQ(E("1.e2"), "Const(100.0)");
  EXPECT_EQ(E("1_0.0_1"), "Const(10.01)");
  EXPECT_EQ(E("0e0"), "Const(0.0)");
  EXPECT_EQ(E("09.5"), "Const(9.5)");
  EXPECT_EQ(E("1e999"), "Const(inf)");
  EXPECT_EQ(E("1e-999"), "Const(0.0)");
  EXPECT_EQ(E("0.000001e-400"), "Const(0.0)");
  EXPECT_EQ(E("1j"), "Const(1.0j)");
  EXPECT_EQ(E("1.5J"), "Const(1.5j)");
  EXPECT_EQ(E("1e3j"), "Const(1000.0j)");
  EXPECT_EQ(E("09j"), "Const(9.0j)");
}

TEST(PythonParserTest, StringLiterals) {
  EXPECT_EQ(E("'a'"), "Const('a')");
  EXPECT_EQ(E("\"a\\tb\""), "Const('a\\tb')");
  EXPECT_EQ(E("'''x\ny'''"), "Const('x\\ny')");
  EXPECT_EQ(E("r'\\n'"), "Const('\\\\n')");
  EXPECT_EQ(E("b'\\x00\\xff'"), "Const(b'\\x00\\xff')");
  EXPECT_EQ(E("rb'\\x' BR'y'"), "Const(b'\\\\xy')");
  EXPECT_EQ(E("u'x' 'y' \"z\""), "Const('xyz')");
  EXPECT_EQ(E("('a'\n 'b')"), "Const('ab')");
  EXPECT_EQ(E("'\\u00e9'"), "Const('\\xc3\\xa9')");
  EXPECT_EQ(E("'a' b'b'"),
            "ERROR: t.py:1:5: error: cannot mix bytes and nonbytes literals");
  EXPECT_EQ(E("b'a' f'b'"),
            "ERROR: t.py:1:6: error: cannot mix bytes and nonbytes literals");
}

TEST(PythonParserTest, NamedConstants) {
  EXPECT_EQ(E("True"), "Const(True)");
  EXPECT_EQ(E("False"), "Const(False)");
  EXPECT_EQ(E("None"), "Const(None)");
  EXPECT_EQ(E("..."), "Const(...)");
  EXPECT_EQ(E("x[..., None]"), "Sub(Name(x), Tuple(Const(...), Const(None)))");
}

TEST(PythonParserTest, TuplesListsDicts) {
  EXPECT_EQ(E("()"), "Tuple()");
  EXPECT_EQ(E("(1,)"), "Tuple(Const(1))");
  EXPECT_EQ(E("(1)"), "Const(1)");
  EXPECT_EQ(E("1, 2"), "Tuple(Const(1), Const(2))");
  EXPECT_EQ(E("1,"), "Tuple(Const(1))");
  EXPECT_EQ(E("(1, 2,)"), "Tuple(Const(1), Const(2))");
  EXPECT_EQ(E("((1, 2), [3])"),
            "Tuple(Tuple(Const(1), Const(2)), List(Const(3)))");
  EXPECT_EQ(E("(*a, b)"), "Tuple(Starred(Name(a)), Name(b))");
  EXPECT_EQ(E("*a, *b"), "Tuple(Starred(Name(a)), Starred(Name(b)))");
  EXPECT_EQ(E("[]"), "List()");
  EXPECT_EQ(E("[1, *a, 2,]"), "List(Const(1), Starred(Name(a)), Const(2))");
  EXPECT_EQ(E("{}"), "Dict()");
  EXPECT_EQ(E("{'a': 1, **d, 'b': [2],}"),
            "Dict(Const('a'): Const(1), **Name(d), Const('b'): "
            "List(Const(2)))");
  EXPECT_EQ(E("{1: lambda x: x, 2: a if b else c}"),
            "Dict(Const(1): Lambda((x); Name(x)), Const(2): IfExp(Name(b), "
            "Name(a), Name(c)))");

  Result<ExprPtr> paren = ParseExpression("(1, 2)", "t.py");
  ASSERT_TRUE(paren.ok());
  EXPECT_TRUE(As<TupleExpr>(paren.value().get())->parenthesized);
  Result<ExprPtr> bare = ParseExpression("1, 2", "t.py");
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(As<TupleExpr>(bare.value().get())->parenthesized);
}

TEST(PythonParserTest, Comprehensions) {
  EXPECT_EQ(E("[x for x in y]"), "ListComp(Name(x) for Name(x) in Name(y))");
  EXPECT_EQ(E("[x * y for x in a if x > 0 if x < 9 for y in b]"),
            "ListComp(BinOp(*, Name(x), Name(y)) for Name(x) in Name(a) if "
            "Compare(Name(x), >, Const(0)) if Compare(Name(x), <, Const(9)) "
            "for Name(y) in Name(b))");
  EXPECT_EQ(E("[(i, j) for i, j in pairs]"),
            "ListComp(Tuple(Name(i), Name(j)) for Tuple(Name(i), Name(j)) in "
            "Name(pairs))");
  EXPECT_EQ(E("(x for x in range(3))"),
            "GenExp(Name(x) for Name(x) in Call(Name(range), Const(3)))");
  EXPECT_EQ(E("[a if c else b for (a, b), *r in z or w]"),
            "ListComp(IfExp(Name(c), Name(a), Name(b)) for "
            "Tuple(Tuple(Name(a), Name(b)), Starred(Name(r))) in BoolOp(or, "
            "Name(z), Name(w)))");
  EXPECT_EQ(E("[[y for y in x] for x in m]"),
            "ListComp(ListComp(Name(y) for Name(y) in Name(x)) for Name(x) in "
            "Name(m))");
}

TEST(PythonParserTest, SubscriptsAndSlices) {
  EXPECT_EQ(E("x[0]"), "Sub(Name(x), Const(0))");
  EXPECT_EQ(E("x[:, None]"),
            "Sub(Name(x), Tuple(Slice(_, _, _), Const(None)))");
  EXPECT_EQ(E("x[None, :]"),
            "Sub(Name(x), Tuple(Const(None), Slice(_, _, _)))");
  EXPECT_EQ(E("x[1:2, ::2]"),
            "Sub(Name(x), Tuple(Slice(Const(1), Const(2), _), Slice(_, _, "
            "Const(2))))");
  EXPECT_EQ(E("x[a:b:c]"), "Sub(Name(x), Slice(Name(a), Name(b), Name(c)))");
  EXPECT_EQ(E("x[:]"), "Sub(Name(x), Slice(_, _, _))");
  EXPECT_EQ(E("x[::]"), "Sub(Name(x), Slice(_, _, _))");
  EXPECT_EQ(E("x[1:]"), "Sub(Name(x), Slice(Const(1), _, _))");
  EXPECT_EQ(E("x[:-1]"), "Sub(Name(x), Slice(_, UnaryOp(-, Const(1)), _))");
  EXPECT_EQ(E("x[::-1]"), "Sub(Name(x), Slice(_, _, UnaryOp(-, Const(1))))");
  EXPECT_EQ(E("x[1,]"), "Sub(Name(x), Tuple(Const(1)))");
  EXPECT_EQ(E("x[a, b]"), "Sub(Name(x), Tuple(Name(a), Name(b)))");
  EXPECT_EQ(E("x[(a, b)]"), "Sub(Name(x), Tuple(Name(a), Name(b)))");
  EXPECT_EQ(E("x[*a]"), "Sub(Name(x), Tuple(Starred(Name(a))))");
  EXPECT_EQ(E("x[i][j]"), "Sub(Sub(Name(x), Name(i)), Name(j))");
  EXPECT_EQ(E("offs[:, None] * stride + offs[None, :]"),
            "BinOp(+, BinOp(*, Sub(Name(offs), Tuple(Slice(_, _, _), "
            "Const(None))), Name(stride)), Sub(Name(offs), Tuple(Const(None), "
            "Slice(_, _, _))))");
  EXPECT_EQ(E("x[a if b else c : d]"),
            "Sub(Name(x), Slice(IfExp(Name(b), Name(a), Name(c)), Name(d), "
            "_))");
}

TEST(PythonParserTest, CallsAndAttributes) {
  EXPECT_EQ(E("f()"), "Call(Name(f))");
  EXPECT_EQ(E("f(a, *b, c=1, **d)"),
            "Call(Name(f), Name(a), Starred(Name(b)), c=Const(1), **Name(d))");
  EXPECT_EQ(E("f(a=1, *b)"), "Call(Name(f), Starred(Name(b)), a=Const(1))");
  EXPECT_EQ(E("f(*a, *b, **c, **d)"),
            "Call(Name(f), Starred(Name(a)), Starred(Name(b)), **Name(c), "
            "**Name(d))");
  EXPECT_EQ(E("f(a,)"), "Call(Name(f), Name(a))");
  EXPECT_EQ(E("f(x for x in y)"),
            "Call(Name(f), GenExp(Name(x) for Name(x) in Name(y)))");
  EXPECT_EQ(E("f(a)(b)[c].d"),
            "Attr(Sub(Call(Call(Name(f), Name(a)), Name(b)), Name(c)), d)");
  EXPECT_EQ(E("tl.load(x_ptr + offsets, mask=mask, other=0.0)"),
            "Call(Attr(Name(tl), load), BinOp(+, Name(x_ptr), Name(offsets)), "
            "mask=Name(mask), other=Const(0.0))");
  EXPECT_EQ(E("'-'.join(x)"), "Call(Attr(Const('-'), join), Name(x))");
  EXPECT_EQ(E("f(lambda: 0, key=lambda x: -x)"),
            "Call(Name(f), Lambda((); Const(0)), key=Lambda((x); UnaryOp(-, "
            "Name(x))))");
}

TEST(PythonParserTest, FStrings) {
  EXPECT_EQ(E("f'a{x}b'"), "JoinedStr(Const('a'), FV(Name(x)), Const('b'))");
  EXPECT_EQ(E("f''"), "JoinedStr()");
  EXPECT_EQ(E("f'abc'"), "JoinedStr(Const('abc'))");
  EXPECT_EQ(E("f'{x!r}'"), "JoinedStr(FV(Name(x), !r))");
  EXPECT_EQ(E("f'{x!s}{y!a}'"), "JoinedStr(FV(Name(x), !s), FV(Name(y), !a))");
  EXPECT_EQ(E("f'{x:>10}'"),
            "JoinedStr(FV(Name(x), spec=JoinedStr(Const('>10'))))");
  EXPECT_EQ(E("f'{x:}'"), "JoinedStr(FV(Name(x), spec=JoinedStr()))");
  EXPECT_EQ(E("f'{x:{w}.{p}f}'"),
            "JoinedStr(FV(Name(x), spec=JoinedStr(FV(Name(w)), Const('.'), "
            "FV(Name(p)), Const('f'))))");
  EXPECT_EQ(E("f'{{x}}'"), "JoinedStr(Const('{x}'))");
  EXPECT_EQ(E("f'{x=}'"), "JoinedStr(Const('x='), FV(Name(x), !r))");
  EXPECT_EQ(E("f'a{x + 1 = :>4}'"),
            "JoinedStr(Const('ax + 1 = '), FV(BinOp(+, Name(x), Const(1)), "
            "spec=JoinedStr(Const('>4'))))");
  EXPECT_EQ(E("f'{x=!s}'"), "JoinedStr(Const('x='), FV(Name(x), !s))");
  EXPECT_EQ(E("f\"{d[\"key\"]}\""),
            "JoinedStr(FV(Sub(Name(d), Const('key'))))");
  EXPECT_EQ(E("f'{f'{x}'}'"), "JoinedStr(FV(JoinedStr(FV(Name(x)))))");
  EXPECT_EQ(E("f'{a[\"b\"]!s:>{width}}'"),
            "JoinedStr(FV(Sub(Name(a), Const('b')), !s, "
            "spec=JoinedStr(Const('>'), FV(Name(width)))))");
  EXPECT_EQ(E("f'''multi\nline {x}'''"),
            "JoinedStr(Const('multi\\nline '), FV(Name(x)))");
  EXPECT_EQ(E("rf'\\d{x}'"), "JoinedStr(Const('\\\\d'), FV(Name(x)))");
  EXPECT_EQ(E("f'\\n{x}\\t'"),
            "JoinedStr(Const('\\n'), FV(Name(x)), Const('\\t'))");
  EXPECT_EQ(E("f'{ {\"a\": 1}[\"a\"] }'"),
            "JoinedStr(FV(Sub(Dict(Const('a'): Const(1)), Const('a'))))");
  EXPECT_EQ(E("f'{x:=5}'"),
            "JoinedStr(FV(Name(x), spec=JoinedStr(Const('=5'))))");
  EXPECT_EQ(E("f'{a != b}'"), "JoinedStr(FV(Compare(Name(a), !=, Name(b))))");
  EXPECT_EQ(E("f'{a, b}'"), "JoinedStr(FV(Tuple(Name(a), Name(b))))");
  EXPECT_EQ(E("f'{1 +\n 2}'"), "JoinedStr(FV(BinOp(+, Const(1), Const(2))))");
  EXPECT_EQ(E("'a' f'b{x}' 'c' f'd'"),
            "JoinedStr(Const('ab'), FV(Name(x)), Const('cd'))");
  EXPECT_EQ(E("f'{(lambda x: x)(1)}'"),
            "JoinedStr(FV(Call(Lambda((x); Name(x)), Const(1))))");
}

TEST(PythonParserTest, FStringErrors) {
  EXPECT_EQ(E("f'{}'"),
            "ERROR: t.py:1:4: error: f-string: valid expression required "
            "before '}'");
  EXPECT_EQ(E("f'{!r}'"),
            "ERROR: t.py:1:4: error: f-string: valid expression required "
            "before '!'");
  EXPECT_EQ(E("f'}'"),
            "ERROR: t.py:1:3: error: f-string: single '}' is not allowed");
  EXPECT_EQ(E("f'{x!z}'"),
            "ERROR: t.py:1:6: error: f-string: invalid conversion character "
            "'z': expected 's', 'r', or 'a'");
  EXPECT_EQ(E("f'{x!}'"),
            "ERROR: t.py:1:6: error: f-string: missing conversion character");
  EXPECT_EQ(E("f'{x! r}'"),
            "ERROR: t.py:1:7: error: f-string: conversion type must come right "
            "after the exclamation mark");
  EXPECT_EQ(E("f'{a b}'"),
            "ERROR: t.py:1:6: error: f-string: expecting '=', or '!', or ':', "
            "or '}'");
  EXPECT_EQ(E("f'{x'"),
            "ERROR: t.py:1:5: error: unterminated string literal "
            "(detected at line 1)");
  EXPECT_EQ(E("f'{x:\n}'"),
            "ERROR: t.py:1:1: error: f-string: newlines are not allowed in "
            "format specifiers for single quoted f-strings");
  EXPECT_EQ(E("f'{x:abc'"), "ERROR: t.py:1:1: error: f-string: expecting '}'");
}

// --- statements
// ---------------------------------------------------------------------

TEST(PythonParserTest, FunctionDefinitions) {
  EXPECT_EQ(S("def f(a, b: int = 1, /, c=2, *args: int, d, e: float = 3.0, "
              "**kw) -> int:\n    return a\n"),
            "FunctionDef(f(a, b: Name(int)=Const(1), /, c=Const(2), *args: "
            "Name(int), d, e: Name(float)=Const(3.0), **kw) -> Name(int), "
            "[Return(Name(a))])");
  EXPECT_EQ(S("def f(): pass"), "FunctionDef(f(), [Pass])");
  EXPECT_EQ(S("def f(*, a, b=1,): return a, b"),
            "FunctionDef(f(*, a, b=Const(1)), [Return(Tuple(Name(a), "
            "Name(b)))])");
  EXPECT_EQ(S("def f(**kw,):\n  pass"), "FunctionDef(f(**kw), [Pass])");
  EXPECT_EQ(S("def f(a, /):\n  pass"), "FunctionDef(f(a, /), [Pass])");
  EXPECT_EQ(S("def f(*args: *Ts): pass"),
            "FunctionDef(f(*args: Starred(Name(Ts))), [Pass])");
  EXPECT_EQ(S("def outer():\n    def inner(x):\n        return x\n"
              "    return inner\n"),
            "FunctionDef(outer(), [FunctionDef(inner(x), [Return(Name(x))]); "
            "Return(Name(inner))])");
}

TEST(PythonParserTest, FunctionSourceAndFirstLine) {
  const std::string source =
      "import triton\n"
      "\n"
      "@triton.jit\n"
      "@other(1,\n"
      "       2)\n"
      "def kernel(x):\n"
      "    y = x  # comment\n"
      "\n"
      "    return y\n"
      "# trailing comment\n"
      "z = 1\n";
  Result<Module> r = ParseModule(source, "k.py");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().body.size(), 3u);
  const auto* fn = As<FunctionDefStmt>(r.value().body[1].get());
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn->first_line, 3);
  EXPECT_EQ(fn->loc.line, 6);
  EXPECT_EQ(fn->loc.column, 0);
  EXPECT_EQ(fn->loc.file, "k.py");
  EXPECT_EQ(fn->source,
            "@triton.jit\n@other(1,\n       2)\ndef kernel(x):\n    y = x  # "
            "comment\n\n    return y");
  ASSERT_EQ(fn->decorators.size(), 2u);
  EXPECT_EQ(Dump(fn->decorators[0].get()), "Attr(Name(triton), jit)");
  EXPECT_EQ(r.value().source, source);
  EXPECT_EQ(r.value().file, "k.py");

  Result<Module> plain = ParseModule("def f():\n  return 1", "k.py");
  ASSERT_TRUE(plain.ok());
  const auto* f = As<FunctionDefStmt>(plain.value().body[0].get());
  EXPECT_EQ(f->first_line, 1);
  EXPECT_EQ(f->source, "def f():\n  return 1");
}

TEST(PythonParserTest, Decorators) {
  EXPECT_EQ(
      S("@triton.autotune(configs=[triton.Config({'BLOCK': b}, num_warps=4) "
        "for b in (64, 128)], key=['n'])\n"
        "@triton.jit\n"
        "def k(x): pass\n"),
      "FunctionDef(k(x), deco=[Call(Attr(Name(triton), autotune), "
      "configs=ListComp(Call(Attr(Name(triton), Config), Dict(Const('BLOCK'): "
      "Name(b)), num_warps=Const(4)) for Name(b) in Tuple(Const(64), "
      "Const(128))), key=List(Const('n'))), Attr(Name(triton), jit)], "
      "[Pass])");
  EXPECT_EQ(
      S("@triton.heuristics({'EVEN': lambda args: args['K'] % 16 == 0})\n"
        "def k(): pass\n"),
      "FunctionDef(k(), deco=[Call(Attr(Name(triton), heuristics), "
      "Dict(Const('EVEN'): Lambda((args); Compare(BinOp(%, Sub(Name(args), "
      "Const('K')), Const(16)), ==, Const(0)))))], [Pass])");
  EXPECT_EQ(S("@a.b[0](x)\n@(lambda f: f)\nclass C: pass\n"),
            "ClassDef(C, deco=[Call(Sub(Attr(Name(a), b), Const(0)), "
            "Name(x)), Lambda((f); Name(f))], [Pass])");
}

TEST(PythonParserTest, ClassDefinitions) {
  EXPECT_EQ(S("class A(B, *m, metaclass=M, **kw):\n    x = 1\n"
              "    def f(self): pass\n"),
            "ClassDef(A, bases=[Name(B), Starred(Name(m))], "
            "metaclass=Name(M), **Name(kw), [Assign([Name(x)], Const(1)); "
            "FunctionDef(f(self), [Pass])])");
  EXPECT_EQ(S("class A: pass"), "ClassDef(A, [Pass])");
  EXPECT_EQ(S("class A(): pass"), "ClassDef(A, [Pass])");
}

TEST(PythonParserTest, Assignments) {
  EXPECT_EQ(S("a = b = 1"), "Assign([Name(a), Name(b)], Const(1))");
  EXPECT_EQ(S("a, b = b, a"),
            "Assign([Tuple(Name(a), Name(b))], Tuple(Name(b), Name(a)))");
  EXPECT_EQ(S("*a, b = c"),
            "Assign([Tuple(Starred(Name(a)), Name(b))], Name(c))");
  EXPECT_EQ(S("x[0] = y.z = 1"),
            "Assign([Sub(Name(x), Const(0)), Attr(Name(y), z)], Const(1))");
  EXPECT_EQ(S("(a, b), c = d"),
            "Assign([Tuple(Tuple(Name(a), Name(b)), Name(c))], Name(d))");
  EXPECT_EQ(S("[a, *b] = c"),
            "Assign([List(Name(a), Starred(Name(b)))], Name(c))");
  EXPECT_EQ(S("x = *a, b"),
            "Assign([Name(x)], Tuple(Starred(Name(a)), Name(b)))");
  EXPECT_EQ(S("x: int"), "AnnAssign(Name(x), Name(int), _)");
  EXPECT_EQ(S("x: int = 1"), "AnnAssign(Name(x), Name(int), Const(1))");
  EXPECT_EQ(S("self.x: tl.constexpr = 0"),
            "AnnAssign(Attr(Name(self), x), Attr(Name(tl), constexpr), "
            "Const(0))");
  EXPECT_EQ(S("a[0]: int = 1, 2"),
            "AnnAssign(Sub(Name(a), Const(0)), Name(int), Tuple(Const(1), "
            "Const(2)))");
}

TEST(PythonParserTest, AugmentedAssignments) {
  const char* ops[] = {"+",  "-",  "*",  "@", "/", "//", "%",
                       "**", "<<", ">>", "|", "^", "&"};
  for (const char* op : ops) {
    EXPECT_EQ(S(std::string("x ") + op + "= 1"),
              std::string("AugAssign(Name(x), ") + op + "=, Const(1))");
  }
  EXPECT_EQ(S("a.b[i] += c, d"),
            "AugAssign(Sub(Attr(Name(a), b), Name(i)), +=, Tuple(Name(c), "
            "Name(d)))");
}

TEST(PythonParserTest, ControlFlow) {
  EXPECT_EQ(S("if a:\n  x\nelif b:\n  y\nelif c: z\nelse:\n  w\n"),
            "If(Name(a), [Expr(Name(x))], [If(Name(b), [Expr(Name(y))], "
            "[If(Name(c), [Expr(Name(z))], [Expr(Name(w))])])])");
  EXPECT_EQ(S("if x: return y"), "If(Name(x), [Return(Name(y))], [])");
  EXPECT_EQ(S("for i in range(10):\n  if i: break\n  continue\nelse:\n  "
              "pass\n"),
            "For(Name(i), Call(Name(range), Const(10)), [If(Name(i), [Break], "
            "[]); Continue], [Pass])");
  EXPECT_EQ(S("for k, (a, b) in x.items(): pass"),
            "For(Tuple(Name(k), Tuple(Name(a), Name(b))), "
            "Call(Attr(Name(x), items)), [Pass], [])");
  EXPECT_EQ(S("for x in 1, 2: pass"),
            "For(Name(x), Tuple(Const(1), Const(2)), [Pass], [])");
  EXPECT_EQ(S("for x, in y: pass"), "For(Tuple(Name(x)), Name(y), [Pass], [])");
  EXPECT_EQ(S("while x: x -= 1; y()\nelse: z = 0\n"),
            "While(Name(x), [AugAssign(Name(x), -=, Const(1)); "
            "Expr(Call(Name(y)))], [Assign([Name(z)], Const(0))])");
}

TEST(PythonParserTest, WithStatements) {
  EXPECT_EQ(S("with a as b, c:\n  pass\n"),
            "With([Name(a) as Name(b), Name(c)], [Pass])");
  EXPECT_EQ(S("with (a as b, c as d,):\n  pass\n"),
            "With([Name(a) as Name(b), Name(c) as Name(d)], [Pass])");
  EXPECT_EQ(S("with (a, b): pass"), "With([Name(a), Name(b)], [Pass])");
  EXPECT_EQ(S("with (a, b) as c: pass"),
            "With([Tuple(Name(a), Name(b)) as Name(c)], [Pass])");
  EXPECT_EQ(S("with (open(f)) as g: pass"),
            "With([Call(Name(open), Name(f)) as Name(g)], [Pass])");
  EXPECT_EQ(S("with a as (b, c): pass"),
            "With([Name(a) as Tuple(Name(b), Name(c))], [Pass])");
}

TEST(PythonParserTest, RaiseTryAssert) {
  EXPECT_EQ(S("raise"), "Raise(_, _)");
  EXPECT_EQ(S("raise E"), "Raise(Name(E), _)");
  EXPECT_EQ(S("raise E('x') from e"),
            "Raise(Call(Name(E), Const('x')), Name(e))");
  EXPECT_EQ(S("try:\n  a\nexcept (A, B) as e:\n  b\nexcept C:\n  c\n"
              "except:\n  d\nelse:\n  e\nfinally:\n  f\n"),
            "Try([Expr(Name(a))], [Except(Tuple(Name(A), Name(B)) as e, "
            "[Expr(Name(b))]), Except(Name(C), [Expr(Name(c))]), Except(_, "
            "[Expr(Name(d))])], [Expr(Name(e))], [Expr(Name(f))])");
  EXPECT_EQ(S("try: a\nfinally: b\n"),
            "Try([Expr(Name(a))], [], [], [Expr(Name(b))])");
  EXPECT_EQ(S("assert x"), "Assert(Name(x), _)");
  EXPECT_EQ(S("assert x > 0, 'positive'"),
            "Assert(Compare(Name(x), >, Const(0)), Const('positive'))");
}

TEST(PythonParserTest, Imports) {
  EXPECT_EQ(S("import a.b.c as d, e"), "Import(a.b.c as d, e)");
  EXPECT_EQ(S("from . import x"), "ImportFrom(., x)");
  EXPECT_EQ(S("from ..a.b import (c as d, e,)"),
            "ImportFrom(..a.b, c as d, e)");
  EXPECT_EQ(S("from a import *"), "ImportFrom(a, *)");
  EXPECT_EQ(S("from ... import x"), "ImportFrom(..., x)");
  EXPECT_EQ(S("from .... import x"), "ImportFrom(...., x)");
  EXPECT_EQ(S("from .m import (\n    a,\n    b\n)"), "ImportFrom(.m, a, b)");
  Result<Module> r = ParseModule("from ...x import y", "t.py");
  ASSERT_TRUE(r.ok());
  const auto* from = As<ImportFromStmt>(r.value().body[0].get());
  EXPECT_EQ(from->level, 3);
  EXPECT_EQ(from->module, "x");
}

TEST(PythonParserTest, SimpleStatements) {
  EXPECT_EQ(S("global a, b"), "Global(a, b)");
  EXPECT_EQ(S("def f():\n  nonlocal x\n"), "FunctionDef(f(), [Nonlocal(x)])");
  EXPECT_EQ(S("pass"), "Pass");
  EXPECT_EQ(S("del a, b[0], c.d"),
            "Delete(Name(a), Sub(Name(b), Const(0)), Attr(Name(c), d))");
  EXPECT_EQ(S("del (a, b)"), "Delete(Tuple(Name(a), Name(b)))");
  EXPECT_EQ(S("def f():\n  return\n"), "FunctionDef(f(), [Return(_)])");
  EXPECT_EQ(S("def f(): return *a, b"),
            "FunctionDef(f(), [Return(Tuple(Starred(Name(a)), Name(b)))])");
  EXPECT_EQ(S("a; b; c"), "Expr(Name(a))\nExpr(Name(b))\nExpr(Name(c))");
  EXPECT_EQ(S("a = 1;"), "Assign([Name(a)], Const(1))");
  EXPECT_EQ(S("f(x)\n'''doc'''\n..."),
            "Expr(Call(Name(f), Name(x)))\nExpr(Const('doc'))\n"
            "Expr(Const(...))");
  // Soft keywords are names elsewhere.
  EXPECT_EQ(S("match = re.match(p, s)\ntype = 1\ncase: int\n_ = 2"),
            "Assign([Name(match)], Call(Attr(Name(re), match), Name(p), "
            "Name(s)))\nAssign([Name(type)], Const(1))\nAnnAssign(Name(case), "
            "Name(int), _)\nAssign([Name(_)], Const(2))");
}

// --- locations
// -------------------------------------------------------------------------

TEST(PythonParserTest, ExpressionLocations) {
  Result<ExprPtr> r = ParseExpression("a + b * c", "t.py");
  ASSERT_TRUE(r.ok());
  const auto* add = As<BinOpExpr>(r.value().get());
  EXPECT_EQ(add->loc.line, 1);
  EXPECT_EQ(add->loc.column, 0);
  EXPECT_EQ(add->end_line, 1);
  EXPECT_EQ(add->end_column, 9);
  const auto* mul = As<BinOpExpr>(add->right.get());
  EXPECT_EQ(mul->loc.column, 4);
  EXPECT_EQ(mul->end_column, 9);
  EXPECT_EQ(mul->right->loc.column, 8);
  EXPECT_EQ(mul->right->end_column, 9);
  EXPECT_EQ(mul->loc.file, "t.py");

  // Parentheses: a parenthesized operand starts the BinOp at its "(", as in
  // CPython, while the inner expression keeps its own extent.
  r = ParseExpression("(a + b) * c", "t.py");
  ASSERT_TRUE(r.ok());
  const auto* outer = As<BinOpExpr>(r.value().get());
  EXPECT_EQ(outer->loc.column, 0);
  EXPECT_EQ(outer->left->loc.column, 1);
  EXPECT_EQ(outer->left->end_column, 6);

  r = ParseExpression("tl.load(p,\n        mask=m)", "t.py", 10);
  ASSERT_TRUE(r.ok());
  const auto* call = As<CallExpr>(r.value().get());
  EXPECT_EQ(call->loc.line, 10);
  EXPECT_EQ(call->end_line, 11);
  EXPECT_EQ(call->end_column, 15);
  EXPECT_EQ(call->func->end_column, 7);
  ASSERT_EQ(call->keywords.size(), 1u);
  EXPECT_EQ(call->keywords[0].loc.line, 11);
  EXPECT_EQ(call->keywords[0].loc.column, 8);
  EXPECT_EQ(call->keywords[0].value->loc.column, 13);

  r = ParseExpression("x, y", "t.py");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value()->loc.column, 0);
  EXPECT_EQ(r.value()->end_column, 4);
  r = ParseExpression("  (x, y)", "t.py");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value()->loc.column, 2);
  EXPECT_EQ(r.value()->end_column, 8);

  r = ParseExpression("'a' \\\n 'b'", "t.py");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value()->end_line, 2);
  EXPECT_EQ(r.value()->end_column, 4);
}

TEST(PythonParserTest, StatementLocations) {
  const std::string source =
      "def f(a, b=1):\n"
      "\tif a:\n"
      "\t\treturn b\n"
      "s = \"\xC3\xA9\"; t = 1\n";
  Result<Module> r = ParseModule(source, "t.py");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.value().body.size(), 3u);
  const auto* f = As<FunctionDefStmt>(r.value().body[0].get());
  ASSERT_EQ(f->args.args.size(), 2u);
  EXPECT_EQ(f->args.args[1].loc.column, 9);
  const auto* s_if = As<IfStmt>(f->body[0].get());
  EXPECT_EQ(s_if->loc.line, 2);
  EXPECT_EQ(s_if->loc.column, 1);  // bytes, as Python's col_offset
  EXPECT_EQ(s_if->body[0]->loc.line, 3);
  EXPECT_EQ(s_if->body[0]->loc.column, 2);
  const Stmt* t = r.value().body[2].get();
  EXPECT_EQ(t->loc.line, 4);
  EXPECT_EQ(t->loc.column, 10);  // "é" is two bytes
}

// --- recovery
// --------------------------------------------------------------------------

TEST(PythonParserTest, MatchStatementBetweenDefsIsUnparsed) {
  EXPECT_EQ(S("def a():\n    return 1\n\nmatch x:\n    case 1:\n        "
              "pass\n    case _:\n        pass\n\ndef b():\n    return 2\n"),
            "FunctionDef(a(), [Return(Const(1))])\n"
            "Unparsed(unsupported: match statement @4:0, lines 4-8)\n"
            "FunctionDef(b(), [Return(Const(2))])");
}

TEST(PythonParserTest, BadLineBetweenDefsIsUnparsed) {
  EXPECT_EQ(S("def a(): pass\nx = = 1\ndef b(): pass\n"),
            "FunctionDef(a(), [Pass])\n"
            "Unparsed(invalid syntax @2:4, lines 2-2)\n"
            "FunctionDef(b(), [Pass])");
}

TEST(PythonParserTest, BadBodyKeepsTheName) {
  EXPECT_EQ(S("@triton.jit\ndef bad(x):\n    y = x +\n    return y\n\n"
              "def good(): pass\n"),
            "Unparsed(invalid syntax @3:11, lines 1-4, defines bad)\n"
            "FunctionDef(good(), [Pass])");
  EXPECT_EQ(S("@dec(1 2)\ndef f(): pass\ndef g(): pass"),
            "Unparsed(invalid syntax. Perhaps you forgot a comma? @1:5, lines "
            "1-2, defines f)\nFunctionDef(g(), [Pass])");
  EXPECT_EQ(S("async def f():\n    await x\nclass A[T]: pass\nx = 1"),
            "Unparsed(unsupported: async def @1:0, lines 1-2, defines f)\n"
            "Unparsed(unsupported: type parameters @3:7, lines 3-3, defines "
            "A)\nAssign([Name(x)], Const(1))");
  EXPECT_EQ(S("class C:\n    def m(self):\n        yield 1\nz = 0\n"),
            "Unparsed(unsupported: yield @3:8, lines 1-3, defines C)\n"
            "Assign([Name(z)], Const(0))");
}

TEST(PythonParserTest, RecoverySkipsClausesAndBlocks) {
  EXPECT_EQ(S("if x:\n    pass\nelse:\n    y = (n := 1)\nz = 1\n"),
            "Unparsed(unsupported: assignment expressions (':=') @4:11, lines "
            "1-4)\nAssign([Name(z)], Const(1))");
  EXPECT_EQ(S("try:\n    import triton\nexcept ImportError, e:\n    "
              "triton = None\nz = 1\n"),
            "Unparsed(multiple exception types must be parenthesized @3:7, "
            "lines 1-4)\nAssign([Name(z)], Const(1))");
  EXPECT_EQ(S("x = 1\n    y = 2\n    w = 3\nz = 3\n"),
            "Assign([Name(x)], Const(1))\n"
            "Unparsed(unexpected indent @2:4, lines 2-3)\n"
            "Assign([Name(z)], Const(3))");
  EXPECT_EQ(S("x = $\ny = 1"),
            "Unparsed(invalid character '$' (U+0024) @1:4, lines 1-1)\n"
            "Assign([Name(y)], Const(1))");
  EXPECT_EQ(S("x = 'abc\ny = 1"),
            "Unparsed(unterminated string literal (detected at line 1) @1:4, "
            "lines 1-1)\nAssign([Name(y)], Const(1))");
  EXPECT_EQ(S("x = {1, 2}\ny = {k: v for k, v in z}\nw = {k for k in z}"),
            "Unparsed(unsupported: set literals @1:4, lines 1-1)\n"
            "Unparsed(unsupported: dict comprehensions @2:4, lines 2-2)\n"
            "Unparsed(unsupported: set comprehensions @3:4, lines 3-3)");
  EXPECT_EQ(S("type X = int\nprint(await f())"),
            "Unparsed(unsupported: type alias statement @1:0, lines 1-1)\n"
            "Unparsed(unsupported: await @2:6, lines 2-2)");
  EXPECT_EQ(S("def f():\n    return 1\nelse:\n    pass\ng = 1\n"),
            "FunctionDef(f(), [Return(Const(1))])\n"
            "Unparsed(invalid syntax @3:0, lines 3-4)\n"
            "Assign([Name(g)], Const(1))");
  EXPECT_EQ(S("for x in y:\n    try:\n        pass\n    except* E:\n        "
              "pass\nq = 1"),
            "Unparsed(unsupported: except* (exception groups) @4:10, lines "
            "1-5)\nAssign([Name(q)], Const(1))");
}

TEST(PythonParserTest, FatalTokenizerErrorsFailTheModule) {
  EXPECT_EQ(S("def f():\n    pass\nx = '''\n\n"),
            "ERROR: t.py:3:5: error: unterminated triple-quoted string literal "
            "(detected at line 4)");
  EXPECT_EQ(S("def f(:\n    pass\n"),
            "ERROR: t.py:1:6: error: '(' was never closed");
  EXPECT_EQ(S("if x:\n        a\n    b\n"),
            "ERROR: t.py:3:5: error: unindent does not match any outer "
            "indentation level");
}

// --- error messages
// ----------------------------------------------------------------------

TEST(PythonParserTest, ExpressionErrors) {
  EXPECT_EQ(E("1 +"), "ERROR: t.py:1:4: error: invalid syntax");
  EXPECT_EQ(E("a b"), "ERROR: t.py:1:3: error: invalid syntax");
  // CPython points at the first of the two expressions.
  EXPECT_EQ(E("[a b]"),
            "ERROR: t.py:1:2: error: invalid syntax. Perhaps you forgot a "
            "comma?");
  EXPECT_EQ(E("f(a b)"),
            "ERROR: t.py:1:3: error: invalid syntax. Perhaps you forgot a "
            "comma?");
  EXPECT_EQ(E("f(a, k=b c)"),
            "ERROR: t.py:1:8: error: invalid syntax. Perhaps you forgot a "
            "comma?");
  EXPECT_EQ(E("{1: a b}"),
            "ERROR: t.py:1:5: error: invalid syntax. Perhaps you forgot a "
            "comma?");
  EXPECT_EQ(E("(x for x in y z)"), "ERROR: t.py:1:15: error: invalid syntax");
  EXPECT_EQ(E("x = 1"), "ERROR: t.py:1:3: error: invalid syntax");
  EXPECT_EQ(E("(1, 2"), "ERROR: t.py:1:1: error: '(' was never closed");
  EXPECT_EQ(E("a if b"),
            "ERROR: t.py:1:1: error: expected 'else' after 'if' expression");
  EXPECT_EQ(E("x := 1"),
            "ERROR: t.py:1:3: error: unsupported: assignment expressions "
            "(':=')");
  EXPECT_EQ(E("yield x"), "ERROR: t.py:1:1: error: unsupported: yield");
  EXPECT_EQ(E(""), "ERROR: t.py:1:1: error: unexpected EOF while parsing");
  EXPECT_EQ(E("lambda x"), "ERROR: t.py:1:9: error: expected ':'");
  EXPECT_EQ(E("*a"),
            "ERROR: t.py:1:1: error: can't use starred expression here");
  EXPECT_EQ(E("(*a)"),
            "ERROR: t.py:1:2: error: can't use starred expression here");
  EXPECT_EQ(E("f(a=1, b)"),
            "ERROR: t.py:1:8: error: positional argument follows keyword "
            "argument");
  EXPECT_EQ(E("f(**d, a)"),
            "ERROR: t.py:1:8: error: positional argument follows keyword "
            "argument unpacking");
  EXPECT_EQ(E("f(**d, *a)"),
            "ERROR: t.py:1:8: error: iterable argument unpacking follows "
            "keyword argument unpacking");
  EXPECT_EQ(E("f(x for x in y, 1)"),
            "ERROR: t.py:1:3: error: Generator expression must be "
            "parenthesized");
  EXPECT_EQ(E("f(a.b=1)"),
            "ERROR: t.py:1:3: error: expression cannot contain assignment, "
            "perhaps you meant \"==\"?");
  EXPECT_EQ(E("f(a=1, a=2)"),
            "ERROR: t.py:1:8: error: keyword argument repeated: a");
  EXPECT_EQ(E("f(True=1)"), "ERROR: t.py:1:3: error: cannot assign to True");
  EXPECT_EQ(E("[*a for a in b]"),
            "ERROR: t.py:1:2: error: iterable unpacking cannot be used in "
            "comprehension");
  EXPECT_EQ(E("{1: 2, 3}"),
            "ERROR: t.py:1:8: error: ':' expected after dictionary key");
  EXPECT_EQ(E("x.if"), "ERROR: t.py:1:3: error: invalid syntax");
  EXPECT_EQ(E("1\n  2"), "ERROR: t.py:2:3: error: unexpected indent");
  EXPECT_EQ(E("x\n+1"), "ERROR: t.py:2:1: error: invalid syntax");
}

TEST(PythonParserTest, StatementErrors) {
  EXPECT_EQ(StmtError("if x\n    pass\n"), "1:5: expected ':'");
  EXPECT_EQ(StmtError("if x:\npass\n"),
            "2:1: expected an indented block after 'if' statement on line 1");
  EXPECT_EQ(StmtError("def f():\n\nx = 1"),
            "3:1: expected an indented block after function definition on "
            "line 1");
  EXPECT_EQ(StmtError("class A:\n"),
            "1:9: expected an indented block after class definition on line 1");
  EXPECT_EQ(StmtError("for x in y:\n# c\n"),
            "1:12: expected an indented block after 'for' statement on line 1");
  EXPECT_EQ(
      StmtError("if x = 1:\n  pass"),
      "1:4: invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
  EXPECT_EQ(StmtError("f() = 1"),
            "1:1: cannot assign to function call here. Maybe you meant '==' "
            "instead of '='?");
  EXPECT_EQ(StmtError("x = 1 = y"), "1:5: cannot assign to literal");
  EXPECT_EQ(StmtError("1 = y"),
            "1:1: cannot assign to literal here. Maybe you meant '==' instead "
            "of '='?");
  EXPECT_EQ(StmtError("a, f() = 1"),
            "1:4: cannot assign to function call here. Maybe you meant '==' "
            "instead of '='?");
  EXPECT_EQ(StmtError("(a, f()) = 1"), "1:5: cannot assign to function call");
  EXPECT_EQ(StmtError("True = 1"), "1:1: cannot assign to True");
  EXPECT_EQ(StmtError("a + b = c"),
            "1:1: cannot assign to expression here. Maybe you meant '==' "
            "instead of '='?");
  EXPECT_EQ(StmtError("None = 1"), "1:1: cannot assign to None");
  EXPECT_EQ(StmtError("*a = 1"),
            "1:1: starred assignment target must be in a list or tuple");
  EXPECT_EQ(StmtError("a, *b, *c = d"),
            "1:1: multiple starred expressions in assignment");
  EXPECT_EQ(StmtError("for 1 in x: pass"), "1:5: cannot assign to literal");
  EXPECT_EQ(StmtError("for f() in x: pass"),
            "1:5: cannot assign to function call");
  EXPECT_EQ(StmtError("with a as f(): pass"),
            "1:11: cannot assign to function call");
  EXPECT_EQ(StmtError("(a, b) += 1"),
            "1:1: 'tuple' is an illegal expression for augmented assignment");
  EXPECT_EQ(StmtError("f() += 1"),
            "1:1: 'function call' is an illegal expression for augmented "
            "assignment");
  EXPECT_EQ(StmtError("a, b: int"),
            "1:1: only single target (not tuple) can be annotated");
  EXPECT_EQ(StmtError("f(): int"), "1:1: illegal target for annotation");
  EXPECT_EQ(StmtError("del f()"), "1:5: cannot delete function call");
  EXPECT_EQ(StmtError("del *a"), "1:5: cannot delete starred");
  EXPECT_EQ(StmtError("def f(a=1, b): pass"),
            "1:12: parameter without a default follows parameter with a "
            "default");
  EXPECT_EQ(StmtError("def f(*): pass"),
            "1:7: named arguments must follow bare *");
  EXPECT_EQ(StmtError("def f(a, a): pass"),
            "1:10: duplicate argument 'a' in function definition");
  EXPECT_EQ(StmtError("def f(**k, a): pass"),
            "1:12: arguments cannot follow var-keyword argument");
  EXPECT_EQ(StmtError("def f(*a, *b): pass"),
            "1:11: * argument may appear only once");
  EXPECT_EQ(StmtError("def f(/, a): pass"),
            "1:7: at least one argument must precede /");
  EXPECT_EQ(StmtError("def f(*a=1): pass"),
            "1:9: var-positional argument cannot have default value");
  EXPECT_EQ(StmtError("def f(a b): pass"), "1:9: invalid syntax");
  EXPECT_EQ(StmtError("def f: pass"), "1:6: expected '('");
  EXPECT_EQ(StmtError("try:\n  pass\nx = 1"),
            "3:1: expected 'except' or 'finally' block");
  EXPECT_EQ(StmtError("try:\n  pass\nexcept:\n  pass\nexcept E:\n  pass"),
            "3:1: default 'except:' must be last");
  EXPECT_EQ(StmtError("from x import a,"),
            "1:17: trailing comma not allowed without surrounding parentheses");
  EXPECT_EQ(StmtError("from x imp y"), "1:8: invalid syntax");
  EXPECT_EQ(StmtError("for x y: pass"), "1:7: invalid syntax");
  EXPECT_EQ(StmtError("print 'hello'"),
            "1:1: Missing parentheses in call to 'print'. Did you mean "
            "print(...)?");
  EXPECT_EQ(StmtError("import"), "1:7: invalid syntax");
  EXPECT_EQ(StmtError("return *a"), "1:8: can't use starred expression here");
  EXPECT_EQ(StmtError("if x: for y in z: pass"), "1:7: invalid syntax");
  EXPECT_EQ(StmtError("x = 1 2"), "1:7: invalid syntax");
}

TEST(PythonParserTest, ErrorsAreFormattedWithOneBasedColumns) {
  Result<ExprPtr> r = ParseExpression("x +", "cmd", 7);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cmd:7:4: error: invalid syntax");
  EXPECT_EQ(FormatDiagnostic("a.py", 3, 0, "boom"), "a.py:3:1: error: boom");
}

// --- robustness
// ----------------------------------------------------------------------

TEST(PythonParserTest, DeepNestingIsAnErrorNotACrash) {
  // As in CPython: 200 open brackets, not 201.
  EXPECT_EQ(E(Repeat("(", 200) + "1" + Repeat(")", 200)), "Const(1)");
  EXPECT_EQ(E(Repeat("(", 201) + "1" + Repeat(")", 201)),
            "ERROR: t.py:1:201: error: too many nested parentheses");
  EXPECT_EQ(S("class A:\n  def f():\n    if x:\n      return " +
              Repeat("(", 199) + "1" + Repeat(")", 199))
                .substr(0, 9),
            "ClassDef(");
  EXPECT_EQ(E(Repeat("[", 100) + Repeat("]", 100)).substr(0, 10), "List(List(");
  const std::vector<std::string> deep = {
      Repeat("(", 1000) + Repeat(")", 1000),
      Repeat("-", 100000) + "1",
      Repeat("not ", 10000) + "x",
      Repeat("lambda: ", 1000) + "0",
      Repeat("a if b else ", 1000) + "c",
      Repeat("2 ** ", 1000) + "2",
      "1" + Repeat(" + 1", 100000),
      "x" + Repeat(".a", 100000),
      "x" + Repeat("[0]", 100000),
      "f" + Repeat("()", 100000),
      Repeat("(1 + ", 199) + Repeat("1 + ", 900) + "1" + Repeat(")", 199),
      Repeat("f'{", 1000),
      Repeat("[", 100000),
      Repeat("{", 1000) + Repeat("}", 1000),
  };
  for (const std::string& text : deep) {
    const std::string result = E(text);
    EXPECT_EQ(result.substr(0, 6), "ERROR:") << text.substr(0, 40);
    EXPECT_NE(result.find("nested"), std::string::npos)
        << text.substr(0, 40) << " -> " << result;
  }
  // A long but shallow sum is fine, as is a long flat list.
  EXPECT_EQ(E("1" + Repeat(" + 1", 900)).substr(0, 6), "BinOp(");
  EXPECT_EQ(E("[" + Repeat("1, ", 100000) + "]").substr(0, 5), "List(");
  // Statements: a long elif chain and deep blocks.
  EXPECT_NE(S("if a: pass\n" + Repeat("elif b: pass\n", 5000))
                .find("too many nested"),
            std::string::npos);
  EXPECT_EQ(S("if a: pass\n" + Repeat("elif b: pass\n", 500)).substr(0, 3),
            "If(");
  std::string blocks;
  for (int i = 0; i < 99; ++i) blocks += std::string(i, ' ') + "if x:\n";
  blocks += std::string(99, ' ') + "pass\n";
  EXPECT_EQ(S(blocks).substr(0, 3), "If(");
}

// Bytes chosen at random, and a valid file cut and mutated at random: the
// parser must return, never crash or throw.
TEST(PythonParserTest, SurvivesRandomInput) {
  const std::string seed_text =
      "@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n"
      "    pid = tl.program_id(0)\n"
      "    offs = pid * BLOCK + tl.arange(0, BLOCK)[:, None]\n"
      "    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)\n"
      "    s = f'{x!r:>{BLOCK}} {d[\"k\"]=}'\n"
      "    if x > 0:\n        return -x ** 2\n    else:\n        pass\n"
      "class A(B):\n    def m(self, *a, **k): return [i for i in a if i]\n";
  std::mt19937 rng(12345);
  const std::string alphabet =
      "()[]{}:;,.=+-*/%@&|^~<>!'\"\\#\n\t fxrb0123456789_aif";
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string text = seed_text;
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % (text.size() + 1);
      switch (rng() % 4) {
        case 0:
          text.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 1:
          if (at < text.size()) text.erase(at, 1 + rng() % 5);
          break;
        case 2:
          if (at < text.size()) text[at] = static_cast<char>(rng() % 256);
          break;
        default:
          text = text.substr(0, at);
          break;
      }
    }
    Result<Module> m = ParseModule(text, "fuzz.py");
    Result<ExprPtr> e = ParseExpression(text, "fuzz.py");
    if (m.ok()) {
      for (const StmtPtr& s : m.value().body) Dump(*s);
    }
  }
}

// --- a realistic file
// ------------------------------------------------------------------

constexpr std::string_view kTritonFile = R"PY(
"""Kernels for the smoke test: matmul, softmax, layer norm."""
import math
import os.path as osp
from typing import Optional

try:
    import torch
except ImportError:  # the emulator runs without torch
    torch = None

import triton
import triton.language as tl

if os.environ.get("TRITON_INTERPRET") == "1":
    from triton.interpreter import interpret as _interp
else:
    _interp = None

DEFAULT_BLOCK: tl.constexpr = 128
ACTIVATIONS = {"relu": lambda x: tl.maximum(x, 0.0), "none": None}


def get_configs():
    return [
        triton.Config({'BLOCK_M': bm, 'BLOCK_N': bn, 'BLOCK_K': 32},
                      num_stages=s, num_warps=w)
        for bm in (64, 128) for bn in (64, 128)
        for s, w in [(3, 4), (4, 8)] if bm * bn <= 128 * 128
    ]


@triton.autotune(configs=get_configs(), key=['M', 'N', 'K'])
@triton.heuristics({'EVEN_K': lambda args: args['K'] % args['BLOCK_K'] == 0})
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr,
                  ACTIVATION: tl.constexpr = ""):
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = pid // num_pid_n, pid % num_pid_n
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        accumulator += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    row_start_ptr = in_ptr + row_idx * in_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    row = tl.load(row_start_ptr + col_offsets, mask=col_offsets < n_cols,
                  other=-float('inf'))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    tl.store(out_ptr + row_idx * out_row_stride + col_offsets, softmax_output,
             mask=col_offsets < n_cols)


@triton.jit
def _mean(x, N: tl.constexpr):
    return tl.sum(x, axis=0) / N


@triton.jit
def _rstd(x, mean, N, eps):
    xc = tl.where(tl.arange(0, x.shape[0]) < N, x - mean, 0.)
    var = tl.sum(xc * xc, axis=0) / N
    return 1 / tl.sqrt(var + eps)


@triton.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps,
                   BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = _mean(x, N)
    rstd = _rstd(x, mean, N, eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    w = tl.load(W + cols, mask=cols < N)
    b = tl.load(B + cols, mask=cols < N)
    y = (x - mean) * rstd * w + b
    tl.store(Y + cols, y, mask=cols < N)


class LayerNorm:
    """A host-side wrapper."""

    def __init__(self, n: int, eps: float = 1e-5) -> None:
        self.n, self.eps = n, eps
        self._cache: dict = {}

    def __call__(self, x, *, block: Optional[int] = None):
        assert x.shape[-1] == self.n, f"expected {self.n} columns, got {x.shape[-1]!r}"
        block = block or triton.next_power_of_2(self.n)
        if block > 65536:
            raise RuntimeError(f"row of {self.n:,} columns is too large")
        grid = lambda meta: (x.shape[0],)
        return grid


def softmax(x):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x) if torch is not None else None
    softmax_kernel[(n_rows,)](y, x, x.stride(0), y.stride(0), n_cols,
                              BLOCK_SIZE=triton.next_power_of_2(n_cols))
    return y


if __name__ == "__main__":
    print(softmax, math.pi, osp.sep, sep="\n")
)PY";

TEST(PythonParserTest, ParsesARealisticTritonFile) {
  Result<Module> r = ParseModule(kTritonFile, "kernels.py");
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::vector<std::string> defs;
  for (const StmtPtr& s : r.value().body) {
    EXPECT_NE(s->kind, StmtKind::kUnparsed) << Dump(*s);
    if (const auto* f = As<FunctionDefStmt>(s.get())) defs.push_back(f->name);
    if (const auto* c = As<ClassDefStmt>(s.get())) defs.push_back(c->name);
  }
  EXPECT_EQ(defs,
            (std::vector<std::string>{
                "get_configs", "matmul_kernel", "leaky_relu", "softmax_kernel",
                "_mean", "_rstd", "layer_norm_fwd", "LayerNorm", "softmax"}));
  ASSERT_EQ(r.value().body.size(), 20u);
  EXPECT_EQ(r.value().body[4]->kind, StmtKind::kTry);
  EXPECT_EQ(r.value().body[7]->kind, StmtKind::kIf);

  const auto* matmul = As<FunctionDefStmt>(r.value().body[11].get());
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->decorators.size(), 3u);
  EXPECT_EQ(matmul->args.args.size(), 17u);
  EXPECT_EQ(Dump(matmul->args.args[12].annotation.get()),
            "Attr(Name(tl), constexpr)");
  EXPECT_EQ(Dump(matmul->args.args[16].default_value.get()), "Const('')");
  EXPECT_EQ(matmul->first_line, 33);
  EXPECT_EQ(matmul->loc.line, 36);
  EXPECT_TRUE(matmul->source.starts_with("@triton.autotune("));
  EXPECT_TRUE(matmul->source.ends_with("tl.store(c_ptrs, c, mask=c_mask)"));
  EXPECT_EQ(Dump(*matmul->body[6]),
            "Assign([Name(a_ptrs)], BinOp(+, Name(a_ptr), BinOp(+, "
            "BinOp(*, Sub(Name(offs_am), Tuple(Slice(_, _, _), Const(None))), "
            "Name(stride_am)), BinOp(*, Sub(Name(offs_k), Tuple(Const(None), "
            "Slice(_, _, _))), Name(stride_ak)))))");

  const auto* softmax = As<FunctionDefStmt>(r.value().body[13].get());
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(Dump(*softmax->body[3]),
            "Assign([Name(row)], Call(Attr(Name(tl), load), BinOp(+, "
            "Name(row_start_ptr), Name(col_offsets)), mask=Compare("
            "Name(col_offsets), <, Name(n_cols)), other=UnaryOp(-, "
            "Call(Name(float), Const('inf')))))");
}

TEST(ParseCacheTest, SameTextSharesOneTreeOtherTextParsesAgain) {
  const std::string a = "x = 1\n";
  auto first = ParseModuleCached(a, "cache_test_a.py");
  auto again = ParseModuleCached(std::string(a), "cache_test_a.py");
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(first.value().get(), again.value().get());
  EXPECT_EQ(Dump(*first.value()->body[0]), "Assign([Name(x)], Const(1))");

  // Another file name or another text is its own tree.
  auto renamed = ParseModuleCached(a, "cache_test_b.py");
  auto edited = ParseModuleCached("x = 2\n", "cache_test_a.py");
  ASSERT_TRUE(renamed.ok() && edited.ok());
  EXPECT_NE(renamed.value().get(), first.value().get());
  EXPECT_NE(edited.value().get(), first.value().get());
  EXPECT_EQ(Dump(*edited.value()->body[0]), "Assign([Name(x)], Const(2))");

  // Failures are reported each time, as ParseModule reports them.
  const std::string nul("x = 1\0\n", 7);
  for (int i = 0; i < 2; ++i) {
    auto bad = ParseModuleCached(nul, "cache_test_c.py");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message,
              "cache_test_c.py:1:6: error: source code cannot contain null "
              "bytes");
  }
}

}  // namespace
}  // namespace mtlemu::triton::py
