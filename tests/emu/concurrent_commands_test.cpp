// Several host threads encoding and committing command buffers on one
// Device at once, each with its own settings (host threads, timed mode,
// kernel checks, interrupt flag), while others make and release buffers:
// every dispatch gets its own results (checked against plain C++ loops),
// its own reports, and the cycle counts it gets alone. Run under
// ThreadSanitizer in CI (scripts/sanitize.sh).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "emu/device/command_buffer.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"
#include "emu/memory/device_memory.h"
#include "tests/support/test_kernels.h"

namespace mtlemu {
namespace {

// With examples/vector_add.s, and test_kernels.h's reverse and spin.
constexpr char kKernels[] = R"(
.kernel count
.buffer 0 u0 device uint total
    atomic_add.device.u32 r1, [u0], 1
    exit
.end

; Its SIMD groups race for one word; one threadgroup, so that the emulator
; itself (one host thread a threadgroup) has no race for TSan to see.
.kernel racy
.buffer 0 u0 device uint out
    mov.u32 r0, %thread_position_in_grid.x
    st.device.u32 [u0], r0
    exit
.end

)";

class ConcurrentCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::shared_ptr<Device>> d = Device::Create("m1");
    ASSERT_TRUE(d.ok()) << d.error().message;
    device_ = d.value();
    std::ifstream example(std::string(MTLEMU_SOURCE_DIR) +
                          "/examples/vector_add.s");
    std::stringstream text;
    text << example.rdbuf() << testing::kReverseIsa << testing::kSpinIsa
         << kKernels;
    Result<std::shared_ptr<Library>> library =
        device_->newLibraryWithISA(text.str(), "kernels.s");
    ASSERT_TRUE(library.ok()) << library.error().message;
    for (const char* name :
         {"vector_add", "reverse", "count", "racy", "spin"}) {
      Result<std::shared_ptr<Function>> f = library.value()->newFunction(name);
      ASSERT_TRUE(f.ok()) << f.error().message;
      Result<std::shared_ptr<ComputePipelineState>> p =
          device_->newComputePipelineState(f.value());
      ASSERT_TRUE(p.ok()) << p.error().message;
      pipelines_[name] = p.value();
    }
  }

  std::shared_ptr<Buffer> NewBuffer(const void* bytes, size_t size) {
    Result<std::shared_ptr<Buffer>> b = device_->newBuffer(bytes, size);
    EXPECT_TRUE(b.ok()) << b.error().message;
    return b.ok() ? b.value() : nullptr;
  }

  // One dispatch of `kernel` over `threads` threads in threadgroups of
  // `group`, with `buffers` at 0, 1, ...; its command buffer, committed.
  std::shared_ptr<CommandBuffer> Run(
      const std::string& kernel,
      const std::vector<std::shared_ptr<Buffer>>& buffers, uint64_t threads,
      uint64_t group, const EmulatorOptions& options) {
    CommandBufferDescriptor descriptor;
    descriptor.options = options;
    auto commands =
        device_->newCommandQueue()->commandBufferWithDescriptor(descriptor);
    auto encoder = commands->computeCommandEncoder();
    encoder->setComputePipelineState(pipelines_.at(kernel));
    for (size_t i = 0; i < buffers.size(); ++i) {
      EXPECT_TRUE(encoder->setBuffer(buffers[i], 0, static_cast<int>(i)).ok());
    }
    EXPECT_TRUE(encoder->dispatchThreads({threads, 1, 1}, {group, 1, 1}).ok());
    encoder->endEncoding();
    commands->commit();
    return commands;
  }

  // The reverse kernel over 4096 floats; out holds the result.
  std::shared_ptr<CommandBuffer> Reverse(std::vector<float>* out,
                                         const EmulatorOptions& options) {
    constexpr uint32_t n = 4096;
    std::vector<float> in(n);
    for (uint32_t i = 0; i < n; ++i) in[i] = static_cast<float>(i) * 0.25f;
    auto input = NewBuffer(in.data(), n * 4);
    auto output = NewBuffer(in.data(), n * 4);
    auto commands = Run("reverse", {input, output}, n, 256, options);
    out->resize(n);
    std::memcpy(out->data(), output->contents(), n * 4);
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t from = i / 256 * 256 + (255 - i % 256);
      if ((*out)[i] != in[from]) {
        ADD_FAILURE() << "reverse: out[" << i << "] = " << (*out)[i];
        break;
      }
    }
    return commands;
  }

  std::shared_ptr<Device> device_;
  std::map<std::string, std::shared_ptr<ComputePipelineState>> pipelines_;
};

