#include "isa/assembler.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "isa/instruction.h"
#include "isa/names.h"
#include "isa/numeric.h"
#include "isa/opcode.h"
#include "isa/shape.h"
#include "isa/special_register.h"

namespace mtlemu::isa {
namespace {

// --- characters and small helpers ------------------------------------------

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// Quotes user text for a message: non-printable bytes escaped, long text
// shortened.
std::string Quote(std::string_view s) {
  constexpr size_t kMaxShown = 48;
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kMaxShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (s.size() > kMaxShown) out += "...";
  out += "'";
  return out;
}

int EditDistance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// "; did you mean 'x'?" for the closest candidate within edit distance 2.
std::string DidYouMean(std::string_view word,
                       const std::vector<std::string_view>& candidates,
                       std::string_view prefix = "") {
  if (word.empty() || word.size() > 64) return "";
  int best = 3;
  std::string_view best_name;
  for (std::string_view c : candidates) {
    const int d = EditDistance(word, c);
    if (d < best) {
      best = d;
      best_name = c;
    }
  }
  if (best_name.empty() || best >= static_cast<int>(word.size())) return "";
  return "; did you mean '" + std::string(prefix) + std::string(best_name) +
         "'?";
}

std::vector<std::string_view> AllMnemonics() {
  std::vector<std::string_view> out;
  for (int i = 0; i < kNumOpcodes; ++i) {
    out.push_back(Mnemonic(static_cast<Opcode>(i)));
  }
  return out;
}

std::vector<std::string_view> AllSpecialRegisterNames() {
  std::vector<std::string_view> out;
  for (int i = 0; i < kNumSpecialRegisters; ++i) {
    out.push_back(SpecialRegisterName(static_cast<SpecialRegister>(i)));
  }
  return out;
}

enum class NumberStatus { kOk, kMalformed, kOverflow };

// Unsigned decimal or 0x hex digits (no sign).
NumberStatus ParseUnsigned(std::string_view s, uint64_t* value,
                           bool* is_hex = nullptr) {
  int base = 10;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (is_hex != nullptr) *is_hex = base == 16;
  if (s.empty()) return NumberStatus::kMalformed;
  uint64_t v = 0;
  for (char c : s) {
    unsigned digit;
    if (IsDigit(c)) {
      digit = static_cast<unsigned>(c - '0');
    } else if (base == 16 && IsHexDigit(c)) {
      digit = static_cast<unsigned>((c | 0x20) - 'a' + 10);
    } else {
      return NumberStatus::kMalformed;
    }
    if (v > (UINT64_MAX - digit) / static_cast<uint64_t>(base)) {
      return NumberStatus::kOverflow;
    }
    v = v * static_cast<uint64_t>(base) + digit;
  }
  *value = v;
  return NumberStatus::kOk;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsDigit);
}

// digits+ ('.' digits*)? ([eE] [+-]? digits+)?
bool IsDecimalFloatSyntax(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  const size_t int_start = i;
  while (i < n && IsDigit(s[i])) ++i;
  if (i == int_start) return false;
  if (i < n && s[i] == '.') {
    ++i;
    while (i < n && IsDigit(s[i])) ++i;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    const size_t exp_start = i;
    while (i < n && IsDigit(s[i])) ++i;
    if (i == exp_start) return false;
  }
  return i == n;
}

// For a decimal literal (without sign) that from_chars found out of range:
// true when it is tiny (underflow), false when it is huge.
bool IsTinyDecimal(std::string_view s) {
  size_t e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  long exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view exp = s.substr(e + 1);
    bool neg = false;
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
      neg = exp[0] == '-';
      exp.remove_prefix(1);
    }
    for (char c : exp) {
      if (exponent < 1000000) exponent = exponent * 10 + (c - '0');
    }
    if (neg) exponent = -exponent;
  }
  const size_t dot = mantissa.find('.');
  std::string_view int_part = mantissa.substr(0, dot);
  while (!int_part.empty() && int_part[0] == '0') int_part.remove_prefix(1);
  long magnitude;
  if (!int_part.empty()) {
    magnitude = static_cast<long>(int_part.size()) - 1;
  } else {
    std::string_view frac =
        dot == std::string_view::npos ? "" : mantissa.substr(dot + 1);
    long zeros = 0;
    while (zeros < static_cast<long>(frac.size()) && frac[zeros] == '0') {
      ++zeros;
    }
    magnitude = -(zeros + 1);
  }
  return magnitude + exponent < 0;
}

std::string TypeRange(ScalarType type) {
  const int width = SizeOf(type) * 8;
  if (type == ScalarType::kBool) return "0..1";
  if (IsSigned(type)) {
    const int64_t max =
        width == 64 ? INT64_MAX
                    : static_cast<int64_t>((uint64_t{1} << (width - 1)) - 1);
    return std::to_string(-max - 1) + ".." + std::to_string(max);
  }
  const uint64_t max = width == 64 ? UINT64_MAX : (uint64_t{1} << width) - 1;
  return "0.." + std::to_string(max);
}

std::optional<uint64_t> FloatSpecialBits(ScalarType type, bool neg, bool nan) {
  switch (type) {
    case ScalarType::kFloat:
      return (neg ? 0x80000000u : 0u) | (nan ? 0x7fc00000u : 0x7f800000u);
    case ScalarType::kHalf:
      return (neg ? 0x8000u : 0u) | (nan ? 0x7e00u : 0x7c00u);
    case ScalarType::kBFloat:
      return (neg ? 0x8000u : 0u) | (nan ? 0x7fc0u : 0x7f80u);
    default:
      return std::nullopt;
  }
}

// --- modifiers
// ----------------------------------------------------------------

std::optional<AddressSpace> AddressSpaceFromName(std::string_view name) {
  if (name == "device") return AddressSpace::kDevice;
  if (name == "constant") return AddressSpace::kConstant;
  if (name == "threadgroup") return AddressSpace::kThreadgroup;
  if (name == "thread") return AddressSpace::kThread;
  return std::nullopt;
}

std::vector<std::string_view> AllModifierNames() {
  std::vector<std::string_view> out = {"device", "constant",  "threadgroup",
                                       "thread", "v2",        "v3",
                                       "v4",     "transpose", "mem_none"};
  for (int i = 0; i < kNumScalarTypes; ++i) {
    out.push_back(IsaSuffix(static_cast<ScalarType>(i)));
  }
  for (int i = 0; i < kNumMemFlags; ++i) out.push_back(MemFlagName(i));
  return out;
}

