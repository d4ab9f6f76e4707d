#include "cli/run_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "cli/buffer_compare.h"
#include "cli/buffer_spec.h"
#include "cli/compile_options.h"
#include "cli/exit_codes.h"
#include "cli/kernel_file.h"
#include "cli/npy.h"
#include "emu/device/command_buffer.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"
#include "emu/timing/timing_report.h"
#include "traces/chrome_trace.h"

namespace mtlemu::cli {
namespace {

// A buffer the run binds, with what --out needs to write it back.
struct BoundBuffer {
  std::shared_ptr<Buffer> buffer;
  isa::ScalarType type;
  std::vector<uint64_t> shape;
  std::string origin;  // the argument that made it, for messages
};

struct OutputSpec {
  int index;
  std::string path;
};

class RunError {
 public:
  explicit RunError(std::string message, int code = kExitBadInput)
      : message_(std::move(message)), code_(code) {}
  const std::string& message() const { return message_; }
  int code() const { return code_; }

 private:
  std::string message_;
  int code_;
};

std::string ArgumentDescription(const isa::BufferArgument& arg) {
  std::string out = fmt::format("buffer({})", arg.index);
  if (!arg.name.empty()) out += fmt::format(" '{}'", arg.name);
  out += fmt::format(" ({} {})", isa::AddressSpaceName(arg.space),
                     arg.element ? isa::MetalName(*arg.element) : "void");
  return out;
}

const isa::BufferArgument* FindArgument(const isa::Kernel& kernel, int index) {
  for (const isa::BufferArgument& a : kernel.buffers) {
    if (a.index == index) return &a;
  }
  return nullptr;
}

// A typed argument only takes data of its type (bfloat also takes ushort
// data, NumPy having no bfloat); void takes anything.
void CheckType(const isa::Kernel& kernel, int index, isa::ScalarType given,
               const std::string& origin, bool from_npy_u2) {
  const isa::BufferArgument* arg = FindArgument(kernel, index);
  if (arg == nullptr || !arg->element) return;
  if (*arg->element == given) return;
  if (from_npy_u2 && *arg->element == isa::ScalarType::kBFloat) return;
  throw RunError(
      fmt::format("{}: kernel '{}' reads {} as {}, but the data given is {}",
                  origin, kernel.name, ArgumentDescription(*arg),
                  isa::MetalName(*arg->element), isa::MetalName(given)));
}

template <class T>
T Unwrap(Result<T> r) {
  if (!r.ok()) throw RunError(r.error().message);
  return std::move(r).value();
}

void Check(const Status& s) {
  if (!s.ok()) throw RunError(s.error().message);
}

std::map<int, BoundBuffer> MakeBuffers(Device& device,
                                       const isa::Kernel& kernel,
                                       const RunOptions& options) {
  std::map<int, BoundBuffer> bound;
  for (const std::string& text : options.buffers) {
    BufferSpec spec = Unwrap(ParseBufferSpec(text));
    if (bound.count(spec.index)) {
      throw RunError(fmt::format(
          "--buffer '{}': buffer index {} is given twice", text, spec.index));
    }
    BoundBuffer b;
    b.origin = "--buffer '" + text + "'";
    if (const auto* npy = std::get_if<NpyBuffer>(&spec.source)) {
      Result<NpyArray> read = ReadNpy(npy->path);
      if (!read.ok()) throw RunError(b.origin + ": " + read.error().message);
      NpyArray array = std::move(read).value();
      CheckType(kernel, spec.index, array.type, b.origin,
                array.type == isa::ScalarType::kUShort);
      b.type = array.type;
      const isa::BufferArgument* arg = FindArgument(kernel, spec.index);
      if (arg && arg->element == isa::ScalarType::kBFloat) {
        b.type = isa::ScalarType::kBFloat;
      }
      b.shape = array.shape;
      b.buffer = Unwrap(device.newBuffer(array.data.data(), array.data.size()));
    } else {
      const auto& gen = std::get<GeneratedBuffer>(spec.source);
      CheckType(kernel, spec.index, gen.type, b.origin, false);
      const std::vector<uint8_t> data = MaterializeBuffer(gen);
      b.type = gen.type;
      b.shape = {gen.count};
      b.buffer = Unwrap(device.newBuffer(data.data(), data.size()));
    }
    b.buffer->setLabel(b.origin);
    bound.emplace(spec.index, std::move(b));
  }
  return bound;
}

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

// "INDEX=PATH" for --out and --expect; INDEX must be a bound buffer.
OutputSpec ParseIndexAndPath(const char* option, const std::string& text,
                             const std::map<int, BoundBuffer>& bound) {
  const size_t eq = text.find('=');
  int index = -1;
  if (eq != std::string::npos) {
    try {
      size_t used = 0;
      index = std::stoi(text.substr(0, eq), &used);
      if (used != eq) index = -1;
    } catch (...) {
      index = -1;
    }
  }
  if (index < 0 || eq + 1 >= text.size()) {
    throw RunError(
        fmt::format("{} '{}': expected INDEX=PATH.npy", option, text));
  }
  if (!bound.count(index)) {
    throw RunError(
        fmt::format("{} '{}': buffer index {} is not given with --buffer",
                    option, text, index));
  }
  return {index, text.substr(eq + 1)};
}

std::string SizeText(const MTLSize& s) {
  return fmt::format("{}x{}x{}", s.width, s.height, s.depth);
}

MTLSize ToMTLSize(const Size3& s) { return {s.x, s.y, s.z}; }

// The timing report (stdout or --report-file) and the trace (--trace).
Status WriteTiming(const RunOptions& options, const DispatchReport& r) {
  const std::string text = options.report.value_or("text") == "json"
                               ? emu::FormatReportJson(*r.timing)
                               : emu::FormatReportText(*r.timing);
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

int Run(const RunOptions& options) {
  std::shared_ptr<Device> device = Unwrap(Device::Create(options.chip));
  device->options().host_threads = options.threads;
  if (!(options.timeout_seconds > 0)) {
    throw RunError("--timeout must be a positive number of seconds");
  }
  device->options().timeout = std::chrono::milliseconds(
      static_cast<int64_t>(options.timeout_seconds * 1000.0));
  ProgressLine progress;
  device->options().progress = [&progress](uint64_t done, uint64_t total) {
    progress.Update(done, total);
  };

  std::shared_ptr<Library> library = Unwrap(LoadLibrary(
      *device, options.file, options.kernel,
      Unwrap(MakeCompileOptions(options.defines, options.no_fast_math,
                                options.constants))));
  std::shared_ptr<Function> function =
      Unwrap(library->newFunction(options.kernel));
  const isa::Kernel& kernel = function->kernel();
  std::shared_ptr<ComputePipelineState> pipeline =
      Unwrap(device->newComputePipelineState(function));

  // Arguments.
  std::map<int, BoundBuffer> bound = MakeBuffers(*device, kernel, options);
  std::shared_ptr<CommandQueue> queue = device->newCommandQueue();
  std::shared_ptr<CommandBuffer> commands = queue->commandBuffer();
  std::shared_ptr<ComputeCommandEncoder> encoder =
      commands->computeCommandEncoder();
  encoder->setComputePipelineState(pipeline);
  for (auto& [index, b] : bound) Check(encoder->setBuffer(b.buffer, 0, index));
  std::set<int> bytes_given;
  for (const std::string& text : options.bytes) {
    BytesSpec spec = Unwrap(ParseBytesSpec(text));
    if (!bytes_given.insert(spec.index).second || bound.count(spec.index)) {
      throw RunError(
          fmt::format("--bytes '{}': buffer index {} is already "
                      "given",
                      text, spec.index));
    }
    CheckType(kernel, spec.index, spec.type, "--bytes '" + text + "'", false);
    Check(encoder->setBytes(spec.bytes.data(), spec.bytes.size(), spec.index));
  }
  for (const std::string& text : options.threadgroup_memory) {
    ThreadgroupMemorySpec spec = Unwrap(ParseThreadgroupMemorySpec(text));
    Status s = encoder->setThreadgroupMemoryLength(spec.length, spec.index);
    if (!s.ok()) {
      throw RunError("--threadgroup-memory '" + text +
                     "': " + s.error().message);
    }
  }
  for (const isa::BufferArgument& arg : kernel.buffers) {
    if (!bound.count(arg.index) && !bytes_given.count(arg.index)) {
      throw RunError(fmt::format(
          "kernel '{}' needs {}: pass --buffer {}=... or --bytes {}=...",
          kernel.name, ArgumentDescription(arg), arg.index, arg.index));
    }
  }
  std::vector<OutputSpec> outputs;
  for (const std::string& text : options.outs) {
    outputs.push_back(ParseIndexAndPath("--out", text, bound));
  }
  // Expected contents, read now so that a bad file fails before the run.
  std::vector<std::pair<OutputSpec, NpyArray>> expected;
  for (const std::string& text : options.expects) {
    const OutputSpec spec = ParseIndexAndPath("--expect", text, bound);
    Result<NpyArray> array = ReadNpy(spec.path);
    if (!array.ok()) {
      throw RunError("--expect '" + text + "': " + array.error().message);
    }
    expected.emplace_back(spec, std::move(array).value());
  }

  // The dispatch.
  if (options.grid.has_value() == options.groups.has_value()) {
    throw RunError(
        "give exactly one of --grid (threads, as dispatchThreads) and "
        "--groups (threadgroups, as dispatchThreadgroups)");
  }
  MTLSize threadgroup{
      std::min<uint64_t>(256, pipeline->maxTotalThreadsPerThreadgroup()), 1, 1};
  if (options.threadgroup) {
    threadgroup =
        ToMTLSize(Unwrap(ParseSize3("--threadgroup", *options.threadgroup)));
  }
  if (options.grid) {
    const MTLSize grid = ToMTLSize(Unwrap(ParseSize3("--grid", *options.grid)));
    Check(encoder->dispatchThreads(grid, threadgroup));
  } else {
    const MTLSize groups =
        ToMTLSize(Unwrap(ParseSize3("--groups", *options.groups)));
    Check(encoder->dispatchThreadgroups(groups, threadgroup));
  }
  encoder->endEncoding();
  const bool timed = options.timing || options.trace || options.report ||
                     options.report_file || options.timing_reports;
  device->options().timing = timed;
  device->options().timeline = options.trace.has_value();
  device->options().simd_detail = options.trace_detail == "simd";
  commands->commit();
  commands->waitUntilCompleted();

  int code = kExitOk;
  for (const DispatchReport& r : commands->dispatches()) {
    if (options.quiet) break;
    std::printf(
        "dispatched %s on %s: %s threads in %s threadgroups of %s\n"
        "  emulated in %.3f ms: %llu SIMD-group instructions, %llu "
        "lane-instructions\n",
        r.kernel.c_str(), std::string(device->name()).c_str(),
        SizeText(r.threads_per_grid).c_str(), SizeText(r.threadgroups).c_str(),
        SizeText(r.threads_per_threadgroup).c_str(), r.seconds * 1e3,
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
    code = error->code == CommandBufferErrorCode::kTimeout ? kExitTimeout
                                                           : kExitGpuFault;
  }
  // Expectations, when the run completed.
  if (code == kExitOk) {
    for (const auto& [spec, array] : expected) {
      const BoundBuffer& b = bound.at(spec.index);
      const auto* bytes = static_cast<const uint8_t*>(b.buffer->contents());
      Result<Comparison> c = CompareBuffer(
          b.type, std::span<const uint8_t>(bytes, b.buffer->length()), array,
          {options.rtol, options.atol});
      if (!c.ok()) {
        throw RunError("--expect " + std::to_string(spec.index) + "=" +
                       spec.path + ": " + c.error().message);
      }
      if (c.value().mismatches == 0) {
        if (!options.quiet) {
          std::printf("buffer(%d) matches %s (%llu elements)\n", spec.index,
                      spec.path.c_str(),
                      static_cast<unsigned long long>(c.value().elements));
        }
      } else {
        std::fprintf(stderr,
                     "mtlemu: error: buffer(%d) differs from %s in %llu of "
                     "%llu elements (rtol %g, atol %g):\n%s",
                     spec.index, spec.path.c_str(),
                     static_cast<unsigned long long>(c.value().mismatches),
                     static_cast<unsigned long long>(c.value().elements),
                     options.rtol, options.atol,
                     c.value().first_mismatches.c_str());
        code = kExitMismatch;
      }
    }
  }
  // Outputs are written whatever happened: what was computed is kept.
  for (const OutputSpec& out : outputs) {
    const BoundBuffer& b = bound.at(out.index);
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

int RunCommand(const RunOptions& options) {
  try {
    return Run(options);
  } catch (const RunError& e) {
    // Diagnostics ("file:line:col: error: ...") are printed as they are.
    std::string message = e.message();
    while (!message.empty() && message.back() == '\n') message.pop_back();
    if (message.find(": error: ") != std::string::npos) {
      std::fprintf(stderr, "%s\n", message.c_str());
    } else {
      std::fprintf(stderr, "mtlemu: error: %s\n", message.c_str());
    }
    return e.code();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "mtlemu: error: out of host memory\n");
    return kExitBadInput;
  }
}

}  // namespace mtlemu::cli
