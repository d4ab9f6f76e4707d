// What `mtlemu run` does differently for each kind of kernel file: binding
// the arguments and encoding the dispatch. Metal and ISA kernels
// (metal_launch.cpp) take --buffer/--bytes by index and --grid in threads;
// Triton kernels (triton_launch.cpp) take --arg by name and --grid in
// programs. run_command.cpp does the rest for both: the device, the run,
// the report, --expect and --out.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/buffer_spec.h"
#include "cli/exit_codes.h"
#include "cli/run_command.h"
#include "common/result.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"

namespace mtlemu::cli {

// An error that ends the run before the dispatch, with its exit code.
class RunError {
 public:
  explicit RunError(std::string message, int code = kExitBadInput)
      : message_(std::move(message)), code_(code) {}
  const std::string& message() const { return message_; }
  int code() const { return code_; }

 private:
  std::string message_;
  int code_;
};

template <class T>
T Unwrap(Result<T> r) {
  if (!r.ok()) throw RunError(r.error().message);
  return std::move(r).value();
}

inline void Check(const Status& s) {
  if (!s.ok()) throw RunError(s.error().message);
}

// A buffer the run binds, with what --out needs to write it back.
struct BoundBuffer {
  std::shared_ptr<Buffer> buffer;
  isa::ScalarType type = isa::ScalarType::kUChar;
  std::vector<uint64_t> shape;
  std::string name;  // how messages name it: "buffer(2)", "out_ptr"
};

inline MTLSize ToMTLSize(const Size3& s) { return {s.x, s.y, s.z}; }

// A device buffer holding `data`, labelled with the argument that made it.
BoundBuffer MakeBoundBuffer(Device& device, BufferData data, std::string name,
                            const std::string& origin);

enum class LaunchKind {
  kMetal,   // --out INDEX=PATH; dispatched in threads and threadgroups
  kTriton,  // --out NAME=PATH; dispatched in programs
};

// A dispatch encoded, with the buffers --out and --expect can name.
struct EncodedLaunch {
  LaunchKind kind = LaunchKind::kMetal;
  // By the key --out and --expect use: the index in decimal, or the name.
  std::map<std::string, BoundBuffer> buffers;
  // What the kernel printed (tl.device_print), read after the run, also
  // when it faulted; unset for kernels that cannot print.
  std::function<std::vector<std::string>()> printed;
};

// Contract: binds the arguments `options` gives to `encoder` and encodes
// one dispatch of options.kernel; throws RunError (exit 1) for a bad file
// or argument, before anything runs. Prints only tl.static_print's output.
EncodedLaunch EncodeMetalLaunch(Device& device, ComputeCommandEncoder& encoder,
                                const RunOptions& options);
EncodedLaunch EncodeTritonLaunch(Device& device, ComputeCommandEncoder& encoder,
                                 const RunOptions& options);

}  // namespace mtlemu::cli
