#include "compiler/triton/python/parser.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/triton/python/lexer.h"

namespace mtlemu::triton::py {
namespace {

// Expressions nested deeper than this (brackets, unary operators, lambdas,
// conditional expressions, `**`, f-string fields) and statements nested
// deeper are an error: it keeps the recursive descent far from the end of
// the stack (at the limit, under 512 KB at -O2 and 2 MB with ASan). It is
// above the tokenizer's 200 brackets, so that 200 nested brackets parse as
// in CPython.
constexpr int kMaxNesting = 250;
// The tree's depth is bounded too, so that destroying it or walking it
// recursively is safe: left-nested chains (a + b + c, a.b.c, x[0][1],
// elif) are parsed in a loop, not by recursion, but each link is one level
// of the tree. Expressions are measured exactly (Parser::Measure);
// statements count their nesting and elif links.
constexpr int kMaxTreeDepth = 1000;
constexpr const char* kTooDeep = "too many nested expressions or statements";

// Thrown at a syntax error and caught at the top-level statement
// (ParseModule) or by ParseExpression; it never leaves this file.
struct SyntaxError {
  std::string message;
  int line = 0;
  int column = 0;
};

bool IsOp(const Token& t, std::string_view op) {
  return t.kind == TokenKind::kOp && t.text == op;
}
bool IsKw(const Token& t, std::string_view keyword) {
  return t.kind == TokenKind::kName && t.text == keyword;
}
bool IsPlainName(const Token& t) {
  return t.kind == TokenKind::kName && !IsKeyword(t.text);
}
bool IsLayout(const Token& t) {
  return t.kind == TokenKind::kNewline || t.kind == TokenKind::kIndent ||
         t.kind == TokenKind::kDedent || t.kind == TokenKind::kEndMarker;
}
// The clauses that continue a compound statement after its first block.
bool StartsClause(const Token& t) {
  return IsKw(t, "else") || IsKw(t, "elif") || IsKw(t, "except") ||
         IsKw(t, "finally");
}

bool StartsExpression(const Token& t) {
  switch (t.kind) {
    case TokenKind::kName:
      return !IsKeyword(t.text) || t.text == "True" || t.text == "False" ||
             t.text == "None" || t.text == "not" || t.text == "lambda" ||
             t.text == "await" || t.text == "yield";
    case TokenKind::kNumber:
    case TokenKind::kString:
    case TokenKind::kFStringStart:
    case TokenKind::kError:
      return true;
    case TokenKind::kOp:
      return t.text == "(" || t.text == "[" || t.text == "{" || t.text == "-" ||
             t.text == "+" || t.text == "~" || t.text == "..." || t.text == "*";
    case TokenKind::kEndMarker:
    case TokenKind::kNewline:
    case TokenKind::kIndent:
    case TokenKind::kDedent:
    case TokenKind::kFStringMiddle:
    case TokenKind::kFStringEnd:
      return false;
  }
  return false;
}

bool StartsTarget(const Token& t) {
  return IsPlainName(t) || IsOp(t, "(") || IsOp(t, "[") || IsOp(t, "*");
}

struct BinaryOperator {
  std::string_view text;
  BinOpKind op;
};
struct BinaryLevel {
  BinaryOperator ops[5];
  int count;
};
// bitwise_or, bitwise_xor, bitwise_and, shift_expr, sum, term: loosest
// first, each left-associative.
constexpr BinaryLevel kBinaryLevels[] = {
    {{{"|", BinOpKind::kBitOr}}, 1},
    {{{"^", BinOpKind::kBitXor}}, 1},
    {{{"&", BinOpKind::kBitAnd}}, 1},
    {{{"<<", BinOpKind::kLShift}, {">>", BinOpKind::kRShift}}, 2},
    {{{"+", BinOpKind::kAdd}, {"-", BinOpKind::kSub}}, 2},
    {{{"*", BinOpKind::kMult},
      {"/", BinOpKind::kDiv},
      {"//", BinOpKind::kFloorDiv},
      {"%", BinOpKind::kMod},
      {"@", BinOpKind::kMatMult}},
     5},
};
constexpr size_t kBitOrLevel = 0;

constexpr BinaryOperator kAugmentedOperators[] = {
    {"+=", BinOpKind::kAdd},     {"-=", BinOpKind::kSub},
    {"*=", BinOpKind::kMult},    {"@=", BinOpKind::kMatMult},
    {"/=", BinOpKind::kDiv},     {"//=", BinOpKind::kFloorDiv},
    {"%=", BinOpKind::kMod},     {"**=", BinOpKind::kPow},
    {"<<=", BinOpKind::kLShift}, {">>=", BinOpKind::kRShift},
    {"|=", BinOpKind::kBitOr},   {"^=", BinOpKind::kBitXor},
    {"&=", BinOpKind::kBitAnd},
};

struct ComparisonOperator {
  std::string_view text;
  CmpOpKind op;
};
constexpr ComparisonOperator kComparisonOperators[] = {
    {"==", CmpOpKind::kEq},  {"!=", CmpOpKind::kNotEq}, {"<", CmpOpKind::kLt},
    {"<=", CmpOpKind::kLtE}, {">", CmpOpKind::kGt},     {">=", CmpOpKind::kGtE},
};

// What an expression is called in "cannot assign to ..." messages, as
// CPython words it.
std::string Describe(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kName:
      return "name";
    case ExprKind::kConstant: {
      const auto& c = static_cast<const ConstantExpr&>(e);
      switch (c.type) {
        case ConstantExpr::Type::kNone:
          return "None";
        case ConstantExpr::Type::kBool:
          return c.bool_value ? "True" : "False";
        case ConstantExpr::Type::kEllipsis:
          return "ellipsis";
        case ConstantExpr::Type::kInt:
        case ConstantExpr::Type::kFloat:
        case ConstantExpr::Type::kString:
        case ConstantExpr::Type::kBytes:
          return "literal";
      }
      return "literal";
    }
    case ExprKind::kUnaryOp:
    case ExprKind::kBinOp:
    case ExprKind::kBoolOp:
      return "expression";
    case ExprKind::kCompare:
      return "comparison";
    case ExprKind::kIfExp:
      return "conditional expression";
    case ExprKind::kCall:
      return "function call";
    case ExprKind::kAttribute:
      return "attribute";
    case ExprKind::kSubscript:
      return "subscript";
    case ExprKind::kSlice:
      return "slice";
    case ExprKind::kTuple:
      return "tuple";
    case ExprKind::kList:
      return "list";
    case ExprKind::kDict:
      return "dict literal";
    case ExprKind::kStarred:
      return "starred";
    case ExprKind::kLambda:
      return "lambda";
    case ExprKind::kListComp:
      return "list comprehension";
    case ExprKind::kGeneratorExp:
      return "generator expression";
    case ExprKind::kJoinedStr:
    case ExprKind::kFormattedValue:
      return "f-string expression";
  }
  return "expression";
}

// Python's float() of a literal's digits (underscores removed). Literals
// too large for a double are inf, too small 0, as in Python.
double ParseFloatLiteral(std::string_view s) {
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc::result_out_of_range) return value;
  // Out of range: decide by the decimal exponent of the leading digit.
  long exponent = 0;
  const size_t e = s.find_first_of("eE");
  if (e != std::string_view::npos) {
    bool negative = false;
    size_t i = e + 1;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    for (; i < s.size(); ++i) {
      exponent = std::min(exponent * 10 + (s[i] - '0'), 1000000L);
    }
    if (negative) exponent = -exponent;
  }
  const std::string_view mantissa = s.substr(0, e);
  const size_t dot = std::min(mantissa.find('.'), mantissa.size());
  const size_t first = mantissa.find_first_of("123456789");
  long magnitude = 0;
  if (first == std::string_view::npos) return 0.0;
  if (first < dot) {
    magnitude = static_cast<long>(dot - first) + exponent;
  } else {
    magnitude = -static_cast<long>(first - dot - 1) + exponent;
  }
  return magnitude > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

int DigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return (c | 0x20) - 'a' + 10;
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, std::string_view source,
         std::string_view file)
      : tokens_(std::move(tokens)), source_(source), file_(file) {}

  Body ParseFile();
  ExprPtr ParseEvalInput();

 private:
  // Counts recursion on the way down; the error comes before the stack
  // runs out.
  class NestingGuard {
   public:
    NestingGuard(Parser& parser, const Token& at) : parser_(parser) {
      if (parser_.recursion_ >= kMaxNesting ||
          parser_.tree_depth_ >= kMaxTreeDepth) {
        parser_.FailAt(at, kTooDeep);
      }
      ++parser_.recursion_;
      ++parser_.tree_depth_;
    }
    ~NestingGuard() {
      --parser_.recursion_;
      --parser_.tree_depth_;
    }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;

   private:
    Parser& parser_;
  };

  // Counts the links of an elif chain, built in a loop.
  class ChainDepth {
   public:
    explicit ChainDepth(Parser& parser) : parser_(parser) {}
    ~ChainDepth() { parser_.tree_depth_ -= links_; }
    void Link(const Token& at) {
      if (parser_.tree_depth_ >= kMaxTreeDepth) parser_.FailAt(at, kTooDeep);
      ++parser_.tree_depth_;
      ++links_;
    }
    ChainDepth(const ChainDepth&) = delete;
    ChainDepth& operator=(const ChainDepth&) = delete;

   private:
    Parser& parser_;
    int links_ = 0;
  };

  // Literal text of a string concatenation or an f-string, merged into one
  // Constant until a replacement field interrupts it.
  struct TextRun {
    std::string text;
    bool started = false;
    SourceLocation loc;
    int end_line = 0;
    int end_column = 0;
  };

  // How a target is bound: kAssign for the only target of `x = value` (where
  // CPython may suggest `==`), kStore for the others (`for`, `with ... as`,
  // comprehensions, chained `=`), kDelete for `del`.
  enum class TargetUse { kAssign, kStore, kDelete };

  // --- tokens
  const Token& Cur() const { return tokens_[pos_]; }
  const Token& Peek(size_t n) const {
    return tokens_[std::min(pos_ + n, tokens_.size() - 1)];
  }
  const Token& Advance() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool AtOp(std::string_view op) const { return IsOp(Cur(), op); }
  bool AtKw(std::string_view keyword) const { return IsKw(Cur(), keyword); }
  bool AcceptOp(std::string_view op) {
    if (!AtOp(op)) return false;
    Advance();
    return true;
  }
  bool AcceptKw(std::string_view keyword) {
    if (!AtKw(keyword)) return false;
    Advance();
    return true;
  }
  const Token& ExpectOp(std::string_view op);
  const Token& ExpectKw(std::string_view keyword);
  std::string ExpectName();

  // --- errors
  [[noreturn]] void FailAt(const Token& t, std::string message) const {
    throw SyntaxError{std::move(message), t.line, t.column};
  }
  [[noreturn]] void FailAt(const Expr& e, std::string message) const {
    throw SyntaxError{std::move(message), e.loc.line, e.loc.column};
  }
  [[noreturn]] void Unexpected(const Token& t) const;
  [[noreturn]] void ExpectedCommaOrClose(const Expr* previous) const;
  bool HasOwnMessage(const Token& t) const;
  void CheckTarget(const Expr& e, TargetUse use,
                   const Expr* root = nullptr) const;
  void CheckNotStarred(const Expr& e) const {
    if (e.kind == ExprKind::kStarred) {
      FailAt(e, "can't use starred expression here");
    }
  }

  // --- nodes
  SourceLocation Loc(const Token& t) const {
    return SourceLocation{file_, t.line, t.column};
  }
  template <class T>
  std::unique_ptr<T> NodeAt(const Token& t) const {
    auto node = std::make_unique<T>();
    node->loc = Loc(t);
    return node;
  }
  // Ends an expression at the last token consumed.
  template <class T>
  ExprPtr Done(std::unique_ptr<T> node) {
    const Token& last = tokens_[pos_ > 0 ? pos_ - 1 : 0];
    node->end_line = last.end_line;
    node->end_column = last.end_column;
    Measure(*node);
    return node;
  }
  // Records a finished expression's height; too tall is an error.
  void Measure(const Expr& e);
  int HeightOf(const Expr* e) const {
    if (!e) return 0;
    const auto it = heights_.find(e);
    return it == heights_.end() ? 1 : it->second;
  }
  std::unique_ptr<ComprehensionExpr> ComprehensionAt(ExprKind kind,
                                                     const Token& t) const {
    auto node = std::make_unique<ComprehensionExpr>(kind);
    node->loc = Loc(t);
    return node;
  }

  // --- expressions, loosest first (the rule names are CPython's)
  ExprPtr ParseStarExpressions();
  ExprPtr ParseStarExpression();
  ExprPtr ParseExpr();
  ExprPtr ParseLambda();
  Arguments ParseParameters(bool lambda);
  Arg ParseParameter(bool lambda, bool vararg = false);
  ExprPtr ParseDisjunction();
  ExprPtr ParseConjunction();
  ExprPtr ParseInversion();
  ExprPtr ParseComparison();
  std::optional<CmpOpKind> AcceptComparisonOperator();
  ExprPtr ParseBinary(size_t level);
  ExprPtr ParseFactor();
  ExprPtr ParsePower();
  ExprPtr ParsePrimary();
  void ParseCallArguments(const Token& open, std::vector<ExprPtr>& args,
                          std::vector<Keyword>& keywords);
  ExprPtr ParseSlices();
  ExprPtr ParseSlice();
  ExprPtr ParseAtom();
  ExprPtr ParseNumber(const Token& t);
  ExprPtr ParseParenthesized();
  ExprPtr ParseListDisplay();
  ExprPtr ParseDictDisplay();
  void ParseElementsUntil(std::vector<ExprPtr>& elts, std::string_view close);
  void ParseComprehensionClauses(std::vector<Comprehension>& generators);
  ExprPtr ParseStrings();
  void ParseFString(std::vector<ExprPtr>& values, TextRun& run);
  void ParseReplacementField(std::vector<ExprPtr>& values, TextRun& run);
  void AddText(TextRun& run, const Token& t, std::string_view text) const;
  void FlushText(TextRun& run, std::vector<ExprPtr>& values);
  ExprPtr ParseTargetList();
  ExprPtr ParseTarget();

  // --- statements
  void ParseStatement(Body& body);
  bool AtMatchStatement() const;
  void ParseSimpleStatements(Body& body);
  StmtPtr ParseSimpleStatement();
  StmtPtr ParseExpressionStatement();
  Body ParseBlock(const Token& header, std::string_view what);
  StmtPtr ParseDecorated();
  StmtPtr ParseFunctionDef(size_t first, std::vector<ExprPtr> decorators);
  StmtPtr ParseClassDef(std::vector<ExprPtr> decorators);
  StmtPtr ParseIf();
  StmtPtr ParseWhile();
  StmtPtr ParseFor();
  StmtPtr ParseWith();
  WithItem ParseWithItem();
  StmtPtr ParseTry();
  StmtPtr ParseImport();
  StmtPtr ParseFromImport();
  std::string ParseDottedName();
  StmtPtr ParseDelete();
  StmtPtr Recover(size_t start, const SyntaxError& error);

  template <class T>
  std::unique_ptr<T> StmtAt(const Token& t) const {
    auto node = std::make_unique<T>();
    node->loc = Loc(t);
    return node;
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  std::string_view source_;
  std::string file_;
  int recursion_ = 0;   // NestingGuards open
  int tree_depth_ = 0;  // NestingGuards open plus ChainDepth links
  // The height of each expression finished in the current top-level
  // statement (leaves may be missing: height 1).
  std::unordered_map<const Expr*, int> heights_;
};

