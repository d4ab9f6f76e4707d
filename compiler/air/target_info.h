// What LLVM's loop optimizers are told about the GPU the ISA models: how
// far to unroll (fully and partially) and which addresses a load or store
// takes whole, so that loop strength reduction and the unroller's cost model
// see the code instruction selection will make. Everything else is LLVM's
// target-independent default. The thresholds and where they come from are
// in compiler/README.md ("Loops").
#pragma once

#include <llvm/Analysis/TargetTransformInfo.h>

namespace mtlemu::air {

// The registers a thread may use with 1024 threads in a threadgroup: the
// 208 KB register file (Mesa's agx_occupancy.c: 104 16-bit registers per
// thread still allow 1024 threads) over 1024 threads, in 32-bit registers.
// Apple's compiler keeps kernels at 1024 threads where it can: MLX
// dispatches 1024-thread groups to its row reductions without asking the
// pipeline (emu/device/compute_pipeline_state.cpp gives the limit).
inline constexpr int kFullOccupancyRegisters = 52;

// Full unrolling: a loop whose constant trip count is at most this many
// iterations, when the unrolled body costs at most kFullUnrollThreshold.
// Mesa's AGX compiler (src/asahi/compiler/agx_compile.h) fully unrolls up
// to 32 iterations; #pragma unroll asks beyond it.
inline constexpr unsigned kFullUnrollMaxTripCount = 32;
// LLVM's "aggressive" full-unroll threshold, the one AMDGPU's back end
// uses by default (twice LLVM's -O2 150).
inline constexpr unsigned kFullUnrollThreshold = 300;
// Partial and runtime unrolling: the unrolled body costs at most this
// (LLVM's default partial threshold) ...
inline constexpr unsigned kPartialUnrollThreshold = 150;
// ... and is at most this many copies of the original body. With a loop
// counter, its compare and its branch (3 instructions), 16 copies of a
// 4-instruction body spend 95% of the issue slots on the body.
inline constexpr unsigned kMaxPartialUnrollCount = 16;
// A loop whose trip count is known only at run time is unrolled at most
// this many times (LLVM's default), with a remainder loop after it.
inline constexpr unsigned kRuntimeUnrollCount = 8;

// The TargetTransformInfo of the modelled GPU, for a FunctionAnalysisManager
// (register it before PassBuilder::registerFunctionAnalyses).
llvm::TargetIRAnalysis GpuTargetAnalysis();

}  // namespace mtlemu::air
