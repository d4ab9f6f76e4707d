// Triton's dtypes as the front end sees them: signed and unsigned integers
// (int1 is Triton's bool, an unsigned 1-bit integer), the float formats,
// and pointers to them (pointer_type). Unlike the block IR's types (which
// are signless, as in MLIR), a dtype knows its signedness: it picks
// arith.divsi or arith.divui, extsi or extui, and the comparison predicates.
//
// DTypes are interned (compare by pointer). Names follow Triton's repr:
// "int32", "uint8", "fp16", "bf16", "fp32", "pointer<fp32>".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/triton/ir/types.h"

namespace mtlemu::triton::frontend {

class DType {
 public:
  enum class Kind { kInt, kUInt, kFloat, kPointer, kVoid };

  static const DType* Int(int bits);   // int8 .. int64
  static const DType* UInt(int bits);  // int1 (bool), uint8 .. uint64
  static const DType* Bool() { return UInt(1); }
  static const DType* Float(ir::FloatFormat format);
  static const DType* F32() { return Float(ir::FloatFormat::kF32); }
  static const DType* I32() { return Int(32); }
  static const DType* I64() { return Int(64); }
  // A pointer; `element` may itself be a pointer, or a block (a tensor
  // type: make_block_ptr's pointer to a block).
  static const DType* Pointer(const DType* element, int address_space = 1,
                              bool is_const = false);
  static const DType* BlockPointer(const DType* element,
                                   std::vector<int64_t> block_shape);
  static const DType* Void();

  // The dtype of a Triton name ("int32", "fp16", "float16", "bfloat16",
  // "bool", "float8e4nv", ...), or null.
  static const DType* FromName(std::string_view name);

  Kind kind() const { return kind_; }
  bool is_int() const { return kind_ == Kind::kInt || kind_ == Kind::kUInt; }
  bool is_int_signed() const { return kind_ == Kind::kInt; }
  bool is_int_unsigned() const { return kind_ == Kind::kUInt; }
  bool is_bool() const { return kind_ == Kind::kUInt && bits_ == 1; }
  bool is_floating() const { return kind_ == Kind::kFloat; }
  bool is_ptr() const { return kind_ == Kind::kPointer; }
  bool is_block_ptr() const { return is_ptr() && !block_shape_.empty(); }
  bool is_void() const { return kind_ == Kind::kVoid; }
  bool is_fp8() const { return is_floating() && bits_ == 8; }
  bool is_fp16() const { return is(ir::FloatFormat::kF16); }
  bool is_bf16() const { return is(ir::FloatFormat::kBF16); }
  bool is_fp32() const { return is(ir::FloatFormat::kF32); }
  bool is_fp64() const { return is(ir::FloatFormat::kF64); }
  bool is(ir::FloatFormat f) const { return is_floating() && format_ == f; }

  // Width in bits: integers and floats their own, pointers 64.
  int bits() const { return bits_; }
  ir::FloatFormat float_format() const { return format_; }
  // Triton's fp_mantissa_width (10 for fp16, 7 for bf16, 23 for fp32).
  int mantissa_bits() const;
  // Triton's exponent_bias (15 for fp16, 7 for float8e4nv).
  int exponent_bias() const;
  // Triton's dtype.kind() order: bool < integer < float.
  int kind_rank() const;

  // Pointer: what it points to; a block pointer's element and block shape.
  const DType* element() const { return element_; }
  int address_space() const { return address_space_; }
  bool is_const() const { return is_const_; }
  const std::vector<int64_t>& block_shape() const { return block_shape_; }

  // The block IR type (signless).
  const ir::Type* ToIr() const;
  // Triton's name: "int32", "uint1" is "int1", "fp16", "pointer<fp32>".
  std::string Name() const;

  DType(Kind kind, int bits, ir::FloatFormat format, const DType* element,
        int address_space, bool is_const, std::vector<int64_t> block_shape)
      : kind_(kind),
        bits_(bits),
        format_(format),
        element_(element),
        address_space_(address_space),
        is_const_(is_const),
        block_shape_(std::move(block_shape)) {}

 private:
  Kind kind_;
  int bits_;
  ir::FloatFormat format_;
  const DType* element_;
  int address_space_;
  bool is_const_;
  std::vector<int64_t> block_shape_;
};

// The dtype an IR type has when nothing says it is unsigned (i32 -> int32,
// i1 -> int1, !tt.ptr<f32> -> pointer<fp32>); null for tensors.
const DType* DTypeOfIr(const ir::Type* type);

}  // namespace mtlemu::triton::frontend
