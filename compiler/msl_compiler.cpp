#include "compiler/msl_compiler.h"

#include <llvm/IR/Module.h>
#include <llvm/Support/Threading.h>
#include <llvm/Support/thread.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <set>

#include "compiler/air/ir_legality.h"
#include "compiler/air/lower_kernel.h"
#include "compiler/air/pipeline.h"
#include "compiler/kernel_parts.h"
#include "compiler/msl/attribute_rewriter.h"
#include "isa/verifier.h"

namespace mtlemu::compiler {
namespace {

// The stack a part's thread gets: what a process's main thread has, where
// clang's deepest template instantiations are known to fit.
constexpr unsigned kPartStackBytes = 8u << 20;

size_t HostThreads() {
  return std::max(1u, llvm::hardware_concurrency().compute_thread_count());
}

// Runs body(0 .. count - 1) on up to as many threads as the host has
// cores, each with kPartStackBytes of stack.
template <class Body>
void ForEachPart(size_t count, const Body& body) {
  const size_t threads = std::min<size_t>(count, HostThreads());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < count; i = next++) body(i);
  };
  std::vector<llvm::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    pool.emplace_back(std::optional<unsigned>(kPartStackBytes), work);
  }
  work();
  for (llvm::thread& t : pool) t.join();
}

// One compile of `kernels`, on this thread.
CompiledMsl CompileWhole(const msl::PreprocessedSource& preprocessed,
                         const msl::CompileOptions& options,
                         const std::vector<std::string>& kernels) {
  msl::FrontendResult front = msl::CompileMsl(preprocessed, options, kernels);
  if (!front.ok()) {
    return {Error{isa::FormatDiagnostics(front.errors)},
            std::move(front.warnings), std::move(front.errors)};
  }
  std::vector<std::string> warnings = std::move(front.warnings);
  return {LowerMsl(std::move(front), preprocessed.files[0].name, kernels),
          std::move(warnings),
          {}};
}

// The front ends of all parts, round by round in step: every part
// compiles each round with the sites all parts found so far, so each part
// ends with the rewrites one compile of the whole source ends with (and
// its kernels with the code one compile gives them). False, with the
// parts' results as they are, when a part failed without new sites.
bool FrontEndsInStep(const msl::PreprocessedSource& preprocessed,
                     const msl::CompileOptions& options,
                     const std::vector<std::vector<std::string>>& parts,
                     std::vector<msl::FrontendResult>& fronts) {
  msl::RetrySites retry;
  for (int round = 0;; ++round) {
    std::vector<msl::RetrySites> found(parts.size());
    ForEachPart(parts.size(), [&](size_t p) {
      fronts[p] =
          msl::CompileMslOnce(preprocessed, options, parts[p], retry, found[p]);
    });
    bool ok = true;
    for (const msl::FrontendResult& f : fronts) ok = ok && f.ok();
    bool more = false;
    for (const msl::RetrySites& f : found) more = retry.Add(f) || more;
    if (!more) return ok;
    if (round + 1 == msl::kMaxRetryRounds) return false;
  }
}

// CompileMslInParts, given the source's explicit instantiations in source
// order (`in_order`).
CompiledMsl CompileInParts(const msl::PreprocessedSource& preprocessed,
                           const msl::CompileOptions& options,
                           const std::vector<std::string>& kernels,
                           const std::vector<std::string>& in_order,
                           const std::vector<std::vector<std::string>>& parts) {
  if (parts.size() <= 1) return CompileWhole(preprocessed, options, kernels);
  std::vector<msl::FrontendResult> fronts(parts.size());
  // A source that does not compile is reported as one compile reports it
  // (which errors, in which order): compiled again so. Only failures pay.
  if (!FrontEndsInStep(preprocessed, options, parts, fronts)) {
    return CompileWhole(preprocessed, options, kernels);
  }
  // What every part's front end says of the code outside the
  // instantiations, each says: once each, in part order.
  std::vector<std::string> warnings;
  std::set<std::string> seen;
  for (const msl::FrontendResult& f : fronts) {
    for (const std::string& w : f.warnings) {
      if (seen.insert(w).second) warnings.push_back(w);
    }
  }
  std::vector<std::vector<std::string>> declared(parts.size());
  std::vector<std::optional<Result<isa::Module>>> modules(parts.size());
  ForEachPart(parts.size(), [&](size_t p) {
    for (const msl::KernelDeclaration& k : fronts[p].kernels) {
      declared[p].push_back(k.name);
    }
    const std::vector<std::string> lower = KernelsToLower(
        declared[p], in_order, parts[p], kernels, p, parts.size());
    if (lower.empty()) {  // (LowerMsl would lower every kernel)
      isa::Module none;
      none.files.push_back(preprocessed.files[0].name);
      modules[p] = std::move(none);
    } else {
      modules[p] =
          LowerMsl(std::move(fronts[p]), preprocessed.files[0].name, lower);
    }
    fronts[p] = msl::FrontendResult();  // its memory, now
  });
  std::vector<isa::Module> lowered;
  for (std::optional<Result<isa::Module>>& m : modules) {
    if (!m->ok()) return CompileWhole(preprocessed, options, kernels);
    lowered.push_back(std::move(*m).value());
  }
  return {MergeParts(std::move(lowered), SourceOrder(declared, in_order)),
          std::move(warnings),
          {}};
}

}  // namespace

