#include "emu/device/compute_pipeline_state.h"

#include <algorithm>

#include "emu/chips/chip.h"
#include "isa/occupancy.h"

namespace mtlemu {
namespace {

uint32_t MaxThreads(const isa::Kernel& kernel) {
  uint32_t limit = MetalLimits::kMaxThreadsPerThreadgroup;
  if (kernel.max_total_threads_per_threadgroup != 0) {
    limit = std::min(limit, kernel.max_total_threads_per_threadgroup);
  }
  if (kernel.registers > 0) {
    limit = std::min(limit, isa::MaxThreadsForRegisters(kernel.registers));
  }
  return limit;
}

// The buffer arguments whose address (uniform pair) some instruction reads.
std::vector<int> ActiveBuffers(const isa::Kernel& kernel) {
  std::vector<bool> read(static_cast<size_t>(kernel.uniforms), false);
  auto mark = [&](isa::OperandKind kind, int u) {
    if (kind == isa::OperandKind::kUniform && u >= 0 &&
        u < static_cast<int>(read.size())) {
      read[u] = true;
    }
  };
  for (const isa::Instruction& ins : kernel.code) {
    for (const isa::Operand& o : ins.operands) {
      mark(o.kind, o.reg);
      if (o.kind == isa::OperandKind::kMemory) {
        mark(o.mem.base_kind, o.mem.base);
      }
    }
  }
  std::vector<int> active;
  for (const isa::BufferArgument& b : kernel.buffers) {
    const bool low =
        b.uniform < static_cast<int>(read.size()) && read[b.uniform];
    const bool high =
        b.uniform + 1 < static_cast<int>(read.size()) && read[b.uniform + 1];
    if (low || high) active.push_back(b.index);
  }
  std::sort(active.begin(), active.end());
  return active;
}

}  // namespace

bool ComputePipelineState::isBufferActive(int index) const {
  return std::binary_search(active_buffers_.begin(), active_buffers_.end(),
                            index);
}

ComputePipelineState::ComputePipelineState(
    std::shared_ptr<const Function> function, emu::DecodedKernel decoded,
    std::shared_ptr<Buffer> constant_data, emu::Executor executor)
    : function_(std::move(function)),
      decoded_(std::move(decoded)),
      executor_(executor),
      max_threads_(MaxThreads(function_->kernel())),
      constant_data_(std::move(constant_data)),
      active_buffers_(ActiveBuffers(function_->kernel())) {}

const emu::DecodedKernel& ComputePipelineState::kernelFor(uint64_t work) const {
  if (executor_ != emu::Executor::kAuto || work < emu::kJitMinWork) {
    return decoded_;
  }
  std::call_once(compile_once_, [&] {
    // A copy, so that a dispatch running decoded_ meanwhile is untouched.
    auto compiled = std::make_unique<emu::DecodedKernel>(decoded_);
    emu::CompileRuns(*compiled, compiled->jit_note);
    compiled_ = std::move(compiled);
  });
  return *compiled_;
}

}  // namespace mtlemu
