#include "compiler/triton/ttir/reader.h"

#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/triton/ir/ttir_syntax.h"

namespace mtlemu::triton::ttir {
namespace {

using ir::ArrayAttr;
using ir::Attribute;
using ir::Block;
using ir::DenseAttr;
using ir::FloatAttr;
using ir::FloatFormat;
using ir::IntAttr;
using ir::OpCode;
using ir::Operation;
using ir::OpForm;
using ir::Type;
using ir::Value;

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

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsIdStart(char c) { return IsLetter(c) || c == '_'; }
bool IsIdChar(char c) {
  return IsLetter(c) || IsDigit(c) || c == '_' || c == '$' || c == '.';
}
bool IsSsaChar(char c) { return IsIdChar(c) || c == '-'; }
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}
// A name MLIR makes up rather than one from the program: %3, %arg2.
bool IsMadeUpName(const std::string& s) {
  return AllDigits(s) || (s.size() > 3 && s.compare(0, 3, "arg") == 0 &&
                          AllDigits(s.substr(3)));
}

std::string TypeText(const Type* t) { return t ? t->ToString() : "?"; }

// i1 in the shape of `t`.
const Type* I1Like(const Type* t) { return t->WithElement(Type::I1()); }

// What a pointer-like type points to: the pointee of a pointer, a tensor
// of the pointees of a tensor of pointers, the tensor of a block pointer.
const Type* PointeeOf(const Type* t) {
  if (t->IsPointer()) return t->pointee();
  if (t->IsTensor() && t->element()->IsPointer()) {
    return Type::Tensor(t->shape(), t->element()->pointee());
  }
  return nullptr;
}

class Reader {
 public:
  Reader(std::string_view text, std::string_view file)
      : text_(text), file_(file), module_(std::make_unique<ir::Module>()) {}

  Result<std::unique_ptr<ir::Module>> Read() {
    if (!ReadFile() || !ResolveAll()) {
      if (!error_) error_ = Error{file_ + ": error: malformed TTIR"};
      return *error_;
    }
    return std::move(module_);
  }

 private:
  // --- errors and positions --------------------------------------------------

  bool Fail(size_t pos, const std::string& message) {
    if (!error_) error_ = Error{Where(pos) + ": error: " + message};
    return false;
  }

  std::string Where(size_t pos) const {
    if (pos > text_.size()) pos = text_.size();
    int line = 1;
    size_t line_start = 0;
    for (size_t k = 0; k < pos; ++k) {
      if (text_[k] == '\n') {
        ++line;
        line_start = k + 1;
      }
    }
    return file_ + ":" + std::to_string(line) + ":" +
           std::to_string(pos - line_start + 1);
  }

  // "3:14" for a message that points elsewhere.
  std::string LineCol(size_t pos) const {
    const std::string w = Where(pos);
    const size_t colon = w.rfind(':', w.rfind(':') - 1);
    return w.substr(colon + 1);
  }

  // --- characters and words --------------------------------------------------

