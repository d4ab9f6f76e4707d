#include "isa/names.h"

#include <algorithm>

namespace mtlemu::isa {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// `r12` for prefix 'r': what the assembler reads as a register (or, out of
// range, reports as one).
bool LooksLikeRegister(std::string_view name, char prefix) {
  return name.size() >= 2 && name[0] == prefix &&
         std::all_of(name.begin() + 1, name.end(), IsDigit);
}

}  // namespace

bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         c == '.' || c == '$';
}

bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }

bool IsValidName(std::string_view name) {
  if (name.empty() || !IsNameStart(name[0])) return false;
  return std::all_of(name.begin(), name.end(), IsNameChar);
}

bool IsValidLabelName(std::string_view name) {
  return IsValidName(name) && !LooksLikeRegister(name, 'r') &&
         !LooksLikeRegister(name, 'u') && name != "inf" && name != "nan";
}

}  // namespace mtlemu::isa
