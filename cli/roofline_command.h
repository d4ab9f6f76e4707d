// `mtlemu roofline`: runs a kernel timed on each chip asked for and draws it
// on the chips' rooflines, side by side, as an SVG.
#pragma once

#include <string>

#include "cli/run_command.h"

namespace mtlemu::cli {

struct RooflineOptions {
  RunOptions run;                  // the kernel and its dispatch
  std::string chips = "m1,m2,m3";  // comma-separated
  std::string output = "roofline.svg";
};

// Prints a line per chip; returns an ExitCode.
int RooflineCommand(const RooflineOptions& options);

}  // namespace mtlemu::cli
