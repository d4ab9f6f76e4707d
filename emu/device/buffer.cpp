#include "emu/device/buffer.h"

namespace mtlemu {

Buffer::Buffer(std::shared_ptr<emu::DeviceMemory> memory, uint64_t length)
    : memory_(std::move(memory)),
      // Rounded up to 16 bytes so vector accesses of the last element stay
      // in host memory; the mapped length is the exact one.
      bytes_((length + 15) & ~uint64_t{15}, 0),
      host_(bytes_.data()),
      length_(length),
      gpu_address_(
          memory_->Map(host_, length, reinterpret_cast<uint64_t>(this))),
      uninitialized_(true) {}

Buffer::Buffer(std::shared_ptr<emu::DeviceMemory> memory, void* bytes,
               uint64_t length)
    : memory_(std::move(memory)),
      host_(static_cast<uint8_t*>(bytes)),
      length_(length),
      gpu_address_(
          memory_->Map(host_, length, reinterpret_cast<uint64_t>(this))),
      uninitialized_(false) {}

Buffer::~Buffer() { memory_->Unmap(gpu_address_); }

std::vector<uint64_t>* Buffer::UninitializedTracking() {
  if (!uninitialized_) return nullptr;
  if (written_.empty()) written_.assign((length_ + 63) / 64, 0);
  return &written_;
}

}  // namespace mtlemu
