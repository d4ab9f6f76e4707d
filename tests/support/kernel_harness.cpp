#include "tests/support/kernel_harness.h"

namespace mtlemu::testing {

KernelHarness::KernelHarness(std::string_view isa_text, std::string kernel,
                             std::string_view chip, int host_threads) {
  Result<std::shared_ptr<Device>> device = Device::Create(chip);
  if (!device.ok()) {
    status_ = device.error();
    return;
  }
  device_ = device.value();
  Init(device_->newLibraryWithISA(isa_text, "test.s"), std::move(kernel), chip,
       host_threads);
}

KernelHarness::KernelHarness(Result<isa::Module> module, std::string kernel,
                             std::string_view chip, int host_threads) {
  if (!module.ok()) {
    status_ = module.error();
    return;
  }
  Result<std::shared_ptr<Device>> device = Device::Create(chip);
  if (!device.ok()) {
    status_ = device.error();
    return;
  }
  device_ = device.value();
  Init(device_->newLibraryWithModule(std::move(module).value()),
       std::move(kernel), chip, host_threads);
}

void KernelHarness::Init(Result<std::shared_ptr<Library>> library,
                         std::string kernel, std::string_view,
                         int host_threads) {
  device_->options().host_threads = host_threads;
  if (!library.ok()) {
    status_ = library.error();
    return;
  }
  if (const std::vector<std::string> names = library.value()->functionNames();
      kernel.empty() && !names.empty()) {
    kernel = names[0];
  }
  Result<std::shared_ptr<Function>> function =
      library.value()->newFunction(kernel);
  if (!function.ok()) {
    status_ = function.error();
    return;
  }
  Result<std::shared_ptr<ComputePipelineState>> pipeline =
      device_->newComputePipelineState(function.value());
  if (!pipeline.ok()) {
    status_ = pipeline.error();
    return;
  }
  pipeline_ = pipeline.value();
}

void KernelHarness::SetBufferBytes(int index, const void* data, size_t size) {
  if (!status_.ok()) return;  // Runs() and Dispatch*() report the error
  Result<std::shared_ptr<Buffer>> b = device_->newBuffer(data, size);
  if (b.ok()) buffers_[index] = b.value();
}

void KernelHarness::SetSameBuffer(int index, int bound) {
  if (!status_.ok()) return;
  if (auto it = buffers_.find(bound); it != buffers_.end()) {
    buffers_[index] = it->second;
  }
}

void KernelHarness::SetBufferNoCopy(int index, void* data, size_t size) {
  if (!status_.ok()) return;
  Result<std::shared_ptr<Buffer>> b =
      device_->newBufferWithBytesNoCopy(data, size);
  if (b.ok()) buffers_[index] = b.value();
}

void KernelHarness::SetBytesRaw(int index, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  bytes_[index] = std::vector<uint8_t>(p, p + size);
}

Status KernelHarness::SetThreadgroupMemoryLength(uint64_t length, int index) {
  threadgroup_lengths_[index] = length;
  return {};
}

Status KernelHarness::Dispatch(bool threads, MTLSize size,
                               MTLSize threadgroup) {
  if (!status_.ok()) return status_;
  last_ = device_->newCommandQueue()->commandBuffer();
  std::shared_ptr<ComputeCommandEncoder> encoder =
      last_->computeCommandEncoder();
  encoder->setComputePipelineState(pipeline_);
  for (auto& [index, buffer] : buffers_) {
    if (Status s = encoder->setBuffer(buffer, 0, index); !s.ok()) return s;
  }
  for (auto& [index, bytes] : bytes_) {
    if (Status s = encoder->setBytes(bytes.data(), bytes.size(), index);
        !s.ok()) {
      return s;
    }
  }
  for (auto& [index, length] : threadgroup_lengths_) {
    if (Status s = encoder->setThreadgroupMemoryLength(length, index);
        !s.ok()) {
      return s;
    }
  }
  Status s = threads ? encoder->dispatchThreads(size, threadgroup)
                     : encoder->dispatchThreadgroups(size, threadgroup);
  if (!s.ok()) return s;
  encoder->endEncoding();
  last_->commit();
  last_->waitUntilCompleted();
  return {};
}

Status KernelHarness::DispatchThreads(MTLSize grid, MTLSize threadgroup) {
  return Dispatch(true, grid, threadgroup);
}

Status KernelHarness::DispatchThreadgroups(MTLSize groups,
                                           MTLSize threadgroup) {
  return Dispatch(false, groups, threadgroup);
}

const CommandBufferError* KernelHarness::error() const {
  return last_ ? last_->error() : nullptr;
}

const DispatchReport* KernelHarness::report() const {
  return last_ && !last_->dispatches().empty() ? &last_->dispatches().back()
                                               : nullptr;
}

::testing::AssertionResult RanOk(const KernelHarness& h, const Status& s) {
  if (!s.ok()) return ::testing::AssertionFailure() << s.error().message;
  if (h.error() != nullptr) {
    return ::testing::AssertionFailure() << h.error()->message;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Runs(KernelHarness& h, MTLSize grid, MTLSize group) {
  if (!h.status().ok()) {
    return ::testing::AssertionFailure() << h.status().error().message;
  }
  return RanOk(h, h.DispatchThreads(grid, group));
}

::testing::AssertionResult RunsThreadgroups(KernelHarness& h, MTLSize groups,
                                            MTLSize group) {
  if (!h.status().ok()) {
    return ::testing::AssertionFailure() << h.status().error().message;
  }
  return RanOk(h, h.DispatchThreadgroups(groups, group));
}

}  // namespace mtlemu::testing
