// The IR pipeline between the MSL front end and the back end: which
// functions survive, what the optimizers leave and what they must not.
// Kernels use OpenCL's address-space spellings so that the tests do not
// depend on the metal_stdlib shims.
#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/ExecutionEngine/ExecutionEngine.h>
#include <llvm/ExecutionEngine/GenericValue.h>
#include <llvm/ExecutionEngine/Interpreter.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/air/address_spaces.h"
#include "compiler/air/ir_legality.h"
#include "compiler/air/pipeline.h"
#include "compiler/msl/frontend.h"
#include "tests/support/test_kernels.h"

namespace mtlemu::air {
namespace {

// Compiles `source` and prepares the kernels named (all if none given).
msl::FrontendResult Prepare(const std::string& source,
                            std::vector<std::string> kernels = {}) {
  msl::FrontendResult r = msl::CompileMsl(source, "test.metal", {});
  EXPECT_TRUE(r.ok()) << isa::FormatDiagnostics(r.errors);
  if (!r.ok()) return r;
  if (kernels.empty()) {
    for (const msl::KernelDeclaration& k : r.kernels) {
      kernels.push_back(k.ir_name);
    }
  }
  std::string error;
  const Status s = PrepareModule(*r.module, kernels, &error);
  EXPECT_TRUE(s.ok()) << error;
  if (std::getenv("MTLEMU_PRINT_IR") != nullptr) {
    std::printf("%s\n", msl::PrintModule(*r.module).c_str());
  }
  return r;
}

int DefinedFunctions(const llvm::Module& m) {
  int n = 0;
  for (const llvm::Function& f : m) n += f.isDeclaration() ? 0 : 1;
  return n;
}

template <class T>
int Count(const llvm::Module& m) {
  int n = 0;
  for (const llvm::Function& f : m) {
    for (const llvm::BasicBlock& b : f) {
      for (const llvm::Instruction& i : b) n += llvm::isa<T>(i) ? 1 : 0;
    }
  }
  return n;
}

// Calls other than fused multiply-adds (which contraction makes of a * b + c
// under fast math).
int CallsBesidesFma(const llvm::Module& m) {
  int n = 0;
  for (const llvm::Function& f : m) {
    for (const llvm::BasicBlock& b : f) {
      for (const llvm::Instruction& i : b) {
        const auto* call = llvm::dyn_cast<llvm::CallBase>(&i);
        n += call != nullptr && call->getIntrinsicID() != llvm::Intrinsic::fma;
      }
    }
  }
  return n;
}

// Branches to the same block or to one earlier in the layout: a loop's
// latch always is one (the pipeline keeps blocks in an order where every
// other edge goes forward, which these small kernels check too).
int BackEdges(const llvm::Function& f) {
  int n = 0;
  std::vector<const llvm::BasicBlock*> seen;
  for (const llvm::BasicBlock& b : f) {
    seen.push_back(&b);
    for (const llvm::BasicBlock* s : llvm::successors(&b)) {
      n += std::find(seen.begin(), seen.end(), s) != seen.end() ? 1 : 0;
    }
  }
  return n;
}

bool HasGenericPointer(const llvm::Module& m) {
  for (const llvm::Function& f : m) {
    for (const llvm::BasicBlock& b : f) {
      for (const llvm::Instruction& i : b) {
        auto generic = [](const llvm::Type* t) {
          return t->isPointerTy() &&
                 t->getPointerAddressSpace() == kGenericAddressSpace;
        };
        if (generic(i.getType())) return true;
        for (const llvm::Use& u : i.operands()) {
          if (generic(u->getType())) return true;
        }
      }
    }
  }
  return false;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  return text;
}

TEST(AirPipeline, VectorAddIsOneFunctionWithoutAllocasOrCalls) {
  msl::FrontendResult r = Prepare(testing::kVectorAddOpenClSpelling);
  ASSERT_TRUE(r.ok());
  const llvm::Module& m = *r.module;
  EXPECT_EQ(DefinedFunctions(m), 1);
  EXPECT_EQ(m.size(), 1u) << msl::PrintModule(m);  // not even declarations
  EXPECT_EQ(Count<llvm::AllocaInst>(m), 0);
  EXPECT_EQ(Count<llvm::CallBase>(m), 0);
  EXPECT_EQ(Count<llvm::LoadInst>(m), 3);  // n, a[id], b[id]
  EXPECT_EQ(Count<llvm::StoreInst>(m), 1);
  EXPECT_TRUE(m.global_empty()) << msl::PrintModule(m);
  EXPECT_TRUE(UnexpectedConstructs(m).empty()) << Join(UnexpectedConstructs(m));
}

TEST(AirPipeline, KeepsOnlyTheKernelAskedForOutOfTwoHundred) {
  std::string source = R"(
constant float kScale[4] = {1.0f, 2.0f, 3.0f, 4.0f};
static float helper(float x, unsigned i) { return x * kScale[i & 3u]; }
)";
  for (int k = 0; k < 200; ++k) {
    const std::string n = std::to_string(k);
    source += "kernel void kernel" + n +
              "(__global float* a [[buffer(0)]], unsigned int i "
              "[[thread_position_in_grid]]) {\n"
              "  float s = 0.0f;\n"
              "  for (unsigned j = 0; j < 8u; ++j) s += helper(a[i + j], j + " +
              n +
              "u);\n"
              "  a[i] = s;\n"
              "}\n";
  }
  const auto start = std::chrono::steady_clock::now();
  msl::FrontendResult r = msl::CompileMsl(source, "many.metal", {});
  ASSERT_TRUE(r.ok()) << isa::FormatDiagnostics(r.errors);
  ASSERT_EQ(r.kernels.size(), 200u);
  const auto compiled = std::chrono::steady_clock::now();
  std::string error;
  ASSERT_TRUE(PrepareModule(*r.module, {r.kernels[117].ir_name}, &error).ok())
      << error;
  const auto prepared = std::chrono::steady_clock::now();
  const auto ms = [](auto d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  std::printf(
      "200 kernels: front end %.1f ms, pipeline for one kernel %.1f ms\n",
      ms(compiled - start), ms(prepared - compiled));
  const llvm::Module& m = *r.module;
  EXPECT_EQ(DefinedFunctions(m), 1);
  EXPECT_NE(m.getFunction(r.kernels[117].ir_name), nullptr);
  EXPECT_EQ(m.getFunction(r.kernels[116].ir_name), nullptr);
  // Optimizing one kernel of 200 must not cost like 200.
  EXPECT_LT(ms(prepared - compiled), 1000.0);
  // The constant table survives, as it is used (once unrolled, with
  // constant indices, it folds away entirely).
  EXPECT_TRUE(UnexpectedConstructs(m).empty()) << Join(UnexpectedConstructs(m));
}

TEST(AirPipeline, StructsByValueAndFromConstantMemoryLeaveNoMemcpy) {
  // C++ for OpenCL cannot copy-construct from __constant memory (the
  // implicit copy constructor takes a generic reference), so the copy out
  // of __constant memory is a memcpy, as clang emits for a trivial copy.
  msl::FrontendResult r = Prepare(R"(
struct Params { float scale; float bias; int count; float weights[5]; };
struct Pair { float a; float b; };
static Pair apply(Params p, Pair in) {
  Pair out;
  out.a = in.a * p.scale + p.bias;
  out.b = in.b * p.weights[2] + float(p.count);
  return out;
}
kernel void structs(__constant Params* params [[buffer(0)]],
                    __global Pair* pairs [[buffer(1)]],
                    __global Params* copy [[buffer(2)]],
                    unsigned int id [[thread_position_in_grid]]) {
  Params p;
  __builtin_memcpy(&p, params, sizeof(Params));
  pairs[id] = apply(p, pairs[id]);
  if (id == 0) copy[0] = p;
}
)");
  ASSERT_TRUE(r.ok());
  const llvm::Module& m = *r.module;
  EXPECT_EQ(DefinedFunctions(m), 1);
  EXPECT_EQ(Count<llvm::MemIntrinsic>(m), 0) << msl::PrintModule(m);
  EXPECT_EQ(Count<llvm::AllocaInst>(m), 0) << msl::PrintModule(m);
  EXPECT_EQ(CallsBesidesFma(m), 0) << msl::PrintModule(m);
  // Every byte is stored: 32 of Params (SROA may pair two floats in an
  // i64), 8 of the Pair.
  uint64_t stored = 0;
  for (const llvm::BasicBlock& b : *m.getFunction(r.kernels[0].ir_name)) {
    for (const llvm::Instruction& i : b) {
      if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&i)) {
        stored += m.getDataLayout().getTypeStoreSize(
            store->getValueOperand()->getType());
      }
    }
  }
  EXPECT_EQ(stored, 32u + 8u) << msl::PrintModule(m);
  EXPECT_TRUE(UnexpectedConstructs(m).empty()) << Join(UnexpectedConstructs(m));
}

