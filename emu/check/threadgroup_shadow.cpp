#include "emu/check/threadgroup_shadow.h"

namespace mtlemu::emu {

void ThreadgroupShadow::StartThreadgroup(uint32_t length, uint32_t simdgroups) {
  // Cells keep their old contents: they count only where their interval or
  // threadgroup matches the current one (and quiet keys where their
  // generation does).
  const uint32_t words = (length + 3) / 4;
  if (words_.size() < words) {
    words_.resize(words);
    quiet_.resize(words);
    bytes_.resize(static_cast<size_t>(words) * 4);
  }
  simd_epochs_.assign(simdgroups, 0);
  threadgroup_start_ = ++interval_;
  NextGeneration();
}

}  // namespace mtlemu::emu