// --- tokens and errors -------------------------------------------------------

// Tokens that explain themselves better than "invalid syntax".
bool Parser::HasOwnMessage(const Token& t) const {
  return t.kind == TokenKind::kError || t.kind == TokenKind::kIndent ||
         IsOp(t, ":=") || IsKw(t, "yield") || IsKw(t, "await") ||
         IsKw(t, "async");
}

void Parser::Unexpected(const Token& t) const {
  switch (t.kind) {
    case TokenKind::kError:
      FailAt(t, t.value);
    case TokenKind::kIndent:
      FailAt(t, "unexpected indent");
    case TokenKind::kEndMarker:
      FailAt(t, "unexpected EOF while parsing");
    case TokenKind::kName:
      if (t.text == "yield") FailAt(t, "unsupported: yield");
      if (t.text == "await") FailAt(t, "unsupported: await");
      if (t.text == "async") FailAt(t, "unsupported: async");
      break;
    case TokenKind::kOp:
      if (t.text == ":=") {
        FailAt(t, "unsupported: assignment expressions (':=')");
      }
      break;
    case TokenKind::kNewline:
    case TokenKind::kDedent:
    case TokenKind::kNumber:
    case TokenKind::kString:
    case TokenKind::kFStringStart:
    case TokenKind::kFStringMiddle:
    case TokenKind::kFStringEnd:
      break;
  }
  FailAt(t, "invalid syntax");
}

// Inside brackets, after an element: neither a comma nor the closing
// bracket came. When the element is an expression (`previous`) and another
// one follows, CPython guesses a missing comma and points at the first.
void Parser::ExpectedCommaOrClose(const Expr* previous) const {
  const Token& t = Cur();
  if (previous && !HasOwnMessage(t) && StartsExpression(t)) {
    FailAt(*previous, "invalid syntax. Perhaps you forgot a comma?");
  }
  Unexpected(t);
}

const Token& Parser::ExpectOp(std::string_view op) {
  const Token& t = Cur();
  if (IsOp(t, op)) return Advance();
  if (!HasOwnMessage(t) && (op == ":" || op == "(")) {
    FailAt(t, "expected '" + std::string(op) + "'");
  }
  Unexpected(t);
}

const Token& Parser::ExpectKw(std::string_view keyword) {
  const Token& t = Cur();
  if (IsKw(t, keyword)) return Advance();
  Unexpected(t);
}

std::string Parser::ExpectName() {
  const Token& t = Cur();
  if (!IsPlainName(t)) Unexpected(t);
  Advance();
  return std::string(t.text);
}

