#include "emu/device/compute_pipeline_state.h"

#include <algorithm>

#include "emu/chips/chip.h"

namespace mtlemu {
namespace {

// Register file bytes per core on Apple7/Apple8 (Mesa agx_occupancy.c
// table: 104 half-registers per thread still allow 1024 threads).
constexpr uint32_t kRegisterFileBytes = 1024 * 208;

uint32_t MaxThreads(const isa::Kernel& kernel) {
  uint32_t limit = MetalLimits::kMaxThreadsPerThreadgroup;
  if (kernel.max_total_threads_per_threadgroup != 0) {
    limit = std::min(limit, kernel.max_total_threads_per_threadgroup);
  }
  if (kernel.registers > 0) {
    const uint32_t by_registers =
        kRegisterFileBytes / (static_cast<uint32_t>(kernel.registers) * 4);
    limit = std::min(limit, std::max<uint32_t>(64, by_registers / 64 * 64));
  }
  return limit;
}

}  // namespace

ComputePipelineState::ComputePipelineState(
    std::shared_ptr<const Function> function, emu::DecodedKernel decoded,
    std::shared_ptr<Buffer> constant_data)
    : function_(std::move(function)),
      decoded_(std::move(decoded)),
      max_threads_(MaxThreads(function_->kernel())),
      constant_data_(std::move(constant_data)) {}

}  // namespace mtlemu
