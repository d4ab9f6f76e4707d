#include "compiler/msl/source_scan.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>
#include <utility>

namespace mtlemu::msl {

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)); }

size_t SkipSpace(std::string_view s, size_t k) {
  while (k < s.size() && IsSpace(s[k])) ++k;
  return k;
}

size_t SkipSpaceBack(std::string_view s, size_t k) {
  while (k > 0 && IsSpace(s[k - 1])) --k;
  return k;
}

size_t IdentifierEnd(std::string_view s, size_t k) {
  while (k < s.size() && IsIdentifierChar(s[k])) ++k;
  return k;
}

bool WordAt(std::string_view s, size_t k, std::string_view word) {
  return s.compare(k, word.size(), word) == 0 &&
         (k == 0 || !IsIdentifierChar(s[k - 1])) &&
         (k + word.size() >= s.size() || !IsIdentifierChar(s[k + word.size()]));
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

size_t SkipCommentOrLiteral(std::string_view s, size_t i) {
  if (s.compare(i, 2, "//") == 0) {
    const size_t end = s.find('\n', i);
    return end == std::string_view::npos ? s.size() : end;
  }
  if (s.compare(i, 2, "/*") == 0) {
    const size_t end = s.find("*/", i + 2);
    return end == std::string_view::npos ? s.size() : end + 2;
  }
  if (s[i] == '"' || s[i] == '\'') {
    const char quote = s[i];
    size_t j = i + 1;
    while (j < s.size() && s[j] != quote && s[j] != '\n') {
      j += s[j] == '\\' ? 2 : 1;
    }
    return std::min(j + 1, s.size());
  }
  return i;
}

size_t MatchingClose(std::string_view s, size_t open) {
  int depth = 0;
  return FindInCode(s, open, [&](size_t k) {
    const char c = s[k];
    if (c == '(' || c == '[' || c == '{') ++depth;
    return (c == ')' || c == ']' || c == '}') && --depth == 0;
  });
}

size_t MatchingAngle(std::string_view s, size_t open) {
  // Angles count only outside other brackets; a bracket closing what it
  // did not open, or a `;`, ends the search without a match.
  int angles = 0, brackets = 0;
  const size_t at = FindInCode(s, open, [&](size_t k) {
    const char c = s[k];
    if (c == '(' || c == '[' || c == '{') ++brackets;
    if (c == ')' || c == ']' || c == '}') return --brackets < 0;
    if (brackets != 0) return false;
    if (c == ';') return true;
    if (c == '<') ++angles;
    return c == '>' && --angles == 0;
  });
  return at != std::string_view::npos && s[at] == '>' ? at
                                                      : std::string_view::npos;
}

namespace {

// Precedence climbing over `text` from `k`.
class ConstantParser {
 public:
  explicit ConstantParser(std::string_view text) : s_(text) {}

  std::optional<long long> Whole() {
    std::optional<long long> v = Binary(0);
    if (!v || SkipSpace(s_, k_) != s_.size()) return std::nullopt;
    return v;
  }

 private:
  // The binary operator at k_ (after spaces) and its precedence, higher
  // binding tighter; 0 for none.
  std::pair<std::string_view, int> Operator() {
    const size_t k = SkipSpace(s_, k_);
    static constexpr std::pair<std::string_view, int> kOperators[] = {
        {"<<", 5}, {">>", 5}, {"|", 1}, {"^", 2}, {"&", 3},
        {"+", 6},  {"-", 6},  {"*", 7}, {"/", 7}, {"%", 7}};
    for (const auto& [op, precedence] : kOperators) {
      if (s_.compare(k, op.size(), op) == 0) {
        // `&&`, `||` and `<=`-like spellings are not these.
        if (k + op.size() < s_.size() &&
            (s_[k + op.size()] == op[0] || s_[k + op.size()] == '=')) {
          return {op, 0};
        }
        return {op, precedence};
      }
    }
    return {{}, 0};
  }

  std::optional<long long> Binary(int min_precedence) {
    std::optional<long long> left = Unary();
    while (left) {
      const auto [op, precedence] = Operator();
      if (precedence == 0 || precedence <= min_precedence) break;
      k_ = SkipSpace(s_, k_) + op.size();
      const std::optional<long long> right = Binary(precedence);
      if (!right) return std::nullopt;
      left = Apply(op, *left, *right);
    }
    return left;
  }

  static std::optional<long long> Apply(std::string_view op, long long a,
                                        long long b) {
    long long r = 0;
    if (op == "+" && !__builtin_add_overflow(a, b, &r)) return r;
    if (op == "-" && !__builtin_sub_overflow(a, b, &r)) return r;
    if (op == "*" && !__builtin_mul_overflow(a, b, &r)) return r;
    if ((op == "/" || op == "%") && b != 0 && !(a == LLONG_MIN && b == -1)) {
      return op == "/" ? a / b : a % b;
    }
    if (op == ">>" && b >= 0 && b < 63 && a >= 0) return a >> b;
    if (op == "<<" && b >= 0 && b < 63 && a >= 0 && a <= (LLONG_MAX >> b)) {
      return a << b;
    }
    if (op == "&") return a & b;
    if (op == "|") return a | b;
    if (op == "^") return a ^ b;
    return std::nullopt;
  }

  std::optional<long long> Unary() {
    k_ = SkipSpace(s_, k_);
    if (k_ >= s_.size()) return std::nullopt;
    const char c = s_[k_];
    if (c == '-' || c == '+' || c == '~') {
      ++k_;
      const std::optional<long long> v = Unary();
      if (!v) return std::nullopt;
      if (c == '-') {
        return *v == LLONG_MIN ? std::optional<long long>() : -*v;
      }
      return c == '~' ? ~*v : *v;
    }
    if (c == '(') {
      ++k_;
      const std::optional<long long> v = Binary(0);
      k_ = SkipSpace(s_, k_);
      if (!v || k_ >= s_.size() || s_[k_] != ')') return std::nullopt;
      ++k_;
      return v;
    }
    if (c < '0' || c > '9') return std::nullopt;
    const std::string digits(s_.substr(k_, IdentifierEnd(s_, k_) - k_));
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(digits.c_str(), &end, 0);
    // Integer suffixes (u, l, ul, ll, ...) after the digits.
    for (const char* p = end; *p != 0; ++p) {
      if (std::string_view("uUlL").find(*p) == std::string_view::npos) {
        return std::nullopt;
      }
    }
    if (errno != 0 || end == digits.c_str()) return std::nullopt;
    k_ += digits.size();
    return v;
  }

  std::string_view s_;
  size_t k_ = 0;
};

}  // namespace

std::optional<long long> IntegerConstant(std::string_view text) {
  return ConstantParser(text).Whole();
}

}  // namespace mtlemu::msl