// `root` is the whole target, `e` the part of it being checked.
void Parser::CheckTarget(const Expr& e, TargetUse use, const Expr* root) const {
  if (!root) root = &e;
  const auto fail = [&](const Expr& at, const std::string& what) {
    if (use == TargetUse::kDelete) FailAt(at, "cannot delete " + what);
    std::string message = "cannot assign to " + what;
    // CPython suggests == for `x = y` where x, right before the `=`, reads
    // as an operand (not True, None, False, a lambda or a conditional).
    const bool operand =
        at.kind != ExprKind::kLambda && at.kind != ExprKind::kIfExp &&
        at.kind != ExprKind::kCompare && at.kind != ExprKind::kBoolOp &&
        at.kind != ExprKind::kGeneratorExp &&
        !(at.kind == ExprKind::kConstant &&
          static_cast<const ConstantExpr&>(at).type !=
              ConstantExpr::Type::kEllipsis &&
          (static_cast<const ConstantExpr&>(at).type ==
               ConstantExpr::Type::kNone ||
           static_cast<const ConstantExpr&>(at).type ==
               ConstantExpr::Type::kBool)) &&
        !(at.kind == ExprKind::kUnaryOp &&
          static_cast<const UnaryOpExpr&>(at).op == UnaryOpKind::kNot);
    if (use == TargetUse::kAssign && operand && at.end_line == root->end_line &&
        at.end_column == root->end_column) {
      message += " here. Maybe you meant '==' instead of '='?";
    }
    FailAt(at, message);
  };
  switch (e.kind) {
    case ExprKind::kName:
    case ExprKind::kAttribute:
    case ExprKind::kSubscript:
      return;
    case ExprKind::kTuple:
    case ExprKind::kList: {
      const std::vector<ExprPtr>& elts =
          e.kind == ExprKind::kTuple ? static_cast<const TupleExpr&>(e).elts
                                     : static_cast<const ListExpr&>(e).elts;
      bool starred = false;
      for (const ExprPtr& elt : elts) {
        if (elt->kind != ExprKind::kStarred) {
          CheckTarget(*elt, use, root);
          continue;
        }
        if (use == TargetUse::kDelete) fail(*elt, "starred");
        if (starred) FailAt(e, "multiple starred expressions in assignment");
        starred = true;
        CheckTarget(*static_cast<const StarredExpr&>(*elt).value, use, root);
      }
      return;
    }
    case ExprKind::kStarred:
      if (use == TargetUse::kDelete) fail(e, "starred");
      FailAt(e, "starred assignment target must be in a list or tuple");
    case ExprKind::kConstant:
    case ExprKind::kUnaryOp:
    case ExprKind::kBinOp:
    case ExprKind::kBoolOp:
    case ExprKind::kCompare:
    case ExprKind::kIfExp:
    case ExprKind::kCall:
    case ExprKind::kSlice:
    case ExprKind::kDict:
    case ExprKind::kLambda:
    case ExprKind::kListComp:
    case ExprKind::kGeneratorExp:
    case ExprKind::kJoinedStr:
    case ExprKind::kFormattedValue:
      fail(e, Describe(e));
  }
}

void Parser::Measure(const Expr& e) {
  int tallest = 0;
  const auto child = [&](const Expr* c) {
    tallest = std::max(tallest, HeightOf(c));
  };
  const auto children = [&](const std::vector<ExprPtr>& list) {
    for (const ExprPtr& c : list) child(c.get());
  };
  const auto arguments = [&](const Arguments& a) {
    for (const std::vector<Arg>* list : {&a.posonly, &a.args, &a.kwonly}) {
      for (const Arg& arg : *list) {
        child(arg.annotation.get());
        child(arg.default_value.get());
      }
    }
  };
  switch (e.kind) {
    case ExprKind::kName:
    case ExprKind::kConstant:
      break;
    case ExprKind::kUnaryOp:
      child(static_cast<const UnaryOpExpr&>(e).operand.get());
      break;
    case ExprKind::kBinOp: {
      const auto& b = static_cast<const BinOpExpr&>(e);
      child(b.left.get());
      child(b.right.get());
      break;
    }
    case ExprKind::kBoolOp:
      children(static_cast<const BoolOpExpr&>(e).values);
      break;
    case ExprKind::kCompare: {
      const auto& c = static_cast<const CompareExpr&>(e);
      child(c.left.get());
      children(c.comparators);
      break;
    }
    case ExprKind::kIfExp: {
      const auto& i = static_cast<const IfExpExpr&>(e);
      child(i.test.get());
      child(i.body.get());
      child(i.orelse.get());
      break;
    }
    case ExprKind::kCall: {
      const auto& c = static_cast<const CallExpr&>(e);
      child(c.func.get());
      children(c.args);
      for (const Keyword& k : c.keywords) child(k.value.get());
      break;
    }
    case ExprKind::kAttribute:
      child(static_cast<const AttributeExpr&>(e).value.get());
      break;
    case ExprKind::kSubscript: {
      const auto& s = static_cast<const SubscriptExpr&>(e);
      child(s.value.get());
      child(s.slice.get());
      break;
    }
    case ExprKind::kSlice: {
      const auto& s = static_cast<const SliceExpr&>(e);
      child(s.lower.get());
      child(s.upper.get());
      child(s.step.get());
      break;
    }
    case ExprKind::kTuple:
      children(static_cast<const TupleExpr&>(e).elts);
      break;
    case ExprKind::kList:
      children(static_cast<const ListExpr&>(e).elts);
      break;
    case ExprKind::kDict: {
      const auto& d = static_cast<const DictExpr&>(e);
      children(d.keys);
      children(d.values);
      break;
    }
    case ExprKind::kStarred:
      child(static_cast<const StarredExpr&>(e).value.get());
      break;
    case ExprKind::kLambda: {
      const auto& l = static_cast<const LambdaExpr&>(e);
      arguments(l.args);
      child(l.body.get());
      break;
    }
    case ExprKind::kListComp:
    case ExprKind::kGeneratorExp: {
      const auto& c = static_cast<const ComprehensionExpr&>(e);
      child(c.elt.get());
      for (const Comprehension& g : c.generators) {
        child(g.target.get());
        child(g.iter.get());
        children(g.ifs);
      }
      break;
    }
    case ExprKind::kJoinedStr:
      children(static_cast<const JoinedStrExpr&>(e).values);
      break;
    case ExprKind::kFormattedValue: {
      const auto& f = static_cast<const FormattedValueExpr&>(e);
      child(f.value.get());
      child(f.format_spec.get());
      break;
    }
  }
  if (tallest + 1 > kMaxTreeDepth) FailAt(e, kTooDeep);
  heights_[&e] = tallest + 1;
}

// --- expressions -------------------------------------------------------------

// star_expressions: a tuple without parentheses when there is a comma.
ExprPtr Parser::ParseStarExpressions() {
  const Token& start = Cur();
  ExprPtr first = ParseStarExpression();
  if (!AtOp(",")) return first;
  auto tuple = NodeAt<TupleExpr>(start);
  tuple->elts.push_back(std::move(first));
  while (AcceptOp(",")) {
    if (!StartsExpression(Cur())) break;
    tuple->elts.push_back(ParseStarExpression());
  }
  return Done(std::move(tuple));
}

ExprPtr Parser::ParseStarExpression() {
  if (!AtOp("*")) return ParseExpr();
  const Token& star = Advance();
  auto starred = NodeAt<StarredExpr>(star);
  starred->value = ParseBinary(kBitOrLevel);
  return Done(std::move(starred));
}

// expression: lambda, or a disjunction with an optional `if ... else ...`.
ExprPtr Parser::ParseExpr() {
  const Token& start = Cur();
  NestingGuard guard(*this, start);
  if (AtKw("lambda")) return ParseLambda();
  ExprPtr body = ParseDisjunction();
  if (!AtKw("if")) return body;
  Advance();
  auto e = NodeAt<IfExpExpr>(start);
  e->body = std::move(body);
  e->test = ParseDisjunction();
  if (!AtKw("else")) FailAt(start, "expected 'else' after 'if' expression");
  Advance();
  e->orelse = ParseExpr();
  return Done(std::move(e));
}

ExprPtr Parser::ParseLambda() {
  const Token& keyword = Advance();
  auto lambda = NodeAt<LambdaExpr>(keyword);
  lambda->args = ParseParameters(/*lambda=*/true);
  ExpectOp(":");
  lambda->body = ParseExpr();
  return Done(std::move(lambda));
}

