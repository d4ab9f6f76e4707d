// llama.cpp's Metal backend (ggml's src/ggml-metal/ggml-metal.metal): the
// whole file compiles with the macros its host passes, as
// ggml_metal_library_init compiles it, with bfloat on and off. support.h
// says where ggml's snapshot comes from.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "tests/realworld/ggml/support.h"

namespace mtlemu::ggml {
namespace {

void CompileWholeFile(bool bf16) {
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
}

TEST(GgmlMetal, WholeFileCompiles) {
  REQUIRE_GGML();
  CompileWholeFile(false);
}

// A device with bfloat (ggml-metal-device.m: has_bfloat, Apple6 or Metal3
// families, and then GGML_METAL_HAS_BF16): 56 kernels
// more, and bfloat as a type of matrices, casts, splats and conditionals.
TEST(GgmlMetal, WholeFileCompilesWithBfloat) {
  REQUIRE_GGML();
  CompileWholeFile(true);
}

}  // namespace
}  // namespace mtlemu::ggml
