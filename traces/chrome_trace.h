// Chrome trace-event JSON (the format Perfetto's UI and chrome://tracing
// open) for a Timeline; the format mtlemu writes is documented in
// traces/README.md.
#pragma once

#include <ostream>
#include <string>

#include "common/result.h"
#include "traces/timeline.h"

namespace mtlemu::traces {

// Writes `timeline` as trace-event JSON, cycles converted to microseconds at
// the chip's clock.
void WriteChromeTrace(const Timeline& timeline, std::ostream& out);

// The same into a file, gzip-compressed when `path` ends in ".gz"; an error
// names the path.
Status WriteChromeTraceFile(const Timeline& timeline, const std::string& path);

}  // namespace mtlemu::traces
