#include "emu/device/device.h"

#include <cstdlib>
#include <cstring>

#include "emu/device/command_buffer.h"
#include "isa/assembler.h"
#include "isa/verifier.h"

namespace mtlemu {

Result<std::shared_ptr<Device>> Device::Create(std::string_view chip) {
  const std::optional<ChipSpec> spec = FindChip(chip);
  if (!spec) {
    std::string known;
    for (const ChipSpec& c : AllChips()) {
      known += (known.empty() ? "" : ", ") + std::string(c.name);
    }
    return Error{"unknown chip '" + std::string(chip) + "' (known: " + known +
                 ")"};
  }
  auto device = std::make_shared<Device>(*spec);
  if (const char* executor = std::getenv("MTLEMU_EXECUTOR")) {
    const std::string_view e = executor;
    if (const auto parsed = emu::ParseExecutor(e)) {
      device->options().executor = *parsed;
    } else if (!e.empty()) {
      return Error{"MTLEMU_EXECUTOR is '" + std::string(e) +
                   "': it takes auto, interpreter or jit"};
    }
  }
  return device;
}

Device::Device(const ChipSpec& chip)
    : chip_(chip),
      timing_(*FindChipTiming(chip.name)),
      memory_(std::make_shared<emu::DeviceMemory>()) {}

namespace {

Status CheckBufferLength(uint64_t length) {
  if (length > MetalLimits::kMaxBufferLength) {
    return Error{"buffer length " + std::to_string(length) +
                 " exceeds the device's maxBufferLength (" +
                 std::to_string(MetalLimits::kMaxBufferLength) + ")"};
  }
  return {};
}

}  // namespace

Result<std::shared_ptr<Buffer>> Device::newBuffer(uint64_t length) {
  if (Status s = CheckBufferLength(length); !s.ok()) return s.error();
  return std::make_shared<Buffer>(memory_, length);
}

Result<std::shared_ptr<Buffer>> Device::newBuffer(const void* bytes,
                                                  uint64_t length) {
  Result<std::shared_ptr<Buffer>> buffer = newBuffer(length);
  if (buffer.ok() && length > 0) {
    std::memcpy(buffer.value()->contents(), bytes, length);
  }
  return buffer;
}

Result<std::shared_ptr<Buffer>> Device::newBufferWithBytesNoCopy(
    void* bytes, uint64_t length) {
  if (Status s = CheckBufferLength(length); !s.ok()) return s.error();
  if (bytes == nullptr && length > 0) {
    return Error{"newBufferWithBytesNoCopy: no memory given"};
  }
  return std::make_shared<Buffer>(memory_, bytes, length);
}

Result<std::shared_ptr<Library>> Device::newLibraryWithISA(
    std::string_view text, std::string_view file) {
  isa::AssembleResult assembled = isa::Assemble(text, file);
  if (!assembled.ok()) {
    return Error{isa::FormatDiagnostics(assembled.diagnostics)};
  }
  return newLibraryWithModule(std::move(assembled.module));
}

Result<std::shared_ptr<Library>> Device::newLibraryWithModule(
    isa::Module module) {
  const isa::Diagnostics problems = isa::Verify(module);
  if (!problems.empty()) return Error{isa::FormatDiagnostics(problems)};
  return std::make_shared<Library>(std::move(module));
}

Result<std::shared_ptr<ComputePipelineState>> Device::newComputePipelineState(
    std::shared_ptr<const Function> function) {
  emu::DecodedKernel decoded;
  std::string error;
  if (!emu::DecodeKernel(function->kernel(), decoded, error)) {
    return Error{"kernel '" + function->name() + "': " + error};
  }
  if (options_.executor == emu::Executor::kJit) {
    // A compile that fails leaves the kernel to the interpreter.
    emu::CompileRuns(decoded, decoded.jit_note);
  }
  const isa::Kernel& kernel = function->kernel();
  // A kernel may declare more than a device has (Metal's compiler builds
  // it; MLX's float32 attention with 256-wide heads declares 53,760
  // bytes): the pipeline is what fails.
  if (kernel.static_threadgroup_memory >
      MetalLimits::kMaxThreadgroupMemoryLength) {
    return Error{"kernel '" + function->name() + "' declares " +
                 std::to_string(kernel.static_threadgroup_memory) +
                 " bytes of threadgroup memory, over "
                 "maxThreadgroupMemoryLength (32768 bytes)"};
  }
  std::shared_ptr<Buffer> constant_data;
  if (kernel.constant_data_uniform >= 0) {
    Result<std::shared_ptr<Buffer>> buffer =
        newBuffer(kernel.constant_data.data(), kernel.constant_data.size());
    if (!buffer.ok()) {
      return Error{"kernel '" + function->name() +
                   "': constant data: " + buffer.error().message};
    }
    constant_data = std::move(buffer).value();
    constant_data->setLabel("constant data of kernel " + kernel.name);
  }
  return std::make_shared<ComputePipelineState>(
      std::move(function), std::move(decoded), std::move(constant_data),
      options_.executor);
}

std::shared_ptr<CommandQueue> Device::newCommandQueue() {
  return std::make_shared<CommandQueue>(shared_from_this());
}

}  // namespace mtlemu