TEST(AirPipeline, StructCopyBetweenDeviceBuffersIsStraightLine) {
  msl::FrontendResult r = Prepare(R"(
struct Particle { float px, py, pz; float vx, vy, vz; int alive; };
kernel void copy(__global const Particle* in [[buffer(0)]],
                 __global Particle* out [[buffer(1)]],
                 unsigned int id [[thread_position_in_grid]]) {
  out[id] = in[id];
}
)");
  ASSERT_TRUE(r.ok());
  const llvm::Module& m = *r.module;
  EXPECT_EQ(Count<llvm::MemIntrinsic>(m), 0) << msl::PrintModule(m);
  // 28 bytes aligned to 4: seven 32-bit loads and stores, no loop.
  EXPECT_EQ(Count<llvm::LoadInst>(m), 7) << msl::PrintModule(m);
  EXPECT_EQ(Count<llvm::StoreInst>(m), 7) << msl::PrintModule(m);
  EXPECT_EQ(BackEdges(*m.getFunction(r.kernels[0].ir_name)), 0);
  EXPECT_TRUE(UnexpectedConstructs(m).empty()) << Join(UnexpectedConstructs(m));
}

TEST(AirPipeline, BigStructCopyBecomesALoop) {
  // 64 KiB: far beyond the straight-line limit.
  msl::FrontendResult r = Prepare(R"(
struct Big { float v[16384]; };
kernel void big(__global const Big* in [[buffer(0)]],
                __global Big* out [[buffer(1)]],
                unsigned int id [[thread_position_in_grid]]) {
  out[id] = in[0];
}
)");
  ASSERT_TRUE(r.ok());
  const llvm::Module& m = *r.module;
  EXPECT_EQ(Count<llvm::MemIntrinsic>(m), 0);
  EXPECT_EQ(Count<llvm::LoadInst>(m), 1) << msl::PrintModule(m);
  EXPECT_EQ(Count<llvm::StoreInst>(m), 1) << msl::PrintModule(m);
  EXPECT_EQ(BackEdges(*m.getFunction(r.kernels[0].ir_name)), 1);
  EXPECT_TRUE(UnexpectedConstructs(m).empty()) << Join(UnexpectedConstructs(m));
}

TEST(AirPipeline, DynamicallyIndexedPrivateArrayKeepsItsAlloca) {
  msl::FrontendResult r = Prepare(R"(
kernel void lookup(__global const int* in [[buffer(0)]],
                   __global int* out [[buffer(1)]],
                   unsigned int id [[thread_position_in_grid]]) {
  int table[8];
  for (int i = 0; i < 8; ++i) table[i] = in[id * 8 + i] * 3;
  out[id] = table[in[id] & 7];
}
)");
  ASSERT_TRUE(r.ok());
  const llvm::Module& m = *r.module;
  EXPECT_EQ(Count<llvm::AllocaInst>(m), 1) << msl::PrintModule(m);
  EXPECT_EQ(Count<llvm::MemIntrinsic>(m), 0);
  EXPECT_TRUE(UnexpectedConstructs(m).empty()) << Join(UnexpectedConstructs(m));
}