Result<isa::Module> CompileMsl(std::string_view source, std::string_view file,
                               const msl::CompileOptions& options,
                               const std::vector<std::string>& kernels) {
  return compiler::CompileMsl(msl::Preprocess(source, file, options), options,
                              kernels);
}

Result<isa::Module> CompileMsl(const msl::PreprocessedSource& preprocessed,
                               const msl::CompileOptions& options,
                               const std::vector<std::string>& kernels) {
  return CompileMslWithWarnings(preprocessed, options, kernels).module;
}

CompiledMsl CompileMslWithWarnings(const msl::PreprocessedSource& preprocessed,
                                   const msl::CompileOptions& options,
                                   const std::vector<std::string>& kernels) {
  if (!preprocessed.ok()) {
    return {Error{isa::FormatDiagnostics(preprocessed.errors)},
            preprocessed.warnings, preprocessed.errors};
  }
  const std::vector<std::string> in_order =
      msl::ExplicitInstantiations(preprocessed.text);
  return CompileInParts(
      preprocessed, options, kernels, in_order,
      PartitionInstantiations(in_order, kernels, HostThreads()));
}

CompiledMsl CompileMslInParts(
    const msl::PreprocessedSource& preprocessed,
    const msl::CompileOptions& options, const std::vector<std::string>& kernels,
    const std::vector<std::vector<std::string>>& parts) {
  return CompileInParts(preprocessed, options, kernels,
                        msl::ExplicitInstantiations(preprocessed.text), parts);
}

Result<isa::Module> LowerMsl(msl::FrontendResult front, std::string_view file,
                             const std::vector<std::string>& kernels) {
  std::vector<const msl::KernelDeclaration*> chosen;
  for (const msl::KernelDeclaration& k : front.kernels) {
    if (kernels.empty() ||
        std::find(kernels.begin(), kernels.end(), k.name) != kernels.end()) {
      chosen.push_back(&k);
    }
  }
  for (const std::string& name : kernels) {
    if (std::none_of(chosen.begin(), chosen.end(),
                     [&](const auto* k) { return k->name == name; })) {
      std::string known;
      for (const auto& k : front.kernels) {
        known += (known.empty() ? "" : ", ") + k.name;
      }
      for (const std::string& k : front.skipped_kernels) {
        known += (known.empty() ? "" : ", ") + k;
      }
      return Error{"no kernel named '" + name + "' in " + std::string(file) +
                   " (it has: " + (known.empty() ? "none" : known) + ")"};
    }
  }
  isa::Module module;
  module.files.push_back(std::string(file));
  // A file of helpers alone: Metal's compiler makes an empty library of it.
  if (chosen.empty()) return module;
  std::vector<std::string> ir_names;
  for (const auto* k : chosen) ir_names.push_back(k->ir_name);
  if (Status s = air::PrepareModule(*front.module, ir_names); !s.ok()) {
    return s.error();
  }
  const std::vector<std::string> unexpected =
      air::UnexpectedConstructs(*front.module);
  if (!unexpected.empty()) {
    return Error{std::string(file) + ": unsupported: " + unexpected.front()};
  }
  for (const auto* k : chosen) {
    const llvm::Function* f = front.module->getFunction(k->ir_name);
    Result<isa::Kernel> kernel = air::LowerKernel(*f, *k, module.files);
    if (!kernel.ok()) {
      return Error{std::string(file) + ": " + kernel.error().message};
    }
    module.kernels.push_back(std::move(kernel).value());
  }
  // Each kernel was verified after each pass; this adds the module's own
  // rules (kernel names unique).
  if (const isa::Diagnostics d = isa::Verify(module, "the back end");
      !d.empty()) {
    return Error{"internal compiler error: " + isa::FormatDiagnostics(d)};
  }
  return module;
}

}  // namespace mtlemu::compiler
