// Scanning MSL source text: what the text rewriters before clang share
// (attribute_rewriter, vec_deduction). They read preprocessed text, so
// comments are rare, but literals are skipped whole.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace mtlemu::msl {

bool IsIdentifierChar(char c);
bool IsSpace(char c);

// The first offset from `k` that is not a space (s.size() at the end).
size_t SkipSpace(std::string_view s, size_t k);
// Back from `k`: the offset just after the last non-space before it.
size_t SkipSpaceBack(std::string_view s, size_t k);
// The end of the identifier that starts at `k` (`k` when none does).
size_t IdentifierEnd(std::string_view s, size_t k);
// Whether `word` stands at `k` as a whole identifier.
bool WordAt(std::string_view s, size_t k, std::string_view word);
std::string_view Trim(std::string_view s);

// Skips a comment or literal starting at `i`; returns the index after it,
// or `i` when none starts there.
size_t SkipCommentOrLiteral(std::string_view s, size_t i);

// Calls `stop(k)` on each offset k from `from` on that is outside comments
// and literals, in order, until it returns true; returns that k, or npos.
template <class Stop>
size_t FindInCode(std::string_view s, size_t from, Stop&& stop) {
  for (size_t k = from; k < s.size(); ++k) {
    const size_t skipped = SkipCommentOrLiteral(s, k);
    if (skipped != k) {
      k = skipped - 1;
      continue;
    }
    if (stop(k)) return k;
  }
  return std::string_view::npos;
}

// The offset of the bracket that closes the `(`, `[` or `{` at `open`
// (brackets of all three kinds nest; comments and literals are skipped), or
// npos when the text ends first.
size_t MatchingClose(std::string_view s, size_t open);

// The first offset between the bracket at `open` and the one that closes
// it, outside the brackets nested in them (and comments and literals),
// where `found(k)` holds; npos when none does or the text ends first.
template <class Found>
size_t FindAtTopLevel(std::string_view s, size_t open, Found&& found) {
  int depth = 0;
  const size_t at = FindInCode(s, open + 1, [&](size_t k) {
    const char c = s[k];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (depth-- == 0) return true;  // the closing bracket: none found
      return false;
    }
    return depth == 0 && found(k);
  });
  if (at == std::string_view::npos) return at;
  const char c = s[at];
  return c == ')' || c == ']' || c == '}' ? std::string_view::npos : at;
}

// The offset of the `>` that closes the `<` at `open` (parentheses and
// other brackets nest inside; a `>` within them does not count), or npos.
size_t MatchingAngle(std::string_view s, size_t open);

// The value of an integer constant expression of literals, parentheses and
// the operators + - * / % << >> & | ^ ~ (unary too): what a macro-built
// index such as `[[function_constant(FC_UNARY + 1)]]` is after
// preprocessing (`1200 + 1`). nullopt for anything else (names, overflow,
// division by zero).
std::optional<long long> IntegerConstant(std::string_view text);

}  // namespace mtlemu::msl