// The parameters of a def (up to its `)`) or a lambda (up to its `:`).
Arguments Parser::ParseParameters(bool lambda) {
  const auto at_close = [&] { return AtOp(lambda ? ":" : ")"); };
  Arguments a;
  bool seen_slash = false;
  bool seen_star = false;
  bool seen_default = false;
  const Token* bare_star = nullptr;
  while (!at_close()) {
    const Token& t = Cur();
    if (a.kwarg) FailAt(t, "arguments cannot follow var-keyword argument");
    if (IsOp(t, "/")) {
      if (seen_slash) FailAt(t, "/ may appear only once");
      if (seen_star) FailAt(t, "/ must be ahead of *");
      if (a.args.empty()) FailAt(t, "at least one argument must precede /");
      Advance();
      a.posonly = std::move(a.args);
      a.args.clear();
      seen_slash = true;
    } else if (IsOp(t, "**")) {
      Advance();
      a.kwarg = ParseParameter(lambda);
      if (AtOp("=")) {
        FailAt(Cur(), "var-keyword argument cannot have default value");
      }
    } else if (IsOp(t, "*")) {
      if (seen_star) FailAt(t, "* argument may appear only once");
      Advance();
      seen_star = true;
      if (AtOp(",") || at_close()) {
        bare_star = &t;
      } else {
        a.vararg = ParseParameter(lambda, /*vararg=*/true);
        if (AtOp("=")) {
          FailAt(Cur(), "var-positional argument cannot have default value");
        }
      }
    } else {
      Arg p = ParseParameter(lambda);
      if (AcceptOp("=")) p.default_value = ParseExpr();
      if (seen_star) {
        a.kwonly.push_back(std::move(p));
      } else {
        if (p.default_value) {
          seen_default = true;
        } else if (seen_default) {
          FailAt(t,
                 "parameter without a default follows parameter with a "
                 "default");
        }
        a.args.push_back(std::move(p));
      }
    }
    if (!AcceptOp(",")) break;
  }
  if (bare_star && a.kwonly.empty()) {
    FailAt(*bare_star, "named arguments must follow bare *");
  }
  std::vector<const Arg*> all;
  for (const Arg& p : a.posonly) all.push_back(&p);
  for (const Arg& p : a.args) all.push_back(&p);
  if (a.vararg) all.push_back(&*a.vararg);
  for (const Arg& p : a.kwonly) all.push_back(&p);
  if (a.kwarg) all.push_back(&*a.kwarg);
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (all[i]->name == all[j]->name) {
        throw SyntaxError{
            "duplicate argument '" + all[i]->name + "' in function definition",
            all[i]->loc.line, all[i]->loc.column};
      }
    }
  }
  return a;
}

// A parameter's name and annotation; *args may be annotated *Ts (PEP 646).
Arg Parser::ParseParameter(bool lambda, bool vararg) {
  Arg p;
  p.loc = Loc(Cur());
  p.name = ExpectName();
  if (!lambda && AcceptOp(":")) {
    p.annotation = vararg ? ParseStarExpression() : ParseExpr();
  }
  return p;
}

ExprPtr Parser::ParseDisjunction() {
  const Token& start = Cur();
  ExprPtr first = ParseConjunction();
  if (!AtKw("or")) return first;
  auto e = NodeAt<BoolOpExpr>(start);
  e->op = BoolOpKind::kOr;
  e->values.push_back(std::move(first));
  while (AcceptKw("or")) e->values.push_back(ParseConjunction());
  return Done(std::move(e));
}

ExprPtr Parser::ParseConjunction() {
  const Token& start = Cur();
  ExprPtr first = ParseInversion();
  if (!AtKw("and")) return first;
  auto e = NodeAt<BoolOpExpr>(start);
  e->op = BoolOpKind::kAnd;
  e->values.push_back(std::move(first));
  while (AcceptKw("and")) e->values.push_back(ParseInversion());
  return Done(std::move(e));
}

ExprPtr Parser::ParseInversion() {
  if (!AtKw("not")) return ParseComparison();
  const Token& keyword = Cur();
  NestingGuard guard(*this, keyword);
  Advance();
  auto e = NodeAt<UnaryOpExpr>(keyword);
  e->op = UnaryOpKind::kNot;
  e->operand = ParseInversion();
  return Done(std::move(e));
}

ExprPtr Parser::ParseComparison() {
  const Token& start = Cur();
  ExprPtr left = ParseBinary(kBitOrLevel);
  std::unique_ptr<CompareExpr> compare;
  while (std::optional<CmpOpKind> op = AcceptComparisonOperator()) {
    if (!compare) {
      compare = NodeAt<CompareExpr>(start);
      compare->left = std::move(left);
    }
    compare->ops.push_back(*op);
    compare->comparators.push_back(ParseBinary(kBitOrLevel));
  }
  if (!compare) return left;
  return Done(std::move(compare));
}

std::optional<CmpOpKind> Parser::AcceptComparisonOperator() {
  const Token& t = Cur();
  if (t.kind == TokenKind::kOp) {
    for (const ComparisonOperator& c : kComparisonOperators) {
      if (t.text == c.text) {
        Advance();
        return c.op;
      }
    }
    return std::nullopt;
  }
  if (IsKw(t, "in")) {
    Advance();
    return CmpOpKind::kIn;
  }
  if (IsKw(t, "not") && IsKw(Peek(1), "in")) {
    Advance();
    Advance();
    return CmpOpKind::kNotIn;
  }
  if (IsKw(t, "is")) {
    Advance();
    return AcceptKw("not") ? CmpOpKind::kIsNot : CmpOpKind::kIs;
  }
  return std::nullopt;
}

ExprPtr Parser::ParseBinary(size_t level) {
  if (level == std::size(kBinaryLevels)) return ParseFactor();
  const Token& start = Cur();
  ExprPtr left = ParseBinary(level + 1);
  while (true) {
    const Token& t = Cur();
    const BinaryLevel& ops = kBinaryLevels[level];
    const BinaryOperator* found = nullptr;
    for (int i = 0; i < ops.count && t.kind == TokenKind::kOp; ++i) {
      if (t.text == ops.ops[i].text) found = &ops.ops[i];
    }
    if (!found) return left;
    Advance();
    auto e = NodeAt<BinOpExpr>(start);
    e->op = found->op;
    e->left = std::move(left);
    e->right = ParseBinary(level + 1);
    left = Done(std::move(e));
  }
}

// factor: unary + - ~, which bind looser than ** on their right.
ExprPtr Parser::ParseFactor() {
  const Token& t = Cur();
  UnaryOpKind op;
  if (IsOp(t, "+")) {
    op = UnaryOpKind::kUAdd;
  } else if (IsOp(t, "-")) {
    op = UnaryOpKind::kUSub;
  } else if (IsOp(t, "~")) {
    op = UnaryOpKind::kInvert;
  } else {
    return ParsePower();
  }
  NestingGuard guard(*this, t);
  Advance();
  auto e = NodeAt<UnaryOpExpr>(t);
  e->op = op;
  e->operand = ParseFactor();
  return Done(std::move(e));
}

// power: primary ['**' factor], so 2**3**2 is 2**(3**2) and 2**-1 works.
ExprPtr Parser::ParsePower() {
  const Token& start = Cur();
  ExprPtr base = ParsePrimary();
  if (!AtOp("**")) return base;
  NestingGuard guard(*this, Cur());
  Advance();
  auto e = NodeAt<BinOpExpr>(start);
  e->op = BinOpKind::kPow;
  e->left = std::move(base);
  e->right = ParseFactor();
  return Done(std::move(e));
}

// primary: an atom followed by .name, (arguments) and [slices].
ExprPtr Parser::ParsePrimary() {
  const Token& start = Cur();
  ExprPtr e = ParseAtom();
  while (true) {
    if (AtOp(".")) {
      Advance();
      auto attribute = NodeAt<AttributeExpr>(start);
      attribute->value = std::move(e);
      attribute->attr = ExpectName();
      e = Done(std::move(attribute));
    } else if (AtOp("(")) {
      const Token& open = Advance();
      auto call = NodeAt<CallExpr>(start);
      call->func = std::move(e);
      ParseCallArguments(open, call->args, call->keywords);
      e = Done(std::move(call));
    } else if (AtOp("[")) {
      Advance();
      auto subscript = NodeAt<SubscriptExpr>(start);
      subscript->value = std::move(e);
      subscript->slice = ParseSlices();
      if (!AtOp("]")) ExpectedCommaOrClose(subscript->slice.get());
      Advance();
      e = Done(std::move(subscript));
    } else {
      return e;
    }
  }
}