TEST(AirPipeline, PragmaUnrollLoopIsFullyUnrolled) {
  // The trip count is only known to be 4 through the loop's bound; the
  // loop body is big enough that only the pragma justifies unrolling.
  msl::FrontendResult r = Prepare(R"(
kernel void unrolled(__global float* a [[buffer(0)]],
                     unsigned int id [[thread_position_in_grid]]) {
  float s = a[id];
  #pragma unroll
  for (int i = 0; i < 4; ++i) {
    s = s * a[id + i] + 1.0f;
    a[id + 64 * i] = s;
  }
}
)");
  ASSERT_TRUE(r.ok());
  const llvm::Module& m = *r.module;
  const llvm::Function* f = m.getFunction(r.kernels[0].ir_name);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(BackEdges(*f), 0) << msl::PrintModule(m);
  EXPECT_EQ(f->size(), 1u) << msl::PrintModule(m);
  EXPECT_EQ(Count<llvm::StoreInst>(m), 4);
}

// A 64-iteration loop whose unrolled size is beyond the unroller's own
// threshold: only #pragma unroll gets it unrolled (#pragma unroll 2: two
// copies of the body in the loop); #pragma nounroll keeps even a tiny loop.
std::string LoopKernel(const char* pragma, int trips) {
  return std::string(R"(
kernel void loop(__global float* a [[buffer(0)]],
                 unsigned int id [[thread_position_in_grid]]) {
  float s = a[id];
)") + pragma +
         "\n  for (int i = 0; i < " + std::to_string(trips) +
         R"(; ++i) {
    s = s * a[id + i] + 1.0f;
    s = s * s - a[id + 2 * i];
    a[id + 64 * i] = s;
  }
})";
}

int StoresAndBackEdges(const std::string& source, int* back_edges) {
  msl::FrontendResult r = Prepare(source);
  if (!r.ok()) return -1;
  *back_edges = BackEdges(*r.module->getFunction(r.kernels[0].ir_name));
  return Count<llvm::StoreInst>(*r.module);
}

TEST(AirPipeline, UnrollPragmasAreHonoured) {
  int back_edges = -1;
  EXPECT_EQ(StoresAndBackEdges(LoopKernel("#pragma unroll", 64), &back_edges),
            64);
  EXPECT_EQ(back_edges, 0);
  // Without a pragma: partially unrolled (compiler/air/target_info.h), by a
  // divisor of the trip count, still a loop.
  const int stores = StoresAndBackEdges(LoopKernel("", 64), &back_edges);
  EXPECT_GT(stores, 1);
  EXPECT_EQ(64 % stores, 0);
  EXPECT_EQ(back_edges, 1);
  EXPECT_EQ(StoresAndBackEdges(LoopKernel("#pragma unroll 2", 64), &back_edges),
            2);
  EXPECT_EQ(back_edges, 1);
  EXPECT_EQ(StoresAndBackEdges(LoopKernel("#pragma nounroll", 2), &back_edges),
            1);
  EXPECT_EQ(back_edges, 1);
}

// Unrolled at run time (target_info.h's kRuntimeUnrollCount copies) with a
// remainder loop after it: two loops.
TEST(AirPipeline, LoopWithUnknownTripCountStaysALoop) {
  msl::FrontendResult r = Prepare(R"(
kernel void rolled(__global float* a [[buffer(0)]],
                   __constant unsigned int& n [[buffer(1)]],
                   unsigned int id [[thread_position_in_grid]]) {
  float s = 0.0f;
  for (unsigned int i = 0; i < n; ++i) s += a[i];
  a[id] = s;
}
)");
  ASSERT_TRUE(r.ok());
  const llvm::Module& m = *r.module;
  EXPECT_EQ(BackEdges(*m.getFunction(r.kernels[0].ir_name)), 2)
      << msl::PrintModule(m);
  // No vectorizer: the loop body loads one float at a time.
  for (const llvm::Function& f : m) {
    for (const llvm::BasicBlock& b : f) {
      for (const llvm::Instruction& i : b) {
        EXPECT_FALSE(i.getType()->isVectorTy()) << msl::PrintModule(m);
      }
    }
  }
  EXPECT_TRUE(UnexpectedConstructs(m).empty()) << Join(UnexpectedConstructs(m));
}

TEST(AirPipeline, GenericPointerIsInferredToDevice) {
  msl::FrontendResult r = Prepare(R"(
static float sum3(const float* p) { return p[0] + p[1] + p[2]; }
static void put(float* p, float v) { *p = v; }
kernel void generic(__global float* a [[buffer(0)]],
                    unsigned int id [[thread_position_in_grid]]) {
  put(a + id, sum3(a + id * 3));
}
)");
  ASSERT_TRUE(r.ok());
  const llvm::Module& m = *r.module;
  EXPECT_FALSE(HasGenericPointer(m)) << msl::PrintModule(m);
  int device_loads = 0;
  int device_stores = 0;
  for (const llvm::Function& f : m) {
    for (const llvm::BasicBlock& b : f) {
      for (const llvm::Instruction& i : b) {
        if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&i)) {
          device_loads +=
              load->getPointerAddressSpace() == kDeviceAddressSpace ? 1 : 0;
        }
        if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&i)) {
          device_stores +=
              store->getPointerAddressSpace() == kDeviceAddressSpace ? 1 : 0;
        }
      }
    }
  }
  EXPECT_EQ(device_loads, 3);
  EXPECT_EQ(device_stores, 1);
  EXPECT_TRUE(UnexpectedConstructs(m).empty()) << Join(UnexpectedConstructs(m));
}

