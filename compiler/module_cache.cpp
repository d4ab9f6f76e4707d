#include "compiler/module_cache.h"

#include <elf.h>
#include <link.h>
#include <llvm/Support/xxhash.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "compiler/msl/shim_files.h"
#include "isa/binary_module.h"

namespace mtlemu::compiler {
namespace {

// `data` folded into the running hash `h` (xxHash64 of the piece, then of
// the pair).
uint64_t Hash(std::string_view data, uint64_t h = 0) {
  const uint64_t pair[2] = {h, llvm::xxHash64(llvm::StringRef(data))};
  return llvm::xxHash64(
      llvm::StringRef(reinterpret_cast<const char*>(pair), sizeof(pair)));
}

// The GNU build id of a loaded object, as hex, or empty.
std::string BuildId(const dl_phdr_info& object) {
  for (int i = 0; i < object.dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = object.dlpi_phdr[i];
    if (segment.p_type != PT_NOTE) continue;
    const char* p =
        reinterpret_cast<const char*>(object.dlpi_addr + segment.p_vaddr);
    const char* end = p + segment.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const char* name = p + sizeof(ElfW(Nhdr));
      const char* desc = name + ((note->n_namesz + 3) & ~3u);
      if (desc + note->n_descsz > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0) {
        std::string hex;
        for (uint32_t b = 0; b < note->n_descsz; ++b) {
          static const char kDigits[] = "0123456789abcdef";
          const auto byte = static_cast<unsigned char>(desc[b]);
          hex += kDigits[byte >> 4];
          hex += kDigits[byte & 15];
        }
        return hex;
      }
      p = desc + ((note->n_descsz + 3) & ~3u);
    }
  }
  return "";
}

// The hash of a file's bytes, as hex (for an object without a build id).
std::string FileHash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  return "xxh64:" + std::to_string(llvm::xxHash64(llvm::StringRef(bytes)));
}

// The compiler's identity: the cache version, the object this code is in,
// LLVM's and Clang's shared libraries, and the shims.
uint64_t CompilerHash() {
  static const uint64_t hash = [] {
    uint64_t h = Hash("mtlemu-module-cache-v" +
                      std::to_string(isa::kBinaryModuleVersion));
    for (const ModuleCache::CompilerPart& part : ModuleCache::CompilerParts()) {
      h = Hash(part.path, h);
      h = Hash(part.id, h);
    }
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

std::vector<ModuleCache::CompilerPart> ModuleCache::CompilerParts() {
  struct Search {
    const void* self;  // an address in the object that holds the compiler
    std::vector<CompilerPart> parts;
  } search{reinterpret_cast<const void*>(&CompilerHash), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* object, size_t, void* data) {
        auto* search = static_cast<Search*>(data);
        // The compiler's own object: the one whose loaded segments hold
        // `self` (the main program, or a shared library that embeds it).
        bool holds_self = false;
        const auto self = reinterpret_cast<uintptr_t>(search->self);
        for (int i = 0; i < object->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = object->dlpi_phdr[i];
          const uintptr_t start = object->dlpi_addr + segment.p_vaddr;
          if (segment.p_type == PT_LOAD && self >= start &&
              self < start + segment.p_memsz) {
            holds_self = true;
          }
        }
        std::string path = object->dlpi_name;
        if (path.empty()) path = "/proc/self/exe";
        const std::string base = std::filesystem::path(path).filename();
        const bool llvm =
            base.starts_with("libLLVM") || base.starts_with("libclang");
        if (!holds_self && !llvm) return 0;
        std::string id = BuildId(*object);
        if (id.empty()) id = FileHash(path);
        CompilerPart part{holds_self ? "compiler" : base, id};
        if (holds_self) {
          search->parts.insert(search->parts.begin(), part);
        } else {
          search->parts.push_back(part);
        }
        return 0;
      },
      &search);
  return search.parts;
}

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

namespace {

// Key, as a number.
uint64_t KeyHash(const msl::PreprocessedSource& preprocessed,
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
  return h;
}

}  // namespace

std::string ModuleCache::Key(const msl::PreprocessedSource& preprocessed,
                             const msl::CompileOptions& options,
                             const std::vector<std::string>& kernels) {
  return Hex(KeyHash(preprocessed, options, kernels));
}

std::string ModuleCache::FunctionKey(
    const msl::PreprocessedSource& preprocessed,
    const msl::CompileOptions& options, const std::string& kernel) {
  return Hex(Hash(std::string("\0function:", 10) + kernel,
                  KeyHash(preprocessed, options, {})));
}

std::optional<std::vector<uint8_t>> ModuleCache::LoadBytes(
    const std::string& name) const {
  if (!enabled()) return std::nullopt;
  std::ifstream in(directory_ + "/" + name, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return bytes;
}

void ModuleCache::StoreBytes(const std::string& name,
                             const std::vector<uint8_t>& bytes) const {
  if (!enabled()) return;
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) return;
  const std::string final_path = directory_ + "/" + name;
  // A name of its own for each writer, in any process or thread, so that
  // writers of one key never write into each other's file: the last rename
  // wins, and every one of them renames a whole entry.
  static std::atomic<uint64_t> writes{0};
  const std::string temp_path = final_path + ".tmp" +
                                std::to_string(::getpid()) + "." +
                                std::to_string(writes.fetch_add(1));
  {
    std::ofstream out(temp_path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      out.close();
      std::filesystem::remove(temp_path, ec);
      return;
    }
  }
  std::filesystem::rename(temp_path, final_path, ec);
  if (ec) std::filesystem::remove(temp_path, ec);
}

std::optional<isa::Module> ModuleCache::Load(const std::string& key) const {
  const std::optional<std::vector<uint8_t>> bytes = LoadBytes(key + ".mtlb");
  if (!bytes) return std::nullopt;
  isa::Module module;
  std::string error;
  if (!isa::DeserializeModule(*bytes, module, error)) return std::nullopt;
  return module;
}

void ModuleCache::Store(const std::string& key,
                        const isa::Module& module) const {
  StoreBytes(key + ".mtlb", isa::SerializeModule(module));
}

// The names file: a first line that says what it is, then a name a line.
constexpr std::string_view kNamesHeader = "mtlemu kernel names 1\n";

std::optional<std::vector<std::string>> ModuleCache::LoadNames(
    const std::string& key) const {
  const std::optional<std::vector<uint8_t>> bytes = LoadBytes(key + ".names");
  if (!bytes) return std::nullopt;
  const std::string text(bytes->begin(), bytes->end());
  if (!text.starts_with(kNamesHeader) || !text.ends_with("\n")) {
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (size_t at = kNamesHeader.size(); at < text.size();) {
    const size_t end = text.find('\n', at);
    names.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return names;
}

void ModuleCache::StoreNames(const std::string& key,
                             const std::vector<std::string>& names) const {
  std::string text(kNamesHeader);
  for (const std::string& n : names) text += n + "\n";
  StoreBytes(key + ".names", std::vector<uint8_t>(text.begin(), text.end()));
}

}  // namespace mtlemu::compiler
