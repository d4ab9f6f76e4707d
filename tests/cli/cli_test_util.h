// Helpers for the tests that run the mtlemu executable (MTLEMU_BINARY): a
// scratch directory per test, a runner that captures the exit code, stdout
// and stderr, and typed access to .npy files. Header-only.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/npy.h"

namespace mtlemu::cli_test {

// A fresh directory under the system's temporary directory, removed with
// everything in it on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::string name =
        (std::filesystem::temp_directory_path() / "mtlemu_cli_XXXXXX").string();
    if (mkdtemp(name.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp failed for " << name;
    }
    path_ = name;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // The path of `name` inside the directory.
  std::string Path(std::string_view name) const {
    return (path_ / name).string();
  }

 private:
  std::filesystem::path path_;
};

// A file of tests/cli/data/.
inline std::string DataFile(const std::string& name) {
  return std::string(MTLEMU_TEST_DATA_DIR) + "/cli/data/" + name;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

// `s` quoted for /bin/sh.
inline std::string ShellQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

struct ProcessResult {
  // The exit status; 128 + the signal number if a signal ended the process.
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `mtlemu ARGS...`, with stdout and stderr going to files in `dir`.
inline ProcessResult RunMtlemu(const ScratchDir& dir,
                               const std::vector<std::string>& args) {
  const std::string out_path = dir.Path("stdout.txt");
  const std::string err_path = dir.Path("stderr.txt");
  std::string command = ShellQuote(MTLEMU_BINARY);
  for (const std::string& a : args) command += " " + ShellQuote(a);
  command += " >" + ShellQuote(out_path) + " 2>" + ShellQuote(err_path);
  const int status = std::system(command.c_str());
  ProcessResult result;
  if (status != -1 && WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (status != -1 && WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  return result;
}

// For EXPECT_TRUE(Contains(text, part)): says what the text was on failure.
inline ::testing::AssertionResult Contains(const std::string& text,
                                           const std::string& part) {
  if (text.find(part) != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "'" << text << "' does not contain '" << part << "'";
}

// Success when `same(i)` holds for every index of `actual` and `expected`;
// else the sizes, or the first five indices where it does not, with both
// values.
template <class A, class E, class Same>
::testing::AssertionResult ElementsMatch(const std::vector<A>& actual,
                                         const std::vector<E>& expected,
                                         Same same) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << "size " << actual.size() << " != expected " << expected.size();
  }
  ::testing::AssertionResult result = ::testing::AssertionSuccess();
  int mismatches = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (same(i)) continue;
    if (mismatches == 0) result = ::testing::AssertionFailure();
    if (++mismatches <= 5) {
      result << "\n  [" << i << "] " << actual[i] << " != expected "
             << expected[i];
    }
  }
  if (mismatches > 5) result << "\n  ... " << mismatches << " mismatches";
  return result;
}

// Writes `values` to `path` as a 1-D .npy of `type` (sizeof(T) must be
// SizeOf(type)).
template <class T>
void WriteNpyValues(const std::string& path, isa::ScalarType type,
                    const std::vector<T>& values) {
  const std::vector<uint64_t> shape = {values.size()};
  const Status s = cli::WriteNpy(
      path, type, shape,
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()),
                               values.size() * sizeof(T)));
  ASSERT_TRUE(s.ok()) << s.error().message;
}

template <class T>
std::vector<T> FromBytes(std::span<const uint8_t> bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

// The elements of the .npy file at `path`, which must be a 1-D array of
// `type`; empty (with a test failure) if it is not.
template <class T>
std::vector<T> ReadNpyValues(const std::string& path, isa::ScalarType type) {
  Result<cli::NpyArray> array = cli::ReadNpy(path);
  EXPECT_TRUE(array.ok()) << array.error().message;
  if (!array.ok()) return {};
  const cli::NpyArray& a = array.value();
  EXPECT_EQ(a.type, type) << path;
  EXPECT_EQ(a.shape.size(), 1u) << path;
  if (a.type != type || a.shape.size() != 1) return {};
  return FromBytes<T>(a.data);
}

}  // namespace mtlemu::cli_test
