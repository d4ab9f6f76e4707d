#include "compiler/msl/source_scan.h"

#include <algorithm>
#include <cctype>

namespace mtlemu::msl {

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
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
  for (size_t k = open; k < s.size(); ++k) {
    const size_t skipped = SkipCommentOrLiteral(s, k);
    if (skipped != k) {
      k = skipped - 1;
      continue;
    }
    const char c = s[k];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && --depth == 0) return k;
  }
  return std::string_view::npos;
}

size_t MatchingAngle(std::string_view s, size_t open) {
  int angles = 0;
  for (size_t k = open; k < s.size(); ++k) {
    const size_t skipped = SkipCommentOrLiteral(s, k);
    if (skipped != k) {
      k = skipped - 1;
      continue;
    }
    const char c = s[k];
    if (c == '(' || c == '[' || c == '{') {
      k = MatchingClose(s, k);
      if (k == std::string_view::npos) return k;
      continue;
    }
    if (c == ';' || c == ')' || c == ']' || c == '}') {
      return std::string_view::npos;
    }
    if (c == '<') ++angles;
    if (c == '>' && --angles == 0) return k;
  }
  return std::string_view::npos;
}

}  // namespace mtlemu::msl
