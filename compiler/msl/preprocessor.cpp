#include "compiler/msl/preprocessor.h"

#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Pragma.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Lex/TokenConcatenation.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/VirtualFileSystem.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "compiler/msl/clang_invocation.h"
#include "compiler/msl/diagnostics.h"
#include "compiler/msl/shim_files.h"

namespace mtlemu::msl {
namespace {

// Apple headers of features mtlemu does not model: including one is one
// error that names the feature (preprocessing stops the compilation before
// the code that uses it can make a cascade of errors).
struct UnsupportedHeader {
  const char* path;
  const char* feature;
};
constexpr UnsupportedHeader kUnsupportedHeaders[] = {
    {"MetalPerformancePrimitives/MetalPerformancePrimitives.h",
     "Metal 4 tensor operations (MetalPerformancePrimitives: mpp::tensor_ops, "
     "metal::tensor) are not supported by mtlemu"},
    {"metal_tensor",
     "Metal 4 tensors (metal_tensor) are not supported by mtlemu"},
    {"metal_logging",
     "os_log logging from shaders (metal_logging) is not supported by "
     "mtlemu"},
    {"metal_raytracing",
     "ray tracing (metal_raytracing) is not supported by mtlemu"},
};

// Writes the token stream as text that lexes back to the same tokens, on
// the user's lines and columns.
class Printer {
 public:
  Printer(clang::Preprocessor& pp, PreprocessedSource& out)
      : pp_(pp), sm_(pp.getSourceManager()), concatenation_(pp), out_(out) {}

  void Token(const clang::Token& tok) {
    if (tok.isAnnotation()) return;
    const clang::SourceLocation at = sm_.getExpansionLoc(tok.getLocation());
    MoveTo(at);
    const unsigned column = sm_.getPresumedColumnNumber(at);
    if (column_ < column) {
      out_.text.append(column - column_, ' ');
      column_ = column;
    } else if (column_ > 1 &&
               (tok.hasLeadingSpace() ||
                concatenation_.AvoidConcat(prev_prev_, prev_, tok))) {
      out_.text += ' ';
      ++column_;
    }
    const auto [fid, offset] = sm_.getDecomposedLoc(at);
    const std::string spelling = pp_.getSpelling(tok);
    PreprocessedSource::Origin origin{out_.text.size(),
                                      FileIndex(fid),
                                      offset,
                                      static_cast<uint32_t>(tok.getLength()),
                                      PreprocessedSource::kNoFile,
                                      0};
    if (tok.getLocation().isMacroID()) {
      origin.length = 0;
      const auto [spelled_fid, spelled_offset] =
          sm_.getDecomposedLoc(sm_.getSpellingLoc(tok.getLocation()));
      if (sm_.getFileEntryRefForID(spelled_fid) ||
          spelled_fid == sm_.getMainFileID()) {
        origin.spelled_file = FileIndex(spelled_fid);
        origin.spelled_offset = spelled_offset;
      }
    }
    out_.origins.push_back(origin);
    Append(spelling);
    prev_prev_ = prev_;
    prev_ = tok;
  }

  // A pragma the compilation proper must see, on a line of its own.
  void Pragma(clang::SourceLocation location, std::string_view text) {
    MoveTo(sm_.getExpansionLoc(location));
    if (column_ != 1) NewLine();
    Append(text);
    NewLine();
    prev_.startToken();
    prev_prev_.startToken();
  }

  void Finish() {
    if (column_ != 1) out_.text += '\n';
  }

 private:
  static constexpr int kMaxBlankLines = 8;

  // Puts the output on the presumed line of `at`.
  void MoveTo(clang::SourceLocation at) {
    const clang::PresumedLoc p = sm_.getPresumedLoc(at);
    if (p.isInvalid()) return;
    const unsigned line = p.getLine();
    if (file_ != p.getFilename() || line < line_ ||
        line - line_ > kMaxBlankLines) {
      if (column_ != 1) out_.text += '\n';
      file_ = p.getFilename();
      out_.text += "#line " + std::to_string(line) + " \"";
      for (char c : file_) {
        if (c == '"' || c == '\\') out_.text += '\\';
        out_.text += c;
      }
      out_.text += "\"\n";
      line_ = line;
      column_ = 1;
      return;
    }
    while (line_ < line) NewLine();
  }

  void NewLine() {
    out_.text += '\n';
    ++line_;
    column_ = 1;
  }

