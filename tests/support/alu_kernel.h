// Runs one ALU instruction ("add.i8", "sqrt.f16", "cvt_sat.u8.f32", ...)
// over many threads of inputs, for the tests of the arithmetic, bit,
// comparison, select, conversion and math opcodes; and the plain C++
// references those tests compare the emulator against: exact integer
// arithmetic in 128 bits, and float formats decoded and rounded here,
// independently of the emulator's own conversions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "isa/opcode.h"
#include "isa/scalar_type.h"

namespace mtlemu::testing {

using isa::Opcode;
using isa::ScalarType;
using Int128 = __int128;
using Operands = std::vector<uint64_t>;  // one thread's source operands

// --- the one-instruction kernel ----------------------------------------------

// What a one-instruction kernel reads and writes, from the instruction's
// mnemonic and type suffixes.
struct AluOp {
  std::string text;  // "add.f32", "cvt.f16.i32", ...
  Opcode op = Opcode::kMov;
  ScalarType type = ScalarType::kUInt;    // .T; the destination type of cvt
  ScalarType type2 = ScalarType::kUInt;   // cvt's source type
  std::vector<ScalarType> sources;        // the type of each source operand
  ScalarType result = ScalarType::kUInt;  // what the destination holds
};

// Parses `text`; fails for anything but one opcode of an ALU or conversion
// shape with its type suffixes.
Result<AluOp> ParseAluOp(std::string_view text);

// The float-only unary and binary functions (sqrt, floor, atan2, ldexp,
// ...): math_test.cpp covers these, alu_test.cpp every other ALU opcode,
// convert_test.cpp cvt and cvt_sat.
bool IsFloatMathOpcode(Opcode op);
// An opcode of an ALU shape (unary, binary, ternary, compare, test,
// select) that is not a SIMD- or quad-group function.
bool IsAluOpcode(Opcode op);
// "add.i8" for every type `op` allows, in ScalarType order.
std::vector<std::string> InstructionsAtEveryType(Opcode op);

struct AluRunOptions {
  // Odd threads branch around the instruction (bnz), so it runs with half
  // of each SIMD group's lanes inactive; their destination keeps
  // kAluSentinel.
  bool skip_odd_threads = false;
  uint32_t threadgroup_width = 64;
};

// What an untouched destination register (pair) holds.
inline constexpr uint64_t kAluSentinel = 0xa5a5a5a5'5e5e5e5eull;

// The kernel RunAlu dispatches: each thread loads its sources from buffers
// 0.. with ld.device.<type>, runs the instruction and stores its whole
// destination register (pair) as u32 (u64) to buffer 3.
std::string AluKernelText(const AluOp& op, bool skip_odd_threads);

// Runs `op_text` on threads.size() threads; threads[i][k] is source k of
// thread i as the bits of that source's type (higher bits are ignored).
// Returns each thread's destination register contents: 32 bits, or the
// pair as 64 bits (low register first) for a 64-bit destination.
Result<std::vector<uint64_t>> RunAlu(std::string_view op_text,
                                     const std::vector<Operands>& threads,
                                     const AluRunOptions& options = {});

// --- checking ----------------------------------------------------------------

// What a destination register must hold: `bits` (or `alt`, where two
// results are allowed), or any NaN of the result type.
struct AluWant {
  uint64_t bits = 0;
  bool any_nan = false;
  bool has_alt = false;
  uint64_t alt = 0;
};

// The register bits a result of type t is compared on: the low 16 for half
// and bfloat; all 32 (or 64) otherwise, so narrow integers must be sign- or
// zero-extended.
uint64_t ResultMask(ScalarType t);
bool Matches(ScalarType result, uint64_t got, const AluWant& want);
std::string Hex(uint64_t v);

// Runs `op` on `inputs` and checks every thread against `reference`
// (gtest failures, at most 10 listed); with `skip_odd_threads`, odd
// threads must keep kAluSentinel instead.
void CheckAlu(const AluOp& op, const std::vector<Operands>& inputs,
              const std::function<AluWant(const Operands&)>& reference,
              bool skip_odd_threads);

struct AluRow {
  Operands in;
  uint64_t want;
};
// Runs `op` with one thread per row; each thread's register (its low 16
// bits for half and bfloat) must be the row's `want`.
void ExpectAluRows(const std::string& op, const std::vector<AluRow>& rows);

// Every combination of one value per source from `per_source`, then
// `random_count` rows of random values of the sources' types.
std::vector<Operands> CombineInputs(
    const AluOp& op, const std::vector<std::vector<uint64_t>>& per_source,
    int random_count);

// --- integer references ------------------------------------------------------

int BitWidth(ScalarType t);       // 8 for b8, 16 for f16, ...
uint64_t TypeMask(ScalarType t);  // the low BitWidth(t) bits
Int128 IntMin(ScalarType t);
Int128 IntMax(ScalarType t);
// The value of an integer (or b8) type's bits.
Int128 IntValue(ScalarType t, uint64_t bits);
// The bits of `v` wrapped to t's width (two's complement).
uint64_t IntBits(ScalarType t, Int128 v);
Int128 Saturate(ScalarType t, Int128 v);
// What a register holds for value `v` of integer type t after wrapping to
// its width: sign- or zero-extended to 32 bits, or 64 bits for a pair.
uint64_t IntRegister(ScalarType t, Int128 v);

// --- float references --------------------------------------------------------

// The exact value of f16/bf16/f32 bits (NaN for NaNs).
double FloatValue(ScalarType t, uint64_t bits);
// `x` rounded to nearest even in format t, overflowing to infinity;
// NaN gives the canonical quiet NaN.
uint64_t RoundToFloat(ScalarType t, double x);
// `v` rounded to nearest even in format t, directly from the integer.
uint64_t RoundIntToFloat(ScalarType t, Int128 v);
uint64_t CanonicalNaN(ScalarType t);  // 0x7fc00000, 0x7e00, 0x7fc0
uint64_t SignBit(ScalarType t);
uint64_t Infinity(ScalarType t);
uint64_t MaxFinite(ScalarType t);
uint64_t MinNormal(ScalarType t);
uint64_t MaxBelowOne(ScalarType t);  // the largest value < 1
bool IsNaNBits(ScalarType t, uint64_t bits);
// a * b + c rounded once to double with round-to-odd, for a, b, c that
// are f16/bf16/f32 values: rounding that to f32/f16/bf16 (nearest even)
// rounds the exact a * b + c correctly.
double FmaRoundToOdd(double a, double b, double c);
// How far `got` (bits of format t) is from the exact `want`, in units of
// the last place of t at `want` (Metal's definition). 0 when both are the
// same NaN-ness or infinity; infinite for a NaN or infinity mismatch. An
// infinite `got` for a finite `want` is 0.5 if `want` rounds to it, else it
// counts as the first value past the largest finite one.
double UlpError(ScalarType t, uint64_t got, double want);

// --- inputs ------------------------------------------------------------------

// Values that stress type t: zero, one, extremes, their neighbours, shift
// amounts around the width; for floats signed zeros, denormals, the
// smallest normal, the largest finite, infinities, NaNs, halfway cases.
std::vector<uint64_t> EdgeValues(ScalarType t);
// `count` pseudo-random bit patterns of type t (deterministic from `seed`).
std::vector<uint64_t> RandomValues(ScalarType t, int count, uint32_t seed);

}  // namespace mtlemu::testing
