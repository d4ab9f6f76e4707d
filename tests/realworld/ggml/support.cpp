#include "tests/realworld/ggml/support.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "isa/numeric.h"

namespace mtlemu::ggml {

namespace fs = std::filesystem;

std::optional<std::string> GgmlRoot() {
  const char* env = std::getenv("MTLEMU_GGML_DIR");
  std::string dir = env != nullptr ? env : MTLEMU_GGML_DIR_DEFAULT;
  if (dir.empty()) return std::nullopt;
  return dir;
}

std::optional<GgmlPaths> FindGgml(const fs::path& root) {
  for (const fs::path& src : {root / "src", root / "ggml" / "src"}) {
    if (fs::is_regular_file(src / "ggml-metal" / "ggml-metal.metal") &&
        fs::is_regular_file(src / "ggml-common.h")) {
      return GgmlPaths{src / "ggml-metal", src};
    }
  }
  return std::nullopt;
}

namespace {

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

const std::string& Source() {
  static const std::string text =
      ReadText(FindGgml(*GgmlRoot())->metal_dir / "ggml-metal.metal");
  return text;
}

msl::CompileOptions GgmlOptions(bool bf16) {
  const GgmlPaths paths = *FindGgml(*GgmlRoot());
  msl::CompileOptions options;
  options.include_directories = {paths.metal_dir.string(),
                                 paths.src_dir.string()};
  if (bf16) options.macros.emplace_back("GGML_METAL_HAS_BF16", "1");
  return options;
}

testing::KernelHarness GgmlKernel(
    const std::string& name,
    const std::vector<std::pair<std::string, std::string>>& constants) {
  msl::CompileOptions options =
      GgmlOptions(name.find("bf16") != std::string::npos);
  options.function_constants = constants;
  return testing::KernelHarness(
      compiler::CompileMsl(Source(), "ggml-metal.metal", options, {name}),
      name);
}

Shape Contiguous(uint64_t type_size, int64_t ne0, int64_t ne1, int64_t ne2,
                 int64_t ne3) {
  Shape s{{ne0, ne1, ne2, ne3}, {type_size, 0, 0, 0}};
  for (int i = 1; i < 4; ++i) s.nb[i] = s.nb[i - 1] * s.ne[i - 1];
  return s;
}

std::vector<float> Random(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

std::vector<uint16_t> ToBfloat(const std::vector<float>& v) {
  std::vector<uint16_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t u;
    std::memcpy(&u, &v[i], 4);
    b[i] = static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
  }
  return b;
}

std::vector<float> FromBfloat(const std::vector<uint16_t>& b) {
  std::vector<float> v(b.size());
  for (size_t i = 0; i < b.size(); ++i) {
    const uint32_t u = static_cast<uint32_t>(b[i]) << 16;
    std::memcpy(&v[i], &u, 4);
  }
  return v;
}

std::vector<uint16_t> ToHalf(const std::vector<float>& v) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = isa::FloatToHalfBits(v[i]);
  return h;
}

std::vector<float> FromHalf(const std::vector<uint16_t>& h) {
  std::vector<float> v(h.size());
  for (size_t i = 0; i < h.size(); ++i) v[i] = isa::HalfBitsToFloat(h[i]);
  return v;
}

std::vector<float> RoundedToHalf(const std::vector<float>& v) {
  return FromHalf(ToHalf(v));
}

::testing::AssertionResult Near(const std::vector<float>& got,
                                const std::vector<double>& want, double rtol,
                                double atol) {
  if (got.size() < want.size()) {
    return ::testing::AssertionFailure()
           << got.size() << " values, " << want.size() << " expected";
  }
  int bad = 0;
  std::ostringstream why;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = std::fabs(got[i] - want[i]);
    if (!(d <= atol + rtol * std::fabs(want[i]))) {
      if (bad++ < 5) {
        why << "\n  [" << i << "] " << got[i] << ", expected " << want[i];
      }
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << want.size() << " differ:" << why.str();
}

double AlibiSlope(int64_t h, int64_t n_head, double max_bias) {
  if (max_bias == 0) return 1.0;
  int64_t n = 1;
  while (2 * n <= n_head) n *= 2;
  return h < n ? std::pow(std::pow(2.0, -max_bias / n), h + 1)
               : std::pow(std::pow(2.0, -max_bias / 2 / n), 2 * (h - n) + 1);
}

HostAlibi HostAlibiArgs(int64_t n_head, float max_bias) {
  const int32_t n_head_log2 =
      1 << static_cast<int32_t>(std::floor(std::log2(float(n_head))));
  return {n_head_log2, std::pow(2.0f, -max_bias / n_head_log2),
          std::pow(2.0f, -(max_bias / 2.0f) / n_head_log2)};
}

const std::vector<BlockType>& BlockTypes() {
  static const std::vector<BlockType> types = {
      {"f32", 4, false},  {"f16", 2, false},  {"bf16", 2, false},
      {"q4_0", 18, true}, {"q4_1", 20, true}, {"q5_0", 22, true},
      {"q5_1", 24, true}, {"q8_0", 34, true}};
  return types;
}

const BlockType& BlockTypeNamed(const std::string& name) {
  for (const BlockType& type : BlockTypes()) {
    if (name == type.name) return type;
  }
  ADD_FAILURE() << "no block type " << name;
  return BlockTypes().front();
}

namespace {

float HalfAt(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return isa::HalfBitsToFloat(h);
}

// The 32 values of one block at `p`.
void DecodeBlock(const std::string& name, const uint8_t* p, float* v) {
  const float d = HalfAt(p);
  if (name == "q8_0") {
    for (int j = 0; j < 32; ++j) v[j] = static_cast<int8_t>(p[2 + j]) * d;
    return;
  }
  const bool has_min = name == "q4_1" || name == "q5_1";
  const bool five_bits = name == "q5_0" || name == "q5_1";
  const float m = has_min ? HalfAt(p + 2) : 0.0f;
  size_t at = has_min ? 4 : 2;
  uint32_t qh = 0;
  if (five_bits) {
    std::memcpy(&qh, p + at, 4);
    at += 4;
  }
  const uint8_t* qs = p + at;
  // The offset of a block without a minimum: half the range of its codes.
  const int zero = five_bits ? 16 : 8;
  for (int j = 0; j < 16; ++j) {
    int lo = qs[j] & 0xF, hi = qs[j] >> 4;
    if (five_bits) {
      lo |= ((qh >> j) & 1) << 4;
      hi |= ((qh >> (j + 16)) & 1) << 4;
    }
    if (has_min) {
      v[j] = lo * d + m;
      v[j + 16] = hi * d + m;
    } else {
      v[j] = (lo - zero) * d;
      v[j + 16] = (hi - zero) * d;
    }
  }
}

}  // namespace

std::vector<float> Decode(const BlockType& type,
                          const std::vector<uint8_t>& bytes) {
  std::vector<float> v;
  if (!type.quantized) {
    v.resize(bytes.size() / type.bytes);
    const bool bf16 = std::string(type.name) == "bf16";
    for (size_t i = 0; i < v.size(); ++i) {
      if (bf16) {
        uint16_t b;
        std::memcpy(&b, &bytes[2 * i], 2);
        v[i] = FromBfloat({b})[0];
      } else if (type.bytes == 2) {
        v[i] = HalfAt(&bytes[2 * i]);
      } else {
        std::memcpy(&v[i], &bytes[4 * i], 4);
      }
    }
    return v;
  }
  const size_t blocks = bytes.size() / type.bytes;
  v.resize(blocks * 32);
  for (size_t b = 0; b < blocks; ++b) {
    DecodeBlock(type.name, &bytes[b * type.bytes], &v[b * 32]);
  }
  return v;
}

Encoded RandomRows(const BlockType& type, int64_t ne00, int64_t rows,
                   uint32_t seed) {
  Encoded e;
  if (!type.quantized) {
    std::vector<float> v = Random(ne00 * rows, seed);
    const std::string name = type.name;
    e.bytes = name == "bf16"  ? Bytes(ToBfloat(v))
              : name == "f16" ? Bytes(ToHalf(v))
                              : Bytes(v);
    e.values = Decode(type, e.bytes);
    return e;
  }
  // Random codes, with scales (and minimums) of a typical weight's size.
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(0.01f, 0.1f);
  const std::string name = type.name;
  const int64_t blocks = ne00 / 32 * rows;
  e.bytes.resize(blocks * type.bytes);
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* p = &e.bytes[b * type.bytes];
    for (size_t k = 0; k < type.bytes; ++k) p[k] = static_cast<uint8_t>(rng());
    const uint16_t dh = isa::FloatToHalfBits(scale(rng));
    std::memcpy(p, &dh, 2);
    if (name == "q4_1" || name == "q5_1") {
      const uint16_t mh = isa::FloatToHalfBits(-scale(rng) * 8);
      std::memcpy(p + 2, &mh, 2);
    }
  }
  e.values = Decode(type, e.bytes);
  return e;
}

}  // namespace mtlemu::ggml
