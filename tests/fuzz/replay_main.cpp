// The main of a fuzz target built without libFuzzer: runs every file given,
// and every file of the directories given (not recursively; in name order),
// through LLVMFuzzerTestOneInput once, as `fuzz_NAME -runs=0 FILE...` does
// with libFuzzer. CTest's fuzz_replay_NAME tests run the seeds and the saved
// crashes this way. A directory that does not exist holds no inputs.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_check.h"

namespace {

bool ReadFile(const std::filesystem::path& path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), {});
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
    return 2;
  }
  size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg = argv[i];
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_regular_file(arg, ec)) {
      files.push_back(arg);
    } else if (!std::filesystem::is_directory(arg, ec)) {
      std::printf("%s: no such file or directory, no inputs\n", argv[i]);
      continue;
    } else {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const std::filesystem::path& file : files) {
      std::vector<uint8_t> data;
      if (!ReadFile(file, data)) {
        std::fprintf(stderr, "%s: cannot read\n", file.c_str());
        return 1;
      }
      // Announced first, so that the input that crashes is the last named.
      std::printf("%s\n", file.c_str());
      std::fflush(stdout);
      LLVMFuzzerTestOneInput(data.data(), data.size());
      ++inputs;
    }
  }
  std::printf("replayed %zu inputs\n", inputs);
  return 0;
}
