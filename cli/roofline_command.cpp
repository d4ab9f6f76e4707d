#include "cli/roofline_command.h"

#include <cstdio>
#include <fstream>
#include <vector>

#include "cli/exit_codes.h"
#include "traces/roofline.h"

namespace mtlemu::cli {

int RooflineCommand(const RooflineOptions& options) {
  std::vector<traces::RooflinePanel> panels;
  size_t start = 0;
  while (start <= options.chips.size()) {
    size_t comma = options.chips.find(',', start);
    if (comma == std::string::npos) comma = options.chips.size();
    const std::string chip = options.chips.substr(start, comma - start);
    start = comma + 1;
    if (chip.empty()) continue;
    RunOptions run = options.run;
    run.chip = chip;
    run.quiet = true;
    std::vector<emu::TimingReport> reports;
    run.timing_reports = &reports;
    if (const int code = RunCommand(run); code != kExitOk) return code;
    traces::RooflinePanel panel;
    for (const emu::TimingReport& r : reports) {
      panel.chip = r.chip_name;
      panel.peak_flops_per_s = r.peak_tflops * 1e12;
      panel.peak_dram_bytes_per_s = r.peak_dram_gbps * 1e9;
      panel.points.push_back({r.kernel, r.flops,
                              static_cast<double>(r.dram_bytes),
                              r.time_us * 1e-6});
      std::printf(
          "%s: %s %.1f GFLOP/s at %.3g FLOP/byte, %.1f GB/s, %.2f us "
          "(limiter: %s)\n",
          r.chip.c_str(), r.kernel.c_str(), r.achieved_tflops * 1e3,
          r.dram_bytes ? r.flops / static_cast<double>(r.dram_bytes) : 0.0,
          r.achieved_dram_gbps, r.time_us, r.limiter.c_str());
    }
    panels.push_back(std::move(panel));
  }
  if (panels.empty()) {
    std::fprintf(stderr, "mtlemu: error: --chips names no chip\n");
    return kExitBadInput;
  }
  std::ofstream out(options.output);
  out << traces::RooflineSvg(panels);
  if (!out) {
    std::fprintf(stderr, "mtlemu: error: %s: cannot write the file\n",
                 options.output.c_str());
    return kExitBadInput;
  }
  std::printf("wrote %s\n", options.output.c_str());
  return kExitOk;
}

}  // namespace mtlemu::cli
