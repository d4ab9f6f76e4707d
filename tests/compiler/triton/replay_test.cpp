// Replays launches of Triton kernels recorded on a real GPU with real
// Triton 3.6 (reference/record_launches.py; the data is under reference/):
// each launch's inputs go through mtlemu and the pointer arguments must
// end as they did on the GPU. Every launch runs three ways: from the
// kernel's Python source through mtlemu's front end; from the TTIR that
// front end writes, read back; and, where it was recorded (mtlemu's own
// kernels), from the TTIR real Triton printed.
//
// Suites: corpus (mtlemu's own kernels, always run); tutorials (Triton's
// python/tutorials, from $MTLEMU_TRITON_TUTORIALS); liger (Liger-Kernel's
// src directory, from $MTLEMU_LIGER_KERNEL). A suite whose directory is not
// given is skipped, saying so.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/npy.h"
#include "tests/compiler/triton/triton_harness.h"

namespace mtlemu::testing {
namespace {

namespace fs = std::filesystem;
using triton::frontend::KernelArg;

const fs::path kReference =
    fs::path(MTLEMU_TEST_DATA_DIR) / "compiler/triton/reference";

struct Manifest {
  std::string suite, file, kernel;
  MTLSize grid{1, 1, 1};
  int num_warps = 4;
  struct Arg {
    std::string name, kind, a, b;  // "buffer" dtype count | "int" v | ...
  };
  std::vector<Arg> args;
};

Result<Manifest> ReadManifest(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return Error{path.string() + ": cannot open"};
  Manifest m;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string key;
    s >> key;
    if (key == "suite") s >> m.suite;
    if (key == "file") s >> m.file;
    if (key == "kernel") s >> m.kernel;
    if (key == "grid") s >> m.grid.width >> m.grid.height >> m.grid.depth;
    if (key == "num_warps") s >> m.num_warps;
    if (key == "arg") {
      Manifest::Arg a;
      s >> a.name >> a.kind >> a.a >> a.b;
      m.args.push_back(a);
    }
  }
  return m;
}

// Where the suite's kernel files are, or "" when not given.
std::string SuiteRoot(const std::string& suite) {
  if (suite == "corpus") return MTLEMU_TEST_DATA_DIR "/compiler/triton/kernels";
  const char* var =
      suite == "tutorials" ? "MTLEMU_TRITON_TUTORIALS" : "MTLEMU_LIGER_KERNEL";
  const char* v = std::getenv(var);
  return v != nullptr ? v : "";
}

std::vector<std::string> Cases() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& suite : fs::directory_iterator(kReference, ec)) {
    if (!suite.is_directory()) continue;
    for (const auto& c : fs::directory_iterator(suite.path())) {
      if (fs::exists(c.path() / "manifest.txt")) {
        out.push_back(suite.path().filename().string() + "/" +
                      c.path().filename().string());
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The tolerance a recorded output is compared with: floats computed by
// other hardware (transcendentals, sums in another order), integers exact.
struct Tolerance {
  double rtol, atol;
};
Tolerance ToleranceFor(const std::string& dtype) {
  if (dtype == "fp32") return {2e-4, 2e-5};
  if (dtype == "fp16") return {4e-3, 2e-3};
  if (dtype == "bf16") return {3e-2, 2e-2};
  return {0, 0};
}

double ElementAsDouble(const std::string& dtype, const uint8_t* p) {
  if (dtype == "fp32") return *reinterpret_cast<const float*>(p);
  if (dtype == "fp16")
    return HalfToFloat(*reinterpret_cast<const uint16_t*>(p));
  if (dtype == "bf16")
    return BFloatToFloat(*reinterpret_cast<const uint16_t*>(p));
  if (dtype == "int64")
    return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
  if (dtype == "int32") return *reinterpret_cast<const int32_t*>(p);
  if (dtype == "int16") return *reinterpret_cast<const int16_t*>(p);
  if (dtype == "int8") return *reinterpret_cast<const int8_t*>(p);
  return *p;  // uint8, int1
}

int SizeOf(const std::string& dtype) {
  if (dtype == "fp32" || dtype == "int32") return 4;
  if (dtype == "fp16" || dtype == "bf16" || dtype == "int16") return 2;
  if (dtype == "int64") return 8;
  return 1;
}

// Runs the manifest's launch from `file` (Python or TTIR text) on `device`
// and compares the results; "" or what differed.
std::string RunFrom(Device& device, const Manifest& m, const fs::path& dir,
                    const std::string& file,
                    std::optional<std::string> source) {
  std::map<std::string, api::TritonArgValue> values;
  api::TritonRequest r;
  r.file = file;
  r.source = source;
  r.kernel = m.kernel;
  r.num_warps = m.num_warps;
  r.module_paths = {SuiteRoot(m.suite)};
  std::map<std::string, std::shared_ptr<Buffer>> buffers;
  for (const Manifest::Arg& a : m.args) {
    KernelArg k;
    if (a.kind == "buffer") {
      Result<cli::NpyArray> in =
          cli::ReadNpy((dir / (a.name + ".in.npy")).string());
      if (!in.ok()) return in.error().message;
      auto b = device.newBuffer(in.value().data.data(), in.value().data.size())
                   .value();
      buffers[a.name] = b;
      values[a.name].buffer = b;
      k.kind = KernelArg::Kind::kPointer;
      k.dtype = triton::frontend::DType::FromName(a.a);
    } else if (a.kind == "constexpr") {
      k = KernelArg::FromText(a.a == "none"                ? "None"
                              : a.a == "str" && a.b == "-" ? ""
                                                           : a.b);
      if (a.a == "str") {
        k.kind = KernelArg::Kind::kString;
        k.text = a.b == "-" ? "" : a.b;
      }
      values[a.name].scalar = k;
    } else if (a.kind == "none") {
      k = KernelArg::FromText("None");
      values[a.name].scalar = k;
    } else {
      k = KernelArg::FromText(a.a);
      if (a.kind == "float" && k.kind == KernelArg::Kind::kInt) {
        k.kind = KernelArg::Kind::kFloat;
        k.float_value = static_cast<double>(k.int_value);
      }
      values[a.name].scalar = k;
    }
    r.args.emplace_back(a.name, k);
  }
  Result<api::TritonLibrary> lib = api::newLibraryWithTriton(device, r);
  if (!lib.ok()) return "compile: " + lib.error().message;
  auto queue = device.newCommandQueue();
  auto commands = queue->commandBuffer();
  auto encoder = commands->computeCommandEncoder();
  if (Status s = api::EncodeTritonLaunch(device, *encoder, lib.value(), m.grid,
                                         values);
      !s.ok()) {
    return "launch: " + s.error().message;
  }
  encoder->endEncoding();
  commands->commit();
  if (const CommandBufferError* e = commands->error())
    return "run: " + e->message;
  std::ostringstream diffs;
  for (const Manifest::Arg& a : m.args) {
    if (a.kind != "buffer") continue;
    const fs::path out = dir / (a.name + ".out.npy");
    const fs::path in = dir / (a.name + ".in.npy");
    Result<cli::NpyArray> want =
        cli::ReadNpy(fs::exists(out) ? out.string() : in.string());
    if (!want.ok()) return want.error().message;
    const auto* got = static_cast<const uint8_t*>(buffers[a.name]->contents());
    const int size = SizeOf(a.a);
    const size_t n = want.value().data.size() / size;
    const Tolerance tol = ToleranceFor(a.a);
    int bad = 0;
    for (size_t i = 0; i < n; ++i) {
      const double w =
          ElementAsDouble(a.a, want.value().data.data() + i * size);
      const double g = ElementAsDouble(a.a, got + i * size);
      const bool same = (std::isnan(w) && std::isnan(g)) || w == g ||
                        std::fabs(g - w) <= tol.atol + tol.rtol * std::fabs(w);
      if (!same && bad++ < 5) {
        diffs << a.name << "[" << i << "]: got " << g << ", Triton " << w
              << "\n";
      }
    }
    if (bad > 0)
      diffs << a.name << ": " << bad << " of " << n << " elements differ\n";
  }
  return diffs.str();
}

class ReplayTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string RunFrom(const Manifest& m, const fs::path& dir,
                      const std::string& file,
                      std::optional<std::string> source) {
    return testing::RunFrom(*Device::Create("m1").value(), m, dir, file,
                            std::move(source));
  }
};

TEST_P(ReplayTest, MatchesRealTriton) {
  const fs::path dir = kReference / GetParam();
  Result<Manifest> m = ReadManifest(dir / "manifest.txt");
  ASSERT_TRUE(m.ok()) << m.error().message;
  const std::string root = SuiteRoot(m.value().suite);
  if (root.empty()) {
    GTEST_SKIP()
        << "suite '" << m.value().suite << "' needs "
        << (m.value().suite == "tutorials"
                ? "MTLEMU_TRITON_TUTORIALS (triton's python/tutorials)"
                : "MTLEMU_LIGER_KERNEL (Liger-Kernel's src directory)");
  }
  const std::string py = root + "/" + m.value().file;
  // 1. The Python source.
  EXPECT_EQ(RunFrom(m.value(), dir, py, std::nullopt), "") << "from " << py;
  // 2. The TTIR mtlemu's front end writes, read back.
  api::TritonRequest r;
  r.file = py;
  r.kernel = m.value().kernel;
  r.module_paths = {root};
  r.num_warps = m.value().num_warps;
  for (const Manifest::Arg& a : m.value().args) {
    KernelArg k;
    if (a.kind == "buffer") {
      k.kind = KernelArg::Kind::kPointer;
      k.dtype = triton::frontend::DType::FromName(a.a);
    } else if (a.kind == "constexpr" && a.a == "str") {
      k.kind = KernelArg::Kind::kString;
      k.text = a.b == "-" ? "" : a.b;
    } else if (a.kind == "constexpr") {
      k = KernelArg::FromText(a.a == "none" ? "None" : a.b);
    } else if (a.kind == "none") {
      k = KernelArg::FromText("None");
    } else {
      k = KernelArg::FromText(a.a);
      if (a.kind == "float" && k.kind == KernelArg::Kind::kInt) {
        k.kind = KernelArg::Kind::kFloat;
        k.float_value = static_cast<double>(k.int_value);
      }
    }
    r.args.emplace_back(a.name, k);
  }
  Result<api::TritonKernel> compiled = api::CompileTriton(r);
  ASSERT_TRUE(compiled.ok()) << compiled.error().message;
  EXPECT_EQ(RunFrom(m.value(), dir, m.value().kernel + ".ttir",
                    compiled.value().ttir),
            "")
      << "from mtlemu's TTIR";
  // 3. Real Triton's TTIR, where it was kept.
  const fs::path ttir = dir / "kernel.ttir";
  if (fs::exists(ttir)) {
    std::ifstream in(ttir);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(RunFrom(m.value(), dir, ttir.string(), text.str()), "")
        << "from Triton's TTIR";
  }
}

// Every launch of every suite given, from four host threads at once on one
// Device, each thread in an order of its own (compiles, module cache, JIT
// and dispatches of different kernels overlapping), each launch by two of
// the threads: each matches real Triton as it does alone.
TEST(ReplayConcurrently, EveryLaunchFromFourThreadsOnOneDevice) {
  struct Case {
    std::string name;
    Manifest manifest;
    std::string py;
  };
  std::vector<Case> cases;
  for (const std::string& name : Cases()) {
    Result<Manifest> m = ReadManifest(kReference / name / "manifest.txt");
    ASSERT_TRUE(m.ok()) << m.error().message;
    const std::string root = SuiteRoot(m.value().suite);
    if (root.empty()) continue;
    cases.push_back({name, m.value(), root + "/" + m.value().file});
  }
  ASSERT_FALSE(cases.empty());
  std::shared_ptr<Device> device = Device::Create("m1").value();
  constexpr int kThreads = 4;
  std::vector<std::vector<std::string>> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < cases.size(); ++i) {
        // Threads 0 and 1 take the even cases, 2 and 3 the odd ones; the
        // odd threads go backwards, and each starts somewhere else.
        const size_t k = (i + t * cases.size() / kThreads) % cases.size();
        const size_t index = t % 2 == 0 ? k : cases.size() - 1 - k;
        if (index % 2 != static_cast<size_t>(t / 2)) continue;
        const Case& c = cases[index];
        std::string diff = RunFrom(*device, c.manifest, kReference / c.name,
                                   c.py, std::nullopt);
        if (!diff.empty()) failures[t].push_back(c.name + ": " + diff);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(failures[t].empty())
        << "thread " << t << ": " << failures[t].size() << " of "
        << cases.size() << " launches differ; the first: " << failures[t][0];
  }
}

INSTANTIATE_TEST_SUITE_P(Launches, ReplayTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n;
                           for (char c : info.param) {
                             n += std::isalnum(static_cast<unsigned char>(c))
                                      ? c
                                      : '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace mtlemu::testing
