// Runs ISA kernels through the public host API for tests: assemble, bind,
// dispatch, read back. Every step that can fail returns a Status the test
// asserts on, so a broken kernel is a test failure with its message.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "emu/device/command_buffer.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"

namespace mtlemu::testing {

class KernelHarness {
 public:
  // Assembles `isa_text` and makes a pipeline for `kernel` (the first
  // kernel when empty). Check status() before anything else.
  explicit KernelHarness(std::string_view isa_text, std::string kernel = "",
                         std::string_view chip = "m1", int host_threads = 0);
  // The same from a module built elsewhere (the MSL compiler's output).
  explicit KernelHarness(Result<isa::Module> module, std::string kernel = "",
                         std::string_view chip = "m1", int host_threads = 0);

  const Status& status() const { return status_; }
  Device& device() { return *device_; }
  const ComputePipelineState& pipeline() const { return *pipeline_; }

  template <class T>
  void SetBuffer(int index, const std::vector<T>& data) {
    SetBufferBytes(index, data.data(), data.size() * sizeof(T));
  }
  void SetBufferBytes(int index, const void* data, size_t size);
  // A buffer over the caller's `size` bytes at `data`
  // (newBufferWithBytesNoCopy): the kernel works on them in place.
  void SetBufferNoCopy(int index, void* data, size_t size);
  // The buffer bound at `bound` at `index` too (setBuffer of one MTLBuffer
  // twice: llama.cpp binds src0 where a kernel's optional input is absent,
  // and the kernel compares the pointers).
  void SetSameBuffer(int index, int bound);
  template <class T>
  void SetBytes(int index, const T& value) {
    SetBytesRaw(index, &value, sizeof(T));
  }
  void SetBytesRaw(int index, const void* data, size_t size);
  // setBytes of a whole array (MLX's set_vector_bytes: shapes, strides).
  template <class T>
  void SetVectorBytes(int index, const std::vector<T>& values) {
    SetBytesRaw(index, values.data(), values.size() * sizeof(T));
  }
  Status SetThreadgroupMemoryLength(uint64_t length, int index);

  // Encode and commit one dispatch. A validation failure comes back here; a
  // fault during the run is in error().
  Status DispatchThreads(MTLSize grid, MTLSize threadgroup);
  Status DispatchThreadgroups(MTLSize groups, MTLSize threadgroup);
  const CommandBufferError* error() const;
  const DispatchReport* report() const;

  template <class T>
  std::vector<T> Read(int index) const {
    const Buffer& b = *buffers_.at(index);
    std::vector<T> out(b.length() / sizeof(T));
    std::memcpy(out.data(), b.contents(), out.size() * sizeof(T));
    return out;
  }

 private:
  void Init(Result<std::shared_ptr<Library>> library, std::string kernel,
            std::string_view chip, int host_threads);
  Status Dispatch(bool threads, MTLSize size, MTLSize threadgroup);

  Status status_;
  std::shared_ptr<Device> device_;
  std::shared_ptr<ComputePipelineState> pipeline_;
  std::map<int, std::shared_ptr<Buffer>> buffers_;
  std::map<int, std::vector<uint8_t>> bytes_;
  std::map<int, uint64_t> threadgroup_lengths_;
  std::shared_ptr<CommandBuffer> last_;
};

// Checks that a dispatch of `h` (its Status `s`) succeeded and ran without a
// fault.
::testing::AssertionResult RanOk(const KernelHarness& h, const Status& s);
// Checks that `h` assembled and that dispatching `grid` threads in
// threadgroups of `group` ran without a fault; the failure says which.
::testing::AssertionResult Runs(KernelHarness& h, MTLSize grid, MTLSize group);
// The same for `groups` threadgroups (dispatchThreadgroups).
::testing::AssertionResult RunsThreadgroups(KernelHarness& h, MTLSize groups,
                                            MTLSize group);

}  // namespace mtlemu::testing
