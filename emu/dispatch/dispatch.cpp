#include "emu/dispatch/dispatch.h"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <optional>

#include "emu/dispatch/dispatch_checks.h"
#include "emu/dispatch/order_check.h"
#include "emu/dispatch/threadgroup_runner.h"

namespace mtlemu::emu {
namespace {

constexpr uint64_t kProgressStep = 64;
constexpr int64_t kProgressStepNs = 10'000'000;

struct WorkerState {
  ThreadgroupRunner runner;
  SimdGroupStats stats;
  uint64_t threadgroups_done = 0;
  // Progress: threadgroups done and not yet in the shared count, and when
  // this worker last added to it.
  uint64_t unpublished = 0;
  int64_t published_ns = 0;
};

// Keeps the fault of the lowest-numbered threadgroup, so that the report is
// the same on any number of host threads.
class FirstFault {
 public:
  void Offer(uint64_t index, const Fault& fault) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (index < index_.load()) {
      index_.store(index);
      fault_ = fault;
    }
  }
  // Threadgroups after a known fault need not run.
  bool Skip(uint64_t index) const { return index > index_.load(); }
  bool Any() const { return index_.load() != kNone; }
  const Fault& fault() const { return fault_; }

 private:
  static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  std::mutex mutex_;
  std::atomic<uint64_t> index_{kNone};
  Fault fault_;
};

void CompleteFault(const DispatchSetup& setup, Fault& fault) {
  const isa::Kernel& kernel = *setup.kernel->kernel;
  fault.kernel = kernel.name;
  if (fault.pc < kernel.code.size()) {
    fault.location = kernel.code[fault.pc].location;
    if (fault.location.file < setup.files.size()) {
      fault.source_file = setup.files[fault.location.file];
    }
  }
  if (fault.kind == FaultKind::kOutOfBounds ||
      fault.kind == FaultKind::kMisalignedAtomic) {
    if (isa::IsWideAddressSpace(fault.space) && setup.describe_address) {
      fault.region_description =
          setup.describe_address(fault.address, &fault.region_offset);
    } else if (fault.space == isa::AddressSpace::kThreadgroup) {
      fault.region_description =
          "threadgroup memory (" +
          std::to_string(setup.threadgroup_memory_length) + " bytes)";
      fault.region_offset = static_cast<int64_t>(fault.address);
    } else if (fault.space == isa::AddressSpace::kThread) {
      fault.region_description = "thread memory (" +
                                 std::to_string(kernel.thread_memory) +
                                 " bytes per thread)";
      fault.region_offset = static_cast<int64_t>(fault.address);
    }
  }
}

}  // namespace

