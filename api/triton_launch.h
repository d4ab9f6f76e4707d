// Launching a compiled Triton kernel as Triton does: kernel[grid](args).
// The grid counts programs; each program is one threadgroup of
// num_warps * 32 threads (dispatchThreadgroups). Pointer parameters bind
// buffers (at an offset, for views), the others are passed by value with
// setBytes in the parameter's IR type.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "api/triton_library.h"
#include "common/result.h"
#include "emu/device/compute_command_encoder.h"

namespace mtlemu::api {

// The value of one kernel argument at launch.
struct TritonArgValue {
  std::shared_ptr<Buffer> buffer;      // pointer parameters
  uint64_t offset = 0;                 // bytes into the buffer
  triton::frontend::KernelArg scalar;  // the others
};

// Encodes one launch of `kernel` on `encoder` over `grid` programs, with
// `args` by the names of the kernel's (specialized) signature. A kernel
// that calls tl.device_print writes to a print log (triton_print.h): the
// one `*print_log` holds, else a new one, left in `*print_log` for the
// caller to read after the run (when `print_log` is null, the prints are
// not kept). Errors: a missing or mistyped argument (naming it), a grid
// Metal refuses.
Status EncodeTritonLaunch(Device& device, ComputeCommandEncoder& encoder,
                          const TritonLibrary& kernel, MTLSize grid,
                          const std::map<std::string, TritonArgValue>& args,
                          std::shared_ptr<Buffer>* print_log = nullptr);

}  // namespace mtlemu::api
