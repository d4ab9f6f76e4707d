// Triton kernels through the mtlemu executable: `run` on the kernels of
// tests/compiler/triton/kernels/basics.py and on the TTIR that real Triton
// printed (../shared/reference/ttir), with inputs written here as .npy and
// outputs checked against plain C++ references (float64 accumulation);
// `compile --emit`; and the command line's errors for Triton files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cli/buffer_spec.h"
#include "cli/exit_codes.h"
#include "tests/cli/cli_test_util.h"

namespace mtlemu::cli {
namespace {

using cli_test::Contains;
using cli_test::ProcessResult;
using cli_test::ReadNpyValues;
using cli_test::RunMtlemu;
using cli_test::ScratchDir;
using cli_test::WriteFile;
using isa::ScalarType;

const std::string kBasics =
    std::string(MTLEMU_TEST_DATA_DIR) + "/compiler/triton/kernels/basics.py";

std::string ReferenceTtir(const std::string& name) {
  return std::string(MTLEMU_SOURCE_DIR) + "/../shared/reference/ttir/" + name;
}

#define SKIP_WITHOUT_REFERENCE_TTIR()                             \
  if (!std::filesystem::exists(ReferenceTtir("README.md"))) {     \
    GTEST_SKIP() << "no reference TTIR at " << ReferenceTtir(""); \
  }

// `n` floats uniform in [-1, 1): the command line's random(SEED).
std::vector<float> Random(uint64_t n, uint64_t seed) {
  GeneratedBuffer spec;
  spec.type = ScalarType::kFloat;
  spec.count = n;
  spec.generator = GeneratorKind::kRandom;
  spec.seed = seed;
  return cli_test::FromBytes<float>(MaterializeBuffer(spec));
}

// |got - want| <= tolerance for each element.
::testing::AssertionResult AllNear(const std::vector<float>& got,
                                   const std::vector<double>& want,
                                   const std::vector<double>& tolerance) {
  return cli_test::ElementsMatch(got, want, [&](size_t i) {
    return std::fabs(got[i] - want[i]) <= tolerance[i];
  });
}

// A relative tolerance of 1e-5 on each element of `want` (plus 1e-6).
std::vector<double> Relative(const std::vector<double>& want) {
  std::vector<double> t(want.size());
  for (size_t i = 0; i < want.size(); ++i)
    t[i] = 1e-6 + 1e-5 * std::fabs(want[i]);
  return t;
}

std::vector<double> SoftmaxReference(const std::vector<float>& in, int rows,
                                     int cols) {
  std::vector<double> out(in.size());
  for (int r = 0; r < rows; ++r) {
    const float* x = &in[r * cols];
    const double m = *std::max_element(x, x + cols);
    double sum = 0;
    for (int c = 0; c < cols; ++c) sum += std::exp(x[c] - m);
    for (int c = 0; c < cols; ++c) out[r * cols + c] = std::exp(x[c] - m) / sum;
  }
  return out;
}

// C = A (MxK) B (KxN), row-major; `magnitude` gets sum |a*b| per element,
// which bounds the rounding of any order of fp32 accumulation.
std::vector<double> MatmulReference(const std::vector<float>& a,
                                    const std::vector<float>& b, int M, int N,
                                    int K, std::vector<double>* magnitude) {
  std::vector<double> c(M * N);
  magnitude->assign(M * N, 0.0);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      for (int k = 0; k < K; ++k) {
        const double p = double(a[i * K + k]) * b[k * N + j];
        c[i * N + j] += p;
        (*magnitude)[i * N + j] += std::fabs(p);
      }
    }
  }
  return c;
}

std::vector<double> LayerNormReference(const std::vector<float>& x,
                                       const std::vector<float>& w,
                                       const std::vector<float>& b, int rows,
                                       int cols, double eps) {
  std::vector<double> y(x.size());
  for (int r = 0; r < rows; ++r) {
    const float* row = &x[r * cols];
    double mean = 0, var = 0;
    for (int c = 0; c < cols; ++c) mean += row[c];
    mean /= cols;
    for (int c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= cols;
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int c = 0; c < cols; ++c) {
      y[r * cols + c] = (row[c] - mean) * rstd * w[c] + b[c];
    }
  }
  return y;
}

