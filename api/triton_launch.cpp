#include "api/triton_launch.h"

#include <cstring>
#include <vector>

#include "api/triton_print.h"
#include "isa/numeric.h"

namespace mtlemu::api {
namespace {

using triton::frontend::KernelArg;

template <class T>
std::vector<uint8_t> Bytes(T v) {
  std::vector<uint8_t> out(sizeof(T));
  std::memcpy(out.data(), &v, sizeof(T));
  return out;
}

// `a` as the bytes of a value of scalar IR type `t`.
Result<std::vector<uint8_t>> Pack(const std::string& name, const KernelArg& a,
                                  const triton::ir::Type* t) {
  const bool number = a.kind == KernelArg::Kind::kInt ||
                      a.kind == KernelArg::Kind::kFloat ||
                      a.kind == KernelArg::Kind::kBool;
  if (!number) {
    return Error{"argument '" + name + "' needs a number (" + t->ToString() +
                 "), got " + a.Describe()};
  }
  const double f = a.kind == KernelArg::Kind::kFloat
                       ? a.float_value
                       : static_cast<double>(a.int_value);
  if (t->IsInt()) {
    if (a.kind == KernelArg::Kind::kFloat) {
      return Error{"argument '" + name + "' is an integer (" + t->ToString() +
                   "), got " + a.Describe()};
    }
    const int64_t i = a.int_value;
    switch (t->bits()) {
      case 1:
        return Bytes<uint8_t>(i != 0);
      case 8:
        return Bytes<int8_t>(static_cast<int8_t>(i));
      case 16:
        return Bytes<int16_t>(static_cast<int16_t>(i));
      case 32:
        return Bytes<int32_t>(static_cast<int32_t>(i));
      default:
        return Bytes<int64_t>(i);
    }
  }
  if (t->IsFloat()) {
    switch (t->float_format()) {
      case triton::ir::FloatFormat::kF32:
        return Bytes<float>(static_cast<float>(f));
      case triton::ir::FloatFormat::kF16:
        return Bytes<uint16_t>(isa::DoubleToHalfBits(f));
      case triton::ir::FloatFormat::kBF16:
        return Bytes<uint16_t>(isa::DoubleToBFloatBits(f));
      default:
        break;
    }
  }
  return Error{"argument '" + name + "' has type " + t->ToString() +
               ", which a launch cannot pass"};
}

}  // namespace

Status EncodeTritonLaunch(Device& device, ComputeCommandEncoder& encoder,
                          const TritonLibrary& kernel, MTLSize grid,
                          const std::map<std::string, TritonArgValue>& args,
                          std::shared_ptr<Buffer>* print_log) {
  std::shared_ptr<ComputePipelineState> pipeline = kernel.pipeline;
  if (!pipeline) {
    Result<std::shared_ptr<Function>> function =
        kernel.library->newFunction(kernel.kernel.function);
    if (!function.ok()) return function.error();
    Result<std::shared_ptr<ComputePipelineState>> made =
        device.newComputePipelineState(function.value());
    if (!made.ok()) return made.error();
    pipeline = std::move(made).value();
  }
  encoder.setComputePipelineState(pipeline);
  for (const triton::lower::LoweredArg& a : kernel.kernel.args) {
    auto it = args.find(a.name);
    if (it == args.end()) {
      return Error{"kernel '" + kernel.kernel.function + "' needs argument '" +
                   a.name + "' (" + a.type->ToString() + ")"};
    }
    const TritonArgValue& v = it->second;
    if (a.is_pointer) {
      if (!v.buffer) {
        return Error{"argument '" + a.name + "' is a pointer (" +
                     a.type->ToString() + "): give it a buffer"};
      }
      if (Status s = encoder.setBuffer(v.buffer, v.offset, a.buffer_index);
          !s.ok()) {
        return Error{"argument '" + a.name + "': " + s.error().message};
      }
      continue;
    }
    if (v.buffer) {
      return Error{"argument '" + a.name + "' is a " + a.type->ToString() +
                   " value, not a buffer"};
    }
    Result<std::vector<uint8_t>> bytes = Pack(a.name, v.scalar, a.type);
    if (!bytes.ok()) return bytes.error();
    if (Status s = encoder.setBytes(bytes.value().data(), bytes.value().size(),
                                    a.buffer_index);
        !s.ok()) {
      return Error{"argument '" + a.name + "': " + s.error().message};
    }
  }
  if (kernel.kernel.print_log_index >= 0) {
    std::shared_ptr<Buffer> log = print_log ? *print_log : nullptr;
    if (!log) {
      Result<std::shared_ptr<Buffer>> made =
          newPrintLog(device, print_log ? kDefaultPrintLogRecords : 0);
      if (!made.ok()) return made.error();
      log = std::move(made).value();
      if (print_log) *print_log = log;
    }
    if (Status s = encoder.setBuffer(log, 0, kernel.kernel.print_log_index);
        !s.ok()) {
      return Error{"the print log: " + s.error().message};
    }
  }
  const MTLSize threads{
      static_cast<uint64_t>(kernel.kernel.threads_per_threadgroup), 1, 1};
  return encoder.dispatchThreadgroups(grid, threads);
}

}  // namespace mtlemu::api
