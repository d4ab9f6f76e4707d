// MTLBuffer: bytes the host and the kernels share, mapped at a GPU virtual
// address in the device's address space.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emu/memory/device_memory.h"

namespace mtlemu {

class Buffer {
 public:
  // Use Device::newBuffer.
  Buffer(std::shared_ptr<emu::DeviceMemory> memory, uint64_t length);
  // Use Device::newBufferWithBytesNoCopy: `bytes` stays the caller's.
  Buffer(std::shared_ptr<emu::DeviceMemory> memory, void* bytes,
         uint64_t length);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* contents() { return host_; }
  const void* contents() const { return host_; }
  uint64_t length() const { return length_; }
  uint64_t gpuAddress() const { return gpu_address_; }
  const std::string& label() const { return label_; }
  void setLabel(std::string label) { label_ = std::move(label); }

 private:
  std::shared_ptr<emu::DeviceMemory> memory_;
  std::vector<uint8_t> bytes_;  // empty when the memory is the caller's
  uint8_t* host_;
  uint64_t length_;
  uint64_t gpu_address_;
  std::string label_;
};

}  // namespace mtlemu
