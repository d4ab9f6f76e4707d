// newLibraryWithSource: MSL through the compiler and the disk cache.
#include "api/library.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace mtlemu::api {
namespace {

constexpr char kSource[] = R"(#include <metal_stdlib>
using namespace metal;
kernel void twice(device float* a [[buffer(0)]],
                  uint id [[thread_position_in_grid]]) { a[id] *= 2.0f; }
)";

class LibraryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("mtlemu_library_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

// newLibraryWithSource compiles once, then loads from $MTLEMU_CACHE_DIR; a
// compile error is returned, never cached.
TEST_F(LibraryTest, NewLibraryWithSourceFillsAndUsesTheCache) {
  ASSERT_EQ(::setenv("MTLEMU_CACHE_DIR", dir_.c_str(), 1), 0);
  auto device = Device::Create("m1");
  ASSERT_TRUE(device.ok());
  auto first = newLibraryWithSource(*device.value(), kSource, {}, "a.metal");
  ASSERT_TRUE(first.ok()) << first.error().message;
  size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    entries += e.path().extension() == ".mtlb";
  }
  EXPECT_EQ(entries, 1u);
  auto second = newLibraryWithSource(*device.value(), kSource, {}, "a.metal");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second.value()->module(), *first.value()->module());
  EXPECT_TRUE(second.value()->newFunction("twice").ok());
  auto bad =
      newLibraryWithSource(*device.value(), "kernel void f(", {}, "bad.metal");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("bad.metal:1:"), std::string::npos)
      << bad.error().message;
  ::unsetenv("MTLEMU_CACHE_DIR");
}

}  // namespace
}  // namespace mtlemu::api
