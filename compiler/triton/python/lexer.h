// The Python 3.12 tokenizer: source text to the token stream CPython's own
// tokenizer produces (NEWLINE, INDENT, DEDENT, names, numbers, strings,
// f-string parts, operators), for the parser in parser.h.
//
// Reading order: Tokenize() below, then lexer.cpp's Lexer::Run(), which
// dispatches on the first character of each token. F-strings follow PEP 701
// (Python 3.12): an f-string is FSTRING_START, then literal FSTRING_MIDDLE
// parts and replacement fields, each field being the tokens `{`, the
// expression's own tokens, optional `=`, optional `!` NAME, optional `:` and
// the format spec's parts, `}`; then FSTRING_END. So a field's expression may
// reuse the enclosing quote, span lines and nest f-strings.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace mtlemu::triton::py {

enum class TokenKind {
  kEndMarker,      // the end of the input; always the last token
  kNewline,        // the end of a logical line
  kIndent,         // the indentation grew (zero width, before the line's
                   // first token)
  kDedent,         // one indentation level closed (zero width)
  kName,           // an identifier or a keyword
  kNumber,         // a number literal, as written
  kString,         // one string or bytes literal; `value` decoded
  kFStringStart,   // an f-string's prefix and opening quote(s)
  kFStringMiddle,  // literal text of an f-string; `value` decoded, {{ -> {
  kFStringEnd,     // an f-string's closing quote(s)
  kOp,             // an operator or delimiter
  kError,          // a bad token; `value` holds the message
};

struct Token {
  TokenKind kind = TokenKind::kEndMarker;
  std::string_view text;  // the token's source text (points into the input)
  // kString and kFStringMiddle: the decoded contents (bytes for b"...",
  // UTF-8 otherwise); kError: the message, as Python would word it.
  std::string value;
  bool is_bytes = false;  // kString: a bytes literal
  // Where the token starts and ends (line 1-based, column 0-based in bytes
  // like Python's col_offset; the end is one past the last character).
  int line = 0;
  int column = 0;
  int end_line = 0;
  int end_column = 0;
  size_t offset = 0;  // byte offsets of the start and end in the input
  size_t end_offset = 0;
};

// Contract: returns the tokens of `source`, ending in kEndMarker, with lines
// numbered from `first_line`. A bad token (an invalid character or number,
// an unterminated single-quoted string, a stray closing bracket...) becomes a
// kError token and tokenizing goes on, so the parser can skip the statement
// holding it. Errors that leave the rest of the input unreadable are
// returned instead, as "file:line:col: error: message": an unterminated
// triple-quoted string, a bracket never closed, an inconsistent dedent, a
// mix of tabs and spaces Python rejects, more than 100 indentation levels,
// a NUL byte. Never throws, never crashes.
Result<std::vector<Token>> Tokenize(std::string_view source,
                                    std::string_view file, int first_line = 1);

// Python's hard keywords (`if`, `lambda`, `True`, ...; not the soft
// keywords `match`, `case`, `type`, `_`).
bool IsKeyword(std::string_view name);

// "file:line:col: error: message", with `column` 0-based and printed 1-based.
std::string FormatDiagnostic(std::string_view file, int line, int column,
                             std::string_view message);

}  // namespace mtlemu::triton::py
