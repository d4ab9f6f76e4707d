// LLVM IR for one straight run of a decoded kernel (emu/exec/decoded_kernel.h):
// a function that does what the run's handlers do back to back, with the
// common 32-bit ALU instructions inlined as 32-lane vector code that keeps
// register values in SSA form, and every other instruction a call to its
// own handler. Where the run is a loop's whole body (a conditional branch
// after it goes back to its start), the function goes round the loop while
// every active lane takes the branch (JitTrips), values that the body
// computes staying in registers; where an if-then follows it (IfThenEnd),
// the function runs that too. Bit for bit what the interpreter does
// (alu_semantics.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emu/exec/decoded_kernel.h"

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace mtlemu::emu {

// Whether the JIT inlines this instruction (else it calls its handler).
bool JitInlines(const DecodedInstruction& d);

// Where the conditional branch at `pc` begins an if-then that compiled
// code runs after the run before it (JitTrips): a forward branch to its
// own reconvergence point `join`, the lanes that fall through running one
// straight run up to `join`. Returns `join`, else 0.
uint32_t IfThenEnd(const DecodedKernel& kernel, uint32_t pc);

// Where the conditional branch at `pc` begins an if-else that compiled
// code runs after the run before it (JitTrips): a forward branch to one
// straight run up to its reconvergence point `join`, the lanes that fall
// through running one straight run (maybe empty) and then `br join`.
// Returns `join`, else 0.
uint32_t IfElseEnd(const DecodedKernel& kernel, uint32_t pc);

// Emits the run [begin, end) of `kernel` as `name` into `module`, with
// JitRun's signature (emu/exec/exec_context.h), and the if-then or
// if-else after it where there is one (`end` == `begin`: no run, the
// branch alone); null
// (and nothing emitted) if an instruction JitInlines accepts has no inline
// code, a defect of the emitter that then costs speed, not a wrong result.
llvm::Function* EmitRun(llvm::Module& module, const DecodedKernel& kernel,
                        uint32_t begin, uint32_t end, const std::string& name);

// Where threadgroup barriers cut `kernel` into phases (JitPhase): from the
// first instruction, each straight runs (maybe empty), each maybe with an
// if-then or an if-else after it (IfThenEnd, IfElseEnd), up to a
// threadgroup barrier, the last to `exit`. Returns them in order, their
// `run` null; empty where the kernel has another shape, or is one run and
// `exit` (EmitGroups' shape). A kernel without barriers whose runs have
// if-thens or if-elses between them is one phase.
std::vector<DecodedKernel::Phase> FindPhases(const DecodedKernel& kernel);

// Emits `phase` (one of FindPhases') as `name` with JitPhaseRun's
// signature; null as EmitRun.
llvm::Function* EmitPhase(llvm::Module& module, const DecodedKernel& kernel,
                          const DecodedKernel::Phase& phase,
                          const std::string& name);

// Emits the kernel, one straight run [0, end) and then `exit`, as `name`
// with JitGroupRun's signature (emu/exec/exec_context.h); null (and nothing
// emitted) if it reads a special register that differs between SIMD groups
// in a way the emitter does not know.
llvm::Function* EmitGroups(llvm::Module& module, const DecodedKernel& kernel,
                           uint32_t end, const std::string& name);

}  // namespace mtlemu::emu
