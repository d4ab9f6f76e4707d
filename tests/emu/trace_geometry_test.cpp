// Timed mode records memory in the geometry its TraceSink gives (the
// chip's line size and threadgroup memory banks), not in fixed numbers:
// the same dispatch recorded for 128-byte lines and 32 banks, and for
// 64-byte lines and 16 banks, against lines and conflicts counted by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "emu/dispatch/dispatch.h"
#include "emu/exec/decoded_kernel.h"
#include "emu/memory/device_memory.h"
#include "isa/assembler.h"

namespace mtlemu::emu {
namespace {

// One SIMD group: lane l loads data[l] (128 contiguous bytes), then
// stores to threadgroup word 16 * l (stride 64 bytes).
constexpr char kKernel[] = R"(
.kernel k
.buffer 0 u0 device float data
.threadgroup_memory 8192
    mov.u32 r0, %thread_index_in_threadgroup
    ld.device.f32 r1, [u0 + r0*4]
    shl.u32 r2, r0, 6
    st.threadgroup.f32 [r2], r1
    exit
.end
)";

// Keeps the traces it is given.
class KeepingSink : public TraceSink {
 public:
  explicit KeepingSink(TraceGeometry geometry) : geometry_(geometry) {}
  TraceGeometry geometry() const override { return geometry_; }
  void Consume(std::vector<ThreadgroupTrace>& batch) override {
    for (ThreadgroupTrace& t : batch) traces.push_back(std::move(t));
    batch.clear();
  }
  std::vector<ThreadgroupTrace> traces;

 private:
  TraceGeometry geometry_;
};

struct Recorded {
  std::vector<uint64_t> lines;  // of the load
  uint8_t conflict = 0;         // of the threadgroup store
};

Recorded Record(TraceGeometry geometry) {
  Recorded out;
  isa::AssembleResult assembled = isa::Assemble(kKernel, "k.s");
  EXPECT_TRUE(assembled.ok());
  if (!assembled.ok()) return out;
  const isa::Kernel& kernel = assembled.module.kernels.at(0);
  DecodedKernel decoded;
  std::string error;
  EXPECT_TRUE(DecodeKernel(kernel, decoded, error)) << error;
  std::vector<float> data(64, 1.0f);
  DeviceMemory memory;
  const uint64_t address = memory.Map(reinterpret_cast<uint8_t*>(data.data()),
                                      data.size() * sizeof(float), 1);
  KeepingSink sink(geometry);
  DispatchSetup setup;
  setup.kernel = &decoded;
  setup.uniforms.assign(static_cast<size_t>(kernel.uniforms), 0);
  setup.uniforms[0] = static_cast<uint32_t>(address);
  setup.uniforms[1] = static_cast<uint32_t>(address >> 32);
  setup.threadgroup_memory_length = 8192;
  setup.device = &memory;
  setup.grid = {.threadgroups = {1, 1, 1},
                .threads_per_threadgroup = {32, 1, 1},
                .threads_per_grid = {32, 1, 1}};
  setup.host_threads = 1;
  setup.timing = &sink;
  const DispatchResult result = RunDispatch(setup);
  EXPECT_TRUE(result.ok) << result.fault.Describe();
  EXPECT_EQ(sink.traces.size(), 1u);
  if (sink.traces.size() != 1 || sink.traces[0].simd_groups.size() != 1) {
    return out;
  }
  const SimdGroupTrace& trace = sink.traces[0].simd_groups[0];
  TraceCursor cursor(&trace);
  for (; !cursor.done(); cursor.Next()) {
    const TraceEvent e = cursor.event();
    const isa::Instruction& inst = kernel.code.at(e.pc);
    if (inst.op == isa::Opcode::kLoad) {
      out.lines.assign(cursor.lines(), cursor.lines() + e.line_count);
    } else if (inst.op == isa::Opcode::kStore) {
      out.conflict = e.conflict;
    }
  }
  return out;
}

TEST(TraceGeometry, LinesAndBanksAreTheSinks) {
  // Regions are 64 KB aligned: the 128 bytes loaded are one 128-byte line
  // or two 64-byte lines. Words 16l fall in banks 16l mod 32 (0 and 16,
  // 16 lanes each) or 16l mod 16 (all in bank 0).
  const Recorded m1 = Record({.line_shift = 7, .threadgroup_banks = 32});
  const Recorded half = Record({.line_shift = 6, .threadgroup_banks = 16});
  ASSERT_EQ(m1.lines.size(), 1u);
  ASSERT_EQ(half.lines.size(), 2u);
  EXPECT_EQ(half.lines[0], m1.lines[0] * 2);
  EXPECT_EQ(half.lines[1], m1.lines[0] * 2 + 1);
  EXPECT_EQ(m1.conflict, 16);
  EXPECT_EQ(half.conflict, 32);
}

}  // namespace
}  // namespace mtlemu::emu
