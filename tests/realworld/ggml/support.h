// What the tests of llama.cpp's Metal backend share: where ggml's snapshot
// is, how its host compiles ggml-metal.metal and picks a kernel, ggml's
// tensor shapes, random data, half and quantized blocks, and a tolerance
// check against references in double.
//
// ggml's code is not part of this project: the tests read a snapshot from
// the folder MTLEMU_GGML_DIR names (a checkout of github.com/ggml-org/ggml,
// or of llama.cpp, whose ggml/ folder is the same), else the CMake option
// of that name, and skip, saying so, without one. `bash
// scripts/realworld.sh` runs them.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/msl_compiler.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu::ggml {

// The folder with ggml-metal.metal and the one with ggml-common.h: ggml's
// layout (src/ggml-metal) or llama.cpp's (ggml/src/ggml-metal).
struct GgmlPaths {
  std::filesystem::path metal_dir;
  std::filesystem::path src_dir;
};

std::optional<std::string> GgmlRoot();
std::optional<GgmlPaths> FindGgml(const std::filesystem::path& root);

#define REQUIRE_GGML()                                                      \
  do {                                                                      \
    if (!::mtlemu::ggml::GgmlRoot()) {                                      \
      GTEST_SKIP() << "MTLEMU_GGML_DIR is not set: give it a snapshot of "  \
                      "github.com/ggml-org/ggml (or llama.cpp) to run its " \
                      "Metal kernels";                                      \
    }                                                                       \
    if (!::mtlemu::ggml::FindGgml(*::mtlemu::ggml::GgmlRoot())) {           \
      FAIL() << "MTLEMU_GGML_DIR=" << *::mtlemu::ggml::GgmlRoot()           \
             << " has no src/ggml-metal/ggml-metal.metal with "             \
                "src/ggml-common.h (nor ggml/src/...)";                     \
    }                                                                       \
  } while (0)

// ggml-metal.metal's text.
const std::string& Source();

// What ggml_metal_library_init (ggml-metal-device.m) passes: the folders
// of its two headers, and GGML_METAL_HAS_BF16 where the device has bfloat.
msl::CompileOptions GgmlOptions(bool bf16 = false);

// One kernel by its [[host_name]], with the function constants that
// ggml_metal_library_compile_pipeline gives it ("INDEX" -> value); the
// bfloat kernels (bf16 in the name) from the file compiled with
// GGML_METAL_HAS_BF16, as on a device with bfloat.
testing::KernelHarness GgmlKernel(
    const std::string& name,
    const std::vector<std::pair<std::string, std::string>>& constants = {});

// A ggml tensor's shape: ne[0] innermost, nb[i] in bytes.
struct Shape {
  int64_t ne[4];
  uint64_t nb[4];
  int64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
};
Shape Contiguous(uint64_t type_size, int64_t ne0, int64_t ne1 = 1,
                 int64_t ne2 = 1, int64_t ne3 = 1);

std::vector<float> Random(size_t n, uint32_t seed, float lo = -2.0f,
                          float hi = 2.0f);

// bfloat's bits (the high half of a float's, rounded to nearest even) and
// back.
std::vector<uint16_t> ToBfloat(const std::vector<float>& v);
std::vector<float> FromBfloat(const std::vector<uint16_t>& b);

std::vector<uint16_t> ToHalf(const std::vector<float>& v);
std::vector<float> FromHalf(const std::vector<uint16_t>& h);
// Each value rounded to half and back.
std::vector<float> RoundedToHalf(const std::vector<float>& v);

// |got - want| <= atol + rtol * |want| for every element; one message for
// the first few that are not.
::testing::AssertionResult Near(const std::vector<float>& got,
                                const std::vector<double>& want, double rtol,
                                double atol);

// --- ALiBi (softmax and flash attention) -------------------------------------
// ALiBi's slope of head h: a geometric sequence over the n = 2^floor(log2
// n_head) first heads, 2^(-max_bias / n) to the power h + 1, and, for the
// heads past n, the odd powers of its square root (the sequence of 2n
// heads, every other one); 1 without a bias.
double AlibiSlope(int64_t h, int64_t n_head, double max_bias);

// What the host passes for it (ggml_metal_op_soft_max,
// ggml_metal_op_flash_attn_ext): n_head_log2 = 2^floor(log2(n_head)), m0 =
// 2^(-max_bias / n_head_log2), m1 = 2^(-max_bias / 2 / n_head_log2).
struct HostAlibi {
  int32_t n_head_log2;
  float m0, m1;
};
HostAlibi HostAlibiArgs(int64_t n_head, float max_bias);

// --- quantized blocks (ggml-common.h) ----------------------------------------
// A block of 32 values: q4_0 {half d; uint8 qs[16]}: (nibble - 8) * d, the
// low nibbles the first 16 values, the high ones the next 16; q4_1 {half
// d, m; qs[16]}: nibble * d + m; q5_0 {half d; uint8 qh[4]; qs[16]}: the
// fifth bit of value j is bit j of qh, (q - 16) * d; q5_1 {d, m, qh, qs}:
// q * d + m; q8_0 {half d; int8 qs[32]}: q * d.

struct BlockType {
  const char* name;
  size_t bytes;  // per block of 32, or per element for f32/f16
  bool quantized;
  // The bytes of `n` values (a whole number of blocks).
  size_t BytesOf(int64_t n) const {
    return quantized ? n / 32 * bytes : n * bytes;
  }
};

// f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0.
const std::vector<BlockType>& BlockTypes();
const BlockType& BlockTypeNamed(const std::string& name);

// What `bytes` of `type` mean, value by value.
std::vector<float> Decode(const BlockType& type,
                          const std::vector<uint8_t>& bytes);

// Random rows of `ne00` values of `type` (bytes) and what they mean.
struct Encoded {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};
Encoded RandomRows(const BlockType& type, int64_t ne00, int64_t rows,
                   uint32_t seed);

// The bytes of floats, halves or anything trivially copyable.
template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

}  // namespace mtlemu::ggml
