// The first of the front end's two clang runs: the user's file preprocessed
// in-process, so that everything after it (the attribute rewriter, the
// function constants) sees the code as the compiler will: macros expanded
// (MLX's `instantiate_kernel(...)` makes `template [[host_name("...")]]
// [[kernel]] ...`), headers included from the file's folder and
// CompileOptions::include_directories, conditionals decided by Metal's
// predefined macros.
//
// The <metal_stdlib> shims are not expanded here: every shim header is an
// empty file in this run, and the compilation proper loads the shims
// (precompiled) itself, so their macros expand there.
//
// The text keeps the user's lines and columns: `#line` markers where the
// file or line changes, tokens at their own columns, pragmas (`#pragma clang
// loop unroll(full)`, `_Pragma(...)` from macros, `#pragma clang
// diagnostic ...`) on lines of their own. Debug line tables, fault reports
// and kernels' lines therefore name the user's file and line, and
// `origins` map every token back to its place for diagnostics' carets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/msl/frontend.h"
#include "compiler/msl/user_position.h"

namespace mtlemu::msl {

struct PreprocessedSource {
  std::string text;
  std::string main_path;  // the main file's absolute path (in the markers)
  struct File {
    std::string name;  // as shown in messages (the main file: as given)
    std::string text;
  };
  std::vector<File> files;  // files[0] is the main file
  // One per token of `text`, sorted by offset: where it came from. A token
  // of a macro expansion comes from the expansion's place and has length 0;
  // spelled_file/spelled_offset say where its text was written (kNoFile
  // for a file token, or text no file holds: ## pasting, # strings).
  static constexpr uint32_t kNoFile = ~0u;
  struct Origin {
    size_t offset;
    uint32_t file;
    uint32_t file_offset;
    uint32_t length;
    uint32_t spelled_file;
    uint32_t spelled_offset;
  };
  std::vector<Origin> origins;

  isa::Diagnostics errors;
  std::vector<std::string> warnings;
  bool ok() const { return errors.empty(); }

  // The user's position for an offset into `text`.
  std::optional<UserPosition> Locate(size_t offset) const;
};

// `file` names the source in messages and resolves its #include "...".
PreprocessedSource Preprocess(std::string_view source, std::string_view file,
                              const CompileOptions& options);

}  // namespace mtlemu::msl