// After a call's `(`: arguments up to and including the `)`.
void Parser::ParseCallArguments(const Token& open, std::vector<ExprPtr>& args,
                                std::vector<Keyword>& keywords) {
  bool seen_keyword = false;
  bool seen_double_star = false;
  ComprehensionExpr* generator = nullptr;  // f(x for x in y)
  const Expr* last = nullptr;              // the last argument's value
  while (!AtOp(")")) {
    const Token& t = Cur();
    if (IsOp(t, "*")) {
      if (seen_double_star) {
        FailAt(t,
               "iterable argument unpacking follows keyword argument "
               "unpacking");
      }
      Advance();
      auto starred = NodeAt<StarredExpr>(t);
      starred->value = ParseExpr();
      last = starred->value.get();
      args.push_back(Done(std::move(starred)));
    } else if (IsOp(t, "**")) {
      Advance();
      Keyword k;
      k.loc = Loc(t);
      k.value = ParseExpr();
      last = k.value.get();
      keywords.push_back(std::move(k));
      seen_double_star = true;
    } else if (t.kind == TokenKind::kName && IsOp(Peek(1), "=")) {
      if (t.text == "True" || t.text == "False" || t.text == "None") {
        FailAt(t, "cannot assign to " + std::string(t.text));
      }
      if (IsKeyword(t.text)) Unexpected(t);
      for (const Keyword& k : keywords) {
        if (k.arg && *k.arg == t.text) {
          FailAt(t, "keyword argument repeated: " + std::string(t.text));
        }
      }
      Advance();
      Advance();
      Keyword k;
      k.loc = Loc(t);
      k.arg = std::string(t.text);
      k.value = ParseExpr();
      last = k.value.get();
      keywords.push_back(std::move(k));
      seen_keyword = true;
    } else {
      ExprPtr e = ParseExpr();
      if (AtKw("for") || AtKw("async")) {
        auto g = ComprehensionAt(ExprKind::kGeneratorExp, open);
        g->elt = std::move(e);
        ParseComprehensionClauses(g->generators);
        if (!args.empty() || !keywords.empty() || !AtOp(")")) {
          FailAt(*g->elt, "Generator expression must be parenthesized");
        }
        generator = g.get();
        e = Done(std::move(g));
      } else if (AtOp("=")) {
        FailAt(*e,
               "expression cannot contain assignment, perhaps you meant "
               "\"==\"?");
      }
      if (seen_double_star) {
        FailAt(*e, "positional argument follows keyword argument unpacking");
      }
      if (seen_keyword) {
        FailAt(*e, "positional argument follows keyword argument");
      }
      last = generator ? nullptr : e.get();
      args.push_back(std::move(e));
    }
    if (AtOp(")")) break;
    if (!AtOp(",")) ExpectedCommaOrClose(last);
    Advance();
    if (generator)
      FailAt(*generator->elt, "Generator expression must be parenthesized");
  }
  const Token& close = Advance();
  if (generator) {  // its parentheses are the call's
    generator->end_line = close.end_line;
    generator->end_column = close.end_column;
  }
}

// The inside of x[...]: one slice or expression, or a tuple of them.
ExprPtr Parser::ParseSlices() {
  const Token& start = Cur();
  ExprPtr first = ParseSlice();
  if (!AtOp(",") && first->kind != ExprKind::kStarred) return first;
  auto tuple = NodeAt<TupleExpr>(start);
  tuple->elts.push_back(std::move(first));
  while (AcceptOp(",")) {
    if (AtOp("]")) break;
    tuple->elts.push_back(ParseSlice());
  }
  return Done(std::move(tuple));
}

ExprPtr Parser::ParseSlice() {
  const Token& start = Cur();
  if (AtOp("*")) return ParseStarExpression();
  ExprPtr lower;
  if (!AtOp(":")) {
    lower = ParseExpr();
    if (!AtOp(":")) return lower;
  }
  Advance();
  auto slice = NodeAt<SliceExpr>(start);
  slice->lower = std::move(lower);
  const auto at_end = [&] { return AtOp(",") || AtOp("]"); };
  if (!AtOp(":") && !at_end()) slice->upper = ParseExpr();
  if (AcceptOp(":") && !at_end()) slice->step = ParseExpr();
  return Done(std::move(slice));
}

ExprPtr Parser::ParseAtom() {
  const Token& t = Cur();
  switch (t.kind) {
    case TokenKind::kName: {
      if (t.text == "True" || t.text == "False" || t.text == "None") {
        Advance();
        auto c = NodeAt<ConstantExpr>(t);
        c->type = t.text == "None" ? ConstantExpr::Type::kNone
                                   : ConstantExpr::Type::kBool;
        c->bool_value = t.text == "True";
        return Done(std::move(c));
      }
      if (IsKeyword(t.text)) Unexpected(t);
      Advance();
      auto name = NodeAt<NameExpr>(t);
      name->id = std::string(t.text);
      return Done(std::move(name));
    }
    case TokenKind::kNumber:
      Advance();
      return ParseNumber(t);
    case TokenKind::kString:
    case TokenKind::kFStringStart:
      return ParseStrings();
    case TokenKind::kOp:
      if (t.text == "(") return ParseParenthesized();
      if (t.text == "[") return ParseListDisplay();
      if (t.text == "{") return ParseDictDisplay();
      if (t.text == "...") {
        Advance();
        auto c = NodeAt<ConstantExpr>(t);
        c->type = ConstantExpr::Type::kEllipsis;
        return Done(std::move(c));
      }
      break;
    case TokenKind::kEndMarker:
    case TokenKind::kNewline:
    case TokenKind::kIndent:
    case TokenKind::kDedent:
    case TokenKind::kFStringMiddle:
    case TokenKind::kFStringEnd:
    case TokenKind::kError:
      break;
  }
  Unexpected(t);
}

// A number token (already consumed) as a Constant.
ExprPtr Parser::ParseNumber(const Token& t) {
  auto c = NodeAt<ConstantExpr>(t);
  std::string digits;
  for (char ch : t.text) {
    if (ch != '_') digits += ch;
  }
  if ((digits.back() | 0x20) == 'j') {
    digits.pop_back();
    c->imaginary = true;
  }
  int base = 10;
  if (digits.size() > 1 && digits[0] == '0') {
    const char p = static_cast<char>(digits[1] | 0x20);
    base = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 10;
  }
  if (base == 10 &&
      (c->imaginary || digits.find_first_of(".eE") != std::string::npos)) {
    c->type = ConstantExpr::Type::kFloat;
    c->float_value = ParseFloatLiteral(digits);
    return Done(std::move(c));
  }
  c->type = ConstantExpr::Type::kInt;
  uint64_t value = 0;
  const uint64_t b = static_cast<uint64_t>(base);
  for (size_t i = base == 10 ? 0 : 2; i < digits.size(); ++i) {
    const uint64_t d = static_cast<uint64_t>(DigitValue(digits[i]));
    if (value > (std::numeric_limits<uint64_t>::max() - d) / b) {
      c->int_overflow = true;
      value = 0;
      break;
    }
    value = value * b + d;
  }
  c->int_value = value;
  return Done(std::move(c));
}

// ( ... ): the empty tuple, a parenthesized expression (which keeps its own
// extent, as in CPython), a tuple or a generator expression.
ExprPtr Parser::ParseParenthesized() {
  const Token& open = Advance();
  if (AtOp(")")) {
    Advance();
    auto tuple = NodeAt<TupleExpr>(open);
    tuple->parenthesized = true;
    return Done(std::move(tuple));
  }
  ExprPtr first = ParseStarExpression();
  if (AtKw("for") || AtKw("async")) {
    if (first->kind == ExprKind::kStarred) {
      FailAt(*first, "iterable unpacking cannot be used in comprehension");
    }
    auto g = ComprehensionAt(ExprKind::kGeneratorExp, open);
    g->elt = std::move(first);
    ParseComprehensionClauses(g->generators);
    if (!AtOp(")")) ExpectedCommaOrClose(nullptr);
    Advance();
    return Done(std::move(g));
  }
  if (AtOp(")")) {
    Advance();
    CheckNotStarred(*first);
    return first;
  }
  auto tuple = NodeAt<TupleExpr>(open);
  tuple->parenthesized = true;
  tuple->elts.push_back(std::move(first));
  ParseElementsUntil(tuple->elts, ")");
  return Done(std::move(tuple));
}

ExprPtr Parser::ParseListDisplay() {
  const Token& open = Advance();
  if (AtOp("]")) {
    Advance();
    return Done(NodeAt<ListExpr>(open));
  }
  ExprPtr first = ParseStarExpression();
  if (AtKw("for") || AtKw("async")) {
    if (first->kind == ExprKind::kStarred) {
      FailAt(*first, "iterable unpacking cannot be used in comprehension");
    }
    auto comp = ComprehensionAt(ExprKind::kListComp, open);
    comp->elt = std::move(first);
    ParseComprehensionClauses(comp->generators);
    if (!AtOp("]")) ExpectedCommaOrClose(nullptr);
    Advance();
    return Done(std::move(comp));
  }
  auto list = NodeAt<ListExpr>(open);
  list->elts.push_back(std::move(first));
  ParseElementsUntil(list->elts, "]");
  return Done(std::move(list));
}

// After a display's first element: (',' element)* [','] and the closing
// bracket, consumed.
void Parser::ParseElementsUntil(std::vector<ExprPtr>& elts,
                                std::string_view close) {
  while (!AtOp(close)) {
    if (!AtOp(",")) ExpectedCommaOrClose(elts.back().get());
    Advance();
    if (AtOp(close)) break;
    elts.push_back(ParseStarExpression());
  }
  Advance();
}

// { ... }: a dict. Sets and dict/set comprehensions have no node in ast.h.
ExprPtr Parser::ParseDictDisplay() {
  const Token& open = Advance();
  auto dict = NodeAt<DictExpr>(open);
  bool first = true;
  while (!AtOp("}")) {
    if (AtOp("**")) {
      Advance();
      dict->keys.push_back(nullptr);
      dict->values.push_back(ParseBinary(kBitOrLevel));
    } else {
      if (first && AtOp("*")) FailAt(open, "unsupported: set literals");
      ExprPtr key = ParseExpr();
      if (!AtOp(":")) {
        if (first && (AtKw("for") || AtKw("async"))) {
          FailAt(open, "unsupported: set comprehensions");
        }
        if (first && (AtOp(",") || AtOp("}"))) {
          FailAt(open, "unsupported: set literals");
        }
        if (HasOwnMessage(Cur())) Unexpected(Cur());
        FailAt(*key, "':' expected after dictionary key");
      }
      Advance();
      ExprPtr value = ParseExpr();
      if (first && (AtKw("for") || AtKw("async"))) {
        FailAt(open, "unsupported: dict comprehensions");
      }
      dict->keys.push_back(std::move(key));
      dict->values.push_back(std::move(value));
    }
    first = false;
    if (AtOp("}")) break;
    if (!AtOp(",")) ExpectedCommaOrClose(dict->values.back().get());
    Advance();
  }
  Advance();
  return Done(std::move(dict));
}

