// Clang's diagnostics as the user should read them: "file:line:col:
// error: message", the user's own source line and a caret. Both clang runs
// of the front end (preprocessing, then compiling the preprocessed and
// rewritten text) report through this collector; each says how a location
// in its own buffers maps back to the user's file.
#pragma once

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/SourceLocation.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/msl/user_position.h"
#include "isa/diagnostic.h"

namespace clang {
class SourceManager;
}

namespace mtlemu::msl {

// Maps a clang location to the user's file, or nullopt when it is not in
// one (the shims, a command-line macro): then clang's presumed location is
// shown without a source line.
using PositionMapper = std::function<std::optional<UserPosition>(
    const clang::SourceManager&, clang::SourceLocation)>;

class DiagnosticCollector : public clang::DiagnosticConsumer {
 public:
  DiagnosticCollector(PositionMapper mapper, isa::Diagnostics& errors,
                      std::vector<std::string>& warnings)
      : mapper_(std::move(mapper)), errors_(errors), warnings_(warnings) {}

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic& info) override;

  // Called with every error and its (file) location, before it is
  // formatted: for callers that act on particular diagnostics.
  using ErrorObserver =
      std::function<void(const clang::Diagnostic&, const clang::SourceManager&,
                         clang::SourceLocation)>;
  void SetErrorObserver(ErrorObserver observer) {
    observer_ = std::move(observer);
  }
  // Warnings (clang's diagnostic ids) left out, with their notes.
  void SetQuietWarnings(std::vector<unsigned> ids) { quiet_ = std::move(ids); }

 private:
  PositionMapper mapper_;
  ErrorObserver observer_;
  std::vector<unsigned> quiet_;
  bool quieting_ = false;  // the last warning was quiet: so are its notes
  isa::Diagnostics& errors_;
  std::vector<std::string>& warnings_;
  bool last_was_error_ = false;
};

}  // namespace mtlemu::msl
