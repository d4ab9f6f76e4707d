// Loading a kernel file of any kind the command line accepts into a Library.
// Front ends add file types here, never new command-line syntax.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "compiler/msl/frontend.h"
#include "emu/device/device.h"

namespace mtlemu::cli {

// ISA text (.s, .isa, .asm), a binary module (recognized by content), or
// Metal Shading Language (.metal; only `kernel` is lowered when given).
Result<std::shared_ptr<Library>> LoadLibrary(
    Device& device, const std::string& path, const std::string& kernel = "",
    const msl::CompileOptions& options = {});

// The most ReadTextFile reads: no kernel file comes near it.
inline constexpr size_t kMaxInputFileBytes = size_t{256} << 20;

// The whole file, or an error naming it (also one past kMaxInputFileBytes,
// such as /dev/zero).
Result<std::string> ReadTextFile(const std::string& path);

}  // namespace mtlemu::cli
