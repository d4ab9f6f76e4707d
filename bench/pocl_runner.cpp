// The PoCL side of peer_bench.cpp, in a process of its own: PoCL brings
// Clang 15 and LLVM 15, whose symbols collide with mtlemu's Clang 16 in one
// process (clBuildProgram crashes), so this program links no LLVM. Runs one
// case of peer_cases.h through the OpenCL ICD loader on PoCL's CPU device,
// best of N by profiling events; prints "SECONDS DEVICE-NAME" on stdout
// and writes the output buffer's floats, raw, to OUT.
//
//   mtlemu_pocl_runner CASE SCALE RUNS OUT   (CASE: its index in PeerCases)
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/peer_cases.h"
#include "bench/peer_kernels.h"

namespace mtlemu::bench {
namespace {

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "pocl_runner: %s\n", message.c_str());
  std::exit(1);
}

void Check(cl_int err, const char* what) {
  if (err != CL_SUCCESS) {
    Fail(std::string(what) + " failed with OpenCL error " +
         std::to_string(err));
  }
}

struct OpenCl {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_program program = nullptr;
  std::string device_name;
};

std::string PlatformName(cl_platform_id p) {
  char name[256] = {};
  clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
  return name;
}

// PoCL's platform and CPU device, and the program built; an error says what
// is missing (the ICD loader finds PoCL through /etc/OpenCL/vendors).
OpenCl OpenPocl() {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) {
    Fail("no OpenCL platform: install pocl-opencl-icd (scripts/setup.sh does)");
  }
  std::vector<cl_platform_id> platforms(count);
  Check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  cl_platform_id platform = nullptr;
  for (cl_platform_id p : platforms) {
    if (PlatformName(p).find("Portable Computing Language") !=
        std::string::npos) {
      platform = p;
    }
  }
  if (platform == nullptr) Fail("PoCL is not among the OpenCL platforms");
  OpenCl cl;
  Check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_CPU, 1, &cl.device, nullptr),
        "clGetDeviceIDs");
  char name[256] = {};
  clGetDeviceInfo(cl.device, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
  cl.device_name = name;
  cl_int err = CL_SUCCESS;
  cl.context = clCreateContext(nullptr, 1, &cl.device, nullptr, nullptr, &err);
  Check(err, "clCreateContext");
  cl.queue = clCreateCommandQueue(cl.context, cl.device,
                                  CL_QUEUE_PROFILING_ENABLE, &err);
  Check(err, "clCreateCommandQueue");
  const char* source = kPeerOpenCl;
  cl.program = clCreateProgramWithSource(cl.context, 1, &source, nullptr, &err);
  Check(err, "clCreateProgramWithSource");
  if (clBuildProgram(cl.program, 1, &cl.device, "", nullptr, nullptr) !=
      CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(cl.program, cl.device, CL_PROGRAM_BUILD_LOG, 0,
                          nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(cl.program, cl.device, CL_PROGRAM_BUILD_LOG, size,
                          log.data(), nullptr);
    Fail("PoCL could not build the OpenCL C kernels:\n" + log);
  }
  return cl;
}

cl_ulong ProfilingTime(cl_event event, cl_profiling_info which) {
  cl_ulong t = 0;
  Check(clGetEventProfilingInfo(event, which, sizeof t, &t, nullptr),
        "clGetEventProfilingInfo");
  return t;
}

// Runs `c` `runs` times (fresh buffers each time); the best kernel time in
// seconds, and the output of the first run in `output`.
double Run(OpenCl& cl, const PeerCase& c, int runs,
           std::vector<float>& output) {
  cl_int err = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(cl.program, c.kernel, &err);
  Check(err, "clCreateKernel");
  double best = 1e30;
  for (int run = 0; run < runs; ++run) {
    std::vector<cl_mem> buffers;
    for (const std::vector<float>& b : c.buffers) {
      buffers.push_back(
          clCreateBuffer(cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                         b.size() * 4, const_cast<float*>(b.data()), &err));
      Check(err, "clCreateBuffer");
    }
    cl_uint arg = 0;
    for (cl_mem& m : buffers) {
      Check(clSetKernelArg(kernel, arg++, sizeof(cl_mem), &m),
            "clSetKernelArg");
    }
    for (const std::vector<uint8_t>& value : c.values) {
      Check(clSetKernelArg(kernel, arg++, value.size(), value.data()),
            "clSetKernelArg");
    }
    cl_event done = nullptr;
    Check(clEnqueueNDRangeKernel(cl.queue, kernel, 2, nullptr, c.grid, c.group,
                                 0, nullptr, &done),
          "clEnqueueNDRangeKernel");
    Check(clWaitForEvents(1, &done), "clWaitForEvents");
    const cl_ulong start = ProfilingTime(done, CL_PROFILING_COMMAND_START);
    const cl_ulong end = ProfilingTime(done, CL_PROFILING_COMMAND_END);
    best = std::min(best, static_cast<double>(end - start) * 1e-9);
    clReleaseEvent(done);
    if (run == 0) {
      output.resize(c.buffers[c.output].size());
      Check(clEnqueueReadBuffer(cl.queue, buffers[c.output], CL_TRUE, 0,
                                output.size() * 4, output.data(), 0, nullptr,
                                nullptr),
            "clEnqueueReadBuffer");
    }
    for (cl_mem m : buffers) clReleaseMemObject(m);
  }
  clReleaseKernel(kernel);
  return best;
}

int Main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s CASE SCALE RUNS OUT\n", argv[0]);
    return 2;
  }
  // CASE: the case's index in PeerCases(SCALE).
  const size_t index = std::strtoul(argv[1], nullptr, 10);
  const double scale = std::atof(argv[2]);
  const int runs = std::max(1, std::atoi(argv[3]));
  const std::vector<PeerCase> cases = PeerCases(scale);
  if (index < cases.size()) {
    const PeerCase& c = cases[index];
    OpenCl cl = OpenPocl();
    std::vector<float> output;
    const double seconds = Run(cl, c, runs, output);
    FILE* out = std::fopen(argv[4], "wb");
    if (out == nullptr ||
        std::fwrite(output.data(), 4, output.size(), out) != output.size() ||
        std::fclose(out) != 0) {
      Fail(std::string("cannot write ") + argv[4]);
    }
    std::printf("%.9f %s\n", seconds, cl.device_name.c_str());
    return 0;
  }
  Fail(std::string("no case ") + argv[1]);
}

}  // namespace
}  // namespace mtlemu::bench

int main(int argc, char** argv) { return mtlemu::bench::Main(argc, argv); }
