// Scanning MSL source text: what the text rewriters before clang share
// (attribute_rewriter, vec_deduction). They read preprocessed text, so
// comments are rare, but literals are skipped whole.
#pragma once

#include <cstddef>
#include <string_view>

namespace mtlemu::msl {

bool IsIdentifierChar(char c);

// Skips a comment or literal starting at `i`; returns the index after it,
// or `i` when none starts there.
size_t SkipCommentOrLiteral(std::string_view s, size_t i);

// The offset of the bracket that closes the `(`, `[` or `{` at `open`
// (brackets of all three kinds nest; comments and literals are skipped), or
// npos when the text ends first.
size_t MatchingClose(std::string_view s, size_t open);

// The offset of the `>` that closes the `<` at `open` (parentheses and
// other brackets nest inside; a `>` within them does not count), or npos.
size_t MatchingAngle(std::string_view s, size_t open);

}  // namespace mtlemu::msl
