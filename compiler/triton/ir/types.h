// The types of the block IR, as TTIR writes them: signless integers (i1 ..
// i64), floats (f16, bf16, f32, f64 and the fp8 formats), pointers
// (!tt.ptr<f32>), tensors of scalars or pointers (tensor<32x32xf32>,
// tensor<128x!tt.ptr<f16>>), block pointers (!tt.ptr<tensor<64x64xf16>>)
// and tensor descriptors (!tt.tensordesc<tensor<64x64xf16>>).
//
// Types are interned: each distinct type exists once, for the life of the
// process, so they compare by pointer and are passed as `const Type*`.
// Signedness is not part of a type (as in MLIR): operations say it
// (arith.divsi / arith.divui); the front end tracks Triton's dtypes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mtlemu::triton::ir {

enum class TypeKind { kInt, kFloat, kPointer, kTensor, kTensorDesc };

enum class FloatFormat {
  kF16,
  kBF16,
  kF32,
  kF64,
  kF8E4M3FN,       // f8E4M3FN (Triton's float8e4nv)
  kF8E5M2,         // f8E5M2 (float8e5)
  kF8E4M3FNUZ,     // float8e4b8
  kF8E5M2FNUZ,     // float8e5b16
  kF8E4M3B11FNUZ,  // float8e4b15 (see FloatEncodingOf)
};

// How a float format encodes non-finite values: IEEE (an all-ones exponent
// is infinity or NaN), FN (no infinities; all-ones exponent and mantissa is
// NaN) or FNUZ (no infinities, no negative zero; the negative-zero pattern
// is NaN).
enum class NonFinite { kIeee, kFn, kFnuz };

// The fields of a float format: the one table of their widths, biases and
// non-finite values, for constants here and for the lowering's
// conversions.
struct FloatEncoding {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  NonFinite non_finite;
};
// Triton's float8e4b15 is printed as MLIR's f8E4M3B11FNUZ, but Triton
// defines it with bias 15 and S.1111.111 as NaN (tl.float8e4b15's
// exponent_bias, and its conversions on NVIDIA GPUs): that is the encoding
// given here.
FloatEncoding FloatEncodingOf(FloatFormat format);

class Type {
 public:
  // The interned types.
  static const Type* Int(int bits);  // 1, 8, 16, 32, 64
  static const Type* I1() { return Int(1); }
  static const Type* I32() { return Int(32); }
  static const Type* I64() { return Int(64); }
  static const Type* Float(FloatFormat format);
  static const Type* F32() { return Float(FloatFormat::kF32); }
  static const Type* Pointer(const Type* pointee, int address_space = 1);
  static const Type* Tensor(std::vector<int64_t> shape, const Type* element);
  static const Type* TensorDesc(const Type* block_type);

  TypeKind kind() const { return kind_; }
  bool IsInt() const { return kind_ == TypeKind::kInt; }
  bool IsInt(int bits) const { return IsInt() && bits_ == bits; }
  bool IsFloat() const { return kind_ == TypeKind::kFloat; }
  bool IsPointer() const { return kind_ == TypeKind::kPointer; }
  bool IsTensor() const { return kind_ == TypeKind::kTensor; }
  bool IsTensorDesc() const { return kind_ == TypeKind::kTensorDesc; }
  // A pointer to a tensor (tt.make_tensor_ptr's result).
  bool IsBlockPointer() const { return IsPointer() && pointee_->IsTensor(); }
  // Int, float or pointer (not a tensor).
  bool IsScalar() const { return IsInt() || IsFloat() || IsPointer(); }

  // Int and float: the width in bits (bf16 and f16 are 16, fp8 8).
  int bits() const { return bits_; }
  FloatFormat float_format() const { return format_; }
  // Pointer: the pointee and the address space (1: global).
  const Type* pointee() const { return pointee_; }
  int address_space() const { return address_space_; }
  // Tensor: the shape and the element type (a scalar or a pointer);
  // TensorDesc: element() is the block's tensor type.
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  const Type* element() const { return element_; }
  int64_t NumElements() const;

  // The element type of a tensor, or the type itself.
  const Type* ScalarType() const { return IsTensor() ? element_ : this; }
  // This type's element type in `shape` (a scalar type when shape is empty).
  const Type* WithShape(const std::vector<int64_t>& shape) const;
  // The same shape (or scalar-ness) with another element type.
  const Type* WithElement(const Type* element) const;

  // TTIR's spelling: i32, bf16, !tt.ptr<f32>, tensor<32x1x!tt.ptr<f16>>.
  std::string ToString() const;

  Type(TypeKind kind, int bits, FloatFormat format, const Type* pointee,
       int address_space, std::vector<int64_t> shape, const Type* element)
      : kind_(kind),
        bits_(bits),
        format_(format),
        pointee_(pointee),
        address_space_(address_space),
        shape_(std::move(shape)),
        element_(element) {}

 private:
  TypeKind kind_;
  int bits_ = 0;
  FloatFormat format_ = FloatFormat::kF32;
  const Type* pointee_ = nullptr;
  int address_space_ = 0;
  std::vector<int64_t> shape_;
  const Type* element_ = nullptr;
};

// TTIR's name of a float format ("f16", "bf16", "f8E4M3FN", ...).
const char* FloatFormatName(FloatFormat format);

// The encoding of `value` in `format` (the low bits() bits), rounded to
// nearest even. Formats without infinities (the FN and FNUZ fp8 formats)
// give NaN for infinities and for values past their largest finite one, as
// LLVM's APFloat does.
uint64_t FloatToBits(double value, FloatFormat format);
// The value of an encoding (exact: every format's values are doubles).
double FloatFromBits(uint64_t bits, FloatFormat format);
// `value` rounded to `format` (FloatFromBits(FloatToBits(value))).
double RoundToFloat(double value, FloatFormat format);

}  // namespace mtlemu::triton::ir
