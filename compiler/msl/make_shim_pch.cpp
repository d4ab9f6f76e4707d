// make_shim_pch fast|precise OUTPUT: writes the precompiled shims
// (precompiled_shims.h) for one fast-math setting. Run by the build.
#include <cstdio>
#include <string>

#include "compiler/msl/precompiled_shims.h"

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  if (mode != "fast" && mode != "precise") {
    std::fprintf(stderr, "usage: make_shim_pch fast|precise OUTPUT\n");
    return 1;
  }
  const mtlemu::Status s = mtlemu::msl::WriteShimPch(mode == "fast", argv[2]);
  if (!s.ok()) {
    std::fprintf(stderr, "make_shim_pch: %s\n", s.error().message.c_str());
    return 1;
  }
  return 0;
}
