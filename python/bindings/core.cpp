// triton_metal._core: the C++ side of the Python package, kept thin. It
// compiles a Triton kernel for a launch (api::newLibraryWithTriton) and
// launches it on the caller's memory (newBufferWithBytesNoCopy), releasing
// the GIL while the emulator runs and turning Ctrl-C into an interrupt
// (sigint.h). Every launch's settings go in its own command buffer, never
// in the shared Device: launches from many Python threads run at once.
// Everything Python-shaped (argument binding, specialization keys, caches,
// autotuning) is in the package's Python code.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "api/triton_launch.h"
#include "api/triton_library.h"
#include "api/triton_print.h"
#include "emu/check/check_report.h"
#include "emu/device/command_buffer.h"
#include "isa/printer.h"
#include "python/bindings/host_support.h"
#include "python/bindings/without_gil.h"
#include "traces/chrome_trace.h"
#include "traces/timing_report_format.h"

namespace py = pybind11;

namespace mtlemu::python {
namespace {

using triton::frontend::DType;
using triton::frontend::KernelArg;

// Raised for a kernel that does not compile (message: file:line:col).
struct CompileFailure {
  std::string message;
};
// Raised for a launch that failed (a fault, a bad argument).
struct LaunchFailure {
  std::string message;
  std::string kind;  // "fault", "timeout", "interrupted", "argument"
  std::vector<std::string> printed;  // tl.device_print's lines before it
};

// A Python int of int64's or uint64's range (Triton passes those above
// int64's as u64): its bits, and which.
void SetInt(KernelArg& a, const py::handle& value) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow > 0) {
    // Sets OverflowError itself beyond uint64's range.
    const unsigned long long u = PyLong_AsUnsignedLongLong(value.ptr());
    if (PyErr_Occurred()) throw py::error_already_set();
    a.int_value = static_cast<int64_t>(u);
    a.is_uint64 = true;
  } else if (overflow < 0) {
    // (An overflow sets no Python error: say it, as OverflowError.)
    PyErr_SetString(PyExc_OverflowError, "an integer below int64's range");
    throw py::error_already_set();
  } else if (v == -1 && PyErr_Occurred()) {
    throw py::error_already_set();
  } else {
    a.int_value = v;
  }
}

// ("name", kind, value): kind "ptr" (value: the dtype's name), "int",
// "float", "bool", "none", "str", "dtype" (value: its name), "tuple"
// (value: a tuple of (kind, value) pairs).
KernelArg ToKernelArg(const std::string& name, const std::string& kind,
                      const py::handle& value) {
  KernelArg a;
  if (kind == "ptr" || kind == "dtype") {
    const std::string dtype = py::cast<std::string>(value);
    a.kind =
        kind == "ptr" ? KernelArg::Kind::kPointer : KernelArg::Kind::kDType;
    a.dtype = DType::FromName(dtype);
    if (a.dtype == nullptr) {
      throw py::type_error("argument '" + name + "': unknown dtype '" + dtype +
                           "'");
    }
  } else if (kind == "int") {
    a.kind = KernelArg::Kind::kInt;
    SetInt(a, value);
  } else if (kind == "tuple") {
    a.kind = KernelArg::Kind::kTuple;
    for (const py::handle item : py::cast<py::tuple>(value)) {
      const auto pair = py::cast<py::tuple>(item);
      a.items.push_back(
          ToKernelArg(name, py::cast<std::string>(pair[0]), pair[1]));
    }
  } else if (kind == "float") {
    a.kind = KernelArg::Kind::kFloat;
    a.float_value = py::cast<double>(value);
  } else if (kind == "bool") {
    a.kind = KernelArg::Kind::kBool;
    a.int_value = py::cast<bool>(value) ? 1 : 0;
  } else if (kind == "none") {
    a.kind = KernelArg::Kind::kNone;
  } else if (kind == "str") {
    a.kind = KernelArg::Kind::kString;
    a.text = py::cast<std::string>(value);
  } else {
    throw py::value_error("argument '" + name + "': unknown kind '" + kind +
                          "'");
  }
  return a;
}

using ArgList = std::vector<std::tuple<std::string, std::string, py::object>>;

