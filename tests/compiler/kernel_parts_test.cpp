// A source of many kernels compiled in parts side by side
// (compiler/kernel_parts.h): which part makes and lowers what, the order
// and file table of the merged module, and that the module is the one a
// single compile makes, whatever the division, with the same errors.
#include "compiler/kernel_parts.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compiler/msl/attribute_rewriter.h"
#include "compiler/msl_compiler.h"
#include "tests/support/kernel_harness.h"
#include "tests/support/many_kernels.h"

namespace mtlemu::compiler {
namespace {

using Names = std::vector<std::string>;

Names Numbered(const std::string& prefix, int n) {
  Names out;
  for (int i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

TEST(PartitionInstantiations, FewAreOnePartManyAreDealtOutInTurn) {
  const Names few = Numbered("k", 20);
  EXPECT_EQ(PartitionInstantiations(few, {}, 4), std::vector<Names>{few});
  EXPECT_EQ(PartitionInstantiations(Numbered("k", 400), {}, 1).size(), 1u);

  const std::vector<Names> parts =
      PartitionInstantiations(Numbered("k", 400), {}, 4);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].size(), 100u);
  EXPECT_EQ(parts[0][0], "k0");
  EXPECT_EQ(parts[0][1], "k4");
  EXPECT_EQ(parts[3][0], "k3");
  EXPECT_EQ(parts[3][99], "k399");

  // Of the kernels asked for, only the instantiations, in source order.
  EXPECT_EQ(
      PartitionInstantiations(Numbered("k", 400), {"k7", "plain", "k3"}, 4),
      (std::vector<Names>{{"k3", "k7"}}));
}

TEST(KernelsToLower, OwnShareAndEveryOtherKernelInTurn) {
  const Names all = {"i0", "i1", "i2", "i3"};
  // Part 1 of 2 made i1 and i3; "a", "b", "c" are plain kernels, which
  // every part declares.
  const Names declared = {"a", "i1", "b", "i3", "c"};
  EXPECT_EQ(KernelsToLower(declared, all, {"i1", "i3"}, {}, 1, 2),
            (Names{"i1", "i3", "b"}));
  EXPECT_EQ(
      KernelsToLower({"a", "i0", "b", "i2", "c"}, all, {"i0", "i2"}, {}, 0, 2),
      (Names{"i0", "i2", "a", "c"}));
  // An instantiation that declared no kernel is left out unless asked for;
  // a name no part declares goes to part 0, to be reported there.
  EXPECT_EQ(KernelsToLower({"a", "i1"}, all, {"i1", "i3"}, {}, 1, 2),
            (Names{"i1"}));
  EXPECT_EQ(KernelsToLower({"a", "i0"}, all, {"i0", "i2"},
                           {"i0", "i2", "a", "nope"}, 0, 2),
            (Names{"i0", "i2", "a", "nope"}));
}

TEST(SourceOrder, InstantiationsBetweenTheOtherKernelsWhereTheSourceHasThem) {
  // Source: i0 a i1 i2 b i3; two parts dealt i0 i2 / i1 i3.
  const Names all = {"i0", "i1", "i2", "i3"};
  EXPECT_EQ(SourceOrder({{"i0", "a", "i2", "b"}, {"a", "i1", "b", "i3"}}, all),
            (Names{"i0", "a", "i1", "i2", "b", "i3"}));
}

isa::Kernel KernelAt(const std::string& name, uint16_t file, uint32_t line) {
  isa::Kernel k;
  k.name = name;
  isa::Instruction exit;
  exit.location = {file, line, 1};
  k.code.push_back(exit);
  return k;
}

TEST(MergeParts, OneFileTableInTheGivenOrder) {
  isa::Module a;
  a.files = {"main.metal", "x.h"};
  a.kernels = {KernelAt("k1", 1, 10), KernelAt("k3", 0, 30)};
  isa::Module b;
  b.files = {"main.metal", "y.h", "x.h"};
  b.kernels = {KernelAt("k2", 2, 20), KernelAt("k0", 1, 5)};
  Result<isa::Module> merged =
      MergeParts({a, b}, {"k0", "k1", "absent", "k2", "k3"});
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  const isa::Module& m = merged.value();
  EXPECT_EQ(m.files, (Names{"main.metal", "x.h", "y.h"}));
  ASSERT_EQ(m.kernels.size(), 4u);
  EXPECT_EQ(m.kernels[0].name, "k0");
  EXPECT_EQ(m.files[m.kernels[0].code[0].location.file], "y.h");
  EXPECT_EQ(m.kernels[1].name, "k1");
  EXPECT_EQ(m.files[m.kernels[1].code[0].location.file], "x.h");
  EXPECT_EQ(m.kernels[2].name, "k2");
  EXPECT_EQ(m.files[m.kernels[2].code[0].location.file], "x.h");
  EXPECT_EQ(m.kernels[3].name, "k3");
  EXPECT_EQ(m.kernels[3].code[0].location.file, 0);

  EXPECT_FALSE(MergeParts({a, a}, {"k1", "k3"}).ok());  // k1 made twice
  EXPECT_FALSE(MergeParts({a}, {"k1"}).ok());           // k3 has no place
}

class CompileInParts : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("mtlemu_kernel_parts_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "scale.h") << testing::kScaleHeader;
    options_.include_directories = {dir_.string()};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  msl::PreprocessedSource Preprocessed(const std::string& source) const {
    return msl::Preprocess(source, "many.metal", options_);
  }

  std::filesystem::path dir_;
  msl::CompileOptions options_;
};

TEST_F(CompileInParts, TheModuleOfOneCompileWhateverTheDivision) {
  const msl::PreprocessedSource source =
      Preprocessed(testing::ManyKernels(200));
  ASSERT_TRUE(source.ok());
  const Names in_order = msl::ExplicitInstantiations(source.text);
  ASSERT_EQ(in_order.size(), 208u);  // 200 axpy, 8 widen
  EXPECT_EQ(in_order[0], "axpy_0");
  EXPECT_EQ(in_order[8], "widen_7");
  EXPECT_EQ(in_order[207], "axpy_199");
  ASSERT_EQ(PartitionInstantiations(in_order, {}, 3).size(), 3u);

  CompiledMsl one = CompileMslInParts(source, options_, {}, {in_order});
  ASSERT_TRUE(one.module.ok()) << one.module.error().message;
  ASSERT_EQ(one.module.value().kernels.size(), 214u);  // 208 + 6 plain
  EXPECT_EQ(one.module.value().kernels[0].name, "first");
  EXPECT_EQ(one.module.value().files.size(), 2u);  // many.metal, scale.h

  CompiledMsl split = CompileMslWithWarnings(source, options_, {});
  ASSERT_TRUE(split.module.ok()) << split.module.error().message;
  EXPECT_TRUE(split.module.value() == one.module.value());

  // Uneven runs, a part of one kernel, the parts out of source order.
  std::vector<Names> odd(3);
  for (size_t i = 0; i < in_order.size(); ++i) {
    odd[i < 1 ? 0 : i < 150 ? 2 : 1].push_back(in_order[i]);
  }
  // Only one part with a half4 widen: the others are given its rewrite.
  std::vector<Names> one_half(2);
  for (const std::string& name : in_order) {
    one_half[name == "widen_7" ? 0 : 1].push_back(name);
  }
  CompiledMsl uneven = CompileMslInParts(source, options_, {}, odd);
  ASSERT_TRUE(uneven.module.ok()) << uneven.module.error().message;
  EXPECT_TRUE(uneven.module.value() == one.module.value());
  CompiledMsl half = CompileMslInParts(source, options_, {}, one_half);
  ASSERT_TRUE(half.module.ok()) << half.module.error().message;
  EXPECT_TRUE(half.module.value() == one.module.value());
}

// Whatever else the module holds (the functions and globals are in name
// order before the always-inliner and the back end see them).
TEST_F(CompileInParts, AKernelAloneIsTheKernelOfTheWholeModule) {
  const msl::PreprocessedSource source =
      Preprocessed(testing::ManyKernels(200));
  CompiledMsl whole = CompileMslWithWarnings(source, options_, {});
  ASSERT_TRUE(whole.module.ok()) << whole.module.error().message;
  for (const char* name : {"axpy_133", "widen_57", "plain_97"}) {
    CompiledMsl alone = CompileMslWithWarnings(source, options_, {name});
    ASSERT_TRUE(alone.module.ok()) << alone.module.error().message;
    ASSERT_EQ(alone.module.value().kernels.size(), 1u);
    const isa::Kernel* in_whole = whole.module.value().FindKernel(name);
    ASSERT_NE(in_whole, nullptr);
    EXPECT_TRUE(alone.module.value().kernels[0] == *in_whole) << name;
  }
}

TEST_F(CompileInParts, KernelsAskedForComeInTheirSourceOrder) {
  const msl::PreprocessedSource source =
      Preprocessed(testing::ManyKernels(200));
  Names asked = Numbered("axpy_", 120);
  asked.push_back("plain_137");
  asked.push_back("first");
  CompiledMsl split = CompileMslWithWarnings(source, options_, asked);
  ASSERT_TRUE(split.module.ok()) << split.module.error().message;
  const isa::Module& m = split.module.value();
  ASSERT_EQ(m.kernels.size(), 122u);
  EXPECT_EQ(m.kernels[0].name, "first");
  EXPECT_EQ(m.kernels[119].name, "axpy_118");
  EXPECT_EQ(m.kernels[121].name, "plain_137");  // after axpy_119, in source

  asked.push_back("missing");
  CompiledMsl bad = CompileMslWithWarnings(source, options_, asked);
  ASSERT_FALSE(bad.module.ok());
  EXPECT_NE(bad.module.error().message.find("no kernel named 'missing'"),
            std::string::npos)
      << bad.module.error().message;
}

TEST_F(CompileInParts, KernelsOfTheMergedModuleRun) {
  const msl::PreprocessedSource source =
      Preprocessed(testing::ManyKernels(200));
  CompiledMsl split = CompileMslWithWarnings(source, options_, {});
  ASSERT_TRUE(split.module.ok()) << split.module.error().message;
  for (const auto& [name, k] : std::vector<std::pair<std::string, int>>{
           {"axpy_0", 0}, {"axpy_133", 133}, {"axpy_198", 198}}) {
    testing::KernelHarness h(split.module, name);
    ASSERT_TRUE(h.status().ok()) << h.status().error().message;
    const bool odd = k % 2 == 1;
    std::vector<float> xf = {1, 2, 3, 4}, yf = {10, 20, 30, 40};
    std::vector<int> xi = {1, 2, 3, 4}, yi = {10, 20, 30, 40};
    if (odd) {
      h.SetBuffer(0, xi);
      h.SetBuffer(1, yi);
    } else {
      h.SetBuffer(0, xf);
      h.SetBuffer(1, yf);
    }
    ASSERT_TRUE(h.DispatchThreads({4, 1, 1}, {4, 1, 1}).ok());
    for (int i = 0; i < 4; ++i) {
      const double want = (i + 1) * k + 10.0 * (i + 1);
      if (odd) {
        EXPECT_EQ(h.Read<int>(1)[i], want) << name;
      } else {
        EXPECT_EQ(h.Read<float>(1)[i], want) << name;
      }
    }
  }
}

TEST_F(CompileInParts, AConversionOnlySomePartsNeedRunsInAll) {
  const msl::PreprocessedSource source =
      Preprocessed(testing::ManyKernels(200));
  CompiledMsl split = CompileMslWithWarnings(source, options_, {});
  ASSERT_TRUE(split.module.ok()) << split.module.error().message;
  // half 1, 2, -0.5, 4 (IEEE binary16 bits), times 57 and 131.
  const std::vector<uint16_t> h = {0x3C00, 0x4000, 0xB800, 0x4400};
  const std::vector<float> f = {1, 2, -0.5f, 4};
  for (const auto& [name, k] : std::vector<std::pair<std::string, int>>{
           {"widen_57", 57}, {"widen_131", 131}}) {
    testing::KernelHarness run(split.module, name);
    ASSERT_TRUE(run.status().ok()) << run.status().error().message;
    if (k == 57) {
      run.SetBuffer(0, h);
    } else {
      run.SetBuffer(0, f);
    }
    run.SetBuffer(1, std::vector<float>(4, 0.0f));
    ASSERT_TRUE(run.DispatchThreads({1, 1, 1}, {1, 1, 1}).ok());
    const std::vector<float> y = run.Read<float>(1);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i], f[i] * k) << name << " " << i;
  }
}

