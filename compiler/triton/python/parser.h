// The Python parser of the Triton front end: tokens (lexer.h) to the syntax
// tree of ast.h, following Python 3.12's grammar for the statements and
// expressions ast.h has nodes for.
//
// Syntax ast.h has no node for is an error "unsupported: ...": `match`,
// `async`, `await`, `yield`, `:=`, set literals and set/dict comprehensions,
// `type` aliases and type parameters, `except*`.
#pragma once

#include <string_view>

#include "common/result.h"
#include "compiler/triton/python/ast.h"

namespace mtlemu::triton::py {

// Contract: parses a whole file. A top-level statement that does not parse
// (bad syntax, or syntax outside the subset) becomes an UnparsedStmt with
// the error, and parsing resumes at the next top-level statement; only
// errors that leave the file unreadable (see Tokenize in lexer.h) fail the
// whole call, as "file:line:col: error: message". Never throws, never
// crashes, on any input: nesting is bounded with an error (200 brackets, as
// in CPython; 250 levels of nested expressions and statements, about 0.5 MB
// of stack at -O2; trees at most 1000 deep, so that walking one
// recursively is safe).
Result<Module> ParseModule(std::string_view source, std::string_view file);

// Contract: parses one expression, or a tuple of them without parentheses
// (`1, 2`), as Python's eval() does, e.g. a command-line value. Leading
// whitespace and trailing newlines are allowed. Lines are numbered from
// `first_line`. Errors come as "file:line:col: error: message".
Result<ExprPtr> ParseExpression(std::string_view text, std::string_view file,
                                int first_line = 1);

}  // namespace mtlemu::triton::py
