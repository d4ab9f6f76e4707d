// The Apple GPUs mtlemu emulates, as data (chips.def), and Metal's compute
// limits, which are the same on Apple7, Apple8 and Apple9 (Metal Feature Set
// Tables).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace mtlemu {

struct ChipSpec {
  std::string_view name;            // "m2-max": what --chip takes
  std::string_view marketing_name;  // "Apple M2 Max"
  std::string_view gpu_family;      // "Apple8"
  int gpu_cores;
  int clock_mhz;
};

// Metal's limits for compute on Apple7..Apple9 GPUs.
struct MetalLimits {
  static constexpr uint32_t kMaxThreadsPerThreadgroup = 1024;
  static constexpr uint32_t kMaxThreadgroupMemoryLength = 32768;
  static constexpr uint32_t kThreadgroupMemoryAlignment = 16;
  static constexpr int kMaxBufferArguments = 31;
  static constexpr uint32_t kMaxSetBytesLength = 4096;
  static constexpr uint32_t kThreadExecutionWidth = 32;
  static constexpr uint64_t kMaxBufferLength = 1ull << 36;  // 64 GiB
};

std::span<const ChipSpec> AllChips();
// Accepts "m1", "M1", "m1-max", "m1_max", "m1max", "m1 max".
std::optional<ChipSpec> FindChip(std::string_view name);

}  // namespace mtlemu