std::vector<std::pair<std::string, KernelArg>> ToKernelArgs(
    const ArgList& list) {
  std::vector<std::pair<std::string, KernelArg>> out;
  for (const auto& [name, kind, value] : list) {
    out.emplace_back(name, ToKernelArg(name, kind, value));
  }
  return out;
}

class PyDevice {
 public:
  explicit PyDevice(const std::string& chip) {
    Result<std::shared_ptr<Device>> d = Device::Create(chip);
    if (!d.ok()) throw py::value_error(d.error().message);
    device_ = std::move(d).value();
  }
  Device& device() { return *device_; }
  std::string chip() const { return std::string(device_->chip().name); }
  std::string name() const { return std::string(device_->name()); }
  py::dict properties() const {
    const ChipSpec& c = device_->chip();
    py::dict d;
    d["name"] = std::string(c.marketing_name);
    d["chip"] = std::string(c.name);
    d["gpu_family"] = std::string(c.gpu_family);
    d["multiprocessor_count"] = c.gpu_cores;
    d["clock_rate_khz"] = c.clock_mhz * 1000;
    d["max_shared_mem"] = MetalLimits::kMaxThreadgroupMemoryLength;
    d["max_threads_per_threadgroup"] = MetalLimits::kMaxThreadsPerThreadgroup;
    d["warpSize"] = MetalLimits::kThreadExecutionWidth;
    return d;
  }

 private:
  std::shared_ptr<Device> device_;
};

class PyKernel {
 public:
  explicit PyKernel(api::TritonLibrary lib) : lib_(std::move(lib)) {
    kernel_ = lib_.library->module()->FindKernel(lib_.kernel.function);
  }
  const api::TritonLibrary& library() const { return lib_; }
  const api::TritonKernel& info() const { return lib_.kernel; }
  std::string isa() const {
    return kernel_ != nullptr ? isa::PrintKernel(*kernel_) : "";
  }
  int registers() const { return kernel_ != nullptr ? kernel_->registers : 0; }
  int64_t shared() const {
    return kernel_ != nullptr ? kernel_->static_threadgroup_memory : 0;
  }
  py::list params() const {
    py::list out;
    for (const auto& p : lib_.kernel.params) {
      out.append(py::make_tuple(p.name, p.is_constexpr, p.has_default, p.ir_arg,
                                p.provided_by));
    }
    return out;
  }
  py::list args() const {
    py::list out;
    for (const auto& a : lib_.kernel.args) {
      out.append(py::make_tuple(a.name, a.is_pointer, a.type->ToString()));
    }
    return out;
  }

 private:
  api::TritonLibrary lib_;
  const isa::Kernel* kernel_ = nullptr;
};

PyKernel Compile(
    PyDevice& device, const std::string& file,
    std::optional<std::string> source, const std::string& kernel,
    const ArgList& args, const ArgList& globals,
    const std::vector<std::string>& module_paths, std::optional<int> num_warps,
    std::optional<std::string> cache_dir, bool enable_fp_fusion,
    const std::vector<std::tuple<std::string, std::string, std::string,
                                 std::string>>& references) {
  api::TritonRequest r;
  r.file = file;
  r.source = std::move(source);
  r.kernel = kernel;
  r.args = ToKernelArgs(args);
  r.globals = ToKernelArgs(globals);
  for (const auto& [name, module_file, file, target] : references) {
    r.references.push_back({name, module_file, file, target});
  }
  r.module_paths = module_paths;
  r.num_warps = num_warps;
  r.enable_fp_fusion = enable_fp_fusion;
  r.cache_dir = std::move(cache_dir);
  Result<api::TritonLibrary> lib =
      WithoutGil([&] { return api::newLibraryWithTriton(device.device(), r); });
  if (!lib.ok()) throw CompileFailure{lib.error().message};
  return PyKernel(std::move(lib).value());
}

// A pointer argument: the caller's memory [address, address + nbytes), the
// kernel's pointer `offset` bytes into it.
struct Memory {
  uint64_t address = 0, nbytes = 0, offset = 0;
};