std::string_view SlotName(Modifier slot) {
  switch (slot) {
    case Modifier::kSpace:
      return "address space";
    case Modifier::kVector:
      return "vector count";
    case Modifier::kType:
    case Modifier::kType2:
      return "type";
    case Modifier::kTranspose:
      return "transpose";
    case Modifier::kMemFlags:
      return "memory flags";
  }
  return "?";
}

// --- operands as written
// --------------------------------------------------------

struct RawOperand {
  enum Kind { kRegister, kUniform, kSpecial, kImmediate, kName, kMemory };
  Kind kind = kName;
  std::string_view text;  // the whole operand
  int column = 0;
  int number = 0;  // register or uniform number
};

std::string_view Describe(const RawOperand& raw) {
  switch (raw.kind) {
    case RawOperand::kRegister:
      return "a register";
    case RawOperand::kUniform:
      return "a uniform";
    case RawOperand::kSpecial:
      return "a special register";
    case RawOperand::kImmediate:
      return "an immediate";
    case RawOperand::kName:
      return "a label";
    case RawOperand::kMemory:
      return "a memory reference";
  }
  return "?";
}

// `r12` -> 12 for prefix 'r'; -1 if the word is not of that form.
int RegisterNumber(std::string_view word, char prefix) {
  if (word.size() < 2 || word[0] != prefix || !AllDigits(word.substr(1))) {
    return -1;
  }
  if (word.size() > 6) return 1 << 20;  // out of range, reported by caller
  int n = 0;
  for (char c : word.substr(1)) n = n * 10 + (c - '0');
  return n;
}

// --- the assembler ----------------------------------------------------------

class Assembler {
 public:
  Assembler(std::string_view text, std::string_view file_name)
      : text_(text), file_name_(file_name) {}

  AssembleResult Run();

 private:
  struct LabelRef {
    uint32_t inst;
    int operand;
    std::string name;
    int line;
    int column;
  };
  struct OpenKernel {
    Kernel kernel;
    int line = 0;
    bool has_code = false;
    std::map<std::string, std::pair<uint32_t, int>, std::less<>> labels;
    std::vector<LabelRef> refs;
    bool seen_threadgroup_memory = false;
    bool seen_thread_memory = false;
    bool seen_max_threads = false;
    // Where .constant_data is (line 0 when none), for the size check at the
    // end of the directives; constant_data_checked once that check ran or
    // an error in the constant data was reported (no more errors about it).
    int constant_data_line = 0;
    int constant_data_column = 0;
    uint64_t constant_data_size = 0;
    bool constant_data_checked = false;
  };
  struct Token {
    std::string_view text;
    int column;
    bool is_string = false;
    std::string value;  // unescaped string contents
  };

  // Reports an error; returns false so callers can `return Error(...)`.
  bool Error(int column, std::string message) {
    return ErrorAt(line_, column, std::move(message));
  }
  bool ErrorAt(int line, int column, std::string message);
  bool Stopped() const { return stopped_; }

  void ParseLine(std::string_view line);
  bool ParseLabel(std::string_view name, int column);
  bool ParseDirective(std::string_view rest, int column);
  bool ParseInstruction(std::string_view rest, int column);
  bool ParseModifiers(Instruction& inst, std::string_view token, int column);
  bool ParseOperand(Instruction& inst, int position, std::string_view mnemonic,
                    std::string_view text, int column);
  bool ParseRaw(std::string_view text, int column, RawOperand* raw);
  bool ParseMemory(std::string_view text, int column, MemoryRef* mem);
  bool Tokenize(std::string_view rest, int column, std::vector<Token>* tokens);
  bool KernelDirectiveAllowed(std::string_view name, int column);
  bool ParseUint(const Token& token, std::string_view what, uint64_t max,
                 uint64_t* value);
  bool ParseUniformToken(const Token& token, int* uniform);
  void CheckConstantDataSize();
  void CloseKernel();

  std::string_view text_;
  std::string file_name_;
  Module module_;
  Diagnostics diagnostics_;
  bool stopped_ = false;
  int line_ = 0;
  std::optional<OpenKernel> open_;
  std::optional<SourceLocation> loc_;
  std::vector<bool> declared_files_ = {true};
  std::map<std::string, int, std::less<>> kernel_lines_;
};

bool Assembler::ErrorAt(int line, int column, std::string message) {
  if (stopped_) return false;
  if (static_cast<int>(diagnostics_.size()) >= kMaxAssemblerErrors) {
    diagnostics_.push_back(
        {file_name_, line, 0, "too many errors; stopping here"});
    stopped_ = true;
    return false;
  }
  diagnostics_.push_back({file_name_, line, column, std::move(message)});
  return false;
}

AssembleResult Assembler::Run() {
  module_.files.push_back(file_name_);
  size_t start = 0;
  while (start <= text_.size() && !stopped_) {
    size_t end = text_.find('\n', start);
    if (end == std::string_view::npos) end = text_.size();
    ++line_;
    ParseLine(text_.substr(start, end - start));
    start = end + 1;
  }
  if (open_ && !stopped_) {
    ErrorAt(open_->line, 1,
            "missing .end for kernel '" + open_->kernel.name + "'");
    CloseKernel();
  }
  AssembleResult result;
  result.module = std::move(module_);
  result.diagnostics = std::move(diagnostics_);
  return result;
}

void Assembler::ParseLine(std::string_view line) {
  // Strip the comment (outside a string literal).
  bool in_string = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == ';' ||
               (c == '/' && i + 1 < line.size() && line[i + 1] == '/')) {
      line = line.substr(0, i);
      break;
    }
  }
  size_t pos = 0;
  auto skip_blanks = [&] {
    while (pos < line.size() && IsBlank(line[pos])) ++pos;
  };
  skip_blanks();
  // Labels: NAME ':'
  while (pos < line.size() && IsNameStart(line[pos])) {
    size_t end = pos;
    while (end < line.size() && IsNameChar(line[end])) ++end;
    size_t colon = end;
    while (colon < line.size() && IsBlank(line[colon])) ++colon;
    if (colon >= line.size() || line[colon] != ':') break;
    if (!ParseLabel(line.substr(pos, end - pos), static_cast<int>(pos) + 1)) {
      return;
    }
    pos = colon + 1;
    skip_blanks();
  }
  if (pos >= line.size()) return;
  const std::string_view rest = Trim(line.substr(pos));
  const int column = static_cast<int>(pos) + 1;
  if (rest[0] == '.') {
    ParseDirective(rest, column);
  } else {
    ParseInstruction(rest, column);
  }
}