  void SkipSpace() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() &&
                 text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  char Raw(size_t offset = 0) const {
    return pos_ + offset < text_.size() ? text_[pos_ + offset] : '\0';
  }
  size_t Here() {
    SkipSpace();
    return pos_;
  }
  bool Try(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  bool Expect(char c, const std::string& context) {
    if (Try(c)) return true;
    return Fail(Here(),
                std::string("expected '") + c + "' " + context + Found());
  }
  bool TryArrow() {
    if (Peek() == '-' && Raw(1) == '>') {
      pos_ += 2;
      return true;
    }
    return false;
  }
  bool ExpectArrow(const std::string& context) {
    if (TryArrow()) return true;
    return Fail(Here(), "expected '->' " + context + Found());
  }
  // ", found 'xyz'" describing what is at the cursor.
  std::string Found() {
    SkipSpace();
    if (pos_ >= text_.size()) return ", found the end of the text";
    size_t end = pos_;
    if (IsIdChar(text_[end]) || text_[end] == '%' || text_[end] == '#') {
      ++end;
      while (end < text_.size() && IsSsaChar(text_[end]) && end - pos_ < 40) {
        ++end;
      }
    } else {
      ++end;
    }
    return ", found '" + std::string(text_.substr(pos_, end - pos_)) + "'";
  }
  // The identifier at the cursor ([A-Za-z_][A-Za-z0-9_$.]*), not consumed.
  std::string_view PeekWord() {
    SkipSpace();
    if (pos_ >= text_.size() || !IsIdStart(text_[pos_])) return {};
    size_t end = pos_ + 1;
    while (end < text_.size() && IsIdChar(text_[end])) ++end;
    return text_.substr(pos_, end - pos_);
  }
  bool TryWord(std::string_view w) {
    if (PeekWord() != w) return false;
    pos_ += w.size();
    return true;
  }
  bool ExpectWord(std::string_view w, const std::string& context) {
    if (TryWord(w)) return true;
    return Fail(Here(),
                "expected '" + std::string(w) + "' " + context + Found());
  }
  bool ParseWord(std::string* out, const std::string& what) {
    const std::string_view w = PeekWord();
    if (w.empty()) return Fail(Here(), "expected " + what + Found());
    *out = std::string(w);
    pos_ += w.size();
    return true;
  }

  bool ParseString(std::string* out) {
    const size_t start = Here();
    if (!Try('"')) return Fail(start, "expected a string" + Found());
    out->clear();
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') {
        return Fail(start, "unterminated string");
      }
      const char c = text_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        *out += c;
        continue;
      }
      const char e = Raw();
      if (e == '"' || e == '\\') {
        *out += e;
        ++pos_;
      } else if (e == 'n') {
        *out += '\n';
        ++pos_;
      } else if (e == 't') {
        *out += '\t';
        ++pos_;
      } else if (IsHexDigit(e) && IsHexDigit(Raw(1))) {
        *out += static_cast<char>(HexValue(e) * 16 + HexValue(Raw(1)));
        pos_ += 2;
      } else {
        return Fail(pos_ - 1, "unknown escape in a string");
      }
    }
  }

  bool Deeper(int* depth) {
    if (++*depth > kMaxDepth) return Fail(Here(), "nesting too deep");
    return true;
  }

  // --- numbers ---------------------------------------------------------------

  bool ParseNumber(Number* n) {
    n->pos = Here();
    const size_t start = pos_;
    if (Raw() == '0' && (Raw(1) == 'x' || Raw(1) == 'X')) {
      pos_ += 2;
      uint64_t bits = 0;
      int digits = 0;
      while (IsHexDigit(Raw())) {
        if (digits == 16) return Fail(n->pos, "hexadecimal literal too long");
        bits = bits * 16 + HexValue(Raw());
        ++digits;
        ++pos_;
      }
      if (digits == 0) return Fail(n->pos, "expected hexadecimal digits");
      n->is_hex = true;
      n->integer = static_cast<int64_t>(bits);
      n->text = std::string(text_.substr(start, pos_ - start));
      return true;
    }
    if (Raw() == '-' || Raw() == '+') ++pos_;
    if (!IsDigit(Raw())) return Fail(n->pos, "expected a number" + Found());
    while (IsDigit(Raw())) ++pos_;
    if (Raw() == '.') {
      n->is_float = true;
      ++pos_;
      while (IsDigit(Raw())) ++pos_;
      if (Raw() == 'e' || Raw() == 'E') {
        ++pos_;
        if (Raw() == '+' || Raw() == '-') ++pos_;
        if (!IsDigit(Raw())) return Fail(n->pos, "malformed float literal");
        while (IsDigit(Raw())) ++pos_;
      }
    }
    n->text = std::string(text_.substr(start, pos_ - start));
    if (n->is_float) return true;
    std::string digits = n->text[0] == '+' ? n->text.substr(1) : n->text;
    const char* b = digits.data();
    const char* e = b + digits.size();
    if (digits[0] == '-') {
      auto r = std::from_chars(b, e, n->integer);
      if (r.ec != std::errc() || r.ptr != e) {
        return Fail(n->pos, "integer literal out of range");
      }
      return true;
    }
    uint64_t u = 0;
    auto r = std::from_chars(b, e, u);
    if (r.ec != std::errc() || r.ptr != e) {
      return Fail(n->pos, "integer literal out of range");
    }
    n->integer = static_cast<int64_t>(u);
    return true;
  }

  // The integer `n` in type `t` (an integer type), sign-extended.
  bool IntIn(const Number& n, const Type* t, int64_t* out) {
    if (n.is_float) {
      return Fail(n.pos, "expected an integer for " + TypeText(t));
    }
    const int bits = t->bits();
    if (bits < 64 && !n.is_hex) {
      const bool negative = !n.text.empty() && n.text[0] == '-';
      const int64_t lo = -(int64_t{1} << (bits - 1));
      const uint64_t hi = (uint64_t{1} << bits) - 1;
      if ((negative && n.integer < lo) ||
          (!negative && static_cast<uint64_t>(n.integer) > hi)) {
        return Fail(n.pos,
                    "integer " + n.text + " does not fit in " + TypeText(t));
      }
    }
    if (n.is_hex && bits < 64 &&
        (static_cast<uint64_t>(n.integer) >> bits) != 0) {
      return Fail(n.pos, n.text + " does not fit in " + TypeText(t));
    }
    *out = ir::SignExtend(n.integer, bits);
    return true;
  }

  // The number `n` as a value of float type `t`.
  bool FloatIn(const Number& n, const Type* t, double* out) {
    const FloatFormat format = t->float_format();
    if (n.is_hex) {
      if (t->bits() < 64 && (static_cast<uint64_t>(n.integer) >> t->bits())) {
        return Fail(n.pos, n.text + " has more bits than " + TypeText(t));
      }
      *out = ir::FloatFromBits(static_cast<uint64_t>(n.integer), format);
      return true;
    }
    const std::string s = n.text[0] == '+' ? n.text.substr(1) : n.text;
    const char* b = s.data();
    const char* e = b + s.size();
    if (format == FloatFormat::kF32) {
      float f = 0;
      auto r = std::from_chars(b, e, f);
      if (r.ec != std::errc() || r.ptr != e) {
        return Fail(n.pos, "float literal out of range for f32");
      }
      *out = f;
      return true;
    }
    double d = 0;
    auto r = std::from_chars(b, e, d);
    if (r.ec != std::errc() || r.ptr != e) {
      return Fail(n.pos, "float literal out of range");
    }
    *out = ir::RoundToFloat(d, format);
    return true;
  }

  // --- types -----------------------------------------------------------------

  bool ParseType(const Type** out) {
    int depth = 0;
    return ParseTypeAt(out, depth);
  }

  bool ParseTypeAt(const Type** out, int depth) {
    if (!Deeper(&depth)) return false;
    const size_t start = Here();
    if (Peek() == '!') {
      ++pos_;
      std::string dialect_type;
      if (!ParseWord(&dialect_type, "a type name after '!'")) return false;
      if (dialect_type == "tt.ptr") return ParsePointerBody(out, depth);
      if (dialect_type == "tt.tensordesc") return ParseDescBody(out, depth);
      return Fail(start, "unknown type '!" + dialect_type + "'");
    }
    std::string word;
    if (!ParseWord(&word, "a type")) return false;
    if (word == "tensor") return ParseTensorBody(out, depth, start);
    if (word.size() > 1 && word[0] == 'i' && AllDigits(word.substr(1))) {
      const std::string width = word.substr(1);
      if (width == "1" || width == "8" || width == "16" || width == "32" ||
          width == "64") {
        *out = Type::Int(std::stoi(width));
        return true;
      }
      return Fail(start, "unsupported integer type '" + word + "'");
    }
    static constexpr FloatFormat kFormats[] = {
        FloatFormat::kF16,          FloatFormat::kBF16,
        FloatFormat::kF32,          FloatFormat::kF64,
        FloatFormat::kF8E4M3FN,     FloatFormat::kF8E5M2,
        FloatFormat::kF8E4M3FNUZ,   FloatFormat::kF8E5M2FNUZ,
        FloatFormat::kF8E4M3B11FNUZ};
    for (FloatFormat f : kFormats) {
      if (word == ir::FloatFormatName(f)) {
        *out = Type::Float(f);
        return true;
      }
    }
    if (word == "index") {
      return Fail(start, "the index type is not supported (TTIR uses i32)");
    }
    return Fail(start, "unknown type '" + word + "'");
  }

  // "<pointee [, address space]>".
  bool ParsePointerBody(const Type** out, int depth) {
    if (!Expect('<', "after !tt.ptr")) return false;
    const Type* pointee = nullptr;
    if (!ParseTypeAt(&pointee, depth)) return false;
    int64_t space = 1;
    if (Try(',')) {
      Number n;
      if (!ParseNumber(&n)) return false;
      if (n.is_float || n.integer < 0 || n.integer > 1024) {
        return Fail(n.pos, "bad address space " + n.text);
      }
      space = n.integer;
    }
    if (!Expect('>', "to close !tt.ptr<...>")) return false;
    *out = Type::Pointer(pointee, static_cast<int>(space));
    return true;
  }

  // "<tensor<...>>".
  bool ParseDescBody(const Type** out, int depth) {
    if (!Expect('<', "after !tt.tensordesc")) return false;
    const size_t at = Here();
    const Type* block = nullptr;
    if (!ParseTypeAt(&block, depth)) return false;
    if (!block->IsTensor()) {
      return Fail(
          at, "a tensor descriptor describes a tensor, not " + TypeText(block));
    }
    if (!Expect('>', "to close !tt.tensordesc<...>")) return false;
    *out = Type::TensorDesc(block);
    return true;
  }

  // "<32x32xf32>" (after "tensor").
  bool ParseTensorBody(const Type** out, int depth, size_t start) {
    if (!Expect('<', "after 'tensor'")) return false;
    SkipSpace();
    std::vector<int64_t> shape;
    int64_t elements = 1;
    while (IsDigit(Raw())) {
      const size_t at = pos_;
      uint64_t d = 0;
      while (IsDigit(Raw())) {
        d = d * 10 + (Raw() - '0');
        if (d > (uint64_t{1} << 32))
          return Fail(at, "tensor dimension too big");
        ++pos_;
      }
      if (Raw() != 'x') return Fail(pos_, "expected 'x' after a dimension");
      ++pos_;
      if (d == 0) return Fail(at, "tensor dimensions must not be 0");
      if (shape.size() == kMaxRank) return Fail(at, "too many dimensions");
      elements *= static_cast<int64_t>(d);
      if (elements > kMaxElements) return Fail(start, "tensor too big");
      shape.push_back(static_cast<int64_t>(d));
    }
    if (Raw() == '?') return Fail(pos_, "dynamic dimensions are not supported");
    const size_t at = Here();
    const Type* element = nullptr;
    if (!ParseTypeAt(&element, depth)) return false;
    if (!element->IsScalar()) {
      return Fail(at,
                  "a tensor's elements must be integers, floats or "
                  "pointers, not " +
                      TypeText(element));
    }
    if (Peek() == ',') {
      return Fail(Here(),
                  "tensor encodings (layouts) are not supported: "
                  "this reads TTIR, not TTGIR");
    }
    if (!Expect('>', "to close tensor<...>")) return false;
    *out = Type::Tensor(std::move(shape), element);
    return true;
  }

  // A pointer type, also written without "!tt.ptr" ("<tensor<8xf16>>") as
  // Triton prints it where the op's syntax implies it.
  bool ParsePointerType(const Type** out) {
    if (Peek() == '<') return ParsePointerBody(out, 0);
    const size_t at = Here();
    if (!ParseType(out)) return false;
    if (!(*out)->IsPointer()) {
      return Fail(at, "expected a pointer type, found " + TypeText(*out));
    }
    return true;
  }
  bool ParseDescType(const Type** out) {
    if (Peek() == '<') return ParseDescBody(out, 0);
    const size_t at = Here();
    if (!ParseType(out)) return false;
    if (!(*out)->IsTensorDesc()) {
      return Fail(at,
                  "expected a !tt.tensordesc type, found " + TypeText(*out));
    }
    return true;
  }

  bool ParseTypeList(std::vector<const Type*>* out) {
    do {
      const Type* t = nullptr;
      if (!ParseType(&t)) return false;
      out->push_back(t);
    } while (Try(','));
    return true;
  }

  // "(A, B)" or "()" .
  bool ParseParenTypes(std::vector<const Type*>* out) {
    if (!Expect('(', "to open a type list")) return false;
    if (Try(')')) return true;
    if (!ParseTypeList(out)) return false;
    return Expect(')', "to close a type list");
  }

  // A function type's results: "T", "(T, U)" or "()".
  bool ParseResultTypes(std::vector<const Type*>* out) {
    if (Peek() == '(') return ParseParenTypes(out);
    const Type* t = nullptr;
    if (!ParseType(&t)) return false;
    out->push_back(t);
    return true;
  }

  bool ParseFunctionType(std::vector<const Type*>* ins,
                         std::vector<const Type*>* outs) {
    if (!ParseParenTypes(ins)) return false;
    if (!ExpectArrow("in a function type")) return false;
    return ParseResultTypes(outs);
  }

  // --- attributes ------------------------------------------------------------

  bool ParseAttr(Attribute* out, int depth = 0) {
    if (!Deeper(&depth)) return false;
    const size_t start = Here();
    const char c = Peek();
    if (c == '"') {
      std::string s;
      if (!ParseString(&s)) return false;
      *out = s;
      return true;
    }
    if (c == '@') {
      ++pos_;
      std::string s;
      if (Raw() == '"') {
        if (!ParseString(&s)) return false;
      } else if (!ParseWord(&s, "a symbol name after '@'")) {
        return false;
      }
      *out = s;
      return true;
    }
    if (c == '[') return ParseListAttr(out, depth);
    if (c == '#') return ParseDialectAttr(out, depth);
    if (c == '-' || c == '+' || IsDigit(c)) return ParseNumberAttr(out);
    if (c == '!') {
      const Type* t = nullptr;
      if (!ParseType(&t)) return false;
      *out = t;
      return true;
    }
    const std::string_view w = PeekWord();
    if (w == "true" || w == "false") {
      pos_ += w.size();
      *out = (w == "true");
      return true;
    }
    if (w == "unit") {
      pos_ += w.size();
      *out = true;
      return true;
    }
    if (w == "dense") return ParseDense(out, depth);
    if (w == "array") return ParseArrayAttr(out);
    if (w == "dense_resource") {
      return Fail(start, "dense_resource attributes are not supported");
    }
    if (!w.empty()) {
      const Type* t = nullptr;
      if (!ParseType(&t)) return false;
      *out = t;
      return true;
    }
    return Fail(start, "expected an attribute value" + Found());
  }

  bool ParseNumberAttr(Attribute* out) {
    Number n;
    if (!ParseNumber(&n)) return false;
    if (Try(':')) {
      const size_t at = Here();
      const Type* t = nullptr;
      if (!ParseType(&t)) return false;
      if (t->IsInt()) {
        int64_t v = 0;
        if (!IntIn(n, t, &v)) return false;
        *out = IntAttr{v, t};
        return true;
      }
      if (t->IsFloat()) {
        double v = 0;
        if (!FloatIn(n, t, &v)) return false;
        *out = FloatAttr{v, t};
        return true;
      }
      return Fail(at, "a number cannot have type " + TypeText(t));
    }
    if (n.is_float) {
      double v = 0;
      if (!FloatIn(n, Type::Float(FloatFormat::kF64), &v)) return false;
      *out = FloatAttr{v, Type::Float(FloatFormat::kF64)};
      return true;
    }
    *out = IntAttr{n.integer, Type::I64()};
    return true;
  }

  // "[1, 2]": integers only (the IR's ArrayAttr).
  bool ParseListAttr(Attribute* out, int depth) {
    const size_t start = Here();
    ++pos_;
    ArrayAttr array;
    if (!Try(']')) {
      do {
        const size_t at = Here();
        Attribute a;
        if (!ParseAttr(&a, depth)) return false;
        if (const auto* i = std::get_if<IntAttr>(&a)) {
          array.values.push_back(i->value);
        } else if (const auto* b = std::get_if<bool>(&a)) {
          array.values.push_back(*b ? 1 : 0);
        } else {
          return Fail(at, "only lists of integers are supported");
        }
      } while (Try(','));
      if (!Expect(']', "to close the list started at " + LineCol(start))) {
        return false;
      }
    }
    *out = array;
    return true;
  }

  // "#dialect.name<body>" (#arith.fastmath<none>): the body, as a string.
  bool ParseDialectAttr(Attribute* out, int depth) {
    const size_t start = Here();
    ++pos_;
    std::string name;
    if (!ParseWord(&name, "an attribute name after '#'")) return false;
    if (Raw() != '<') {
      return Fail(start, "attribute aliases (#" + name +
                             ") are not "
                             "supported here");
    }
    ++pos_;
    const size_t body = pos_;
    int level = 1;
    while (level > 0) {
      if (pos_ >= text_.size())
        return Fail(start, "unterminated #" + name + "<");
      if (text_[pos_] == '<') {
        if (!Deeper(&depth)) return false;
        ++level;
      }
      if (text_[pos_] == '>') --level;
      ++pos_;
    }
    *out = std::string(text_.substr(body, pos_ - 1 - body));
    return true;
  }

  // "array<i32: 1, 0>", "array<i32>", "array<i1: true>".
  bool ParseArrayAttr(Attribute* out) {
    TryWord("array");
    if (!Expect('<', "after 'array'")) return false;
    const size_t at = Here();
    const Type* t = nullptr;
    if (!ParseType(&t)) return false;
    if (!t->IsInt()) {
      return Fail(at, "only integer arrays are supported, not " + TypeText(t));
    }
    ArrayAttr array;
    if (Try(':')) {
      do {
        const std::string_view w = PeekWord();
        if (w == "true" || w == "false") {
          array.values.push_back(w == "true" ? 1 : 0);
          pos_ += w.size();
          continue;
        }
        Number n;
        if (!ParseNumber(&n)) return false;
        int64_t v = 0;
        if (!IntIn(n, t, &v)) return false;
        array.values.push_back(v);
      } while (Try(','));
    }
    if (!Expect('>', "to close array<...>")) return false;
    *out = array;
    return true;
  }

  bool ParseDenseNode(DenseNode* node, int depth) {
    if (!Deeper(&depth)) return false;
    node->pos = Here();
    if (Try('[')) {
      node->is_list = true;
      if (Try(']')) return true;
      do {
        node->items.emplace_back();
        if (!ParseDenseNode(&node->items.back(), depth)) return false;
      } while (Try(','));
      return Expect(']', "in dense<...>");
    }
    const std::string_view w = PeekWord();
    if (w == "true" || w == "false") {
      node->boolean = (w == "true");
      pos_ += w.size();
      return true;
    }
    if (Peek() == '(') {
      return Fail(node->pos, "complex numbers are not supported");
    }
    return ParseNumber(&node->number);
  }

  bool DenseValue(const DenseNode& node, const Type* element,
                  std::variant<int64_t, double>* out) {
    if (node.is_list) return Fail(node.pos, "expected an element, not a list");
    if (element->IsInt()) {
      if (node.boolean) {
        if (!element->IsInt(1)) {
          return Fail(node.pos,
                      "true/false is for i1, not " + TypeText(element));
        }
        *out = int64_t{*node.boolean ? 1 : 0};
        return true;
      }
      int64_t v = 0;
      if (!IntIn(node.number, element, &v)) return false;
      *out = v;
      return true;
    }
    if (node.boolean) {
      return Fail(node.pos, "true/false is for i1, not " + TypeText(element));
    }
    double v = 0;
    if (!FloatIn(node.number, element, &v)) return false;
    *out = v;
    return true;
  }

  bool FlattenDense(const DenseNode& node, const std::vector<int64_t>& shape,
                    size_t dim, const Type* element, DenseAttr* out) {
    if (dim == shape.size()) {
      out->values.emplace_back();
      return DenseValue(node, element, &out->values.back());
    }
    if (!node.is_list ||
        static_cast<int64_t>(node.items.size()) != shape[dim]) {
      return Fail(node.pos, "dense<...> does not have the shape of " +
                                TypeText(out->type));
    }
    for (const DenseNode& item : node.items) {
      if (!FlattenDense(item, shape, dim + 1, element, out)) return false;
    }
    return true;
  }

  bool ParseDense(Attribute* out, int depth) {
    const size_t start = Here();
    TryWord("dense");
    if (!Expect('<', "after 'dense'")) return false;
    std::string hex;
    bool is_hex = false;
    DenseNode root;
    if (Peek() == '"') {
      is_hex = true;
      if (!ParseString(&hex)) return false;
    } else if (!ParseDenseNode(&root, depth)) {
      return false;
    }
    if (!Expect('>', "to close dense<...>")) return false;
    if (!Expect(':', "before the type of a dense attribute")) return false;
    const size_t type_at = Here();
    const Type* t = nullptr;
    if (!ParseType(&t)) return false;
    if (!t->IsTensor() || t->element()->IsPointer()) {
      return Fail(type_at,
                  "a dense attribute needs a tensor of integers or "
                  "floats, not " +
                      TypeText(t));
    }
    DenseAttr dense{t, {}};
    const Type* element = t->element();
    if (is_hex) {
      if (!DenseFromHex(hex, element, start, &dense)) return false;
    } else if (!root.is_list) {
      dense.values.emplace_back();
      if (!DenseValue(root, element, &dense.values.back())) return false;
    } else if (!FlattenDense(root, t->shape(), 0, element, &dense)) {
      return false;
    }
    if (dense.values.size() != 1 &&
        static_cast<int64_t>(dense.values.size()) != t->NumElements()) {
      return Fail(start, "dense<...> has " +
                             std::to_string(dense.values.size()) +
                             " elements, " + TypeText(t) + " has " +
                             std::to_string(t->NumElements()));
    }
    *out = std::move(dense);
    return true;
  }

  // "0x..." raw data: each element's bytes, little-endian.
  bool DenseFromHex(const std::string& hex, const Type* element, size_t at,
                    DenseAttr* dense) {
    if (hex.size() < 2 || hex[0] != '0' || (hex[1] != 'x' && hex[1] != 'X') ||
        hex.size() % 2 != 0) {
      return Fail(at, "expected \"0x...\" hexadecimal data in dense<...>");
    }
    const int bytes_per = element->bits() / 8;
    if (bytes_per == 0) {
      return Fail(at, "hexadecimal dense data of i1 is not supported");
    }
    const size_t bytes = (hex.size() - 2) / 2;
    if (bytes % bytes_per != 0) {
      return Fail(at, "hexadecimal dense data is not a whole number of " +
                          TypeText(element) + " elements");
    }
    for (size_t e = 0; e < bytes / bytes_per; ++e) {
      uint64_t bits = 0;
      for (int b = bytes_per - 1; b >= 0; --b) {
        const char hi = hex[2 + 2 * (e * bytes_per + b)];
        const char lo = hex[3 + 2 * (e * bytes_per + b)];
        if (!IsHexDigit(hi) || !IsHexDigit(lo)) {
          return Fail(at, "bad hexadecimal digit in dense<...>");
        }
        bits = bits * 256 + HexValue(hi) * 16 + HexValue(lo);
      }
      if (element->IsFloat()) {
        dense->values.emplace_back(
            ir::FloatFromBits(bits, element->float_format()));
      } else {
        dense->values.emplace_back(
            ir::SignExtend(static_cast<int64_t>(bits), element->bits()));
      }
    }
    return true;
  }

  // "{a = 1 : i32, b, "c-d" = ...}"; a key without a value is a unit
  // attribute (true).
  bool ParseAttrDict(std::map<std::string, Attribute>* out) {
    const size_t start = Here();
    if (!Expect('{', "to open an attribute dictionary")) return false;
    if (Try('}')) return true;
    do {
      const size_t at = Here();
      std::string key;
      if (Peek() == '"') {
        if (!ParseString(&key)) return false;
      } else if (!ParseWord(&key, "an attribute name")) {
        return false;
      }
      Attribute value = true;
      if (Try('=')) {
        if (!ParseAttr(&value)) return false;
      }
      if (!out->emplace(key, std::move(value)).second) {
        return Fail(at, "attribute '" + key + "' given twice");
      }
    } while (Try(','));
    return Expect('}',
                  "to close the attribute dictionary at " + LineCol(start));
  }

  bool ParseOptionalAttrDict(Operation* op) {
    if (Peek() != '{') return true;
    std::map<std::string, Attribute> attrs;
    if (!ParseAttrDict(&attrs)) return false;
    for (auto& [k, v] : attrs) {
      if (op->has_attr(k)) {
        return Fail(Here(), "attribute '" + k + "' given twice");
      }
      op->set_attr(k, std::move(v));
    }
    return true;
  }

  // --- locations -------------------------------------------------------------

  // After "loc": "(" location ")".
  bool ParseLocParens(int* node) {
    if (!Expect('(', "after 'loc'")) return false;
    if (!ParseLocExpr(node, 0)) return false;
    return Expect(')', "to close loc(...)");
  }

  bool TryLoc(int* node) {
    *node = -1;
    if (!TryWord("loc")) return true;
    return ParseLocParens(node);
  }

  int AddLoc(LocNode n) {
    loc_nodes_.push_back(std::move(n));
    return static_cast<int>(loc_nodes_.size()) - 1;
  }

  bool ParseLocExpr(int* node, int depth) {
    if (!Deeper(&depth)) return false;
    LocNode n;
    n.pos = Here();
    const char c = Peek();
    if (c == '#') {
      ++pos_;
      n.kind = LocNode::kAlias;
      while (IsSsaChar(Raw())) n.text += text_[pos_++];
      if (n.text.empty()) return Fail(n.pos, "expected a location alias name");
      *node = AddLoc(std::move(n));
      return true;
    }
    if (c == '"') {
      std::string s;
      if (!ParseString(&s)) return false;
      if (Try(':')) {  // "file":line:col [to [line]:col]
        n.kind = LocNode::kFile;
        n.text = s;
        Number line, col;
        if (!ParseNumber(&line)) return false;
        if (Try(':') && !ParseNumber(&col)) return false;
        if (line.is_float || line.integer < 0 || line.integer > (1 << 30) ||
            col.is_float || col.integer < 0 || col.integer > (1 << 30)) {
          return Fail(line.pos, "bad line or column in a location");
        }
        n.line = static_cast<int>(line.integer);
        n.column = static_cast<int>(col.integer);
        if (TryWord("to")) {
          Number end;
          if (Peek() != ':' && !ParseNumber(&end)) return false;
          if (Try(':') && !ParseNumber(&end)) return false;
        }
        *node = AddLoc(std::move(n));
        return true;
      }
      n.kind = LocNode::kName;
      n.text = s;
      if (Try('(')) {
        int child = -1;
        if (!ParseLocExpr(&child, depth)) return false;
        n.children.push_back(child);
        if (!Expect(')', "to close a named location")) return false;
      }
      *node = AddLoc(std::move(n));
      return true;
    }
    const std::string_view w = PeekWord();
    if (w == "unknown") {
      pos_ += w.size();
      n.kind = LocNode::kUnknown;
      *node = AddLoc(std::move(n));
      return true;
    }
    if (w == "callsite") {
      pos_ += w.size();
      n.kind = LocNode::kCallSite;
      int callee = -1, caller = -1;
      if (!Expect('(', "after 'callsite'") || !ParseLocExpr(&callee, depth) ||
          !ExpectWord("at", "in callsite(... at ...)") ||
          !ParseLocExpr(&caller, depth) ||
          !Expect(')', "to close callsite(...)")) {
        return false;
      }
      n.children = {callee, caller};
      *node = AddLoc(std::move(n));
      return true;
    }
    if (w == "fused") {
      pos_ += w.size();
      n.kind = LocNode::kFused;
      if (Peek() == '<') {  // metadata: skipped
        Attribute ignored;
        ++pos_;
        if (!ParseAttr(&ignored, depth) || !Expect('>', "after fused<...")) {
          return false;
        }
      }
      if (!Expect('[', "after 'fused'")) return false;
      if (!Try(']')) {
        do {
          int child = -1;
          if (!ParseLocExpr(&child, depth)) return false;
          n.children.push_back(child);
        } while (Try(','));
        if (!Expect(']', "to close fused[...]")) return false;
      }
      *node = AddLoc(std::move(n));
      return true;
    }
    return Fail(n.pos, "expected a location" + Found());
  }

  // "#name = loc(...)" at the top level.
  bool ParseAliasDef() {
    const size_t start = Here();
    ++pos_;
    std::string name;
    while (IsSsaChar(Raw())) name += text_[pos_++];
    if (name.empty()) return Fail(start, "expected an alias name after '#'");
    if (!Expect('=', "after #" + name)) return false;
    if (!TryWord("loc")) {
      return Fail(Here(), "only location aliases (#" + name +
                              " = loc(...)) are supported" + Found());
    }
    int node = -1;
    if (!ParseLocParens(&node)) return false;
    AliasDef def;
    def.node = node;
    def.pos = start;
    if (!aliases_.emplace(name, def).second) {
      return Fail(start, "redefinition of #" + name);
    }
    return true;
  }

  bool ResolveLoc(int node, int depth, ResolvedLoc* out) {
    if (node < 0) {
      *out = {};
      return true;
    }
    if (++depth > kMaxLocDepth) {
      return Fail(loc_nodes_[node].pos, "location nesting too deep");
    }
    const LocNode& n = loc_nodes_[node];
    switch (n.kind) {
      case LocNode::kFile:
        *out = {SourceLocation{n.text, n.line, n.column}, ""};
        return true;
      case LocNode::kUnknown:
        *out = {};
        return true;
      case LocNode::kName: {
        ResolvedLoc inner;
        if (!n.children.empty() && !ResolveLoc(n.children[0], depth, &inner)) {
          return false;
        }
        *out = {inner.loc, n.text};
        return true;
      }
      case LocNode::kCallSite: {
        ResolvedLoc callee, caller;
        if (!ResolveLoc(n.children[0], depth, &callee) ||
            !ResolveLoc(n.children[1], depth, &caller)) {
          return false;
        }
        const bool library =
            callee.loc.file.find("/triton/language/") != std::string::npos;
        out->loc = !callee.loc.known() || library ? caller.loc : callee.loc;
        out->name = !callee.name.empty() ? callee.name : caller.name;
        return true;
      }
      case LocNode::kFused: {
        *out = {};
        for (int child : n.children) {
          ResolvedLoc part;
          if (!ResolveLoc(child, depth, &part)) return false;
          if (!out->loc.known()) out->loc = part.loc;
          if (out->name.empty()) out->name = part.name;
        }
        return true;
      }
      case LocNode::kAlias: {
        auto it = aliases_.find(n.text);
        if (it == aliases_.end()) {
          return Fail(n.pos, "undefined location alias #" + n.text);
        }
        AliasDef& def = it->second;
        if (def.state == 1) {
          return Fail(def.pos,
                      "location alias #" + n.text + " refers to itself");
        }
        if (def.state == 0) {
          def.state = 1;
          if (!ResolveLoc(def.node, depth, &def.resolved)) return false;
          def.state = 2;
        }
        *out = def.resolved;
        return true;
      }
    }
    return true;
  }

  // --- values ----------------------------------------------------------------

  bool ParseValueRef(ValueRef* ref) {
    ref->pos = Here();
    if (!Try('%')) return Fail(ref->pos, "expected a value (%name)" + Found());
    ref->name.clear();
    ref->index = -1;
    while (IsSsaChar(Raw())) ref->name += text_[pos_++];
    if (ref->name.empty()) return Fail(ref->pos, "expected a name after '%'");
    if (Raw() == '#' && IsDigit(Raw(1))) {
      ++pos_;
      int64_t index = 0;
      while (IsDigit(Raw())) {
        index = index * 10 + (Raw() - '0');
        if (index > (1 << 20)) return Fail(ref->pos, "result number too big");
        ++pos_;
      }
      ref->index = static_cast<int>(index);
    }
    return true;
  }

  // "%a, %b, ..." (possibly none); stops before a comma not followed by a
  // value (tt.dot's ", inputPrecision = ...").
  bool ParseValueRefs(std::vector<ValueRef>* out) {
    if (Peek() != '%') return true;
    while (true) {
      out->emplace_back();
      if (!ParseValueRef(&out->back())) return false;
      const size_t before = pos_;
      if (!Try(',')) return true;
      if (Peek() != '%') {
        pos_ = before;
        return true;
      }
    }
  }

  bool ExpectRefs(const std::vector<ValueRef>& refs, size_t n,
                  const Operation* op, size_t pos) {
    if (refs.size() == n) return true;
    return Fail(pos, std::string(op->name()) + " takes " + std::to_string(n) +
                         " operand" + (n == 1 ? "" : "s") + ", found " +
                         std::to_string(refs.size()));
  }

  Value* Lookup(const std::string& name, int index) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
      auto it = s->find(name);
      if (it == s->end()) continue;
      const int i = index < 0 ? 0 : index;
      return i < static_cast<int>(it->second.size()) ? it->second[i] : nullptr;
    }
    return nullptr;
  }

  // The value `ref` names, which must have type `expected` (when given).
  bool Resolve(const ValueRef& ref, const Type* expected, Value** out) {
    Value* v = Lookup(ref.name, ref.index);
    if (v == nullptr) {
      std::string shown = "%" + ref.name;
      if (ref.index >= 0) shown += "#" + std::to_string(ref.index);
      return Fail(ref.pos, "use of undefined value '" + shown + "'");
    }
    if (expected != nullptr && v->type() != expected) {
      return Fail(ref.pos, "'%" + ref.name + "' has type " +
                               TypeText(v->type()) + ", but is used as " +
                               TypeText(expected));
    }
    *out = v;
    return true;
  }

  bool AddOperand(Operation* op, const ValueRef& ref, const Type* expected) {
    Value* v = nullptr;
    if (!Resolve(ref, expected, &v)) return false;
    op->add_operand(v);
    return true;
  }

  bool AddOperands(Operation* op, const std::vector<ValueRef>& refs,
                   const std::vector<const Type*>& types, size_t pos) {
    if (refs.size() != types.size()) {
      return Fail(pos, std::string(op->name()) + " has " +
                           std::to_string(refs.size()) + " operands but " +
                           std::to_string(types.size()) + " operand types");
    }
    for (size_t k = 0; k < refs.size(); ++k) {
      if (!AddOperand(op, refs[k], types[k])) return false;
    }
    return true;
  }

  bool Define(const std::string& name, std::vector<Value*> values, size_t pos) {
    for (const auto& s : scopes_) {
      if (s.count(name))
        return Fail(pos, "redefinition of value '%" + name + "'");
    }
    scopes_.back().emplace(name, std::move(values));
    return true;
  }

  // A block argument named `ref` (its SSA name becomes the value's name
  // unless MLIR made it up).
  bool DefineArg(Value* arg, const ValueRef& ref, int loc) {
    if (ref.index >= 0) return Fail(ref.pos, "expected a plain name");
    if (!Define(ref.name, {arg}, ref.pos)) return false;
    if (IsMadeUpName(ref.name)) {
      if (loc >= 0) pending_values_.push_back({arg, loc});
    } else {
      arg->set_name(ref.name);
    }
    return true;
  }

  // --- structure -------------------------------------------------------------

  bool ReadFile() {
    bool seen_module = false;
    while (!AtEnd()) {
      const size_t at = Here();
      if (Peek() == '#') {
        if (!ParseAliasDef()) return false;
      } else if (PeekWord() == "module") {
        if (seen_module) return Fail(at, "a second module");
        seen_module = true;
        if (!ParseModule()) return false;
      } else if (PeekWord() == "tt.func") {
        if (!ParseFunction()) return false;
      } else {
        return Fail(
            at, "expected 'module', 'tt.func' or a #loc definition" + Found());
      }
    }
    return true;
  }

  bool ParseModule() {
    const size_t start = Here();
    TryWord("module");
    if (Try('@')) {
      std::string name;
      if (Raw() == '"' ? !ParseString(&name)
                       : !ParseWord(&name, "a module name")) {
        return false;
      }
    }
    if (TryWord("attributes")) {
      std::map<std::string, Attribute> ignored;
      if (!ParseAttrDict(&ignored)) return false;
    }
    if (!Expect('{', "to open the module")) return false;
    while (!Try('}')) {
      const size_t at = Here();
      if (at >= text_.size()) {
        return Fail(at, "the module opened at " + LineCol(start) +
                            " has no closing '}'");
      }
      if (PeekWord() != "tt.func") {
        return Fail(at, "expected a tt.func in the module" + Found());
      }
      if (!ParseFunction()) return false;
    }
    int loc = -1;
    if (!TryLoc(&loc)) return false;
    if (loc >= 0) checked_locs_.push_back(loc);
    return true;
  }

  struct ArgText {
    ValueRef ref;
    const Type* type = nullptr;
    int divisibility = 0;
    int loc = -1;
  };

  bool ParseFunction() {
    TryWord("tt.func");
    bool is_public = true;
    if (TryWord("private")) {
      is_public = false;
    } else if (!TryWord("public")) {
      TryWord("nested");
    }
    if (!Expect('@', "before the function's name")) return false;
    std::string name;
    if (Raw() == '"' ? !ParseString(&name)
                     : !ParseWord(&name, "the function's name")) {
      return false;
    }
    if (module_->Find(name) != nullptr) {
      return Fail(Here(), "redefinition of function @" + name);
    }
    if (!Expect('(', "to open the argument list")) return false;
    std::vector<ArgText> args;
    if (!Try(')')) {
      do {
        ArgText arg;
        if (Peek() != '%') {
          return Fail(Here(),
                      "function declarations (argument types without "
                      "names) are not supported");
        }
        if (!ParseValueRef(&arg.ref)) return false;
        if (!Expect(':', "after the argument's name")) return false;
        if (!ParseType(&arg.type)) return false;
        if (Peek() == '{') {
          std::map<std::string, Attribute> attrs;
          const size_t at = Here();
          if (!ParseAttrDict(&attrs)) return false;
          auto it = attrs.find("tt.divisibility");
          if (it != attrs.end()) {
            const auto* i = std::get_if<IntAttr>(&it->second);
            if (i == nullptr || i->value < 0 || i->value > (1 << 30)) {
              return Fail(at, "tt.divisibility must be an integer");
            }
            arg.divisibility = static_cast<int>(i->value);
          }
        }
        if (!TryLoc(&arg.loc)) return false;
        args.push_back(std::move(arg));
      } while (Try(','));
      if (!Expect(')', "to close the argument list")) return false;
    }
    std::vector<const Type*> results;
    if (TryArrow()) {
      if (Try('(')) {
        if (!Try(')')) {
          do {
            const Type* t = nullptr;
            if (!ParseType(&t)) return false;
            results.push_back(t);
            if (Peek() == '{') {
              std::map<std::string, Attribute> ignored;
              if (!ParseAttrDict(&ignored)) return false;
            }
          } while (Try(','));
          if (!Expect(')', "to close the result list")) return false;
        }
      } else {
        const Type* t = nullptr;
        if (!ParseType(&t)) return false;
        results.push_back(t);
      }
    }
    bool noinline = false;
    if (TryWord("attributes")) {
      std::map<std::string, Attribute> attrs;
      if (!ParseAttrDict(&attrs)) return false;
      auto it = attrs.find("noinline");
      if (it != attrs.end()) {
        const auto* b = std::get_if<bool>(&it->second);
        noinline = b != nullptr && *b;
      }
    }
    if (Peek() != '{') {
      return Fail(Here(), "function declarations (no body) are not supported" +
                              Found());
    }
    ir::Function* f = module_->AddFunction(
        std::make_unique<ir::Function>(name, SourceLocation{}));
    f->set_public(is_public);
    f->set_noinline(noinline);
    for (const Type* t : results) f->add_result_type(t);
    // A function sees nothing from outside.
    std::vector<std::unordered_map<std::string, std::vector<Value*>>> outer;
    outer.swap(scopes_);
    scopes_.emplace_back();
    bool ok = true;
    for (size_t k = 0; k < args.size() && ok; ++k) {
      const ArgText& a = args[k];
      const bool made_up = IsMadeUpName(a.ref.name);
      ir::ArgInfo info;
      info.name = made_up ? "" : a.ref.name;
      info.divisibility = a.divisibility;
      Value* v = f->AddArgument(a.type, info);
      if (a.ref.index >= 0) ok = Fail(a.ref.pos, "expected a plain name");
      ok = ok && Define(a.ref.name, {v}, a.ref.pos);
      pending_args_.push_back({f, static_cast<int>(k), a.loc, made_up});
    }
    ok = ok && ParseRegion(f->body(), {}, false);
    scopes_.swap(outer);
    if (!ok) return false;
    int loc = -1;
    if (!TryLoc(&loc)) return false;
    pending_functions_.push_back({f, loc});
    return true;
  }

  struct RegionArg {
    ValueRef ref;
    int loc = -1;
  };

  // "{ ops }" into `block`, whose arguments (already added) are named by
  // `names`; with `entry_header`, the block may start with "^bb0(%a: T):".
  bool ParseRegion(Block* block, const std::vector<ValueRef>& names,
                   bool entry_header) {
    const size_t open = Here();
    if (!Expect('{', "to open a region")) return false;
    if (++depth_ > kMaxDepth) return Fail(open, "regions nested too deep");
    scopes_.emplace_back();
    bool ok = true;
    for (size_t k = 0; k < names.size() && ok; ++k) {
      ok = DefineArg(block->arg(static_cast<int>(k)), names[k], -1);
    }
    if (ok && Peek() == '^') {
      if (!entry_header || !names.empty()) {
        ok = Fail(Here(), "a block label is not allowed here");
      } else {
        ok = ParseBlockHeader(block);
      }
    }
    while (ok) {
      const size_t at = Here();
      if (at >= text_.size()) {
        ok = Fail(
            at, "unterminated region: no '}' for the '{' at " + LineCol(open));
        break;
      }
      if (Try('}')) break;
      if (Peek() == '^') {
        ok = Fail(at, "regions with more than one block are not supported");
        break;
      }
      ok = ParseOperation(block);
    }
    scopes_.pop_back();
    --depth_;
    return ok;
  }

  // "^bb0(%a: f32 loc(...), %b: f32):" or "^bb0:".
  bool ParseBlockHeader(Block* block) {
    ++pos_;
    std::string label;
    while (IsSsaChar(Raw())) label += text_[pos_++];
    if (label.empty()) return Fail(Here(), "expected a block label");
    if (Try('(')) {
      if (!Try(')')) {
        do {
          ValueRef ref;
          const Type* t = nullptr;
          int loc = -1;
          if (!ParseValueRef(&ref) || !Expect(':', "after a block argument") ||
              !ParseType(&t) || !TryLoc(&loc)) {
            return false;
          }
          if (!DefineArg(block->add_arg(t), ref, loc)) return false;
        } while (Try(','));
        if (!Expect(')', "to close the block arguments")) return false;
      }
    }
    return Expect(':', "after the block label");
  }

  // --- operations ------------------------------------------------------------

  struct ResultGroup {
    std::string name;
    int count = 1;
    size_t pos = 0;
  };

  // What parsing one op gathers besides the op itself.
  struct OpText {
    Operation* op = nullptr;
    size_t pos = 0;  // the op's name
    std::vector<const Type*> results;
    std::vector<Operation*> implied;  // terminators the text left out
  };

  bool ParseOperation(Block* block) {
    std::vector<ResultGroup> groups;
    if (Peek() == '%') {
      do {
        ResultGroup g;
        ValueRef ref;
        if (!ParseValueRef(&ref)) return false;
        if (ref.index >= 0) return Fail(ref.pos, "expected a result name");
        g.name = ref.name;
        g.pos = ref.pos;
        if (Raw() == ':' && IsDigit(Raw(1))) {
          ++pos_;
          Number n;
          if (!ParseNumber(&n)) return false;
          if (n.integer < 1 || n.integer > 4096) {
            return Fail(n.pos, "bad result count");
          }
          g.count = static_cast<int>(n.integer);
        }
        groups.push_back(g);
      } while (Try(','));
      if (!Expect('=', "after the results")) return false;
    }
    OpText t;
    t.pos = Here();
    std::string name;
    const bool generic = Peek() == '"';
    if (generic ? !ParseString(&name) : !ParseWord(&name, "an operation")) {
      return false;
    }
    const std::optional<OpCode> code = ir::OpCodeOf(name);
    if (!code) return Fail(t.pos, "unknown operation '" + name + "'");
    auto owned = std::make_unique<Operation>(*code, SourceLocation{});
    t.op = owned.get();
    if (!(generic ? ParseGeneric(t) : ParseCustom(t))) return false;
    if (!FixAttributes(t)) return false;
    int declared = 0;
    for (const ResultGroup& g : groups) declared += g.count;
    if (declared != static_cast<int>(t.results.size())) {
      return Fail(t.pos, name + " has " + std::to_string(t.results.size()) +
                             " result" + (t.results.size() == 1 ? "" : "s") +
                             ", but " + std::to_string(declared) +
                             (declared == 1 ? " is" : " are") + " named");
    }
    for (const Type* type : t.results) t.op->add_result(type);
    int loc = -1;
    if (!TryLoc(&loc)) return false;
    int next = 0;
    bool made_up = false;
    for (const ResultGroup& g : groups) {
      std::vector<Value*> values;
      for (int k = 0; k < g.count; ++k) {
        Value* v = t.op->result(next++);
        if (!IsMadeUpName(g.name)) v->set_name(g.name);
        values.push_back(v);
      }
      made_up = made_up || IsMadeUpName(g.name);
      if (!Define(g.name, std::move(values), g.pos)) return false;
    }
    Operation* op = block->Append(std::move(owned));
    if (loc >= 0) {
      pending_ops_.push_back({op, loc, made_up});
      for (Operation* implied : t.implied) {
        pending_ops_.push_back({implied, loc, false});
      }
    }
    return true;
  }

  // "(%a, %b) <{props}> ({regions}) {attrs} : (A, B) -> R"
  bool ParseGeneric(OpText& t) {
    Operation* op = t.op;
    std::vector<ValueRef> refs;
    if (!Expect('(', "to open the operand list") || !ParseValueRefs(&refs) ||
        !Expect(')', "to close the operand list")) {
      return false;
    }
    if (Peek() == '[')
      return Fail(Here(), "successor blocks are not supported");
    if (Try('<')) {
      if (!ParseOptionalAttrDict(op) || !Expect('>', "after <{...}")) {
        return false;
      }
    }
    if (Peek() == '(') {
      ++pos_;
      do {
        if (!ParseRegion(op->add_region(), {}, true)) return false;
      } while (Try(','));
      if (!Expect(')', "to close the region list")) return false;
    }
    if (!ParseOptionalAttrDict(op)) return false;
    std::vector<const Type*> ins;
    if (!Expect(':', "before the operation's type") ||
        !ParseFunctionType(&ins, &t.results)) {
      return false;
    }
    return AddOperands(op, refs, ins, t.pos);
  }

  // Symbolic attributes written as integers become their names; MLIR's
  // bookkeeping that the IR does not keep is dropped.
  bool FixAttributes(OpText& t) {
    Operation* op = t.op;
    std::vector<std::string> drop;
    for (const auto& [key, value] : op->attrs()) {
      if (const ir::EnumAttrInfo* info = ir::EnumAttrOf(op->code(), key)) {
        if (const auto* i = std::get_if<IntAttr>(&value)) {
          const char* n = ir::EnumName(*info, i->value);
          if (n == nullptr) {
            return Fail(t.pos, "no " + std::string(info->enum_name) +
                                   " has the value " +
                                   std::to_string(i->value));
          }
          op->set_attr(key, std::string(n));
        }
      }
      const auto* s = std::get_if<std::string>(&value);
      if ((key == "fastmath" || key == "overflowFlags") && s != nullptr &&
          *s == "none") {
        drop.push_back(key);
      }
      if (key == "operandSegmentSizes" && op->code() != OpCode::kDotScaled) {
        const auto* a = std::get_if<ArrayAttr>(&value);
        if (op->code() == OpCode::kLoad && a != nullptr &&
            a->values.size() == 3 && a->values[1] == 0 && a->values[2] != 0) {
          return Fail(t.pos,
                      "a tt.load with `other` but no mask is not "
                      "supported");
        }
        drop.push_back(key);
      }
    }
    for (const std::string& k : drop) op->remove_attr(k);
    return true;
  }

  // arith's "fastmath<fast>", "overflow<nsw>" and truncf's rounding mode.
  bool ParseFlags(Operation* op) {
    while (true) {
      const std::string_view w = PeekWord();
      if (w == "fastmath" || w == "overflow") {
        pos_ += w.size();
        const size_t at = Here();
        if (!Expect('<', "after " + std::string(w))) return false;
        std::string body;
        while (pos_ < text_.size() && text_[pos_] != '>' &&
               text_[pos_] != '\n') {
          body += text_[pos_++];
        }
        if (!Expect('>', "to close " + std::string(w) + "<...>")) return false;
        if (body.empty()) return Fail(at, "empty " + std::string(w) + "<>");
        if (body != "none") {
          op->set_attr(w == "fastmath" ? "fastmath" : "overflowFlags", body);
        }
      } else if (w == "to_nearest_even" || w == "downward" || w == "upward" ||
                 w == "toward_zero" || w == "to_nearest_away") {
        op->set_attr("roundingmode", std::string(w));
        pos_ += w.size();
      } else {
        return true;
      }
    }
  }

  // A keyword naming a value of a symbolic attribute.
  bool ParseEnumWord(Operation* op, const char* key) {
    const size_t at = Here();
    std::string w;
    if (!ParseWord(&w, std::string("a ") + key)) return false;
    const ir::EnumAttrInfo* info = ir::EnumAttrOf(op->code(), key);
    if (info == nullptr || !ir::EnumValue(*info, w)) {
      return Fail(
          at,
          "unknown " + std::string(key) + " '" + w + "'" +
              (info ? " (expected one of " + ir::EnumNames(*info) + ")" : ""));
    }
    op->set_attr(key, w);
    return true;
  }

  // "cacheModifier = ca evictionPolicy = evict_last", in any order.
  bool ParseCacheEvict(Operation* op) {
    while (true) {
      if (TryWord("cacheModifier")) {
        if (!Expect('=', "after cacheModifier") ||
            !ParseEnumWord(op, "cache")) {
          return false;
        }
      } else if (TryWord("evictionPolicy")) {
        if (!Expect('=', "after evictionPolicy") ||
            !ParseEnumWord(op, "evict")) {
          return false;
        }
      } else {
        return true;
      }
    }
  }

  bool ParseColonType(const Type** t, const std::string& context) {
    return Expect(':', context) && ParseType(t);
  }

  // "[%a, %b]".
  bool ParseBracketRefs(std::vector<ValueRef>* refs) {
    return Expect('[', "to open an operand list") && ParseValueRefs(refs) &&
           Expect(']', "to close the operand list");
  }

  bool ParseCustom(OpText& t) {
    Operation* op = t.op;
    const std::string name = op->name();
    std::vector<ValueRef> refs;
    switch (ir::FormOf(op->code())) {
      case OpForm::kConstant: {
        if (!ParseOptionalAttrDict(op)) return false;
        const size_t at = Here();
        Attribute value;
        if (!ParseAttr(&value)) return false;
        const Type* type = nullptr;
        if (const auto* b = std::get_if<bool>(&value)) {
          value = IntAttr{*b ? 1 : 0, Type::I1()};
          type = Type::I1();
        } else if (const auto* i = std::get_if<IntAttr>(&value)) {
          type = i->type;
        } else if (const auto* f = std::get_if<FloatAttr>(&value)) {
          type = f->type;
        } else if (const auto* d = std::get_if<DenseAttr>(&value)) {
          type = d->type;
        } else {
          return Fail(at, "arith.constant needs a number or a dense<...>");
        }
        op->set_attr("value", std::move(value));
        t.results = {type};
        return true;
      }
      case OpForm::kBinary:
      case OpForm::kUnary:
      case OpForm::kTernary: {
        const size_t n = ir::FormOf(op->code()) == OpForm::kUnary    ? 1
                         : ir::FormOf(op->code()) == OpForm::kBinary ? 2
                                                                     : 3;
        const Type* type = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, n, op, t.pos) ||
            !ParseFlags(op) || !ParseOptionalAttrDict(op) ||
            !ParseColonType(&type, "before " + name + "'s type")) {
          return false;
        }
        for (const ValueRef& r : refs) {
          if (!AddOperand(op, r, type)) return false;
        }
        t.results = {type};
        return true;
      }
      case OpForm::kCompare: {
        const Type* type = nullptr;
        if (!ParseEnumWord(op, "predicate") ||
            !Expect(',', "after the predicate") || !ParseValueRefs(&refs) ||
            !ExpectRefs(refs, 2, op, t.pos) || !ParseOptionalAttrDict(op) ||
            !ParseColonType(&type, "before " + name + "'s type")) {
          return false;
        }
        for (const ValueRef& r : refs) {
          if (!AddOperand(op, r, type)) return false;
        }
        t.results = {I1Like(type)};
        return true;
      }
      case OpForm::kSelect: {
        const Type* first = nullptr;
        const Type* second = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 3, op, t.pos) ||
            !ParseOptionalAttrDict(op) ||
            !ParseColonType(&first, "before arith.select's type")) {
          return false;
        }
        if (Try(',') && !ParseType(&second)) return false;
        const Type* cond = second ? first : Type::I1();
        const Type* value = second ? second : first;
        if (!AddOperand(op, refs[0], cond) || !AddOperand(op, refs[1], value) ||
            !AddOperand(op, refs[2], value)) {
          return false;
        }
        t.results = {value};
        return true;
      }
      case OpForm::kCast: {
        const Type* from = nullptr;
        const Type* to = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 1, op, t.pos) ||
            !ParseFlags(op) || !ParseOptionalAttrDict(op) ||
            !ParseColonType(&from, "before " + name + "'s types") ||
            !ExpectWord("to", "between " + name + "'s types") ||
            !ParseType(&to) || !AddOperand(op, refs[0], from)) {
          return false;
        }
        t.results = {to};
        return true;
      }
      case OpForm::kArrowCast: {
        const Type* from = nullptr;
        const Type* to = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 1, op, t.pos)) {
          return false;
        }
        while (true) {
          const std::string_view w = PeekWord();
          if (op->code() == OpCode::kReshape &&
              (w == "allow_reorder" || w == "efficient_layout")) {
            op->set_attr(std::string(w), true);
            pos_ += w.size();
          } else {
            break;
          }
        }
        if (!ParseOptionalAttrDict(op) ||
            !ParseColonType(&from, "before " + name + "'s types") ||
            !ExpectArrow("between " + name + "'s types") || !ParseType(&to) ||
            !AddOperand(op, refs[0], from)) {
          return false;
        }
        t.results = {to};
        return true;
      }
      case OpForm::kCustom:
        return ParseCustomOp(t);
    }
    return Fail(t.pos, "no syntax for " + name);
  }

  bool ParseCustomOp(OpText& t) {
    Operation* op = t.op;
    const std::string name = op->name();
    const std::string before_type = "before " + name + "'s type";
    std::vector<ValueRef> refs;
    switch (op->code()) {
      case OpCode::kGetProgramId:
      case OpCode::kGetNumPrograms: {
        const size_t at = Here();
        std::string axis;
        const Type* type = nullptr;
        if (!ParseWord(&axis, "an axis (x, y or z)")) return false;
        if (axis != "x" && axis != "y" && axis != "z") {
          return Fail(at, "expected an axis (x, y or z), found '" + axis + "'");
        }
        op->set_attr("axis", IntAttr{axis[0] - 'x', Type::I32()});
        if (!ParseOptionalAttrDict(op) || !ParseColonType(&type, before_type)) {
          return false;
        }
        t.results = {type};
        return true;
      }
      case OpCode::kMakeRange: {
        const Type* type = nullptr;
        if (!ParseOptionalAttrDict(op) || !ParseColonType(&type, before_type)) {
          return false;
        }
        t.results = {type};
        return true;
      }
      case OpCode::kCat:
      case OpCode::kJoin: {
        const Type* from = nullptr;
        const Type* to = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 2, op, t.pos) ||
            !ParseOptionalAttrDict(op) || !ParseColonType(&from, before_type) ||
            !ExpectArrow("in " + name + "'s types") || !ParseType(&to) ||
            !AddOperand(op, refs[0], from) || !AddOperand(op, refs[1], from)) {
          return false;
        }
        t.results = {to};
        return true;
      }
      case OpCode::kSplit: {
        const Type* from = nullptr;
        const Type* to = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 1, op, t.pos) ||
            !ParseOptionalAttrDict(op) || !ParseColonType(&from, before_type) ||
            !ExpectArrow("in " + name + "'s types") || !ParseType(&to) ||
            !AddOperand(op, refs[0], from)) {
          return false;
        }
        t.results = {to, to};
        return true;
      }
      case OpCode::kGather: {
        ValueRef src;
        std::vector<const Type*> ins;
        if (!ParseValueRef(&src) || !ParseBracketRefs(&refs)) return false;
        refs.insert(refs.begin(), src);
        if (!ParseOptionalAttrDict(op) || !Expect(':', before_type) ||
            !ParseFunctionType(&ins, &t.results)) {
          return false;
        }
        return AddOperands(op, refs, ins, t.pos);
      }
      case OpCode::kHistogram: {
        const Type* from = nullptr;
        const Type* to = nullptr;
        if (!ParseValueRefs(&refs) || refs.empty() || refs.size() > 2) {
          return Fail(t.pos, name + " takes a tensor and an optional mask");
        }
        if (!ParseOptionalAttrDict(op) || !ParseColonType(&from, before_type) ||
            !ExpectArrow("in " + name + "'s types") || !ParseType(&to) ||
            !AddOperand(op, refs[0], from) ||
            (refs.size() == 2 && !AddOperand(op, refs[1], I1Like(from)))) {
          return false;
        }
        t.results = {to};
        return true;
      }
      case OpCode::kUnsplat: {
        const Type* from = nullptr;
        const size_t at = pos_;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 1, op, t.pos) ||
            !ParseOptionalAttrDict(op) || !ParseColonType(&from, before_type)) {
          return false;
        }
        if (!from->IsTensor()) return Fail(at, name + " takes a tensor");
        if (!AddOperand(op, refs[0], from)) return false;
        t.results = {from->element()};
        return true;
      }
      case OpCode::kAddPtr: {
        const Type* ptr = nullptr;
        const Type* offset = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 2, op, t.pos) ||
            !ParseOptionalAttrDict(op) || !ParseColonType(&ptr, before_type) ||
            !Expect(',', "between tt.addptr's types") || !ParseType(&offset) ||
            !AddOperand(op, refs[0], ptr) || !AddOperand(op, refs[1], offset)) {
          return false;
        }
        t.results = {ptr};
        return true;
      }
      case OpCode::kLoad:
      case OpCode::kStore:
        return ParseLoadStore(t);
      case OpCode::kAtomicRMW:
      case OpCode::kAtomicCAS: {
        if (op->code() == OpCode::kAtomicRMW &&
            (!ParseEnumWord(op, "atomic_rmw_op") ||
             !Expect(',', "after the atomic op"))) {
          return false;
        }
        std::vector<const Type*> ins;
        if (!ParseEnumWord(op, "sem") || !Expect(',', "after the semantic") ||
            !ParseEnumWord(op, "scope") || !Expect(',', "after the scope") ||
            !ParseValueRefs(&refs) || !ParseOptionalAttrDict(op) ||
            !Expect(':', before_type) || !ParseFunctionType(&ins, &t.results)) {
          return false;
        }
        return AddOperands(op, refs, ins, t.pos);
      }
      case OpCode::kMakeTensorPtr:
      case OpCode::kMakeTensorDesc:
        return ParseMakeTensorPtrOrDesc(t);
      case OpCode::kAdvance: {
        ValueRef ptr;
        const Type* type = nullptr;
        if (!ParseValueRef(&ptr) || !Expect(',', "after the pointer") ||
            !ParseBracketRefs(&refs) || !ParseOptionalAttrDict(op) ||
            !Expect(':', before_type) || !ParsePointerType(&type) ||
            !AddOperand(op, ptr, type)) {
          return false;
        }
        for (const ValueRef& r : refs) {
          if (!AddOperand(op, r, Type::I32())) return false;
        }
        t.results = {type};
        return true;
      }
      case OpCode::kDescriptorLoad: {
        ValueRef desc;
        const Type* desc_type = nullptr;
        const Type* result = nullptr;
        if (!ParseValueRef(&desc) || !ParseBracketRefs(&refs) ||
            !ParseCacheEvict(op) || !ParseOptionalAttrDict(op) ||
            !Expect(':', before_type) || !ParseDescType(&desc_type) ||
            !ExpectArrow("in " + name + "'s types") || !ParseType(&result) ||
            !AddOperand(op, desc, desc_type)) {
          return false;
        }
        for (const ValueRef& r : refs) {
          if (!AddOperand(op, r, Type::I32())) return false;
        }
        t.results = {result};
        return true;
      }
      case OpCode::kDescriptorStore:
      case OpCode::kDescriptorReduce: {
        if (op->code() == OpCode::kDescriptorReduce &&
            (!ParseEnumWord(op, "kind") || !Expect(',', "after the kind"))) {
          return false;
        }
        ValueRef desc, value;
        const Type* desc_type = nullptr;
        const Type* value_type = nullptr;
        if (!ParseValueRef(&desc) || !ParseBracketRefs(&refs) ||
            !Expect(',', "before the stored value") || !ParseValueRef(&value) ||
            !ParseOptionalAttrDict(op) || !Expect(':', before_type) ||
            !ParseDescType(&desc_type) ||
            !Expect(',', "between " + name + "'s types") ||
            !ParseType(&value_type) || !AddOperand(op, desc, desc_type) ||
            !AddOperand(op, value, value_type)) {
          return false;
        }
        for (const ValueRef& r : refs) {
          if (!AddOperand(op, r, Type::I32())) return false;
        }
        return true;
      }
      case OpCode::kDescriptorGather: {
        ValueRef desc;
        std::vector<const Type*> ins;
        if (!ParseValueRef(&desc) || !ParseBracketRefs(&refs)) return false;
        refs.insert(refs.begin(), desc);
        if (!ParseOptionalAttrDict(op) || !Expect(':', before_type) ||
            !ParseFunctionType(&ins, &t.results)) {
          return false;
        }
        return AddOperands(op, refs, ins, t.pos);
      }
      case OpCode::kDescriptorScatter: {
        ValueRef desc, value;
        std::vector<const Type*> types;
        if (!ParseValueRef(&desc) || !ParseBracketRefs(&refs) ||
            !Expect(',', "before the stored value") || !ParseValueRef(&value) ||
            !ParseOptionalAttrDict(op) || !Expect(':', before_type) ||
            !ParseTypeList(&types)) {
          return false;
        }
        refs.insert(refs.begin(), desc);
        refs.push_back(value);
        return AddOperands(op, refs, types, t.pos);
      }
      case OpCode::kDot: {
        const Type* a = nullptr;
        const Type* b = nullptr;
        const Type* d = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 3, op, t.pos)) {
          return false;
        }
        if (Try(',')) {
          if (!ExpectWord("inputPrecision", "after tt.dot's operands") ||
              !Expect('=', "after inputPrecision") ||
              !ParseEnumWord(op, "inputPrecision")) {
            return false;
          }
        }
        if (!ParseOptionalAttrDict(op) || !ParseColonType(&a, before_type) ||
            !Expect('*', "between tt.dot's operand types") || !ParseType(&b) ||
            !ExpectArrow("in tt.dot's types") || !ParseType(&d) ||
            !AddOperand(op, refs[0], a) || !AddOperand(op, refs[1], b) ||
            !AddOperand(op, refs[2], d)) {
          return false;
        }
        t.results = {d};
        return true;
      }
      case OpCode::kDotScaled:
        return ParseDotScaled(t);
      case OpCode::kReduce:
      case OpCode::kScan:
      case OpCode::kMapElementwise:
        return Fail(t.pos, name + " is written in the generic form (\"" + name +
                               "\"(...) ...)");
      case OpCode::kReduceReturn:
      case OpCode::kScanReturn: {
        std::vector<const Type*> types;
        if (!ParseValueRefs(&refs) || !ParseOptionalAttrDict(op) ||
            !Expect(':', before_type) || !ParseTypeList(&types)) {
          return false;
        }
        return AddOperands(op, refs, types, t.pos);
      }
      case OpCode::kMapElementwiseReturn:
      case OpCode::kReturn:
      case OpCode::kYield: {
        std::vector<const Type*> types;
        if (!ParseOptionalAttrDict(op) || !ParseValueRefs(&refs)) return false;
        if (!refs.empty() &&
            (!Expect(':', before_type) || !ParseTypeList(&types))) {
          return false;
        }
        return AddOperands(op, refs, types, t.pos);
      }
      case OpCode::kFpToFp: {
        const Type* from = nullptr;
        const Type* to = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 1, op, t.pos) ||
            !ParseOptionalAttrDict(op)) {
          return false;
        }
        if (Try(',') &&
            (!ExpectWord("rounding", "after tt.fp_to_fp's operand") ||
             !Expect('=', "after rounding") ||
             !ParseEnumWord(op, "rounding"))) {
          return false;
        }
        if (!ParseColonType(&from, before_type) ||
            !ExpectArrow("in tt.fp_to_fp's types") || !ParseType(&to) ||
            !AddOperand(op, refs[0], from)) {
          return false;
        }
        t.results = {to};
        return true;
      }
      case OpCode::kClampF: {
        const Type* type = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 3, op, t.pos) ||
            !Expect(',', "after tt.clampf's operands") ||
            !ExpectWord("propagateNan", "in tt.clampf") ||
            !Expect('=', "after propagateNan") ||
            !ParseEnumWord(op, "propagateNan") || !ParseOptionalAttrDict(op) ||
            !ParseColonType(&type, before_type)) {
          return false;
        }
        for (const ValueRef& r : refs) {
          if (!AddOperand(op, r, type)) return false;
        }
        t.results = {type};
        return true;
      }
      case OpCode::kExternElementwise: {
        std::vector<const Type*> ins;
        if (!ParseValueRefs(&refs) || !ParseOptionalAttrDict(op) ||
            !Expect(':', before_type) || !ParseFunctionType(&ins, &t.results)) {
          return false;
        }
        return AddOperands(op, refs, ins, t.pos);
      }
      case OpCode::kElementwiseInlineAsm: {
        std::string asm_string;
        std::vector<const Type*> ins;
        if (!ParseString(&asm_string)) return false;
        op->set_attr("asm_string", asm_string);
        if (!ParseOptionalAttrDict(op) || !ParseValueRefs(&refs)) return false;
        if (!refs.empty() &&
            (!Expect(':', before_type) || !ParseTypeList(&ins))) {
          return false;
        }
        if (!ExpectArrow("before the result types") ||
            !ParseTypeList(&t.results)) {
          return false;
        }
        return AddOperands(op, refs, ins, t.pos);
      }
      case OpCode::kPrint: {
        std::string prefix;
        std::vector<const Type*> types;
        if (!ParseString(&prefix)) return false;
        op->set_attr("prefix", prefix);
        if (!ParseOptionalAttrDict(op)) return false;
        if (Try(':') && (!ParseValueRefs(&refs) ||
                         !Expect(':', "before tt.print's types") ||
                         !ParseTypeList(&types))) {
          return false;
        }
        return AddOperands(op, refs, types, t.pos);
      }
      case OpCode::kAssert: {
        std::string message;
        const Type* type = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 1, op, t.pos) ||
            !Expect(',', "before tt.assert's message") ||
            !ParseString(&message)) {
          return false;
        }
        op->set_attr("message", message);
        if (!ParseOptionalAttrDict(op) || !ParseColonType(&type, before_type)) {
          return false;
        }
        return AddOperand(op, refs[0], type);
      }
      case OpCode::kBarrier:
        return ParseOptionalAttrDict(op);
      case OpCode::kAssume: {
        const Type* type = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 1, op, t.pos) ||
            !ParseOptionalAttrDict(op) || !ParseColonType(&type, before_type) ||
            !ParseOptionalAttrDict(op)) {
          return false;
        }
        return AddOperand(op, refs[0], type);
      }
      case OpCode::kPoison: {
        const Type* type = nullptr;
        if (!ParseOptionalAttrDict(op)) return false;
        if (Try('<')) {
          Attribute ignored;
          if (!ParseAttr(&ignored) || !Expect('>', "after ub.poison<...")) {
            return false;
          }
        }
        if (!ParseColonType(&type, before_type)) return false;
        t.results = {type};
        return true;
      }
      case OpCode::kCall: {
        std::string callee;
        std::vector<const Type*> ins;
        if (!Expect('@', "before the callee")) return false;
        if (Raw() == '"' ? !ParseString(&callee)
                         : !ParseWord(&callee, "the callee's name")) {
          return false;
        }
        op->set_attr("callee", callee);
        if (!Expect('(', "to open the arguments") || !ParseValueRefs(&refs) ||
            !Expect(')', "to close the arguments") ||
            !ParseOptionalAttrDict(op) || !Expect(':', before_type) ||
            !ParseFunctionType(&ins, &t.results)) {
          return false;
        }
        return AddOperands(op, refs, ins, t.pos);
      }
      case OpCode::kFor:
        return ParseFor(t);
      case OpCode::kIf:
        return ParseIf(t);
      case OpCode::kWhile:
        return ParseWhile(t);
      case OpCode::kCondition: {
        ValueRef cond;
        std::vector<const Type*> types;
        if (!Expect('(', "after scf.condition") || !ParseValueRef(&cond) ||
            !Expect(')', "after the condition") || !ParseOptionalAttrDict(op) ||
            !ParseValueRefs(&refs)) {
          return false;
        }
        if (!refs.empty() &&
            (!Expect(':', before_type) || !ParseTypeList(&types))) {
          return false;
        }
        refs.insert(refs.begin(), cond);
        types.insert(types.begin(), Type::I1());
        return AddOperands(op, refs, types, t.pos);
      }
      default:
        return Fail(t.pos, "no syntax for " + name);
    }
  }

  bool ParseLoadStore(OpText& t) {
    Operation* op = t.op;
    const bool load = op->code() == OpCode::kLoad;
    const std::string name = op->name();
    std::vector<ValueRef> refs;
    const Type* ptr = nullptr;
    if (!ParseValueRefs(&refs)) return false;
    if (refs.size() < (load ? 1u : 2u) || refs.size() > 3) {
      return Fail(t.pos, load ? "tt.load takes a pointer, a mask and an other"
                              : "tt.store takes a pointer, a value and a mask");
    }
    if (!ParseCacheEvict(op) || !ParseOptionalAttrDict(op) ||
        !Expect(':', "before " + name + "'s type")) {
      return false;
    }
    const size_t type_at = Here();
    if (!ParseType(&ptr)) return false;
    const Type* pointee = PointeeOf(ptr);
    if (pointee == nullptr) {
      return Fail(type_at, name +
                               " needs a pointer or a tensor of pointers, "
                               "not " +
                               TypeText(ptr));
    }
    if (!AddOperand(op, refs[0], ptr)) return false;
    const size_t mask = load ? 1 : 2;
    if (!load && !AddOperand(op, refs[1], pointee)) return false;
    if (refs.size() > mask && !AddOperand(op, refs[mask], I1Like(pointee))) {
      return false;
    }
    if (load && refs.size() > 2 && !AddOperand(op, refs[2], pointee)) {
      return false;
    }
    if (load) t.results = {pointee};
    return true;
  }

  // tt.make_tensor_ptr %base, [shape], [strides], [offsets] : <tensor<..>>
  // tt.make_tensor_descriptor %base, [shape], [strides] : <f16>, <tensor<..>>
  bool ParseMakeTensorPtrOrDesc(OpText& t) {
    Operation* op = t.op;
    const bool ptr = op->code() == OpCode::kMakeTensorPtr;
    const std::string name = op->name();
    ValueRef base;
    std::vector<ValueRef> lists[3];
    const int count = ptr ? 3 : 2;
    if (!ParseValueRef(&base)) return false;
    for (int k = 0; k < count; ++k) {
      if (!Expect(',', "between " + name + "'s operand lists") ||
          !ParseBracketRefs(&lists[k])) {
        return false;
      }
      if (lists[k].size() != lists[0].size()) {
        return Fail(t.pos, name + "'s operand lists must have one length");
      }
    }
    if (!ParseOptionalAttrDict(op) ||
        !Expect(':', "before " + name + "'s type")) {
      return false;
    }
    const size_t at = Here();
    const Type* base_type = nullptr;
    const Type* result = nullptr;
    if (ptr) {
      if (!ParsePointerType(&result)) return false;
      if (!result->pointee()->IsTensor()) {
        return Fail(at, "tt.make_tensor_ptr makes a pointer to a tensor, not " +
                            TypeText(result));
      }
      base_type =
          Type::Pointer(result->pointee()->element(), result->address_space());
    } else if (!ParsePointerType(&base_type) ||
               !Expect(',', "between " + name + "'s types") ||
               !ParseDescType(&result)) {
      return false;
    }
    if (!AddOperand(op, base, base_type)) return false;
    const Type* kinds[3] = {ptr ? Type::I64() : Type::I32(), Type::I64(),
                            Type::I32()};
    for (int k = 0; k < count; ++k) {
      for (const ValueRef& r : lists[k]) {
        if (!AddOperand(op, r, kinds[k])) return false;
      }
    }
    t.results = {result};
    return true;
  }

  // tt.dot_scaled %a [scale %as], %b [scale %bs], %c lhs = e4m3 rhs = e2m1
  //   {attrs} : A [, AS] * B [, BS] -> D
  bool ParseDotScaled(OpText& t) {
    Operation* op = t.op;
    ValueRef a, b, c, a_scale, b_scale;
    bool has_a_scale = false, has_b_scale = false;
    if (!ParseValueRef(&a)) return false;
    if (TryWord("scale")) {
      has_a_scale = true;
      if (!ParseValueRef(&a_scale)) return false;
    }
    if (!Expect(',', "after tt.dot_scaled's lhs") || !ParseValueRef(&b)) {
      return false;
    }
    if (TryWord("scale")) {
      has_b_scale = true;
      if (!ParseValueRef(&b_scale)) return false;
    }
    const Type *at = nullptr, *ast = nullptr, *bt = nullptr, *bst = nullptr,
               *dt = nullptr;
    if (!Expect(',', "after tt.dot_scaled's rhs") || !ParseValueRef(&c) ||
        !ExpectWord("lhs", "in tt.dot_scaled") || !Expect('=', "after lhs") ||
        !ParseEnumWord(op, "a_elem_type") ||
        !ExpectWord("rhs", "in tt.dot_scaled") || !Expect('=', "after rhs") ||
        !ParseEnumWord(op, "b_elem_type") || !ParseOptionalAttrDict(op) ||
        !ParseColonType(&at, "before tt.dot_scaled's types")) {
      return false;
    }
    if (has_a_scale &&
        (!Expect(',', "before the lhs scale's type") || !ParseType(&ast))) {
      return false;
    }
    if (!Expect('*', "between tt.dot_scaled's operand types") ||
        !ParseType(&bt)) {
      return false;
    }
    if (has_b_scale &&
        (!Expect(',', "before the rhs scale's type") || !ParseType(&bst))) {
      return false;
    }
    if (!ExpectArrow("in tt.dot_scaled's types") || !ParseType(&dt) ||
        !AddOperand(op, a, at) || !AddOperand(op, b, bt) ||
        !AddOperand(op, c, dt) ||
        (has_a_scale && !AddOperand(op, a_scale, ast)) ||
        (has_b_scale && !AddOperand(op, b_scale, bst))) {
      return false;
    }
    op->set_attr("operandSegmentSizes", ArrayAttr{{1, 1, 1, has_a_scale ? 1 : 0,
                                                   has_b_scale ? 1 : 0}});
    t.results = {dt};
    return true;
  }

  // A terminator the text may leave out (MLIR's ensureTerminator).
  void ImplyYield(Block* block, OpText& t) {
    const Operation* last = block->back();
    if (last != nullptr && ir::IsTerminator(last->code())) return;
    t.implied.push_back(block->Append(
        std::make_unique<Operation>(OpCode::kYield, SourceLocation{})));
  }

  // scf.for [unsigned] %iv = %lb to %ub step %s
  //   [iter_args(%a = %init, ...) -> (types)] : T { ... } [{attrs}]
  bool ParseFor(OpText& t) {
    Operation* op = t.op;
    if (TryWord("unsigned")) op->set_attr("unsignedCmp", true);
    ValueRef iv, lb, ub, step;
    std::vector<ValueRef> args, inits;
    std::vector<const Type*> types;
    if (!ParseValueRef(&iv) || !Expect('=', "after the induction variable") ||
        !ParseValueRef(&lb) || !ExpectWord("to", "in scf.for") ||
        !ParseValueRef(&ub) || !ExpectWord("step", "in scf.for") ||
        !ParseValueRef(&step)) {
      return false;
    }
    if (TryWord("iter_args")) {
      if (!Expect('(', "after iter_args")) return false;
      do {
        args.emplace_back();
        inits.emplace_back();
        if (!ParseValueRef(&args.back()) ||
            !Expect('=', "in iter_args(... = ...)") ||
            !ParseValueRef(&inits.back())) {
          return false;
        }
      } while (Try(','));
      if (!Expect(')', "to close iter_args") ||
          !ExpectArrow("before the loop's result types") ||
          !ParseResultTypes(&types)) {
        return false;
      }
    }
    if (Peek() != ':') {
      return Fail(Here(),
                  "scf.for without ': type' counts in index, which is "
                  "not supported");
    }
    const Type* iv_type = nullptr;
    if (!ParseColonType(&iv_type, "before the induction variable's type")) {
      return false;
    }
    if (!AddOperand(op, lb, iv_type) || !AddOperand(op, ub, iv_type) ||
        !AddOperand(op, step, iv_type) ||
        !AddOperands(op, inits, types, t.pos)) {
      return false;
    }
    Block* body = op->add_region();
    body->add_arg(iv_type);
    for (const Type* type : types) body->add_arg(type);
    std::vector<ValueRef> names = {iv};
    names.insert(names.end(), args.begin(), args.end());
    if (!ParseRegion(body, names, false) || !ParseOptionalAttrDict(op)) {
      return false;
    }
    if (types.empty()) ImplyYield(body, t);
    t.results = types;
    return true;
  }

  // scf.if %c [-> (types)] { ... } [else { ... }] [{attrs}]
  bool ParseIf(OpText& t) {
    Operation* op = t.op;
    ValueRef cond;
    if (!ParseValueRef(&cond) || !AddOperand(op, cond, Type::I1())) {
      return false;
    }
    if (TryArrow() && !ParseResultTypes(&t.results)) return false;
    Block* then_block = op->add_region();
    Block* else_block = op->add_region();
    if (!ParseRegion(then_block, {}, false)) return false;
    if (t.results.empty()) ImplyYield(then_block, t);
    if (TryWord("else")) {
      if (!ParseRegion(else_block, {}, false)) return false;
      if (t.results.empty()) ImplyYield(else_block, t);
    }
    return ParseOptionalAttrDict(op);
  }

  // scf.while [(%a = %init, ...)] : (A, ...) -> R { before } do { after }
  //   [attributes {attrs}]
  bool ParseWhile(OpText& t) {
    Operation* op = t.op;
    std::vector<ValueRef> args, inits;
    if (Try('(')) {
      do {
        args.emplace_back();
        inits.emplace_back();
        if (!ParseValueRef(&args.back()) ||
            !Expect('=', "in scf.while (... = ...)") ||
            !ParseValueRef(&inits.back())) {
          return false;
        }
      } while (Try(','));
      if (!Expect(')', "to close scf.while's arguments")) return false;
    }
    std::vector<const Type*> ins;
    if (!Expect(':', "before scf.while's type") ||
        !ParseFunctionType(&ins, &t.results) ||
        !AddOperands(op, inits, ins, t.pos)) {
      return false;
    }
    Block* before = op->add_region();
    for (const Type* type : ins) before->add_arg(type);
    if (!ParseRegion(before, args, false) ||
        !ExpectWord("do", "between scf.while's regions") ||
        !ParseRegion(op->add_region(), {}, true)) {
      return false;
    }
    if (TryWord("attributes")) return ParseOptionalAttrDict(op);
    return true;
  }

  // --- after the text --------------------------------------------------------

  struct PendingOp {
    Operation* op;
    int loc;
    bool name_results;  // its results' SSA names were made up
  };
  struct PendingArg {
    ir::Function* function;
    int index;
    int loc;
    bool made_up_name;
  };
  struct PendingValue {
    Value* value;
    int loc;
  };
  struct PendingFunction {
    ir::Function* function;
    int loc;
  };

  bool ResolveAll() {
    ResolvedLoc r;
    for (const PendingOp& p : pending_ops_) {
      if (!ResolveLoc(p.loc, 0, &r)) return false;
      p.op->set_loc(r.loc);
      if (p.name_results && !r.name.empty()) {
        for (int k = 0; k < p.op->num_results(); ++k) {
          if (p.op->result(k)->name().empty())
            p.op->result(k)->set_name(r.name);
        }
      }
    }
    for (const PendingArg& p : pending_args_) {
      if (!ResolveLoc(p.loc, 0, &r)) return false;
      ir::ArgInfo& info = p.function->arg_info()[p.index];
      info.loc = r.loc;
      if (!r.name.empty()) info.name = r.name;
      if (p.made_up_name && !r.name.empty()) {
        p.function->body()->arg(p.index)->set_name(r.name);
      }
    }
    for (const PendingValue& p : pending_values_) {
      if (!ResolveLoc(p.loc, 0, &r)) return false;
      if (!r.name.empty()) p.value->set_name(r.name);
    }
    for (const PendingFunction& p : pending_functions_) {
      if (!ResolveLoc(p.loc, 0, &r)) return false;
      p.function->set_loc(r.loc);
    }
    for (int loc : checked_locs_) {
      if (!ResolveLoc(loc, 0, &r)) return false;
    }
    // Aliases nothing uses must still make sense.
    for (auto& [name, def] : aliases_) {
      if (def.state == 0) {
        LocNode use;
        use.kind = LocNode::kAlias;
        use.text = name;
        use.pos = def.pos;
        if (!ResolveLoc(AddLoc(std::move(use)), 0, &r)) return false;
      }
    }
    return true;
  }

  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::optional<Error> error_;
  std::unique_ptr<ir::Module> module_;
  std::vector<std::unordered_map<std::string, std::vector<Value*>>> scopes_;
  std::vector<LocNode> loc_nodes_;
  std::map<std::string, AliasDef> aliases_;
  std::vector<PendingOp> pending_ops_;
  std::vector<PendingArg> pending_args_;
  std::vector<PendingValue> pending_values_;
  std::vector<PendingFunction> pending_functions_;
  std::vector<int> checked_locs_;
};

}  // namespace

Result<std::unique_ptr<ir::Module>> ReadTtir(std::string_view text,
                                             std::string_view file) {
  Reader reader(text, file);
  return reader.Read();
}

}  // namespace mtlemu::triton::ttir
