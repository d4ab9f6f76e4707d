// The compile options the command line takes (-D, -I, --no-fast-math,
// --constant), as the compiler wants them.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "compiler/msl/frontend.h"

namespace mtlemu::cli {

Result<msl::CompileOptions> MakeCompileOptions(
    const std::vector<std::string>& defines,
    const std::vector<std::string>& include_directories, bool no_fast_math,
    const std::vector<std::string>& constants);

}  // namespace mtlemu::cli
