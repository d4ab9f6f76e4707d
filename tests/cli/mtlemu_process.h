// Running the mtlemu executable (MTLEMU_BINARY) from tests: a scratch
// directory per test and a runner that captures the exit code, stdout and
// stderr. Header-only: each test executable that includes it gets its own
// copy.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace mtlemu::cli_test {

// A fresh directory under the system's temporary directory, removed with
// everything in it on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::string name =
        (std::filesystem::temp_directory_path() / "mtlemu_cli_XXXXXX")
            .string();
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

}  // namespace mtlemu::cli_test
