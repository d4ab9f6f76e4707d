// The command line's exit codes, for scripts. Documented in README.md.
#pragma once

namespace mtlemu::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitBadInput = 1,  // bad file, bad arguments, a Metal limit broken
  kExitGpuFault = 2,  // the kernel faulted: out-of-bounds access, barrier
                      // in divergent control flow, misaligned atomic
  kExitTimeout = 3,   // the dispatch ran past --timeout
  kExitMismatch = 4,  // a buffer differs from its --expect file
};

}  // namespace mtlemu::cli