void Parser::ParseComprehensionClauses(std::vector<Comprehension>& generators) {
  while (AtKw("for") || AtKw("async")) {
    if (AtKw("async")) FailAt(Cur(), "unsupported: async comprehensions");
    Advance();
    Comprehension c;
    c.target = ParseTargetList();
    ExpectKw("in");
    c.iter = ParseDisjunction();
    while (AcceptKw("if")) c.ifs.push_back(ParseDisjunction());
    generators.push_back(std::move(c));
  }
}

// Adjacent string literals: one Constant, or a JoinedStr when an f-string is
// among them.
ExprPtr Parser::ParseStrings() {
  const Token& first = Cur();
  bool bytes = false;
  bool text = false;
  bool formatted = false;
  std::vector<ExprPtr> values;
  TextRun run;
  while (Cur().kind == TokenKind::kString ||
         Cur().kind == TokenKind::kFStringStart) {
    const Token& t = Cur();
    if (t.kind == TokenKind::kString && t.is_bytes) {
      bytes = true;
    } else {
      text = true;
    }
    if (bytes && text) FailAt(t, "cannot mix bytes and nonbytes literals");
    if (t.kind == TokenKind::kString) {
      Advance();
      AddText(run, t, t.value);
    } else {
      formatted = true;
      ParseFString(values, run);
    }
  }
  if (!formatted) {
    auto c = NodeAt<ConstantExpr>(first);
    c->type = bytes ? ConstantExpr::Type::kBytes : ConstantExpr::Type::kString;
    c->string_value = std::move(run.text);
    return Done(std::move(c));
  }
  FlushText(run, values);
  auto joined = NodeAt<JoinedStrExpr>(first);
  joined->values = std::move(values);
  return Done(std::move(joined));
}

void Parser::ParseFString(std::vector<ExprPtr>& values, TextRun& run) {
  Advance();  // FSTRING_START
  while (true) {
    const Token& t = Cur();
    if (t.kind == TokenKind::kFStringMiddle) {
      Advance();
      AddText(run, t, t.value);
    } else if (IsOp(t, "{")) {
      ParseReplacementField(values, run);
    } else if (t.kind == TokenKind::kFStringEnd) {
      Advance();
      return;
    } else {
      Unexpected(t);
    }
  }
}

// { expression [=] [!conversion] [:format_spec] }
void Parser::ParseReplacementField(std::vector<ExprPtr>& values, TextRun& run) {
  const Token& open = Cur();
  NestingGuard guard(*this, open);
  Advance();
  const Token& first = Cur();
  if (IsOp(first, "}") || IsOp(first, "!") || IsOp(first, ":") ||
      IsOp(first, "=")) {
    FailAt(first, "f-string: valid expression required before '" +
                      std::string(first.text) + "'");
  }
  auto field = NodeAt<FormattedValueExpr>(open);
  field->value = ParseStarExpressions();
  bool debug = false;
  if (AtOp("=")) {  // f"{x=}" shows the expression's text before its value
    Advance();
    AddText(run, open,
            source_.substr(open.end_offset, Cur().offset - open.end_offset));
    debug = true;
  }
  if (AtOp("!")) {
    const Token& bang = Advance();
    const Token& conversion = Cur();
    if (conversion.kind != TokenKind::kName) {
      FailAt(conversion, "f-string: missing conversion character");
    }
    if (conversion.offset != bang.end_offset) {
      FailAt(conversion,
             "f-string: conversion type must come right after the "
             "exclamation mark");
    }
    if (conversion.text != "s" && conversion.text != "r" &&
        conversion.text != "a") {
      FailAt(conversion, "f-string: invalid conversion character '" +
                             std::string(conversion.text) +
                             "': expected 's', 'r', or 'a'");
    }
    field->conversion = conversion.text[0];
    Advance();
  }
  if (AtOp(":")) {
    const Token& colon = Advance();
    auto spec = NodeAt<JoinedStrExpr>(colon);
    TextRun spec_run;
    while (!AtOp("}")) {
      const Token& t = Cur();
      if (t.kind == TokenKind::kFStringMiddle) {
        Advance();
        AddText(spec_run, t, t.value);
      } else if (IsOp(t, "{")) {
        ParseReplacementField(spec->values, spec_run);
      } else {
        Unexpected(t);
      }
    }
    FlushText(spec_run, spec->values);
    field->format_spec = Done(std::move(spec));
  }
  if (!AtOp("}")) {
    if (HasOwnMessage(Cur())) Unexpected(Cur());
    FailAt(Cur(), "f-string: expecting '=', or '!', or ':', or '}'");
  }
  Advance();
  if (debug && field->conversion == 0 && !field->format_spec) {
    field->conversion = 'r';
  }
  FlushText(run, values);
  values.push_back(Done(std::move(field)));
}

void Parser::AddText(TextRun& run, const Token& t,
                     std::string_view text) const {
  if (!run.started) {
    run.started = true;
    run.loc = Loc(t);
  }
  run.text += text;
  run.end_line = t.end_line;
  run.end_column = t.end_column;
}

void Parser::FlushText(TextRun& run, std::vector<ExprPtr>& values) {
  if (!run.text.empty()) {
    auto c = std::make_unique<ConstantExpr>();
    c->loc = run.loc;
    c->end_line = run.end_line;
    c->end_column = run.end_column;
    c->type = ConstantExpr::Type::kString;
    c->string_value = std::move(run.text);
    heights_[c.get()] = 1;
    values.push_back(std::move(c));
  }
  run = TextRun{};
}

// star_targets of `for` and comprehensions: `a`, `a, *b`, `(a, b), c[0]`.
ExprPtr Parser::ParseTargetList() {
  const Token& start = Cur();
  ExprPtr first = ParseTarget();
  if (!AtOp(",")) {
    CheckTarget(*first, TargetUse::kStore);
    return first;
  }
  auto tuple = NodeAt<TupleExpr>(start);
  tuple->elts.push_back(std::move(first));
  while (AcceptOp(",")) {
    if (!StartsTarget(Cur())) break;
    tuple->elts.push_back(ParseTarget());
  }
  ExprPtr result = Done(std::move(tuple));
  CheckTarget(*result, TargetUse::kStore);
  return result;
}

ExprPtr Parser::ParseTarget() {
  if (!AtOp("*")) return ParsePrimary();
  const Token& star = Advance();
  auto starred = NodeAt<StarredExpr>(star);
  starred->value = ParsePrimary();
  return Done(std::move(starred));
}

// --- statements --------------------------------------------------------------

void Parser::ParseStatement(Body& body) {
  const Token& t = Cur();
  NestingGuard guard(*this, t);
  if (t.kind == TokenKind::kIndent) FailAt(t, "unexpected indent");
  if (IsOp(t, "@") || IsKw(t, "def") || IsKw(t, "class")) {
    body.push_back(ParseDecorated());
    return;
  }
  if (t.kind == TokenKind::kName) {
    if (t.text == "if") {
      body.push_back(ParseIf());
      return;
    }
    if (t.text == "while") {
      body.push_back(ParseWhile());
      return;
    }
    if (t.text == "for") {
      body.push_back(ParseFor());
      return;
    }
    if (t.text == "try") {
      body.push_back(ParseTry());
      return;
    }
    if (t.text == "with") {
      body.push_back(ParseWith());
      return;
    }
    if (t.text == "async") {
      const Token& next = Peek(1);
      FailAt(t, "unsupported: async " +
                    std::string(next.kind == TokenKind::kName ? next.text
                                                              : "statements"));
    }
    if (t.text == "match" && AtMatchStatement()) {
      FailAt(t, "unsupported: match statement");
    }
  }
  ParseSimpleStatements(body);
}

// At the soft keyword `match`: whether its logical line ends in `:`, which
// no simple statement does.
bool Parser::AtMatchStatement() const {
  size_t p = pos_ + 1;
  if (IsLayout(tokens_[p])) return false;
  while (tokens_[p].kind != TokenKind::kNewline &&
         tokens_[p].kind != TokenKind::kEndMarker) {
    ++p;
  }
  return IsOp(tokens_[p - 1], ":");
}

// simple_stmt (';' simple_stmt)* [';'] NEWLINE
void Parser::ParseSimpleStatements(Body& body) {
  while (true) {
    body.push_back(ParseSimpleStatement());
    if (!AcceptOp(";")) break;
    if (Cur().kind == TokenKind::kNewline) break;
  }
  if (Cur().kind != TokenKind::kNewline) Unexpected(Cur());
  Advance();
}