TEST(AirPipeline, SwitchBecomesBranches) {
  msl::FrontendResult r = Prepare(R"(
kernel void choose(__global int* a [[buffer(0)]],
                   unsigned int id [[thread_position_in_grid]]) {
  int v = a[id];
  int r;
  switch (v) {
    case 0: r = a[id + 1]; break;
    case 3: r = a[id + 2] * 7; break;
    case 10: r = a[id + 3] - 5; break;
    case 11: r = 42; a[id + 4] = 1; break;
    default: r = -1; break;
  }
  a[id] = r;
}
)");
  ASSERT_TRUE(r.ok());
  const llvm::Module& m = *r.module;
  EXPECT_EQ(Count<llvm::SwitchInst>(m), 0) << msl::PrintModule(m);
  EXPECT_GE(Count<llvm::BranchInst>(m), 4) << msl::PrintModule(m);
  EXPECT_TRUE(m.global_empty()) << msl::PrintModule(m);  // no lookup table
  EXPECT_TRUE(UnexpectedConstructs(m).empty()) << Join(UnexpectedConstructs(m));
}

TEST(AirPipeline, MemsetAndMemmoveBecomeLoadsAndStores) {
  msl::FrontendResult r = Prepare(R"(
kernel void mem(__global const int* in [[buffer(0)]],
                __global int* out [[buffer(1)]],
                __global int* buf [[buffer(2)]],
                unsigned int id [[thread_position_in_grid]]) {
  int hist[16] = {};
  for (int i = 0; i < 32; ++i) hist[in[id * 32 + i] & 15] += 1;
  out[id] = hist[id & 15];
  if (id == 0) __builtin_memmove(buf + 1, buf, 12 * sizeof(int));
  if (id == 1) __builtin_memmove(buf + 1, buf, in[0] * sizeof(int));
  if (id == 2) __builtin_memcpy(buf + 64, in, in[1]);
  if (id == 3) __builtin_memset(buf + 128, in[2], in[3]);
}
)");
  ASSERT_TRUE(r.ok());
  const llvm::Module& m = *r.module;
  EXPECT_EQ(Count<llvm::MemIntrinsic>(m), 0) << msl::PrintModule(m);
  EXPECT_EQ(Count<llvm::CallBase>(m), 0) << msl::PrintModule(m);
  EXPECT_EQ(Count<llvm::AllocaInst>(m), 1) << msl::PrintModule(m);  // hist
  EXPECT_TRUE(UnexpectedConstructs(m).empty()) << Join(UnexpectedConstructs(m));
}

TEST(AirPipeline, ThreadgroupAndConstantVariablesAndAirCallsAreExpected) {
  msl::FrontendResult r = Prepare(R"(
void barrier_all(unsigned int flags, unsigned int scope) __asm__("air.wg.barrier");
__constant float kTable[8] = {1, 2, 3, 4, 5, 6, 7, 8};
// What the shims make of MSL's `constant` at program scope.
__global const float kOffsets[8] = {0, 1, 0, 1, 0, 1, 0, 1};
kernel void tg(__global float* a [[buffer(0)]],
               unsigned int id [[thread_position_in_grid]],
               unsigned int lid [[thread_position_in_threadgroup]]) {
  threadgroup float tile[64];
  tile[lid] = a[id] * kTable[id & 7] + kOffsets[lid & 7];
  barrier_all(2, 1);
  a[id] = tile[63 - lid];
}
)");
  ASSERT_TRUE(r.ok());
  const llvm::Module& m = *r.module;
  std::multiset<unsigned> spaces;
  for (const llvm::GlobalVariable& g : m.globals()) {
    spaces.insert(g.getAddressSpace());
  }
  EXPECT_EQ(spaces,
            (std::multiset<unsigned>{kDeviceAddressSpace, kConstantAddressSpace,
                                     kThreadgroupAddressSpace}))
      << msl::PrintModule(m);
  EXPECT_EQ(CallsBesidesFma(m), 1) << msl::PrintModule(m);
  EXPECT_TRUE(UnexpectedConstructs(m).empty()) << Join(UnexpectedConstructs(m));
}

TEST(AirPipeline, ReportsRecursionDynamicAllocaAndDeviceVariables) {
  msl::FrontendResult r = Prepare(R"(
__global float counter;
static unsigned int fib(unsigned int n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}
kernel void bad(__global unsigned int* u [[buffer(1)]],
                unsigned int id [[thread_position_in_grid]]) {
  u[id] = fib(u[id]);
  float* p = (float*)__builtin_alloca(u[0] * 4);
  p[id] = 1.0f;
  u[id + 1] = (unsigned int)p[u[1]];
  counter = 1.0f;
}
)");
  ASSERT_TRUE(r.ok());
  const std::string found = Join(UnexpectedConstructs(*r.module));
  EXPECT_NE(found.find("that was not inlined"), std::string::npos) << found;
  EXPECT_NE(found.find("alloca of dynamic size"), std::string::npos) << found;
  EXPECT_NE(found.find("global variable in address space 1"), std::string::npos)
      << found;
}

