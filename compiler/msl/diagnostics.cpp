#include "compiler/msl/diagnostics.h"

#include <clang/Basic/SourceManager.h>
#include <llvm/ADT/SmallString.h>

#include <algorithm>

#include "compiler/msl/shim_attributes.h"

namespace mtlemu::msl {
namespace {

// d.ToString() with "warning" or "note" where it says "error".
std::string Retitled(const isa::Diagnostic& d, std::string_view kind) {
  std::string text = d.ToString();
  const size_t at = text.find(": error: ");
  if (at != std::string::npos) {
    text.replace(at, 9, ": " + std::string(kind) + ": ");
  }
  return text;
}

}  // namespace

void DiagnosticCollector::HandleDiagnostic(
    clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) {
  if (IsShimAttributeNoise(info)) return;
  const bool note = level == clang::DiagnosticsEngine::Note;
  if (!note) {
    quieting_ =
        level == clang::DiagnosticsEngine::Warning &&
        std::find(quiet_.begin(), quiet_.end(), info.getID()) != quiet_.end();
  }
  if (quieting_) return;
  DiagnosticConsumer::HandleDiagnostic(level, info);
  if (level < clang::DiagnosticsEngine::Warning && !note) return;
  llvm::SmallString<256> message;
  info.FormatDiagnostic(message);
  isa::Diagnostic d;
  d.message = std::string(message);
  std::string snippet;
  if (info.hasSourceManager() && info.getLocation().isValid()) {
    const clang::SourceManager& sm = info.getSourceManager();
    const clang::SourceLocation loc = sm.getFileLoc(info.getLocation());
    if (observer_ && level >= clang::DiagnosticsEngine::Error) {
      observer_(info, sm, loc);
    }
    if (std::optional<UserPosition> p = mapper_(sm, loc)) {
      PlacePosition(*p, d, snippet);
      if (p->spelled_in) {
        // The macro's own text, as clang's "expanded from macro" note.
        isa::Diagnostic spelled;
        std::string spelled_snippet;
        PlacePosition(
            {p->spelled_in->first, p->spelled_in->second, p->spelled_offset},
            spelled, spelled_snippet);
        spelled.message = "in this macro's expansion";
        snippet += "\n" + Retitled(spelled, "note") + spelled_snippet;
      }
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
    const std::string text = Retitled(d, "note");
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
    warnings_.push_back(Retitled(d, "warning") + snippet);
  }
}

}  // namespace mtlemu::msl
