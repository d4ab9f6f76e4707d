// Runs one dispatch: every threadgroup of the grid, in parallel on TBB, each
// threadgroup's SIMD groups cooperatively on one host thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "emu/check/check_options.h"
#include "emu/check/check_report.h"
#include "emu/check/kernel_checker.h"
#include "emu/dispatch/grid.h"
#include "emu/dispatch/schedule.h"
#include "emu/exec/decoded_kernel.h"
#include "emu/exec/fault.h"
#include "emu/exec/near_buffer.h"
#include "emu/exec/simd_trace.h"
#include "emu/memory/address_map.h"

namespace mtlemu::emu {

// Timed mode: receives the traces of threadgroups in order of their index,
// a batch at a time (so a large dispatch never holds all its traces).
// Contract: calls never overlap, but a call may run on any thread while the
// dispatch runs the next batch's threadgroups, inside the dispatch's TBB
// task arena (parallel work of the sink's shares its host threads); `batch`
// is the sink's until it returns (it may leave traces in it for the
// dispatch to reuse).
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // The lines and banks the traces are recorded in (the sink's chip).
  virtual TraceGeometry geometry() const = 0;
  virtual void Consume(std::vector<ThreadgroupTrace>& batch) = 0;
};

// What threadgroup memory holds when a threadgroup starts. Metal leaves it
// undefined; zero (the default) makes runs repeat exactly, and so do the
// other two: poison is every byte 0xFF (a float or half NaN, an integer
// -1), random a pattern seeded by the threadgroup's position in the grid.
// Reading memory nobody wrote shows up under poison or random.
enum class ThreadgroupMemoryFill : uint8_t { kZero, kPoison, kRandom };

// The longest timeout a dispatch keeps (about 31 years): a longer one (a
// host's "no limit") is cut to it, so the deadline stays within the clock.
inline constexpr std::chrono::milliseconds kMaxTimeout{1'000'000'000'000};

struct DispatchSetup {
  const DecodedKernel* kernel = nullptr;
  std::vector<uint32_t> uniforms;  // kernel->kernel->uniforms values
  // Offsets of [[threadgroup(n)]] blocks are in `uniforms`; this is the total
  // threadgroup memory each threadgroup gets (static + arguments).
  uint32_t threadgroup_memory_length = 0;
  ThreadgroupMemoryFill threadgroup_memory_fill = ThreadgroupMemoryFill::kZero;
  // Device memory as mapped when the dispatch starts (it must outlive it).
  const AddressMap* device = nullptr;
  DispatchGrid grid;
  int host_threads = 0;  // 0: all cores
  std::chrono::milliseconds timeout{600000};
  // When it becomes true the dispatch stops, as on a timeout (may be null).
  const std::atomic<bool>* interrupt = nullptr;
  // Called now and then from worker threads (thread-safe) with threadgroups
  // done and the total; may be empty.
  std::function<void(uint64_t, uint64_t)> progress;
  // Describes the device region nearest to an address for fault reports
  // ("buffer(2) 'out' (4096 bytes)") and its offset; may be empty.
  std::function<std::string(uint64_t address, int64_t* offset)>
      describe_address;
  // Device accesses just outside a buffer: zeros and a finding (in
  // DispatchResult::check), or a fault (emu/exec/near_buffer.h).
  OutOfBoundsPolicy out_of_bounds = OutOfBoundsPolicy::kReport;
  // The order of a threadgroup's SIMD groups between barriers.
  Schedule schedule;
  TraceSink* timing = nullptr;  // timed mode when set
  // The kernel checks to run (none when null or none is on), and for the
  // init check the buffers created without contents, sorted by address.
  const CheckOptions* checks = nullptr;
  std::vector<UninitializedRegion> uninitialized;
  std::string source_file;         // file of SourceLocation::file 0
  std::vector<std::string> files;  // the module's file table
};

struct DispatchResult {
  bool ok = true;
  Fault fault;  // when !ok
  uint64_t threadgroups_done = 0;
  uint64_t instructions = 0;
  uint64_t lane_instructions = 0;
  double seconds = 0;
  // With checks: what they found in the threadgroups that ran (also when
  // the dispatch faulted). Without: the accesses just outside a buffer,
  // when there were any (CheckReport::checks empty).
  std::optional<CheckReport> check;
};

DispatchResult RunDispatch(const DispatchSetup& setup);

}  // namespace mtlemu::emu
