// Floating-point contraction: a multiply used by an add or subtract, both
// allowed to contract (`contract` fast-math flag: MSL's fast
// math, Metal's default, compiles with -ffp-contract=fast), becomes one
// fused multiply-add, as Metal's compiler emits it. Clang leaves such pairs
// to the target's instruction selection; the back end here selects one
// instruction per IR operation, so they are fused in the IR. With fast
// math off, clang already emits llvm.fmuladd within an expression.
#pragma once

namespace llvm {
class Function;
}  // namespace llvm

namespace mtlemu::air {

// a * b + c, c + a * b -> fma(a, b, c); a * b - c -> fma(a, b, -c);
// c - a * b -> fma(-a, b, c). Returns whether anything changed.
bool ContractMultiplyAdds(llvm::Function& function);

}  // namespace mtlemu::air
