// The pieces of TTIR's text below the operations, for reader.cpp: a cursor
// over the text with MLIR's lexical rules (whitespace, // comments, words,
// strings), numbers, types (including the stripped "<tensor<...>>" form),
// attributes, locations and their #aliases, and value names; errors come
// out as "file:line:col: error: ...". Nesting is bounded.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/result.h"
#include "compiler/triton/ir/ir.h"

namespace mtlemu::triton::ttir::internal {

using ir::ArrayAttr;
using ir::Attribute;
using ir::DenseAttr;
using ir::FloatAttr;
using ir::FloatFormat;
using ir::IntAttr;
using ir::Operation;
using ir::Type;

// Nesting (regions, types, attributes, locations) deeper than this is an
// error, so that malformed input cannot exhaust the stack.
constexpr int kMaxDepth = 128;
// Chains of location aliases (each resolved once) may be longer.
constexpr int kMaxLocDepth = 1000;
// The most elements and dimensions a tensor type may have.
constexpr int64_t kMaxElements = int64_t{1} << 40;
constexpr size_t kMaxRank = 64;

// --- locations as written ----------------------------------------------------

struct LocNode {
  enum Kind { kFile, kUnknown, kName, kCallSite, kFused, kAlias };
  Kind kind = kUnknown;
  std::string text;  // the file, the name or the alias
  int line = 0;
  int column = 0;
  // kName: the location inside (if written); kCallSite: callee, caller;
  // kFused: the parts.
  std::vector<int> children;
  size_t pos = 0;
};

struct ResolvedLoc {
  SourceLocation loc;
  std::string name;  // the first name in the location, if any
};

struct AliasDef {
  int node = -1;
  size_t pos = 0;
  int state = 0;  // 0: not resolved, 1: being resolved, 2: resolved
  ResolvedLoc resolved;
};

// A use of a value as written: %name or %name#index.
struct ValueRef {
  std::string name;
  int index = -1;
  size_t pos = 0;
};

// A literal number as written.
struct Number {
  bool is_float = false;  // written with a '.'
  bool is_hex = false;    // 0x...: the bits
  int64_t integer = 0;
  std::string text;
  size_t pos = 0;
};

// A dense<...> element or nested list, before the type is known.
struct DenseNode {
  bool is_list = false;
  std::optional<bool> boolean;
  Number number;
  std::vector<DenseNode> items;
  size_t pos = 0;
};

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
inline bool IsIdStart(char c) { return IsLetter(c) || c == '_'; }
inline bool IsIdChar(char c) {
  return IsLetter(c) || IsDigit(c) || c == '_' || c == '$' || c == '.';
}
inline bool IsSsaChar(char c) { return IsIdChar(c) || c == '-'; }
inline bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

inline bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

inline std::string TypeText(const Type* t) { return t ? t->ToString() : "?"; }

class TextParser {
 public:
  TextParser(std::string_view text, std::string_view file)
      : text_(text), file_(file) {}

 protected:
  // --- errors and positions --------------------------------------------------

  bool Fail(size_t pos, const std::string& message);

  std::string Where(size_t pos) const;

  // "3:14" for a message that points elsewhere.
  std::string LineCol(size_t pos) const;

  // --- characters and words --------------------------------------------------

  void SkipSpace();
  bool AtEnd();
  char Peek();
  char Raw(size_t offset = 0) const;
  size_t Here();
  bool Try(char c);
  bool Expect(char c, const std::string& context);
  bool TryArrow();
  bool ExpectArrow(const std::string& context);
  // ", found 'xyz'" describing what is at the cursor.
  std::string Found();
  // The identifier at the cursor ([A-Za-z_][A-Za-z0-9_$.]*), not consumed.
  std::string_view PeekWord();
  bool TryWord(std::string_view w);
  bool ExpectWord(std::string_view w, const std::string& context);
  bool ParseWord(std::string* out, const std::string& what);

  bool ParseString(std::string* out);

  // One more level of nesting at `depth`; false (an error) past kMaxDepth.
  bool Deeper(int* depth);

