#include "compiler/triton/python/lexer.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mtlemu::triton::py {
namespace {

// CPython's limits (Parser/tokenizer.h: MAXINDENT, MAXLEVEL) and tab stop.
constexpr size_t kMaxIndentLevels = 100;
constexpr size_t kMaxBracketNesting = 200;
constexpr int kTabSize = 8;

constexpr std::string_view kKeywords[] = {
    "False",  "None",   "True",    "and",      "as",       "assert", "async",
    "await",  "break",  "class",   "continue", "def",      "del",    "elif",
    "else",   "except", "finally", "for",      "from",     "global", "if",
    "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
    "pass",   "raise",  "return",  "try",      "while",    "with",   "yield",
};

// Longest first, so the first match is the longest.
constexpr std::string_view kOperators[] = {
    "**=", "//=", ">>=", "<<=", "...", "!=", "%=", "&=", "**", "*=", "+=", "-=",
    "->",  "//",  "/=",  ":=",  "<<",  "<=", "==", ">=", ">>", "@=", "^=", "|=",
    "(",   ")",   "[",   "]",   "{",   "}",  ",",  ":",  ";",  ".",  "+",  "-",
    "*",   "/",   "%",   "@",   "&",   "|",  "^",  "~",  "<",  ">",  "=",  "!",
};

// After a number, these keywords may follow with no space (`1if x else y`),
// as CPython 3.12's verify_end_of_number allows.
constexpr std::string_view kKeywordsAfterNumber[] = {
    "and", "else", "for", "if", "in", "is", "not", "or",
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool IsOctalDigit(char c) { return c >= '0' && c <= '7'; }
bool IsAsciiLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsAsciiNameStart(char c) { return IsAsciiLetter(c) || c == '_'; }
bool IsAsciiNameChar(char c) { return IsAsciiNameStart(c) || IsDigit(c); }
bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\f'; }
bool IsNewlineChar(char c) { return c == '\n' || c == '\r'; }
bool IsOpenBracket(char c) { return c == '(' || c == '[' || c == '{'; }
bool IsCloseBracket(char c) { return c == ')' || c == ']' || c == '}'; }
char MatchingOpen(char close) {
  return close == ')' ? '(' : close == ']' ? '[' : '{';
}
int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

// Decodes the UTF-8 sequence at s[i]; returns its length, 0 if malformed.
int DecodeUtf8(std::string_view s, size_t i, uint32_t* cp) {
  const auto byte = [&](size_t k) -> uint32_t {
    return k < s.size() ? static_cast<unsigned char>(s[k]) : 0;
  };
  const uint32_t b0 = byte(i);
  int len = 0;
  uint32_t value = 0;
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    value = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    value = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    value = b0 & 0x07;
  } else {
    return 0;
  }
  for (int k = 1; k < len; ++k) {
    const uint32_t b = byte(i + k);
    if ((b & 0xC0) != 0x80) return 0;
    value = (value << 6) | (b & 0x3F);
  }
  constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kMinForLength[len] || value > 0x10FFFF ||
      (value >= 0xD800 && value <= 0xDFFF)) {
    return 0;
  }
  *cp = value;
  return len;
}

