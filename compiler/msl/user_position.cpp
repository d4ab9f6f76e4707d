#include "compiler/msl/user_position.h"

#include <algorithm>

namespace mtlemu::msl {

void PlacePosition(const UserPosition& position, isa::Diagnostic& d,
                   std::string& snippet) {
  const std::string_view text = position.text;
  const size_t offset = std::min(position.offset, text.size());
  d.file = position.file;
  d.line = 1 + static_cast<int>(
                   std::count(text.begin(), text.begin() + offset, '\n'));
  const size_t newline =
      offset == 0 ? std::string_view::npos : text.rfind('\n', offset - 1);
  const size_t start = newline == std::string_view::npos ? 0 : newline + 1;
  size_t end = text.find('\n', offset);
  if (end == std::string_view::npos) end = text.size();
  d.column = static_cast<int>(offset - start) + 1;
  snippet = "\n  " + std::string(text.substr(start, end - start)) + "\n  " +
            std::string(offset - start, ' ') + "^";
}

}  // namespace mtlemu::msl
