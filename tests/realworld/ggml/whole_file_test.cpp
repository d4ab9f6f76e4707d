// llama.cpp's Metal backend (ggml's src/ggml-metal/ggml-metal.metal): the
// whole file compiles with the macros its host passes, as
// ggml_metal_library_init compiles it, with bfloat on and off. support.h
// says where ggml's snapshot comes from.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "api/library.h"
#include "tests/realworld/ggml/support.h"

namespace mtlemu::ggml {
namespace {

// `k` with no source locations: a retry site that only other kernels need
// (frontend.cpp: `(float4)(c ? x : 0.0f)` in soft_max, a conversion for
// the half4 kernels) is rewritten in the whole file and not in the kernel
// alone, and the code it makes is the same but for the columns.
isa::Kernel WithoutLocations(isa::Kernel k) {
  for (isa::Instruction& i : k.code) i.location = {};
  return k;
}

// The whole file compiles (in parts, side by side: compiler/kernel_parts.h),
// and each of `alone` compiled by itself, as the tests of the kernel
// families compile it, has the code it has in the whole file's module.
void CompileWholeFile(bool bf16, const std::vector<std::string>& alone) {
  const auto start = std::chrono::steady_clock::now();
  Result<isa::Module> module =
      compiler::CompileMsl(Source(), "ggml-metal.metal", GgmlOptions(bf16));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_TRUE(module.ok()) << module.error().message.substr(0, 4000);
  EXPECT_GT(module.value().kernels.size(), 500u);
  std::printf("ggml-metal.metal%s: %zu kernels in %.2f s\n",
              bf16 ? " with GGML_METAL_HAS_BF16" : "",
              module.value().kernels.size(), seconds);
  for (const std::string& name : alone) {
    Result<isa::Module> one = compiler::CompileMsl(Source(), "ggml-metal.metal",
                                                   GgmlOptions(bf16), {name});
    ASSERT_TRUE(one.ok()) << one.error().message.substr(0, 4000);
    const isa::Kernel* in_whole = module.value().FindKernel(name);
    ASSERT_NE(in_whole, nullptr) << name;
    EXPECT_TRUE(WithoutLocations(one.value().kernels.at(0)) ==
                WithoutLocations(*in_whole))
        << name;
  }
  // The library ggml_metal_library_init makes of the file: its front ends
  // now, each kernel's back end when a pipeline asks for it, the code the
  // whole compile gives it (locations too).
  std::shared_ptr<Device> device = Device::Create("m1").value();
  const auto made = std::chrono::steady_clock::now();
  Result<std::shared_ptr<Library>> library = api::newLibraryWithSource(
      *device, Source(), GgmlOptions(bf16), "ggml-metal.metal", {},
      compiler::ModuleCache(""));
  const double library_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - made)
          .count();
  ASSERT_TRUE(library.ok()) << library.error().message.substr(0, 4000);
  std::vector<std::string> names;
  for (const isa::Kernel& k : module.value().kernels) names.push_back(k.name);
  EXPECT_EQ(library.value()->functionNames(), names);
  std::vector<std::string> asked = alone;
  for (size_t i = 0; i < names.size(); i += 41) asked.push_back(names[i]);
  const auto lowered = std::chrono::steady_clock::now();
  for (const std::string& name : asked) {
    Result<std::shared_ptr<Function>> f = library.value()->newFunction(name);
    ASSERT_TRUE(f.ok()) << f.error().message.substr(0, 4000);
    EXPECT_TRUE(f.value()->kernel() == *module.value().FindKernel(name))
        << name;
  }
  std::printf(
      "its library: %.2f s, then %.3f s a kernel (%zu kernels asked for)\n",
      library_seconds,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - lowered)
              .count() /
          static_cast<double>(asked.size()),
      asked.size());
}

TEST(GgmlMetal, WholeFileCompiles) {
  REQUIRE_GGML();
  CompileWholeFile(false, {"kernel_soft_max_f32_4", "kernel_mul_mm_q4_0_f32",
                           "kernel_rope_norm_f32", "kernel_cpy_f32_q8_0"});
}

// A device with bfloat (ggml-metal-device.m: has_bfloat, Apple6 or Metal3
// families, and then GGML_METAL_HAS_BF16): 56 kernels
// more, and bfloat as a type of matrices, casts, splats and conditionals.
TEST(GgmlMetal, WholeFileCompilesWithBfloat) {
  REQUIRE_GGML();
  // (Before the functions were put in name order, this kernel's code was
  // not the same in the whole file and alone.)
  CompileWholeFile(true, {"kernel_mul_mm_id_bf16_f32", "kernel_get_rows_bf16",
                          "kernel_mul_mv_bf16_f32_4"});
}

}  // namespace
}  // namespace mtlemu::ggml