StmtPtr Parser::ParseSimpleStatement() {
  const Token& t = Cur();
  if (t.kind != TokenKind::kName) return ParseExpressionStatement();
  const auto simple = [&](StmtKind kind) {
    Advance();
    auto s = std::make_unique<SimpleStmt>(kind);
    s->loc = Loc(t);
    return s;
  };
  if (t.text == "pass") return simple(StmtKind::kPass);
  if (t.text == "break") return simple(StmtKind::kBreak);
  if (t.text == "continue") return simple(StmtKind::kContinue);
  if (t.text == "return") {
    Advance();
    auto s = StmtAt<ReturnStmt>(t);
    if (StartsExpression(Cur())) {
      s->value = ParseStarExpressions();
      CheckNotStarred(*s->value);
    }
    return s;
  }
  if (t.text == "raise") {
    Advance();
    auto s = StmtAt<RaiseStmt>(t);
    if (StartsExpression(Cur())) {
      s->exc = ParseExpr();
      if (AcceptKw("from")) s->cause = ParseExpr();
    }
    return s;
  }
  if (t.text == "global" || t.text == "nonlocal") {
    Advance();
    auto s = std::make_unique<NamesStmt>(
        t.text == "global" ? StmtKind::kGlobal : StmtKind::kNonlocal);
    s->loc = Loc(t);
    do {
      s->names.push_back(ExpectName());
    } while (AcceptOp(","));
    return s;
  }
  if (t.text == "assert") {
    Advance();
    auto s = StmtAt<AssertStmt>(t);
    s->test = ParseExpr();
    if (AcceptOp(",")) s->msg = ParseExpr();
    return s;
  }
  if (t.text == "del") return ParseDelete();
  if (t.text == "import") return ParseImport();
  if (t.text == "from") return ParseFromImport();
  if (t.text == "type" && IsPlainName(Peek(1)) &&
      (IsOp(Peek(2), "=") || IsOp(Peek(2), "["))) {
    FailAt(t, "unsupported: type alias statement");
  }
  return ParseExpressionStatement();
}

// An expression statement, or an assignment of any of the three kinds.
StmtPtr Parser::ParseExpressionStatement() {
  const Token& start = Cur();
  ExprPtr first = ParseStarExpressions();
  if (AtOp(":")) {
    switch (first->kind) {
      case ExprKind::kName:
      case ExprKind::kAttribute:
      case ExprKind::kSubscript:
        break;
      case ExprKind::kTuple:
        FailAt(*first, "only single target (not tuple) can be annotated");
      case ExprKind::kList:
        FailAt(*first, "only single target (not list) can be annotated");
      default:
        FailAt(*first, "illegal target for annotation");
    }
    Advance();
    auto s = StmtAt<AnnAssignStmt>(start);
    s->target = std::move(first);
    s->annotation = ParseExpr();
    if (AcceptOp("=")) {
      s->value = ParseStarExpressions();
      CheckNotStarred(*s->value);
    }
    return s;
  }
  if (AtOp("=")) {
    std::vector<ExprPtr> chain;
    chain.push_back(std::move(first));
    while (AcceptOp("=")) chain.push_back(ParseStarExpressions());
    auto s = StmtAt<AssignStmt>(start);
    s->value = std::move(chain.back());
    chain.pop_back();
    CheckNotStarred(*s->value);
    for (const ExprPtr& target : chain) {
      CheckTarget(*target,
                  chain.size() == 1 ? TargetUse::kAssign : TargetUse::kStore);
    }
    s->targets = std::move(chain);
    return s;
  }
  for (const BinaryOperator& op : kAugmentedOperators) {
    if (!AtOp(op.text)) continue;
    if (first->kind != ExprKind::kName && first->kind != ExprKind::kAttribute &&
        first->kind != ExprKind::kSubscript) {
      FailAt(*first, "'" + Describe(*first) +
                         "' is an illegal expression for augmented "
                         "assignment");
    }
    Advance();
    auto s = StmtAt<AugAssignStmt>(start);
    s->target = std::move(first);
    s->op = op.op;
    s->value = ParseStarExpressions();
    CheckNotStarred(*s->value);
    return s;
  }
  if (const auto* name = As<NameExpr>(first.get());
      name && (name->id == "print" || name->id == "exec") &&
      StartsExpression(Cur()) && !HasOwnMessage(Cur())) {
    FailAt(*first, "Missing parentheses in call to '" + name->id +
                       "'. Did you mean " + name->id + "(...)?");
  }
  CheckNotStarred(*first);
  auto s = StmtAt<ExprStmt>(start);
  s->value = std::move(first);
  return s;
}

// ':' then the statements on the same line, or an indented block.
Body Parser::ParseBlock(const Token& header, std::string_view what) {
  ExpectOp(":");
  Body body;
  if (Cur().kind != TokenKind::kNewline) {
    ParseSimpleStatements(body);
    return body;
  }
  const Token& newline = Advance();
  if (Cur().kind != TokenKind::kIndent) {
    // At the end of the input, CPython points at the header's line end.
    const Token& at = Cur().kind == TokenKind::kEndMarker ? newline : Cur();
    FailAt(at, "expected an indented block after " + std::string(what) +
                   " on line " + std::to_string(header.line));
  }
  Advance();
  while (Cur().kind != TokenKind::kDedent &&
         Cur().kind != TokenKind::kEndMarker) {
    ParseStatement(body);
  }
  Advance();
  return body;
}

StmtPtr Parser::ParseDecorated() {
  const size_t first = pos_;
  std::vector<ExprPtr> decorators;
  while (AtOp("@")) {
    Advance();
    decorators.push_back(ParseExpr());
    if (Cur().kind != TokenKind::kNewline) Unexpected(Cur());
    Advance();
  }
  if (AtKw("def")) return ParseFunctionDef(first, std::move(decorators));
  if (AtKw("class")) return ParseClassDef(std::move(decorators));
  if (AtKw("async")) FailAt(Cur(), "unsupported: async def");
  Unexpected(Cur());
}

StmtPtr Parser::ParseFunctionDef(size_t first,
                                 std::vector<ExprPtr> decorators) {
  const Token& keyword = Advance();
  auto fn = StmtAt<FunctionDefStmt>(keyword);
  fn->name = ExpectName();
  if (AtOp("[")) FailAt(Cur(), "unsupported: type parameters");
  ExpectOp("(");
  fn->args = ParseParameters(/*lambda=*/false);
  if (!AtOp(")")) ExpectedCommaOrClose(nullptr);
  Advance();
  if (AcceptOp("->")) fn->returns = ParseExpr();
  fn->body = ParseBlock(keyword, "function definition");
  fn->decorators = std::move(decorators);
  size_t last = pos_ - 1;
  while (last > first && IsLayout(tokens_[last])) --last;
  const Token& begin = tokens_[first];
  fn->source = std::string(
      source_.substr(begin.offset, tokens_[last].end_offset - begin.offset));
  fn->first_line = begin.line;
  return fn;
}

StmtPtr Parser::ParseClassDef(std::vector<ExprPtr> decorators) {
  const Token& keyword = Advance();
  auto cls = StmtAt<ClassDefStmt>(keyword);
  cls->name = ExpectName();
  if (AtOp("[")) FailAt(Cur(), "unsupported: type parameters");
  if (AtOp("(")) {
    const Token& open = Advance();
    ParseCallArguments(open, cls->bases, cls->keywords);
  }
  cls->body = ParseBlock(keyword, "class definition");
  cls->decorators = std::move(decorators);
  return cls;
}

