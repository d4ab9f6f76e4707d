// MSL spellings of the block IR's scalar world: types, constants, and the
// expression each elementwise op computes for one element.
//
// Integers are held in unsigned MSL types (uchar, ushort, uint, ulong) so
// that +, - and * wrap as Triton's do (signed overflow is undefined in
// MSL); ops with a signed meaning (arith.divsi, cmpi slt, extsi, sitofp,
// shrsi, maxsi...) read their operands through the signed type of the same
// width. i1 is bool; pointers are `device T*`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "compiler/triton/ir/ir.h"

namespace mtlemu::triton::lower {

// The MSL type of a scalar IR type: bool, uchar, ushort, uint, ulong, half,
// bfloat, float, device float*; fp8 formats are their bytes (uchar),
// converted in software. Errors for f64 (Apple GPUs have none) and for
// what MSL cannot hold.
Result<std::string> MslType(const ir::Type* scalar);
// The signed MSL type of an integer width (char, short, int, long).
std::string SignedType(int bits);
// The unsigned MSL type of an integer width (bool for 1).
std::string UnsignedType(int bits);

// A constant of scalar type `type` from an attribute value (int64 bit
// pattern or double).
std::string IntLiteral(int64_t value, const ir::Type* type);
std::string FloatLiteral(double value, const ir::Type* type);

// The expression of elementwise op `op` on one element, its operands'
// expressions given; nullopt when `op` is not elementwise. Errors: ops the
// lowering cannot express (fp8 conversions, unknown libdevice symbols).
Result<std::optional<std::string>> ElementExpr(
    const ir::Operation& op, const std::vector<std::string>& operands);

// An fp8 value (its byte, expression `e` of fp8 type `t`) as a float, and
// a float expression rounded to fp8 type `t` (to nearest even, or toward
// zero), through MslHelpers()'s functions and the encoding table
// ir::FloatEncodingOf.
std::string Fp8ToFloat(const std::string& e, const ir::Type* t);
std::string FloatToFp8(const std::string& e, const ir::Type* t,
                       bool toward_zero);

// Helper functions the expressions may call (erf, log1p, expm1...): MSL
// source to put before the kernel.
std::string MslHelpers();

}  // namespace mtlemu::triton::lower
