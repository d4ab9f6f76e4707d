// The decoded form of an instruction and the state an instruction handler
// sees. A kernel is decoded once per pipeline into a dense array of
// DecodedInstruction; the hot loop never looks at text or tables.
#pragma once

#include <cstdint>

#include "emu/exec/fault.h"
#include "emu/memory/address_map.h"
#include "isa/instruction.h"

namespace mtlemu::emu {

class FindingSet;
class KernelChecker;
struct DecodedInstruction;

inline constexpr int kLanes = isa::kSimdWidth;
inline constexpr uint32_t kAllLanes = 0xffffffffu;
inline constexpr uint16_t kNoSlot = 0xffff;

// A device region as compiled code last found it (emu/jit/): the memory
// instructions of a kernel's runs each look in one of kJitRegions of these
// before they ask AddressMap::Find (a dispatch's map never changes).
// Empty: length 0.
struct JitRegion {
  uint64_t base = 0;
  uint64_t length = 0;
  uint8_t* host = nullptr;
};
inline constexpr int kJitRegions = 8;

// Where the lanes of an instruction read and write: the lane file of a SIMD
// group is an array of slots, each 32 lanes of 32 bits. Registers come
// first, then uniforms (splatted), special registers, immediates (splatted).
struct ExecContext {
  uint32_t* slots = nullptr;
  uint32_t mask = 0;  // active lanes

  const AddressMap* device = nullptr;  // the dispatch's device memory
  uint8_t* threadgroup_memory = nullptr;
  uint32_t threadgroup_memory_size = 0;
  uint8_t* thread_memory = nullptr;  // kLanes blocks of thread_memory_size
  uint32_t thread_memory_size = 0;

  Fault* fault = nullptr;  // set by an instruction that faults
  bool faulted = false;

  // The kernel checks (emu/check/): told of cross-lane reads and barriers
  // (null when no check is on), and of every threadgroup and device access
  // (memory_checker; null unless the race or init check is on).
  KernelChecker* checker = nullptr;
  KernelChecker* memory_checker = nullptr;

  // Device accesses just outside a buffer (near_buffer.h): recorded here,
  // with near_bytes standing in for their memory, under
  // OutOfBoundsPolicy::kReport; null under kFault (they fault). What a
  // finding names: the kernel's first instruction (for the pc), the
  // threadgroup's index in the grid, and the SIMD group running (the
  // runner sets it, and so does compiled code that runs several).
  FindingSet* near_buffer = nullptr;
  const DecodedInstruction* code = nullptr;
  uint64_t threadgroup_index = 0;
  uint32_t simdgroup = 0;
  alignas(16) uint8_t near_bytes[64];
  JitRegion jit_regions[kJitRegions];
  // Set by compiled code that streamed a store (streamed_stores.h).
  bool streamed = false;

