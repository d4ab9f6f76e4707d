#include "cli/run_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "api/triton_library.h"
#include "cli/buffer_compare.h"
#include "cli/exit_codes.h"
#include "cli/npy.h"
#include "cli/run_launch.h"
#include "emu/check/check_report.h"
#include "emu/device/command_buffer.h"
#include "traces/chrome_trace.h"
#include "traces/timing_report_format.h"

namespace mtlemu::cli {
namespace {

// The text of line `line` of `path`, trimmed, or "" when it cannot be read.
std::string SourceLine(const std::string& path, uint32_t line) {
  if (path.empty() || line == 0) return "";
  std::ifstream in(path);
  std::string text;
  for (uint32_t i = 0; i < line && std::getline(in, text); ++i) {
  }
  if (!in) return "";
  const size_t first = text.find_first_not_of(" \t");
  const size_t last = text.find_last_not_of(" \t\r");
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

struct OutputSpec {
  std::string key;  // of EncodedLaunch::buffers
  std::string path;
};

// Progress on stderr, only when it is a terminal and the run is long.
class ProgressLine {
 public:
  ProgressLine() : start_(std::chrono::steady_clock::now()) {
    enabled_ = isatty(fileno(stderr)) != 0;
  }
  ~ProgressLine() {
    if (shown_) std::fputs("\r\033[K", stderr);
  }
  void Update(uint64_t done, uint64_t total) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    shown_ = true;
    std::fprintf(
        stderr, "\r  threadgroups %llu / %llu (%.0f%%)",
        static_cast<unsigned long long>(done),
        static_cast<unsigned long long>(total),
        100.0 * static_cast<double>(done) / static_cast<double>(total));
    std::fflush(stderr);
  }

 private:
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  bool enabled_ = false;
  bool shown_ = false;
};

// The index in decimal, or "" when `text` is not a non-negative integer.
std::string CanonicalIndex(const std::string& text) {
  try {
    size_t used = 0;
    const int index = std::stoi(text, &used);
    if (used == text.size() && index >= 0) return std::to_string(index);
  } catch (...) {
  }
  return "";
}

// "INDEX=PATH" (Metal, ISA) or "NAME=PATH" (Triton) for --out and --expect;
// it must name a bound buffer.
OutputSpec ParseOutputSpec(const char* option, const std::string& text,
                           const EncodedLaunch& launch) {
  const bool by_name = launch.kind == LaunchKind::kTriton;
  const size_t eq = text.find('=');
  std::string key = text.substr(0, eq);
  if (!by_name) key = CanonicalIndex(key);
  if (eq == std::string::npos || key.empty() || eq + 1 >= text.size()) {
    throw RunError(fmt::format("{} '{}': expected {}=PATH.npy", option, text,
                               by_name ? "NAME" : "INDEX"));
  }
  if (launch.buffers.count(key)) return {key, text.substr(eq + 1)};
  if (!by_name) {
    throw RunError(
        fmt::format("{} '{}': buffer index {} is not given with --buffer",
                    option, text, key));
  }
  std::vector<std::string> names;
  for (const auto& [name, b] : launch.buffers) names.push_back(name);
  throw RunError(fmt::format(
      "{} '{}': '{}' is not a pointer argument given a buffer with --arg "
      "(those are: {})",
      option, text, key,
      names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
}

// Before the run: a file can be made at `path` (its folder exists, and it
// is not a folder); `what` names the option in the message.
void CheckWritable(const std::string& what, const std::string& path) {
  const std::filesystem::path folder =
      std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!folder.empty() && !std::filesystem::is_directory(folder, ec)) {
    throw RunError(what + ": no folder " + folder.string());
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw RunError(what + ": " + path + " is a directory");
  }
}

// Before the run: `--out`'s file can be written, and no other --out writes
// the same file (the last of `outputs` is the one to check).
void CheckOutputPath(const std::vector<OutputSpec>& outputs,
                     const std::string& text) {
  const std::string& path = outputs.back().path;
  CheckWritable("--out '" + text + "'", path);
  std::error_code ec;
  for (size_t k = 0; k + 1 < outputs.size(); ++k) {
    if (std::filesystem::weakly_canonical(outputs[k].path, ec) ==
        std::filesystem::weakly_canonical(path, ec)) {
      throw RunError("--out '" + text + "': " + outputs[k].key +
                     " is written to " + path + " already");
    }
  }
}

std::string SizeText(const MTLSize& s) {
  return fmt::format("{}x{}x{}", s.width, s.height, s.depth);
}

// What a dispatch was, in the kernel's own terms.
std::string DispatchText(LaunchKind kind, const DispatchReport& r) {
  if (kind == LaunchKind::kTriton) {
    return fmt::format(
        "{} programs of {} threads (num_warps {})", SizeText(r.threadgroups),
        r.threads_per_threadgroup.width, r.threads_per_threadgroup.width / 32);
  }
  return fmt::format("{} threads in {} threadgroups of {}",
                     SizeText(r.threads_per_grid), SizeText(r.threadgroups),
                     SizeText(r.threads_per_threadgroup));
}

// The timing report (stdout or --report-file) and the trace (--trace).
Status WriteTiming(const RunOptions& options, const DispatchReport& r) {
  const std::string text = options.report.value_or("text") == "json"
                               ? traces::FormatReportJson(*r.timing)
                               : traces::FormatReportText(*r.timing);
  if (options.report_file) {
    std::ofstream out(*options.report_file);
    out << text;
    if (!out) {
      return Error{"--report-file " + *options.report_file +
                   ": cannot write the file"};
    }
  } else if (!options.quiet || options.report) {
    std::fputs(text.c_str(), stdout);
  }
  if (options.trace && r.timeline != nullptr) {
    if (Status s = traces::WriteChromeTraceFile(*r.timeline, *options.trace);
        !s.ok()) {
      return Error{"--trace: " + s.error().message};
    }
  }
  return {};
}

// The findings of --check on stderr, each with its source lines.
void PrintFindings(const emu::CheckReport& report) {
  for (const std::string& note : report.notes) {
    std::fprintf(stderr, "mtlemu: note: %s\n", note.c_str());
  }
  if (report.findings.empty()) return;
  if (report.checks.empty()) {
    // No check asked for: the accesses just outside a buffer (--oob).
    std::fprintf(stderr,
                 "mtlemu: warning: %zu access%s outside a buffer in kernel "
                 "'%s' (--oob report)\n",
                 report.findings.size(),
                 report.findings.size() == 1 ? "" : "es",
                 report.kernel.c_str());
  } else {
    std::fprintf(stderr, "mtlemu: check (%s): %zu finding%s in kernel '%s'\n",
                 report.checks.c_str(), report.findings.size(),
                 report.findings.size() == 1 ? "" : "s", report.kernel.c_str());
  }
  for (const emu::Finding& f : report.findings) {
    std::fprintf(stderr, "%s\n", f.Describe(report.kernel).c_str());
    const auto show = [](const emu::FindingAccess& a) {
      const std::string line = SourceLine(a.source_file, a.location.line);
      if (!line.empty()) {
        std::fprintf(stderr, "  %u | %s\n", a.location.line, line.c_str());
      }
    };
    show(f.first);
    if (f.second && (f.second->location.line != f.first.location.line ||
                     f.second->source_file != f.first.source_file)) {
      show(*f.second);
    }
  }
}

// --check-report: every dispatch's report, {"dispatches": [...]}.
Status WriteCheckReport(const std::string& path,
                        const std::vector<DispatchReport>& dispatches) {
  std::string json = "{\"dispatches\": [";
  bool first = true;
  for (const DispatchReport& r : dispatches) {
    if (r.check == nullptr) continue;
    json += first ? "\n" : ",\n";
    json += r.check->ToJson();
    while (json.back() == '\n') json.pop_back();
    first = false;
  }
  json += "\n]}\n";
  std::ofstream out(path);
  out << json;
  if (!out) return Error{"--check-report " + path + ": cannot write the file"};
  return {};
}

// The options that only one kind of kernel file takes.
void CheckOptionsApply(const RunOptions& o) {
  const OptionUse metal_only[] = {
      {"--groups", o.groups.has_value()},
      {"--threadgroup", o.threadgroup.has_value()},
      {"--buffer", !o.buffers.empty()},
      {"--bytes", !o.bytes.empty()},
      {"--threadgroup-memory", !o.threadgroup_memory.empty()},
      {"--constant", !o.constants.empty()},
      {"-D", !o.defines.empty()},
      {"-I", !o.include_directories.empty()},
      {"--no-fast-math", o.no_fast_math},
  };
  const OptionUse triton_only[] = {
      {"--arg", !o.triton.args.empty()},
      {"--num-warps", o.triton.num_warps.has_value()},
      {"--no-fp-fusion", o.triton.no_fp_fusion},
      {"--module-path", !o.triton.module_paths.empty()},
  };
  Check(cli::CheckOptionsApply(o.file, metal_only, triton_only));
}

int Run(const RunOptions& options) {
  CheckOptionsApply(options);
  std::shared_ptr<Device> device = Unwrap(Device::Create(options.chip));
  device->options().host_threads = options.threads;
  if (options.executor) {
    // (CLI11 has checked the name.)
    device->options().executor =
        emu::ParseExecutor(*options.executor).value_or(emu::Executor::kAuto);
  }
  if (options.threads < 0) {
    throw RunError(
        "--threads must be 0 (all cores) or a number of host "
        "threads, not " +
        std::to_string(options.threads));
  }
  if (!(options.timeout_seconds > 0)) {
    throw RunError("--timeout must be a positive number of seconds");
  }
  if (options.check_report && !options.checks) {
    throw RunError(
        "--check-report needs --check (race, init, simd, order or all)");
  }
  if (options.checks) {
    Result<emu::CheckOptions> checks = emu::ParseCheckList(*options.checks);
    if (!checks.ok()) {
      throw RunError("--check '" + *options.checks +
                     "': " + checks.error().message);
    }
    device->options().checks = checks.value();
  }
  if (options.check_report) {
    CheckWritable("--check-report", *options.check_report);
  }
  if (Result<emu::Schedule> schedule = emu::ParseSchedule(options.schedule);
      schedule.ok()) {
    device->options().schedule = schedule.value();
  } else {
    throw RunError("--schedule: " + schedule.error().message);
  }
  if (Result<emu::OutOfBoundsPolicy> oob =
          emu::ParseOutOfBoundsPolicy(options.oob);
      oob.ok()) {
    device->options().out_of_bounds = oob.value();
  } else {
    throw RunError("--oob: " + oob.error().message);
  }
  device->options().threadgroup_memory_fill =
      options.threadgroup_memory_fill == "poison"
          ? emu::ThreadgroupMemoryFill::kPoison
      : options.threadgroup_memory_fill == "random"
          ? emu::ThreadgroupMemoryFill::kRandom
          : emu::ThreadgroupMemoryFill::kZero;
  // `inf` or anything past the dispatch's longest: no limit (and no
  // overflow converting it).
  const double max_ms = static_cast<double>(emu::kMaxTimeout.count());
  device->options().timeout = std::chrono::milliseconds(
      static_cast<int64_t>(std::min(options.timeout_seconds * 1000.0, max_ms)));
  ProgressLine progress;
  device->options().progress = [&progress](uint64_t done, uint64_t total) {
    progress.Update(done, total);
  };

  std::shared_ptr<CommandQueue> queue = device->newCommandQueue();
  std::shared_ptr<CommandBuffer> commands = queue->commandBuffer();
  std::shared_ptr<ComputeCommandEncoder> encoder =
      commands->computeCommandEncoder();
  const EncodedLaunch launch =
      api::IsTritonFile(options.file)
          ? EncodeTritonLaunch(*device, *encoder, options)
          : EncodeMetalLaunch(*device, *encoder, options);
  std::vector<OutputSpec> outputs;
  for (const std::string& text : options.outs) {
    outputs.push_back(ParseOutputSpec("--out", text, launch));
    CheckOutputPath(outputs, text);
  }
  // Expected contents, read now so that a bad file fails before the run.
  std::vector<std::pair<OutputSpec, NpyArray>> expected;
  for (const std::string& text : options.expects) {
    const OutputSpec spec = ParseOutputSpec("--expect", text, launch);
    Result<NpyArray> array = ReadNpy(spec.path);
    if (!array.ok()) {
      throw RunError("--expect '" + text + "': " + array.error().message);
    }
    // Its size and type against the buffer's, before the run.
    const BoundBuffer& b = launch.buffers.at(spec.key);
    if (Status s = CheckComparable(b.type, b.buffer->length(), array.value());
        !s.ok()) {
      throw RunError("--expect '" + text + "': " + s.error().message);
    }
    expected.emplace_back(spec, std::move(array).value());
  }
  encoder->endEncoding();
  const bool timed = options.timing || options.trace || options.report ||
                     options.report_file || options.timing_reports;
  commands->options().timing = timed;
  commands->options().timeline = options.trace.has_value();
  commands->options().simd_detail = options.trace_detail == "simd";
  commands->commit();
  commands->waitUntilCompleted();

  int code = kExitOk;
  // The kernel's own output first, as it would have appeared while it ran.
  if (launch.printed) {
    for (const std::string& line : launch.printed()) {
      std::printf("%s\n", line.c_str());
    }
  }
  for (const DispatchReport& r : commands->dispatches()) {
    if (!r.executor_note.empty()) {
      std::fprintf(stderr, "mtlemu: note: %s: %s; it ran on the interpreter\n",
                   r.kernel.c_str(), r.executor_note.c_str());
    }
  }
  for (const DispatchReport& r : commands->dispatches()) {
    if (options.quiet) break;
    std::printf(
        "dispatched %s on %s: %s\n"
        "  emulated in %.3f ms: %llu SIMD-group instructions, %llu "
        "lane-instructions\n",
        r.kernel.c_str(), std::string(device->name()).c_str(),
        DispatchText(launch.kind, r).c_str(), r.seconds * 1e3,
        static_cast<unsigned long long>(r.instructions),
        static_cast<unsigned long long>(r.lane_instructions));
  }
  for (const DispatchReport& r : commands->dispatches()) {
    if (r.timing != nullptr && options.timing_reports != nullptr) {
      options.timing_reports->push_back(*r.timing);
    }
    if (r.timing != nullptr && options.timing_reports == nullptr) {
      if (Status s = WriteTiming(options, r); !s.ok()) {
        std::fprintf(stderr, "mtlemu: error: %s\n", s.error().message.c_str());
        code = kExitBadInput;
      }
    }
  }
  if (const CommandBufferError* error = commands->error()) {
    std::fprintf(stderr, "mtlemu: error: %s\n", error->message.c_str());
    // The line itself (a tl.device_assert's message is on it).
    const std::string line =
        SourceLine(error->fault.source_file, error->fault.location.line);
    if (!line.empty()) {
      std::fprintf(stderr, "  %u | %s\n", error->fault.location.line,
                   line.c_str());
    }
    code = error->code == CommandBufferErrorCode::kTimeout ? kExitTimeout
                                                           : kExitGpuFault;
  }
  // Expectations, when the run completed.
  if (code == kExitOk) {
    for (const auto& [spec, array] : expected) {
      const BoundBuffer& b = launch.buffers.at(spec.key);
      const auto* bytes = static_cast<const uint8_t*>(b.buffer->contents());
      Result<Comparison> c = CompareBuffer(
          b.type, std::span<const uint8_t>(bytes, b.buffer->length()), array,
          {options.rtol, options.atol});
      if (!c.ok()) {  // checked before the run; the outputs still go out
        std::fprintf(stderr, "mtlemu: error: --expect %s=%s: %s\n",
                     spec.key.c_str(), spec.path.c_str(),
                     c.error().message.c_str());
        code = kExitBadInput;
        continue;
      }
      if (c.value().mismatches == 0) {
        if (!options.quiet) {
          std::printf("%s matches %s (%llu elements)\n", b.name.c_str(),
                      spec.path.c_str(),
                      static_cast<unsigned long long>(c.value().elements));
        }
      } else {
        std::fprintf(stderr,
                     "mtlemu: error: %s differs from %s in %llu of "
                     "%llu elements (rtol %g, atol %g):\n%s",
                     b.name.c_str(), spec.path.c_str(),
                     static_cast<unsigned long long>(c.value().mismatches),
                     static_cast<unsigned long long>(c.value().elements),
                     options.rtol, options.atol,
                     c.value().first_mismatches.c_str());
        code = kExitMismatch;
      }
    }
  }
  // What the checks found, whatever else happened.
  bool found = false;
  for (const DispatchReport& r : commands->dispatches()) {
    if (r.check == nullptr) continue;
    PrintFindings(*r.check);
    // Findings count for the exit code under --check; without it, they
    // are warnings (accesses just outside a buffer).
    found |= !r.check->findings.empty() && !r.check->checks.empty();
    if (r.check->findings.empty() && !options.quiet) {
      std::printf("checks %s: nothing found\n", r.check->checks.c_str());
    }
  }
  if (found && (code == kExitOk || code == kExitMismatch)) {
    code = kExitCheckFound;
  }
  if (options.check_report) {
    if (Status s =
            WriteCheckReport(*options.check_report, commands->dispatches());
        !s.ok()) {
      std::fprintf(stderr, "mtlemu: error: %s\n", s.error().message.c_str());
      if (code == kExitOk) code = kExitBadInput;
    }
  }
  // Outputs are written whatever happened: what was computed is kept.
  for (const OutputSpec& out : outputs) {
    const BoundBuffer& b = launch.buffers.at(out.key);
    const auto* bytes = static_cast<const uint8_t*>(b.buffer->contents());
    Status s = WriteNpy(out.path, b.type, b.shape,
                        std::span<const uint8_t>(bytes, b.buffer->length()));
    if (!s.ok()) {
      std::fprintf(stderr, "mtlemu: error: --out: %s\n",
                   s.error().message.c_str());
      if (code == kExitOk) code = kExitBadInput;
    }
  }
  return code;
}

}  // namespace

BoundBuffer MakeBoundBuffer(Device& device, BufferData data, std::string name,
                            const std::string& origin) {
  BoundBuffer b;
  b.type = data.type;
  b.shape = std::move(data.shape);
  b.name = std::move(name);
  // An uninit buffer is made with a length only, as Metal's would be: the
  // init check then knows nothing has written it.
  b.buffer = Unwrap(data.uninitialized ? device.newBuffer(data.bytes.size())
                                       : device.newBuffer(data.bytes.data(),
                                                          data.bytes.size()));
  b.buffer->setLabel(origin);
  return b;
}

int RunCommand(const RunOptions& options) {
  try {
    return Run(options);
  } catch (const RunError& e) {
    return PrintError(e.message(), e.code());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "mtlemu: error: out of host memory\n");
    return kExitBadInput;
  }
}

}  // namespace mtlemu::cli
