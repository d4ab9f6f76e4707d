#include "python/bindings/host_support.h"

#include "emu/check/check_options.h"
#include "emu/check/check_report.h"
#include "emu/chips/chip.h"
#include "emu/dispatch/schedule.h"
#include "emu/exec/near_buffer.h"
#include "python/bindings/sigint.h"
#include "python/bindings/without_gil.h"

namespace py = pybind11;

namespace mtlemu::python {
namespace {

// Python's main thread, where Python handles signals.
unsigned long main_thread = 0;

}  // namespace

Status ApplySettings(EmulatorOptions& options, const std::string& checks,
                     const std::string& oob, const std::string& schedule,
                     const std::string& prefix) {
  const auto bad = [&](const char* name, const std::string& text,
                       const Error& e) {
    return Error{prefix + name + "='" + text + "': " + e.message};
  };
  if (!checks.empty()) {
    Result<emu::CheckOptions> c = emu::ParseCheckList(checks);
    if (!c.ok()) return bad("_CHECK", checks, c.error());
    options.checks = c.value();
  } else {
    options.checks = emu::CheckOptions{};
  }
  Result<emu::OutOfBoundsPolicy> o = emu::ParseOutOfBoundsPolicy(oob);
  if (!o.ok()) return bad("_OOB", oob, o.error());
  options.out_of_bounds = o.value();
  Result<emu::Schedule> s = emu::ParseSchedule(schedule);
  if (!s.ok()) return bad("_SCHEDULE", schedule, s.error());
  options.schedule = s.value();
  return {};
}

void CommitFromPython(CommandBuffer& commands) {
  {
    SigintScope sigint;
    commands.options().interrupt = sigint.flag();
    WithoutGil([&] {
      commands.commit();
      return true;
    });
  }
  const CommandBufferError* e = commands.error();
  if (e == nullptr || e->fault.kind != emu::FaultKind::kInterrupted) return;
  if (PyThread_get_thread_ident() != main_thread) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

std::vector<std::string> NearBufferWarnings(const DispatchReport& r) {
  std::vector<std::string> out;
  if (r.check != nullptr && r.check->checks.empty()) {
    for (const emu::Finding& f : r.check->findings) {
      out.push_back(f.Describe(r.check->kernel));
    }
  }
  return out;
}

std::string CheckFindings(const DispatchReport& r, const std::string& prefix) {
  if (r.check == nullptr || r.check->checks.empty() ||
      r.check->findings.empty()) {
    return "";
  }
  std::string message = std::to_string(r.check->findings.size()) + " finding" +
                        (r.check->findings.size() == 1 ? "" : "s") + " of " +
                        prefix + "_CHECK=" + r.check->checks + ":";
  for (const emu::Finding& f : r.check->findings) {
    message += "\n" + f.Describe(r.check->kernel);
  }
  for (const std::string& note : r.check->notes) message += "\nnote: " + note;
  return message;
}

py::list Chips() {
  py::list out;
  for (const ChipSpec& c : AllChips()) {
    out.append(py::make_tuple(std::string(c.name),
                              std::string(c.marketing_name), c.gpu_cores));
  }
  return out;
}

void RememberMainThread() {
  main_thread = py::cast<unsigned long>(
      py::module_::import("threading").attr("main_thread")().attr("ident"));
}

}  // namespace mtlemu::python
