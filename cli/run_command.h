// `mtlemu run FILE --kernel NAME ...`: bind buffers, dispatch, write outputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/triton_args.h"
#include "traces/timing_report.h"

namespace mtlemu::cli {

struct RunOptions {
  std::string file;
  std::string kernel;
  // --grid X[,Y[,Z]]: threads (dispatchThreads), or a Triton kernel's
  // programs.
  std::optional<std::string> grid;
  std::optional<std::string> groups;  // --groups (dispatchThreadgroups)
  std::optional<std::string> threadgroup;
  std::string chip = "m1";
  std::vector<std::string> buffers;              // INDEX=SPEC
  std::vector<std::string> bytes;                // INDEX=TYPE:V,...
  std::vector<std::string> threadgroup_memory;   // INDEX=BYTES
  std::vector<std::string> constants;            // NAME|INDEX=TYPE:V
  std::vector<std::string> defines;              // NAME[=VALUE]
  std::vector<std::string> include_directories;  // -I DIR
  bool no_fast_math = false;
  TritonOptions triton;              // .py, .ttir, .mlir
  std::vector<std::string> outs;     // INDEX=PATH.npy (Triton: NAME=...)
  std::vector<std::string> expects;  // INDEX=PATH.npy (Triton: NAME=...)
  double rtol = 1e-5;                // for --expect
  double atol = 1e-6;
  int threads = 0;
  std::optional<std::string> executor;  // "auto", "interpreter", "jit"
  double timeout_seconds = 600;
  std::string threadgroup_memory_fill = "zero";  // or "poison", "random"
  std::optional<std::string> checks;             // --check race,init,simd|all
  // --oob: device accesses just outside a buffer read zeros and are
  // reported (report), or fault (fault).
  std::string oob = "report";
  // --schedule: interleaved, sequential, random[:SEED].
  std::string schedule = "interleaved";
  std::optional<std::string> check_report;  // --check-report FILE.json
  bool quiet = false;
  // Timed mode: the chip's timing model (--timing, implied by the rest).
  bool timing = false;
  std::optional<std::string> trace;          // --trace FILE.json
  std::string trace_detail = "threadgroup";  // or "simd"
  std::optional<std::string> report;         // --report text|json
  std::optional<std::string> report_file;    // --report-file PATH
  // When set, each timed dispatch's report is added here (roofline).
  std::vector<emu::TimingReport>* timing_reports = nullptr;
};

// Runs the command; prints to stdout/stderr; returns an ExitCode.
int RunCommand(const RunOptions& options);

}  // namespace mtlemu::cli
