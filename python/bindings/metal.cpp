// mtlemu._metal: Metal's host objects for Python (the mtlemu package),
// kept thin: each class and method is Metal's, in Python's spelling
// (newBufferWithLength -> new_buffer). A buffer over the caller's memory
// (new_buffer_with_bytes_no_copy) keeps the object that owns it alive;
// encoders keep their command buffer and the buffers bound to them alive
// until it is done. Commits release the GIL and stop at Ctrl-C (sigint.h).
// Settings from the environment, argument conversion and the exceptions'
// Python side are in the package's Python code (mtlemu/_objects.py).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "api/library.h"
#include "emu/device/command_buffer.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"
#include "isa/printer.h"
#include "python/bindings/host_support.h"
#include "python/bindings/without_gil.h"
#include "traces/chrome_trace.h"
#include "traces/timing_report_format.h"

namespace py = pybind11;

namespace mtlemu::python {
namespace {

// Raised for a source that does not compile (message: file:line:col).
struct CompileFailure {
  std::string message;
};
// Raised for a call Metal's validation layer would refuse (a limit, an
// index, a missing pipeline) or a setting that does not parse.
struct ValidationFailure {
  std::string message;
};

template <class T>
T Must(Result<T> r) {
  if (!r.ok()) throw ValidationFailure{r.error().message};
  return std::move(r).value();
}
void Must(const Status& s) {
  if (!s.ok()) throw ValidationFailure{s.error().message};
}

MTLSize ToSize(const std::vector<uint64_t>& v, const char* what) {
  if (v.empty() || v.size() > 3) {
    throw ValidationFailure{std::string(what) +
                            ": expected 1 to 3 sizes (width, height, depth)"};
  }
  return {v[0], v.size() > 1 ? v[1] : 1, v.size() > 2 ? v[2] : 1};
}

// A buffer, and what owns the memory of one made without a copy.
struct PyBuffer {
  std::shared_ptr<Buffer> buffer;
  py::object owner;  // None, or the object whose memory it is
};

class PyCommandBuffer {
 public:
  explicit PyCommandBuffer(std::shared_ptr<CommandBuffer> commands)
      : commands_(std::move(commands)) {}
  CommandBuffer& commands() { return *commands_; }
  void Keep(py::object o) { kept_.push_back(std::move(o)); }
  void Commit() {
    if (committed_) {
      throw ValidationFailure{"commit: the command buffer was committed"};
    }
    committed_ = true;
    CommitFromPython(*commands_);
    kept_.clear();  // done with the buffers
  }
  bool committed() const { return committed_; }

 private:
  std::shared_ptr<CommandBuffer> commands_;
  std::vector<py::object> kept_;
  bool committed_ = false;
};

class PyEncoder {
 public:
  PyEncoder(py::object commands, PyCommandBuffer& c)
      : owner_(std::move(commands)),
        commands_(c),
        encoder_(c.commands().computeCommandEncoder()) {}
  void SetPipeline(std::shared_ptr<ComputePipelineState> p) {
    Open("set_compute_pipeline_state");
    encoder_->setComputePipelineState(std::move(p));
  }
  void SetBuffer(py::object buffer, uint64_t offset, int index) {
    Open("set_buffer");
    PyBuffer& b = py::cast<PyBuffer&>(buffer);
    Must(encoder_->setBuffer(b.buffer, offset, index));
    commands_.Keep(std::move(buffer));
  }
  void SetBytes(py::buffer data, int index) {
    Open("set_bytes");
    const py::buffer_info info = data.request();
    Must(encoder_->setBytes(
        info.ptr, static_cast<uint64_t>(info.size * info.itemsize), index));
  }
  void SetThreadgroupMemoryLength(uint64_t length, int index) {
    Open("set_threadgroup_memory_length");
    Must(encoder_->setThreadgroupMemoryLength(length, index));
  }
  void DispatchThreads(const std::vector<uint64_t>& grid,
                       const std::vector<uint64_t>& group) {
    Open("dispatch_threads");
    Must(encoder_->dispatchThreads(ToSize(grid, "threads_per_grid"),
                                   ToSize(group, "threads_per_threadgroup")));
  }
  void DispatchThreadgroups(const std::vector<uint64_t>& groups,
                            const std::vector<uint64_t>& group) {
    Open("dispatch_threadgroups");
    Must(encoder_->dispatchThreadgroups(
        ToSize(groups, "threadgroups_per_grid"),
        ToSize(group, "threads_per_threadgroup")));
  }
  void EndEncoding() {
    Open("end_encoding");
    ended_ = true;
  }

