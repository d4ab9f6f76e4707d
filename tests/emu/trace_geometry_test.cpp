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
// stores it to threadgroup word words[l] (a table in buffer 1).
constexpr char kKernel[] = R"(
.kernel k
.buffer 0 u0 device float data
.buffer 1 u2 device uint words
.threadgroup_memory 8192
    mov.u32 r0, %thread_index_in_threadgroup
    ld.device.f32 r1, [u0 + r0*4]
    ld.device.u32 r2, [u2 + r0*4]
    shl.u32 r2, r2, 2
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
  std::vector<uint64_t> lines;  // of the first load
  uint8_t conflict = 0;         // of the threadgroup store
};

// `words`: lane l's threadgroup word.
Recorded Record(TraceGeometry geometry, std::vector<uint32_t> words) {
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
  const uint64_t table = memory.Map(reinterpret_cast<uint8_t*>(words.data()),
                                    words.size() * sizeof(uint32_t), 2);
  KeepingSink sink(geometry);
  DispatchSetup setup;
  setup.kernel = &decoded;
  setup.uniforms.assign(static_cast<size_t>(kernel.uniforms), 0);
  setup.uniforms[0] = static_cast<uint32_t>(address);
  setup.uniforms[1] = static_cast<uint32_t>(address >> 32);
  setup.uniforms[2] = static_cast<uint32_t>(table);
  setup.uniforms[3] = static_cast<uint32_t>(table >> 32);
  setup.threadgroup_memory_length = 8192;
  const std::shared_ptr<const AddressMap> map = memory.Snapshot();
  setup.device = map.get();
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
    if (inst.op == isa::Opcode::kLoad && out.lines.empty()) {
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
  std::vector<uint32_t> stride16(32);
  for (uint32_t l = 0; l < 32; ++l) stride16[l] = 16 * l;
  const Recorded m1 =
      Record({.line_shift = 7, .threadgroup_banks = 32}, stride16);
  const Recorded half =
      Record({.line_shift = 6, .threadgroup_banks = 16}, stride16);
  ASSERT_EQ(m1.lines.size(), 1u);
  ASSERT_EQ(half.lines.size(), 2u);
  EXPECT_EQ(half.lines[0], m1.lines[0] * 2);
  EXPECT_EQ(half.lines[1], m1.lines[0] * 2 + 1);
  EXPECT_EQ(m1.conflict, 16);
  EXPECT_EQ(half.conflict, 32);
}

// Bank conflicts of one threadgroup store, lane l at word words(l): the
// distinct words each bank serves, counted by hand for 32 banks.
uint8_t ConflictOf(uint32_t (*words)(uint32_t)) {
  std::vector<uint32_t> table(32);
  for (uint32_t l = 0; l < 32; ++l) table[l] = words(l);
  return Record({.line_shift = 7, .threadgroup_banks = 32}, table).conflict;
}

TEST(TraceGeometry, BankConflictsCountDistinctWordsPerBank) {
  // One word per bank, or the same word many times: one cycle.
  EXPECT_EQ(ConflictOf([](uint32_t l) { return l; }), 1);
  EXPECT_EQ(ConflictOf([](uint32_t) { return 5u; }), 1);
  EXPECT_EQ(ConflictOf([](uint32_t l) { return 40 + l % 16; }), 1);
  EXPECT_EQ(ConflictOf([](uint32_t l) { return l / 16 * 16 + 3; }), 1);
  // Words 32 apart share a bank. Lanes alternate two words of bank 0:
  // 2; four words of bank 0 in turn: 4; bank 0 and bank 1 two words each,
  // repeated: 2.
  EXPECT_EQ(ConflictOf([](uint32_t l) { return l % 2 * 32; }), 2);
  EXPECT_EQ(ConflictOf([](uint32_t l) { return l % 4 * 32; }), 4);
  EXPECT_EQ(ConflictOf([](uint32_t l) { return l % 2 * 32 + l / 16; }), 2);
  // The same word first and last, a different word of its bank between.
  EXPECT_EQ(ConflictOf([](uint32_t l) { return l == 7 ? 64u : l; }), 2);
  EXPECT_EQ(ConflictOf([](uint32_t l) { return l == 31 ? 0u : l; }), 1);
}

}  // namespace
}  // namespace mtlemu::emu
