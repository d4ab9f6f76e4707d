// The `mtlemu` command line: the only place that prints and exits.
#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/roofline_command.h"
#include "cli/run_command.h"
#include "cli/tool_commands.h"

namespace {

// What `run`, `roofline` and `compile` take for a Triton kernel.
void AddTritonOptions(CLI::App* cmd, mtlemu::cli::TritonOptions& triton) {
  cmd->add_option("--arg", triton.args,
                  "Triton: NAME=SPEC, SPEC a buffer (FILE.npy or "
                  "TYPE[COUNT]:GEN), *DTYPE (compile only), or a value (128, "
                  "1e-5, True, None, fp16, text)");
  cmd->add_option("--num-warps", triton.num_warps,
                  "Triton: SIMD groups per program (default: the autotune "
                  "config's, or 4)");
  cmd->add_flag("--no-fp-fusion", triton.no_fp_fusion,
                "Triton: enable_fp_fusion=False (a * b + c rounds twice; "
                "by default it may be one fma, as in Triton)");
  cmd->add_option("--autotune-config", triton.autotune_config,
                  "Triton: which of an @triton.autotune kernel's configs "
                  "gives the meta-parameters left out (default 0)");
  cmd->add_option("--module-path", triton.module_paths,
                  "Triton: a folder where the kernel's imports are found");
}

// What `run` and `roofline` share: the kernel, its arguments, the dispatch.
void AddDispatchOptions(CLI::App* cmd, mtlemu::cli::RunOptions& run) {
  cmd->add_option("file", run.file,
                  "Kernel file (.metal, ISA text .s, a .mtlb module, or "
                  "Triton: .py, .ttir, .mlir)")
      ->required();
  cmd->add_option("--kernel,-k", run.kernel, "Kernel name")->required();
  cmd->add_option("--grid", run.grid,
                  "X[,Y[,Z]] threads, as dispatchThreads (Triton: programs, "
                  "as Triton's launch grid)");
  cmd->add_option("--groups", run.groups,
                  "X[,Y[,Z]] threadgroups, as dispatchThreadgroups");
  cmd->add_option("--threadgroup", run.threadgroup,
                  "X[,Y[,Z]] threads per threadgroup (default: 256 or "
                  "the pipeline's maximum)");
  cmd->add_option("--buffer,-b", run.buffers,
                  "INDEX=FILE.npy or INDEX=TYPE[COUNT]:GEN, GEN one of "
                  "zeros, uninit (zeros nothing has written, for --check "
                  "init), iota, fill(V), random(SEED)");
  cmd->add_option("--bytes", run.bytes,
                  "INDEX=TYPE:V[,V...] (setBytes: scalars, packed structs)");
  cmd->add_option("--threadgroup-memory", run.threadgroup_memory,
                  "INDEX=BYTES (setThreadgroupMemoryLength)");
  cmd->add_option("--threadgroup-memory-fill", run.threadgroup_memory_fill,
                  "What threadgroup memory holds at a threadgroup's start "
                  "(Metal: undefined): zero (default), poison (every byte "
                  "0xFF: NaN, -1) or random (seeded by the threadgroup's "
                  "position; the same every run)")
      ->check(CLI::IsMember({"zero", "poison", "random"}));
  cmd->add_option("--check", run.checks,
                  "Kernel checks: race, init, simd, order (each dispatch "
                  "twice, its SIMD groups in sequential and interleaved "
                  "order, and the bytes that differ) or all, "
                  "comma-separated; findings go to stderr, and the exit "
                  "code is 5 when there are any");
  cmd->add_option("--schedule", run.schedule,
                  "The order of a threadgroup's SIMD groups between "
                  "barriers: interleaved (default: they take turns at "
                  "branches, as the GPU interleaves them, in kernels whose "
                  "threadgroup reads and writes share a barrier interval), "
                  "sequential (each to its barrier in turn: fastest) or "
                  "random[:SEED] (a seeded random turn at every branch)");
  cmd->add_option("--oob", run.oob,
                  "Device accesses just outside a buffer (within the 16 KiB "
                  "page a Mac maps): report (default: zeros read, nothing "
                  "stored, a warning naming the line, the run goes on, as "
                  "on a Mac) or fault (exit code 2). Farther away, always "
                  "a fault")
      ->check(CLI::IsMember({"report", "fault"}));
  cmd->add_option("--check-report", run.check_report,
                  "With --check: write the findings to FILE.json");
  cmd->add_option("--threads", run.threads,
                  "Host threads (default, or 0: all cores)");
  cmd->add_option("--executor", run.executor,
                  "How the kernel runs: auto (default: big dispatches with "
                  "straight runs of instructions compiled to native code "
                  "by LLVM, small ones interpreted), interpreter, or jit "
                  "(always compiled). The same results on each. Default: "
                  "MTLEMU_EXECUTOR, else auto")
      ->check(CLI::IsMember({"auto", "interpreter", "jit"}));
  cmd->add_option("--timeout", run.timeout_seconds,
                  "Seconds before the dispatch is stopped as a GPU timeout "
                  "(inf: no limit)")
      ->capture_default_str();
  cmd->add_option("--constant", run.constants,
                  "Function constant NAME=TYPE:V or INDEX=TYPE:V (.metal)");
  cmd->add_option("-D", run.defines,
                  "Preprocessor macro NAME[=VALUE] (.metal)");
  cmd->add_option("-I", run.include_directories,
                  "Folder searched for #include files (.metal; repeatable)");
  cmd->add_flag("--no-fast-math", run.no_fast_math,
                "Compile .metal with fast math off");
  AddTritonOptions(cmd, run.triton);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace mtlemu::cli;
  CLI::App app{
      "mtlemu: run Metal compute kernels on Linux, on a model of "
      "Apple's M1, M2 and M3 GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "mtlemu 0.1.0");

  RunOptions run;
  CLI::App* run_cmd = app.add_subcommand(
      "run", "Run a kernel: bind buffers, dispatch, write outputs");
  AddDispatchOptions(run_cmd, run);
  run_cmd->add_option("--chip", run.chip, "Chip: m1, m2-max, ... (see chips)")
      ->capture_default_str();
  run_cmd->add_option("--out,-o", run.outs,
                      "INDEX=PATH.npy (Triton: NAME=PATH.npy): write that "
                      "buffer after the run");
  run_cmd->add_option("--expect", run.expects,
                      "INDEX=PATH.npy (Triton: NAME=PATH.npy): after the "
                      "run, compare that buffer with the file (exit 4 when "
                      "it differs)");
  run_cmd->add_option("--rtol", run.rtol, "Relative tolerance for --expect")
      ->capture_default_str();
  run_cmd->add_option("--atol", run.atol, "Absolute tolerance for --expect")
      ->capture_default_str();
  run_cmd->add_flag("--quiet,-q", run.quiet, "Print only errors");
  run_cmd->add_flag("--timing", run.timing,
                    "Time the dispatch on the chip's timing model and print "
                    "a report");
  run_cmd->add_option("--trace", run.trace,
                      "Write a Chrome trace (Perfetto, chrome://tracing) of "
                      "the timed dispatch (gzip-compressed when the file "
                      "name ends in .gz)");
  run_cmd
      ->add_option("--trace-detail", run.trace_detail,
                   "threadgroup (a slice per threadgroup) or simd (also per "
                   "SIMD group)")
      ->check(CLI::IsMember({"threadgroup", "simd"}));
  run_cmd
      ->add_option("--report", run.report,
                   "Timing report format: text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  run_cmd->add_option("--report-file", run.report_file,
                      "Write the timing report here instead of stdout");

  RooflineOptions roofline;
  CLI::App* roofline_cmd = app.add_subcommand(
      "roofline",
      "Time a kernel on chips and draw it on their rooflines (SVG)");
  AddDispatchOptions(roofline_cmd, roofline.run);
  roofline_cmd
      ->add_option("--chips", roofline.chips,
                   "Chips side by side, comma-separated")
      ->capture_default_str();
  roofline_cmd->add_option("--output,-o", roofline.output, "SVG file to write")
      ->capture_default_str();

  std::string asm_file, asm_output;
  CLI::App* asm_cmd = app.add_subcommand(
      "asm",
      "Assemble and verify ISA text; write a binary module or print "
      "the canonical text");
  asm_cmd->add_option("file", asm_file, "ISA text file")->required();
  asm_cmd->add_option("--output,-o", asm_output, "Binary module to write");

  std::string disasm_file;
  CLI::App* disasm_cmd = app.add_subcommand(
      "disasm", "Print a binary module (or ISA text) as canonical ISA text");
  disasm_cmd->add_option("file", disasm_file, "Module file")->required();

  CompileCommandOptions compile;
  CLI::App* compile_cmd = app.add_subcommand(
      "compile",
      "Compile a Metal Shading Language file (.metal) or a Triton kernel "
      "(.py, .ttir, .mlir) and print its ISA or another stage");
  compile_cmd
      ->add_option("file", compile.file, "Kernel file (.metal, .py, .ttir)")
      ->required();
  compile_cmd->add_option("--kernel,-k", compile.kernels,
                          "Kernel name (required for Triton; .metal: lower "
                          "only these kernels, repeatable)");
  compile_cmd
      ->add_option("--emit", compile.emit,
                   "What to print: isa (default), or for Triton ttir, "
                   "layouts or msl")
      ->check(CLI::IsMember({"ttir", "layouts", "msl", "isa"}));
  AddTritonOptions(compile_cmd, compile.triton);
  compile_cmd->add_option("-D", compile.defines,
                          "Preprocessor macro NAME[=VALUE]");
  compile_cmd->add_option("-I", compile.include_directories,
                          "Folder searched for #include files (repeatable)");
  compile_cmd->add_option("--constant", compile.constants,
                          "Function constant NAME=TYPE:V or INDEX=TYPE:V");
  compile_cmd->add_flag("--no-fast-math", compile.no_fast_math,
                        "Compile with fast math off (Metal's default is on)");
  compile_cmd->add_flag("--emit-llvm", compile.emit_llvm,
                        "Print the LLVM IR and the kernels' argument tables");

  CLI::App* chips_cmd =
      app.add_subcommand("chips", "List the chips and their limits");

  // Argument errors read like every other error of the tool.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("mtlemu: error: ") + e.what() +
           "\nRun with --help for more information.\n";
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  if (run_cmd->parsed()) return RunCommand(run);
  if (roofline_cmd->parsed()) return RooflineCommand(roofline);
  if (asm_cmd->parsed()) return AsmCommand(asm_file, asm_output);
  if (disasm_cmd->parsed()) return DisasmCommand(disasm_file);
  if (chips_cmd->parsed()) return ChipsCommand();
  if (compile_cmd->parsed()) return CompileCommand(compile);
  return kExitBadInput;
}
