#include "emu/chips/chip.h"

#include <array>
#include <cctype>
#include <string>

namespace mtlemu {
namespace {

constexpr std::array kChips = {
#define CHIP(e, name, marketing, family, cores, mhz, l2, slc, dram, dynamic, \
             dual)                                                           \
  ChipSpec{name, marketing, family, cores, mhz},
#include "emu/chips/chips.def"
#undef CHIP
};

// Lower case, separators dropped: "M1 Max" -> "m1max".
std::string Canonical(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == '_' || c == ' ') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

std::span<const ChipSpec> AllChips() { return kChips; }

std::optional<ChipSpec> FindChip(std::string_view name) {
  const std::string wanted = Canonical(name);
  for (const ChipSpec& c : kChips) {
    if (Canonical(c.name) == wanted) return c;
  }
  return std::nullopt;
}

}  // namespace mtlemu
