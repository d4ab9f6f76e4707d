#include "emu/jit/kernel_jit.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "emu/jit/run_codegen.h"

namespace mtlemu::emu {
namespace {

// One LLJIT for the process, made on first use; it compiles for the host
// CPU. Its methods are thread-safe, but without compile threads of its own
// it compiles on the thread that looks a symbol up, with one TargetMachine
// for all of them (LLJIT's SimpleCompiler): two host threads compiling at
// once corrupt its state ("Unterminated .bundle_lock"). So compiles, and
// the removal of compiled code, take turns.
struct Jit {
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  std::string error;
  std::mutex mutex;
};

Jit& TheJit() {
  static Jit* jit = [] {
    auto* j = new Jit;  // lives as long as the process: code may run late
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto made = llvm::orc::LLJITBuilder().create();
    if (!made) {
      j->error = llvm::toString(made.takeError());
    } else {
      j->lljit = std::move(*made);
      // memset and the like, which LLVM's intrinsics may call.
      auto process =
          llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
              j->lljit->getDataLayout().getGlobalPrefix());
      if (!process) {
        j->error = llvm::toString(process.takeError());
        j->lljit.reset();
      } else {
        j->lljit->getMainJITDylib().addGenerator(std::move(*process));
      }
    }
    return j;
  }();
  return *jit;
}

// The code of one kernel: removed from the JIT when the last pipeline
// holding it goes.
struct KernelCode {
  llvm::orc::ResourceTrackerSP tracker;
  ~KernelCode() {
    if (!tracker) return;
    std::lock_guard<std::mutex> lock(TheJit().mutex);
    llvm::consumeError(tracker->remove());
  }
};

// Runs worth compiling: at least two instructions written inline.
bool WorthCompiling(const DecodedKernel& kernel, uint32_t begin) {
  int inlined = 0;
  for (uint32_t pc = begin; pc < kernel.code[begin].run_end; ++pc) {
    if (JitInlines(kernel.code[pc]) && ++inlined == 2) return true;
  }
  return false;
}

}  // namespace

std::optional<Executor> ParseExecutor(std::string_view name) {
  if (name == "auto") return Executor::kAuto;
  if (name == "interpreter") return Executor::kInterpreter;
  if (name == "jit") return Executor::kJit;
  return std::nullopt;
}

bool CompileRuns(DecodedKernel& kernel, std::string& note) {
  // Each run worth compiling, and each if-then or if-else with the run
  // before it if any (IfThenEnd, IfElseEnd): [begin, end) then the branch
  // at `end` and its ways up to `join` (0: neither).
  struct Run {
    uint32_t begin;
    uint32_t end;
    uint32_t join;
  };
  std::vector<Run> runs;
  for (uint32_t pc = 0; pc < kernel.code.size(); ++pc) {
    const uint32_t end = std::max(kernel.code[pc].run_end, pc);
    uint32_t join = IfThenEnd(kernel, end);
    if (join == 0) join = IfElseEnd(kernel, end);
    if (join != 0) {
      runs.push_back({pc, end, join});
      pc = join - 1;
    } else if (end > pc) {
      if (WorthCompiling(kernel, pc)) runs.push_back({pc, end, 0});
      pc = end - 1;
    }
  }
  std::vector<DecodedKernel::Phase> phases = FindPhases(kernel);
  if (runs.empty() && phases.empty()) return true;
  Jit& jit = TheJit();
  if (!jit.lljit) {
    note = "the JIT could not start (" + jit.error + ")";
    return false;
  }
  static std::atomic<uint64_t> next_id{0};
  const std::string prefix = "mtlemu_k" + std::to_string(next_id++) + "_run";
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>(prefix, *context);
  module->setDataLayout(jit.lljit->getDataLayout());
  for (const Run& run : runs) {
    if (EmitRun(*module, kernel, run.begin, run.end,
                prefix + std::to_string(run.begin)) == nullptr) {
      note =
          "the JIT has no inline code for an instruction it chose to "
          "inline (at pc " +
          std::to_string(run.begin) + " or after)";
      return false;
    }
  }
  const auto phase_name = [&](const DecodedKernel::Phase& phase) {
    return prefix + "_phase" + std::to_string(phase.begin);
  };
  for (const DecodedKernel::Phase& phase : phases) {
    if (phase.begin < phase.end &&
        EmitPhase(*module, kernel, phase, phase_name(phase)) == nullptr) {
      note =
          "the JIT has no inline code for an instruction it chose to "
          "inline (in the phase at pc " +
          std::to_string(phase.begin) + ")";
      return false;
    }
  }
  // A kernel that is one run and then `exit` is compiled whole as well.
  const uint32_t entry_end = kernel.code[0].run_end;
  const bool whole =
      !runs.empty() && runs.front().begin == 0 &&
      entry_end < kernel.code.size() &&
      kernel.code[entry_end].flow == Flow::kExit &&
      EmitGroups(*module, kernel, entry_end, prefix + "_groups") != nullptr;
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os)) {
    note = "the JIT made invalid IR: " + os.str();
    return false;
  }
  auto code = std::make_shared<KernelCode>();
  // From here to the last lookup (where the module is compiled). (Made
  // after `code`, so that a failure unlocks before ~KernelCode locks.)
  std::unique_lock<std::mutex> lock(jit.mutex);
  code->tracker = jit.lljit->getMainJITDylib().createResourceTracker();
  if (llvm::Error e = jit.lljit->addIRModule(
          code->tracker,
          llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
    note = "the JIT could not add the kernel: " + llvm::toString(std::move(e));
    return false;
  }
  // A compiled function's address, else null with the note said.
  const auto lookup = [&](const std::string& name) -> void* {
    auto address = jit.lljit->lookup(name);
    if (!address) {
      note = "the JIT could not compile the kernel: " +
             llvm::toString(address.takeError());
      return nullptr;
    }
    return address->toPtr<void*>();
  };
  std::vector<JitRun> found;
  for (const Run& run : runs) {
    void* address = lookup(prefix + std::to_string(run.begin));
    if (address == nullptr) return false;
    found.push_back(reinterpret_cast<JitRun>(address));
  }
  JitGroupRun groups = nullptr;
  if (whole) {
    void* address = lookup(prefix + "_groups");
    if (address == nullptr) return false;
    groups = reinterpret_cast<JitGroupRun>(address);
  }
  for (DecodedKernel::Phase& phase : phases) {
    if (phase.begin == phase.end) continue;
    void* address = lookup(phase_name(phase));
    if (address == nullptr) return false;
    phase.run = reinterpret_cast<JitPhaseRun>(address);
  }
  lock.unlock();
  for (size_t i = 0; i < runs.size(); ++i) {
    DecodedInstruction& d = kernel.code[runs[i].begin];
    d.jit = found[i];
    d.jit_branches = runs[i].join != 0;
    // The run, and the if-then's branch and body where there is one.
    d.jit_alu_only =
        std::all_of(kernel.code.begin() + runs[i].begin,
                    kernel.code.begin() + std::max(runs[i].join, runs[i].end),
                    [](const DecodedInstruction& c) {
                      return !c.accesses_memory && c.flow != Flow::kMayFault;
                    });
  }
  kernel.groups = groups;
  kernel.phases = std::move(phases);
  kernel.jit = std::move(code);
  return true;
}

}  // namespace mtlemu::emu
