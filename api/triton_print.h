// tl.device_print's output: the print log a printing kernel appends to
// (compiler/triton/lower/print_log.h gives its layout), and its lines.
#pragma once

#include <cstdint>
#include <memory>

#include "api/triton_library.h"
#include "common/result.h"
#include "emu/device/device.h"

namespace mtlemu::api {

// Records a log holds by default: 8 MB, 262144 printed elements.
inline constexpr uint32_t kDefaultPrintLogRecords = 1u << 18;

// A print log with room for `records` records (0: prints are counted, not
// kept), ready to bind.
Result<std::shared_ptr<Buffer>> newPrintLog(Device& device, uint32_t records);

// The lines of `log` after a run of `kernel`, as Triton prints them, and
// how many did not fit. The log may be read after a fault: what the
// kernel printed before it is there.
triton::lower::PrintedLines PrintedLines(const TritonKernel& kernel,
                                         const Buffer& log);

}  // namespace mtlemu::api
