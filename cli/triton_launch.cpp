// `mtlemu run` for Triton kernels (.py, .ttir, .mlir): --arg by name, --grid
// in programs of num_warps * 32 threads, as Triton's kernel[grid](args).
#include "api/triton_launch.h"

#include <fmt/format.h>

#include "api/triton_print.h"
#include "cli/run_launch.h"
#include "cli/triton_args.h"

namespace mtlemu::cli {

EncodedLaunch EncodeTritonLaunch(Device& device, ComputeCommandEncoder& encoder,
                                 const RunOptions& options) {
  if (!options.grid) {
    throw RunError(
        "give --grid X[,Y[,Z]]: the number of programs, as Triton's launch "
        "grid");
  }
  const MTLSize grid = ToMTLSize(Unwrap(ParseSize3("--grid", *options.grid)));
  std::vector<TritonArg> args =
      Unwrap(ResolveTritonArgs(options.triton.args, /*with_data=*/true));
  const api::TritonLibrary compiled = Unwrap(
      CompileTritonKernel(&device, options.file, options.kernel, options.triton,
                          args, /*for_launch=*/true, stdout));

  EncodedLaunch launch;
  launch.kind = LaunchKind::kTriton;
  std::map<std::string, api::TritonArgValue> values;
  for (TritonArg& a : args) {
    api::TritonArgValue& value = values[a.name];
    if (!a.data) {
      value.scalar = a.value;
      continue;
    }
    BoundBuffer b = MakeBoundBuffer(device, std::move(*a.data), a.name,
                                    "--arg '" + a.text + "'");
    value.buffer = b.buffer;
    launch.buffers.emplace(a.name, std::move(b));
  }
  std::shared_ptr<Buffer> print_log;
  Check(api::EncodeTritonLaunch(device, encoder, compiled, grid, values,
                                &print_log));
  if (print_log) {
    launch.printed = [print_log, kernel = compiled.kernel] {
      triton::lower::PrintedLines p = api::PrintedLines(kernel, *print_log);
      if (p.dropped > 0) {
        p.lines.push_back(fmt::format(
            "mtlemu: {} more printed values did not fit the print log "
            "({} values)",
            p.dropped, api::kDefaultPrintLogRecords));
      }
      return p.lines;
    };
  }
  return launch;
}

}  // namespace mtlemu::cli
