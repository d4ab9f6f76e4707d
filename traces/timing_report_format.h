// The timing model's summary of a dispatch (emu/timing/timing_report.h) as
// people and programs read it: text, a few lines per topic, or one JSON
// object.
#pragma once

#include <string>

#include "traces/timing_report.h"

namespace mtlemu::traces {

// Human-readable, a few lines per topic.
std::string FormatReportText(const emu::TimingReport& report);

// One JSON object, indented, ending in a newline: every field of the report
// under its own name, always in the same order (chip, chip_name, kernel,
// clock_mhz, cores, cycles, time_us, ..., limiter, verdict, notes; see
// traces/README.md). The named counts and fractions (instructions_by_unit,
// xcode_counters, stalls) are objects in the report's order; notes an array
// of strings. Numbers that are not finite are written as 0; strings that are
// not valid UTF-8 have U+FFFD in place of the bad bytes.
std::string FormatReportJson(const emu::TimingReport& report);

}  // namespace mtlemu::traces
