#include "compiler/msl/diagnostics.h"

#include <clang/Basic/SourceManager.h>
#include <llvm/ADT/SmallString.h>

#include <algorithm>

#include "compiler/msl/shim_attributes.h"

namespace mtlemu::msl {

void DiagnosticCollector::HandleDiagnostic(
    clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) {
  if (IsShimAttributeNoise(info)) return;
  DiagnosticConsumer::HandleDiagnostic(level, info);
  const bool note = level == clang::DiagnosticsEngine::Note;
  if (level < clang::DiagnosticsEngine::Warning && !note) return;
  llvm::SmallString<256> message;
  info.FormatDiagnostic(message);
  isa::Diagnostic d;
  d.message = std::string(message);
  std::string snippet;
  if (info.hasSourceManager() && info.getLocation().isValid()) {
    const clang::SourceManager& sm = info.getSourceManager();
    const clang::SourceLocation loc = sm.getFileLoc(info.getLocation());
    if (std::optional<UserPosition> p = mapper_(sm, loc)) {
      PlacePosition(*p, d, snippet);
    } else if (const clang::PresumedLoc p = sm.getPresumedLoc(loc);
               p.isValid()) {
      d.file = p.getFilename();
      d.line = static_cast<int>(p.getLine());
      d.column = static_cast<int>(p.getColumn());
    }
  }
  const bool error = level >= clang::DiagnosticsEngine::Error;
  if (note) {
    // "candidate template ignored: ..." and the like: part of the error or
    // warning before it.
    std::string text = d.ToString();
    const size_t at = text.find(": error: ");
    if (at != std::string::npos) text.replace(at, 9, ": note: ");
    if (last_was_error_ && !errors_.empty()) {
      errors_.back().message += "\n" + text + snippet;
    } else if (!warnings_.empty()) {
      warnings_.back() += "\n" + text + snippet;
    }
    return;
  }
  last_was_error_ = error;
  if (error) {
    d.message += snippet;
    errors_.push_back(std::move(d));
  } else {
    std::string text = d.ToString();
    const size_t at = text.find(": error: ");
    if (at != std::string::npos) text.replace(at, 9, ": warning: ");
    warnings_.push_back(text + snippet);
  }
}

}  // namespace mtlemu::msl
