// The compiled-module cache: keys, round trips, misses.
#include "compiler/module_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "compiler/msl_compiler.h"

namespace mtlemu::compiler {
namespace {

constexpr char kSource[] = R"(#include <metal_stdlib>
using namespace metal;
kernel void twice(device float* a [[buffer(0)]],
                  uint id [[thread_position_in_grid]]) { a[id] *= 2.0f; }
)";

std::string Key(std::string_view source, std::string_view file,
                const msl::CompileOptions& options,
                const std::vector<std::string>& kernels) {
  const msl::PreprocessedSource preprocessed =
      msl::Preprocess(source, file, options);
  EXPECT_TRUE(preprocessed.ok());
  return ModuleCache::Key(preprocessed, options, kernels);
}

class ModuleCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("mtlemu_cache_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(ModuleCacheTest, KeysDependOnEverythingTheOutputDependsOn) {
  const std::string key = Key(kSource, "a.metal", {}, {});
  EXPECT_EQ(key, Key(kSource, "a.metal", {}, {}));
  std::string changed = kSource;
  changed.replace(changed.find("2.0f"), 4, "3.0f");
  EXPECT_NE(key, Key(changed, "a.metal", {}, {}));
  EXPECT_NE(key, Key(kSource, "b.metal", {}, {}));
  EXPECT_NE(key, Key(kSource, "a.metal", {}, {"twice"}));
  msl::CompileOptions precise;
  precise.fast_math = false;
  EXPECT_NE(key, Key(kSource, "a.metal", precise, {}));
  msl::CompileOptions macro;
  macro.macros.push_back({"N", "4"});
  EXPECT_NE(key, Key(kSource, "a.metal", macro, {}));
  msl::CompileOptions constant;
  constant.function_constants.push_back({"scale", "2"});
  EXPECT_NE(key, Key(kSource, "a.metal", constant, {}));
}

// The compiler's identity names the object that holds it and the LLVM and
// Clang libraries it runs on (this test links them as shared libraries,
// as Debian ships them), each by its build id: an upgrade of either must
// miss the cache.
TEST(ModuleCacheCompilerTest, IdentityHasTheCompilerAndLlvmAndClang) {
  const std::vector<ModuleCache::CompilerPart> parts =
      ModuleCache::CompilerParts();
  ASSERT_FALSE(parts.empty());
  EXPECT_EQ(parts[0].path, "compiler");
  bool llvm = false, clang = false;
  for (const ModuleCache::CompilerPart& part : parts) {
    EXPECT_FALSE(part.id.empty()) << part.path;
    llvm |= part.path.starts_with("libLLVM");
    clang |= part.path.starts_with("libclang");
  }
  EXPECT_TRUE(llvm);
  EXPECT_TRUE(clang);
  // A build id as readelf prints it (GNU ld's SHA-1: 40 hex digits), or a
  // hash of the bytes of an object linked without one.
  for (const ModuleCache::CompilerPart& part : parts) {
    EXPECT_TRUE(part.id.size() == 40 || part.id.starts_with("xxh64:"))
        << part.path << " " << part.id;
  }
}

// The key is made from the preprocessed text, so a header that changes
// changes it, and one that is only touched does not.
TEST_F(ModuleCacheTest, KeysSeeIncludedHeaders) {
  std::filesystem::create_directories(dir_ / "inc");
  const auto write_header = [&](const char* text) {
    std::ofstream(dir_ / "inc" / "scale.h") << text;
  };
  const std::string source =
      "#include \"scale.h\"\n"
      "kernel void k(device float* a [[buffer(0)]]) { a[0] = SCALE; }\n";
  msl::CompileOptions options;
  options.include_directories.push_back((dir_ / "inc").string());
  write_header("#define SCALE 2.0f\n");
  const std::string before = Key(source, "a.metal", options, {});
  write_header("#define SCALE 2.0f\n");
  EXPECT_EQ(before, Key(source, "a.metal", options, {}));
  write_header("#define SCALE 3.0f\n");
  EXPECT_NE(before, Key(source, "a.metal", options, {}));
}

TEST_F(ModuleCacheTest, StoredModulesLoadBackEqual) {
  const ModuleCache cache(dir_.string());
  Result<isa::Module> compiled = CompileMsl(kSource, "a.metal", {});
  ASSERT_TRUE(compiled.ok()) << compiled.error().message;
  const std::string key = Key(kSource, "a.metal", {}, {});
  EXPECT_FALSE(cache.Load(key).has_value());
  cache.Store(key, compiled.value());
  const std::optional<isa::Module> loaded = cache.Load(key);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(*loaded, compiled.value());
}

// Threads storing one key at once (two processes' compiles of one kernel
// do the same): every load meanwhile is a miss or the whole module, and
// one whole entry is left, with no temporary file.
TEST_F(ModuleCacheTest, WritersOfOneKeyAtOnceLeaveOneWholeEntry) {
  const ModuleCache cache(dir_.string());
  Result<isa::Module> compiled = CompileMsl(kSource, "a.metal", {});
  ASSERT_TRUE(compiled.ok()) << compiled.error().message;
  const std::string key = Key(kSource, "a.metal", {}, {});
  std::vector<std::thread> writers;
  std::vector<int> damaged(6, 0);
  for (int t = 0; t < 6; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        cache.Store(key, compiled.value());
        const std::optional<isa::Module> loaded = cache.Load(key);
        if (!loaded || *loaded != compiled.value()) ++damaged[t];
      }
    });
  }
  for (std::thread& w : writers) w.join();
  EXPECT_EQ(damaged, std::vector<int>(6, 0));
  const std::optional<isa::Module> loaded = cache.Load(key);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(*loaded, compiled.value());
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().extension(), ".mtlb") << entry.path();
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(ModuleCacheTest, ADamagedEntryIsAMiss) {
  const ModuleCache cache(dir_.string());
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ / "0123456789abcdef.mtlb") << "MTLEMUB garbage";
  EXPECT_FALSE(cache.Load("0123456789abcdef").has_value());
}

TEST_F(ModuleCacheTest, ADisabledCacheNeverHits) {
  const ModuleCache cache("");
  EXPECT_FALSE(cache.enabled());
  cache.Store("0123456789abcdef", isa::Module{});
  EXPECT_FALSE(cache.Load("0123456789abcdef").has_value());
}

}  // namespace
}  // namespace mtlemu::compiler