  // --- numbers ---------------------------------------------------------------

  bool ParseNumber(Number* n);

  // The integer `n` in type `t` (an integer type), sign-extended.
  bool IntIn(const Number& n, const Type* t, int64_t* out);

  // The number `n` as a value of float type `t`.
  bool FloatIn(const Number& n, const Type* t, double* out);

  // --- types -----------------------------------------------------------------

  bool ParseType(const Type** out);

  bool ParseTypeAt(const Type** out, int depth);

  // "<pointee [, address space]>".
  bool ParsePointerBody(const Type** out, int depth);

  // "<tensor<...>>".
  bool ParseDescBody(const Type** out, int depth);

  // "<32x32xf32>" (after "tensor").
  bool ParseTensorBody(const Type** out, int depth, size_t start);

  // A pointer type, also written without "!tt.ptr" ("<tensor<8xf16>>") as
  // Triton prints it where the op's syntax implies it.
  bool ParsePointerType(const Type** out);
  bool ParseDescType(const Type** out);

  bool ParseTypeList(std::vector<const Type*>* out);

  // "(A, B)" or "()".
  bool ParseParenTypes(std::vector<const Type*>* out);

  // A function type's results: "T", "(T, U)" or "()".
  bool ParseResultTypes(std::vector<const Type*>* out);

  bool ParseFunctionType(std::vector<const Type*>* ins,
                         std::vector<const Type*>* outs);

  // --- attributes ------------------------------------------------------------

  bool ParseAttr(Attribute* out, int depth = 0);

  bool ParseNumberAttr(Attribute* out);

  // "[1, 2]": integers only (the IR's ArrayAttr).
  bool ParseListAttr(Attribute* out, int depth);

  // "#dialect.name<body>" (#arith.fastmath<none>): the body, as a string.
  bool ParseDialectAttr(Attribute* out, int depth);

  // "array<i32: 1, 0>", "array<i32>", "array<i1: true>".
  bool ParseArrayAttr(Attribute* out);

  bool ParseDenseNode(DenseNode* node, int depth);

  bool DenseValue(const DenseNode& node, const Type* element,
                  std::variant<int64_t, double>* out);

  bool FlattenDense(const DenseNode& node, const std::vector<int64_t>& shape,
                    size_t dim, const Type* element, DenseAttr* out);

  bool ParseDense(Attribute* out, int depth);

  // "0x..." raw data: each element's bytes, little-endian.
  bool DenseFromHex(const std::string& hex, const Type* element, size_t at,
                    DenseAttr* dense);

  // "{a = 1 : i32, b, "c-d" = ...}"; a key without a value is a unit
  // attribute (true).
  bool ParseAttrDict(std::map<std::string, Attribute>* out);

  bool ParseOptionalAttrDict(Operation* op);

  // --- locations -------------------------------------------------------------

  // After "loc": "(" location ")".
  bool ParseLocParens(int* node);

  // An optional "loc(...)": its node, or -1.
  bool TryLoc(int* node);

  int AddLoc(LocNode n);

  bool ParseLocExpr(int* node, int depth);

  // "#name = loc(...)" at the top level.
  bool ParseAliasDef();

  // The SourceLocation that location `node` stands for, and the first name
  // in it: a named loc gives the location inside; callsite(callee at
  // caller) the callee, unless it is unknown or inside Triton's library
  // (a path with "/triton/language/"), then the caller; fused[...] its
  // first known part. Each alias is resolved once.
  bool ResolveLoc(int node, int depth, ResolvedLoc* out);

  // --- values ----------------------------------------------------------------

  bool ParseValueRef(ValueRef* ref);

  // "%a, %b, ..." (possibly none); stops before a comma not followed by a
  // value (tt.dot's ", inputPrecision = ...").
  bool ParseValueRefs(std::vector<ValueRef>* out);

  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
  std::optional<Error> error_;
  std::vector<LocNode> loc_nodes_;
  std::map<std::string, AliasDef> aliases_;
};

}  // namespace mtlemu::triton::ttir::internal
