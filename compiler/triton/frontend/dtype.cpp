#include "compiler/triton/frontend/dtype.h"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace mtlemu::triton::frontend {
namespace {

using Key = std::tuple<DType::Kind, int, ir::FloatFormat, const DType*, int,
                       bool, std::vector<int64_t>>;

const DType* Intern(DType::Kind kind, int bits, ir::FloatFormat format,
                    const DType* element, int address_space, bool is_const,
                    std::vector<int64_t> block_shape) {
  static std::mutex mutex;
  static auto* table = new std::map<Key, std::unique_ptr<DType>>;
  std::lock_guard<std::mutex> lock(mutex);
  Key key{kind, bits, format, element, address_space, is_const, block_shape};
  auto it = table->find(key);
  if (it != table->end()) return it->second.get();
  auto d = std::make_unique<DType>(kind, bits, format, element, address_space,
                                   is_const, std::move(block_shape));
  const DType* out = d.get();
  table->emplace(std::move(key), std::move(d));
  return out;
}

}  // namespace

const DType* DType::Int(int bits) {
  return Intern(Kind::kInt, bits, ir::FloatFormat::kF32, nullptr, 0, false, {});
}

const DType* DType::UInt(int bits) {
  return Intern(Kind::kUInt, bits, ir::FloatFormat::kF32, nullptr, 0, false,
                {});
}

const DType* DType::Float(ir::FloatFormat format) {
  return Intern(Kind::kFloat, ir::Type::Float(format)->bits(), format, nullptr,
                0, false, {});
}

const DType* DType::Pointer(const DType* element, int address_space,
                            bool is_const) {
  return Intern(Kind::kPointer, 64, ir::FloatFormat::kF32, element,
                address_space, is_const, {});
}

const DType* DType::BlockPointer(const DType* element,
                                 std::vector<int64_t> block_shape) {
  return Intern(Kind::kPointer, 64, ir::FloatFormat::kF32, element, 1, false,
                std::move(block_shape));
}

const DType* DType::Void() {
  return Intern(Kind::kVoid, 0, ir::FloatFormat::kF32, nullptr, 0, false, {});
}

const DType* DType::FromName(std::string_view name) {
  using F = ir::FloatFormat;
  static const std::map<std::string_view, const DType*> names = {
      {"int1", UInt(1)},
      {"bool", UInt(1)},
      {"int8", Int(8)},
      {"int16", Int(16)},
      {"int32", Int(32)},
      {"int64", Int(64)},
      {"uint8", UInt(8)},
      {"uint16", UInt(16)},
      {"uint32", UInt(32)},
      {"uint64", UInt(64)},
      {"fp16", Float(F::kF16)},
      {"float16", Float(F::kF16)},
      {"bf16", Float(F::kBF16)},
      {"bfloat16", Float(F::kBF16)},
      {"fp32", Float(F::kF32)},
      {"float32", Float(F::kF32)},
      {"fp64", Float(F::kF64)},
      {"float64", Float(F::kF64)},
      {"float8e4nv", Float(F::kF8E4M3FN)},
      {"fp8e4nv", Float(F::kF8E4M3FN)},
      {"float8e5", Float(F::kF8E5M2)},
      {"fp8e5", Float(F::kF8E5M2)},
      {"float8e4b8", Float(F::kF8E4M3FNUZ)},
      {"fp8e4b8", Float(F::kF8E4M3FNUZ)},
      {"float8e5b16", Float(F::kF8E5M2FNUZ)},
      {"fp8e5b16", Float(F::kF8E5M2FNUZ)},
      {"float8e4b15", Float(F::kF8E4M3B11FNUZ)},
      {"fp8e4b15", Float(F::kF8E4M3B11FNUZ)},
      {"void", Void()},
  };
  auto it = names.find(name);
  return it == names.end() ? nullptr : it->second;
}

int DType::mantissa_bits() const {
  if (!is_floating()) return 0;
  return ir::FloatEncodingOf(format_).mantissa_bits;
}

int DType::exponent_bias() const {
  if (!is_floating()) return 0;
  return ir::FloatEncodingOf(format_).bias;
}

int DType::kind_rank() const {
  if (is_bool()) return 0;
  if (is_int()) return 1;
  return 2;
}

const ir::Type* DType::ToIr() const {
  switch (kind_) {
    case Kind::kInt:
    case Kind::kUInt:
      return ir::Type::Int(bits_);
    case Kind::kFloat:
      return ir::Type::Float(format_);
    case Kind::kPointer:
      if (!block_shape_.empty()) {
        return ir::Type::Pointer(
            ir::Type::Tensor(block_shape_, element_->ToIr()), address_space_);
      }
      return ir::Type::Pointer(element_->ToIr(), address_space_);
    case Kind::kVoid:
      return nullptr;
  }
  return nullptr;
}

std::string DType::Name() const {
  switch (kind_) {
    case Kind::kInt:
      return "int" + std::to_string(bits_);
    case Kind::kUInt:
      return bits_ == 1 ? "int1" : "uint" + std::to_string(bits_);
    case Kind::kFloat:
      switch (format_) {
        case ir::FloatFormat::kF16:
          return "fp16";
        case ir::FloatFormat::kBF16:
          return "bf16";
        case ir::FloatFormat::kF32:
          return "fp32";
        case ir::FloatFormat::kF64:
          return "fp64";
        case ir::FloatFormat::kF8E4M3FN:
          return "fp8e4nv";
        case ir::FloatFormat::kF8E5M2:
          return "fp8e5";
        case ir::FloatFormat::kF8E4M3FNUZ:
          return "fp8e4b8";
        case ir::FloatFormat::kF8E5M2FNUZ:
          return "fp8e5b16";
        case ir::FloatFormat::kF8E4M3B11FNUZ:
          return "fp8e4b15";
      }
      return "fp?";
    case Kind::kPointer: {
      if (!block_shape_.empty()) {
        std::string s = "pointer<block<";
        for (size_t i = 0; i < block_shape_.size(); ++i) {
          s += (i ? ", " : "") + std::to_string(block_shape_[i]);
        }
        return s + ">, " + element_->Name() + ">";
      }
      return "pointer<" + element_->Name() + ">";
    }
    case Kind::kVoid:
      return "void";
  }
  return "?";
}

const DType* DTypeOfIr(const ir::Type* type) {
  if (type == nullptr) return nullptr;
  switch (type->kind()) {
    case ir::TypeKind::kInt:
      return type->bits() == 1 ? DType::Bool() : DType::Int(type->bits());
    case ir::TypeKind::kFloat:
      return DType::Float(type->float_format());
    case ir::TypeKind::kPointer: {
      const ir::Type* p = type->pointee();
      if (p->IsTensor()) {
        return DType::BlockPointer(DTypeOfIr(p->element()), p->shape());
      }
      return DType::Pointer(DTypeOfIr(p), type->address_space());
    }
    default:
      return nullptr;
  }
}

}  // namespace mtlemu::triton::frontend
