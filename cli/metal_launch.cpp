// `mtlemu run` for Metal and ISA kernels: --buffer, --bytes and
// --threadgroup-memory by index, --grid in threads or --groups.
#include <fmt/format.h>

#include <cstdio>
#include <set>

#include "cli/compile_options.h"
#include "cli/kernel_file.h"
#include "cli/run_launch.h"

namespace mtlemu::cli {
namespace {

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
    const std::string origin = "--buffer '" + text + "'";
    Result<BufferData> read = LoadBufferData(spec.source);
    if (!read.ok()) throw RunError(origin + ": " + read.error().message);
    BufferData data = std::move(read).value();
    const bool from_npy = std::holds_alternative<NpyBuffer>(spec.source);
    CheckType(kernel, spec.index, data.type, origin,
              from_npy && data.type == isa::ScalarType::kUShort);
    const isa::BufferArgument* arg = FindArgument(kernel, spec.index);
    if (from_npy && arg && arg->element == isa::ScalarType::kBFloat) {
      data.type = isa::ScalarType::kBFloat;
    }
    bound.emplace(
        spec.index,
        MakeBoundBuffer(device, std::move(data),
                        fmt::format("buffer({})", spec.index), origin));
  }
  return bound;
}

}  // namespace

EncodedLaunch EncodeMetalLaunch(Device& device, ComputeCommandEncoder& encoder,
                                const RunOptions& options) {
  std::shared_ptr<Library> library = Unwrap(LoadLibrary(
      device, options.file, options.kernel,
      Unwrap(MakeCompileOptions(options.defines, options.include_directories,
                                options.no_fast_math, options.constants))));
  std::shared_ptr<Function> function =
      Unwrap(library->newFunction(options.kernel));
  const isa::Kernel& kernel = function->kernel();
  std::shared_ptr<ComputePipelineState> pipeline =
      Unwrap(device.newComputePipelineState(function));

  // Arguments.
  std::map<int, BoundBuffer> bound = MakeBuffers(device, kernel, options);
  encoder.setComputePipelineState(pipeline);
  for (auto& [index, b] : bound) Check(encoder.setBuffer(b.buffer, 0, index));
  std::set<int> bytes_given;
  for (const std::string& text : options.bytes) {
    BytesSpec spec = Unwrap(ParseBytesSpec(text));
    if (!bytes_given.insert(spec.index).second || bound.count(spec.index)) {
      throw RunError(
          fmt::format("--bytes '{}': buffer index {} is already "
                      "given",
                      text, spec.index));
    }
    const std::string origin = "--bytes '" + text + "'";
    const isa::BufferArgument* arg = FindArgument(kernel, spec.index);
    if (arg != nullptr && arg->element && isa::IsInteger(*arg->element) &&
        isa::IsInteger(spec.type) &&
        isa::SizeOf(spec.type) > isa::SizeOf(*arg->element)) {
      // A host's size_t into `constant uint&`, as real hosts pass it:
      // Metal's setBytes takes the bytes, and the kernel reads the first.
      std::fprintf(stderr,
                   "mtlemu: note: %s: kernel '%s' reads %s as %s, the first "
                   "%d of the %d bytes given (as setBytes does)\n",
                   origin.c_str(), kernel.name.c_str(),
                   ArgumentDescription(*arg).c_str(),
                   std::string(isa::MetalName(*arg->element)).c_str(),
                   isa::SizeOf(*arg->element), isa::SizeOf(spec.type));
    } else {
      CheckType(kernel, spec.index, spec.type, origin, false);
    }
    Check(encoder.setBytes(spec.bytes.data(), spec.bytes.size(), spec.index));
  }
  for (const std::string& text : options.threadgroup_memory) {
    ThreadgroupMemorySpec spec = Unwrap(ParseThreadgroupMemorySpec(text));
    Status s = encoder.setThreadgroupMemoryLength(spec.length, spec.index);
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
    Check(encoder.dispatchThreads(grid, threadgroup));
  } else {
    const MTLSize groups =
        ToMTLSize(Unwrap(ParseSize3("--groups", *options.groups)));
    Check(encoder.dispatchThreadgroups(groups, threadgroup));
  }

  EncodedLaunch launch;
  launch.kind = LaunchKind::kMetal;
  for (auto& [index, b] : bound) {
    launch.buffers.emplace(std::to_string(index), std::move(b));
  }
  return launch;
}

}  // namespace mtlemu::cli
