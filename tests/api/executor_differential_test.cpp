// The JIT execution path against the interpreter, bit for bit: random ISA
// programs (every inlined opcode and type, special values, divergent
// lanes, loops gone round in compiled code or not, handlers called in the
// middle of compiled runs, faults there), programs of if-thens that the
// JIT compiles with the run before them, straight programs that it
// compiles whole, on threadgroups of every shape, and every kernel of the
// MSL corpus (tests/compiler/msl_corpus) on random inputs run on both;
// their buffers, faults and instruction and lane-instruction counts must
// be the same. The interpreter is the reference: its own tests check it
// against hand-computed values.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "api/library.h"
#include "emu/device/command_buffer.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"
#include "emu/exec/simd_group.h"
#include "emu/jit/run_codegen.h"

namespace mtlemu {
namespace {

struct Outcome {
  std::string setup_error;  // compiling, binding
  bool ok = true;
  std::string fault;
  uint64_t instructions = 0;
  uint64_t lane_instructions = 0;
  std::string jit_note;
  bool whole = false;   // compiled whole (DecodedKernel::groups)
  int if_thens = 0;     // compiled with the run before them (IfThenEnd)
  int if_elses = 0;     // the same (IfElseEnd)
  bool phased = false;  // compiled a phase at a time (DecodedKernel::phases)
  int alu_only = 0;     // compiled code that timed mode runs (jit_alu_only)
  // Timed mode: what the timing model made of the instructions issued.
  uint64_t cycles = 0;
  uint64_t register_cache_miss_cycles = 0;
  uint64_t bank_conflict_cycles = 0;
  uint64_t l1_bytes = 0;
  uint64_t timed_lane_instructions = 0;
  double flops = 0;
  std::vector<std::pair<std::string, uint64_t>> by_unit;
  std::vector<std::vector<uint8_t>> buffers;
  // The findings (accesses just outside a buffer), as Describe words them.
  std::string findings;
};

struct Launch {
  std::vector<std::vector<uint8_t>> buffers;  // by index 0, 1, ...
  MTLSize grid{1, 1, 1};
  MTLSize group{1, 1, 1};
  uint64_t threadgroup_length = 0;  // for each [[threadgroup(i)]]
  bool timed = false;               // on M1's timing model
  // Faults near a buffer too, as the random programs here expect.
  emu::OutOfBoundsPolicy out_of_bounds = emu::OutOfBoundsPolicy::kFault;
  emu::Schedule schedule;  // the default, interleaved
};

// Runs `kernel` of a library made by `make` on a fresh device with the
// given executor.
template <class MakeLibrary>
Outcome RunOn(emu::Executor executor, MakeLibrary make,
              const std::string& kernel, const Launch& launch) {
  Outcome out;
  auto device = Device::Create("m1").value();
  device->options().executor = executor;
  // One host thread: random inputs make kernels race between
  // threadgroups, whose order decides such results; and a fault stops a
  // dispatch after a count of instructions that depends on the order too.
  device->options().host_threads = 1;
  device->options().timeout = std::chrono::milliseconds(20'000);
  device->options().timing = launch.timed;
  device->options().out_of_bounds = launch.out_of_bounds;
  device->options().schedule = launch.schedule;
  Result<std::shared_ptr<Library>> library = make(*device);
  if (!library.ok()) {
    out.setup_error = library.error().message;
    return out;
  }
  auto function = library.value()->newFunction(kernel);
  if (!function.ok()) {
    out.setup_error = function.error().message;
    return out;
  }
  auto pipeline = device->newComputePipelineState(function.value());
  if (!pipeline.ok()) {
    out.setup_error = pipeline.error().message;
    return out;
  }
  const emu::DecodedKernel& decoded = pipeline.value()->kernelFor(1);
  out.whole = decoded.groups != nullptr;
  out.phased = !decoded.phases.empty();
  for (const emu::DecodedInstruction& d : decoded.code) {
    out.alu_only += d.jit_alu_only;
  }
  for (uint32_t pc = 0; pc < decoded.code.size(); ++pc) {
    if (decoded.code[pc].jit == nullptr) continue;
    const uint32_t end = std::max(decoded.code[pc].run_end, pc);
    out.if_thens += emu::IfThenEnd(decoded, end) != 0;
    out.if_elses += emu::IfElseEnd(decoded, end) != 0;
  }
  std::vector<std::shared_ptr<Buffer>> buffers;
  auto commands = device->newCommandQueue()->commandBuffer();
  auto encoder = commands->computeCommandEncoder();
  encoder->setComputePipelineState(pipeline.value());
  for (size_t i = 0; i < launch.buffers.size(); ++i) {
    buffers.push_back(
        device->newBuffer(launch.buffers[i].data(), launch.buffers[i].size())
            .value());
    EXPECT_TRUE(
        encoder->setBuffer(buffers.back(), 0, static_cast<int>(i)).ok());
  }
  for (const isa::ThreadgroupArgument& t :
       function.value()->kernel().threadgroup_arguments) {
    EXPECT_TRUE(
        encoder->setThreadgroupMemoryLength(launch.threadgroup_length, t.index)
            .ok());
  }
  if (Status s = encoder->dispatchThreads(launch.grid, launch.group); !s.ok()) {
    out.setup_error = s.error().message;
    return out;
  }
  commands->commit();
  if (const CommandBufferError* e = commands->error()) {
    out.ok = false;
    out.fault = e->message;
  }
  if (!commands->dispatches().empty()) {
    out.instructions = commands->dispatches()[0].instructions;
    out.lane_instructions = commands->dispatches()[0].lane_instructions;
    out.jit_note = commands->dispatches()[0].executor_note;
    if (const auto& check = commands->dispatches()[0].check) {
      for (const emu::Finding& f : check->findings) {
        out.findings += f.Describe(check->kernel) + "\n";
      }
    }
    if (const auto& timing = commands->dispatches()[0].timing) {
      out.cycles = timing->cycles;
      out.register_cache_miss_cycles = timing->register_cache_miss_cycles;
      out.bank_conflict_cycles = timing->threadgroup_bank_conflict_cycles;
      out.l1_bytes = timing->l1_bytes;
      out.by_unit = timing->instructions_by_unit;
      out.timed_lane_instructions = timing->lane_instructions;
      out.flops = timing->flops;
    }
  }
  for (const auto& b : buffers) {
    const auto* p = static_cast<const uint8_t*>(b->contents());
    out.buffers.emplace_back(p, p + b->length());
  }
  return out;
}

// What the JIT compiled, summed over the kernels ExpectSame ran.
struct Compiled {
  int whole = 0;     // kernels compiled whole (DecodedKernel::groups)
  int if_thens = 0;  // if-thens compiled with the run before them
  int if_elses = 0;  // if-elses compiled with the run before them
  int phased = 0;    // kernels compiled a phase at a time
  int alu_only = 0;  // compiled code that timed mode runs too
};

// Both executors, compared (in timed mode, what the timing model made of
// them too). Returns false when the kernel did not run (set-up error, the
// same on both). Adds what the JIT compiled to `compiled`.
template <class MakeLibrary>
bool ExpectSame(const std::string& what, MakeLibrary make,
                const std::string& kernel, const Launch& launch,
                Compiled* compiled = nullptr) {
  const Outcome interpreted =
      RunOn(emu::Executor::kInterpreter, make, kernel, launch);
  const Outcome jitted = RunOn(emu::Executor::kJit, make, kernel, launch);
  if (compiled != nullptr) {
    compiled->whole += jitted.whole;
    compiled->if_thens += jitted.if_thens;
    compiled->if_elses += jitted.if_elses;
    compiled->phased += jitted.phased;
    compiled->alu_only += jitted.alu_only;
  }
  EXPECT_EQ(interpreted.setup_error, jitted.setup_error) << what;

  if (!interpreted.setup_error.empty()) return false;
  EXPECT_EQ(jitted.jit_note, "") << what;
  EXPECT_EQ(interpreted.ok, jitted.ok) << what;
  // A timeout stops where the clock says: nothing to compare.
  if (interpreted.fault.find("timed out") != std::string::npos ||
      jitted.fault.find("timed out") != std::string::npos) {
    return false;
  }
  EXPECT_EQ(interpreted.fault, jitted.fault) << what;
  EXPECT_EQ(interpreted.instructions, jitted.instructions) << what;
  EXPECT_EQ(interpreted.lane_instructions, jitted.lane_instructions) << what;
  EXPECT_EQ(interpreted.cycles, jitted.cycles) << what;
  EXPECT_EQ(interpreted.register_cache_miss_cycles,
            jitted.register_cache_miss_cycles)
      << what;
  EXPECT_EQ(interpreted.bank_conflict_cycles, jitted.bank_conflict_cycles)
      << what;
  EXPECT_EQ(interpreted.l1_bytes, jitted.l1_bytes) << what;
  EXPECT_EQ(interpreted.by_unit, jitted.by_unit) << what;
  EXPECT_EQ(interpreted.timed_lane_instructions, jitted.timed_lane_instructions)
      << what;
  EXPECT_EQ(interpreted.flops, jitted.flops) << what;
  EXPECT_EQ(interpreted.findings, jitted.findings) << what;
  EXPECT_EQ(interpreted.buffers.size(), jitted.buffers.size()) << what;
  for (size_t i = 0; i < interpreted.buffers.size(); ++i) {
    const auto& a = interpreted.buffers[i];
    const auto& b = jitted.buffers[i];
    if (a == b) continue;
    size_t first = 0;
    while (first < a.size() && a[first] == b[first]) ++first;
    ADD_FAILURE() << what << ": buffer " << i << " differs first at byte "
                  << first;
  }
  return true;
}

// 32-bit patterns that find the edges: NaNs (quiet, signaling, negative),
// infinities, zeros of both signs, denormals, INT_MIN, all ones, small
// integers, ordinary floats.
uint32_t Interesting(std::mt19937& rng) {
  static const uint32_t kSpecial[] = {
      0x7fc00000u, 0x7f800001u, 0xffc00123u, 0x7f800000u, 0xff800000u,
      0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x7fffffffu,
      0xffffffffu, 0x3f800000u, 0xbf800000u, 0x00800000u, 31u,
      32u,         33u,         0xfffffffeu};
  switch (rng() % 4) {
    case 0:
      return kSpecial[rng() % std::size(kSpecial)];
    case 1:
      return rng() % 64;
    case 2:
      return std::bit_cast<uint32_t>(
          std::uniform_real_distribution<float>(-100, 100)(rng));
    default:
      return static_cast<uint32_t>(rng());
  }
}

// --- random ISA programs
// ------------------------------------------------------

constexpr int kValues = 8;  // r1..r8 are loaded, computed on, stored

std::string Reg(int r) { return "r" + std::to_string(r); }

// The kinds of RandomInstruction: all, or those that touch no memory and
// that the JIT inlines.
constexpr int kAllKinds = 20;
constexpr int kInlinedAluKinds = 9;

// One random instruction on r1..r8 (r9..r11 as scratch), of the kinds the
// JIT inlines and a few it calls: the first `kinds` of them.
std::string RandomInstruction(std::mt19937& rng, int kinds = kAllKinds) {
  static const char* kTypes[] = {"f32", "i32", "u32"};
  const std::string t = kTypes[rng() % 3];
  const bool f = t == "f32";
  const auto any = [&] { return Reg(1 + static_cast<int>(rng() % kValues)); };
  const std::string d = any();
  switch (rng() % kinds) {
    case 0: {
      static const char* kOps[] = {"add", "sub", "mul", "min", "max"};
      return std::string(kOps[rng() % 5]) + "." + t + " " + d + ", " + any() +
             ", " + any();
    }
    case 1:
      return f ? "fma.f32 " + d + ", " + any() + ", " + any() + ", " + any()
               : "mad." + t + " " + d + ", " + any() + ", " + any() + ", " +
                     any();
    case 2: {
      static const char* kOps[] = {"abs", "neg", "mov"};
      std::string op = kOps[rng() % 3];
      if (op != "mov" && t == "u32") op = "mov";
      return op + "." + t + " " + d + ", " + any();
    }
    case 3: {
      static const char* kOps[] = {"and", "or", "xor", "shl", "shr"};
      const std::string it = f ? "u32" : t;
      return std::string(kOps[rng() % 5]) + "." + it + " " + d + ", " + any() +
             ", " + any();
    }
    case 4:
      return "not." + std::string(f ? "u32" : t) + " " + d + ", " + any();
    case 5:
    case 6: {
      static const char* kOps[] = {"eq", "ne", "lt", "le", "gt", "ge"};
      return std::string(kOps[rng() % 6]) + "." + t + " " + d + ", " + any() +
             ", " + any();
    }
    case 7:
      return "select." + t + " " + d + ", " + any() + ", " + any() + ", " +
             any();
    case 8:  // an immediate operand
      return "add." + t + " " + d + ", " + any() + ", " +
             (f ? "1.5" : std::to_string(rng() % 100));
    case 9:  // called: division
      return "div." + t + " " + d + ", " + any() + ", " + any();
    case 10:  // called: a conversion
      return f ? "cvt.i32.f32 " + d + ", " + any()
               : "cvt.f32." + t + " " + d + ", " + any();
    case 11:  // called: a load in the middle of a run
      return "and.u32 r9, " + any() + ", 63\n    ld.device.u32 " + d +
             ", [u0 + r9*4]";
    case 12:  // called: a cross-lane read
      return "simd_shuffle_xor.u32 " + d + ", " + any() + ", 1";
    case 14:  // a coalesced load where every lane is active
      return "add.u32 r9, r0, " + std::to_string(rng() % 64) +
             "\n    ld.device.u32 " + d + ", [u0 + r9*4]";
    case 15:  // and store, into the input (compared too)
      return "add.u32 r9, r0, " + std::to_string(rng() % 64) +
             "\n    st.device.u32 [u0 + r9*4], " + any();
    // Threadgroup memory (1 KB) in the shapes the JIT tells apart.
    case 16:  // the same 16 words in each half of the SIMD group
      return "and.u32 r9, r0, 15\n    ld.threadgroup.u32 " + d + ", [r9*4 + " +
             std::to_string(4 * (rng() % 240)) + "]";
    case 17:  // one word per half (as a base, the displacement below it)
      return "shr.u32 r9, r0, 4\n    and.u32 r9, r9, 7\n    shl.u32 r9, r9, "
             "2\n    add.u32 r9, r9, 64\n    ld.threadgroup.u32 " +
             d + ", [r9 - " + std::to_string(4 * (rng() % 16)) + "]";
    case 18:  // consecutive words, stored
      return "and.u32 r9, r0, 63\n    st.threadgroup.u32 [r9*4 + " +
             std::to_string(4 * (rng() % 192)) + "], " + any();
    case 19:  // anywhere
      return "and.u32 r9, " + any() + ", 255\n    ld.threadgroup.u32 " + d +
             ", [r9*4]";
    default:
      return "mul.f32 " + d + ", " + any() + ", " + any();
  }
}

// Where a faulting program goes out of bounds.
enum class Fault {
  kNone,
  kLastTimeRound,
  kFarPastTheEnd,
  kAcrossTheEnd,
  kThreadgroupEnd,
  kThreadgroupStart,
};
constexpr int kFaults = 5;

// A straight program (no branch: one run and then `exit`, which the JIT
// compiles whole) on a grid `width` threads wide and `height` high, whose
// values also take in the special registers.
struct Straight {
  uint32_t width = 0;
  uint32_t height = 1;
};

// Every special register: those that differ between the SIMD groups of a
// threadgroup and those that do not.
const char* const kSpecials[] = {"thread_position_in_grid.x",
                                 "thread_position_in_grid.y",
                                 "thread_position_in_grid.z",
                                 "thread_position_in_threadgroup.x",
                                 "thread_position_in_threadgroup.y",
                                 "thread_position_in_threadgroup.z",
                                 "thread_index_in_threadgroup",
                                 "thread_index_in_simdgroup",
                                 "thread_index_in_quadgroup",
                                 "quadgroup_index_in_threadgroup",
                                 "threadgroup_position_in_grid.x",
                                 "threadgroup_position_in_grid.y",
                                 "threadgroup_position_in_grid.z",
                                 "threads_per_threadgroup.x",
                                 "threads_per_threadgroup.y",
                                 "threads_per_threadgroup.z",
                                 "simdgroup_index_in_threadgroup",
                                 "simdgroups_per_threadgroup",
                                 "threads_per_grid.y",
                                 "quadgroups_per_threadgroup"};

// Blocks of random instructions (RandomInstruction's first `kinds`), some
// on part of the SIMD group, some loops; with `fault`, one that goes out of
// bounds; with `straight`, one run and then `exit`.
std::string RandomProgram(std::mt19937& rng, Fault fault,
                          const Straight* straight = nullptr,
                          int kinds = kAllKinds) {
  std::ostringstream s;
  s << ".kernel k\n"
    << ".buffer 0 u0 device uint in\n"
    << ".buffer 1 u2 device uint out\n"
    << ".threadgroup_memory 1024\n"
    << "    mov.u32 r0, %thread_position_in_grid.x\n";
  if (straight != nullptr) {
    // r0: the thread's number in the grid, x fastest.
    s << "    mov.u32 r12, %thread_position_in_grid.z\n"
      << "    mul.u32 r12, r12, " << straight->height << "\n"
      << "    mov.u32 r13, %thread_position_in_grid.y\n"
      << "    add.u32 r12, r12, r13\n"
      << "    mul.u32 r12, r12, " << straight->width << "\n"
      << "    add.u32 r0, r0, r12\n";
  }
  s << "    shl.u32 r10, r0, 3\n";
  for (int v = 1; v <= kValues; ++v) {
    s << "    add.u32 r11, r10, " << (v - 1) << "\n"
      << "    ld.device.u32 " << Reg(v) << ", [u0 + r11*4]\n";
  }
  if (straight != nullptr) {
    for (size_t i = 0; i < std::size(kSpecials); ++i) {
      const std::string v = Reg(1 + static_cast<int>(i % kValues));
      s << "    mov.u32 r12, %" << kSpecials[i] << "\n"
        << "    mul.u32 " << v << ", " << v << ", 31\n"
        << "    xor.u32 " << v << ", " << v << ", r12\n";
    }
  }
  const int blocks = straight ? 1 : 1 + static_cast<int>(rng() % 4);
  for (int b = 0; b < blocks; ++b) {
    // Some blocks run on part of the SIMD group only.
    const bool divergent = straight == nullptr && rng() % 2 == 0;
    if (divergent) {
      s << "    and.u32 r12, r0, " << (1 + rng() % 7) << "\n"
        << "    bnz r12, skip" << b << ", skip" << b << "\n";
    }
    // Some are loops (counted down in r13): as many times round in every
    // lane (the JIT goes round in compiled code), or 1 to 4 times by lane.
    int loop = static_cast<int>(rng() % 3);  // none, uniform, by lane
    if (straight != nullptr) {
      loop = 0;
    } else if (b == blocks - 1 && fault == Fault::kLastTimeRound && loop == 0) {
      loop = 1;
    } else if (b == blocks - 1 && fault > Fault::kLastTimeRound) {
      loop = 0;
    }
    if (loop == 1) s << "    mov.u32 r13, " << (2 + rng() % 5) << "\n";
    if (loop == 2) {
      s << "    and.u32 r13, r0, 3\n"
        << "    add.u32 r13, r13, 1\n";
    }
    if (loop != 0) s << "loop" << b << ":\n";
    const int n = 2 + static_cast<int>(rng() % 24);
    for (int i = 0; i < n; ++i)
      s << "    " << RandomInstruction(rng, kinds) << "\n";
    if (fault != Fault::kNone && b == blocks - 1) {
      // Past the end for some lanes, between inlined instructions.
      switch (fault) {
        case Fault::kNone:
        case Fault::kLastTimeRound:  // in a loop: the last time round only
          s << "    eq.u32 r9, r13, 1\n"
            << "    mul.u32 r9, r9, 100000\n"
            << "    add.u32 r9, r9, r0\n";
          break;
        case Fault::kFarPastTheEnd:
          s << "    add.u32 r9, r0, 100000\n";
          break;
        case Fault::kAcrossTheEnd:
          // Across the end of `in` (512 threads x 8 words) in the last
          // SIMD group only: the ones before found the region first.
          s << "    add.u32 r9, r0, 3600\n";
          break;
        case Fault::kThreadgroupEnd:  // from lane 6 of each row on
          s << "    and.u32 r9, r0, 15\n"
            << "    ld.threadgroup.u32 r1, [r9*4 + 1000]\n";
          break;
        case Fault::kThreadgroupStart:  // lanes 0 and 1 of each row wrap
          s << "    and.u32 r9, r0, 15\n"
            << "    shl.u32 r9, r9, 2\n"
            << "    ld.threadgroup.u32 r1, [r9 - 8]\n";
          break;
      }
      s << "    ld.device.u32 r1, [u0 + r9*4]\n"
        << "    add.u32 r2, r2, r1\n";
    }
    if (loop != 0) {
      s << "    sub.u32 r13, r13, 1\n";
      if (rng() % 2 == 0) {
        s << "    ne.u32 r14, r13, 0\n"
          << "    bnz r14, loop" << b << ", done" << b << "\n";
      } else {
        s << "    eq.u32 r14, r13, 0\n"
          << "    bz r14, loop" << b << ", done" << b << "\n";
      }
      s << "done" << b << ":\n";
    }
    if (divergent) s << "skip" << b << ":\n";
  }
  if (straight != nullptr) {
    // r15 read before it is written, after a handler call: the lane file
    // must hold zero there, in every SIMD group, though the handler calls
    // of the SIMD group before wrote r15 to it.
    s << "    div.u32 r9, r1, r2\n"
      << "    add.u32 r3, r3, r15\n"
      << "    mov.u32 r15, r4\n"
      << "    div.u32 r9, r1, r2\n";
    // Special registers read again after a handler call: from the lane
    // file, which must hold this SIMD group's.
    for (const char* special :
         {"thread_position_in_grid.x", "thread_position_in_threadgroup.y",
          "thread_index_in_threadgroup", "simdgroup_index_in_threadgroup"}) {
      s << "    mov.u32 r12, %" << special << "\n"
        << "    add.u32 r5, r5, r12\n";
    }
  }
  for (int v = 1; v <= kValues; ++v) {
    s << "    add.u32 r11, r10, " << (v - 1) << "\n"
      << "    st.device.u32 [u2 + r11*4], " << Reg(v) << "\n";
  }
  s << "    exit\n.end\n";
  return s.str();
}

Launch RandomLaunch(std::mt19937& rng, uint64_t threads) {
  Launch l;
  std::vector<uint32_t> in(threads * kValues);
  for (uint32_t& x : in) x = Interesting(rng);
  l.buffers.resize(2);
  l.buffers[0].resize(in.size() * 4);
  std::memcpy(l.buffers[0].data(), in.data(), l.buffers[0].size());
  l.buffers[1].assign(in.size() * 4, 0xab);
  l.grid = {threads, 1, 1};
  l.group = {64, 1, 1};
  return l;
}

TEST(ExecutorDifferentialTest, RandomIsaProgramsGiveTheSameBits) {
  std::mt19937 rng(20261128);
  int ran = 0;
  for (int program = 0; program < 100; ++program) {
    const std::string text = RandomProgram(rng, Fault::kNone);
    const Launch launch = RandomLaunch(rng, 200);  // a partial last group
    const auto make = [&](Device& device) {
      return device.newLibraryWithISA(text, "random.s");
    };
    ran += ExpectSame("program " + std::to_string(program) + ":\n" + text, make,
                      "k", launch);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_EQ(ran, 100);
}

TEST(ExecutorDifferentialTest, FaultsInCompiledRunsStopAtTheSameInstruction) {
  std::mt19937 rng(7);
  for (int program = 0; program < 30; ++program) {
    const std::string text =
        RandomProgram(rng, static_cast<Fault>(1 + program % kFaults));
    const Launch launch = RandomLaunch(rng, 512);
    const auto make = [&](Device& device) {
      return device.newLibraryWithISA(text, "random.s");
    };
    const Outcome interpreted =
        RunOn(emu::Executor::kInterpreter, make, "k", launch);
    ASSERT_FALSE(interpreted.ok) << "the program should fault:\n" << text;
    ExpectSame("program " + std::to_string(program) + ":\n" + text, make, "k",
               launch);
    if (::testing::Test::HasFailure()) break;
  }
}

// Straight kernels run whole in compiled code (DecodedKernel::groups):
// threadgroups of one, two and three dimensions (the SIMD groups wrap into
// the next row and plane), and widths that are not a multiple of 32 (each
// SIMD group on its own), with and without faults in a later SIMD group.
TEST(ExecutorDifferentialTest, StraightKernelsRunWholeWithTheSameBits) {
  struct Shape {
    MTLSize grid, group;
  };
  const Shape kShapes[] = {
      {{512, 1, 1}, {64, 1, 1}},  {{256, 2, 1}, {128, 2, 1}},
      {{64, 4, 2}, {32, 3, 2}},   {{96, 2, 2}, {96, 1, 2}},
      {{64, 8, 1}, {16, 4, 1}},   {{100, 5, 1}, {48, 2, 1}},
      {{512, 1, 1}, {512, 1, 1}},
  };
  std::mt19937 rng(42);
  Compiled compiled;
  for (int program = 0; program < 14; ++program) {
    const Shape& shape = kShapes[program % std::size(kShapes)];
    const Straight straight{static_cast<uint32_t>(shape.grid.width),
                            static_cast<uint32_t>(shape.grid.height)};
    // Every other program faults, past the end of `in` in the last SIMD
    // group, or of threadgroup memory in every SIMD group.
    const Fault fault = program % 2 == 0   ? Fault::kNone
                        : program % 4 == 1 ? Fault::kAcrossTheEnd
                                           : Fault::kThreadgroupEnd;
    const std::string text = RandomProgram(rng, fault, &straight);
    const uint64_t threads =
        shape.grid.width * shape.grid.height * shape.grid.depth;
    Launch launch = RandomLaunch(rng, threads);
    launch.grid = shape.grid;
    launch.group = shape.group;
    const auto make = [&](Device& device) {
      return device.newLibraryWithISA(text, "straight.s");
    };
    const std::string what =
        "program " + std::to_string(program) + ":\n" + text;
    // kAcrossTheEnd assumes 512 threads: it faults in the last SIMD group.
    if (fault != Fault::kNone) {
      EXPECT_FALSE(RunOn(emu::Executor::kInterpreter, make, "k", launch).ok)
          << what;
    }
    ExpectSame(what, make, "k", launch, &compiled);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_EQ(compiled.whole, 14);  // every one was compiled whole
}

// Indices that count on from lane to lane (a special register along x, plus
// or minus what is the same in every lane): the JIT takes their accesses'
// span from lane 0 without looking at the other lanes. Also indices that
// do not count (descending, doubled) and those that wrap past 0 or 2^32,
// signed and unsigned, near both ends of the buffers: the same bits,
// faults and counts as the interpreter.
TEST(ExecutorDifferentialTest, CountingIndicesGiveTheSameBitsAndFaults) {
  struct Shape {
    MTLSize grid, group;
  };
  const Shape kShapes[] = {
      {{512, 1, 1}, {64, 1, 1}},
      {{64, 4, 2}, {32, 2, 2}},
      {{200, 1, 1}, {64, 1, 1}},  // a last threadgroup the JIT leaves
  };
  const char* const kCounting[] = {"thread_position_in_grid.x",
                                   "thread_position_in_threadgroup.x",
                                   "thread_index_in_threadgroup"};
  std::mt19937 rng(1129);
  Compiled compiled;
  int faulted = 0;
  for (int program = 0; program < 60; ++program) {
    const Shape& shape = kShapes[program % std::size(kShapes)];
    const uint64_t threads =
        shape.grid.width * shape.grid.height * shape.grid.depth;
    const auto k = [&](uint32_t most) { return std::to_string(rng() % most); };
    // r9 from r0 (counting) and r8 (the same in every lane).
    const auto index = [&]() -> std::string {
      switch (rng() % 9) {
        case 0:
          return "add.u32 r9, r0, " + k(80);
        case 1:  // the same value first
          return "mov.u32 r8, " + k(80) + "\n    add.u32 r9, r8, r0";
        case 2:  // below 0 in the first lanes of the grid
          return "sub.u32 r9, r0, " + k(40);
        case 3:  // counting plus a row's worth
          return "mov.u32 r8, %thread_position_in_grid.y\n"
                 "    shl.u32 r8, r8, 6\n"
                 "    add.u32 r9, r0, r8\n    add.u32 r9, r9, " +
                 k(8);
        case 4:  // descending (with the displacement, in bounds at first)
          return "mov.u32 r8, " + k(60) + "\n    sub.u32 r9, r8, r0";
        case 5:  // every other word
          return "add.u32 r9, r0, r0";
        case 7:  // the same word in every lane of a row
          return "mov.u32 r9, %thread_position_in_grid.y";
        case 6:  // near 2^32: wraps within the SIMD group
          return "add.u32 r9, r0, " +
                 std::to_string(4294967296ull - 1 - rng() % 40);
        default:  // chains of both
          return "add.u32 r9, r0, " + k(60) + "\n    sub.u32 r9, r9, " + k(60);
      }
    };
    // The index signed or not, and a displacement of 0 to 64 words.
    const auto operand = [&] {
      return std::string(rng() % 2 ? "sext(r9)" : "r9") + "*4 + " +
             std::to_string(4 * (rng() % 65));
    };
    std::ostringstream s;
    s << ".kernel k\n"
      << ".buffer 0 u0 device uint in\n"
      << ".buffer 1 u2 device uint out\n"
      << "    mov.u32 r0, %" << kCounting[rng() % std::size(kCounting)] << "\n"
      << "    " << index() << "\n"
      << "    ld.device.u32 r1, [u0 + " << operand() << "]\n"
      << "    " << index() << "\n"
      << "    ld.device.u32 r2, [u0 + " << operand() << "]\n"
      << "    add.u32 r1, r1, r2\n"
      << "    " << index() << "\n"
      << "    st.device.u32 [u2 + " << operand() << "], r1\n"
      << "    exit\n.end\n";
    const std::string text = s.str();
    // Both buffers hold the grid's words and 64 more (the most a
    // displacement adds).
    Launch launch;
    for (int b = 0; b < 2; ++b) {
      std::vector<uint32_t> words(threads + 64);
      for (uint32_t& w : words) w = static_cast<uint32_t>(rng());
      launch.buffers.emplace_back(words.size() * 4);
      std::memcpy(launch.buffers.back().data(), words.data(),
                  launch.buffers.back().size());
    }
    launch.grid = shape.grid;
    launch.group = shape.group;
    const auto make = [&](Device& device) {
      return device.newLibraryWithISA(text, "counting.s");
    };
    const std::string what =
        "program " + std::to_string(program) + ":\n" + text;
    faulted += !RunOn(emu::Executor::kInterpreter, make, "k", launch).ok;
    ExpectSame(what, make, "k", launch, &compiled);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_EQ(compiled.whole, 60);
  // Some fault, most do not.
  EXPECT_GT(faulted, 5);
  EXPECT_LT(faulted, 45);
}

// A program of if-thens, which the JIT runs with the run before each
// (IfThenEnd): conditions that hold in some lanes, all or none, `bz` and
// `bnz`, two that share their join, one right after a barrier (no run
// before it), a reduction's step between barriers, an if-else (IfElseEnd;
// the way that falls through maybe empty) and an early return to `exit`;
// with `fault`, past the end of `in` in the lanes of one body or way.
// With `phases`, no if-then inside another, a fault may come before a
// branch as well, and not every join has a barrier: threadgroup barriers
// cut the program into chains of runs, if-thens and if-elses
// (DecodedKernel::phases). `kinds`: RandomInstruction's, for the
// bodies.
std::string IfThenProgram(std::mt19937& rng, bool fault, bool phases = false,
                          int kinds = kAllKinds) {
  std::ostringstream s;
  s << ".kernel k\n"
    << ".buffer 0 u0 device uint in\n"
    << ".buffer 1 u2 device uint out\n"
    << ".threadgroup_memory 1024\n"
    << "    mov.u32 r0, %thread_position_in_grid.x\n"
    << "    mov.u32 r15, %thread_position_in_threadgroup.x\n"
    << "    shl.u32 r10, r0, 3\n";
  for (int v = 1; v <= kValues; ++v) {
    s << "    add.u32 r11, r10, " << (v - 1) << "\n"
      << "    ld.device.u32 " << Reg(v) << ", [u0 + r11*4]\n";
  }
  const auto condition = [&]() -> std::string {
    switch (rng() % 4) {
      case 0:
        return "and.u32 r12, r0, " + std::to_string(1 + rng() % 7);
      case 1:  // whole SIMD groups, or part of one
        return "lt.u32 r12, r15, " + std::to_string(rng() % 80);
      case 2:  // on the data: NaNs and all
        return "gt.f32 r12, " + Reg(1 + static_cast<int>(rng() % kValues)) +
               ", 1.5";
      default:
        return "eq.u32 r12, r0, r0";  // every lane
    }
  };
  const auto branch = [&](const std::string& join) {
    return std::string(rng() % 2 ? "bz" : "bnz") + " r12, " + join + ", " +
           join;
  };
  const auto body = [&](int n) {
    for (int i = 0; i < n; ++i)
      s << "    " << RandomInstruction(rng, kinds) << "\n";
  };
  const int blocks = 2 + static_cast<int>(rng() % 4);
  const int faulty = fault ? static_cast<int>(rng() % blocks) : -1;
  const bool fault_before = phases && rng() % 2 == 0;
  const auto faulting_load = [&] {
    s << "    add.u32 r9, r0, 100000\n"
      << "    ld.device.u32 r1, [u0 + r9*4]\n";
  };
  for (int b = 0; b < blocks; ++b) {
    const std::string join = "join" + std::to_string(b);
    if (b == faulty && fault_before) faulting_load();
    bool faulted = b == faulty && fault_before;
    switch (phases ? 1 + rng() % 4 : rng() % 5) {
      case 4: {  // an if-else: the way that falls through, its `br`, then
                 // the taken way (the body below)
        const std::string taken = "taken" + std::to_string(b);
        s << "    " << condition() << "\n    " << (rng() % 2 ? "bz" : "bnz")
          << " r12, " << taken << ", " << join << "\n";
        body(static_cast<int>(rng() % 4));
        if (b == faulty && !faulted && rng() % 2 == 0) {
          faulting_load();
          faulted = true;
        }
        s << "    br " << join << "\n" << taken << ":\n";
        break;
      }
      case 0:  // two if-thens, the second in the first's body, one join
        s << "    " << condition() << "\n    " << branch(join) << "\n";
        body(1 + static_cast<int>(rng() % 4));
        s << "    " << condition() << "\n    " << branch(join) << "\n";
        break;
      case 1:  // a barrier, then the branch alone
        s << "    " << condition() << "\n"
          << "    threadgroup_barrier.mem_threadgroup\n"
          << "    " << branch(join) << "\n";
        break;
      case 2:  // a reduction's step: the lanes below a bound add a word
        s << "    st.threadgroup.u32 [r15*4], " << Reg(1 + b % kValues) << "\n"
          << "    threadgroup_barrier.mem_threadgroup\n"
          << "    lt.u32 r12, r15, " << (1 << (rng() % 6)) << "\n"
          << "    bz r12, " << join << ", " << join << "\n"
          << "    add.u32 r9, r15, 1\n"
          << "    ld.threadgroup.u32 r9, [r9*4]\n"
          << "    add.u32 " << Reg(1 + b % kValues) << ", "
          << Reg(1 + b % kValues) << ", r9\n";
        break;
      default:
        s << "    " << condition() << "\n    " << branch(join) << "\n";
        break;
    }
    body(1 + static_cast<int>(rng() % 12));
    if (b == faulty && !faulted) {
      faulting_load();
      body(1);
    }
    s << join << ":\n";
    // With `phases`, some joins go on without a barrier: a phase of
    // several runs, if-thens and if-elses.
    if (!phases || rng() % 3 != 0) {
      s << "    threadgroup_barrier.mem_threadgroup\n";
    }
  }
  // An early return for the threads past a bound, the rest storing.
  const std::string bound = std::to_string(100 + rng() % 150);
  s << (rng() % 2
            ? "    ge.u32 r12, r0, " + bound + "\n    bnz r12, out, out\n"
            : "    lt.u32 r12, r0, " + bound + "\n    bz r12, out, out\n");
  for (int v = 1; v <= kValues; ++v) {
    s << "    add.u32 r11, r10, " << (v - 1) << "\n"
      << "    st.device.u32 [u2 + r11*4], " << Reg(v) << "\n";
  }
  s << "out:\n    exit\n.end\n";
  return s.str();
}

TEST(ExecutorDifferentialTest, IfThensGiveTheSameBitsAndCounts) {
  std::mt19937 rng(1128);
  int ran = 0;
  int faulted = 0;
  Compiled compiled;
  for (int program = 0; program < 80; ++program) {
    const bool fault = program % 4 == 3;
    const std::string text = IfThenProgram(rng, fault);
    const Launch launch = RandomLaunch(rng, 200);  // a partial last group
    const auto make = [&](Device& device) {
      return device.newLibraryWithISA(text, "if_then.s");
    };
    const std::string what =
        "program " + std::to_string(program) + ":\n" + text;
    faulted += !RunOn(emu::Executor::kInterpreter, make, "k", launch).ok;
    ran += ExpectSame(what, make, "k", launch, &compiled);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_EQ(ran, 80);
  // Most of the 2 to 5 blocks' and the return's.
  EXPECT_GT(compiled.if_thens, 150);
  EXPECT_GT(compiled.if_elses, 40);
  EXPECT_GT(faulted, 5);  // a faulting body's condition may hold nowhere
}

// The same programs cut into phases by their barriers, compiled a phase
// at a time (DecodedKernel::phases) on threadgroups of whole SIMD groups:
// one to eight of them, in one and two dimensions, beside a partial last
// threadgroup that the interpreter runs.
TEST(ExecutorDifferentialTest, BarrierPhasesGiveTheSameBitsAndCounts) {
  const MTLSize kGroups[] = {{32, 1, 1}, {64, 1, 1}, {96, 1, 1},
                             {16, 4, 1}, {32, 3, 1}, {256, 1, 1}};
  std::mt19937 rng(1129);
  int ran = 0;
  Compiled compiled;
  int faulted = 0;
  for (int program = 0; program < 60; ++program) {
    const bool fault = program % 3 == 2;
    const std::string text = IfThenProgram(rng, fault, /*phases=*/true);
    const MTLSize group = kGroups[program % std::size(kGroups)];
    const uint64_t threads = group.width * group.height;
    // Three whole threadgroups, and every other time a partial fourth.
    Launch launch = RandomLaunch(rng, 3 * threads + (program % 2) * 8);
    launch.grid = {3 * group.width + (program % 2) * 8 / group.height,
                   group.height, 1};
    launch.group = group;
    const auto make = [&](Device& device) {
      return device.newLibraryWithISA(text, "phases.s");
    };
    const std::string what =
        "program " + std::to_string(program) + ":\n" + text;
    faulted += !RunOn(emu::Executor::kInterpreter, make, "k", launch).ok;
    ran += ExpectSame(what, make, "k", launch, &compiled);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_EQ(ran, 60);
  EXPECT_EQ(compiled.phased, 60);  // every one was cut into phases
  EXPECT_GT(faulted, 5);
}

// Timed mode runs the compiled code that touches no memory (loops gone
// round, if-thens) and records its instructions as the interpreter issues
// them: the timing model must see the same instructions, lanes and order.
TEST(ExecutorDifferentialTest, TimedModeSeesCompiledCodeAsTheInterpreter) {
  std::mt19937 rng(1130);
  Compiled compiled;
  for (int program = 0; program < 40; ++program) {
    // Every other one of inlined ALU instructions only.
    const int kinds = program % 4 < 2 ? kAllKinds : kInlinedAluKinds;
    const std::string text =
        program % 2 == 0
            ? RandomProgram(rng, Fault::kNone, nullptr, kinds)
            : IfThenProgram(rng, /*fault=*/false, /*phases=*/false, kinds);
    Launch launch = RandomLaunch(rng, 200);
    launch.timed = true;
    const auto make = [&](Device& device) {
      return device.newLibraryWithISA(text, "timed.s");
    };
    ExpectSame("program " + std::to_string(program) + ":\n" + text, make, "k",
               launch, &compiled);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(compiled.alu_only, 40);
}

// ISA kernel `k` of `text` on both executors (ExpectSame), compiled whole
// or a phase at a time (with a barrier); then the JIT's run, whose
// buffers the caller checks against a plain loop.
Outcome SameThenJitted(const std::string& text, bool barrier,
                       const Launch& launch) {
  const auto make = [&](Device& device) {
    return device.newLibraryWithISA(text, "kernel.s");
  };
  Compiled compiled;
  EXPECT_TRUE(ExpectSame(barrier ? "with a barrier" : "straight", make, "k",
                         launch, &compiled));
  EXPECT_EQ(compiled.whole + compiled.phased, 1);
  return RunOn(emu::Executor::kJit, make, "k", launch);
}

// A kernel compiled whole or a phase at a time whose piece of one SIMD
// group is longer than the instructions between two looks at the stop
// signal (StopSignal::kCheckInterval) runs, one SIMD group per look, and
// adds up as a plain loop does.
TEST(ExecutorDifferentialTest, PiecesLongerThanTheCheckIntervalRun) {
  const int adds = 2 * static_cast<int>(emu::StopSignal::kCheckInterval) + 600;
  for (const bool barrier : {false, true}) {
    std::ostringstream s;
    s << ".kernel k\n.buffer 0 u0 device uint in\n"
      << ".buffer 1 u2 device uint out\n"
      << "    mov.u32 r0, %thread_position_in_grid.x\n"
      << "    mov.u32 r1, r0\n";
    uint32_t sum = 0;
    for (int i = 0; i < adds; ++i) {
      if (barrier && i == adds / 2) {
        s << "    threadgroup_barrier.mem_threadgroup\n";
      }
      s << "    add.u32 r1, r1, " << (1 + i % 7) << "\n";
      sum += 1 + i % 7;
    }
    s << "    st.device.u32 [u2 + r0*4], r1\n    exit\n.end\n";
    const std::string text = s.str();
    Launch launch;
    launch.buffers.assign(2, std::vector<uint8_t>(256 * 4));
    launch.grid = {256, 1, 1};
    launch.group = {64, 1, 1};
    const Outcome jitted = SameThenJitted(text, barrier, launch);
    ASSERT_TRUE(jitted.ok) << jitted.fault;
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t v;
      std::memcpy(&v, jitted.buffers[1].data() + 4 * i, 4);
      ASSERT_EQ(v, i + sum) << "thread " << i;
    }
  }
}

// Loads just past the end of a buffer (threads 40 to 63 of each
// threadgroup of 64, SIMD group 1), straight and with a barrier: compiled
// whole or a phase at a time, the zeros, counts and findings (which name
// the SIMD group compiled code was running) are the interpreter's.
TEST(ExecutorDifferentialTest, NearBufferReadsAreTheInterpretersCompiled) {
  for (const bool barrier : {false, true}) {
    std::string text =
        ".kernel k\n.buffer 0 u0 device uint in\n"
        ".buffer 1 u2 device uint out\n"
        "    mov.u32 r0, %thread_position_in_grid.x\n"
        "    mov.u32 r1, %thread_position_in_threadgroup.x\n";
    if (barrier) text += "    threadgroup_barrier.mem_threadgroup\n";
    text +=
        "    ld.device.u32 r2, [u0 + r1*4]\n"
        "    add.u32 r2, r2, 1\n"
        "    st.device.u32 [u2 + r0*4], r2\n"
        "    exit\n.end\n";
    Launch launch;
    std::vector<uint32_t> in(40);
    for (uint32_t i = 0; i < 40; ++i) in[i] = 3 * i;
    launch.buffers = {std::vector<uint8_t>(4 * in.size()),
                      std::vector<uint8_t>(4 * 256)};
    std::memcpy(launch.buffers[0].data(), in.data(), 4 * in.size());
    launch.grid = {256, 1, 1};
    launch.group = {64, 1, 1};
    launch.out_of_bounds = emu::OutOfBoundsPolicy::kReport;
    const Outcome jitted = SameThenJitted(text, barrier, launch);
    ASSERT_TRUE(jitted.ok) << jitted.fault;
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t v;
      std::memcpy(&v, jitted.buffers[1].data() + 4 * i, 4);
      ASSERT_EQ(v, i % 64 < 40 ? 3 * (i % 64) + 1 : 1u) << "thread " << i;
    }
    EXPECT_NE(jitted.findings.find("simdgroup 1, lane 8"), std::string::npos)
        << jitted.findings;
    EXPECT_NE(jitted.findings.find("found 96 times"), std::string::npos)
        << jitted.findings;
  }
}

// SIMD groups that take turns at branches (the interleaved schedule) on a
// kernel with a race that order hides: each thread sums eight slots 25 to
// 32 on from its own in a loop (which the JIT compiles as a loop), and
// lanes 0 to 15 then overwrite their own in an if-then (compiled with the
// run before it), with no barrier between. Both executors step from branch
// to branch alike, so every SIMD group reads before any writes: the
// race-free sums, a plain loop's. Run one after the other, SIMD group 7
// reads the slots of SIMD group 0 after it overwrote them.
TEST(ExecutorDifferentialTest, InterleavedSimdGroupsAreTheSameCompiled) {
  const std::string text = R"(
.kernel k
.buffer 0 u0 device uint in
.buffer 1 u2 device uint out
.threadgroup_memory 1024
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r1, %thread_index_in_threadgroup
    mov.u32 r9, %thread_index_in_simdgroup
    ld.device.u32 r2, [u0 + r0*4]
    st.threadgroup.u32 [r1*4], r2
    threadgroup_barrier.mem_threadgroup
    mov.u32 r3, 0
    mov.u32 r4, 8
loop:
    add.u32 r5, r1, r4
    add.u32 r5, r5, 24
    and.u32 r5, r5, 255
    ld.threadgroup.u32 r6, [r5*4]
    add.u32 r3, r3, r6
    sub.u32 r4, r4, 1
    bnz r4, loop, done
done:
    lt.u32 r7, r9, 16
    bz r7, skip, skip
    st.threadgroup.u32 [r1*4], r3
skip:
    threadgroup_barrier.mem_threadgroup
    ld.threadgroup.u32 r8, [r1*4]
    st.device.u32 [u2 + r0*4], r8
    exit
.end
)";
  std::vector<uint32_t> in(512);
  for (uint32_t i = 0; i < 512; ++i) in[i] = i * 7 + 1;
  Launch launch;
  launch.buffers = {std::vector<uint8_t>(4 * 512),
                    std::vector<uint8_t>(4 * 512)};
  std::memcpy(launch.buffers[0].data(), in.data(), 4 * 512);
  launch.grid = {512, 1, 1};
  launch.group = {256, 1, 1};
  const auto make = [&](Device& device) {
    return device.newLibraryWithISA(text, "kernel.s");
  };
  ASSERT_TRUE(ExpectSame("interleaved", make, "k", launch));
  const Outcome interleaved = RunOn(emu::Executor::kJit, make, "k", launch);
  ASSERT_TRUE(interleaved.ok) << interleaved.fault;
  for (uint32_t i = 0; i < 512; ++i) {
    const uint32_t tg = i / 256 * 256, tid = i % 256;
    uint32_t want = in[i];
    if (tid % 32 < 16) {
      want = 0;
      for (uint32_t k = 1; k <= 8; ++k) want += in[tg + (tid + 24 + k) % 256];
    }
    uint32_t v;
    std::memcpy(&v, interleaved.buffers[1].data() + 4 * i, 4);
    ASSERT_EQ(v, want) << "thread " << i;
  }
  launch.schedule.order = emu::SimdgroupOrder::kSequential;
  ASSERT_TRUE(ExpectSame("sequential", make, "k", launch));
  EXPECT_NE(RunOn(emu::Executor::kJit, make, "k", launch).buffers[1],
            interleaved.buffers[1]);
  launch.schedule = {emu::SimdgroupOrder::kRandom, 3};
  ASSERT_TRUE(ExpectSame("random", make, "k", launch));
}

// A barrier missing between a write and a read of the next thread's slot,
// in one straight run: interleaved, the SIMD groups take turns before the
// read (DecodedInstruction::yield_before), so every thread reads what the
// next one wrote, on both executors.
TEST(ExecutorDifferentialTest, ReadsAfterWritesWaitForEverySimdGroup) {
  const std::string text = R"(
.kernel k
.buffer 0 u0 device uint out
.threadgroup_memory 1024
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r1, %thread_index_in_threadgroup
    st.threadgroup.u32 [r1*4], r0
    add.u32 r2, r1, 1
    and.u32 r2, r2, 255
    ld.threadgroup.u32 r3, [r2*4]
    st.device.u32 [u0 + r0*4], r3
    exit
.end
)";
  Launch launch;
  launch.buffers = {std::vector<uint8_t>(4 * 512)};
  launch.grid = {512, 1, 1};
  launch.group = {256, 1, 1};
  const auto make = [&](Device& device) {
    return device.newLibraryWithISA(text, "kernel.s");
  };
  ASSERT_TRUE(ExpectSame("interleaved", make, "k", launch));
  const Outcome jitted = RunOn(emu::Executor::kJit, make, "k", launch);
  for (uint32_t i = 0; i < 512; ++i) {
    uint32_t v;
    std::memcpy(&v, jitted.buffers[0].data() + 4 * i, 4);
    ASSERT_EQ(v, i / 256 * 256 + (i + 1) % 256) << "thread " << i;
  }
}

// A run that holds many values across many accesses: 48 loads into 48
// registers, then sums that read them back in reverse order, with a
// store after every tenth. The JIT writes its values back and reads them
// again every so often there (RunEmitter's window, which keeps LLVM's time
// linear); the sums are a plain loop's, straight and a phase at a time.
TEST(ExecutorDifferentialTest, ManyValuesHeldAcrossManyAccessesAddUp) {
  constexpr int kLoads = 48;
  constexpr uint32_t kThreads = 128;
  for (const bool barrier : {false, true}) {
    std::ostringstream s;
    s << ".kernel k\n.buffer 0 u0 device uint in\n"
      << ".buffer 1 u2 device uint out\n"
      << "    mov.u32 r0, %thread_position_in_grid.x\n";
    // Register 1 + k holds in[k * kThreads + thread] (+ k: a value the
    // load alone does not give).
    for (int k = 0; k < kLoads; ++k) {
      s << "    add.u32 r90, r0, " << k * kThreads << "\n"
        << "    ld.device.u32 r" << 1 + k << ", [u0 + r90*4]\n"
        << "    add.u32 r" << 1 + k << ", r" << 1 + k << ", " << k << "\n";
    }
    if (barrier) s << "    threadgroup_barrier.mem_threadgroup\n";
    s << "    mov.u32 r91, 0\n";
    for (int k = kLoads - 1; k >= 0; --k) {
      s << "    mul.u32 r92, r" << 1 + k << ", " << 2 * k + 1 << "\n"
        << "    add.u32 r91, r91, r92\n";
      if (k % 10 == 0) {
        s << "    add.u32 r90, r0, " << (k / 10) * kThreads << "\n"
          << "    st.device.u32 [u2 + r90*4], r91\n";
      }
    }
    s << "    exit\n.end\n";
    const std::string text = s.str();
    Launch launch;
    launch.buffers.assign(2, std::vector<uint8_t>(kLoads * kThreads * 4));
    std::mt19937 rng(7);
    std::vector<uint32_t> in(kLoads * kThreads);
    for (uint32_t& v : in) v = rng();
    std::memcpy(launch.buffers[0].data(), in.data(), in.size() * 4);
    launch.grid = {kThreads, 1, 1};
    launch.group = {64, 1, 1};
    const Outcome jitted = SameThenJitted(text, barrier, launch);
    ASSERT_TRUE(jitted.ok) << jitted.fault;
    for (uint32_t t = 0; t < kThreads; ++t) {
      uint32_t sum = 0;
      for (int k = kLoads - 1; k >= 0; --k) {
        sum += (in[k * kThreads + t] + k) * (2 * k + 1);
        if (k % 10 != 0) continue;
        uint32_t v;
        std::memcpy(
            &v, jitted.buffers[1].data() + 4 * ((k / 10) * kThreads + t), 4);
        ASSERT_EQ(v, sum) << "thread " << t << ", after register " << 1 + k;
      }
    }
  }
}

TEST(ExecutorDifferentialTest, AutoCompilesOnceADispatchIsBigEnough) {
  auto device = Device::Create("m1").value();
  device->options().executor = emu::Executor::kAuto;
  std::mt19937 rng(5);
  const std::string text = RandomProgram(rng, Fault::kNone);
  auto library = device->newLibraryWithISA(text, "random.s").value();
  auto pipeline =
      device->newComputePipelineState(library->newFunction("k").value())
          .value();
  const auto compiled = [](const emu::DecodedKernel& k) {
    for (const emu::DecodedInstruction& d : k.code) {
      if (d.jit != nullptr) return true;
    }
    return false;
  };
  EXPECT_FALSE(compiled(pipeline->kernelFor(emu::kJitMinWork - 1)));
  const emu::DecodedKernel& big = pipeline->kernelFor(emu::kJitMinWork);
  EXPECT_TRUE(compiled(big));
  EXPECT_EQ(big.jit_note, "");
  // Compiled once: the same copy from then on; small dispatches still
  // interpret.
  EXPECT_EQ(&pipeline->kernelFor(emu::kJitMinWork * 2), &big);
  EXPECT_EQ(&pipeline->kernelFor(1), &pipeline->decoded());
}

// --- the MSL corpus
// -------------------------------------------------------------

TEST(ExecutorDifferentialTest, MslCorpusGivesTheSameBits) {
  const std::filesystem::path dir =
      std::filesystem::path(MTLEMU_SOURCE_DIR) / "tests/compiler/msl_corpus";
  std::mt19937 rng(11);
  int kernels = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".metal") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str();
    const std::string file = entry.path().filename().string();
    const auto make = [&](Device& device) {
      return api::newLibraryWithSource(device, source, {}, file);
    };
    auto device = Device::Create("m1").value();
    auto library = make(*device);
    ASSERT_TRUE(library.ok()) << file << ": " << library.error().message;
    for (const std::string& name : library.value()->functionNames()) {
      const isa::Kernel& kernel =
          library.value()->newFunction(name).value()->kernel();
      // Every buffer random: small integers (sizes, counts) and edge
      // values; 64 KB each, so most indices stay in bounds.
      Launch launch;
      int buffers = 0;
      for (const isa::BufferArgument& b : kernel.buffers) {
        buffers = std::max(buffers, b.index + 1);
      }
      launch.buffers.resize(static_cast<size_t>(buffers));
      for (auto& b : launch.buffers) {
        for (int w = 0; w < 16384; ++w) {
          const uint32_t word = rng() % 2 ? rng() % 48 : Interesting(rng);
          for (int k = 0; k < 4; ++k) b.push_back(uint8_t(word >> (8 * k)));
        }
      }
      launch.grid = {1000, 1, 1};
      launch.group = {64, 1, 1};
      launch.threadgroup_length = 4096;
      kernels += ExpectSame(file + " " + name, make, name, launch);
    }
  }
  EXPECT_GT(kernels, 20);
}

}  // namespace
}  // namespace mtlemu
