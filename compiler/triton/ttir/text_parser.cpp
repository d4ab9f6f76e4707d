#include "compiler/triton/ttir/text_parser.h"

#include <charconv>

#include "compiler/triton/ir/ttir_syntax.h"

namespace mtlemu::triton::ttir::internal {

bool TextParser::Fail(size_t pos, const std::string& message) {
  if (!error_) error_ = Error{Where(pos) + ": error: " + message};
  return false;
}

std::string TextParser::Where(size_t pos) const {
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

std::string TextParser::LineCol(size_t pos) const {
  const std::string w = Where(pos);
  const size_t colon = w.rfind(':', w.rfind(':') - 1);
  return w.substr(colon + 1);
}

void TextParser::SkipSpace() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
}

bool TextParser::AtEnd() {
  SkipSpace();
  return pos_ >= text_.size();
}

char TextParser::Peek() {
  SkipSpace();
  return pos_ < text_.size() ? text_[pos_] : '\0';
}

char TextParser::Raw(size_t offset) const {
  return pos_ + offset < text_.size() ? text_[pos_ + offset] : '\0';
}

size_t TextParser::Here() {
  SkipSpace();
  return pos_;
}

bool TextParser::Try(char c) {
  if (Peek() != c) return false;
  ++pos_;
  return true;
}

bool TextParser::Expect(char c, const std::string& context) {
  if (Try(c)) return true;
  return Fail(Here(), std::string("expected '") + c + "' " + context + Found());
}

bool TextParser::TryArrow() {
  if (Peek() == '-' && Raw(1) == '>') {
    pos_ += 2;
    return true;
  }
  return false;
}

bool TextParser::ExpectArrow(const std::string& context) {
  if (TryArrow()) return true;
  return Fail(Here(), "expected '->' " + context + Found());
}

std::string TextParser::Found() {
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

std::string_view TextParser::PeekWord() {
  SkipSpace();
  if (pos_ >= text_.size() || !IsIdStart(text_[pos_])) return {};
  size_t end = pos_ + 1;
  while (end < text_.size() && IsIdChar(text_[end])) ++end;
  return text_.substr(pos_, end - pos_);
}

bool TextParser::TryWord(std::string_view w) {
  if (PeekWord() != w) return false;
  pos_ += w.size();
  return true;
}

bool TextParser::ExpectWord(std::string_view w, const std::string& context) {
  if (TryWord(w)) return true;
  return Fail(Here(), "expected '" + std::string(w) + "' " + context + Found());
}

bool TextParser::ParseWord(std::string* out, const std::string& what) {
  const std::string_view w = PeekWord();
  if (w.empty()) return Fail(Here(), "expected " + what + Found());
  *out = std::string(w);
  pos_ += w.size();
  return true;
}

bool TextParser::ParseString(std::string* out) {
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

bool TextParser::Deeper(int* depth) {
  if (++*depth > kMaxDepth) return Fail(Here(), "nesting too deep");
  return true;
}

bool TextParser::ParseNumber(Number* n) {
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

bool TextParser::IntIn(const Number& n, const Type* t, int64_t* out) {
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

bool TextParser::FloatIn(const Number& n, const Type* t, double* out) {
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

bool TextParser::ParseType(const Type** out) {
  int depth = 0;
  return ParseTypeAt(out, depth);
}

bool TextParser::ParseTypeAt(const Type** out, int depth) {
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

bool TextParser::ParsePointerBody(const Type** out, int depth) {
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

bool TextParser::ParseDescBody(const Type** out, int depth) {
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

bool TextParser::ParseTensorBody(const Type** out, int depth, size_t start) {
  if (!Expect('<', "after 'tensor'")) return false;
  SkipSpace();
  std::vector<int64_t> shape;
  int64_t elements = 1;
  while (IsDigit(Raw())) {
    const size_t at = pos_;
    uint64_t d = 0;
    while (IsDigit(Raw())) {
      d = d * 10 + (Raw() - '0');
      if (d > (uint64_t{1} << 32)) return Fail(at, "tensor dimension too big");
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

bool TextParser::ParsePointerType(const Type** out) {
  if (Peek() == '<') return ParsePointerBody(out, 0);
  const size_t at = Here();
  if (!ParseType(out)) return false;
  if (!(*out)->IsPointer()) {
    return Fail(at, "expected a pointer type, found " + TypeText(*out));
  }
  return true;
}

bool TextParser::ParseDescType(const Type** out) {
  if (Peek() == '<') return ParseDescBody(out, 0);
  const size_t at = Here();
  if (!ParseType(out)) return false;
  if (!(*out)->IsTensorDesc()) {
    return Fail(at, "expected a !tt.tensordesc type, found " + TypeText(*out));
  }
  return true;
}

bool TextParser::ParseTypeList(std::vector<const Type*>* out) {
  do {
    const Type* t = nullptr;
    if (!ParseType(&t)) return false;
    out->push_back(t);
  } while (Try(','));
  return true;
}

bool TextParser::ParseParenTypes(std::vector<const Type*>* out) {
  if (!Expect('(', "to open a type list")) return false;
  if (Try(')')) return true;
  if (!ParseTypeList(out)) return false;
  return Expect(')', "to close a type list");
}

bool TextParser::ParseResultTypes(std::vector<const Type*>* out) {
  if (Peek() == '(') return ParseParenTypes(out);
  const Type* t = nullptr;
  if (!ParseType(&t)) return false;
  out->push_back(t);
  return true;
}

bool TextParser::ParseFunctionType(std::vector<const Type*>* ins,
                                   std::vector<const Type*>* outs) {
  if (!ParseParenTypes(ins)) return false;
  if (!ExpectArrow("in a function type")) return false;
  return ParseResultTypes(outs);
}

bool TextParser::ParseAttr(Attribute* out, int depth) {
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

bool TextParser::ParseNumberAttr(Attribute* out) {
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

bool TextParser::ParseListAttr(Attribute* out, int depth) {
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

bool TextParser::ParseDialectAttr(Attribute* out, int depth) {
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
    if (pos_ >= text_.size()) return Fail(start, "unterminated #" + name + "<");
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

bool TextParser::ParseArrayAttr(Attribute* out) {
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

bool TextParser::ParseDenseNode(DenseNode* node, int depth) {
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

bool TextParser::DenseValue(const DenseNode& node, const Type* element,
                            std::variant<int64_t, double>* out) {
  if (node.is_list) return Fail(node.pos, "expected an element, not a list");
  if (element->IsInt()) {
    if (node.boolean) {
      if (!element->IsInt(1)) {
        return Fail(node.pos, "true/false is for i1, not " + TypeText(element));
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

bool TextParser::FlattenDense(const DenseNode& node,
                              const std::vector<int64_t>& shape, size_t dim,
                              const Type* element, DenseAttr* out) {
  if (dim == shape.size()) {
    out->values.emplace_back();
    return DenseValue(node, element, &out->values.back());
  }
  if (!node.is_list || static_cast<int64_t>(node.items.size()) != shape[dim]) {
    return Fail(node.pos,
                "dense<...> does not have the shape of " + TypeText(out->type));
  }
  for (const DenseNode& item : node.items) {
    if (!FlattenDense(item, shape, dim + 1, element, out)) return false;
  }
  return true;
}

bool TextParser::ParseDense(Attribute* out, int depth) {
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
    return Fail(start, "dense<...> has " + std::to_string(dense.values.size()) +
                           " elements, " + TypeText(t) + " has " +
                           std::to_string(t->NumElements()));
  }
  *out = std::move(dense);
  return true;
}

bool TextParser::DenseFromHex(const std::string& hex, const Type* element,
                              size_t at, DenseAttr* dense) {
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

bool TextParser::ParseAttrDict(std::map<std::string, Attribute>* out) {
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
  return Expect('}', "to close the attribute dictionary at " + LineCol(start));
}

bool TextParser::ParseOptionalAttrDict(Operation* op) {
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

bool TextParser::ParseLocParens(int* node) {
  if (!Expect('(', "after 'loc'")) return false;
  if (!ParseLocExpr(node, 0)) return false;
  return Expect(')', "to close loc(...)");
}

bool TextParser::TryLoc(int* node) {
  *node = -1;
  if (!TryWord("loc")) return true;
  return ParseLocParens(node);
}

int TextParser::AddLoc(LocNode n) {
  loc_nodes_.push_back(std::move(n));
  return static_cast<int>(loc_nodes_.size()) - 1;
}

bool TextParser::ParseLocExpr(int* node, int depth) {
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

bool TextParser::ParseAliasDef() {
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

bool TextParser::ResolveLoc(int node, int depth, ResolvedLoc* out) {
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
        return Fail(def.pos, "location alias #" + n.text + " refers to itself");
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

bool TextParser::ParseValueRef(ValueRef* ref) {
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

bool TextParser::ParseValueRefs(std::vector<ValueRef>* out) {
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

}  // namespace mtlemu::triton::ttir::internal