py::dict Launch(PyDevice& device, const PyKernel& kernel,
                std::tuple<uint64_t, uint64_t, uint64_t> grid,
                const std::vector<std::pair<std::string, py::object>>& args,
                bool timing, std::optional<std::string> trace, int host_threads,
                const std::string& checks, const std::string& oob,
                const std::string& schedule) {
  Device& d = device.device();
  std::map<std::string, api::TritonArgValue> values;
  for (const auto& [name, value] : args) {
    api::TritonArgValue& v = values[name];
    if (py::isinstance<py::tuple>(value)) {
      const auto [address, nbytes, offset] =
          py::cast<std::tuple<uint64_t, uint64_t, uint64_t>>(value);
      Result<std::shared_ptr<Buffer>> b =
          d.newBufferWithBytesNoCopy(reinterpret_cast<void*>(address), nbytes);
      if (!b.ok()) {
        throw LaunchFailure{
            "argument '" + name + "': " + b.error().message, "argument", {}};
      }
      b.value()->setLabel(name);
      v.buffer = std::move(b).value();
      v.offset = offset;
    } else if (value.is_none()) {
      v.scalar.kind = KernelArg::Kind::kNone;
    } else if (py::isinstance<py::bool_>(value)) {
      v.scalar.kind = KernelArg::Kind::kBool;
      v.scalar.int_value = py::cast<bool>(value);
    } else if (py::isinstance<py::int_>(value)) {
      v.scalar.kind = KernelArg::Kind::kInt;
      SetInt(v.scalar, value);
    } else {
      v.scalar.kind = KernelArg::Kind::kFloat;
      v.scalar.float_value = py::cast<double>(value);
    }
  }
  CommandBufferDescriptor descriptor;
  descriptor.options = d.options();
  EmulatorOptions& options = descriptor.options;
  // The environment's settings, each parsed or an argument error naming it.
  if (Status s = ApplySettings(options, checks, oob, schedule, "TRITON_METAL");
      !s.ok()) {
    throw LaunchFailure{s.error().message, "argument", {}};
  }
  options.timing = timing || trace.has_value();
  options.timeline = trace.has_value();
  options.host_threads = host_threads;
  std::shared_ptr<CommandQueue> queue = d.newCommandQueue();
  std::shared_ptr<CommandBuffer> commands =
      queue->commandBufferWithDescriptor(descriptor);
  std::shared_ptr<ComputeCommandEncoder> encoder =
      commands->computeCommandEncoder();
  std::shared_ptr<Buffer> print_log;
  const auto [gx, gy, gz] = grid;
  if (Status s =
          api::EncodeTritonLaunch(d, *encoder, kernel.library(),
                                  MTLSize{gx, gy, gz}, values, &print_log);
      !s.ok()) {
    throw LaunchFailure{s.error().message, "argument", {}};
  }
  encoder->endEncoding();
  CommitFromPython(*commands);

  std::vector<std::string> printed;
  if (print_log) {
    triton::lower::PrintedLines p =
        api::PrintedLines(kernel.info(), *print_log);
    printed = std::move(p.lines);
    if (p.dropped > 0) {
      printed.push_back("triton_metal: " + std::to_string(p.dropped) +
                        " more printed values did not fit the print log");
    }
  }
  if (const CommandBufferError* e = commands->error()) {
    // (Ctrl-C raised in CommitFromPython; a handler that raised nothing
    // leaves the launch unfinished.)
    const emu::FaultKind k = e->fault.kind;
    throw LaunchFailure{e->message,
                        k == emu::FaultKind::kTimeout       ? "timeout"
                        : k == emu::FaultKind::kInterrupted ? "interrupted"
                                                            : "fault",
                        printed};
  }
  const DispatchReport& r = commands->dispatches().at(0);
  // No check asked for: accesses just outside a buffer, which read zeros
  // (emu/exec/near_buffer.h); the results stand, with a warning each.
  const std::vector<std::string> warnings = NearBufferWarnings(r);
  if (std::string findings = CheckFindings(r, "TRITON_METAL");
      !findings.empty()) {
    throw LaunchFailure{std::move(findings), "check", printed};
  }
  py::dict out;
  out["printed"] = printed;
  out["warnings"] = warnings;
  out["seconds"] = r.seconds;
  out["instructions"] = r.instructions;
  out["lane_instructions"] = r.lane_instructions;
  if (r.timing != nullptr) {
    out["timing_json"] = traces::FormatReportJson(*r.timing);
    out["timing_text"] = traces::FormatReportText(*r.timing);
  }
  if (trace && r.timeline != nullptr) {
    if (Status s = traces::WriteChromeTraceFile(*r.timeline, *trace); !s.ok()) {
      throw LaunchFailure{s.error().message, "argument", printed};
    }
  }
  return out;
}

}  // namespace
}  // namespace mtlemu::python

