// Runs Triton kernels from the test kernel files for tests: arguments by
// name (buffers from vectors, numbers), compile (front end, lowering, MSL
// compiler), launch over a grid of programs, read buffers back.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "api/triton_launch.h"
#include "api/triton_print.h"
#include "emu/device/command_buffer.h"
#include "isa/numeric.h"

namespace mtlemu::testing {

inline std::string TritonKernelFile(const std::string& name) {
  return std::string(MTLEMU_TEST_DATA_DIR) + "/compiler/triton/kernels/" + name;
}

class TritonHarness {
 public:
  explicit TritonHarness(std::string file, std::string chip = "m1")
      : file_(std::move(file)), device_(Device::Create(chip).value()) {}

  // A pointer argument: a buffer holding `data`, its element `dtype`.
  template <class T>
  std::shared_ptr<Buffer> Buffer(const std::string& name, const char* dtype,
                                 const std::vector<T>& data) {
    auto b = device_->newBuffer(data.data(), data.size() * sizeof(T)).value();
    values_[name].buffer = b;
    triton::frontend::KernelArg a;
    a.kind = triton::frontend::KernelArg::Kind::kPointer;
    a.dtype = triton::frontend::DType::FromName(dtype);
    args_.emplace_back(name, a);
    return b;
  }
  // Any other argument, as the command line spells it ("128", "fp16").
  void Arg(const std::string& name, const std::string& text) {
    triton::frontend::KernelArg a = triton::frontend::KernelArg::FromText(text);
    values_[name].scalar = a;
    args_.emplace_back(name, a);
  }
  void Arg(const std::string& name, int64_t v) { Arg(name, std::to_string(v)); }

  // Compiles and runs; "" or the error (compile error or fault). The
  // kernel then runs again from the TTIR the front end wrote (read back by
  // the TTIR reader), on the same inputs, and must give the same bytes.
  std::string Run(const std::string& kernel, MTLSize grid, int num_warps = 4) {
    api::TritonRequest r;
    r.file = file_;
    r.kernel = kernel;
    r.args = args_;
    r.num_warps = num_warps;
    if (const char* dir = std::getenv("MTLEMU_TEST_DUMP_DIR")) {
      // For debugging the lowering: each kernel's TTIR and MSL.
      Result<api::TritonKernel> k = api::CompileTriton(r);
      if (k.ok()) {
        std::ofstream(std::string(dir) + "/" + kernel + ".ttir")
            << k.value().ttir;
        std::ofstream(std::string(dir) + "/" + kernel + ".metal")
            << k.value().msl;
      }
    }
    std::map<std::string, std::vector<uint8_t>> inputs = Snapshot();
    if (std::string e = RunRequest(r, grid); !e.empty()) return e;
    if (!ttir_round_trip_) return "";
    std::map<std::string, std::vector<uint8_t>> outputs = Snapshot();
    const std::vector<std::string> printed = printed_;
    Restore(inputs);
    api::TritonRequest t = r;
    t.file = kernel + ".ttir";
    t.source = compiled_.ttir;
    t.args.clear();
    const api::TritonKernel from_python = compiled_;
    if (std::string e = RunRequest(t, grid); !e.empty()) {
      return "from the front end's TTIR: " + e;
    }
    std::map<std::string, std::vector<uint8_t>> again = Snapshot();
    compiled_ = from_python;
    for (const auto& [name, bytes] : outputs) {
      if (again[name] != bytes) {
        return "the TTIR round trip gives other results in '" + name + "'";
      }
    }
    if (printed_ != printed) {
      return "the TTIR round trip prints other lines (tl.device_print)";
    }
    return "";
  }
  // For kernels whose results depend on the order of atomics.
  void SkipTtirRoundTrip() { ttir_round_trip_ = false; }
  const api::TritonKernel& compiled() const { return compiled_; }
  // The last run's tl.device_print lines.
  const std::vector<std::string>& printed() const { return printed_; }

 private:
  std::string RunRequest(const api::TritonRequest& r, MTLSize grid) {
    Result<api::TritonLibrary> lib = api::newLibraryWithTriton(*device_, r);
    if (!lib.ok()) return lib.error().message;
    compiled_ = lib.value().kernel;
    auto queue = device_->newCommandQueue();
    auto commands = queue->commandBuffer();
    auto encoder = commands->computeCommandEncoder();
    std::shared_ptr<mtlemu::Buffer> print_log;
    Status s = api::EncodeTritonLaunch(*device_, *encoder, lib.value(), grid,
                                       values_, &print_log);
    if (!s.ok()) return s.error().message;
    encoder->endEncoding();
    commands->commit();
    printed_.clear();
    if (print_log) printed_ = api::PrintedLines(compiled_, *print_log).lines;
    if (const CommandBufferError* e = commands->error()) return e->message;
    return "";
  }
  std::map<std::string, std::vector<uint8_t>> Snapshot() const {
    std::map<std::string, std::vector<uint8_t>> out;
    for (const auto& [name, v] : values_) {
      if (!v.buffer) continue;
      const auto* p = static_cast<const uint8_t*>(v.buffer->contents());
      out[name].assign(p, p + v.buffer->length());
    }
    return out;
  }
  void Restore(const std::map<std::string, std::vector<uint8_t>>& saved) {
    for (const auto& [name, bytes] : saved) {
      std::memcpy(values_.at(name).buffer->contents(), bytes.data(),
                  bytes.size());
    }
  }
  bool ttir_round_trip_ = true;
  std::string file_;
  std::shared_ptr<Device> device_;
  std::map<std::string, api::TritonArgValue> values_;
  std::vector<std::pair<std::string, triton::frontend::KernelArg>> args_;
  api::TritonKernel compiled_;
  std::vector<std::string> printed_;
};

template <class T>
std::vector<T> Read(const std::shared_ptr<Buffer>& b) {
  std::vector<T> out(b->length() / sizeof(T));
  std::memcpy(out.data(), b->contents(), b->length());
  return out;
}

inline std::vector<float> RandomFloats(size_t n, uint32_t seed, float lo = -2,
                                       float hi = 2) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

inline std::vector<uint16_t> ToHalf(const std::vector<float>& v) {
  std::vector<uint16_t> out;
  for (float x : v) out.push_back(isa::FloatToHalfBits(x));
  return out;
}
inline std::vector<uint16_t> ToBFloat(const std::vector<float>& v) {
  std::vector<uint16_t> out;
  for (float x : v) out.push_back(isa::FloatToBFloatBits(x));
  return out;
}
inline float HalfToFloat(uint16_t h) { return isa::HalfBitsToFloat(h); }
inline float BFloatToFloat(uint16_t h) { return isa::BFloatBitsToFloat(h); }

}  // namespace mtlemu::testing
