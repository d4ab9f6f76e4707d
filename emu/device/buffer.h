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

  // The host's view of the bytes. Taking it counts as the host writing
  // every byte, for the init check (below).
  void* contents() {
    uninitialized_ = false;
    written_.clear();
    return host_;
  }
  const void* contents() const { return host_; }
  uint64_t length() const { return length_; }
  uint64_t gpuAddress() const { return gpu_address_; }
  const std::string& label() const { return label_; }
  void setLabel(std::string label) { label_ = std::move(label); }

  // The init check (EmulatorOptions::checks.init): a buffer made with a
  // length only (Device::newBuffer(length)) holds nothing defined until the
  // host takes contents() or a kernel writes it, byte by byte. Returns one
  // bit per byte, set where written, or null once every byte counts as
  // written.
  std::vector<uint64_t>* UninitializedTracking();

 private:
  // Storage the buffer owns (null when the memory is the caller's), on a
  // page of its own as a Metal buffer's contents are: the kernels' SIMD
  // group accesses then never split a host cache line needlessly. Large
  // ones are on huge pages (buffer.cpp). Shared with the address maps that
  // dispatches hold (emu/memory/address_map.h), so that a dispatch running
  // on another thread never reads freed memory.
  std::shared_ptr<emu::DeviceMemory> memory_;
  std::shared_ptr<uint8_t> bytes_;
  uint8_t* host_;
  uint64_t length_;
  uint64_t gpu_address_;
  std::string label_;
  bool uninitialized_;             // made with a length only, not yet
                                   // given to the host
  std::vector<uint64_t> written_;  // with uninitialized_: bit per byte
};

}  // namespace mtlemu
