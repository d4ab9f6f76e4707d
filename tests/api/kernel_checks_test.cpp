// The kernel checks (EmulatorOptions::checks, `mtlemu run --check`): a
// kernel for each kind of finding, checked against hand-worked threads,
// lines and addresses, and a kernel for each near miss that must stay
// silent (a barrier between the accesses, atomics, disjoint elements, a
// write then a read by the same thread).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "api/library.h"
#include "emu/check/check_report.h"
#include "emu/device/command_buffer.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"

namespace mtlemu {
namespace {

using emu::FindingKind;

// Line numbers below are those of this source (line 1 is the #include).
constexpr char kSource[] = R"(#include <metal_stdlib>
using namespace metal;
kernel void tg_race(device float* out [[buffer(0)]],
                    uint tid [[thread_position_in_threadgroup]],
                    uint gid [[thread_position_in_grid]]) {
  threadgroup float t[64];
  t[tid] = float(tid);
  out[gid] = t[(tid + 1) % 64];
}
kernel void tg_barrier(device float* out [[buffer(0)]],
                       uint tid [[thread_position_in_threadgroup]],
                       uint gid [[thread_position_in_grid]]) {
  threadgroup float t[64];
  t[tid] = float(tid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = t[(tid + 1) % 64];
}
kernel void tg_same_thread(device float* out [[buffer(0)]],
                           uint tid [[thread_position_in_threadgroup]],
                           uint gid [[thread_position_in_grid]]) {
  threadgroup float t[64];
  t[tid] = float(gid);
  t[tid] += 1.0f;
  out[gid] = t[tid];
}
kernel void tg_uninit(device float* out [[buffer(0)]],
                      uint tid [[thread_position_in_threadgroup]],
                      uint gid [[thread_position_in_grid]]) {
  threadgroup float t[64];
  if (tid < 32) t[tid] = 1.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = t[63 - tid];
}
kernel void tg_atomics(device uint* out [[buffer(0)]],
                       uint tid [[thread_position_in_threadgroup]],
                       uint gid [[thread_position_in_grid]]) {
  threadgroup atomic_uint count;
  if (tid == 0) atomic_store_explicit(&count, 0u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  atomic_fetch_add_explicit(&count, 1u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = atomic_load_explicit(&count, memory_order_relaxed);
}
kernel void simd_exchange(device float* out [[buffer(0)]],
                          uint tid [[thread_position_in_threadgroup]],
                          uint gid [[thread_position_in_grid]]) {
  threadgroup float t[64];
  t[tid] = float(tid);
  out[gid] = t[tid ^ 1];
}
kernel void simd_exchange_barrier(device float* out [[buffer(0)]],
                                  uint tid [[thread_position_in_threadgroup]],
                                  uint gid [[thread_position_in_grid]]) {
  threadgroup float t[64];
  t[tid] = float(tid);
  simdgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = t[tid ^ 1];
}
kernel void device_race(device float* out [[buffer(0)]],
                        uint gid [[thread_position_in_grid]]) {
  out[0] = float(gid);
}
kernel void device_same_value(device float* out [[buffer(0)]],
                              uint gid [[thread_position_in_grid]]) {
  out[gid / 2] = float(gid / 2);
}
kernel void device_neighbours(device float* out [[buffer(0)]],
                              uint gid [[thread_position_in_grid]]) {
  out[gid] = 1.0f;
  out[(gid + 64) % 256] += 1.0f;
}
kernel void device_disjoint(device const float* in [[buffer(0)]],
                            device float* out [[buffer(1)]],
                            uint gid [[thread_position_in_grid]]) {
  out[gid] = in[gid] * 2.0f;
  out[gid] += in[(gid + 1) % 256];
}
kernel void device_atomics(device atomic_uint* out [[buffer(0)]],
                           uint gid [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit(out, 1u, memory_order_relaxed);
}
kernel void device_barrier(device float* out [[buffer(0)]],
                           device float* sum [[buffer(1)]],
                           uint tid [[thread_position_in_threadgroup]],
                           uint gid [[thread_position_in_grid]]) {
  out[gid] = float(tid);
  threadgroup_barrier(mem_flags::mem_device);
  sum[gid] = out[gid] + out[gid ^ 32];
}
kernel void accumulate(device float* out [[buffer(0)]],
                       uint gid [[thread_position_in_grid]]) {
  out[gid] += 1.0f;
}
kernel void write_then_read(device float* out [[buffer(0)]],
                            uint gid [[thread_position_in_grid]]) {
  out[gid] = 2.0f;
  out[gid] *= out[gid];
}
kernel void shuffle_inactive(device float* out [[buffer(0)]],
                             uint lane [[thread_index_in_simdgroup]],
                             uint gid [[thread_position_in_grid]]) {
  float v = float(gid);
  if (lane < 16) v = simd_shuffle_down(v, 8);
  out[gid] = v;
}
kernel void shuffle_active(device float* out [[buffer(0)]],
                           uint lane [[thread_index_in_simdgroup]],
                           uint gid [[thread_position_in_grid]]) {
  float v = float(gid);
  if (lane < 16) v = simd_sum(v);
  out[gid] = simd_shuffle_xor(v, 1);
}
kernel void mismatched_barriers(device float* out [[buffer(0)]],
                                uint sg [[simdgroup_index_in_threadgroup]],
                                uint gid [[thread_position_in_grid]]) {
  if (sg == 0) {
    out[gid] = 1.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
  } else {
    out[gid] = 2.0f;
    threadgroup_barrier(mem_flags::mem_device);
  }
  out[gid] += 1.0f;
}
kernel void skipped_barrier(device float* out [[buffer(0)]],
                            uint sg [[simdgroup_index_in_threadgroup]],
                            uint tid [[thread_position_in_threadgroup]],
                            uint gid [[thread_position_in_grid]]) {
  threadgroup float t[64];
  t[tid] = 1.0f;
  if (sg == 0) threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = t[(tid + 1) % 64];
}
kernel void early_return(device float* out [[buffer(0)]],
                         uint sg [[simdgroup_index_in_threadgroup]],
                         uint tid [[thread_position_in_threadgroup]],
                         uint gid [[thread_position_in_grid]]) {
  threadgroup float t[32];
  if (sg != 0) return;
  t[tid] = 1.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = t[(tid + 1) % 32];
}
kernel void half_own(device half* out [[buffer(0)]],
                     uint tid [[thread_position_in_threadgroup]],
                     uint gid [[thread_position_in_grid]]) {
  threadgroup half t[64];
  t[tid] = half(tid);
  out[gid] = t[tid] + 1.0h;
}
kernel void half_neighbour(device half* out [[buffer(0)]],
                           uint tid [[thread_position_in_threadgroup]],
                           uint gid [[thread_position_in_grid]]) {
  threadgroup half t[64];
  t[tid] = half(tid);
  out[gid] = t[tid ^ 1];
}
)";

class KernelChecksTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    device_ = Device::Create("m1").value();
    auto library = api::newLibraryWithSource(*device_, kSource, {}, "k.metal");
    ASSERT_TRUE(library.ok()) << library.error().message;
    library_ = std::move(library).value();
  }
  static void TearDownTestSuite() {
    library_.reset();
    device_.reset();
  }

  // A buffer of `n` floats (or uints) holding `init`, or made with a
  // length only when `uninit`.
  std::shared_ptr<Buffer> NewBuffer(size_t n, float init = 0,
                                    bool uninit = false) {
    if (uninit) return device_->newBuffer(n * 4).value();
    std::vector<float> v(n, init);
    return device_->newBuffer(v.data(), n * 4).value();
  }

  // Runs `kernel` over `threads` threads in threadgroups of `group`, with
  // `buffers` at indices 0, 1, ...; returns the dispatch's check report.
  // Runs `kernel` over `threads` threads in threadgroups of `group`, with
  // `buffers` at indices 0, 1, ..., under `checks`; returns the dispatch's
  // check report (null without checks).
  std::shared_ptr<const emu::CheckReport> Dispatch(
      const std::string& kernel, std::vector<std::shared_ptr<Buffer>> buffers,
      uint64_t threads, uint64_t group, const emu::CheckOptions& checks,
      int host_threads = 0) {
    auto pipeline =
        device_->newComputePipelineState(library_->newFunction(kernel).value());
    EXPECT_TRUE(pipeline.ok()) << pipeline.error().message;
    CommandBufferDescriptor descriptor;
    descriptor.options.checks = checks;
    descriptor.options.host_threads = host_threads;
    // The examples below are those of SIMD groups that run one after the
    // other (a race's first access is SIMD group 0's; SIMD group 1 has not
    // written what thread 31 reads); the interleaved order is
    // tests/compiler/msl_schedule_test.cpp's.
    descriptor.options.schedule = {emu::SimdgroupOrder::kSequential};
    auto commands =
        device_->newCommandQueue()->commandBufferWithDescriptor(descriptor);
    auto encoder = commands->computeCommandEncoder();
    encoder->setComputePipelineState(pipeline.value());
    for (size_t i = 0; i < buffers.size(); ++i) {
      EXPECT_TRUE(encoder->setBuffer(buffers[i], 0, static_cast<int>(i)).ok());
    }
    EXPECT_TRUE(encoder->dispatchThreads({threads, 1, 1}, {group, 1, 1}).ok());
    encoder->endEncoding();
    commands->commit();
    EXPECT_EQ(commands->error(), nullptr) << commands->error()->message;
    return commands->dispatches().at(0).check;
  }

  // Dispatch with the checks named as --check names them.
  std::shared_ptr<const emu::CheckReport> Run(
      const std::string& kernel, std::vector<std::shared_ptr<Buffer>> buffers,
      uint64_t threads = 256, uint64_t group = 64, const char* checks = "all",
      int host_threads = 0) {
    return Dispatch(kernel, std::move(buffers), threads, group,
                    emu::ParseCheckList(checks).value(), host_threads);
  }

  static std::shared_ptr<Device> device_;
  static std::shared_ptr<Library> library_;
};

std::shared_ptr<Device> KernelChecksTest::device_;
std::shared_ptr<Library> KernelChecksTest::library_;

// The line of kSource holding `text`.
uint32_t LineOf(const std::string& text) {
  const std::string source = kSource;
  const size_t at = source.find(text);
  EXPECT_NE(at, std::string::npos) << text;
  uint32_t line = 1;
  for (size_t i = 0; i < at && at != std::string::npos; ++i) {
    line += source[i] == '\n';
  }
  return line;
}

std::string Describe(const emu::CheckReport& r) {
  std::string out;
  for (const emu::Finding& f : r.findings) out += f.Describe(r.kernel) + "\n";
  for (const std::string& n : r.notes) out += "note: " + n + "\n";
  return out;
}

const emu::Finding* Find(const emu::CheckReport& r, FindingKind kind) {
  for (const emu::Finding& f : r.findings) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

TEST_F(KernelChecksTest, ThreadgroupRaceWithoutBarrier) {
  auto r = Run("tg_race", {NewBuffer(256)});
  ASSERT_NE(r, nullptr);
  const emu::Finding* f = Find(*r, FindingKind::kThreadgroupRace);
  ASSERT_NE(f, nullptr) << Describe(*r);
  // Thread 0 reads t[1] (line 8) after thread 1 wrote it (line 7), in the
  // first SIMD group, which runs first.
  EXPECT_EQ(f->first.type, emu::AccessType::kWrite);
  EXPECT_EQ(f->first.location.line, 7u);
  EXPECT_EQ(f->first.lane, 1u);
  ASSERT_TRUE(f->second.has_value());
  EXPECT_EQ(f->second->type, emu::AccessType::kRead);
  EXPECT_EQ(f->second->location.line, 8u);
  EXPECT_EQ(f->second->lane, 0u);
  EXPECT_EQ(f->second->thread_position[0], 0u);
  EXPECT_EQ(f->space, isa::AddressSpace::kThreadgroup);
  EXPECT_EQ(f->region_offset, 4);  // t[1]
  EXPECT_EQ(f->first.source_file, "k.metal");
  // Every thread but those reading across into the next SIMD group: 62 of
  // 64 per threadgroup race with a write of their own SIMD group, thread 31
  // and thread 63 read what the other SIMD group wrote (thread 63 after it,
  // thread 31 before it: an uninitialized read).
  EXPECT_GE(f->count, 4u * 62u);
  const emu::Finding* u = Find(*r, FindingKind::kUninitializedThreadgroupRead);
  ASSERT_NE(u, nullptr) << Describe(*r);
  EXPECT_EQ(u->first.lane, 31u);
  EXPECT_EQ(u->region_offset, 128);  // t[32], before SIMD group 1 wrote it
  EXPECT_EQ(u->count, 4u);           // once per threadgroup
}

TEST_F(KernelChecksTest, BarrierSameThreadAndAtomicsAreSilent) {
  for (const char* kernel : {"tg_barrier", "tg_same_thread", "tg_atomics"}) {
    auto r = Run(kernel, {NewBuffer(256)});
    ASSERT_NE(r, nullptr);
    EXPECT_TRUE(r->findings.empty()) << kernel << ":\n" << Describe(*r);
  }
}

TEST_F(KernelChecksTest, HalvesSharingAWordAreTrackedByteByByte) {
  // Threads 2k and 2k + 1 write the two halves of one 4-byte word: no race
  // while each reads its own; a race when each reads the other's.
  auto r = Run("half_own", {NewBuffer(128)});
  EXPECT_TRUE(r->findings.empty()) << Describe(*r);
  r = Run("half_neighbour", {NewBuffer(128)});
  const emu::Finding* f = Find(*r, FindingKind::kThreadgroupRace);
  ASSERT_NE(f, nullptr) << Describe(*r);
  ASSERT_TRUE(f->second.has_value());
  // Thread 0 reads t[1] (bytes 2..3) after thread 1 wrote it.
  EXPECT_EQ(f->first.lane, 1u);
  EXPECT_EQ(f->second->lane, 0u);
  EXPECT_EQ(f->region_offset, 2);
  EXPECT_EQ(f->size, 2u);
}

TEST_F(KernelChecksTest, UninitializedThreadgroupRead) {
  auto r = Run("tg_uninit", {NewBuffer(256)});
  ASSERT_EQ(r->findings.size(), 1u) << Describe(*r);
  const emu::Finding& f = r->findings[0];
  EXPECT_EQ(f.kind, FindingKind::kUninitializedThreadgroupRead);
  EXPECT_EQ(f.first.location.line, 32u);
  // Thread 0 reads t[63], which nobody writes; threads 0..31 of each of
  // the 4 threadgroups read t[63..32].
  EXPECT_EQ(f.first.lane, 0u);
  EXPECT_EQ(f.region_offset, 252);
  EXPECT_EQ(f.count, 4u * 32u);
  EXPECT_FALSE(f.second.has_value());
}

TEST_F(KernelChecksTest, LanesOfOneSimdGroupNeedASimdgroupBarrier) {
  auto r = Run("simd_exchange", {NewBuffer(256)});
  const emu::Finding* f = Find(*r, FindingKind::kThreadgroupRace);
  ASSERT_NE(f, nullptr) << Describe(*r);
  ASSERT_TRUE(f->second.has_value());
  EXPECT_EQ(f->first.simdgroup, f->second->simdgroup);
  EXPECT_NE(f->detail.find("simdgroup_barrier"), std::string::npos);
  auto ok = Run("simd_exchange_barrier", {NewBuffer(256)});
  EXPECT_TRUE(ok->findings.empty()) << Describe(*ok);
}

TEST_F(KernelChecksTest, DeviceRaceInOneThreadgroup) {
  auto r = Run("device_race", {NewBuffer(256)}, 64, 64);
  ASSERT_EQ(r->findings.size(), 1u) << Describe(*r);
  const emu::Finding& f = r->findings[0];
  EXPECT_EQ(f.kind, FindingKind::kDeviceRace);
  EXPECT_EQ(f.first.location.line, 61u);
  ASSERT_TRUE(f.second.has_value());
  EXPECT_NE(f.first.thread_position[0], f.second->thread_position[0]);
  EXPECT_EQ(f.region_offset, 0);
  EXPECT_NE(f.region.find("buffer(0) 'out'"), std::string::npos) << f.region;
  // 64 threads write the same 4 bytes: 64 * 63 / 2 pairs.
  EXPECT_EQ(f.count, 64u * 63u / 2u);
}

TEST_F(KernelChecksTest, DeviceRaceWhoseWritesAgree) {
  auto r = Run("device_same_value", {NewBuffer(128)});
  ASSERT_EQ(r->findings.size(), 1u) << Describe(*r);
  EXPECT_TRUE(r->findings[0].same_value);
  EXPECT_EQ(r->findings[0].count, 128u);  // threads 2k and 2k + 1
  EXPECT_NE(r->findings[0].detail.find("same value"), std::string::npos);
  r = Run("device_race", {NewBuffer(256)}, 64, 64);
  ASSERT_EQ(r->findings.size(), 1u) << Describe(*r);
  EXPECT_FALSE(r->findings[0].same_value);
}

TEST_F(KernelChecksTest, DeviceRaceBetweenThreadgroups) {
  auto r = Run("device_neighbours", {NewBuffer(256)});
  const emu::Finding* f = Find(*r, FindingKind::kDeviceRace);
  ASSERT_NE(f, nullptr) << Describe(*r);
  ASSERT_TRUE(f->second.has_value());
  EXPECT_NE(f->first.threadgroup_position[0],
            f->second->threadgroup_position[0]);
  EXPECT_NE(f->detail.find("different threadgroups"), std::string::npos);
  // Element e is written by thread e (line 69) and read and written by
  // thread (e + 192) % 256 (line 70), of the threadgroup 3 ahead.
  const uint32_t writer = f->first.thread_position[0];
  const uint32_t other = f->second->thread_position[0];
  EXPECT_EQ((writer + 192) % 256 == other || (other + 192) % 256 == writer,
            true)
      << writer << " " << other;
}

TEST_F(KernelChecksTest, DeviceNearMissesAreSilent) {
  auto in = NewBuffer(256, 1.0f);
  auto r = Run("device_disjoint", {in, NewBuffer(256)});
  EXPECT_TRUE(r->findings.empty()) << Describe(*r);
  r = Run("device_atomics", {NewBuffer(256)});
  EXPECT_TRUE(r->findings.empty()) << Describe(*r);
  // One threadgroup of 64: a mem_device barrier orders the two halves.
  r = Run("device_barrier", {NewBuffer(64), NewBuffer(64)}, 64, 64);
  EXPECT_TRUE(r->findings.empty()) << Describe(*r);
  r = Run("write_then_read", {NewBuffer(256, 0, /*uninit=*/true)});
  EXPECT_TRUE(r->findings.empty()) << Describe(*r);
}

TEST_F(KernelChecksTest, DeviceBarrierWithoutMemDeviceIsARace) {
  // In threadgroups of 32, thread e reads element e ^ 32, which the other
  // threadgroup writes: the barrier orders nothing between them.
  auto r = Run("device_barrier", {NewBuffer(128), NewBuffer(128)}, 128, 32);
  const emu::Finding* f = Find(*r, FindingKind::kDeviceRace);
  ASSERT_NE(f, nullptr) << Describe(*r);
  EXPECT_NE(f->first.threadgroup_position[0],
            f->second->threadgroup_position[0]);
}

TEST_F(KernelChecksTest, UninitializedBufferRead) {
  auto out = NewBuffer(256, 0, /*uninit=*/true);
  auto r = Run("accumulate", {out});
  ASSERT_EQ(r->findings.size(), 1u) << Describe(*r);
  const emu::Finding& f = r->findings[0];
  EXPECT_EQ(f.kind, FindingKind::kUninitializedDeviceRead);
  EXPECT_EQ(f.first.location.line, 92u);
  EXPECT_EQ(f.count, 256u);
  // The first dispatch wrote every element: the second reads written bytes.
  r = Run("accumulate", {out});
  EXPECT_TRUE(r->findings.empty()) << Describe(*r);
  // The host's data counts as written.
  r = Run("accumulate", {NewBuffer(256, 1.0f)});
  EXPECT_TRUE(r->findings.empty()) << Describe(*r);
  // contents() gives the host every byte to write.
  auto touched = NewBuffer(256, 0, /*uninit=*/true);
  static_cast<float*>(touched->contents())[0] = 3.0f;
  r = Run("accumulate", {touched});
  EXPECT_TRUE(r->findings.empty()) << Describe(*r);
}

TEST_F(KernelChecksTest, ShuffleFromAnInactiveLane) {
  auto r = Run("shuffle_inactive", {NewBuffer(256)});
  ASSERT_EQ(r->findings.size(), 1u) << Describe(*r);
  const emu::Finding& f = r->findings[0];
  EXPECT_EQ(f.kind, FindingKind::kInactiveLaneRead);
  EXPECT_EQ(f.first.location.line, 103u);
  // Lanes 8..15 read lanes 16..23, inactive; 8 per SIMD group, 8 groups.
  EXPECT_EQ(f.first.lane, 8u);
  EXPECT_NE(f.detail.find("lane 16"), std::string::npos) << f.detail;
  EXPECT_EQ(f.count, 8u * 8u);
  // simd_sum over the active lanes, then a shuffle with all lanes active.
  auto ok = Run("shuffle_active", {NewBuffer(256)});
  EXPECT_TRUE(ok->findings.empty()) << Describe(*ok);
}

TEST_F(KernelChecksTest, MismatchedBarriers) {
  auto r = Run("mismatched_barriers", {NewBuffer(64)}, 64, 64, "simd");
  const emu::Finding* f = Find(*r, FindingKind::kMismatchedBarrier);
  ASSERT_NE(f, nullptr) << Describe(*r);
  ASSERT_TRUE(f->second.has_value());
  EXPECT_EQ(f->first.simdgroup, 0u);
  EXPECT_EQ(f->second->simdgroup, 1u);
  EXPECT_EQ(f->first.location.line, 118u);
  EXPECT_EQ(f->second->location.line, 121u);
  EXPECT_NE(f->detail.find("mem_flags::mem_device"), std::string::npos);
}

TEST_F(KernelChecksTest, BarrierSkippedBySimdGroupsThatRunPastIt) {
  auto r = Run("skipped_barrier", {NewBuffer(64)}, 64, 64, "simd");
  ASSERT_EQ(r->findings.size(), 1u) << Describe(*r);
  const emu::Finding& f = r->findings[0];
  EXPECT_EQ(f.kind, FindingKind::kSkippedBarrier);
  EXPECT_EQ(f.first.simdgroup, 0u);
  ASSERT_TRUE(f.second.has_value());
  EXPECT_EQ(f.second->simdgroup, 1u);
  EXPECT_EQ(f.first.location.line, LineOf("if (sg == 0) threadgroup_barrier"));
  // Returning before the barrier is not skipping it.
  r = Run("early_return", {NewBuffer(64)}, 64, 64, "all");
  EXPECT_TRUE(r->findings.empty()) << Describe(*r);
}

TEST_F(KernelChecksTest, OnlyTheChecksAskedForReport) {
  auto r = Run("tg_race", {NewBuffer(256)}, 256, 64, "init");
  EXPECT_EQ(Find(*r, FindingKind::kThreadgroupRace), nullptr);
  EXPECT_NE(Find(*r, FindingKind::kUninitializedThreadgroupRead), nullptr);
  r = Run("shuffle_inactive", {NewBuffer(256)}, 256, 64, "race,init");
  EXPECT_TRUE(r->findings.empty()) << Describe(*r);
  EXPECT_EQ(r->checks, "race,init");
}

TEST_F(KernelChecksTest, ResultsAndReportsDoNotDependOnChecksOrThreads) {
  // Checked or not, the buffers are the same (tg_race races in threadgroup
  // memory, which runs the same way every time; device_neighbours races
  // between threadgroups, whose outcome depends on the host threads).
  auto plain = NewBuffer(4096);
  EXPECT_EQ(Dispatch("tg_race", {plain}, 4096, 64, {}), nullptr);
  auto checked = NewBuffer(4096);
  EXPECT_FALSE(Run("tg_race", {checked}, 4096, 64, "all", 3)->findings.empty());
  EXPECT_EQ(std::memcmp(plain->contents(), checked->contents(), 4096 * 4), 0);
  // The same findings on 1 and 4 host threads.
  auto r1 = Run("device_neighbours", {NewBuffer(4096)}, 4096, 64, "all", 1);
  auto r4 = Run("device_neighbours", {NewBuffer(4096)}, 4096, 64, "all", 4);
  // The same findings (the buffers, and so the addresses, differ).
  ASSERT_EQ(r1->findings.size(), r4->findings.size());
  for (size_t i = 0; i < r1->findings.size(); ++i) {
    const emu::Finding& a = r1->findings[i];
    const emu::Finding& b = r4->findings[i];
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.count, b.count);
    EXPECT_EQ(a.region_offset, b.region_offset);
    EXPECT_EQ(a.first.pc, b.first.pc);
    EXPECT_EQ(a.first.thread_position, b.first.thread_position);
    ASSERT_EQ(a.second.has_value(), b.second.has_value());
    if (a.second) {
      EXPECT_EQ(a.second->pc, b.second->pc);
      EXPECT_EQ(a.second->thread_position, b.second->thread_position);
    }
  }
  EXPECT_FALSE(r1->findings.empty());
}

TEST_F(KernelChecksTest, RecordLimitLeavesANote) {
  // 3 records per threadgroup of 64 (a coalesced store, load and store,
  // each continued by the second SIMD group; their bytes are not kept):
  // room for 3 threadgroups.
  emu::CheckOptions small = emu::ParseCheckList("race").value();
  small.device_record_limit_bytes = 3 * 3 * sizeof(emu::DeviceAccessRecord);
  auto r = Dispatch("device_neighbours", {NewBuffer(4096)}, 4096, 64, small);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->notes.size(), 1u) << Describe(*r);
  EXPECT_NE(r->notes[0].find("threadgroups 0 to 2 only"), std::string::npos)
      << r->notes[0];
  // Threadgroup t writes [64t, 64t + 64) and reads and writes the next 64
  // elements (mod 256): of the recorded ones, 0 and 1, and 1 and 2 race.
  const emu::Finding* f = Find(*r, FindingKind::kDeviceRace);
  ASSERT_NE(f, nullptr) << Describe(*r);
  for (const emu::Finding& g : r->findings) {
    EXPECT_LE(g.first.threadgroup_position[0], 2u);
    EXPECT_LE(g.second->threadgroup_position[0], 2u);
  }
}

}  // namespace
}  // namespace mtlemu