// Metal has no double: the front end rejects it (as Metal's compiler does)
// before the pipeline could see one.
TEST(AirPipeline, DoubleIsAFrontEndError) {
  const msl::FrontendResult r = msl::CompileMsl(
      "kernel void k(__global double* d [[buffer(0)]]) { d[0] = 1.0; }\n",
      "d.metal", {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors[0].message.find("double"), std::string::npos)
      << r.errors[0].message;
}

TEST(AirPipeline, ReportsACallToAnUndefinedFunction) {
  msl::FrontendResult r = Prepare(R"(
extern float mystery(float);
kernel void calls(__global float* a [[buffer(0)]],
                  unsigned int id [[thread_position_in_grid]]) {
  a[id] = mystery(a[id]);
}
)");
  ASSERT_TRUE(r.ok());
  const std::vector<std::string> found = UnexpectedConstructs(*r.module);
  ASSERT_EQ(found.size(), 1u) << Join(found);
  EXPECT_NE(found[0].find("call to undefined function"), std::string::npos)
      << found[0];
  EXPECT_NE(found[0].find("mystery"), std::string::npos) << found[0];
  EXPECT_EQ(found[0].rfind(r.kernels[0].ir_name + ": ", 0), 0u) << found[0];
}

TEST(AirPipeline, AnnotationsAssumesAndLifetimesAreStripped) {
  const char* source = R"(
struct Tagged { float value [[clang::annotate("field")]]; };
[[clang::annotate("function")]] static float twice(float x) { return x + x; }
static void scale(__global float* __restrict out,
                  __global const float* __restrict in, unsigned int i) {
  out[i] = in[i] * 2.0f;
}
kernel void k(__global float* a [[buffer(0)]],
              __global Tagged* t [[buffer(1)]],
              unsigned int id [[thread_position_in_grid]]) {
  [[clang::annotate("local")]] float tmp[4];
  for (int i = 0; i < 4; ++i) tmp[i] = twice(a[id + i]);
  if (__builtin_expect(id > 3, 0)) a[id] = tmp[id & 3];
  __builtin_assume(id < 1000000);
  t[id].value = 1.0f;
  scale(a + 64, a + 128, id);
}
)";
  // What the front end hands over (the test is only meaningful if so).
  const msl::FrontendResult before = msl::CompileMsl(source, "t.metal", {});
  ASSERT_TRUE(before.ok()) << isa::FormatDiagnostics(before.errors);
  const std::string input = msl::PrintModule(*before.module);
  for (const char* name : {"@llvm.var.annotation", "@llvm.ptr.annotation",
                           "@llvm.global.annotations", "@llvm.lifetime",
                           "@llvm.assume", "@llvm.expect"}) {
    EXPECT_NE(input.find(name), std::string::npos) << name << "\n" << input;
  }

  msl::FrontendResult r = Prepare(source);
  ASSERT_TRUE(r.ok());
  const std::string ir = msl::PrintModule(*r.module);
  for (const char* name :
       {"llvm.var.annotation", "llvm.ptr.annotation", "llvm.global.annotations",
        "llvm.lifetime", "llvm.assume", "llvm.expect",
        // the intrinsics; the front end's line tables (!llvm.dbg.cu) stay
        "@llvm.dbg.", "llvm.experimental.noalias.scope.decl",
        "llvm.metadata"}) {
    EXPECT_EQ(ir.find(name), std::string::npos) << name << "\n" << ir;
  }
  EXPECT_EQ(Count<llvm::CallBase>(*r.module), 0) << ir;
  EXPECT_TRUE(UnexpectedConstructs(*r.module).empty())
      << Join(UnexpectedConstructs(*r.module));
}

// Debug intrinsics go, the instructions' source locations stay. The front
// end does not emit debug information (yet), so this module is written by
// hand: a kernel calling a helper, with dbg.value and dbg.declare.
TEST(AirPipeline, DebugLocationsSurviveDebugIntrinsicsDoNot) {
  constexpr char kIr[] = R"(
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
target triple = "spir64-unknown-unknown"

define internal spir_func float @twice(float %x) !dbg !10 {
entry:
  call void @llvm.dbg.value(metadata float %x, metadata !12, metadata !DIExpression()), !dbg !13
  %r = fadd float %x, %x, !dbg !13
  ret float %r, !dbg !13
}

define spir_kernel void @k(ptr addrspace(1) %a, i32 %id) !dbg !14 {
entry:
  %tmp = alloca float, align 4
  call void @llvm.dbg.declare(metadata ptr %tmp, metadata !15, metadata !DIExpression()), !dbg !16
  %i = zext i32 %id to i64, !dbg !16
  %p = getelementptr inbounds float, ptr addrspace(1) %a, i64 %i, !dbg !16
  %v = load float, ptr addrspace(1) %p, align 4, !dbg !16
  store float %v, ptr %tmp, align 4, !dbg !16
  %w = load float, ptr %tmp, align 4, !dbg !17
  %t = call spir_func float @twice(float %w), !dbg !17
  store float %t, ptr addrspace(1) %p, align 4, !dbg !18
  ret void, !dbg !18
}

declare void @llvm.dbg.value(metadata, metadata, metadata)
declare void @llvm.dbg.declare(metadata, metadata, metadata)

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}
!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus_14, file: !1, producer: "test", isOptimized: true, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "k.metal", directory: "/")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 2, !"Dwarf Version", i32 4}
!5 = !DISubroutineType(types: !6)
!6 = !{}
!7 = !DIBasicType(name: "float", size: 32, encoding: DW_ATE_float)
!10 = distinct !DISubprogram(name: "twice", scope: !1, file: !1, line: 2, type: !5, scopeLine: 2, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!12 = !DILocalVariable(name: "x", arg: 1, scope: !10, file: !1, line: 2, type: !7)
!13 = !DILocation(line: 3, column: 10, scope: !10)
!14 = distinct !DISubprogram(name: "k", scope: !1, file: !1, line: 5, type: !5, scopeLine: 5, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!15 = !DILocalVariable(name: "tmp", scope: !14, file: !1, line: 6, type: !7)
!16 = !DILocation(line: 6, column: 3, scope: !14)
!17 = !DILocation(line: 7, column: 3, scope: !14)
!18 = !DILocation(line: 8, column: 3, scope: !14)
)";
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> m =
      llvm::parseAssemblyString(kIr, diagnostic, context);
  ASSERT_NE(m, nullptr) << diagnostic.getMessage().str();
  std::string error;
  ASSERT_TRUE(PrepareModule(*m, {"k"}, &error).ok()) << error;
  const std::string ir = msl::PrintModule(*m);
  EXPECT_EQ(ir.find("@llvm.dbg."), std::string::npos) << ir;
  EXPECT_EQ(DefinedFunctions(*m), 1) << ir;
  std::set<unsigned> lines;
  for (const llvm::BasicBlock& b : *m->getFunction("k")) {
    for (const llvm::Instruction& i : b) {
      EXPECT_TRUE(i.getDebugLoc()) << ir;
      if (i.getDebugLoc()) lines.insert(i.getDebugLoc().getLine());
    }
  }
  // The load (line 6), the inlined fadd (line 3) and the store (line 8).
  EXPECT_EQ(lines, (std::set<unsigned>{3, 6, 8})) << ir;
  EXPECT_EQ(Count<llvm::AllocaInst>(*m), 0) << ir;
}