TEST_F(ConcurrentCommandsTest, EachCommandBufferRunsWithItsOwnSettings) {
  constexpr int kLaunches = 12;
  // The timed reverse alone first: the same cycles are expected under load.
  EmulatorOptions timed;
  timed.timing = true;
  timed.host_threads = 2;
  std::vector<float> scratch;
  auto alone = Reverse(&scratch, timed);
  ASSERT_EQ(alone->error(), nullptr);
  ASSERT_NE(alone->dispatches().at(0).timing, nullptr);
  const uint64_t cycles = alone->dispatches().at(0).timing->cycles;
  ASSERT_GT(cycles, 0u);

  std::atomic<int> finished{0};
  std::vector<std::thread> threads;
  // Functional vector adds of random sizes, on one or two host threads,
  // with buffers made for each launch (mapped while others run).
  for (int seed = 1; seed <= 2; ++seed) {
    threads.emplace_back([&, seed] {
      std::mt19937 rng(seed);
      EmulatorOptions options;
      options.host_threads = seed;
      for (int i = 0; i < kLaunches; ++i) {
        const uint32_t n = 1 + rng() % 20000;
        std::vector<float> a(n), b(n);
        for (uint32_t j = 0; j < n; ++j) {
          a[j] = static_cast<float>(rng() % 1000) * 0.5f;
          b[j] = static_cast<float>(rng() % 1000) * 0.25f;
        }
        std::vector<float> out(n, -1.0f);
        auto bufs = std::vector<std::shared_ptr<Buffer>>{
            NewBuffer(a.data(), n * 4), NewBuffer(b.data(), n * 4),
            device_->newBufferWithBytesNoCopy(out.data(), n * 4).value(),
            NewBuffer(&n, 4)};
        auto commands = Run("vector_add", bufs, n, 256, options);
        ASSERT_EQ(commands->error(), nullptr) << commands->error()->message;
        EXPECT_EQ(commands->dispatches().at(0).timing, nullptr);
        EXPECT_EQ(commands->dispatches().at(0).check, nullptr);
        for (uint32_t j = 0; j < n; ++j) {
          ASSERT_EQ(out[j], a[j] + b[j]) << "launch " << i << ", n " << n;
        }
      }
      ++finished;
    });
  }
  // Timed, with a barrier: the cycles it had alone.
  threads.emplace_back([&] {
    for (int i = 0; i < kLaunches / 2; ++i) {
      std::vector<float> out;
      auto commands = Reverse(&out, timed);
      ASSERT_EQ(commands->error(), nullptr) << commands->error()->message;
      ASSERT_NE(commands->dispatches().at(0).timing, nullptr);
      EXPECT_EQ(commands->dispatches().at(0).timing->cycles, cycles);
    }
    ++finished;
  });
  // Under the race check: the racy kernel's finding every time.
  threads.emplace_back([&] {
    EmulatorOptions checked;
    checked.checks.race = true;
    for (int i = 0; i < kLaunches; ++i) {
      uint32_t zero = 0;
      auto commands = Run("racy", {NewBuffer(&zero, 4)}, 128, 128, checked);
      ASSERT_EQ(commands->error(), nullptr) << commands->error()->message;
      const auto& check = commands->dispatches().at(0).check;
      ASSERT_NE(check, nullptr);
      EXPECT_FALSE(check->findings.empty());
    }
    ++finished;
  });
  // The same kernel unchecked meanwhile: no checks, no findings.
  threads.emplace_back([&] {
    for (int i = 0; i < kLaunches; ++i) {
      uint32_t zero = 0;
      auto out = NewBuffer(&zero, 4);
      auto commands = Run("racy", {out}, 128, 128, EmulatorOptions{});
      ASSERT_EQ(commands->error(), nullptr) << commands->error()->message;
      EXPECT_EQ(commands->dispatches().at(0).check, nullptr);
      EXPECT_LT(*static_cast<const uint32_t*>(out->contents()), 128u);
    }
    ++finished;
  });
  // Device atomics: every thread counted once.
  threads.emplace_back([&] {
    for (int i = 0; i < kLaunches; ++i) {
      uint32_t zero = 0;
      auto total = NewBuffer(&zero, 4);
      const uint64_t n = 1000 + 37 * i;
      auto commands = Run("count", {total}, n, 128, EmulatorOptions{});
      ASSERT_EQ(commands->error(), nullptr) << commands->error()->message;
      EXPECT_EQ(*static_cast<const uint32_t*>(total->contents()), n);
    }
    ++finished;
  });
  // A launch that never ends, stopped by its own flag: only it.
  threads.emplace_back([&] {
    for (int i = 0; i < 3; ++i) {
      EmulatorOptions options;
      options.interrupt = std::make_shared<std::atomic<bool>>(false);
      std::thread stopper([flag = options.interrupt] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        flag->store(true);
      });
      int32_t zero = 0;
      auto commands = Run("spin", {NewBuffer(&zero, 4)}, 64, 32, options);
      stopper.join();
      ASSERT_NE(commands->error(), nullptr);
      EXPECT_EQ(commands->error()->fault.kind, emu::FaultKind::kInterrupted);
    }
    ++finished;
  });
  // Buffers made and released as fast as they come, all the while.
  const int workers = static_cast<int>(threads.size());
  threads.emplace_back([&] {
    std::vector<uint8_t> bytes(4096, 7);
    while (finished.load() < workers) {
      auto b = NewBuffer(bytes.data(), bytes.size());
      auto c = device_->newBufferWithBytesNoCopy(bytes.data(), bytes.size());
      ASSERT_TRUE(c.ok());
    }
  });
  for (std::thread& t : threads) t.join();
}