using Args = std::vector<std::pair<std::string, std::string>>;

// add_kernel's arguments: x and y iota over `count` floats.
Args AddArgs(int count = 16, int n_elements = 16, int block = 16) {
  const std::string floats = "float[" + std::to_string(count) + "]:";
  return {{"x_ptr", floats + "iota"},
          {"y_ptr", floats + "iota"},
          {"output_ptr", floats + "zeros"},
          {"n_elements", std::to_string(n_elements)},
          {"BLOCK_SIZE", std::to_string(block)}};
}

class TritonCliTest : public ::testing::Test {
 protected:
  ProcessResult Run(const std::vector<std::string>& args) {
    return RunMtlemu(dir_, args);
  }

  // `mtlemu run FILE --kernel KERNEL --grid GRID --arg NAME=SPEC ...`, then
  // `extra`.
  ProcessResult RunTriton(const std::string& file, const std::string& kernel,
                          const std::string& grid, const Args& args,
                          const std::vector<std::string>& extra = {}) {
    std::vector<std::string> command = {"run",  file,     "--kernel",
                                        kernel, "--grid", grid};
    for (const auto& [name, spec] : args) {
      command.push_back("--arg");
      command.push_back(name + "=" + spec);
    }
    command.insert(command.end(), extra.begin(), extra.end());
    return Run(command);
  }

  // Writes `values` as DIR/NAME.npy (float32) and returns its path.
  std::string Npy(const std::string& name, const std::vector<float>& values) {
    const std::string path = dir_.Path(name + ".npy");
    cli_test::WriteNpyValues(path, ScalarType::kFloat, values);
    return path;
  }

  // Writes DIR/NAME: the imports, `@triton.jit` on line 4, `function` from
  // line 5. Returns its path.
  std::string JitFile(const std::string& name, const std::string& function) {
    const std::string path = dir_.Path(name);
    WriteFile(path,
              "import triton\nimport triton.language as tl\n\n@triton.jit\n" +
                  function);
    return path;
  }

  // The --out path for `name`.
  std::string Out(const std::string& name) {
    return dir_.Path(name + "_out.npy");
  }

  std::vector<float> ReadOut(const std::string& name) {
    return ReadNpyValues<float>(Out(name), ScalarType::kFloat);
  }

  // Expects exit code 1 and `part` in stderr; returns stderr.
  std::string ExpectBadInput(const ProcessResult& r, const std::string& part) {
    EXPECT_EQ(r.exit_code, kExitBadInput) << r.err;
    EXPECT_TRUE(Contains(r.err, part));
    return r.err;
  }

  // Vector add of 98432 floats; `out` names the output pointer
  // (add_kernel's output_ptr, the TTIR's out_ptr), `constexprs` are the
  // extra --arg values.
  void CheckAdd(const std::string& file, const std::string& out,
                const Args& constexprs) {
    const int n = 98432;
    const std::vector<float> x = Random(n, 1), y = Random(n, 2);
    std::vector<float> sum(n);
    for (int i = 0; i < n; ++i) sum[i] = x[i] + y[i];
    Args args = {{"x_ptr", Npy("x", x)},
                 {"y_ptr", Npy("y", y)},
                 {out, "float[98432]:fill(-1)"},
                 {"n_elements", "98432"}};
    args.insert(args.end(), constexprs.begin(), constexprs.end());
    const ProcessResult r =
        RunTriton(file, "add_kernel", "97", args,
                  {"--out", out + "=" + Out(out), "--expect",
                   out + "=" + Npy("sum", sum)});
    ASSERT_EQ(r.exit_code, kExitOk) << r.err;
    EXPECT_TRUE(Contains(r.out,
                         "dispatched add_kernel on Apple M1: 97x1x1 "
                         "programs of 128 threads (num_warps 4)"));
    EXPECT_TRUE(Contains(r.out, "emulated in"));
    EXPECT_TRUE(Contains(r.out, out + " matches"));
    EXPECT_EQ(ReadOut(out), sum);
  }