TEST(AirPipeline, UnknownKernelNameIsAnError) {
  msl::FrontendResult r =
      msl::CompileMsl(testing::kVectorAddOpenClSpelling, "add.metal", {});
  ASSERT_TRUE(r.ok());
  std::string error;
  const Status s = PrepareModule(*r.module, {"no_such_kernel"}, &error);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("no_such_kernel"), std::string::npos);
  EXPECT_EQ(error, s.error().message);
}

// Hand-written IR, parsed, with the kernels named prepared, in LLVM's
// interpreter; `error` says what failed.
struct InterpretedIr {
  std::unique_ptr<llvm::LLVMContext> context =
      std::make_unique<llvm::LLVMContext>();
  llvm::Module* module = nullptr;  // owned by the engine
  std::unique_ptr<llvm::ExecutionEngine> engine;
  std::string error;
};

InterpretedIr PrepareAndInterpret(const char* ir,
                                  const std::vector<std::string>& kernels) {
  InterpretedIr out;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> m =
      llvm::parseAssemblyString(ir, diagnostic, *out.context);
  if (m == nullptr) {
    out.error = diagnostic.getMessage().str();
    return out;
  }
  if (!PrepareModule(*m, kernels, &out.error).ok()) return out;
  out.module = m.get();
  out.engine.reset(llvm::EngineBuilder(std::move(m))
                       .setEngineKind(llvm::EngineKind::Interpreter)
                       .setErrorStr(&out.error)
                       .create());
  if (out.engine == nullptr) out.module = nullptr;
  return out;
}

// The lowered copies must do what memcpy, memmove and memset do: each
// kernel below is prepared, then run by LLVM's interpreter on a host buffer
// and compared with the C library on a copy of it. Sizes cover the
// straight-line form (with 16- and 8-bit tails), the loop form, and sizes
// known only at run time; memmoves overlap in both directions.
constexpr char kMemOpsIr[] = R"(
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
target triple = "spir64-unknown-unknown"

define spir_kernel void @cpy27(ptr addrspace(1) align 4 %b, i64 %n, i8 %v) {
  %d = getelementptr inbounds i8, ptr addrspace(1) %b, i64 2048
  call void @llvm.memcpy.p1.p1.i64(ptr addrspace(1) align 4 %d, ptr addrspace(1) align 4 %b, i64 27, i1 false)
  ret void
}
define spir_kernel void @cpy1003(ptr addrspace(1) align 4 %b, i64 %n, i8 %v) {
  %d = getelementptr inbounds i8, ptr addrspace(1) %b, i64 2048
  call void @llvm.memcpy.p1.p1.i64(ptr addrspace(1) align 4 %d, ptr addrspace(1) align 4 %b, i64 1003, i1 false)
  ret void
}
define spir_kernel void @cpy_unaligned(ptr addrspace(1) align 4 %b, i64 %n, i8 %v) {
  %s = getelementptr inbounds i8, ptr addrspace(1) %b, i64 1
  %d = getelementptr inbounds i8, ptr addrspace(1) %b, i64 2051
  call void @llvm.memcpy.p1.p1.i64(ptr addrspace(1) align 1 %d, ptr addrspace(1) align 1 %s, i64 99, i1 false)
  ret void
}
define spir_kernel void @cpy_n(ptr addrspace(1) align 4 %b, i64 %n, i8 %v) {
  %s = getelementptr inbounds i8, ptr addrspace(1) %b, i64 3
  %d = getelementptr inbounds i8, ptr addrspace(1) %b, i64 2048
  call void @llvm.memcpy.p1.p1.i64(ptr addrspace(1) align 1 %d, ptr addrspace(1) align 1 %s, i64 %n, i1 false)
  ret void
}
define spir_kernel void @move40_up(ptr addrspace(1) align 4 %b, i64 %n, i8 %v) {
  %d = getelementptr inbounds i8, ptr addrspace(1) %b, i64 4
  call void @llvm.memmove.p1.p1.i64(ptr addrspace(1) align 4 %d, ptr addrspace(1) align 4 %b, i64 40, i1 false)
  ret void
}
define spir_kernel void @move1000_up(ptr addrspace(1) align 4 %b, i64 %n, i8 %v) {
  %d = getelementptr inbounds i8, ptr addrspace(1) %b, i64 8
  call void @llvm.memmove.p1.p1.i64(ptr addrspace(1) align 4 %d, ptr addrspace(1) align 4 %b, i64 1000, i1 false)
  ret void
}
define spir_kernel void @move1000_down(ptr addrspace(1) align 4 %b, i64 %n, i8 %v) {
  %s = getelementptr inbounds i8, ptr addrspace(1) %b, i64 8
  call void @llvm.memmove.p1.p1.i64(ptr addrspace(1) align 4 %b, ptr addrspace(1) align 4 %s, i64 1000, i1 false)
  ret void
}
define spir_kernel void @move_n_up(ptr addrspace(1) align 4 %b, i64 %n, i8 %v) {
  %d = getelementptr inbounds i8, ptr addrspace(1) %b, i64 5
  call void @llvm.memmove.p1.p1.i64(ptr addrspace(1) align 1 %d, ptr addrspace(1) align 1 %b, i64 %n, i1 false)
  ret void
}
define spir_kernel void @set27(ptr addrspace(1) align 4 %b, i64 %n, i8 %v) {
  %d = getelementptr inbounds i8, ptr addrspace(1) %b, i64 16
  call void @llvm.memset.p1.i64(ptr addrspace(1) align 4 %d, i8 %v, i64 27, i1 false)
  ret void
}
define spir_kernel void @set1001(ptr addrspace(1) align 4 %b, i64 %n, i8 %v) {
  %d = getelementptr inbounds i8, ptr addrspace(1) %b, i64 16
  call void @llvm.memset.p1.i64(ptr addrspace(1) align 4 %d, i8 -85, i64 1001, i1 false)
  ret void
}
define spir_kernel void @set_n(ptr addrspace(1) align 4 %b, i64 %n, i8 %v) {
  %d = getelementptr inbounds i8, ptr addrspace(1) %b, i64 17
  call void @llvm.memset.p1.i64(ptr addrspace(1) align 1 %d, i8 %v, i64 %n, i1 false)
  ret void
}