  void Append(std::string_view text) {
    out_.text += text;
    const size_t newline = text.rfind('\n');
    if (newline == std::string_view::npos) {
      column_ += static_cast<unsigned>(text.size());
    } else {
      line_ +=
          static_cast<unsigned>(std::count(text.begin(), text.end(), '\n'));
      column_ = static_cast<unsigned>(text.size() - newline);
    }
  }

  // files[0] is the main file, there from the start; a header is added
  // at its first token.
  uint32_t FileIndex(clang::FileID fid) {
    if (fid == sm_.getMainFileID()) return 0;
    auto [it, added] = file_index_.try_emplace(
        fid.getHashValue(), static_cast<uint32_t>(out_.files.size()));
    if (added) {
      const clang::OptionalFileEntryRef entry = sm_.getFileEntryRefForID(fid);
      out_.files.push_back(
          {entry ? std::string(entry->getName()) : std::string("<unknown>"),
           std::string(sm_.getBufferData(fid))});
    }
    return it->second;
  }

  clang::Preprocessor& pp_;
  const clang::SourceManager& sm_;
  clang::TokenConcatenation concatenation_;
  PreprocessedSource& out_;
  std::map<unsigned, uint32_t> file_index_;
  std::string file_;
  unsigned line_ = 0;
  unsigned column_ = 1;
  clang::Token prev_, prev_prev_;
};

// Pragmas that the preprocessor does not handle itself (`#pragma unroll`,
// `#pragma clang loop ...`, `#pragma METAL ...`, `_Pragma` from macros):
// written out for the compilation proper, with their macros expanded, as
// clang's loop hints read them (`#pragma unroll (MIN(DK8/2, 4*NSG))` in
// llama.cpp: the compilation proper has no macros).
class PragmaWriter : public clang::PragmaHandler {
 public:
  PragmaWriter(std::string prefix, Printer& printer)
      : prefix_(std::move(prefix)), printer_(printer) {}

  void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer introducer,
                    clang::Token& tok) override {
    std::string text = prefix_;
    while (tok.isNot(clang::tok::eod)) {
      text += ' ';
      text += pp.getSpelling(tok);
      pp.Lex(tok);
    }
    printer_.Pragma(introducer.Loc, text);
  }

 private:
  std::string prefix_;
  Printer& printer_;
};

// `#pragma clang diagnostic ...`, which the preprocessor consumes: the
// compilation proper needs it too.
class DiagnosticPragmaWriter : public clang::PPCallbacks {
 public:
  explicit DiagnosticPragmaWriter(Printer& printer) : printer_(printer) {}

  void PragmaDiagnosticPush(clang::SourceLocation loc,
                            llvm::StringRef ns) override {
    printer_.Pragma(loc, "#pragma " + ns.str() + " diagnostic push");
  }
  void PragmaDiagnosticPop(clang::SourceLocation loc,
                           llvm::StringRef ns) override {
    printer_.Pragma(loc, "#pragma " + ns.str() + " diagnostic pop");
  }
  void PragmaDiagnostic(clang::SourceLocation loc, llvm::StringRef ns,
                        clang::diag::Severity severity,
                        llvm::StringRef option) override {
    const char* kind = "warning";
    switch (severity) {
      case clang::diag::Severity::Ignored:
        kind = "ignored";
        break;
      case clang::diag::Severity::Error:
        kind = "error";
        break;
      case clang::diag::Severity::Fatal:
        kind = "fatal";
        break;
      default:
        break;
    }
    printer_.Pragma(loc, "#pragma " + ns.str() + " diagnostic " + kind + " \"" +
                             option.str() + "\"");
  }

 private:
  Printer& printer_;
};

class PreprocessAction : public clang::PreprocessorFrontendAction {
 public:
  explicit PreprocessAction(PreprocessedSource& out) : out_(out) {}