bool Assembler::ParseLabel(std::string_view name, int column) {
  if (!open_) {
    return Error(column, "label " + Quote(name) + " outside a kernel");
  }
  if (!IsValidLabelName(name)) {
    return Error(column, "label name " + Quote(name) +
                             " is reserved (it reads as a register, "
                             "uniform or float literal)");
  }
  auto it = open_->labels.find(name);
  if (it != open_->labels.end()) {
    return Error(column, "duplicate label " + Quote(name) +
                             " (first defined at line " +
                             std::to_string(it->second.second) + ")");
  }
  const uint32_t index = static_cast<uint32_t>(open_->kernel.code.size());
  open_->labels.emplace(std::string(name), std::make_pair(index, line_));
  open_->kernel.labels.emplace(index, std::string(name));
  return true;
}

bool Assembler::Tokenize(std::string_view rest, int column,
                         std::vector<Token>* tokens) {
  size_t i = 0;
  while (i < rest.size()) {
    if (IsBlank(rest[i])) {
      ++i;
      continue;
    }
    Token token;
    token.column = column + static_cast<int>(i);
    const size_t start = i;
    if (rest[i] == '"') {
      token.is_string = true;
      ++i;
      bool closed = false;
      while (i < rest.size()) {
        char c = rest[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c != '\\') {
          token.value += c;
          continue;
        }
        if (i >= rest.size()) break;
        c = rest[i++];
        switch (c) {
          case 'n':
            token.value += '\n';
            break;
          case 't':
            token.value += '\t';
            break;
          case '\\':
            token.value += '\\';
            break;
          case '"':
            token.value += '"';
            break;
          case 'x': {
            if (i + 2 > rest.size() || !IsHexDigit(rest[i]) ||
                !IsHexDigit(rest[i + 1])) {
              return Error(column + static_cast<int>(i) - 2,
                           "malformed \\x escape in string");
            }
            uint64_t v = 0;
            ParseUnsigned(std::string("0x") + std::string(rest.substr(i, 2)),
                          &v);
            token.value += static_cast<char>(v);
            i += 2;
            break;
          }
          default:
            return Error(
                column + static_cast<int>(i) - 2,
                "unknown escape \\" + std::string(1, c) + " in string");
        }
      }
      if (!closed) return Error(token.column, "unterminated string");
      if (i < rest.size() && !IsBlank(rest[i])) {
        return Error(column + static_cast<int>(i),
                     "expected a blank after the string");
      }
    } else {
      while (i < rest.size() && !IsBlank(rest[i])) ++i;
    }
    token.text = rest.substr(start, i - start);
    tokens->push_back(std::move(token));
  }
  return true;
}

bool Assembler::ParseUint(const Token& token, std::string_view what,
                          uint64_t max, uint64_t* value) {
  if (token.is_string) {
    return Error(token.column,
                 "expected " + std::string(what) + ", got a string");
  }
  const NumberStatus status = ParseUnsigned(token.text, value);
  if (status == NumberStatus::kMalformed) {
    return Error(token.column, "expected " + std::string(what) +
                                   " (a non-negative integer), got " +
                                   Quote(token.text));
  }
  if (status == NumberStatus::kOverflow || *value > max) {
    return Error(token.column, std::string(what) + " " + Quote(token.text) +
                                   " is out of range (0.." +
                                   std::to_string(max) + ")");
  }
  return true;
}

bool Assembler::ParseUniformToken(const Token& token, int* uniform) {
  const int n = token.is_string ? -1 : RegisterNumber(token.text, 'u');
  if (n < 0) {
    return Error(token.column,
                 "expected a uniform register uN, got " + Quote(token.text));
  }
  if (n >= kMaxUniforms) {
    return Error(token.column,
                 "uniform " + Quote(token.text) + " out of range (u0..u255)");
  }
  *uniform = n;
  return true;
}

bool Assembler::KernelDirectiveAllowed(std::string_view name, int column) {
  if (!open_) {
    return Error(column, std::string(name) + " outside a kernel");
  }
  if (open_->has_code) {
    return Error(column, std::string(name) +
                             " after the first instruction of kernel '" +
                             open_->kernel.name +
                             "' (argument and resource directives come "
                             "before the code)");
  }
  return true;
}

