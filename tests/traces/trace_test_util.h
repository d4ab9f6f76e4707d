// Helpers shared by the trace tests: temporary files and a second opinion
// from Python's own JSON and XML parsers when /usr/bin/python3 exists.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace mtlemu::traces::testing {

constexpr const char* kPython = "/usr/bin/python3";

inline bool HavePython() { return ::access(kPython, X_OK) == 0; }

// A path in the temporary directory, unique to this process.
inline std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("mtlemu_traces_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Runs `script` (Python source, given the file as sys.argv[1]) and returns
// its exit status: 0 when the script accepts the file.
inline int RunPython(const std::string& script, const std::string& path) {
  const std::string script_path = path + ".py";
  WriteFile(script_path, script);
  const std::string command =
      std::string(kPython) + " '" + script_path + "' '" + path + "' 1>&2";
  const int status = std::system(command.c_str());
  std::filesystem::remove(script_path);
  return status;
}

}  // namespace mtlemu::traces::testing
