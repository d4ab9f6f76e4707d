#include "emu/check/threadgroup_shadow.h"

namespace mtlemu::emu {

void ThreadgroupShadow::StartThreadgroup(uint32_t length) {
  // Cells keep their old contents: they count only where their interval or
  // threadgroup matches the current one.
  const uint32_t words = (length + 3) / 4;
  if (words_.size() < words) {
    words_.resize(words);
    bytes_.resize(static_cast<size_t>(words) * 4);
  }
  threadgroup_start_ = ++interval_;
}

}  // namespace mtlemu::emu