PYBIND11_MODULE(_core, m) {
  using namespace mtlemu::python;
  m.doc() = "mtlemu's Triton compiler and Apple GPU emulator (C++ core)";
  RememberMainThread();

  // Triton's hierarchy: TritonError, and CompilationError under it
  // (runtime/errors.py adds the others).
  // (A new reference the process keeps, as the exception types below.)
  static PyObject* triton_error = PyErr_NewException(
      "triton_metal._core.TritonError", PyExc_Exception, nullptr);
  m.attr("TritonError") = py::handle(triton_error);
  static py::exception<CompileFailure> compile_error(m, "CompilationError",
                                                     triton_error);
  static py::exception<LaunchFailure> launch_error(m, "LaunchError",
                                                   PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const CompileFailure& e) {
      // Triton's CompilationError keeps its message in error_message too.
      py::object type = compile_error;
      py::object exc = type(py::str(e.message));
      exc.attr("error_message") = e.message;
      PyErr_SetObject(compile_error.ptr(), exc.ptr());
    } catch (const LaunchFailure& e) {
      py::object type = launch_error;
      py::object exc = type(py::str(e.message));
      exc.attr("kind") = e.kind;
      exc.attr("printed") = e.printed;
      PyErr_SetObject(launch_error.ptr(), exc.ptr());
    }
  });

  py::class_<PyDevice>(m, "Device")
      .def(py::init<const std::string&>(), py::arg("chip") = "m1")
      .def_property_readonly("chip", &PyDevice::chip)
      .def_property_readonly("name", &PyDevice::name)
      .def("properties", &PyDevice::properties);

  py::class_<PyKernel>(m, "Kernel")
      .def_property_readonly(
          "function", [](const PyKernel& k) { return k.info().function; })
      .def_property_readonly("ttir",
                             [](const PyKernel& k) { return k.info().ttir; })
      .def_property_readonly("msl",
                             [](const PyKernel& k) { return k.info().msl; })
      .def_property_readonly("layouts",
                             [](const PyKernel& k) { return k.info().layouts; })
      .def_property_readonly("isa", &PyKernel::isa)
      .def_property_readonly("n_regs", &PyKernel::registers)
      .def_property_readonly("shared", &PyKernel::shared)
      .def_property_readonly(
          "threads_per_threadgroup",
          [](const PyKernel& k) { return k.info().threads_per_threadgroup; })
      .def_property_readonly(
          "messages", [](const PyKernel& k) { return k.info().messages; })
      .def_property_readonly("notes",
                             [](const PyKernel& k) { return k.info().notes; })
      .def_property_readonly("params", &PyKernel::params)
      .def_property_readonly("args", &PyKernel::args);

  m.def("compile", &Compile, py::arg("device"), py::arg("file"),
        py::arg("source"), py::arg("kernel"), py::arg("args"),
        py::arg("globals"), py::arg("module_paths"), py::arg("num_warps"),
        py::arg("cache_dir") = py::none(), py::arg("enable_fp_fusion") = true,
        py::arg("references") = std::vector<
            std::tuple<std::string, std::string, std::string, std::string>>{},
        "Compiles a @triton.jit kernel of `file` for these arguments.");
  m.def("launch", &Launch, py::arg("device"), py::arg("kernel"),
        py::arg("grid"), py::arg("args"), py::arg("timing") = false,
        py::arg("trace") = py::none(), py::arg("host_threads") = 0,
        py::arg("checks") = "", py::arg("oob") = "report",
        py::arg("schedule") = "interleaved",
        "Launches a compiled kernel over `grid` programs.");
  m.def("builtin_module_names", &mtlemu::triton::frontend::BuiltinModuleNames,
        py::arg("module"),
        "The names the C++ front end gives kernels in a builtin module "
        "('triton.language', 'triton.language.math'...), sorted.");
  m.def("chips", &Chips, "The chips: (name, marketing name, GPU cores).");
}
