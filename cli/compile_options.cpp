#include "cli/compile_options.h"

#include "cli/buffer_spec.h"

namespace mtlemu::cli {

Result<msl::CompileOptions> MakeCompileOptions(
    const std::vector<std::string>& defines,
    const std::vector<std::string>& include_directories, bool no_fast_math,
    const std::vector<std::string>& constants) {
  msl::CompileOptions options;
  options.fast_math = !no_fast_math;
  options.include_directories = include_directories;
  for (const std::string& d : defines) {
    const size_t eq = d.find('=');
    options.macros.emplace_back(
        d.substr(0, eq), eq == std::string::npos ? "" : d.substr(eq + 1));
  }
  for (const std::string& c : constants) {
    Result<std::pair<std::string, std::string>> parsed =
        ParseFunctionConstant(c);
    if (!parsed.ok()) return parsed.error();
    options.function_constants.push_back(std::move(parsed).value());
  }
  return options;
}

}  // namespace mtlemu::cli