bool Assembler::ParseDirective(std::string_view rest, int column) {
  size_t name_end = 1;
  while (name_end < rest.size() && !IsBlank(rest[name_end])) ++name_end;
  const std::string_view name = rest.substr(0, name_end);
  std::vector<Token> args;
  if (!Tokenize(rest.substr(name_end), column + static_cast<int>(name_end),
                &args)) {
    return false;
  }
  auto expect_count = [&](size_t min, size_t max,
                          std::string_view usage) -> bool {
    if (args.size() < min) {
      return Error(column, "missing operand: usage " + std::string(usage));
    }
    if (args.size() > max) {
      return Error(args[max].column, "unexpected " + Quote(args[max].text) +
                                         ": usage " + std::string(usage));
    }
    return true;
  };
  auto expect_name = [&](const Token& token, std::string_view what) {
    if (token.is_string || !IsValidName(token.text)) {
      return Error(token.column,
                   std::string(what) + " " + Quote(token.text) +
                       " is not a valid name ([A-Za-z_.$][A-Za-z0-9_.$]*)");
    }
    return true;
  };

  if (name == ".kernel") {
    if (open_) {
      Error(column, "missing .end for kernel '" + open_->kernel.name +
                        "' (opened at line " + std::to_string(open_->line) +
                        ")");
      CloseKernel();
    }
    // The kernel opens even when the line is bad, so that its body and
    // .end do not cascade into more errors. (Assigned, not emplace()d:
    // Clang finds OpenKernel not default-constructible inside Assembler.)
    open_ = OpenKernel{};
    open_->line = line_;
    if (!expect_count(1, 1, ".kernel NAME")) return false;
    if (!expect_name(args[0], "kernel name")) return false;
    const std::string kernel_name(args[0].text);
    open_->kernel.name = kernel_name;
    auto it = kernel_lines_.find(kernel_name);
    if (it != kernel_lines_.end()) {
      return Error(args[0].column, "duplicate kernel name '" + kernel_name +
                                       "' (first defined at line " +
                                       std::to_string(it->second) + ")");
    }
    kernel_lines_.emplace(kernel_name, line_);
    return true;
  }
  if (name == ".end") {
    if (!expect_count(0, 0, ".end")) return false;
    if (!open_) return Error(column, ".end outside a kernel");
    CloseKernel();
    return true;
  }
  if (name == ".file") {
    if (!expect_count(2, 2, ".file N \"PATH\"")) return false;
    uint64_t n;
    if (!ParseUint(args[0], "file number", 65535, &n)) return false;
    if (n == 0) {
      return Error(args[0].column,
                   "file 0 is the assembled file itself; .file numbers "
                   "start at 1");
    }
    if (!args[1].is_string) {
      return Error(args[1].column,
                   "expected a quoted path, got " + Quote(args[1].text));
    }
    if (module_.files.size() <= n) module_.files.resize(n + 1);
    if (declared_files_.size() <= n) declared_files_.resize(n + 1, false);
    if (declared_files_[n] && module_.files[n] != args[1].value) {
      return Error(args[0].column, "file " + std::to_string(n) +
                                       " already declared as \"" +
                                       module_.files[n] + "\"");
    }
    declared_files_[n] = true;
    module_.files[n] = args[1].value;
    return true;
  }
  if (name == ".loc") {
    if (!expect_count(2, 3, ".loc FILE LINE [COLUMN]")) return false;
    uint64_t file, line, col = 0;
    if (!ParseUint(args[0], "file number", 65535, &file)) return false;
    if (!ParseUint(args[1], "line", UINT32_MAX, &line)) return false;
    if (args.size() == 3 && !ParseUint(args[2], "column", UINT32_MAX, &col)) {
      return false;
    }
    if (file >= declared_files_.size() || !declared_files_[file]) {
      return Error(args[0].column, "file " + std::to_string(file) +
                                       " is not declared (use .file " +
                                       std::to_string(file) +
                                       " \"PATH\" before it)");
    }
    if (file == 0 && line == 0) {
      loc_.reset();  // back to each instruction's own line
    } else {
      loc_ = SourceLocation{static_cast<uint16_t>(file),
                            static_cast<uint32_t>(line),
                            static_cast<uint32_t>(col)};
    }
    return true;
  }
  if (name == ".buffer") {
    if (!KernelDirectiveAllowed(name, column)) return false;
    constexpr std::string_view kUsage =
        ".buffer INDEX uN device|constant TYPE [NAME]";
    if (!expect_count(4, 5, kUsage)) return false;
    BufferArgument b;
    uint64_t index;
    if (!ParseUint(args[0], "buffer index", 1u << 20, &index)) return false;
    b.index = static_cast<int>(index);
    if (!ParseUniformToken(args[1], &b.uniform)) return false;
    if (args[2].text == "device") {
      b.space = AddressSpace::kDevice;
    } else if (args[2].text == "constant") {
      b.space = AddressSpace::kConstant;
    } else {
      return Error(args[2].column,
                   "buffer address space must be device or "
                   "constant, got " +
                       Quote(args[2].text));
    }
    if (args[3].text != "void") {
      b.element = args[3].is_string ? std::nullopt
                                    : ScalarTypeFromMetalName(args[3].text);
      if (!b.element) {
        std::vector<std::string_view> names = {"void"};
        for (int i = 0; i < kNumScalarTypes; ++i) {
          names.push_back(MetalName(static_cast<ScalarType>(i)));
        }
        return Error(args[3].column,
                     "unknown buffer element type " + Quote(args[3].text) +
                         " (a Metal scalar type such as float or uint, or "
                         "void)" +
                         DidYouMean(args[3].text, names));
      }
    }
    if (args.size() == 5) {
      if (!expect_name(args[4], "buffer name")) return false;
      b.name = std::string(args[4].text);
    }
    open_->kernel.buffers.push_back(std::move(b));
    return true;
  }
  if (name == ".threadgroup") {
    if (!KernelDirectiveAllowed(name, column)) return false;
    if (!expect_count(2, 3, ".threadgroup INDEX uN [NAME]")) return false;
    ThreadgroupArgument t;
    uint64_t index;
    if (!ParseUint(args[0], "threadgroup index", 1u << 20, &index)) {
      return false;
    }
    t.index = static_cast<int>(index);
    if (!ParseUniformToken(args[1], &t.uniform)) return false;
    if (args.size() == 3) {
      if (!expect_name(args[2], "threadgroup argument name")) return false;
      t.name = std::string(args[2].text);
    }
    open_->kernel.threadgroup_arguments.push_back(std::move(t));
    return true;
  }
  if (name == ".constant_data") {
    if (!KernelDirectiveAllowed(name, column)) return false;
    if (open_->constant_data_line != 0) {
      return Error(column, "duplicate .constant_data in kernel '" +
                               open_->kernel.name + "'");
    }
    open_->constant_data_line = line_;
    open_->constant_data_column = column;
    int uniform;
    uint64_t size;
    if (!expect_count(2, 2, ".constant_data uN SIZE") ||
        !ParseUniformToken(args[0], &uniform) ||
        !ParseUint(args[1], "constant data size", UINT32_MAX, &size)) {
      // Reported once: the .data lines that follow are not checked.
      open_->constant_data_checked = true;
      return false;
    }
    open_->kernel.constant_data_uniform = uniform;
    open_->constant_data_size = size;
    return true;
  }
  if (name == ".data") {
    if (!KernelDirectiveAllowed(name, column)) return false;
    if (open_->constant_data_line == 0) {
      return Error(column, ".data without .constant_data in kernel '" +
                               open_->kernel.name + "'");
    }
    if (open_->constant_data_checked) return false;  // already reported
    // A bad line is reported once, without a size error after it.
    open_->constant_data_checked = true;
    if (!expect_count(1, 1, ".data HEX")) return false;
    const Token& hex = args[0];
    if (hex.is_string || hex.text.size() % 2 != 0 ||
        !std::all_of(hex.text.begin(), hex.text.end(), IsHexDigit)) {
      return Error(hex.column,
                   "expected hex bytes (two hex digits per byte, no "
                   "separators), got " +
                       Quote(hex.text));
    }
    std::vector<uint8_t>& data = open_->kernel.constant_data;
    const uint64_t count = hex.text.size() / 2;
    if (data.size() + count > open_->constant_data_size) {
      return Error(hex.column, ".data overflows the constant data: " +
                                   std::to_string(data.size() + count) +
                                   " bytes, but .constant_data declares " +
                                   std::to_string(open_->constant_data_size));
    }
    auto nibble = [](char c) {
      return static_cast<uint8_t>(IsDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
    };
    for (size_t i = 0; i < hex.text.size(); i += 2) {
      data.push_back(static_cast<uint8_t>(nibble(hex.text[i]) << 4 |
                                          nibble(hex.text[i + 1])));
    }
    open_->constant_data_checked = false;
    return true;
  }
  struct Resource {
    std::string_view directive;
    std::string_view what;
    uint32_t Kernel::*field;
    bool OpenKernel::*seen;
  };
  static constexpr Resource kResources[] = {
      {".threadgroup_memory", "byte count", &Kernel::static_threadgroup_memory,
       &OpenKernel::seen_threadgroup_memory},
      {".thread_memory", "byte count", &Kernel::thread_memory,
       &OpenKernel::seen_thread_memory},
      {".max_total_threads_per_threadgroup", "thread count",
       &Kernel::max_total_threads_per_threadgroup,
       &OpenKernel::seen_max_threads},
  };
  for (const Resource& r : kResources) {
    if (name != r.directive) continue;
    if (!KernelDirectiveAllowed(name, column)) return false;
    if (!expect_count(1, 1, std::string(r.directive) + " N")) return false;
    if ((*open_).*r.seen) {
      return Error(column, "duplicate " + std::string(r.directive) +
                               " in kernel '" + open_->kernel.name + "'");
    }
    uint64_t v;
    if (!ParseUint(args[0], r.what, UINT32_MAX, &v)) return false;
    open_->kernel.*r.field = static_cast<uint32_t>(v);
    (*open_).*r.seen = true;
    return true;
  }
  const std::vector<std::string_view> directives = {
      ".kernel",
      ".end",
      ".file",
      ".loc",
      ".buffer",
      ".threadgroup",
      ".threadgroup_memory",
      ".thread_memory",
      ".max_total_threads_per_threadgroup",
      ".constant_data",
      ".data"};
  return Error(column, "unknown directive " + Quote(name) +
                           DidYouMean(name, directives));
}

bool Assembler::ParseModifiers(Instruction& inst, std::string_view token,
                               int column) {
  const OpShape shape = inst.info().shape;
  const std::string_view mnemonic = inst.info().mnemonic;
  bool has_space = false, has_type = false, has_type2 = false;
  bool has_vector = false, has_mem_none = false;
  // The modifier before this one, to check the order (none yet).
  std::optional<Modifier> last_slot;
  size_t pos = mnemonic.size();
  while (pos < token.size()) {
    // token[pos] == '.'
    size_t end = token.find('.', pos + 1);
    if (end == std::string_view::npos) end = token.size();
    const std::string_view mod = token.substr(pos + 1, end - pos - 1);
    const int mod_column = column + static_cast<int>(pos) + 1;
    pos = end;
    if (mod.empty()) {
      return Error(mod_column - 1, "empty modifier in " + Quote(token));
    }
    Modifier slot;
    std::optional<AddressSpace> space = AddressSpaceFromName(mod);
    std::optional<ScalarType> type = ScalarTypeFromIsaSuffix(mod);
    int flag_bit = -1;
    for (int i = 0; i < kNumMemFlags; ++i) {
      if (mod == MemFlagName(i)) flag_bit = i;
    }
    if (space) {
      slot = Modifier::kSpace;
    } else if (mod == "v2" || mod == "v3" || mod == "v4") {
      slot = Modifier::kVector;
    } else if (type) {
      slot = has_type ? Modifier::kType2 : Modifier::kType;
    } else if (mod == "transpose") {
      slot = Modifier::kTranspose;
    } else if (flag_bit >= 0 || mod == "mem_none") {
      slot = Modifier::kMemFlags;
    } else {
      return Error(mod_column, "unknown modifier " + Quote(mod) + " on '" +
                                   std::string(mnemonic) + "'" +
                                   DidYouMean(mod, AllModifierNames()));
    }
    if (!ShapeHasModifier(shape, slot)) {
      if (slot == Modifier::kType2) {
        return Error(mod_column, "'" + std::string(mnemonic) +
                                     "' takes one type, got a second type " +
                                     Quote(mod));
      }
      return Error(mod_column, "modifier " + Quote(mod) +
                                   " is not allowed on '" +
                                   std::string(mnemonic) + "'");
    }
    if (last_slot && slot < *last_slot) {
      return Error(mod_column, "modifier " + Quote(mod) + " out of order in " +
                                   Quote(token) + ": the " +
                                   std::string(SlotName(slot)) +
                                   " comes before the " +
                                   std::string(SlotName(*last_slot)));
    }
    if (slot == last_slot && slot != Modifier::kMemFlags) {
      return Error(mod_column, "duplicate " + std::string(SlotName(slot)) +
                                   " modifier " + Quote(mod));
    }
    last_slot = slot;
    switch (slot) {
      case Modifier::kSpace:
        inst.space = *space;
        has_space = true;
        break;
      case Modifier::kVector:
        inst.vector = static_cast<uint8_t>(mod[1] - '0');
        has_vector = true;
        break;
      case Modifier::kType:
        inst.type = *type;
        has_type = true;
        break;
      case Modifier::kType2:
        inst.type2 = *type;
        has_type2 = true;
        break;
      case Modifier::kTranspose:
        inst.transpose = true;
        break;
      case Modifier::kMemFlags:
        if (flag_bit < 0) {
          if (has_mem_none || inst.mem_flags != 0) {
            return Error(mod_column,
                         "mem_none cannot be combined with other flags");
          }
          has_mem_none = true;
        } else {
          if (has_mem_none) {
            return Error(mod_column,
                         "mem_none cannot be combined with other flags");
          }
          if (inst.mem_flags & (1u << flag_bit)) {
            return Error(mod_column, "duplicate modifier " + Quote(mod));
          }
          inst.mem_flags =
              static_cast<uint8_t>(inst.mem_flags | (1u << flag_bit));
        }
        break;
    }
  }
  (void)has_vector;
  if (ShapeHasSpace(shape) && !has_space) {
    return Error(column, "missing address space: '" + std::string(mnemonic) +
                             "' takes .device, .constant, .threadgroup or "
                             ".thread (e.g. " +
                             std::string(mnemonic) + ".device.f32)");
  }
  const bool takes_type2 = ShapeHasModifier(shape, Modifier::kType2);
  if (ShapeHasType(shape) && !has_type) {
    return Error(column, "missing type: '" + std::string(mnemonic) +
                             "' takes a type suffix such as ." +
                             (takes_type2 ? "f32.i32" : "f32"));
  }
  if (takes_type2 && !has_type2) {
    return Error(column, "missing source type: '" + std::string(mnemonic) +
                             "' takes two types, destination then source "
                             "(e.g. " +
                             std::string(mnemonic) + ".f32.i32)");
  }
  return true;
}

bool Assembler::ParseRaw(std::string_view text, int column, RawOperand* raw) {
  raw->text = text;
  raw->column = column;
  const char c = text[0];
  if (c == '[') {
    raw->kind = RawOperand::kMemory;
    return true;
  }
  if (c == '%') {
    raw->kind = RawOperand::kSpecial;
    return true;
  }
  if (IsDigit(c) || c == '-' || text == "inf" || text == "nan") {
    raw->kind = RawOperand::kImmediate;
    return true;
  }
  if (!IsNameStart(c)) {
    return Error(column, "unexpected " + Quote(text.substr(0, 1)) +
                             " in operand " + Quote(text));
  }
  size_t end = 0;
  while (end < text.size() && IsNameChar(text[end])) ++end;
  if (end != text.size()) {
    return Error(column + static_cast<int>(end),
                 "unexpected " + Quote(text.substr(end, 1)) + " in operand " +
                     Quote(text));
  }
  const int r = RegisterNumber(text, 'r');
  const int u = RegisterNumber(text, 'u');
  if (r >= 0) {
    if (r >= kMaxRegisters) {
      return Error(column,
                   "register " + Quote(text) + " out of range (r0..r255)");
    }
    raw->kind = RawOperand::kRegister;
    raw->number = r;
  } else if (u >= 0) {
    if (u >= kMaxUniforms) {
      return Error(column,
                   "uniform " + Quote(text) + " out of range (u0..u255)");
    }
    raw->kind = RawOperand::kUniform;
    raw->number = u;
  } else {
    raw->kind = RawOperand::kName;
  }
  return true;
}

bool Assembler::ParseMemory(std::string_view text, int column, MemoryRef* mem) {
  const std::string whole = Quote(text);
  auto malformed = [&](int col, std::string_view detail) {
    return Error(col, "malformed memory reference " + whole + ": " +
                          std::string(detail));
  };
  if (text.size() < 2 || text.back() != ']') {
    return malformed(column, "missing ']' at the end");
  }
  struct Tok {
    char kind;  // '+', '-', '*', '(', ')', 'w' (word)
    std::string_view text;
    int column;
  };
  std::vector<Tok> toks;
  for (size_t i = 1; i + 1 < text.size();) {
    const char c = text[i];
    const int col = column + static_cast<int>(i);
    if (IsBlank(c)) {
      ++i;
    } else if (c == '+' || c == '-' || c == '*' || c == '(' || c == ')') {
      toks.push_back({c, text.substr(i, 1), col});
      ++i;
    } else if (IsNameChar(c)) {
      size_t end = i;
      while (end + 1 < text.size() && IsNameChar(text[end])) ++end;
      toks.push_back({'w', text.substr(i, end - i), col});
      i = end;
    } else {
      return malformed(col, "unexpected " + Quote(text.substr(i, 1)));
    }
  }
  if (toks.empty()) {
    return malformed(column, "empty (write [0] for address 0)");
  }
  struct Term {
    int sign = 1;
    bool is_number = false;
    uint64_t value = 0;
    bool is_uniform = false;
    int reg = 0;
    bool sext = false;
    bool has_scale = false;
    uint64_t scale = 1;
    int column = 0;
  };
  std::vector<Term> terms;
  size_t i = 0;
  int sign = 1;
  if (toks[0].kind == '-') {
    sign = -1;
    ++i;
  }
  auto at = [&](size_t k, char kind) {
    return k < toks.size() && toks[k].kind == kind;
  };
  auto end_column = [&] { return column + static_cast<int>(text.size()) - 1; };
  while (true) {
    Term term;
    term.sign = sign;
    if (!at(i, 'w')) {
      return malformed(i < toks.size() ? toks[i].column : end_column(),
                       "expected a register or a number");
    }
    term.column = toks[i].column;
    std::string_view word = toks[i].text;
    if (word == "sext") {
      if (!at(i + 1, '(') || !at(i + 2, 'w') || !at(i + 3, ')')) {
        return malformed(toks[i].column, "expected sext(rN)");
      }
      term.sext = true;
      word = toks[i + 2].text;
      if (RegisterNumber(word, 'r') < 0) {
        return malformed(toks[i + 2].column,
                         "sext takes an index register rN, got " + Quote(word));
      }
      i += 4;
    } else {
      ++i;
    }
    if (IsDigit(word[0])) {
      if (ParseUnsigned(word, &term.value) != NumberStatus::kOk) {
        return malformed(term.column, "malformed number " + Quote(word));
      }
      term.is_number = true;
    } else {
      const int r = RegisterNumber(word, 'r');
      const int u = RegisterNumber(word, 'u');
      if (r < 0 && u < 0) {
        return malformed(term.column,
                         "expected a register or a number, got " + Quote(word));
      }
      term.is_uniform = r < 0;
      term.reg = r >= 0 ? r : u;
      if (term.reg >= (term.is_uniform ? kMaxUniforms : kMaxRegisters)) {
        return Error(term.column,
                     std::string(term.is_uniform ? "uniform " : "register ") +
                         Quote(word) +
                         (term.is_uniform ? " out of range (u0..u255)"
                                          : " out of range (r0..r255)"));
      }
    }
    if (at(i, '*')) {
      if (term.is_number) {
        return malformed(toks[i].column, "only an index register is scaled");
      }
      if (!at(i + 1, 'w') || !AllDigits(toks[i + 1].text)) {
        return malformed(toks[i].column, "expected a scale after '*'");
      }
      uint64_t scale = 0;
      if (ParseUnsigned(toks[i + 1].text, &scale) != NumberStatus::kOk ||
          (scale != 1 && scale != 2 && scale != 4 && scale != 8 &&
           scale != 16)) {
        return Error(
            toks[i + 1].column,
            "scale must be 1, 2, 4, 8 or 16, got " + Quote(toks[i + 1].text));
      }
      term.has_scale = true;
      term.scale = scale;
      i += 2;
    }
    terms.push_back(term);
    if (i >= toks.size()) break;
    if (!at(i, '+') && !at(i, '-')) {
      return malformed(toks[i].column,
                       "expected '+' or '-' before " + Quote(toks[i].text));
    }
    sign = toks[i].kind == '-' ? -1 : 1;
    ++i;
  }
  MemoryRef m;
  enum { kStart, kAfterBase, kAfterIndex, kAfterDisp } state = kStart;
  for (const Term& t : terms) {
    if (state == kAfterDisp) {
      return malformed(t.column, "the displacement comes last");
    }
    if (t.is_number) {
      const uint64_t limit =
          t.sign < 0 ? uint64_t{1} << 31 : (uint64_t{1} << 31) - 1;
      if (t.value > limit) {
        return malformed(t.column, "displacement out of range (32-bit)");
      }
      m.displacement =
          static_cast<int32_t>(t.sign < 0 ? -static_cast<int64_t>(t.value)
                                          : static_cast<int64_t>(t.value));
      state = kAfterDisp;
      continue;
    }
    if (t.sign < 0) {
      return malformed(t.column, "a register cannot be subtracted");
    }
    const bool is_index = t.sext || t.has_scale || state == kAfterBase;
    if (!is_index && state == kStart) {
      m.base_kind =
          t.is_uniform ? OperandKind::kUniform : OperandKind::kRegister;
      m.base = static_cast<uint16_t>(t.reg);
      state = kAfterBase;
      continue;
    }
    if (state == kAfterIndex) {
      return malformed(t.column, "at most one base and one index register");
    }
    if (t.is_uniform) {
      return malformed(t.column, "the index must be a register rN");
    }
    m.has_index = true;
    m.index_signed = t.sext;
    m.index = static_cast<uint16_t>(t.reg);
    m.scale = static_cast<uint8_t>(t.scale);
    state = kAfterIndex;
  }
  *mem = m;
  return true;
}

bool Assembler::ParseOperand(Instruction& inst, int position,
                             std::string_view mnemonic, std::string_view text,
                             int column) {
  RawOperand raw;
  if (!ParseRaw(text, column, &raw)) return false;
  const OpShape shape = inst.info().shape;
  const OperandRole role = GetOperandRole(shape, position);
  const std::string which = "operand " + std::to_string(position + 1) + " of " +
                            std::string(mnemonic);
  Operand& out = inst.operands[position];
  switch (role) {
    case OperandRole::kDestination:
      if (raw.kind != RawOperand::kRegister) {
        return Error(column, which +
                                 " is the destination and must be a "
                                 "register rN, got " +
                                 std::string(Describe(raw)) + " " +
                                 Quote(text));
      }
      out = Operand::Reg(raw.number);
      return true;
    case OperandRole::kLabel:
      if (raw.kind != RawOperand::kName) {
        return Error(column, which + " must be a label, got " +
                                 std::string(Describe(raw)) + " " +
                                 Quote(text));
      }
      out = Operand::Label(0);
      open_->refs.push_back({static_cast<uint32_t>(open_->kernel.code.size()),
                             position, std::string(text), line_, column});
      return true;
    case OperandRole::kMemory: {
      if (raw.kind != RawOperand::kMemory) {
        return Error(column, which + " must be a memory reference [...], got " +
                                 std::string(Describe(raw)) + " " +
                                 Quote(text));
      }
      MemoryRef mem;
      if (!ParseMemory(text, column, &mem)) return false;
      out = Operand::Memory(mem);
      return true;
    }
    case OperandRole::kSource:
      break;
  }
  switch (raw.kind) {
    case RawOperand::kRegister:
      out = Operand::Reg(raw.number);
      return true;
    case RawOperand::kUniform:
      out = Operand::Uniform(raw.number);
      return true;
    case RawOperand::kSpecial: {
      const std::string_view name = text.substr(1);
      const std::optional<SpecialRegister> sr = SpecialRegisterFromName(name);
      if (!sr) {
        return Error(column,
                     "unknown special register " + Quote(text) +
                         DidYouMean(name, AllSpecialRegisterNames(), "%"));
      }
      out = Operand::Special(*sr);
      return true;
    }
    case RawOperand::kImmediate: {
      std::string error;
      const ScalarType type = OperandType(inst, position);
      const std::optional<uint64_t> bits = ParseImmediate(text, type, &error);
      if (!bits) return Error(column, which + ": " + error);
      out = Operand::Imm(*bits);
      return true;
    }
    default:
      return Error(column, which +
                               " must be a register, uniform, special "
                               "register or immediate, got " +
                               std::string(Describe(raw)) + " " + Quote(text));
  }
}

bool Assembler::ParseInstruction(std::string_view rest, int column) {
  size_t token_end = 0;
  while (token_end < rest.size() && !IsBlank(rest[token_end])) ++token_end;
  const std::string_view token = rest.substr(0, token_end);
  const std::string_view name = token.substr(0, token.find('.'));
  const std::optional<Opcode> op = OpcodeFromMnemonic(name);
  if (!op) {
    if (!name.empty() && !IsNameStart(name[0])) {
      return Error(column, "unexpected " + Quote(name.substr(0, 1)) +
                               " at the start of a statement");
    }
    return Error(column, "unknown mnemonic " + Quote(name) +
                             DidYouMean(name, AllMnemonics()));
  }
  if (!open_) {
    return Error(column,
                 "instruction outside a kernel (.kernel NAME ... "
                 ".end)");
  }
  if (!open_->has_code) CheckConstantDataSize();
  Instruction inst;
  inst.op = *op;
  if (!ParseModifiers(inst, token, column)) return false;

  // Operands: split at commas outside brackets.
  struct Piece {
    std::string_view text;
    int column;
  };
  std::vector<Piece> pieces;
  const std::string_view operands = rest.substr(token_end);
  const int operands_column = column + static_cast<int>(token_end);
  if (!Trim(operands).empty()) {
    size_t start = 0;
    int depth = 0;
    for (size_t i = 0; i <= operands.size(); ++i) {
      if (i < operands.size()) {
        if (operands[i] == '[') ++depth;
        if (operands[i] == ']') --depth;
        if (operands[i] != ',' || depth > 0) continue;
      }
      std::string_view piece = operands.substr(start, i - start);
      size_t lead = 0;
      while (lead < piece.size() && IsBlank(piece[lead])) ++lead;
      const int piece_column = operands_column + static_cast<int>(start + lead);
      piece = Trim(piece);
      if (piece.empty()) {
        return Error(piece_column, "empty operand");
      }
      pieces.push_back({piece, piece_column});
      start = i + 1;
    }
  }
  const OpShape shape = inst.info().shape;
  const int expected = OperandCount(shape);
  if (static_cast<int>(pieces.size()) != expected) {
    std::string message = std::string(token) + " takes ";
    if (expected == 0) {
      message += "no operands";
    } else {
      message += std::to_string(expected) +
                 (expected == 1 ? " operand (" : " operands (") +
                 std::string(OperandSignature(shape)) + ")";
    }
    message += ", got " + std::to_string(pieces.size());
    return Error(pieces.size() > static_cast<size_t>(expected)
                     ? pieces[expected].column
                     : column,
                 std::move(message));
  }
  const size_t refs_before = open_->refs.size();
  for (int i = 0; i < expected; ++i) {
    if (!ParseOperand(inst, i, token, pieces[i].text, pieces[i].column)) {
      open_->refs.resize(refs_before);
      return false;
    }
  }
  inst.location = loc_ ? *loc_
                       : SourceLocation{0, static_cast<uint32_t>(line_),
                                        static_cast<uint32_t>(column)};
  open_->kernel.code.push_back(inst);
  open_->has_code = true;
  return true;
}

// The .data lines of a kernel end at its first instruction (or .end): the
// bytes must add up to the size .constant_data declared.
void Assembler::CheckConstantDataSize() {
  OpenKernel& k = *open_;
  if (k.constant_data_line == 0 || k.constant_data_checked) return;
  k.constant_data_checked = true;
  const uint64_t have = k.kernel.constant_data.size();
  if (have != k.constant_data_size) {
    ErrorAt(k.constant_data_line, k.constant_data_column,
            ".constant_data declares " + std::to_string(k.constant_data_size) +
                " bytes but the .data lines of kernel '" + k.kernel.name +
                "' hold " + std::to_string(have));
  }
}

void Assembler::CloseKernel() {
  CheckConstantDataSize();
  OpenKernel& k = *open_;
  for (const LabelRef& ref : k.refs) {
    auto it = k.labels.find(ref.name);
    if (it == k.labels.end()) {
      std::vector<std::string_view> names;
      for (const auto& [name, where] : k.labels) names.push_back(name);
      ErrorAt(ref.line, ref.column,
              "undefined label " + Quote(ref.name) + " in kernel '" +
                  k.kernel.name + "'" + DidYouMean(ref.name, names));
      continue;
    }
    k.kernel.code[ref.inst].operands[ref.operand].label = it->second.first;
  }
  ComputeResources(k.kernel);
  module_.kernels.push_back(std::move(k.kernel));
  open_.reset();
  loc_.reset();
}

}  // namespace

