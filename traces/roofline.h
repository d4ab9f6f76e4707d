// Roofline pictures: a chip's peak FLOP/s and DRAM bandwidth as the roof,
// kernels as points, one panel per chip (M1, M2, M3 side by side), as SVG.
#pragma once

#include <string>
#include <vector>

namespace mtlemu::traces {

struct RooflinePoint {
  std::string label;          // the kernel's name
  double flops = 0;           // floating-point operations of the dispatch
  double dram_bytes = 0;      // bytes moved to and from DRAM
  double seconds = 0;         // the dispatch's modelled time
};

struct RooflinePanel {
  std::string chip;                 // "Apple M2"
  double peak_flops_per_s = 0;      // FP32 FMA peak (2 FLOPs per FMA)
  double peak_dram_bytes_per_s = 0; // DRAM bandwidth
  std::vector<RooflinePoint> points;
};

// A self-contained SVG document: log-log axes (arithmetic intensity in
// FLOP/byte, performance in GFLOP/s), the roof of each panel, each point
// labelled with its name and achieved GFLOP/s.
std::string RooflineSvg(const std::vector<RooflinePanel>& panels);

}  // namespace mtlemu::traces