  // Runs `kernel` with `args` and `more_args`, writing the buffer of
  // pointer argument `out`; expects success and returns the buffer.
  std::vector<float> RunForOutput(const std::string& file,
                                  const std::string& kernel,
                                  const std::string& grid, Args args,
                                  const Args& more_args,
                                  const std::string& out) {
    args.insert(args.end(), more_args.begin(), more_args.end());
    const ProcessResult r =
        RunTriton(file, kernel, grid, args, {"--out", out + "=" + Out(out)});
    EXPECT_EQ(r.exit_code, kExitOk) << r.err;
    if (r.exit_code != kExitOk) return {};
    return ReadOut(out);
  }

  // Softmax of 64 rows of 781; `constexprs` are the extra --arg values.
  void CheckSoftmax(const std::string& file, const Args& constexprs) {
    const int rows = 64, cols = 781;
    const std::vector<float> in = Random(rows * cols, 3);
    const std::vector<float> got =
        RunForOutput(file, "softmax_kernel", "64",
                     {{"out_ptr", "float[49984]:zeros"},
                      {"in_ptr", Npy("in", in)},
                      {"in_row_stride", "781"},
                      {"out_row_stride", "781"},
                      {"n_cols", "781"}},
                     constexprs, "out_ptr");
    const std::vector<double> want = SoftmaxReference(in, rows, cols);
    EXPECT_TRUE(AllNear(got, want, Relative(want)));
  }

  // C = A B with M=200, N=136, K=96; `extra_args` are what the TTIR
  // leaves out: the strides equal to 1 and the constexprs.
  void CheckMatmul(const std::string& file, const Args& extra_args) {
    const int M = 200, N = 136, K = 96;
    const std::vector<float> a = Random(M * K, 4), b = Random(K * N, 5);
    const std::vector<float> got =
        RunForOutput(file, "matmul_kernel", "7,5",
                     {{"a_ptr", Npy("a", a)},
                      {"b_ptr", Npy("b", b)},
                      {"c_ptr", "float[27200]:zeros"},
                      {"M", "200"},
                      {"N", "136"},
                      {"K", "96"},
                      {"stride_am", "96"},
                      {"stride_bk", "136"},
                      {"stride_cm", "136"}},
                     extra_args, "c_ptr");
    std::vector<double> magnitude;
    const std::vector<double> want = MatmulReference(a, b, M, N, K, &magnitude);
    for (double& t : magnitude) t = 1e-6 + 1e-5 * t;
    EXPECT_TRUE(AllNear(got, want, magnitude));
  }

  ScratchDir dir_;
};

// --- basics.py ---------------------------------------------------------------

TEST_F(TritonCliTest, AddKernelFromPython) {
  CheckAdd(kBasics, "output_ptr", {{"BLOCK_SIZE", "1024"}});
}

TEST_F(TritonCliTest, SoftmaxKernelFromPython) {
  CheckSoftmax(kBasics, {{"BLOCK_SIZE", "1024"}});
}

TEST_F(TritonCliTest, MatmulKernelFromPython) {
  CheckMatmul(kBasics, {{"stride_ak", "1"},
                        {"stride_bn", "1"},
                        {"stride_cn", "1"},
                        {"BLOCK_M", "32"},
                        {"BLOCK_N", "32"},
                        {"BLOCK_K", "32"}});
}