declare void @llvm.memcpy.p1.p1.i64(ptr addrspace(1), ptr addrspace(1), i64, i1)
declare void @llvm.memmove.p1.p1.i64(ptr addrspace(1), ptr addrspace(1), i64, i1)
declare void @llvm.memset.p1.i64(ptr addrspace(1), i8, i64, i1)
)";

TEST(AirPipeline, LoweredMemoryIntrinsicsComputeWhatTheLibraryDoes) {
  constexpr uint64_t kN = 777;
  constexpr uint8_t kV = 0x5a;
  using Reference = void (*)(uint8_t*);
  const std::vector<std::pair<std::string, Reference>> cases = {
      {"cpy27", [](uint8_t* b) { std::memcpy(b + 2048, b, 27); }},
      {"cpy1003", [](uint8_t* b) { std::memcpy(b + 2048, b, 1003); }},
      {"cpy_unaligned", [](uint8_t* b) { std::memcpy(b + 2051, b + 1, 99); }},
      {"cpy_n", [](uint8_t* b) { std::memcpy(b + 2048, b + 3, kN); }},
      {"move40_up", [](uint8_t* b) { std::memmove(b + 4, b, 40); }},
      {"move1000_up", [](uint8_t* b) { std::memmove(b + 8, b, 1000); }},
      {"move1000_down", [](uint8_t* b) { std::memmove(b, b + 8, 1000); }},
      {"move_n_up", [](uint8_t* b) { std::memmove(b + 5, b, kN); }},
      {"set27", [](uint8_t* b) { std::memset(b + 16, kV, 27); }},
      {"set1001", [](uint8_t* b) { std::memset(b + 16, 0xab, 1001); }},
      {"set_n", [](uint8_t* b) { std::memset(b + 17, kV, kN); }},
  };
  std::vector<std::string> names;
  for (const auto& c : cases) names.push_back(c.first);
  InterpretedIr run = PrepareAndInterpret(kMemOpsIr, names);
  ASSERT_NE(run.module, nullptr) << run.error;
  llvm::Module* module = run.module;
  llvm::ExecutionEngine* engine = run.engine.get();
  EXPECT_EQ(Count<llvm::MemIntrinsic>(*module), 0) << msl::PrintModule(*module);
  EXPECT_TRUE(UnexpectedConstructs(*module).empty())
      << Join(UnexpectedConstructs(*module));
  for (const auto& [name, reference] : cases) {
    alignas(16) uint8_t actual[4096];
    alignas(16) uint8_t expected[4096];
    for (size_t i = 0; i < sizeof(actual); ++i) {
      actual[i] = static_cast<uint8_t>(i * 7 + i / 256);
    }
    std::memcpy(expected, actual, sizeof(actual));
    reference(expected);
    std::vector<llvm::GenericValue> args(3);
    args[0] = llvm::PTOGV(actual);
    args[1].IntVal = llvm::APInt(64, kN);
    args[2].IntVal = llvm::APInt(8, kV);
    engine->runFunction(module->getFunction(name), args);
    EXPECT_EQ(std::memcmp(actual, expected, sizeof(actual)), 0) << name;
  }
}

// What clang makes of `c ? input[i] : init` on a class after inlining
// (MLX's scans): a choice between a device pointer and a thread one, read
// through (with an offset; the thread side is an argument here, which SROA
// cannot take apart). It becomes a branch with a read on each side, each
// through its own address space, and reads what the condition picks.
// A uint3 argument read as a short (InstCombine's <6 x i16> bitcast)
// becomes a shift of its element.
constexpr char kChoiceIr[] = R"(
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
target triple = "spir64-unknown-unknown"
define spir_kernel void @pick(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %i, i32 %n, ptr %init) {
  %wide = zext i32 %i to i64
  %at = getelementptr inbounds [2 x float], ptr addrspace(1) %in, i64 %wide
  %c = icmp ult i32 %i, %n
  %g0 = addrspacecast ptr addrspace(1) %at to ptr addrspace(4)
  %g1 = addrspacecast ptr %init to ptr addrspace(4)
  %p = select i1 %c, ptr addrspace(4) %g0, ptr addrspace(4) %g1
  %a = load float, ptr addrspace(4) %p
  %p1 = getelementptr inbounds float, ptr addrspace(4) %p, i64 1
  %b = load float, ptr addrspace(4) %p1
  store float %a, ptr addrspace(1) %out
  %out1 = getelementptr inbounds float, ptr addrspace(1) %out, i64 1
  store float %b, ptr addrspace(1) %out1
  ret void
}
define spir_kernel void @short_of_z(ptr addrspace(1) %out, <3 x i32> %v) {
  %cast = bitcast <3 x i32> %v to <6 x i16>
  %lo = extractelement <6 x i16> %cast, i64 4
  %hi = extractelement <6 x i16> %cast, i64 5
  store i16 %lo, ptr addrspace(1) %out
  %out1 = getelementptr inbounds i16, ptr addrspace(1) %out, i64 1
  store i16 %hi, ptr addrspace(1) %out1
  ret void
}
)";

