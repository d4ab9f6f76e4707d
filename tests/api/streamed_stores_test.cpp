// Compiled code streams the stores of whole SIMD groups into large buffers
// past the host's caches (emu/exec/streamed_stores.h). Those stores are
// weakly ordered on x86-64: these kernels check, against plain C++ loops,
// that what they write is all there after the dispatch, on two host
// threads, where the stores fill whole cache lines and where they do not,
// and that a threadgroup that learns through a device atomic that all the
// others are done sees everything they wrote.
#include "emu/exec/streamed_stores.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "api/library.h"
#include "emu/device/command_buffer.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"

namespace mtlemu {
namespace {

constexpr char kSource[] = R"(
#include <metal_stdlib>
using namespace metal;
kernel void scale(device const uint* in [[buffer(0)]],
                  device uint* out [[buffer(1)]],
                  constant uint& shift [[buffer(2)]],
                  uint i [[thread_position_in_grid]]) {
  out[i + shift] = in[i] * 3u + i;
}
// Each threadgroup writes its part, then counts itself done; the last one
// sums everything that every threadgroup wrote.
kernel void publish(device uint* out [[buffer(0)]],
                    device atomic_uint* done [[buffer(1)]],
                    device uint* total [[buffer(2)]],
                    uint i [[thread_position_in_grid]],
                    uint tid [[thread_position_in_threadgroup]],
                    uint groups [[threadgroups_per_grid]],
                    uint n [[threads_per_grid]]) {
  out[i] = i * 2654435761u;
  threadgroup_barrier(mem_flags::mem_device);
  threadgroup bool last;
  if (tid == 0) {
    last = atomic_fetch_add_explicit(done, 1u, memory_order_relaxed) ==
           groups - 1;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (last && tid == 0) {
    uint s = 0;
    for (uint k = 0; k < n; ++k) s += out[k];
    *total = s;
  }
}
)";

class StreamedStoresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = Device::Create("m1").value();
    device_->options().executor = emu::Executor::kJit;
    device_->options().host_threads = 2;
    auto library = api::newLibraryWithSource(*device_, kSource, {}, "s.metal");
    ASSERT_TRUE(library.ok()) << library.error().message;
    library_ = library.value();
  }

  // Runs `kernel` over `threads` threads in groups of 256 with `buffers`.
  void Run(const std::string& kernel, uint64_t threads,
           const std::vector<std::shared_ptr<Buffer>>& buffers) {
    auto pipeline =
        device_->newComputePipelineState(library_->newFunction(kernel).value());
    ASSERT_TRUE(pipeline.ok()) << pipeline.error().message;
    auto commands = device_->newCommandQueue()->commandBuffer();
    auto encoder = commands->computeCommandEncoder();
    encoder->setComputePipelineState(pipeline.value());
    for (size_t b = 0; b < buffers.size(); ++b) {
      ASSERT_TRUE(encoder->setBuffer(buffers[b], 0, static_cast<int>(b)).ok());
    }
    ASSERT_TRUE(encoder->dispatchThreads({threads, 1, 1}, {256, 1, 1}).ok());
    commands->commit();
    ASSERT_EQ(commands->error(), nullptr) << commands->error()->message;
    ASSERT_EQ(commands->dispatches()[0].executor_note, "");
  }

  std::shared_ptr<Buffer> Words(const std::vector<uint32_t>& words) {
    return device_->newBuffer(words.data(), words.size() * 4).value();
  }

  std::shared_ptr<Device> device_;
  std::shared_ptr<Library> library_;
};

// 3M words and a partial last threadgroup: 12 MB, a buffer long enough
// to stream into; shifted by 0 words (every SIMD group's 128 bytes start a
// cache line), 8 (half of them do) and 5 (none does).
TEST_F(StreamedStoresTest, EveryWordIsThereAfterTheDispatch) {
  const uint64_t n = (uint64_t{3} << 20) + 17;
  ASSERT_GE(n * 4, emu::kStreamedStoreMinLength);
  std::vector<uint32_t> in(n);
  for (uint64_t i = 0; i < n; ++i) in[i] = static_cast<uint32_t>(i * 7919u);
  for (uint32_t shift : {0u, 8u, 5u}) {
    auto out = Words(std::vector<uint32_t>(n + shift, 0xdeadbeefu));
    Run("scale", n, {Words(in), out, Words({shift})});
    const auto* got = static_cast<const uint32_t*>(out->contents());
    uint64_t wrong = 0;
    for (uint64_t i = 0; i < shift; ++i) wrong += got[i] != 0xdeadbeefu;
    for (uint64_t i = 0; i < n; ++i) {
      wrong += got[i + shift] != in[i] * 3u + static_cast<uint32_t>(i);
    }
    EXPECT_EQ(wrong, 0u) << "shift " << shift;
  }
}

TEST_F(StreamedStoresTest, AnAtomicPublishesWhatWasStreamedBeforeIt) {
  const uint64_t n = uint64_t{3} << 20;
  uint32_t expected = 0;
  for (uint64_t i = 0; i < n; ++i) {
    expected += static_cast<uint32_t>(i) * 2654435761u;
  }
  for (int round = 0; round < 3; ++round) {
    auto out = Words(std::vector<uint32_t>(n, 0));
    auto total = Words({0});
    Run("publish", n, {out, Words({0}), total});
    EXPECT_EQ(*static_cast<const uint32_t*>(total->contents()), expected)
        << "round " << round;
  }
}

}  // namespace
}  // namespace mtlemu
