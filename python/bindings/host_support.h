// What both Python packages (triton_metal's _core, mtlemu's _metal) do
// around a command buffer: its settings from text (the environment's, or a
// caller's), its commit with the GIL released and Ctrl-C stopping it, what
// a dispatch's check report says; and the list of chips.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "common/result.h"
#include "emu/device/command_buffer.h"

namespace mtlemu::python {

// Settings as text: `checks` "race,init,simd" (empty: none), `oob`
// "report" or "fault", `schedule` (emu/dispatch/schedule.h). An error
// names the setting as `prefix` + "_CHECK" (and _OOB, _SCHEDULE) and says
// what is wrong.
Status ApplySettings(EmulatorOptions& options, const std::string& checks,
                     const std::string& oob, const std::string& schedule,
                     const std::string& prefix);

// Commits `commands` with the GIL released, Ctrl-C setting its interrupt
// flag (sigint.h). Interrupted: raises what Python's handler makes of the
// signal on the main thread (KeyboardInterrupt, or your handler's
// exception), KeyboardInterrupt on another thread, as
// py::error_already_set; returns normally where the handler raised nothing
// (the work stays unfinished: the command buffer's error says so).
void CommitFromPython(CommandBuffer& commands);

// Accesses just outside a buffer that a dispatch without checks found
// (they read zeros: the results stand), one line each.
std::vector<std::string> NearBufferWarnings(const DispatchReport& report);
// With checks asked for and findings: "N findings of PREFIX_CHECK=...:"
// and each finding and note on a line; empty otherwise.
std::string CheckFindings(const DispatchReport& report,
                          const std::string& prefix);

// The chips: (name, marketing name, GPU cores) each.
pybind11::list Chips();

// Records Python's main thread (threading.main_thread()); call once, from
// the module's init.
void RememberMainThread();

}  // namespace mtlemu::python