TEST(AirPipeline, ReadsThroughAChoiceOfAddressSpacesAndNarrowBitcasts) {
  InterpretedIr run = PrepareAndInterpret(kChoiceIr, {"pick", "short_of_z"});
  ASSERT_NE(run.module, nullptr) << run.error;
  llvm::Module* module = run.module;
  llvm::ExecutionEngine* engine = run.engine.get();
  EXPECT_FALSE(HasGenericPointer(*module)) << msl::PrintModule(*module);
  EXPECT_TRUE(UnexpectedConstructs(*module).empty())
      << Join(UnexpectedConstructs(*module));
  const float in[6] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
  for (uint32_t i : {0u, 2u, 3u, 7u}) {
    float out[2] = {0, 0};
    float init[2] = {-1.0f, -2.0f};
    std::vector<llvm::GenericValue> args(5);
    args[0] = llvm::PTOGV(const_cast<float*>(in));
    args[1] = llvm::PTOGV(out);
    args[2].IntVal = llvm::APInt(32, i);
    args[3].IntVal = llvm::APInt(32, 3);
    args[4] = llvm::PTOGV(init);
    engine->runFunction(module->getFunction("pick"), args);
    EXPECT_EQ(out[0], i < 3 ? in[2 * i] : -1.0f) << i;
    EXPECT_EQ(out[1], i < 3 ? in[2 * i + 1] : -2.0f) << i;
  }
  uint16_t halves[2] = {0, 0};
  std::vector<llvm::GenericValue> args(2);
  args[0] = llvm::PTOGV(halves);
  args[1].AggregateVal.resize(3);
  const uint32_t v[3] = {1, 2, 0xabcd1234u};
  for (int k = 0; k < 3; ++k)
    args[1].AggregateVal[k].IntVal = llvm::APInt(32, v[k]);
  engine->runFunction(module->getFunction("short_of_z"), args);
  EXPECT_EQ(halves[0], 0x1234);
  EXPECT_EQ(halves[1], 0xabcd);
}

// Generic pointers the inference cannot resolve (here: a generic kernel
// argument, which hand-written IR allows) still give a module that
// verifies, and UnexpectedConstructs names them.
TEST(AirPipeline, MemmoveBetweenGenericAndDevicePointersVerifies) {
  constexpr char kIr[] = R"(
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
target triple = "spir64-unknown-unknown"
define spir_kernel void @k(ptr addrspace(4) %g, ptr addrspace(1) %d, i64 %n) {
  call void @llvm.memmove.p4.p1.i64(ptr addrspace(4) %g, ptr addrspace(1) %d, i64 %n, i1 false)
  call void @llvm.memmove.p1.p4.i64(ptr addrspace(1) %d, ptr addrspace(4) %g, i64 4000, i1 false)
  ret void
}
declare void @llvm.memmove.p4.p1.i64(ptr addrspace(4), ptr addrspace(1), i64, i1)
declare void @llvm.memmove.p1.p4.i64(ptr addrspace(1), ptr addrspace(4), i64, i1)
)";
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> m =
      llvm::parseAssemblyString(kIr, diagnostic, context);
  ASSERT_NE(m, nullptr) << diagnostic.getMessage().str();
  std::string error;
  ASSERT_TRUE(PrepareModule(*m, {"k"}, &error).ok()) << error;
  EXPECT_EQ(Count<llvm::MemIntrinsic>(*m), 0) << msl::PrintModule(*m);
  const std::string found = Join(UnexpectedConstructs(*m));
  EXPECT_NE(found.find("generic pointer"), std::string::npos) << found;
  EXPECT_EQ(found.find("memory intrinsic"), std::string::npos) << found;
}

TEST(AirPipeline, WithTheMetalStdlibShims) {
  if (!std::filesystem::exists(MTLEMU_SOURCE_DIR
                               "/compiler/msl/shim/metal_stdlib")) {
    GTEST_SKIP() << "the metal_stdlib shims are not written yet";
  }
  msl::FrontendResult r = Prepare(R"(
#include <metal_stdlib>
using namespace metal;
kernel void saxpy(device const float* x [[buffer(0)]],
                  device float* y [[buffer(1)]],
                  constant float& alpha [[buffer(2)]],
                  uint id [[thread_position_in_grid]]) {
  y[id] = fma(alpha, x[id], y[id]);
}
struct Params { uint n; float scale; };
kernel void reduce(device const float* in [[buffer(0)]],
                   device atomic_uint* counter [[buffer(1)]],
                   device float* out [[buffer(2)]],
                   constant Params& p [[buffer(3)]],
                   threadgroup float* scratch [[threadgroup(0)]],
                   uint id [[thread_position_in_grid]],
                   uint lid [[thread_position_in_threadgroup]],
                   uint group [[threadgroup_position_in_grid]],
                   uint lane [[thread_index_in_simdgroup]]) {
  Params q = p;
  float v = id < q.n ? in[id] * q.scale : 0.0f;
  v = simd_sum(v);
  if (lane == 0) scratch[lid / 32] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid == 0) {
    float s = 0;
    for (uint i = 0; i < 8; ++i) s += scratch[i];
    out[group] = s;
    atomic_fetch_add_explicit(counter, 1u, memory_order_relaxed);
  }
  float4 a = float4(v, 1, 2, 3);
  out[id + 1000] = dot(a, a) + length(a.xyz) + clamp(v, 0.0f, 1.0f);
}
)");
  ASSERT_TRUE(r.ok());
  const llvm::Module& m = *r.module;
  EXPECT_EQ(DefinedFunctions(m), 2) << msl::PrintModule(m);
  EXPECT_EQ(Count<llvm::AllocaInst>(m), 0) << msl::PrintModule(m);
  EXPECT_EQ(Count<llvm::MemIntrinsic>(m), 0) << msl::PrintModule(m);
  EXPECT_FALSE(HasGenericPointer(m)) << msl::PrintModule(m);
  // What is called is the builtins' air.* declarations, nothing else.
  for (const llvm::Function& f : m) {
    if (f.isDeclaration() && !f.isIntrinsic()) {
      EXPECT_TRUE(f.getName().startswith("air.")) << f.getName().str();
    }
  }
  EXPECT_TRUE(UnexpectedConstructs(m).empty()) << Join(UnexpectedConstructs(m));
}

}  // namespace
}  // namespace mtlemu::air