// Pipelines made on several threads at once, each compiling its kernel
// with the JIT (one LLVM for the process): each runs right.
TEST_F(ConcurrentCommandsTest, ThreadsCompilePipelinesAtOnce) {
  device_->options().executor = emu::Executor::kJit;
  Result<std::shared_ptr<Function>> function = pipelines_.at("vector_add")
                                                   ->function()
                                                   .library()
                                                   .newFunction("vector_add");
  ASSERT_TRUE(function.ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 6; ++i) {
        Result<std::shared_ptr<ComputePipelineState>> pipeline =
            device_->newComputePipelineState(function.value());
        ASSERT_TRUE(pipeline.ok()) << pipeline.error().message;
        const uint32_t n = 1000 + 100 * t + i;
        std::vector<float> a(n, 1.5f), b(n, static_cast<float>(t));
        std::vector<float> out(n);
        auto bufs = std::vector<std::shared_ptr<Buffer>>{
            NewBuffer(a.data(), n * 4), NewBuffer(b.data(), n * 4),
            device_->newBufferWithBytesNoCopy(out.data(), n * 4).value(),
            NewBuffer(&n, 4)};
        auto commands = device_->newCommandQueue()->commandBuffer();
        auto encoder = commands->computeCommandEncoder();
        encoder->setComputePipelineState(pipeline.value());
        for (size_t k = 0; k < bufs.size(); ++k) {
          ASSERT_TRUE(encoder->setBuffer(bufs[k], 0, static_cast<int>(k)).ok());
        }
        ASSERT_TRUE(encoder->dispatchThreads({n, 1, 1}, {256, 1, 1}).ok());
        encoder->endEncoding();
        commands->commit();
        ASSERT_EQ(commands->error(), nullptr) << commands->error()->message;
        EXPECT_EQ(commands->dispatches().at(0).executor_note, "");
        for (uint32_t j = 0; j < n; ++j) ASSERT_EQ(out[j], 1.5f + t);
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

// A dispatch sees the buffers mapped when it starts; buffers made and
// released later do not move them, and a released buffer's bytes stay
// readable for as long as a map that holds them is in use.
TEST(DeviceMemoryTest, SnapshotsStayAsTheyWereTaken) {
  emu::DeviceMemory memory;
  auto storage = std::make_shared<std::vector<uint8_t>>(64, 1);
  const uint64_t a = memory.Map(storage->data(), storage->size(), 1, storage);
  std::shared_ptr<const emu::AddressMap> first = memory.Snapshot();
  EXPECT_EQ(memory.Snapshot(), first);  // unchanged: the same map
  std::vector<uint8_t> other(32);
  const uint64_t b = memory.Map(other.data(), other.size(), 2);
  memory.Unmap(a);
  std::weak_ptr<std::vector<uint8_t>> alive = storage;
  storage.reset();
  ASSERT_FALSE(alive.expired());  // the first map still holds it
  const emu::MemoryRegion* r = first->Find(a + 8, 8);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->host[8], 1);
  EXPECT_EQ(first->Find(b, 4), nullptr);
  std::shared_ptr<const emu::AddressMap> second = memory.Snapshot();
  EXPECT_NE(second, first);
  EXPECT_EQ(second->Find(a, 4), nullptr);
  ASSERT_NE(second->Find(b, 32), nullptr);
  EXPECT_EQ(second->Find(b, 32)->host, other.data());
  first.reset();
  EXPECT_TRUE(alive.expired());
}

}  // namespace
}  // namespace mtlemu
