#include "compiler/module_cache.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "compiler/msl/shim_files.h"
#include "isa/binary_module.h"

namespace mtlemu::compiler {
namespace {

// FNV-1a, 64 bits, continued from `h`.
uint64_t Hash(std::string_view data, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// The compiler's identity: the running executable's bytes and the shims.
uint64_t CompilerHash() {
  static const uint64_t hash = [] {
    uint64_t h = Hash("mtlemu-module-cache-v" +
                      std::to_string(isa::kBinaryModuleVersion));
    std::ifstream exe("/proc/self/exe", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(exe)),
                      std::istreambuf_iterator<char>());
    h = Hash(bytes, h);
    for (size_t i = 0; i < msl::kNumShimFiles; ++i) {
      h = Hash(msl::kShimFiles[i].name, h);
      h = Hash(msl::kShimFiles[i].text, h);
    }
    return h;
  }();
  return hash;
}

std::string Hex(uint64_t v) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = kDigits[v & 15];
  return s;
}

}  // namespace

ModuleCache ModuleCache::FromEnvironment() {
  if (const char* d = std::getenv("MTLEMU_CACHE_DIR")) {
    const std::string dir(d);
    return ModuleCache(dir == "off" ? "" : dir);
  }
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    return ModuleCache(std::string(x) + "/mtlemu");
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return ModuleCache(std::string(home) + "/.cache/mtlemu");
  }
  return ModuleCache("");
}

std::string ModuleCache::Key(const msl::PreprocessedSource& preprocessed,
                             const msl::CompileOptions& options,
                             const std::vector<std::string>& kernels) {
  uint64_t h = CompilerHash();
  h = Hash(preprocessed.text, h);
  h = Hash(std::string("\0file:", 6) + preprocessed.files[0].name, h);
  h = Hash(options.fast_math ? std::string_view("\0fast", 5)
                             : std::string_view("\0precise", 8),
           h);
  for (const auto& [name, value] : options.macros) {
    h = Hash(std::string("\0D", 2) + name + "=" + value, h);
  }
  for (const auto& [name, value] : options.function_constants) {
    h = Hash(std::string("\0C", 2) + name + "=" + value, h);
  }
  for (const std::string& k : kernels) h = Hash(std::string("\0K", 2) + k, h);
  return Hex(h);
}

std::optional<isa::Module> ModuleCache::Load(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  std::ifstream in(directory_ + "/" + key + ".mtlb", std::ios::binary);
  if (!in) return std::nullopt;
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  isa::Module module;
  std::string error;
  if (!isa::DeserializeModule(bytes, module, error)) return std::nullopt;
  return module;
}

void ModuleCache::Store(const std::string& key,
                        const isa::Module& module) const {
  if (!enabled()) return;
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) return;
  const std::string final_path = directory_ + "/" + key + ".mtlb";
  const std::string temp_path =
      final_path + ".tmp" + std::to_string(::getpid());
  const std::vector<uint8_t> bytes = isa::SerializeModule(module);
  {
    std::ofstream out(temp_path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::filesystem::remove(temp_path, ec);
      return;
    }
  }
  std::filesystem::rename(temp_path, final_path, ec);
  if (ec) std::filesystem::remove(temp_path, ec);
}

}  // namespace mtlemu::compiler
