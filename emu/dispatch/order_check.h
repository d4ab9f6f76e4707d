// The order check (CheckOptions::order): a dispatch run twice from the
// same device memory, each on one host thread (threadgroups in index
// order, so that races between threadgroups leave the same bytes in both):
// first with its threadgroups' SIMD groups in the other order (sequential
// where the schedule interleaves the kernel, else interleaved, every
// kernel), then in the schedule's own (schedule.h). Every byte of the device's
// buffers that the two runs leave different depends on the order, which Metal
// does not define: each buffer with such bytes is a finding
// (FindingKind::kOrderDependentResult) with the count and the first offset,
// naming the threadgroup reads and writes that no barrier orders
// (DecodedKernel::unordered_accesses), or saying that the dependence goes
// through device memory (--check race names those accesses). A cheap race
// finder: two plain runs and a comparison, no shadow memory. The buffers and
// the other checks' findings are the second run's: a plain run's, as checks
// never change a result.
#pragma once

#include "emu/dispatch/dispatch.h"

namespace mtlemu::emu {

// `setup.checks->order` must be on; the other checks and the timing model
// run with the second run, whose result this is.
DispatchResult RunDispatchInTwoOrders(const DispatchSetup& setup);

}  // namespace mtlemu::emu
