#include "compiler/msl_front_ends.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Threading.h>
#include <llvm/Support/thread.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_set>

#include "compiler/kernel_parts.h"
#include "compiler/msl/attribute_rewriter.h"
#include "compiler/msl_compiler.h"

namespace mtlemu::compiler {

struct MslFrontEnds::Part {
  msl::FrontendResult front;
  std::vector<std::string> own;       // the instantiations it was given
  std::vector<std::string> declared;  // the kernels it made, in order
  mutable std::mutex mutex;           // its LLVM context, one user at once
};

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

// A copy of `module` with the definitions that kernel function `kernel`
// reaches (calls, globals it reads, what their initializers name), the
// rest declarations: what the IR pipeline keeps of the whole module for
// this kernel, at the cost of this kernel only.
std::unique_ptr<llvm::Module> ModuleOfKernel(const llvm::Module& module,
                                             const llvm::Function& kernel) {
  std::unordered_set<const llvm::GlobalValue*> reached;
  std::unordered_set<const llvm::Constant*> seen;
  std::vector<const llvm::Constant*> work{&kernel};
  auto add_operands = [&](const llvm::User& u) {
    for (const llvm::Use& op : u.operands()) {
      if (const auto* c = llvm::dyn_cast<llvm::Constant>(op.get())) {
        work.push_back(c);
      }
    }
  };
  while (!work.empty()) {
    const llvm::Constant* c = work.back();
    work.pop_back();
    if (!seen.insert(c).second) continue;
    if (const auto* f = llvm::dyn_cast<llvm::Function>(c)) {
      reached.insert(f);
      for (const llvm::BasicBlock& block : *f) {
        for (const llvm::Instruction& i : block) add_operands(i);
      }
    } else if (const auto* g = llvm::dyn_cast<llvm::GlobalVariable>(c)) {
      reached.insert(g);
      if (g->hasInitializer()) work.push_back(g->getInitializer());
    } else if (const auto* a = llvm::dyn_cast<llvm::GlobalAlias>(c)) {
      reached.insert(a);
      work.push_back(a->getAliasee());
    } else {
      add_operands(*c);
    }
  }
  llvm::ValueToValueMapTy map;
  return llvm::CloneModule(module, map, [&](const llvm::GlobalValue* g) {
    return reached.count(g) != 0;
  });
}

}  // namespace

MslFrontEnds::MslFrontEnds() = default;
MslFrontEnds::~MslFrontEnds() = default;

std::unique_ptr<MslFrontEnds> MslFrontEnds::Compile(
    const msl::PreprocessedSource& preprocessed,
    const msl::CompileOptions& options,
    const std::vector<std::string>& kernels) {
  const std::vector<std::string> in_order =
      msl::ExplicitInstantiations(preprocessed.text);
  return Compile(preprocessed, options, kernels,
                 PartitionInstantiations(in_order, kernels, HostThreads()));
}

std::unique_ptr<MslFrontEnds> MslFrontEnds::Compile(
    const msl::PreprocessedSource& preprocessed,
    const msl::CompileOptions& options, const std::vector<std::string>& kernels,
    const std::vector<std::vector<std::string>>& parts) {
  std::unique_ptr<MslFrontEnds> out(new MslFrontEnds());
  out->file_ = preprocessed.files.at(0).name;
  std::vector<msl::FrontendResult> fronts(std::max<size_t>(parts.size(), 1));
  bool in_parts = parts.size() > 1;
  if (in_parts) {
    out->instantiations_ = msl::ExplicitInstantiations(preprocessed.text);
    // A source that does not compile is reported as one compile reports
    // it (which errors, in which order): compiled again so. Only failures
    // pay.
    if (!FrontEndsInStep(preprocessed, options, parts, fronts)) {
      in_parts = false;
      fronts.resize(1);
    }
  }
  if (!in_parts) {
    out->instantiations_.clear();
    fronts[0] = msl::CompileMsl(preprocessed, options, kernels);
  }
  if (!fronts[0].ok() && !in_parts) {
    out->errors_ = std::move(fronts[0].errors);
    out->warnings_ = std::move(fronts[0].warnings);
    if (out->errors_.empty()) {  // (no module, no message: never expected)
      out->errors_.push_back(
          {out->file_, 0, 0, "internal compiler error: no module"});
    }
    return out;
  }
  // What every part's front end says of the code outside the
  // instantiations, each says: once each, in part order.
  std::set<std::string> seen;
  std::vector<std::vector<std::string>> declared;
  for (size_t p = 0; p < fronts.size(); ++p) {
    auto part = std::make_unique<Part>();
    for (std::string& w : fronts[p].warnings) {
      if (seen.insert(w).second) out->warnings_.push_back(std::move(w));
    }
    fronts[p].warnings.clear();
    for (const msl::KernelDeclaration& k : fronts[p].kernels) {
      part->declared.push_back(k.name);
    }
    if (in_parts) part->own = parts[p];
    part->front = std::move(fronts[p]);
    declared.push_back(part->declared);
    out->parts_.push_back(std::move(part));
  }
  out->names_ =
      in_parts ? SourceOrder(declared, out->instantiations_) : declared[0];
  return out;
}

Result<isa::Module> MslFrontEnds::Lower(const std::string& name) const {
  for (const std::unique_ptr<Part>& part : parts_) {
    const std::lock_guard<std::mutex> lock(part->mutex);
    if (part->front.module == nullptr) {
      return Error{"internal error: the front ends of " + file_ +
                   " were used up"};
    }
    for (const msl::KernelDeclaration& k : part->front.kernels) {
      if (k.name != name) continue;
      const llvm::Function* f = part->front.module->getFunction(k.ir_name);
      if (f == nullptr) {
        return Error{"internal compiler error: kernel '" + name +
                     "' has no function " + k.ir_name};
      }
      std::unique_ptr<llvm::Module> one =
          ModuleOfKernel(*part->front.module, *f);
      return LowerKernels(*one, {&k}, file_);
    }
  }
  return NoKernelError(name, file_, names_, {});
}

Result<isa::Module> MslFrontEnds::LowerAll(
    const std::vector<std::string>& kernels) {
  if (!ok()) return Error{isa::FormatDiagnostics(errors_)};
  if (parts_.size() == 1) {
    return LowerMsl(std::move(parts_[0]->front), file_, kernels);
  }
  std::vector<std::optional<Result<isa::Module>>> modules(parts_.size());
  ForEachPart(parts_.size(), [&](size_t p) {
    Part& part = *parts_[p];
    const std::vector<std::string> lower = KernelsToLower(
        part.declared, instantiations_, part.own, kernels, p, parts_.size());
    if (lower.empty()) {  // (LowerMsl would lower every kernel)
      isa::Module none;
      none.files.push_back(file_);
      modules[p] = std::move(none);
    } else {
      modules[p] = LowerMsl(std::move(part.front), file_, lower);
    }
    part.front = msl::FrontendResult();  // its memory, now
  });
  std::vector<isa::Module> lowered;
  for (std::optional<Result<isa::Module>>& m : modules) {
    if (!m->ok()) return m->error();
    lowered.push_back(std::move(*m).value());
  }
  return MergeParts(std::move(lowered), names_);
}

}  // namespace mtlemu::compiler