TEST_F(TritonCliTest, NumWarpsSetsTheProgramSize) {
  const ProcessResult r =
      RunTriton(kBasics, "add_kernel", "4", AddArgs(1000, 1000, 256),
                {"--num-warps", "2", "--out", "output_ptr=" + Out("o")});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_TRUE(Contains(r.out, "4x1x1 programs of 64 threads (num_warps 2)"));
  const std::vector<float> got = ReadOut("o");
  ASSERT_EQ(got.size(), 1000u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(got[i], 2.0f * i) << i;
}

TEST_F(TritonCliTest, ExpectMismatchIsExit4) {
  const ProcessResult r = RunTriton(
      kBasics, "add_kernel", "1", AddArgs(),
      {"--expect", "output_ptr=" + Npy("wrong", std::vector<float>(16, 0.0f))});
  EXPECT_EQ(r.exit_code, kExitMismatch) << r.err;
  EXPECT_TRUE(Contains(r.err, "output_ptr differs from"));
}

TEST_F(TritonCliTest, OutOfBoundsIsAFault) {
  // n_elements says 1024, the buffers hold 16: 4 KiB past the end, which
  // the fault policy makes a fault (by default zeros and a warning).
  const ProcessResult r = RunTriton(
      kBasics, "add_kernel", "1", AddArgs(16, 1024, 1024), {"--oob", "fault"});
  EXPECT_EQ(r.exit_code, kExitGpuFault) << r.err;
  // The report names the kernel's Python line: the load of x.
  EXPECT_TRUE(Contains(r.err, "basics.py:13:")) << r.err;
  EXPECT_TRUE(Contains(r.err, "out-of-bounds access in kernel 'add_kernel'"));
}

TEST_F(TritonCliTest, TimingReportForATritonKernel) {
  const ProcessResult r =
      RunTriton(kBasics, "add_kernel", "2", AddArgs(256, 256, 128),
                {"--timing", "--chip", "m2"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_TRUE(Contains(r.out, "timing: kernel 'add_kernel' on Apple M2"));
}

TEST_F(TritonCliTest, StaticPrintAndStringConstexprs) {
  const std::string file =
      JitFile("printing.py",
              "def fill_kernel(out_ptr, N: tl.constexpr, TAG: tl.constexpr,\n"
              "                DT: tl.constexpr):\n"
              "    tl.static_print('tag', TAG, 'n', N)\n"
              "    offs = tl.arange(0, N)\n"
              "    tl.store(out_ptr + offs, offs.to(DT))\n");
  for (const std::string tag : {"hello", ""}) {
    const ProcessResult r = RunTriton(file, "fill_kernel", "1",
                                      {{"out_ptr", "half[8]:zeros"},
                                       {"N", "8"},
                                       {"TAG", tag},
                                       {"DT", "tl.float16"}},
                                      {"--out", "out_ptr=" + Out("o")});
    ASSERT_EQ(r.exit_code, kExitOk) << r.err;
    EXPECT_TRUE(Contains(r.out, "tag " + tag));
    Result<NpyArray> out = ReadNpy(Out("o"));
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out.value().type, ScalarType::kHalf);
    const std::vector<uint16_t> bits =
        cli_test::FromBytes<uint16_t>(out.value().data);
    EXPECT_EQ(bits[3], 0x4200);  // 3.0 in half
  }
}

TEST_F(TritonCliTest, FailedDeviceAssertIsAFaultAtItsPythonLine) {
  const std::string file =
      JitFile("asserting.py",
              "def check_kernel(x_ptr, n, LIMIT: tl.constexpr,\n"
              "                 BLOCK: tl.constexpr):\n"
              "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
              "    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)\n"
              "    tl.store(x_ptr + offs, x + 1, mask=offs < n)\n"
              "    tl.device_assert(x < LIMIT, 'x too big')\n");
  // iota: x[i] = i; 100 and more fail. One program: which of several
  // faults first is up to the host's threads.
  auto with_limit = [](const char* limit) {
    return Args{{"x_ptr", "float[128]:iota"},
                {"n", "128"},
                {"BLOCK", "128"},
                {"LIMIT", limit}};
  };
  const ProcessResult failed =
      RunTriton(file, "check_kernel", "1", with_limit("100.0"),
                {"--out", "x_ptr=" + Out("x")});
  EXPECT_EQ(failed.exit_code, kExitGpuFault) << failed.err;
  EXPECT_TRUE(Contains(failed.err, "asserting.py:10: trap")) << failed.err;
  // The line itself, with the assert's message.
  EXPECT_TRUE(
      Contains(failed.err, "10 | tl.device_assert(x < LIMIT, 'x too big')"))
      << failed.err;
  // The store before the assert ran in the program that trapped: its
  // values are in the --out file (what was computed is kept).
  const std::vector<float> got = ReadOut("x");
  ASSERT_EQ(got.size(), 128u);
  for (int i = 100; i < 128; ++i) EXPECT_EQ(got[i], i + 1.0f) << i;

  const ProcessResult passed =
      RunTriton(file, "check_kernel", "1", with_limit("1000.0"));
  EXPECT_EQ(passed.exit_code, kExitOk) << passed.err;
}

TEST_F(TritonCliTest, DevicePrintGoesToStdoutAlsoWhenTheKernelFaults) {
  const std::string file = JitFile("print_then_fault.py",
                                   "def k(x_ptr, n):\n"
                                   "    offs = tl.arange(0, 4)\n"
                                   "    x = tl.load(x_ptr + offs)\n"
                                   "    tl.device_print('x', x)\n"
                                   "    tl.device_assert(x < n)\n");
  const ProcessResult r = RunTriton(
      file, "k", "1", {{"x_ptr", "float[4]:iota"}, {"n", "2"}}, {"-q"});
  EXPECT_EQ(r.exit_code, kExitGpuFault) << r.err;
  EXPECT_EQ(r.out,
            "pid (0, 0, 0) idx (0) x: 0.000000\n"
            "pid (0, 0, 0) idx (1) x: 1.000000\n"
            "pid (0, 0, 0) idx (2) x: 2.000000\n"
            "pid (0, 0, 0) idx (3) x: 3.000000\n");
  EXPECT_TRUE(Contains(r.err, "print_then_fault.py:9: trap")) << r.err;
}

// --- the reference TTIR ------------------------------------------------------

TEST_F(TritonCliTest, AddTtir) {
  SKIP_WITHOUT_REFERENCE_TTIR();
  CheckAdd(ReferenceTtir("add.ttir"), "out_ptr", {});
}

TEST_F(TritonCliTest, SoftmaxTtir) {
  SKIP_WITHOUT_REFERENCE_TTIR();
  CheckSoftmax(ReferenceTtir("softmax.ttir"), {});
}

TEST_F(TritonCliTest, MatmulTtir) {
  SKIP_WITHOUT_REFERENCE_TTIR();
  CheckMatmul(ReferenceTtir("matmul.ttir"), {});
}

TEST_F(TritonCliTest, LayerNormTtir) {
  SKIP_WITHOUT_REFERENCE_TTIR();
  const int rows = 48, cols = 500;
  const std::vector<float> x = Random(rows * cols, 6), w = Random(cols, 7),
                           b = Random(cols, 8);
  const std::vector<float> got =
      RunForOutput(ReferenceTtir("layernorm.ttir"), "layernorm_kernel", "48",
                   {{"x_ptr", Npy("x", x)},
                    {"y_ptr", "float[24000]:zeros"},
                    {"w_ptr", Npy("w", w)},
                    {"b_ptr", Npy("b", b)}},
                   {{"stride", "500"}, {"N", "500"}, {"eps", "1e-5"}}, "y_ptr");
  const std::vector<double> want =
      LayerNormReference(x, w, b, rows, cols, 1e-5);
  EXPECT_TRUE(AllNear(got, want, Relative(want)));
}

TEST_F(TritonCliTest, TtirArgumentsAreTheSignatures) {
  SKIP_WITHOUT_REFERENCE_TTIR();
  const std::string matmul = ReferenceTtir("matmul.ttir");
  // stride_ak was 1 at Triton's launch, so the signature has none.
  std::string err = ExpectBadInput(
      RunTriton(matmul, "matmul_kernel", "7,5", {{"stride_ak", "1"}}),
      "--arg 'stride_ak=1': kernel 'matmul_kernel' has no parameter "
      "'stride_ak'");
  EXPECT_TRUE(Contains(err, "a_ptr: !tt.ptr<f32>"));
  EXPECT_TRUE(Contains(err, "equal to 1"));
  ExpectBadInput(
      RunTriton(matmul, "matmul_kernel", "7,5", {{"a_ptr", "float[16]:zeros"}}),
      "kernel 'matmul_kernel' needs --arg b_ptr=... --arg c_ptr=...");
  ExpectBadInput(
      RunTriton(matmul, "matmul_kernel", "7,5", {{"a_ptr", "half[16]:zeros"}}),
      "'a_ptr' is !tt.ptr<f32>, but the buffer holds fp16");
  ExpectBadInput(RunTriton(matmul, "mm", "1", {}),
                 "no tt.func named 'mm' (it has: matmul_kernel)");
}

// --- compile --emit
// ------------------------------------------------------------

TEST_F(TritonCliTest, CompileEmitsEachStage) {
  const std::vector<std::string> python = {"compile",  kBasics,
                                           "--kernel", "add_kernel",
                                           "--arg",    "x_ptr=*fp32",
                                           "--arg",    "y_ptr=float[1]:zeros",
                                           "--arg",    "output_ptr=*fp32",
                                           "--arg",    "n_elements=1000",
                                           "--arg",    "BLOCK_SIZE=256"};
  const Args stages = {{"ttir", "tt.func public @add_kernel"},
                       {"layouts", "tensor<256x"},
                       {"msl", "kernel void add_kernel("},
                       {"isa", ".kernel add_kernel"}};
  for (const auto& [stage, part] : stages) {
    std::vector<std::string> args = python;
    args.insert(args.end(), {"--emit", stage});
    const ProcessResult r = Run(args);
    ASSERT_EQ(r.exit_code, kExitOk) << stage << ": " << r.err;
    EXPECT_TRUE(Contains(r.out, part)) << stage;
  }
  // isa is the default.
  const ProcessResult isa = Run(python);
  ASSERT_EQ(isa.exit_code, kExitOk) << isa.err;
  EXPECT_TRUE(Contains(isa.out, ".kernel add_kernel"));
  // The constexpr specializes the kernel.
  EXPECT_TRUE(Contains(
      Run({"compile", kBasics, "--kernel", "add_kernel", "--arg", "x_ptr=*fp16",
           "--arg", "y_ptr=*fp16", "--arg", "output_ptr=*fp16", "--arg",
           "n_elements=1000", "--arg", "BLOCK_SIZE=64", "--emit", "ttir"})
          .out,
      "tensor<64xf16>"));
}

TEST_F(TritonCliTest, CompileTtirNeedsNoArguments) {
  SKIP_WITHOUT_REFERENCE_TTIR();
  const std::string add = ReferenceTtir("add.ttir");
  const Args stages = {{"ttir", "tt.func public @add_kernel"},
                       {"msl", "kernel void add_kernel("},
                       {"isa", ".kernel add_kernel"}};
  for (const auto& [stage, part] : stages) {
    const ProcessResult r =
        Run({"compile", add, "--kernel", "add_kernel", "--emit", stage});
    ASSERT_EQ(r.exit_code, kExitOk) << stage << ": " << r.err;
    EXPECT_TRUE(Contains(r.out, part)) << stage;
  }
}

TEST_F(TritonCliTest, CompileErrors) {
  ExpectBadInput(Run({"compile", kBasics, "--emit", "ttir"}),
                 "give one --kernel NAME");
  ExpectBadInput(Run({"compile", kBasics, "--kernel", "add_kernel", "--emit",
                      "ttir", "-D", "X=1"}),
                 "-D is for Metal and ISA kernels");
  ExpectBadInput(
      Run({"compile", std::string(MTLEMU_SOURCE_DIR) + "/examples/vector_add.s",
           "--emit", "ttir"}),
      "--emit ttir is for Triton kernels");
  ExpectBadInput(Run({"compile", kBasics, "--kernel", "add_kernel", "--arg",
                      "x_ptr=*fp99"}),
                 "'*fp99' is not a pointer type");
}

// --- run's errors ------------------------------------------------------------

TEST_F(TritonCliTest, MissingArgListsTheParameters) {
  Args args = AddArgs();
  args.erase(args.begin() + 3);  // n_elements
  ExpectBadInput(RunTriton(kBasics, "add_kernel", "1", args),
                 "kernel 'add_kernel' needs --arg n_elements=... (parameters: "
                 "x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: "
                 "constexpr)");
}

TEST_F(TritonCliTest, UnknownArgName) {
  Args args = AddArgs();
  args.emplace_back("n", "16");
  ExpectBadInput(RunTriton(kBasics, "add_kernel", "1", args),
                 "--arg 'n=16': kernel 'add_kernel' has no parameter 'n' "
                 "(parameters: x_ptr,");
}

TEST_F(TritonCliTest, BadArgSpecs) {
  const Args cases = {
      {"x_ptr=float[x]:zeros", "count 'x' is not a positive integer"},
      {"x_ptr=floaty[4]:zeros", "unknown type 'floaty'"},
      {"x_ptr=float[4]:bogus", "unknown generator 'bogus'"},
      {"x_ptr=" + dir_.Path("missing.npy"),
       dir_.Path("missing.npy") + ": cannot open"},
      {"x_ptr=*fp32", "a pointer type has no data"},
      {"=3", "expected NAME=SPEC"},
      {"x_ptr", "expected NAME=SPEC"}};
  for (const auto& [arg, message] : cases) {
    const ProcessResult r = Run({"run", kBasics, "--kernel", "add_kernel",
                                 "--grid", "1", "--arg", arg});
    ExpectBadInput(r, "--arg '" + arg + "': " + message);
  }
  Args twice = AddArgs();
  twice.emplace_back("n_elements", "8");
  ExpectBadInput(RunTriton(kBasics, "add_kernel", "1", twice),
                 "'n_elements' is given twice");
}

TEST_F(TritonCliTest, PythonSyntaxErrorHasItsLocation) {
  const std::string file = JitFile("broken.py",
                                   "def k(x_ptr):\n"
                                   "    y = (1 +\n");
  const std::vector<std::string> arg = {"--kernel", "k", "--arg",
                                        "x_ptr=float[4]:zeros"};
  std::vector<std::string> run = {"run", file, "--grid", "1"};
  std::vector<std::string> compile = {"compile", file};
  for (std::vector<std::string>* command : {&run, &compile}) {
    command->insert(command->end(), arg.begin(), arg.end());
    const ProcessResult r = Run(*command);
    ExpectBadInput(r, file + ":6:");
    EXPECT_FALSE(Contains(r.err, "mtlemu: error:")) << r.err;
  }
}

TEST_F(TritonCliTest, PythonCompileErrorHasItsLocation) {
  const std::string file =
      JitFile("wrong.py",
              "def k(x_ptr):\n"
              "    tl.store(x_ptr, tl.no_such_function(1))\n");
  ExpectBadInput(RunTriton(file, "k", "1", {{"x_ptr", "float[4]:zeros"}}),
                 file + ":6:");
}

TEST_F(TritonCliTest, UnknownKernelListsTheKernels) {
  ExpectBadInput(RunTriton(kBasics, "nope", "1", {}),
                 "no @triton.jit function named 'nope'");
}

TEST_F(TritonCliTest, MetalOnlyOptionsWithATritonFile) {
  const std::vector<std::vector<std::string>> options = {
      {"--groups", "1"},
      {"--threadgroup", "128"},
      {"--buffer", "0=float[4]:zeros"},
      {"--bytes", "3=uint:4"},
      {"--threadgroup-memory", "0=1024"},
      {"--constant", "N=uint:4"},
      {"-D", "X=1"},
      {"--no-fast-math"}};
  for (const std::vector<std::string>& option : options) {
    ExpectBadInput(RunTriton(kBasics, "add_kernel", "1", AddArgs(), option),
                   option[0] + " is for Metal and ISA kernels");
  }
}

TEST_F(TritonCliTest, TritonOnlyOptionsWithAMetalFile) {
  const std::string example =
      std::string(MTLEMU_SOURCE_DIR) + "/examples/vector_add.s";
  const std::vector<std::vector<std::string>> options = {
      {"--arg", "a=float[4]:zeros"},
      {"--num-warps", "2"},
      {"--module-path", dir_.Path("")}};
  for (const std::vector<std::string>& option : options) {
    std::vector<std::string> args = {"run",        example,  "--kernel",
                                     "vector_add", "--grid", "4"};
    args.insert(args.end(), option.begin(), option.end());
    ExpectBadInput(Run(args), option[0] + " is for Triton kernels");
  }
}

TEST_F(TritonCliTest, OutNamesAPointerArgument) {
  ExpectBadInput(
      RunTriton(kBasics, "add_kernel", "1", AddArgs(),
                {"--out", "n_elements=" + Out("n")}),
      "--out 'n_elements=" + Out("n") +
          "': 'n_elements' is not a pointer argument given a buffer with "
          "--arg (those are: output_ptr, x_ptr, y_ptr)");
  ExpectBadInput(
      RunTriton(kBasics, "add_kernel", "1", AddArgs(), {"--expect", "nothing"}),
      "--expect 'nothing': expected NAME=PATH.npy");
}

TEST_F(TritonCliTest, GridIsRequired) {
  ExpectBadInput(Run({"run", kBasics, "--kernel", "add_kernel"}),
                 "give --grid X[,Y[,Z]]");
}

}  // namespace
}  // namespace mtlemu::cli
