// A library of many kernels (api/library.h): the front ends when the
// library is made, each kernel's back end when a function asks for it
// (compiler/msl_front_ends.h), and the code of each the code a compile of
// the whole source gives it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "api/library.h"
#include "compiler/msl/attribute_rewriter.h"
#include "compiler/msl_compiler.h"
#include "compiler/msl_front_ends.h"
#include "tests/support/kernel_harness.h"
#include "tests/support/many_kernels.h"

namespace mtlemu::api {
namespace {

class LibraryOfMany : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("mtlemu_library_of_many_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "cache");
    std::ofstream(dir_ / "scale.h") << testing::kScaleHeader;
    options_.include_directories = {dir_.string()};
    device_ = Device::Create("m1").value();
    source_ = testing::ManyKernels(200);
    Result<isa::Module> whole =
        compiler::CompileMsl(source_, "many.metal", options_);
    ASSERT_TRUE(whole.ok()) << whole.error().message;
    whole_ = std::move(whole).value();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Result<std::shared_ptr<Library>> Make(const compiler::ModuleCache& cache) {
    return newLibraryWithSource(*device_, source_, options_, "many.metal", {},
                                cache);
  }

  std::filesystem::path dir_;
  msl::CompileOptions options_;
  std::shared_ptr<Device> device_;
  std::string source_;
  isa::Module whole_;  // one compile of every kernel
};

std::vector<std::string> NamesOf(const isa::Module& m) {
  std::vector<std::string> names;
  for (const isa::Kernel& k : m.kernels) names.push_back(k.name);
  return names;
}

TEST_F(LibraryOfMany, EachKernelWhenAskedIsTheKernelOfTheWholeCompile) {
  Result<std::shared_ptr<Library>> library = Make(compiler::ModuleCache(""));
  ASSERT_TRUE(library.ok()) << library.error().message;
  const Library& lib = *library.value();
  EXPECT_EQ(lib.module(), nullptr);  // nothing lowered yet
  EXPECT_EQ(lib.functionNames(), NamesOf(whole_));
  ASSERT_EQ(whole_.kernels.size(), 214u);
  for (const char* name : {"first", "axpy_0", "widen_7", "axpy_133", "plain_97",
                           "widen_181", "axpy_199"}) {
    Result<std::shared_ptr<Function>> f = lib.newFunction(name);
    ASSERT_TRUE(f.ok()) << f.error().message;
    const isa::Kernel* in_whole = whole_.FindKernel(name);
    ASSERT_NE(in_whole, nullptr);
    // Locations included: the file table of the kernel's own module.
    EXPECT_TRUE(f.value()->kernel() == *in_whole) << name;
    for (const isa::Instruction& i : f.value()->kernel().code) {
      ASSERT_LT(i.location.file, f.value()->module().files.size());
      EXPECT_EQ(f.value()->module().files[i.location.file],
                whole_.files.at(
                    in_whole->code.at(&i - f.value()->kernel().code.data())
                        .location.file));
    }
  }
  // Every kernel at once, in the library's order, is the whole module.
  Result<std::shared_ptr<const isa::Module>> all = lib.wholeModule();
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_TRUE(*all.value() == whole_);

  Result<std::shared_ptr<Function>> missing = lib.newFunction("axpy_200");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(
                "no kernel named 'axpy_200' in many.metal (it has: first, "),
            std::string::npos)
      << missing.error().message;
}

// The front ends in two parts, by hand (the host may have one core): the
// same kernels, lowered one at a time or all at once.
TEST_F(LibraryOfMany, FrontEndsInPartsLowerEachKernelAsTheWholeDoes) {
  const msl::PreprocessedSource pre =
      msl::Preprocess(source_, "many.metal", options_);
  const std::vector<std::string> in_order =
      msl::ExplicitInstantiations(pre.text);
  std::vector<std::vector<std::string>> parts(2);
  for (size_t i = 0; i < in_order.size(); ++i) {
    parts[i % 3 == 0 ? 0 : 1].push_back(in_order[i]);
  }
  std::unique_ptr<compiler::MslFrontEnds> fronts =
      compiler::MslFrontEnds::Compile(pre, options_, {}, parts);
  ASSERT_TRUE(fronts->ok());
  ASSERT_EQ(fronts->parts(), 2u);
  EXPECT_EQ(fronts->names(), NamesOf(whole_));
  for (const char* name : {"axpy_3", "axpy_4", "widen_57", "plain_17"}) {
    Result<isa::Module> one = fronts->Lower(name);
    ASSERT_TRUE(one.ok()) << one.error().message;
    ASSERT_EQ(one.value().kernels.size(), 1u);
    EXPECT_TRUE(one.value().kernels[0] == *whole_.FindKernel(name)) << name;
  }
  // Lowering some before does not change the rest.
  Result<isa::Module> all = fronts->LowerAll({});
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_TRUE(all.value() == whole_);
}

TEST_F(LibraryOfMany, ThreadsAskForKernelsAtOnce) {
  Result<std::shared_ptr<Library>> library = Make(compiler::ModuleCache(""));
  ASSERT_TRUE(library.ok()) << library.error().message;
  const std::vector<std::string> names = {"axpy_10", "axpy_11",  "widen_7",
                                          "axpy_10", "plain_57", "axpy_11"};
  std::vector<std::shared_ptr<Function>> got(names.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < names.size(); ++t) {
    threads.emplace_back([&, t] {
      Result<std::shared_ptr<Function>> f =
          library.value()->newFunction(names[t]);
      if (f.ok()) got[t] = std::move(f).value();
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t t = 0; t < names.size(); ++t) {
    ASSERT_NE(got[t], nullptr) << names[t];
    EXPECT_TRUE(got[t]->kernel() == *whole_.FindKernel(names[t])) << names[t];
  }
  // One module per kernel, made once.
  EXPECT_EQ(&got[0]->module(), &got[3]->module());
}

TEST_F(LibraryOfMany, KernelsRun) {
  Result<std::shared_ptr<Library>> library = Make(compiler::ModuleCache(""));
  ASSERT_TRUE(library.ok()) << library.error().message;
  Result<std::shared_ptr<Function>> f = library.value()->newFunction("axpy_6");
  ASSERT_TRUE(f.ok()) << f.error().message;
  testing::KernelHarness h(isa::Module(f.value()->module()), "axpy_6");
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  std::vector<float> x = {1, 2, 3, 4}, y = {10, 20, 30, 40};
  h.SetBuffer(0, x);
  h.SetBuffer(1, y);
  ASSERT_TRUE(testing::Runs(h, {4, 1, 1}, {4, 1, 1}));
  EXPECT_EQ(h.Read<float>(1), (std::vector<float>{16, 32, 48, 64}));
}

// The kernels' names under the compile's key, each kernel lowered under
// its own: a second library of the source (another process) compiles
// nothing for the kernels the first lowered.
TEST_F(LibraryOfMany, TheCacheKeepsTheNamesAndEachKernelLowered) {
  const compiler::ModuleCache cache((dir_ / "cache").string());
  {
    Result<std::shared_ptr<Library>> first = Make(cache);
    ASSERT_TRUE(first.ok()) << first.error().message;
    ASSERT_TRUE(first.value()->newFunction("axpy_42").ok());
  }
  size_t names = 0, modules = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_ / "cache")) {
    names += e.path().extension() == ".names";
    modules += e.path().extension() == ".mtlb";
  }
  EXPECT_EQ(names, 1u);
  EXPECT_EQ(modules, 1u);
  Result<std::shared_ptr<Library>> second = Make(cache);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second.value()->functionNames(), NamesOf(whole_));
  for (const char* name : {"axpy_42", "axpy_43"}) {  // cached, compiled
    Result<std::shared_ptr<Function>> f = second.value()->newFunction(name);
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_TRUE(f.value()->kernel() == *whole_.FindKernel(name)) << name;
  }
}

// Every error of the source when the library is made, as for any library.
TEST_F(LibraryOfMany, ErrorsWhenTheLibraryIsMade) {
  source_ +=
      "kernel void broken(device float* y [[buffer(0)]]) { y[0] = q; }\n";
  Result<std::shared_ptr<Library>> library = Make(compiler::ModuleCache(""));
  ASSERT_FALSE(library.ok());
  EXPECT_NE(library.error().message.find("many.metal:"), std::string::npos);
  EXPECT_NE(library.error().message.find("undeclared identifier 'q'"),
            std::string::npos)
      << library.error().message;
}

}  // namespace
}  // namespace mtlemu::api
