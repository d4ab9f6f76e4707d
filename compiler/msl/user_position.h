// A place in one of the user's files, and how a diagnostic shows it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "isa/diagnostic.h"

namespace mtlemu::msl {

// The file's name as shown, its whole text and a byte offset into it.
struct UserPosition {
  std::string file;
  std::string_view text;
  size_t offset = 0;
  // For code a macro made: where in the macro's definition (or argument)
  // the code was written.
  std::optional<std::pair<std::string, std::string_view>> spelled_in;
  size_t spelled_offset = 0;
};

// Sets d's file, line and column, and `snippet` to "\n  <the line>\n
// <a caret under the column>".
void PlacePosition(const UserPosition& position, isa::Diagnostic& d,
                   std::string& snippet);

}  // namespace mtlemu::msl
