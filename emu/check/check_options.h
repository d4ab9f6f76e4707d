// Which kernel checks a dispatch runs (`mtlemu run --check LIST`,
// EmulatorOptions::checks). Checking never changes a result: the buffers
// are the same with and without it; what it finds is a list of findings
// beside the dispatch's report (check_report.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace mtlemu::emu {

struct CheckOptions {
  // Data races: two threads reach the same threadgroup or device bytes, one
  // of them writing and not both atomically, with no barrier between them.
  bool race = false;
  // Reads of threadgroup memory this threadgroup never wrote, and of device
  // buffers created without contents (Device::newBuffer(length)) that no
  // kernel or host code has written.
  bool init = false;
  // SIMD-group misuse: shuffles and broadcasts reading an inactive lane,
  // SIMD groups released from different barriers (or barriers with
  // different mem_flags), a SIMD group that finished past a barrier the
  // others wait at.
  bool simd = false;
  // Results that depend on the order of a threadgroup's SIMD groups: each
  // dispatch runs twice, the SIMD groups in sequential and in interleaved
  // order (emu/dispatch/schedule.h), and the bytes that differ are
  // findings, with the threadgroup reads and writes that no barrier
  // orders (order_check.h). Every buffer of the device is copied for it,
  // and put back between the runs: nothing else may run on the device
  // meanwhile.
  bool order = false;
  // The most memory the device-memory race check keeps for its records of
  // device accesses (about 40 bytes for each run of consecutive lanes);
  // threadgroups past it go unchecked for device races, and the report
  // says from which one.
  uint64_t device_record_limit_bytes = uint64_t{1} << 30;

  bool any() const { return race || init || simd || order; }
};

// "race", "init", "simd", "all", or a comma-separated list of them.
Result<CheckOptions> ParseCheckList(std::string_view list);

// The checks that are on, as ParseCheckList takes them ("race,simd").
std::string CheckListText(const CheckOptions& options);

}  // namespace mtlemu::emu