StmtPtr Parser::ParseIf() {
  const auto clause = [&](IfStmt& s, const Token& keyword,
                          std::string_view what) {
    s.test = ParseExpr();
    if (AtOp("=")) {
      FailAt(*s.test,
             "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
    }
    s.body = ParseBlock(keyword, what);
  };
  const Token& keyword = Advance();
  auto top = StmtAt<IfStmt>(keyword);
  clause(*top, keyword, "'if' statement");
  IfStmt* last = top.get();
  ChainDepth chain(*this);
  while (AtKw("elif")) {  // a loop, not recursion: long chains are common
    chain.Link(Cur());
    const Token& elif = Advance();
    auto next = StmtAt<IfStmt>(elif);
    clause(*next, elif, "'elif' statement");
    IfStmt* inner = next.get();
    last->orelse.push_back(std::move(next));
    last = inner;
  }
  if (AtKw("else")) {
    const Token& otherwise = Advance();
    last->orelse = ParseBlock(otherwise, "'else' statement");
  }
  return top;
}

StmtPtr Parser::ParseWhile() {
  const Token& keyword = Advance();
  auto s = StmtAt<WhileStmt>(keyword);
  s->test = ParseExpr();
  if (AtOp("=")) {
    FailAt(*s->test,
           "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
  }
  s->body = ParseBlock(keyword, "'while' statement");
  if (AtKw("else")) {
    const Token& otherwise = Advance();
    s->orelse = ParseBlock(otherwise, "'else' statement");
  }
  return s;
}

StmtPtr Parser::ParseFor() {
  const Token& keyword = Advance();
  auto s = StmtAt<ForStmt>(keyword);
  s->target = ParseTargetList();
  ExpectKw("in");
  s->iter = ParseStarExpressions();
  CheckNotStarred(*s->iter);
  s->body = ParseBlock(keyword, "'for' statement");
  if (AtKw("else")) {
    const Token& otherwise = Advance();
    s->orelse = ParseBlock(otherwise, "'else' statement");
  }
  return s;
}

StmtPtr Parser::ParseWith() {
  const Token& keyword = Advance();
  auto s = StmtAt<WithStmt>(keyword);
  if (AtOp("(")) {
    // `with (a as b, c):` or a parenthesized expression `with (a, b)[0]:`;
    // try the first, fall back to the second.
    const size_t saved = pos_;
    try {
      Advance();
      std::vector<WithItem> items;
      while (true) {
        items.push_back(ParseWithItem());
        if (AtOp(")")) break;
        ExpectOp(",");
        if (AtOp(")")) break;
      }
      Advance();
      if (!AtOp(":")) throw SyntaxError{};
      s->items = std::move(items);
    } catch (const SyntaxError&) {
      pos_ = saved;
    }
  }
  if (s->items.empty()) {
    do {
      s->items.push_back(ParseWithItem());
    } while (AcceptOp(","));
  }
  s->body = ParseBlock(keyword, "'with' statement");
  return s;
}

WithItem Parser::ParseWithItem() {
  WithItem item;
  item.context_expr = ParseExpr();
  if (AcceptKw("as")) {
    item.optional_vars = ParseTarget();
    CheckTarget(*item.optional_vars, TargetUse::kStore);
  }
  return item;
}

StmtPtr Parser::ParseTry() {
  const Token& keyword = Advance();
  auto s = StmtAt<TryStmt>(keyword);
  s->body = ParseBlock(keyword, "'try' statement");
  const Token* bare = nullptr;  // an `except:`, which must be the last
  while (AtKw("except")) {
    const Token& except = Advance();
    if (AtOp("*")) FailAt(Cur(), "unsupported: except* (exception groups)");
    if (bare) FailAt(*bare, "default 'except:' must be last");
    ExceptHandler handler;
    handler.loc = Loc(except);
    if (AtOp(":")) {
      bare = &except;
    } else {
      handler.type = ParseExpr();
      if (AtOp(",")) {
        FailAt(*handler.type, "multiple exception types must be parenthesized");
      }
      if (AcceptKw("as")) handler.name = ExpectName();
    }
    handler.body = ParseBlock(except, "'except' statement");
    s->handlers.push_back(std::move(handler));
  }
  if (AtKw("else") && !s->handlers.empty()) {
    const Token& otherwise = Advance();
    s->orelse = ParseBlock(otherwise, "'else' statement");
  }
  bool has_finally = false;
  if (AtKw("finally")) {
    const Token& finally = Advance();
    s->finalbody = ParseBlock(finally, "'finally' statement");
    has_finally = true;
  }
  if (s->handlers.empty() && !has_finally) {
    FailAt(Cur(), "expected 'except' or 'finally' block");
  }
  return s;
}

StmtPtr Parser::ParseImport() {
  const Token& keyword = Advance();
  auto s = StmtAt<ImportStmt>(keyword);
  do {
    Alias alias;
    alias.loc = Loc(Cur());
    alias.name = ParseDottedName();
    if (AcceptKw("as")) alias.asname = ExpectName();
    s->names.push_back(std::move(alias));
  } while (AcceptOp(","));
  return s;
}

StmtPtr Parser::ParseFromImport() {
  const Token& keyword = Advance();
  auto s = StmtAt<ImportFromStmt>(keyword);
  while (AtOp(".") || AtOp("...")) {
    s->level += static_cast<int>(Advance().text.size());
  }
  if (!AtKw("import") || s->level == 0) s->module = ParseDottedName();
  ExpectKw("import");
  if (AtOp("*")) {
    Alias alias;
    alias.loc = Loc(Cur());
    alias.name = "*";
    Advance();
    s->names.push_back(std::move(alias));
    return s;
  }
  const bool parenthesized = AcceptOp("(");
  while (true) {
    Alias alias;
    alias.loc = Loc(Cur());
    alias.name = ExpectName();
    if (AcceptKw("as")) alias.asname = ExpectName();
    s->names.push_back(std::move(alias));
    if (!AcceptOp(",")) break;
    if (parenthesized && AtOp(")")) break;
    if (!parenthesized && !IsPlainName(Cur())) {
      if (HasOwnMessage(Cur())) Unexpected(Cur());
      FailAt(Cur(),
             "trailing comma not allowed without surrounding parentheses");
    }
  }
  if (parenthesized) {
    if (!AtOp(")")) ExpectedCommaOrClose(nullptr);
    Advance();
  }
  return s;
}

std::string Parser::ParseDottedName() {
  std::string name = ExpectName();
  while (AcceptOp(".")) name += "." + ExpectName();
  return name;
}

StmtPtr Parser::ParseDelete() {
  const Token& keyword = Advance();
  auto s = StmtAt<DeleteStmt>(keyword);
  while (true) {
    if (AtOp("*")) FailAt(Cur(), "cannot delete starred");
    ExprPtr target = ParsePrimary();
    CheckTarget(*target, TargetUse::kDelete);
    s->targets.push_back(std::move(target));
    if (!AcceptOp(",") || !StartsTarget(Cur())) break;
  }
  return s;
}

// The top-level statement starting at token `start` did not parse: skips to
// the next one, through its indented blocks, its else/elif/except/finally
// clauses and, for a decorator, the def or class below it.
StmtPtr Parser::Recover(size_t start, const SyntaxError& error) {
  auto unparsed = std::make_unique<UnparsedStmt>();
  unparsed->loc = Loc(tokens_[start]);
  unparsed->error = error.message;
  unparsed->error_loc = SourceLocation{file_, error.line, error.column};
  int last_line = tokens_[start].line;
  int depth = 0;
  size_t line_first = start;  // the first token of the current logical line
  size_t p = start;
  bool done = false;
  while (!done && tokens_[p].kind != TokenKind::kEndMarker) {
    const Token& t = tokens_[p++];
    const Token& next = tokens_[p];
    switch (t.kind) {
      case TokenKind::kIndent:
        ++depth;
        line_first = p;
        break;
      case TokenKind::kDedent:
        --depth;
        line_first = p;
        done = depth <= 0 && !StartsClause(next);
        depth = std::max(depth, 0);
        break;
      case TokenKind::kNewline:
        done = depth == 0 && next.kind != TokenKind::kIndent &&
               !StartsClause(next) && !IsOp(tokens_[line_first], "@");
        line_first = p;
        break;
      default: {
        last_line = std::max(last_line, t.end_line);
        const size_t here = p - 1;
        const bool starts_line =
            here == line_first ||
            (here == line_first + 1 && IsKw(tokens_[line_first], "async"));
        if (depth == 0 && unparsed->defines.empty() && starts_line &&
            (IsKw(t, "def") || IsKw(t, "class")) && IsPlainName(next)) {
          unparsed->defines = std::string(next.text);
        }
        break;
      }
    }
  }
  pos_ = std::max(p, std::min(start + 1, tokens_.size() - 1));
  unparsed->last_line = last_line;
  return unparsed;
}

Body Parser::ParseFile() {
  Body body;
  while (Cur().kind != TokenKind::kEndMarker) {
    const size_t start = pos_;
    const size_t count = body.size();
    try {
      ParseStatement(body);
    } catch (const SyntaxError& error) {
      body.erase(body.begin() + static_cast<std::ptrdiff_t>(count), body.end());
      body.push_back(Recover(start, error));
    }
    heights_.clear();
  }
  return body;
}

ExprPtr Parser::ParseEvalInput() {
  if (Cur().kind == TokenKind::kIndent) Advance();  // leading whitespace
  ExprPtr e = ParseStarExpressions();
  CheckNotStarred(*e);
  while (Cur().kind == TokenKind::kNewline ||
         Cur().kind == TokenKind::kDedent) {
    Advance();
  }
  if (Cur().kind != TokenKind::kEndMarker) Unexpected(Cur());
  return e;
}

}  // namespace

Result<Module> ParseModule(std::string_view source, std::string_view file) {
  try {
    Result<std::vector<Token>> tokens = Tokenize(source, file);
    if (!tokens.ok()) return tokens.error();
    Parser parser(std::move(tokens).value(), source, file);
    Module module;
    module.file = std::string(file);
    module.source = std::string(source);
    module.body = parser.ParseFile();
    return module;
  } catch (...) {  // std::bad_alloc; syntax errors are caught per statement
    return Error{FormatDiagnostic(file, 1, 0, "out of memory")};
  }
}

Result<ExprPtr> ParseExpression(std::string_view text, std::string_view file,
                                int first_line) {
  try {
    Result<std::vector<Token>> tokens = Tokenize(text, file, first_line);
    if (!tokens.ok()) return tokens.error();
    Parser parser(std::move(tokens).value(), text, file);
    return parser.ParseEvalInput();
  } catch (const SyntaxError& error) {
    return Error{
        FormatDiagnostic(file, error.line, error.column, error.message)};
  } catch (...) {
    return Error{FormatDiagnostic(file, first_line, 0, "out of memory")};
  }
}

}  // namespace mtlemu::triton::py
