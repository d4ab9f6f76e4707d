// The text form of the block IR: TTIR as Triton 3.x prints it, each op in
// its own syntax (tt.load %p, %m : tensor<...>; scf.for ... iter_args(...);
// "tt.reduce"(...) <{axis = 0 : i32}> ({...}) in MLIR's generic form, as
// Triton prints reductions). compiler/triton/ttir/reader.h reads it back.
//
// Values are named as MLIR names them: from Value::name() when set, made
// unique within their region and the regions around it with _0, _1, ...
// suffixes (one counter per function); an unnamed constant as MLIR's
// arith.constant names it (%c32_i32, %cst, %true); other unnamed values
// %0, %1, ... and unnamed block arguments %arg0, %arg1, ...
//
// The printer never fails: IR that breaks an op's rules (wrong operand
// counts, missing attributes) prints in MLIR's generic form, and a value
// that is not visible where it is used prints as <<UNKNOWN SSA VALUE>>,
// so broken IR can be looked at (verifier.h says what is wrong with it).
#pragma once

#include <string>

#include "compiler/triton/ir/ir.h"

namespace mtlemu::triton::ir {

struct PrintOptions {
  // Write loc(...) after each operation, function and function argument.
  bool locations = true;
  // Write locations as #loc, #loc1, ... aliases defined after the module,
  // as Triton does; else inline, loc("kernel.py":12:8).
  bool location_aliases = true;
};

std::string PrintModule(const Module& module, const PrintOptions& options = {});
std::string PrintFunction(const Function& function,
                          const PrintOptions& options = {});
// One operation with its regions, its values named as PrintFunction names
// them in the function around it. For debugging.
std::string PrintOperation(const Operation& op,
                           const PrintOptions& options = {});

// An attribute as TTIR writes it ("16 : i32", "dense<0.000000e+00> :
// tensor<32xf32>", "array<i32: 1, 0>", "\"msg\"").
std::string PrintAttribute(const Attribute& attr);

}  // namespace mtlemu::triton::ir