// Whether a non-ASCII code point may be part of an identifier. Python uses
// Unicode's XID_Start/XID_Continue; without the Unicode tables this accepts
// every letter-bearing block and rejects the punctuation, symbol and space
// blocks a pasted snippet most often brings (no-break space, curly quotes,
// dashes, arrows, math operators, the BOM).
bool IsIdentifierCodePoint(uint32_t cp) {
  if (cp < 0x80) return false;
  if (cp >= 0xA0 && cp <= 0xBF) return cp == 0xAA || cp == 0xB5 || cp == 0xBA;
  if (cp == 0xD7 || cp == 0xF7) return false;
  if (cp >= 0x2000 && cp <= 0x206F) return false;  // general punctuation
  if (cp >= 0x20A0 && cp <= 0x20CF) return false;  // currency symbols
  if (cp >= 0x2190 && cp <= 0x2BFF) return false;  // arrows, math, shapes
  if (cp >= 0x3000 && cp <= 0x303F) return false;  // CJK punctuation
  if (cp >= 0xFE30 && cp <= 0xFE4F) return false;  // CJK compatibility forms
  if (cp == 0xFEFF) return false;
  if (cp >= 0xFF01 && cp <= 0xFF0F) return false;  // fullwidth punctuation
  return true;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string CodePointName(uint32_t cp) {
  constexpr char kHex[] = "0123456789ABCDEF";
  std::string digits;
  for (uint32_t v = cp; v != 0 || digits.size() < 4; v >>= 4) {
    digits.insert(digits.begin(), kHex[v & 15]);
  }
  return "U+" + digits;
}

// r, u, b, f and their valid pairs, in either case and order.
bool IsStringPrefix(std::string_view word) {
  std::string lower;
  for (char c : word) lower += static_cast<char>(c | 0x20);
  static constexpr std::string_view kPrefixes[] = {"r",  "u",  "b",  "f",
                                                   "br", "rb", "fr", "rf"};
  return std::find(std::begin(kPrefixes), std::end(kPrefixes), lower) !=
         std::end(kPrefixes);
}

class Lexer {
 public:
  Lexer(std::string_view source, std::string_view file, int first_line)
      : src_(source), file_(file), line_(first_line) {}

  Result<std::vector<Token>> Run();

 private:
  struct Position {
    size_t offset;
    int line;
    int column;
  };
  struct Bracket {
    char open;
    Position where;
    bool fstring_field;  // the `{` of an f-string replacement field
  };
  // Inside an f-string the tokenizer is in one of three modes: reading the
  // literal text (kFString), a replacement field's expression (kField,
  // ordinary tokens), or a field's format spec (kFormatSpec, literal text
  // again). They nest: a field may hold another f-string.
  enum class ModeKind { kFString, kField, kFormatSpec };
  struct Mode {
    ModeKind kind;
    char quote;
    bool triple;
    bool raw;
    Position start;       // kFString: the prefix; kField: the `{`
    size_t bracket_base;  // kFString: brackets_.size() when it started
    size_t field_index;   // kField: the index of its `{` in brackets_
  };
  struct Fatal {
    std::string message;
    Position where;
  };

  bool AtEnd() const { return pos_ >= src_.size(); }
  char Cur() const { return At(pos_); }
  char At(size_t i) const { return i < src_.size() ? src_[i] : '\0'; }
  Position Here() const {
    return {pos_, line_, static_cast<int>(pos_ - line_start_)};
  }
  bool StartsWith(std::string_view s) const {
    return src_.substr(std::min(pos_, src_.size())).starts_with(s);
  }
  // At \n, \r\n or \r: steps over it and starts the next line.
  void ConsumeNewline() {
    if (Cur() == '\r' && At(pos_ + 1) == '\n') ++pos_;
    ++pos_;
    ++line_;
    line_start_ = pos_;
  }
  // The line an unterminated string was detected on: the last line of the
  // input when it ran out (not the empty line after a final newline).
  int DetectedLine() const {
    return AtEnd() && pos_ > 0 && IsNewlineChar(src_[pos_ - 1]) ? line_ - 1
                                                                : line_;
  }
  void SkipToEndOfLine() {
    while (!AtEnd() && !IsNewlineChar(Cur())) ++pos_;
  }

  Token& Emit(TokenKind kind, const Position& start, std::string value = {});
  void EmitError(const Position& start, std::string message) {
    Emit(TokenKind::kError, start, std::move(message));
  }
  void SetFatal(const Position& where, std::string message) {
    if (!fatal_) fatal_ = Fatal{std::move(message), where};
  }

  void StartLine();
  void Indent(int column, int alt_column, const Position& where);
  void ScanToken();
  void ScanNameOrString(const Position& start);
  void ScanString(const Position& start, std::string_view prefix);
  void ScanFStringText();
  void EndFStringWithError(std::string message);
  void DecodeEscape(std::string& out, bool bytes, std::string* error);
  void ScanNumber(const Position& start);
  bool ScanDecimalDigits();
  void FailNumber(const Position& where, std::string message);
  bool NumberEndsWell() const;
  void ScanOperator(const Position& start);
  void InvalidCharacter(const Position& start);
  void CheckBracketsAtEnd();

  Mode* FieldAtItsLevel() {
    if (modes_.empty() || modes_.back().kind != ModeKind::kField) {
      return nullptr;
    }
    Mode& m = modes_.back();
    return brackets_.size() == m.field_index + 1 ? &m : nullptr;
  }

  std::string_view src_;
  std::string_view file_;
  size_t pos_ = 0;
  int line_;
  size_t line_start_ = 0;
  bool at_line_start_ = true;
  std::vector<int> indents_{0};      // columns, tabs to multiples of 8
  std::vector<int> alt_indents_{0};  // columns, tabs as 1 (TabError check)
  std::vector<Bracket> brackets_;
  std::vector<Mode> modes_;
  std::vector<Token> tokens_;
  std::optional<Fatal> fatal_;
};

Token& Lexer::Emit(TokenKind kind, const Position& start, std::string value) {
  Token t;
  t.kind = kind;
  t.text = src_.substr(start.offset, pos_ - start.offset);
  t.value = std::move(value);
  t.line = start.line;
  t.column = start.column;
  t.end_line = line_;
  t.end_column = static_cast<int>(pos_ - line_start_);
  t.offset = start.offset;
  t.end_offset = pos_;
  tokens_.push_back(std::move(t));
  return tokens_.back();
}

Result<std::vector<Token>> Lexer::Run() {
  if (const size_t nul = src_.find('\0'); nul != std::string_view::npos) {
    // Find the NUL's line and column for the message.
    int line = line_;
    size_t line_start = 0;
    for (size_t i = 0; i < nul; ++i) {
      if (src_[i] == '\n' || (src_[i] == '\r' && At(i + 1) != '\n')) {
        ++line;
        line_start = i + 1;
      }
    }
    return Error{FormatDiagnostic(file_, line,
                                  static_cast<int>(nul - line_start),
                                  "source code cannot contain null bytes")};
  }
  if (StartsWith("\xEF\xBB\xBF")) {  // a UTF-8 byte order mark
    pos_ = 3;
    line_start_ = 3;
  }
  while (!fatal_) {
    if (!modes_.empty() && modes_.back().kind != ModeKind::kField) {
      ScanFStringText();
      continue;
    }
    if (at_line_start_ && brackets_.empty()) {
      StartLine();
      if (at_line_start_) break;  // only blank lines were left
      continue;
    }
    while (IsBlank(Cur())) ++pos_;
    if (AtEnd()) break;
    ScanToken();
  }
  if (!fatal_) CheckBracketsAtEnd();
  if (fatal_) {
    return Error{FormatDiagnostic(file_, fatal_->where.line,
                                  fatal_->where.column, fatal_->message)};
  }
  const Position end = Here();
  if (!at_line_start_) Emit(TokenKind::kNewline, end);
  while (indents_.size() > 1) {
    indents_.pop_back();
    Emit(TokenKind::kDedent, end);
  }
  Emit(TokenKind::kEndMarker, end);
  return std::move(tokens_);
}

// At the start of a physical line outside brackets: skips blank and
// comment-only lines, then measures the indentation of the next line with
// content and emits INDENT or DEDENTs for it. Leaves at_line_start_ set only
// at the end of the input.
void Lexer::StartLine() {
  while (!AtEnd()) {
    int column = 0;
    int alt_column = 0;
    for (;; ++pos_) {
      const char c = Cur();
      if (c == ' ') {
        ++column;
        ++alt_column;
      } else if (c == '\t') {
        column = (column / kTabSize + 1) * kTabSize;
        ++alt_column;
      } else if (c == '\f') {
        column = alt_column = 0;
      } else {
        break;
      }
    }
    if (Cur() == '#') SkipToEndOfLine();
    if (AtEnd()) return;
    if (IsNewlineChar(Cur())) {
      ConsumeNewline();
      continue;
    }
    Indent(column, alt_column, Here());
    at_line_start_ = false;
    return;
  }
}

void Lexer::Indent(int column, int alt_column, const Position& where) {
  constexpr const char* kTabError =
      "inconsistent use of tabs and spaces in indentation";
  if (column == indents_.back()) {
    if (alt_column != alt_indents_.back()) SetFatal(where, kTabError);
  } else if (column > indents_.back()) {
    if (indents_.size() >= kMaxIndentLevels) {
      SetFatal(where, "too many levels of indentation");
      return;
    }
    if (alt_column <= alt_indents_.back()) SetFatal(where, kTabError);
    indents_.push_back(column);
    alt_indents_.push_back(alt_column);
    Emit(TokenKind::kIndent, where);
  } else {
    while (indents_.size() > 1 && column < indents_.back()) {
      indents_.pop_back();
      alt_indents_.pop_back();
      Emit(TokenKind::kDedent, where);
    }
    if (column != indents_.back()) {
      SetFatal(where, "unindent does not match any outer indentation level");
    } else if (alt_column != alt_indents_.back()) {
      SetFatal(where, kTabError);
    }
  }
}

void Lexer::ScanToken() {
  const Position start = Here();
  const char c = Cur();
  if (c == '#') {
    SkipToEndOfLine();
    return;
  }
  if (IsNewlineChar(c)) {
    ConsumeNewline();
    if (brackets_.empty()) {  // else implicit line joining
      Emit(TokenKind::kNewline, start);
      at_line_start_ = true;
    }
    return;
  }
  if (c == '\\') {  // explicit line joining
    if (IsNewlineChar(At(pos_ + 1))) {
      ++pos_;
      ConsumeNewline();
      return;
    }
    ++pos_;
    if (AtEnd()) {
      SetFatal(start, "unexpected EOF while parsing");
      return;
    }
    EmitError(start, "unexpected character after line continuation character");
    return;
  }
  uint32_t cp = 0;
  if (IsAsciiNameStart(c) ||
      (static_cast<unsigned char>(c) >= 0x80 && DecodeUtf8(src_, pos_, &cp) &&
       IsIdentifierCodePoint(cp))) {
    ScanNameOrString(start);
    return;
  }
  if (IsDigit(c) || (c == '.' && IsDigit(At(pos_ + 1)))) {
    ScanNumber(start);
    return;
  }
  if (c == '"' || c == '\'') {
    ScanString(start, "");
    return;
  }
  ScanOperator(start);
}

void Lexer::ScanNameOrString(const Position& start) {
  size_t end = pos_;
  while (end < src_.size()) {
    const char c = src_[end];
    if (IsAsciiNameChar(c)) {
      ++end;
      continue;
    }
    uint32_t cp = 0;
    const int len =
        static_cast<unsigned char>(c) >= 0x80 ? DecodeUtf8(src_, end, &cp) : 0;
    if (len == 0 || !IsIdentifierCodePoint(cp)) break;
    end += len;
  }
  const std::string_view word = src_.substr(pos_, end - pos_);
  pos_ = end;
  if (word.size() <= 2 && (Cur() == '"' || Cur() == '\'') &&
      IsStringPrefix(word)) {
    ScanString(start, word);
    return;
  }
  Emit(TokenKind::kName, start);
}

void Lexer::ScanString(const Position& start, std::string_view prefix) {
  bool raw = false, bytes = false, formatted = false;
  for (char c : prefix) {
    const char lower = static_cast<char>(c | 0x20);
    raw |= lower == 'r';
    bytes |= lower == 'b';
    formatted |= lower == 'f';
  }
  const char quote = Cur();
  const bool triple = At(pos_ + 1) == quote && At(pos_ + 2) == quote;
  pos_ += triple ? 3 : 1;
  if (formatted) {
    modes_.push_back(Mode{ModeKind::kFString, quote, triple, raw, start,
                          brackets_.size(), 0});
    Emit(TokenKind::kFStringStart, start);
    return;
  }
  std::string value;
  std::string error;
  while (true) {
    if (AtEnd() || (!triple && IsNewlineChar(Cur()))) {
      if (triple) {
        SetFatal(start,
                 "unterminated triple-quoted string literal (detected at "
                 "line " +
                     std::to_string(DetectedLine()) + ")");
      } else {
        EmitError(start, "unterminated string literal (detected at line " +
                             std::to_string(line_) + ")");
      }
      return;
    }
    const char c = Cur();
    if (c == quote &&
        (!triple || (At(pos_ + 1) == quote && At(pos_ + 2) == quote))) {
      pos_ += triple ? 3 : 1;
      break;
    }
    if (IsNewlineChar(c)) {
      ConsumeNewline();
      value += '\n';
      continue;
    }
    if (c == '\\') {
      if (!raw) {
        DecodeEscape(value, bytes, &error);
        continue;
      }
      // A raw string keeps the backslash and the character after it, which
      // therefore cannot end the string.
      value += '\\';
      ++pos_;
      if (IsNewlineChar(Cur())) {
        ConsumeNewline();
        value += '\n';
      } else if (!AtEnd()) {
        value += Cur();
        ++pos_;
      }
      continue;
    }
    if (bytes && static_cast<unsigned char>(c) >= 0x80 && error.empty()) {
      error = "bytes can only contain ASCII literal characters";
    }
    value += c;
    ++pos_;
  }
  if (!error.empty()) {
    EmitError(start, std::move(error));
    return;
  }
  Emit(TokenKind::kString, start, std::move(value)).is_bytes = bytes;
}

// At a backslash in a non-raw string: appends what the escape stands for.
// Unknown escapes keep their backslash, as Python does (with a warning).
void Lexer::DecodeEscape(std::string& out, bool bytes, std::string* error) {
  ++pos_;               // the backslash
  if (AtEnd()) return;  // the caller reports the unterminated string
  const char c = Cur();
  const auto fail = [&](std::string message) {
    if (error->empty()) *error = std::move(message);
  };
  const auto append = [&](uint32_t value) {
    if (bytes) {
      out += static_cast<char>(value & 0xFF);
    } else {
      AppendUtf8(out, value);
    }
  };
  const auto hex_escape = [&](int digits, const char* what) {
    ++pos_;
    uint32_t value = 0;
    for (int i = 0; i < digits; ++i) {
      if (!IsHexDigit(Cur())) {
        fail(std::string("(unicode error) truncated ") + what + " escape");
        return;
      }
      value = value * 16 + static_cast<uint32_t>(HexValue(Cur()));
      ++pos_;
    }
    if (value > 0x10FFFF) {
      fail("(unicode error) illegal Unicode character");
      return;
    }
    append(value);
  };
  switch (c) {
    case '\n':
    case '\r':
      ConsumeNewline();  // a line continuation inside the string
      return;
    case '\\':
    case '\'':
    case '"':
      out += c;
      ++pos_;
      return;
    case 'a':
      out += '\a';
      ++pos_;
      return;
    case 'b':
      out += '\b';
      ++pos_;
      return;
    case 'f':
      out += '\f';
      ++pos_;
      return;
    case 'n':
      out += '\n';
      ++pos_;
      return;
    case 'r':
      out += '\r';
      ++pos_;
      return;
    case 't':
      out += '\t';
      ++pos_;
      return;
    case 'v':
      out += '\v';
      ++pos_;
      return;
    case 'x':
      hex_escape(2, "\\xXX");
      return;
    default:
      break;
  }
  if (IsOctalDigit(c)) {
    uint32_t value = 0;
    for (int i = 0; i < 3 && IsOctalDigit(Cur()); ++i) {
      value = value * 8 + static_cast<uint32_t>(Cur() - '0');
      ++pos_;
    }
    append(value);
    return;
  }
  if (!bytes && c == 'u') {
    hex_escape(4, "\\uXXXX");
    return;
  }
  if (!bytes && c == 'U') {
    hex_escape(8, "\\UXXXXXXXX");
    return;
  }
  if (!bytes && c == 'N') {
    // \N{NAME} needs Unicode's name table, which this tokenizer does not
    // carry. Step over the braces so that they open no f-string field.
    ++pos_;
    if (Cur() == '{') {
      while (!AtEnd() && !IsNewlineChar(Cur()) && Cur() != '}') ++pos_;
      if (Cur() == '}') ++pos_;
    }
    fail("unsupported: \\N{...} escapes");
    return;
  }
  out += '\\';  // not an escape; the character is read as itself
}

// In an f-string's literal text or a format spec: reads up to the next
// field, the end of the spec or the closing quote.
void Lexer::ScanFStringText() {
  const Mode mode = modes_.back();
  const bool spec = mode.kind == ModeKind::kFormatSpec;
  Position start = Here();
  std::string value;
  std::string error;
  const auto flush = [&] {
    if (!error.empty()) {
      EmitError(start, std::move(error));
    } else if (pos_ > start.offset) {
      Emit(TokenKind::kFStringMiddle, start, std::move(value));
    }
    error.clear();
    value.clear();
  };
  while (true) {
    if (AtEnd() || (!mode.triple && IsNewlineChar(Cur()))) {
      flush();
      if (spec && !AtEnd()) {
        EndFStringWithError(
            "f-string: newlines are not allowed in format specifiers for "
            "single quoted f-strings");
      } else if (mode.triple) {
        SetFatal(mode.start,
                 "unterminated triple-quoted f-string literal (detected at "
                 "line " +
                     std::to_string(DetectedLine()) + ")");
      } else {
        EndFStringWithError("unterminated f-string literal (detected at line " +
                            std::to_string(line_) + ")");
      }
      return;
    }
    const char c = Cur();
    if (c == mode.quote && (!mode.triple || (At(pos_ + 1) == mode.quote &&
                                             At(pos_ + 2) == mode.quote))) {
      flush();
      const Position quote_start = Here();
      pos_ += mode.triple ? 3 : 1;
      if (spec) {  // the quote ends the f-string with the field still open
        EndFStringWithError("f-string: expecting '}'");
        return;
      }
      Emit(TokenKind::kFStringEnd, quote_start);
      modes_.pop_back();
      return;
    }
    if (IsNewlineChar(c)) {
      ConsumeNewline();
      value += '\n';
      continue;
    }
    if (c == '{') {
      if (!spec && At(pos_ + 1) == '{') {
        value += '{';
        pos_ += 2;
        continue;
      }
      flush();
      const Position brace = Here();
      ++pos_;
      Emit(TokenKind::kOp, brace);
      brackets_.push_back(Bracket{'{', brace, true});
      if (brackets_.size() > kMaxBracketNesting) {
        EmitError(brace, "too many nested parentheses");
      }
      modes_.push_back(Mode{ModeKind::kField, mode.quote, mode.triple, mode.raw,
                            brace, 0, brackets_.size() - 1});
      return;
    }
    if (c == '}') {
      if (spec) {  // the `}` ends the field, which the kField mode reads
        flush();
        modes_.pop_back();
        return;
      }
      if (At(pos_ + 1) == '}') {
        value += '}';
        pos_ += 2;
        continue;
      }
      flush();
      const Position brace = Here();
      ++pos_;
      EmitError(brace, "f-string: single '}' is not allowed");
      start = Here();
      continue;
    }
    if (c == '\\') {
      if (!mode.raw) {
        DecodeEscape(value, /*bytes=*/false, &error);
        continue;
      }
      value += '\\';
      ++pos_;
      if (Cur() == mode.quote || Cur() == '\\') {
        value += Cur();
        ++pos_;
      }
      continue;
    }
    value += c;
    ++pos_;
  }
}

// A single-quoted f-string that cannot go on (a newline in its text or
// spec): reports it and drops back to the tokens around that f-string.
void Lexer::EndFStringWithError(std::string message) {
  while (!modes_.empty()) {
    const Mode top = modes_.back();
    modes_.pop_back();
    if (top.kind == ModeKind::kFString) {
      brackets_.resize(std::min(brackets_.size(), top.bracket_base));
      EmitError(top.start, std::move(message));
      return;
    }
  }
}

void Lexer::ScanNumber(const Position& start) {
  const char c = Cur();
  const char c1 = static_cast<char>(At(pos_ + 1) | 0x20);
  if (c == '0' && (c1 == 'x' || c1 == 'o' || c1 == 'b')) {
    const char* name = c1 == 'x'   ? "hexadecimal"
                       : c1 == 'o' ? "octal"
                                   : "binary";
    const auto is_digit = [c1](char d) {
      return c1 == 'x'   ? IsHexDigit(d)
             : c1 == 'o' ? IsOctalDigit(d)
                         : (d == '0' || d == '1');
    };
    pos_ += 2;
    bool any = false;
    while (true) {
      if (Cur() == '_') {
        const Position underscore = Here();
        ++pos_;
        if (!is_digit(Cur())) {
          FailNumber(underscore, std::string("invalid ") + name + " literal");
          return;
        }
      } else if (is_digit(Cur())) {
        ++pos_;
        any = true;
      } else {
        break;
      }
    }
    if (IsDigit(Cur())) {
      FailNumber(Here(), std::string("invalid digit '") + Cur() + "' in " +
                             name + " literal");
      return;
    }
    if (!any || !NumberEndsWell()) {
      FailNumber(start, std::string("invalid ") + name + " literal");
      return;
    }
    Emit(TokenKind::kNumber, start);
    return;
  }
  bool is_float = false;
  bool imaginary = false;
  // A misplaced underscore is reported where it is, as CPython does.
  const auto bad_underscore = [&] {
    --pos_;
    FailNumber(Here(), "invalid decimal literal");
  };
  if (IsDigit(Cur()) && !ScanDecimalDigits()) return bad_underscore();
  if (Cur() == '.') {
    ++pos_;
    is_float = true;
    if (IsDigit(Cur()) && !ScanDecimalDigits()) return bad_underscore();
  }
  if ((Cur() | 0x20) == 'e') {
    const char sign = At(pos_ + 1);
    const size_t digits = (sign == '+' || sign == '-') ? 2 : 1;
    if (IsDigit(At(pos_ + digits))) {
      pos_ += digits;
      is_float = true;
      if (!ScanDecimalDigits()) return bad_underscore();
    }
  }
  if ((Cur() | 0x20) == 'j') {
    ++pos_;
    imaginary = true;
  }
  if (!is_float && !imaginary) {
    const std::string_view text =
        src_.substr(start.offset, pos_ - start.offset);
    if (text.size() > 1 && text[0] == '0' &&
        text.find_first_not_of("0_") != std::string_view::npos) {
      FailNumber(start,
                 "leading zeros in decimal integer literals are not "
                 "permitted; use an 0o prefix for octal integers");
      return;
    }
  }
  if (!NumberEndsWell()) {
    FailNumber(start, "invalid decimal literal");
    return;
  }
  Emit(TokenKind::kNumber, start);
}

// At a digit: reads digit ('_'? digit)*; false at a misplaced underscore,
// with pos_ just past it.
bool Lexer::ScanDecimalDigits() {
  ++pos_;
  while (true) {
    if (Cur() == '_') {
      if (!IsDigit(At(pos_ + 1))) {
        ++pos_;
        return false;
      }
      pos_ += 2;
    } else if (IsDigit(Cur())) {
      ++pos_;
    } else {
      return true;
    }
  }
}

// A number may not run into a name (`1abc`), except into the keywords
// Python allows there.
bool Lexer::NumberEndsWell() const {
  const char c = Cur();
  if (!IsAsciiNameChar(c) && static_cast<unsigned char>(c) < 0x80) return true;
  if (c == '.' || IsDigit(c)) return true;
  const std::string_view rest = src_.substr(pos_);
  for (std::string_view kw : kKeywordsAfterNumber) {
    if (rest.starts_with(kw)) return true;
  }
  return false;
}

// Reports a bad number at `where`, stepping over the rest of it.
void Lexer::FailNumber(const Position& where, std::string message) {
  while (IsAsciiNameChar(Cur()) || Cur() == '.') ++pos_;
  EmitError(where, std::move(message));
}

void Lexer::ScanOperator(const Position& start) {
  std::string_view op;
  for (std::string_view candidate : kOperators) {
    if (StartsWith(candidate)) {
      op = candidate;
      break;
    }
  }
  if (op.empty()) {
    InvalidCharacter(start);
    return;
  }
  // At the level of an f-string field's own `{`, `:` opens the format spec
  // (also before `=`: f"{x:=5}" formats x with "=5"), `}` closes the field.
  if (Mode* field = FieldAtItsLevel()) {
    if (op[0] == ':') {
      ++pos_;
      Emit(TokenKind::kOp, start);
      Mode spec = *field;
      spec.kind = ModeKind::kFormatSpec;
      modes_.push_back(spec);
      return;
    }
    if (op == "}") {
      ++pos_;
      Emit(TokenKind::kOp, start);
      brackets_.pop_back();
      modes_.pop_back();
      return;
    }
    if (op == ")" || op == "]") {
      ++pos_;
      EmitError(start, std::string("f-string: unmatched '") + op[0] + "'");
      return;
    }
  }
  pos_ += op.size();
  if (op.size() == 1 && IsOpenBracket(op[0])) {
    brackets_.push_back(Bracket{op[0], start, false});
    if (brackets_.size() > kMaxBracketNesting) {
      EmitError(start, "too many nested parentheses");
    } else {
      Emit(TokenKind::kOp, start);
    }
    return;
  }
  if (op.size() == 1 && IsCloseBracket(op[0])) {
    if (brackets_.empty()) {
      EmitError(start, std::string("unmatched '") + op[0] + "'");
      return;
    }
    const Bracket top = brackets_.back();
    if (top.open == MatchingOpen(op[0])) {
      brackets_.pop_back();
      Emit(TokenKind::kOp, start);
      return;
    }
    if (top.fstring_field) {
      EmitError(start, std::string("f-string: unmatched '") + op[0] + "'");
      return;
    }
    brackets_.pop_back();
    std::string message = std::string("closing parenthesis '") + op[0] +
                          "' does not match opening parenthesis '" + top.open +
                          "'";
    if (top.where.line != start.line) {
      message += " on line " + std::to_string(top.where.line);
    }
    EmitError(start, std::move(message));
    return;
  }
  Emit(TokenKind::kOp, start);
}

void Lexer::InvalidCharacter(const Position& start) {
  uint32_t cp = 0;
  const int len = DecodeUtf8(src_, pos_, &cp);
  if (len == 0) {
    constexpr char kHex[] = "0123456789abcdef";
    const auto byte = static_cast<unsigned char>(Cur());
    ++pos_;
    EmitError(start, std::string("invalid UTF-8 byte 0x") + kHex[byte >> 4] +
                         kHex[byte & 15]);
    return;
  }
  pos_ += len;
  if (cp < 0x20 || cp == 0x7F) {
    EmitError(start, "invalid non-printable character " + CodePointName(cp));
    return;
  }
  EmitError(start, "invalid character '" +
                       std::string(src_.substr(start.offset, len)) + "' (" +
                       CodePointName(cp) + ")");
}

// At the end of the input, an open bracket swallowed everything after it.
// An earlier bad token inside it (an unterminated string, say) is the more
// likely cause, so that is reported when there is one.
void Lexer::CheckBracketsAtEnd() {
  if (brackets_.empty()) return;
  const size_t first_open = brackets_.front().where.offset;
  for (const Token& t : tokens_) {
    if (t.kind == TokenKind::kError && t.offset > first_open) {
      SetFatal(Position{t.offset, t.line, t.column}, t.value);
      return;
    }
  }
  const Bracket& top = brackets_.back();
  if (top.fstring_field) {
    SetFatal(top.where, "f-string: expecting '}'");
    return;
  }
  SetFatal(top.where, std::string("'") + top.open + "' was never closed");
}

}  // namespace

Result<std::vector<Token>> Tokenize(std::string_view source,
                                    std::string_view file, int first_line) {
  try {
    return Lexer(source, file, first_line).Run();
  } catch (...) {  // std::bad_alloc: nothing else throws
    return Error{FormatDiagnostic(file, first_line, 0, "out of memory")};
  }
}

bool IsKeyword(std::string_view name) {
  return std::find(std::begin(kKeywords), std::end(kKeywords), name) !=
         std::end(kKeywords);
}

std::string FormatDiagnostic(std::string_view file, int line, int column,
                             std::string_view message) {
  return std::string(file) + ":" + std::to_string(line) + ":" +
         std::to_string(column + 1) + ": error: " + std::string(message);
}

}  // namespace mtlemu::triton::py