  uint32_t* Slot(uint16_t s) const { return slots + s * kLanes; }
};

using Handler = void (*)(ExecContext&, const DecodedInstruction&);
// What a compiled run reports besides its return value. A loop: where the
// run is followed by a conditional branch back to its first instruction (a
// loop whose body is one run), the compiled code goes round again while
// every active lane takes the branch and the instructions of the times
// round (the run and the branch) fit in `budget`; `taken` says how often it
// went round. An if-then: where the run is followed by a forward
// conditional branch over one straight run to its reconvergence point (or
// the branch alone begins the compiled code), the code runs the branch and
// that body too, the body under the lanes that fall through; `head` is
// then the instructions up to and with the branch (0: no branch) and
// `body_mask` the lanes that ran the body (0: none did). An if-else: where
// the branch goes forward over one straight run ending in a `br` to its
// reconvergence point, to one straight run up to that point
// (IfElseEnd), the code runs both ways as the interpreter does, the
// taken one first: `body_mask` the lanes that took the branch and ran its
// target's run, `else_mask` those that fell through and ran the other run
// and its `br`.
struct JitTrips {
  uint64_t budget = 0;
  uint64_t taken = 0;
  uint32_t head = 0;
  uint32_t body_mask = 0;
  uint32_t else_mask = 0;
};

// A straight run compiled to native code (emu/jit/): runs the instructions
// from `pc` under ctx->mask (`code`: the kernel's first instruction),
// `trips->taken` times round its loop and once more, and returns the
// distance from `pc` to the instruction that comes next (the run's end, or
// an if-then's reconvergence point); when one faults (ctx->faulted),
// returns its index from `pc` instead, with its effects and those before it
// done, as the handlers would have left them.
using JitRun = uint32_t (*)(ExecContext* ctx, const DecodedInstruction* code,
                            JitTrips* trips);

// A kernel that is one straight run and then `exit`, compiled whole
// (emu/jit/): runs `count` SIMD groups of one threadgroup one after the
// other, from SIMD group `first`, every one with all 32 lanes live and in
// one row of the threadgroup (its width a multiple of 32). ctx->slots is a
// lane file that StartSimdGroup prepared for SIMD group `first`; the code
// writes the special registers that differ from one SIMD group to the next
// itself. `position` is the threadgroup position of SIMD group `first`'s
// lane 0, `size` the threadgroup's width and height, `base` the grid
// position of the threadgroup's thread (0,0,0).
struct JitGroups {
  uint32_t first = 0;
  uint32_t count = 0;
  uint32_t position[3] = {0, 0, 0};
  uint32_t size[2] = {0, 0};
  uint32_t base[3] = {0, 0, 0};
  uint32_t done = 0;  // out: the SIMD groups that ran to their exit
};

// Returns the run's length when all `count` SIMD groups ran; when one
// faults (ctx->faulted), `done` SIMD groups ran before it and the return
// value is the faulting instruction's index, as for JitRun.
using JitGroupRun = uint32_t (*)(ExecContext* ctx,
                                 const DecodedInstruction* code,
                                 JitGroups* groups);

// A kernel whose threadgroup barriers cut it into phases, each straight
// runs, each maybe with an if-then or an if-else after it (run_codegen.h's
// IfThenEnd, IfElseEnd), up to the next barrier or `exit`, compiled a
// phase at a time (emu/jit/): a phase's code runs `count` SIMD groups of
// one threadgroup one after the other, each with all 32 lanes live and its
// own lane file (`files[i]`: the i-th's, from StartSimdGroup or the phases
// before); ctx->mask is all lanes. `trips`: scratch for the branches'
// masks, as for JitRun. The code keeps ctx->simdgroup at the SIMD group
// running (`first` plus its place in `files`).
struct JitPhase {
  uint32_t* const* files = nullptr;
  uint32_t count = 0;
  uint32_t first = 0;  // the threadgroup's SIMD group of files[0]
  uint32_t done = 0;   // out: the SIMD groups that reached the phase's end
  JitTrips trips;
  // Added to: the instructions and lane-instructions run, the barrier or
  // `exit` at the end included, and those of a SIMD group that faulted,
  // the faulting one included.
  uint64_t instructions = 0;
  uint64_t lane_instructions = 0;
};

// Returns the distance from the phase's first instruction to its end (the
// barrier or `exit`) when all `count` SIMD groups got there; when one
// faults (ctx->faulted), `done` SIMD groups got there before it and the
// return value is the faulting instruction's index, as for JitRun.
using JitPhaseRun = uint32_t (*)(ExecContext* ctx,
                                 const DecodedInstruction* code,
                                 JitPhase* phase);

// What the executor does after (or instead of) calling the handler.
enum class Flow : uint8_t {
  kNext,      // run the handler, go on
  kMayFault,  // run the handler, check ctx.faulted, go on
  kBranch,
  kBranchNonZero,
  kBranchZero,
  kExit,
  kTrap,  // fault with FaultKind::kTrap
  kThreadgroupBarrier,
  kSimdgroupBarrier,
};

struct DecodedMemoryRef {
  uint16_t base = kNoSlot;   // slot of the base (and base+1 for 64 bits)
  uint16_t index = kNoSlot;  // slot of the 32-bit index
  bool index_signed = false;
  uint8_t scale = 1;
  int32_t displacement = 0;
  // The instruction's access, decoded once for the handlers.
  isa::AddressSpace space = isa::AddressSpace::kNone;
  bool wide_base = false;        // 64-bit addresses (device, constant)
  uint8_t vector = 1;            // elements per lane
  uint8_t regs_per_element = 1;  // 2 for 64-bit types
};

struct DecodedInstruction {
  Handler fn = nullptr;
  Flow flow = Flow::kNext;
  // It accesses an address space (isa::ShapeHasSpace): what the event
  // recorder asks of every instruction, kept here out of the shape table.
  bool accesses_memory = false;
  uint16_t slot[isa::kMaxOperands] = {kNoSlot, kNoSlot, kNoSlot, kNoSlot};
  DecodedMemoryRef mem;
  uint32_t target = 0;      // branches
  uint32_t reconverge = 0;  // conditional branches
  // The end (exclusive) of the straight run from here: instructions that
  // only call their handler (kNext, kMayFault), none of them but the first
  // a branch target or reconvergence point. Equal to this instruction's
  // pc where it is not such an instruction. SimdGroup::Run calls a run's
  // handlers back to back.
  uint32_t run_end = 0;
  // The run from here as native code (emu/jit/kernel_jit.h), or null; with
  // an if-then after it (JitTrips), or here where this is the branch.
  JitRun jit = nullptr;
  // The code that `jit` runs touches no memory and cannot fault: timed
  // mode runs it as well, recording its instructions in stretches.
  bool jit_alu_only = false;
  // The code that `jit` runs takes a branch too (an if-then's or an
  // if-else's): SIMD groups that take turns at every branch
  // (SimdGroup::Run's `step`) run the run's handlers instead.
  bool jit_branches = false;
  // A threadgroup read after a threadgroup write with no branch or barrier
  // between (unordered_accesses.h): stepping SIMD groups take turns before
  // it, so that all write before any reads (SimdGroup::Run then ends the
  // run's handlers there, and calls no compiled code across it).
  bool yield_before = false;
  const isa::Instruction* inst = nullptr;
};

}  // namespace mtlemu::emu