 private:
  void Open(const char* what) const {
    if (ended_ || commands_.committed()) {
      throw ValidationFailure{std::string(what) +
                              ": the encoder's encoding has ended"};
    }
  }
  py::object owner_;  // the PyCommandBuffer, alive while this is
  PyCommandBuffer& commands_;
  std::shared_ptr<ComputeCommandEncoder> encoder_;
  bool ended_ = false;
};

std::string StatusName(CommandBufferStatus s) {
  switch (s) {
    case CommandBufferStatus::kNotEnqueued:
      return "not_enqueued";
    case CommandBufferStatus::kCommitted:
      return "committed";
    case CommandBufferStatus::kCompleted:
      return "completed";
    case CommandBufferStatus::kError:
      return "error";
  }
  return "error";
}

std::string ErrorCodeName(const CommandBufferError& e) {
  if (e.fault.kind == emu::FaultKind::kInterrupted) return "interrupted";
  switch (e.code) {
    case CommandBufferErrorCode::kTimeout:
      return "timeout";
    case CommandBufferErrorCode::kPageFault:
      return "page_fault";
    default:
      return "internal";
  }
}

// What one dispatch did: kernel, sizes, host seconds, instruction counts,
// warnings and findings of the checks, and in timed mode the chip's time
// and the timing report.
py::dict Report(const DispatchReport& r, const std::string& prefix) {
  py::dict d;
  d["kernel"] = r.kernel;
  const auto size = [](const MTLSize& s) {
    return py::make_tuple(s.width, s.height, s.depth);
  };
  d["threadgroups"] = size(r.threadgroups);
  d["threads_per_threadgroup"] = size(r.threads_per_threadgroup);
  d["threads_per_grid"] = size(r.threads_per_grid);
  d["seconds"] = r.seconds;
  d["instructions"] = r.instructions;
  d["lane_instructions"] = r.lane_instructions;
  d["warnings"] = NearBufferWarnings(r);
  d["findings"] = CheckFindings(r, prefix);
  d["executor_note"] = r.executor_note;
  if (r.timing != nullptr) {
    d["timing_json"] = traces::FormatReportJson(*r.timing);
    d["timing_text"] = traces::FormatReportText(*r.timing);
  }
  return d;
}

std::shared_ptr<Device> NewDevice(const std::string& chip) {
  Result<std::shared_ptr<Device>> d = Device::Create(chip);
  if (!d.ok()) throw py::value_error(d.error().message);
  return std::move(d).value();
}

PyBuffer NewBuffer(Device& d, uint64_t length) {
  return {Must(d.newBuffer(length)), py::none()};
}

PyBuffer NewBufferWithBytes(Device& d, py::buffer data) {
  const py::buffer_info info = data.request();
  return {Must(d.newBuffer(info.ptr,
                           static_cast<uint64_t>(info.size * info.itemsize))),
          py::none()};
}

// The caller's memory [address, address + length), owned by `owner`.
PyBuffer NewBufferNoCopy(Device& d, uint64_t address, uint64_t length,
                         py::object owner) {
  return {Must(d.newBufferWithBytesNoCopy(reinterpret_cast<void*>(address),
                                          length)),
          std::move(owner)};
}

std::shared_ptr<Library> NewLibrary(
    Device& d, const std::string& source, const std::string& file,
    const std::vector<std::pair<std::string, std::string>>& macros,
    const std::vector<std::string>& include_directories, bool fast_math,
    const std::vector<std::pair<std::string, std::string>>& constants,
    const std::vector<std::string>& kernels) {
  msl::CompileOptions options;
  options.macros = macros;
  options.include_directories = include_directories;
  options.fast_math = fast_math;
  options.function_constants = constants;
  Result<std::shared_ptr<Library>> library = WithoutGil([&] {
    return api::newLibraryWithSource(d, source, options, file, kernels);
  });
  if (!library.ok()) throw CompileFailure{library.error().message};
  return std::move(library).value();
}

std::shared_ptr<ComputePipelineState> NewPipeline(Device& d,
                                                  std::shared_ptr<Function> f) {
  return Must(d.newComputePipelineState(std::move(f)));
}

std::shared_ptr<PyCommandBuffer> NewCommandBuffer(
    CommandQueue& queue, const std::string& checks, const std::string& oob,
    const std::string& schedule, bool timing, bool timeline, int host_threads,
    std::optional<double> timeout_seconds) {
  CommandBufferDescriptor descriptor;
  descriptor.options = queue.commandBuffer()->options();
  EmulatorOptions& o = descriptor.options;
  Must(ApplySettings(o, checks, oob, schedule, "MTLEMU"));
  o.timing = timing || timeline;
  o.timeline = timeline;
  o.host_threads = host_threads;
  if (timeout_seconds) {
    o.timeout = std::chrono::milliseconds(
        static_cast<int64_t>(*timeout_seconds * 1000.0));
  }
  return std::make_shared<PyCommandBuffer>(
      queue.commandBufferWithDescriptor(descriptor));
}

}  // namespace
}  // namespace mtlemu::python

