#include "emu/device/buffer.h"

#include <sys/mman.h>

#include <cstring>
#include <new>

namespace mtlemu {
namespace {

constexpr uint64_t kPage = 4096;
// Linux's transparent huge pages on x86-64: a buffer at least twice this
// long is aligned to it and asks for them, so that a kernel streaming
// through it misses the TLB 512 times less often (a large elementwise
// kernel ran 10 % faster).
constexpr uint64_t kHugePage = uint64_t{2} << 20;

std::align_val_t AlignmentFor(uint64_t size) {
  return std::align_val_t{size >= 2 * kHugePage ? kHugePage : kPage};
}

// The bytes allocated for `length`: rounded up to 16 so vector accesses of
// the last element stay in host memory (the mapped length is the exact
// one).
uint64_t AllocatedSize(uint64_t length) {
  return (length + 15) & ~uint64_t{15};
}

// `size` zeroed bytes, freed when the last owner goes.
std::shared_ptr<uint8_t> NewBytes(uint64_t size) {
  const std::align_val_t alignment = AlignmentFor(size);
  auto* p = static_cast<uint8_t*>(::operator new(size, alignment));
#if defined(MADV_HUGEPAGE)
  if (alignment == std::align_val_t{kHugePage}) {
    // Advice only: where the system has no huge pages, nothing changes.
    madvise(p, size & ~(kHugePage - 1), MADV_HUGEPAGE);
  }
#endif
  std::memset(p, 0, size);
  return std::shared_ptr<uint8_t>(
      p, [alignment](uint8_t* q) { ::operator delete(q, alignment); });
}

}  // namespace

Buffer::Buffer(std::shared_ptr<emu::DeviceMemory> memory, uint64_t length)
    : memory_(std::move(memory)),
      bytes_(NewBytes(AllocatedSize(length))),
      host_(bytes_.get()),
      length_(length),
      gpu_address_(memory_->Map(host_, length, reinterpret_cast<uint64_t>(this),
                                bytes_)),
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