 protected:
  void ExecuteAction() override {
    clang::Preprocessor& pp = getCompilerInstance().getPreprocessor();
    Printer printer(pp, out_);
    PragmaWriter top("#pragma", printer);
    PragmaWriter clang_ns("#pragma clang", printer);
    PragmaWriter gcc_ns("#pragma GCC", printer);
    pp.AddPragmaHandler(&top);
    pp.AddPragmaHandler("clang", &clang_ns);
    pp.AddPragmaHandler("GCC", &gcc_ns);
    pp.addPPCallbacks(std::make_unique<DiagnosticPragmaWriter>(printer));
    pp.EnterMainSourceFile();
    clang::Token tok;
    for (pp.Lex(tok); tok.isNot(clang::tok::eof); pp.Lex(tok)) {
      printer.Token(tok);
    }
    printer.Finish();
    pp.RemovePragmaHandler(&top);
    pp.RemovePragmaHandler("clang", &clang_ns);
    pp.RemovePragmaHandler("GCC", &gcc_ns);
  }

 private:
  PreprocessedSource& out_;
};

}  // namespace

std::optional<UserPosition> PreprocessedSource::Locate(size_t offset) const {
  auto it =
      std::upper_bound(origins.begin(), origins.end(), offset,
                       [](size_t v, const Origin& o) { return v < o.offset; });
  if (it == origins.begin()) return std::nullopt;
  --it;
  const File& f = files[it->file];
  const size_t delta = offset - it->offset;
  UserPosition p{f.name, f.text,
                 it->file_offset + (delta <= it->length ? delta : size_t{0})};
  if (it->spelled_file != kNoFile) {
    const File& s = files[it->spelled_file];
    p.spelled_in.emplace(s.name, s.text);
    p.spelled_offset = it->spelled_offset;
  }
  return p;
}

PreprocessedSource Preprocess(std::string_view source, std::string_view file,
                              const CompileOptions& options) {
  PreprocessedSource out;
  out.files.push_back({std::string(file), std::string(source)});
  std::error_code ec;
  out.main_path = std::filesystem::absolute(std::string(file), ec).string();
  if (ec) out.main_path = "/" + std::string(file);

  // The shims are empty files here (see the header).
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  for (size_t i = 0; i < kNumShimFiles; ++i) {
    memory->addFile(std::string(kShimDirectory) + "/" + kShimFiles[i].name, 0,
                    llvm::MemoryBuffer::getMemBuffer(""));
  }
  for (const UnsupportedHeader& h : kUnsupportedHeaders) {
    memory->addFile(std::string(kShimDirectory) + "/" + h.path, 0,
                    llvm::MemoryBuffer::getMemBufferCopy(
                        std::string("#error \"") + h.feature + "\"\n"));
  }
  memory->addFile(out.main_path, 0,
                  llvm::MemoryBuffer::getMemBuffer(out.files[0].text));
  const auto overlay = OverRealFileSystem(memory);
  std::vector<std::string> args = ArgumentsWithMacros(options);
  // Function constants: the compilation proper defines one macro per
  // constant (frontend.cpp).
  args.push_back("-Dis_function_constant_defined(x)=__mtlemu_fc_defined_##x");
  for (const std::string& dir : options.include_directories) {
    args.insert(args.end(), {"-I", dir});
  }
  args.push_back(out.main_path);

  const PositionMapper mapper =
      [&](const clang::SourceManager& sm,
          clang::SourceLocation loc) -> std::optional<UserPosition> {
    // An error in a header of the shims' folder (kUnsupportedHeaders) is
    // shown at the user's #include of it.
    for (clang::FileID in = sm.getFileID(loc); in.isValid();
         in = sm.getFileID(loc)) {
      const clang::OptionalFileEntryRef entry = sm.getFileEntryRefForID(in);
      if (!entry || !entry->getName().startswith(kShimDirectory)) break;
      loc = sm.getIncludeLoc(in);
    }
    const auto [fid, offset] = sm.getDecomposedLoc(loc);
    if (fid == sm.getMainFileID()) {
      return UserPosition{out.files[0].name, out.files[0].text, offset};
    }
    const clang::OptionalFileEntryRef entry = sm.getFileEntryRefForID(fid);
    if (!entry) return std::nullopt;
    return UserPosition{std::string(entry->getName()), sm.getBufferData(fid),
                        offset};
  };
  DiagnosticCollector collector(mapper, out.errors, out.warnings);
  clang::CompilerInstance ci;
  if (!PrepareCompiler(ci, collector, args, overlay)) {
    if (out.errors.empty()) {
      out.errors.push_back(
          {std::string(file), 0, 0, "internal error: bad compiler arguments"});
    }
    return out;
  }
  PreprocessAction action(out);
  ci.ExecuteAction(action);
  return out;
}

}  // namespace mtlemu::msl
