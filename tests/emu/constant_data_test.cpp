// Program-scope constant data (.constant_data / .data): copied into a buffer
// when the pipeline is made, its address in a uniform pair; reads of it and
// faults past its end, through the public host API.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using ::mtlemu::testing::KernelHarness;
using ::mtlemu::testing::Runs;

constexpr float kTable[8] = {1.0f,  2.0f,    -0.5f,  3.25f,
                             1e10f, -1e-10f, 0.125f, 65504.0f};

// The bytes of kTable as .data lines, little-endian, 16 bytes a line.
std::string TableDataLines() {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 8; ++i) {
    if (i % 4 == 0) out += ".data ";
    const uint32_t bits = std::bit_cast<uint32_t>(kTable[i]);
    for (int b = 0; b < 4; ++b) {
      const uint8_t byte = static_cast<uint8_t>(bits >> (8 * b));
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
    if (i % 4 == 3) out += "\n";
  }
  return out;
}

// out[i] = table[i % 8 + offset], the offset read from buffer(1).
std::string TableKernel() {
  return R"(
.kernel lookup
.buffer 0 u0 device float out
.constant_data u2 32
)" + TableDataLines() +
         R"(.buffer 1 u4 constant uint offset
    mov.u32 r2, %thread_position_in_grid.x
    and.u32 r0, r2, 7
    ld.constant.u32 r3, [u4]
    add.u32 r0, r0, r3
    ld.device.f32 r1, [u2 + r0*4]
    st.device.f32 [u0 + r2*4], r1
    exit
.end
)";
}

TEST(ConstantDataTest, KernelReadsTheTable) {
  KernelHarness h(TableKernel());
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  const std::shared_ptr<Buffer>& data = h.pipeline().constantDataBuffer();
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->length(), 32u);
  EXPECT_EQ(data->label(), "constant data of kernel lookup");
  EXPECT_EQ(std::memcmp(data->contents(), kTable, sizeof(kTable)), 0);

  constexpr uint32_t kThreads = 100;
  h.SetBuffer(0, std::vector<float>(kThreads, -1.0f));
  h.SetBytes(1, uint32_t{0});
  ASSERT_TRUE(Runs(h, {kThreads}, {32}));
  const std::vector<float> out = h.Read<float>(0);
  for (uint32_t i = 0; i < kThreads; ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(out[i]),
              std::bit_cast<uint32_t>(kTable[i % 8]))
        << "thread " << i;
  }
  // A second dispatch of the same pipeline sees the same data.
  ASSERT_TRUE(Runs(h, {8}, {8}));
  EXPECT_EQ(h.Read<float>(0)[7], kTable[7]);
}

TEST(ConstantDataTest, KernelsWithoutConstantDataHaveNoBuffer) {
  KernelHarness h(".kernel k\n    exit\n.end\n");
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  EXPECT_EQ(h.pipeline().constantDataBuffer(), nullptr);
}

TEST(ConstantDataTest, ReadPastTheEndFaults) {
  KernelHarness h(TableKernel());
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  h.SetBuffer(0, std::vector<float>(8, -1.0f));
  h.SetBytes(1, uint32_t{1});  // thread 7 reads table[8]: bytes 32..35
  h.device().options().out_of_bounds = emu::OutOfBoundsPolicy::kFault;
  const Status s = h.DispatchThreads({8}, {8});
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_NE(h.error(), nullptr) << "the dispatch did not fault";
  EXPECT_EQ(h.error()->code, CommandBufferErrorCode::kPageFault);
  EXPECT_EQ(h.error()->fault.kind, emu::FaultKind::kOutOfBounds);
  EXPECT_EQ(h.error()->fault.lane, 7);
  EXPECT_EQ(h.error()->fault.address,
            h.pipeline().constantDataBuffer()->gpuAddress() + 32);
  const std::string& message = h.error()->message;
  EXPECT_NE(message.find("constant data"), std::string::npos) << message;
  EXPECT_EQ(message.find("buffer(-1)"), std::string::npos) << message;
}

}  // namespace
}  // namespace mtlemu
