// The kernel checks of one dispatch (DispatchSetup::checks): a
// KernelChecker for each host worker; the device-access records gathered
// batch by batch in threadgroup order, within the record limit; and at the
// end the device races, the init check's new initialized bytes, and the
// findings in source terms (CheckReport).
#pragma once

#include <tbb/enumerable_thread_specific.h>

#include <cstdint>
#include <vector>

#include "emu/check/check_report.h"
#include "emu/check/kernel_checker.h"
#include "emu/dispatch/dispatch.h"

namespace mtlemu::emu {

// "file:line" of an access, or "instruction N" where the module names no
// file.
std::string LineText(const FindingAccess& a);

// Instruction `pc` as a finding names it: its source line, no thread.
FindingAccess InstructionAccess(const DispatchSetup& setup, uint32_t pc,
                                AccessType type);

// `all` in source terms, appended to `report`: one finding per kind and
// pair of source lines, with the counts summed.
void AppendFindings(const DispatchSetup& setup, const FindingSet& all,
                    CheckReport& report);

class DispatchChecks {
 public:
  explicit DispatchChecks(const DispatchSetup& setup);

  // The calling worker's checker.
  KernelChecker& Local() { return checkers_.local(); }
  // Whether device records must be gathered in threadgroup order between
  // batches of threadgroups (the race check).
  bool NeedsBatches() const { return setup_.checks->race; }
  // After a batch of threadgroups ran (and while nothing runs): their
  // device records join the dispatch's, in threadgroup order, as far as the
  // limit allows.
  void EndBatch();
  // After the dispatch.
  CheckReport Finish();

 private:
  const DispatchSetup& setup_;
  tbb::enumerable_thread_specific<KernelChecker> checkers_;
  DeviceAccessLog log_;
  bool log_full_ = false;
  uint64_t unrecorded_from_ = 0;  // the first threadgroup not recorded
};

}  // namespace mtlemu::emu
