#include "compiler/msl/source_scan.h"

#include <algorithm>
#include <cctype>

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

}  // namespace mtlemu::msl