DispatchResult RunDispatch(const DispatchSetup& setup) {
  if (setup.checks != nullptr && setup.checks->order) {
    return RunDispatchInTwoOrders(setup);
  }
  const auto start = std::chrono::steady_clock::now();
  const DispatchGrid& g = setup.grid;
  const uint64_t total = static_cast<uint64_t>(g.threadgroups[0]) *
                         g.threadgroups[1] * g.threadgroups[2];
  DispatchResult result;
  std::atomic<bool> cancel{false};
  std::atomic<bool> timed_out{false};
  std::atomic<bool> interrupted{false};
  std::atomic<uint64_t> done{0};
  std::atomic<int64_t> last_progress_ns{0};
  FirstFault first_fault;
  tbb::enumerable_thread_specific<WorkerState> workers;
  // Timed mode: the traces of the batch of threadgroups running now (one of
  // two buffers: the sink consumes the other meanwhile).
  std::vector<ThreadgroupTrace> batches[2];
  std::vector<ThreadgroupTrace>* batch = nullptr;
  uint64_t batch_begin = 0;
  const bool timed = setup.timing != nullptr;
  std::optional<DispatchChecks> checks;
  if (setup.checks != nullptr && setup.checks->any()) checks.emplace(setup);
  const Size3& tpt = g.threads_per_threadgroup;
  const uint32_t max_simdgroups = static_cast<uint32_t>(
      (uint64_t{tpt[0]} * tpt[1] * tpt[2] + kLanes - 1) / kLanes);
  const std::chrono::milliseconds timeout =
      std::min(setup.timeout, kMaxTimeout);
  const auto body = [&](const tbb::blocked_range<uint64_t>& range) {
    WorkerState& w = workers.local();
    // However the range ends, what it streamed is visible to the thread
    // that reads the buffers after the dispatch.
    struct Publish {
      ThreadgroupRunner& runner;
      ~Publish() { runner.PublishStreamedStores(); }
    } publish{w.runner};
    StopSignal stop{start + timeout, &cancel, setup.interrupt};
    // Written only where a threadgroup fails, which ends the range.
    Fault fault;
    for (uint64_t i = range.begin(); i != range.end(); ++i) {
      if (first_fault.Skip(i)) return;
      // Between threadgroups too (the clock every 64): a huge grid of short
      // threadgroups must stop at its deadline.
      if (cancel.load(std::memory_order_relaxed) ||
          ((i & 63) == 0 && stop.ShouldStop())) {
        if (stop.timed_out) timed_out.store(true);
        if (stop.interrupted) interrupted.store(true);
        cancel.store(true);
        return;
      }
      const Size3 position = ThreadgroupPosition(g, i);
      ThreadgroupTrace* trace = timed ? &(*batch)[i - batch_begin] : nullptr;
      KernelChecker* checker = checks ? &checks->Local() : nullptr;
      if (checker != nullptr) {
        checker->StartThreadgroup(i, setup.threadgroup_memory_length,
                                  max_simdgroups);
      }
      const bool ran =
          w.runner.Run(setup, position, stop, w.stats, fault, trace, checker);
      if (checker != nullptr) checker->FinishThreadgroup();
      if (!ran) {
        if (stop.timed_out) {
          timed_out.store(true);
          cancel.store(true);
        } else if (stop.interrupted) {
          interrupted.store(true);
          cancel.store(true);
        } else if (fault.kind != FaultKind::kNone) {
          first_fault.Offer(i, fault);
        }
        return;
      }
      if (trace != nullptr) {
        // Trimmed here, on the worker, so the copies run in parallel.
        for (SimdGroupTrace& t : trace->simd_groups) t.Trim();
      }
      ++w.threadgroups_done;
      if (setup.progress) {
        // The shared count is written every kProgressStep threadgroups of a
        // worker, or kProgressStepNs after its last write: written for
        // each threadgroup, its cache line would go back and forth between
        // the cores.
        ++w.unpublished;
        const int64_t now =
            std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::steady_clock::now() - start)
                .count();
        if (w.unpublished < kProgressStep &&
            now - w.published_ns < kProgressStepNs) {
          continue;
        }
        const uint64_t n =
            done.fetch_add(w.unpublished, std::memory_order_relaxed) +
            w.unpublished;
        w.unpublished = 0;
        w.published_ns = now;
        int64_t last = last_progress_ns.load(std::memory_order_relaxed);
        if (now - last > 100'000'000 &&
            last_progress_ns.compare_exchange_strong(last, now)) {
          setup.progress(n, total);
        }
      }
    }
  };

  const int threads = setup.host_threads > 0
                          ? setup.host_threads
                          : tbb::this_task_arena::max_concurrency();
  // More host threads than cores (a determinism check, say) needs TBB's
  // global limit raised for the duration of the dispatch.
  std::optional<tbb::global_control> allow;
  if (threads > static_cast<int>(tbb::global_control::active_value(
                    tbb::global_control::max_allowed_parallelism))) {
    allow.emplace(tbb::global_control::max_allowed_parallelism,
                  static_cast<size_t>(threads));
  }
  tbb::task_arena arena(threads);
  const uint64_t grain =
      std::max<uint64_t>(1, total / (static_cast<uint64_t>(threads) * 64));
  if (!timed && !(checks && checks->NeedsBatches())) {
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<uint64_t>(0, total, grain), body,
                        tbb::simple_partitioner());
    });
  } else {
    // Batches in threadgroup order, each run in parallel and then handed
    // to the timing model, so the traces held at once stay bounded. The
    // model consumes a batch while the next one runs (a task beside the
    // threadgroups', so a second host thread overlaps the two, and takes
    // the model's parallel work once its threadgroups are done); it sees
    // the same batches in the same order on any number of threads. The
    // race check gathers its device records at the same points.
    constexpr uint64_t kBatch = 128;
    std::vector<ThreadgroupTrace>* ready = nullptr;  // ran, not consumed
    for (batch_begin = 0; batch_begin < total; batch_begin += kBatch) {
      const uint64_t end = std::min(total, batch_begin + kBatch);
      batch = &batches[(batch_begin / kBatch) % 2];
      if (timed) {
        batch->resize(end - batch_begin);
        for (uint64_t k = 0; k < batch->size(); ++k) {
          (*batch)[k].index = batch_begin + k;
        }
      }
      arena.execute([&] {
        tbb::task_group model;
        if (ready != nullptr) {
          model.run([&] { setup.timing->Consume(*ready); });
        }
        tbb::parallel_for(tbb::blocked_range<uint64_t>(batch_begin, end, 1),
                          body, tbb::simple_partitioner());
        model.wait();
      });
      ready = nullptr;
      if (checks) checks->EndBatch();
      if (first_fault.Any() || cancel.load()) break;
      if (timed) ready = batch;
    }
    if (ready != nullptr) {
      arena.execute([&] { setup.timing->Consume(*ready); });
    }
  }

  for (const WorkerState& w : workers) {
    result.instructions += w.stats.instructions;
    result.lane_instructions += w.stats.lane_instructions;
    result.threadgroups_done += w.threadgroups_done;
  }
  if (checks) result.check = checks->Finish();
  FindingSet near_buffer;
  for (const WorkerState& w : workers) {
    near_buffer.Merge(w.runner.near_buffer());
  }
  if (!near_buffer.empty()) {
    if (!result.check) {
      result.check.emplace();
      result.check->kernel = setup.kernel->kernel->name;
    }
    AppendFindings(setup, near_buffer, *result.check);
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (first_fault.Any()) {
    result.ok = false;
    result.fault = first_fault.fault();
    CompleteFault(setup, result.fault);
  } else if (interrupted.load()) {
    result.ok = false;
    result.fault.kind = FaultKind::kInterrupted;
    result.fault.kernel = setup.kernel->kernel->name;
    result.fault.detail = "the host interrupted the dispatch (" +
                          std::to_string(result.threadgroups_done) + " of " +
                          std::to_string(total) + " threadgroups done)";
  } else if (timed_out.load()) {
    result.ok = false;
    result.fault.kind = FaultKind::kTimeout;
    result.fault.kernel = setup.kernel->kernel->name;
    result.fault.detail =
        fmt::format("the dispatch ran longer than {:g} s (",
                    static_cast<double>(timeout.count()) / 1000.0) +
        std::to_string(result.threadgroups_done) + " of " +
        std::to_string(total) +
        " threadgroups done); Metal reports this as "
        "MTLCommandBufferErrorTimeout";
  }
  return result;
}

}  // namespace mtlemu::emu