std::optional<uint64_t> ParseImmediate(std::string_view text, ScalarType type,
                                       std::string* error) {
  auto fail = [&](std::string message) -> std::optional<uint64_t> {
    if (error != nullptr) *error = std::move(message);
    return std::nullopt;
  };
  if (static_cast<int>(type) >= kNumScalarTypes) {
    return fail("invalid type");
  }
  const std::string suffix(IsaSuffix(type));
  if (text.empty()) return fail("empty immediate");
  const bool neg = text[0] == '-';
  const std::string_view body = neg ? text.substr(1) : text;
  const bool is_float = IsFloat(type);
  const int width = SizeOf(type) * 8;
  const uint64_t mask = width == 64 ? UINT64_MAX : (uint64_t{1} << width) - 1;

  if (body == "inf" || body == "nan") {
    if (!is_float) {
      return fail("float literal " + Quote(text) + " for integer type " +
                  suffix);
    }
    return FloatSpecialBits(type, neg, body == "nan");
  }
  const bool hex_syntax =
      body.size() >= 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X');
  if (hex_syntax || (!is_float && AllDigits(body))) {
    uint64_t magnitude = 0;
    bool is_hex = false;
    const NumberStatus status = ParseUnsigned(body, &magnitude, &is_hex);
    if (status == NumberStatus::kMalformed) {
      return fail("malformed immediate " + Quote(text));
    }
    auto out_of_range = [&] {
      return fail("integer literal " + Quote(text) + " is out of range for " +
                  suffix + " (" + TypeRange(type) + ")");
    };
    if (is_float) {  // raw bits
      if (neg) {
        return fail("raw float bits " + Quote(text) + " cannot be negative");
      }
      if (status == NumberStatus::kOverflow || magnitude > mask) {
        return fail("raw bits " + Quote(text) + " do not fit in " + suffix +
                    " (" + std::to_string(width) + " bits)");
      }
      return magnitude;
    }
    if (status == NumberStatus::kOverflow) return out_of_range();
    if (neg && magnitude == 0) return 0;
    if (type == ScalarType::kBool) {
      if (neg || magnitude > 1) return out_of_range();
      return magnitude;
    }
    if (IsSigned(type)) {
      const uint64_t max_neg = uint64_t{1} << (width - 1);
      if (neg) {
        if (magnitude > max_neg) return out_of_range();
        return (~magnitude + 1) & mask;
      }
      // Hex literals may give a signed type's raw bits (0xffffffff).
      if (magnitude > (is_hex ? mask : max_neg - 1)) return out_of_range();
      return magnitude;
    }
    if (neg || magnitude > mask) return out_of_range();
    return magnitude;
  }
  if (!IsDecimalFloatSyntax(body)) {
    return fail("malformed immediate " + Quote(text));
  }
  if (!is_float) {
    return fail("float literal " + Quote(text) + " for integer type " + suffix);
  }

  // Decimal float literal for a float type.
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto out_of_range = [&] {
    return fail(
        "float literal " + Quote(text) + " is out of range for " + suffix +
        (type == ScalarType::kHalf ? " (largest finite value 65504)" : ""));
  };
  if (type == ScalarType::kFloat) {
    float f = 0;
    const std::from_chars_result r = std::from_chars(first, last, f);
    if (r.ec == std::errc::result_out_of_range) {
      if (!IsTinyDecimal(body)) return out_of_range();
      return neg ? 0x80000000u : 0u;
    }
    if (r.ec != std::errc() || r.ptr != last) {
      return fail("malformed immediate " + Quote(text));
    }
    return std::bit_cast<uint32_t>(f);
  }
  double d = 0;
  const std::from_chars_result r = std::from_chars(first, last, d);
  if (r.ec == std::errc::result_out_of_range) {
    if (!IsTinyDecimal(body)) return out_of_range();
    return neg ? 0x8000u : 0u;
  }
  if (r.ec != std::errc() || r.ptr != last) {
    return fail("malformed immediate " + Quote(text));
  }
  const uint16_t bits =
      type == ScalarType::kHalf ? DoubleToHalfBits(d) : DoubleToBFloatBits(d);
  const uint16_t inf_bits = type == ScalarType::kHalf ? 0x7c00 : 0x7f80;
  if ((bits & 0x7fff) == inf_bits) return out_of_range();
  return bits;
}

AssembleResult Assemble(std::string_view text, std::string_view file_name) {
  return Assembler(text, file_name).Run();
}

}  // namespace mtlemu::isa
