#include "emu/check/check_options.h"

namespace mtlemu::emu {

Result<CheckOptions> ParseCheckList(std::string_view list) {
  CheckOptions options;
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    const std::string_view name = list.substr(
        start, comma == std::string_view::npos ? comma : comma - start);
    if (name == "race") {
      options.race = true;
    } else if (name == "init") {
      options.init = true;
    } else if (name == "simd") {
      options.simd = true;
    } else if (name == "order") {
      options.order = true;
    } else if (name == "all") {
      options.race = options.init = options.simd = options.order = true;
    } else {
      return Error{"unknown check '" + std::string(name) +
                   "' (expected race, init, simd, order or all, separated by "
                   "commas)"};
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return options;
}

std::string CheckListText(const CheckOptions& options) {
  std::string out;
  const auto add = [&out](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ',';
    out += name;
  };
  add(options.race, "race");
  add(options.init, "init");
  add(options.simd, "simd");
  add(options.order, "order");
  return out;
}

}  // namespace mtlemu::emu
