#include "emu/device/buffer.h"

#include <cstring>
#include <new>

namespace mtlemu {
namespace {

constexpr std::align_val_t kPageAlignment{4096};

// Zeroed bytes, rounded up to 16 so vector accesses of the last element
// stay in host memory (the mapped length is the exact one).
uint8_t* NewBytes(uint64_t length) {
  const uint64_t size = (length + 15) & ~uint64_t{15};
  auto* p = static_cast<uint8_t*>(::operator new(size, kPageAlignment));
  std::memset(p, 0, size);
  return p;
}

}  // namespace

void Buffer::AlignedDelete::operator()(uint8_t* p) const {
  ::operator delete(p, kPageAlignment);
}

Buffer::Buffer(std::shared_ptr<emu::DeviceMemory> memory, uint64_t length)
    : memory_(std::move(memory)),
      bytes_(NewBytes(length)),
      host_(bytes_.get()),
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