TEST_F(CompileInParts, ErrorsAsOneCompileReportsThem) {
  // One error outside the instantiations (every part's front end sees
  // it), one in the instantiation with K = 150 alone.
  std::string text = testing::ManyKernels(200);
  text.replace(text.find("kernel void first"), 0,
               "static_assert(sizeof(float) == 2, \"everywhere\");\n");
  text.replace(text.find("  y[i] = Scale"), 0,
               "  static_assert(K != 150, \"one instantiation\");\n");
  const msl::PreprocessedSource source = Preprocessed(text);
  const Names in_order = msl::ExplicitInstantiations(source.text);
  CompiledMsl one = CompileMslInParts(source, options_, {}, {in_order});
  CompiledMsl split = CompileMslWithWarnings(source, options_, {});
  ASSERT_FALSE(one.module.ok());
  ASSERT_FALSE(split.module.ok());
  // (Every part's front end sees the first; the source is compiled again
  // in one part for the report.)
  ASSERT_EQ(split.errors.size(), 2u) << split.module.error().message;
  EXPECT_NE(split.errors[0].message.find("everywhere"), std::string::npos);
  EXPECT_NE(split.errors[1].message.find("one instantiation"),
            std::string::npos);
  EXPECT_EQ(split.module.error().message, one.module.error().message);
}

}  // namespace
}  // namespace mtlemu::compiler