PYBIND11_MODULE(_metal, m) {
  using namespace mtlemu;
  using namespace mtlemu::python;
  m.doc() = "mtlemu's Metal host objects (C++ core of the mtlemu package)";
  RememberMainThread();

  static PyObject* base =
      PyErr_NewException("mtlemu._metal.MetalError", PyExc_Exception, nullptr);
  m.attr("MetalError") = py::handle(base);
  static py::exception<CompileFailure> compile_error(m, "CompileError", base);
  static py::exception<ValidationFailure> validation_error(m, "ValidationError",
                                                           base);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const CompileFailure& e) {
      PyErr_SetString(compile_error.ptr(), e.message.c_str());
    } catch (const ValidationFailure& e) {
      PyErr_SetString(validation_error.ptr(), e.message.c_str());
    }
  });

  py::class_<Device, std::shared_ptr<Device>>(m, "Device")
      .def(py::init(&NewDevice), py::arg("chip") = "m1")
      .def_property_readonly(
          "name", [](const Device& d) { return std::string(d.name()); })
      .def_property_readonly(
          "chip", [](const Device& d) { return std::string(d.chip().name); })
      .def_property_readonly("gpu_cores",
                             [](const Device& d) { return d.chip().gpu_cores; })
      .def_property_readonly("max_threadgroup_memory_length",
                             [](const Device&) {
                               return MetalLimits::kMaxThreadgroupMemoryLength;
                             })
      .def_property_readonly(
          "max_threads_per_threadgroup",
          [](const Device&) { return MetalLimits::kMaxThreadsPerThreadgroup; })
      .def("new_buffer", &NewBuffer, py::arg("length"))
      .def("new_buffer_with_bytes", &NewBufferWithBytes, py::arg("data"))
      .def("_new_buffer_no_copy", &NewBufferNoCopy, py::arg("address"),
           py::arg("length"), py::arg("owner"))
      .def("_new_library", &NewLibrary, py::arg("source"), py::arg("file"),
           py::arg("macros"), py::arg("include_directories"),
           py::arg("fast_math"), py::arg("constants"), py::arg("kernels"))
      .def("new_compute_pipeline_state", &NewPipeline, py::arg("function"))
      .def("new_command_queue", &Device::newCommandQueue);

  py::class_<PyBuffer>(m, "Buffer", py::buffer_protocol())
      .def_buffer([](PyBuffer& b) {
        return py::buffer_info(
            b.buffer->contents(), 1, py::format_descriptor<uint8_t>::format(),
            1, {static_cast<py::ssize_t>(b.buffer->length())}, {1});
      })
      .def_property_readonly(
          "length", [](const PyBuffer& b) { return b.buffer->length(); })
      .def_property_readonly(
          "gpu_address",
          [](const PyBuffer& b) { return b.buffer->gpuAddress(); })
      .def_property(
          "label", [](const PyBuffer& b) { return b.buffer->label(); },
          [](PyBuffer& b, std::string l) { b.buffer->setLabel(std::move(l)); });

  py::class_<Library, std::shared_ptr<Library>>(m, "Library")
      .def_property_readonly("function_names", &Library::functionNames)
      .def(
          "_new_function",
          [](const Library& l, const std::string& name) {
            Result<std::shared_ptr<Function>> f =
                WithoutGil([&] { return l.newFunction(name); });
            if (!f.ok()) throw CompileFailure{f.error().message};
            return std::move(f).value();
          },
          py::arg("name"));

  py::class_<Function, std::shared_ptr<Function>>(m, "Function")
      .def_property_readonly("name", &Function::name)
      .def_property_readonly("isa", [](const Function& f) {
        return isa::PrintKernel(f.kernel());
      });

  py::class_<ComputePipelineState, std::shared_ptr<ComputePipelineState>>(
      m, "ComputePipelineState")
      .def_property_readonly(
          "max_total_threads_per_threadgroup",
          &ComputePipelineState::maxTotalThreadsPerThreadgroup)
      .def_property_readonly("thread_execution_width",
                             &ComputePipelineState::threadExecutionWidth)
      .def_property_readonly(
          "static_threadgroup_memory_length",
          &ComputePipelineState::staticThreadgroupMemoryLength)
      .def_property_readonly(
          "function_name",
          [](const ComputePipelineState& p) { return p.function().name(); });

  py::class_<CommandQueue, std::shared_ptr<CommandQueue>>(m, "CommandQueue")
      .def("_command_buffer", &NewCommandBuffer, py::arg("checks"),
           py::arg("oob"), py::arg("schedule"), py::arg("timing"),
           py::arg("timeline"), py::arg("host_threads"),
           py::arg("timeout_seconds"));

  py::class_<PyCommandBuffer, std::shared_ptr<PyCommandBuffer>>(m,
                                                                "CommandBuffer")
      .def("compute_command_encoder",
           [](py::object self) {
             return std::make_unique<PyEncoder>(
                 self, py::cast<PyCommandBuffer&>(self));
           })
      .def("commit", &PyCommandBuffer::Commit)
      .def("wait_until_completed", [](PyCommandBuffer&) {})
      .def_property_readonly(
          "status",
          [](PyCommandBuffer& c) { return StatusName(c.commands().status()); })
      .def_property_readonly(
          "_error",
          [](PyCommandBuffer& c) -> std::optional<py::tuple> {
            const CommandBufferError* e = c.commands().error();
            if (e == nullptr) return std::nullopt;
            return py::make_tuple(ErrorCodeName(*e), e->message);
          })
      .def_property_readonly(
          "dispatches",
          [](PyCommandBuffer& c) {
            py::list out;
            for (const DispatchReport& r : c.commands().dispatches()) {
              out.append(Report(r, "MTLEMU"));
            }
            return out;
          })
      .def(
          "write_trace",
          [](PyCommandBuffer& c, size_t dispatch, const std::string& path) {
            const std::vector<DispatchReport>& d = c.commands().dispatches();
            if (dispatch >= d.size() || d[dispatch].timeline == nullptr) {
              throw ValidationFailure{
                  "write_trace: dispatch " + std::to_string(dispatch) +
                  " has no timeline (make the command buffer with "
                  "trace=True, and commit it)"};
            }
            Must(traces::WriteChromeTraceFile(*d[dispatch].timeline, path));
          },
          py::arg("dispatch"), py::arg("path"));

  py::class_<PyEncoder>(m, "ComputeCommandEncoder")
      .def("set_compute_pipeline_state", &PyEncoder::SetPipeline,
           py::arg("state"))
      .def("set_buffer", &PyEncoder::SetBuffer, py::arg("buffer"),
           py::arg("offset"), py::arg("index"))
      .def("_set_bytes", &PyEncoder::SetBytes, py::arg("data"),
           py::arg("index"))
      .def("set_threadgroup_memory_length",
           &PyEncoder::SetThreadgroupMemoryLength, py::arg("length"),
           py::arg("index"))
      .def("dispatch_threads", &PyEncoder::DispatchThreads,
           py::arg("threads_per_grid"), py::arg("threads_per_threadgroup"))
      .def("dispatch_threadgroups", &PyEncoder::DispatchThreadgroups,
           py::arg("threadgroups_per_grid"), py::arg("threads_per_threadgroup"))
      .def("end_encoding", &PyEncoder::EndEncoding);

  m.def("chips", &Chips, "The chips: (name, marketing name, GPU cores).");
}
