// The command line's exit codes, for scripts. Documented in README.md.
#pragma once

#include <cstdio>
#include <string>

namespace mtlemu::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitBadInput = 1,    // bad file, bad arguments, a Metal limit broken
  kExitGpuFault = 2,    // the kernel faulted: out-of-bounds access, barrier
                        // in divergent control flow, misaligned atomic
  kExitTimeout = 3,     // the dispatch ran past --timeout
  kExitMismatch = 4,    // a buffer differs from its --expect file
  kExitCheckFound = 5,  // --check found something (and nothing faulted)
};

// Prints an error on stderr and returns `code`: a compiler's diagnostics
// ("file:line:col: error: ...") as they are, anything else after
// "mtlemu: error: ".
inline int PrintError(std::string message, int code) {
  while (!message.empty() && message.back() == '\n') message.pop_back();
  if (message.find(": error: ") != std::string::npos) {
    std::fprintf(stderr, "%s\n", message.c_str());
  } else {
    std::fprintf(stderr, "mtlemu: error: %s\n", message.c_str());
  }
  return code;
}

}  // namespace mtlemu::cli
