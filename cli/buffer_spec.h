// Parsers for the command line's buffer, bytes, threadgroup-memory and size
// arguments, and the generators that fill buffers.
//
// --buffer INDEX=SPEC (and the buffers of --arg NAME=SPEC, with SPEC alone)
//   INDEX is a buffer slot 0..30. SPEC is either a path ending in ".npy" (any
//   case), or TYPE[COUNT]:GEN with TYPE a Metal scalar type name, COUNT a
//   positive integer and GEN one of:
//     zeros         all bits zero.
//     uninit        all bits zero, but a buffer created without contents
//                   (Device::newBuffer(length)): `--check init` reports a
//                   kernel reading bytes of it that nothing wrote.
//     iota          element i holds the value i converted to TYPE as a C++
//                   conversion would: integers wrap modulo 2^bits, bool is
//                   i != 0, float types round to nearest even (large values
//                   become inf in half).
//     fill(V)       every element holds V, written as for --bytes below.
//     random(SEED)  pseudo-random values from SplitMix64 seeded with SEED (a
//                   64-bit integer), one 64-bit draw x per element, the same
//                   on every platform:
//                     float types: uniform in [-1, 1), computed as the float
//                       (x >> 40) * 2^-23 - 1 (exact), then rounded to nearest
//                       even for half and bfloat (so those may hold 1.0);
//                     signed integers: uniform in [-100, 100] (x % 201 - 100);
//                     unsigned integers: uniform in [0, 100] (x % 101);
//                     bool: x >> 63 (0 or 1).
//
// --bytes INDEX=TYPE:V[,V...]
//   Data for setBytes at buffer slot INDEX: the values, each as TYPE, packed
//   tightly little-endian with no padding or alignment. A struct is given as
//   its fields in order; if it has padding, give that padding as explicit
//   values (e.g. uchar:1,0,0,0,... or a zero of the padding's width). At most
//   4096 bytes, Metal's limit for setBytes.
//   Values: bool is true, false, 0 or 1. Integers are decimal or hex with
//   0x, with a leading '-' allowed for signed types; out of range for the type
//   is an error. float, half and bfloat accept any strtof form (1.5, 1e-3,
//   0x1.8p0, inf, -inf, nan, -0); half and bfloat are read as a double and
//   rounded once to nearest even (isa::DoubleToHalfBits, as the assembler
//   does); a finite value too large for the type is an error.
//
// --threadgroup-memory INDEX=BYTES
//   INDEX is a threadgroup slot 0..30, BYTES a non-negative integer.
//
// --grid, --groups, --threadgroup X[,Y[,Z]]
//   Positive integers that fit in 32 bits; missing components are 1.
//
// All integers in these arguments (indices, counts, seeds, sizes) are decimal
// or hex with 0x. Error messages quote the option and its argument and say
// what was expected.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/result.h"
#include "isa/scalar_type.h"

namespace mtlemu::cli {

// Metal's buffer and threadgroup-memory slots are 0..30.
inline constexpr int kMaxBindIndex = 30;
// Metal's limit for setBytes.
inline constexpr size_t kMaxSetBytesLength = 4096;
// The largest generated buffer we agree to make.
inline constexpr uint64_t kMaxGeneratedBufferBytes = uint64_t{1} << 32;

enum class GeneratorKind { kZeros, kUninit, kIota, kFill, kRandom };

// A TYPE[COUNT]:GEN buffer.
struct GeneratedBuffer {
  isa::ScalarType type = isa::ScalarType::kFloat;
  uint64_t count = 0;
  GeneratorKind generator = GeneratorKind::kZeros;
  // kFill: one element, SizeOf(type) little-endian bytes.
  std::vector<uint8_t> fill_value;
  // kRandom: the seed.
  uint64_t seed = 0;
};

// A buffer read from a .npy file.
struct NpyBuffer {
  std::string path;
};

using BufferSource = std::variant<NpyBuffer, GeneratedBuffer>;

struct BufferSpec {
  int index = 0;
  BufferSource source;
};

// A buffer's elements, read or generated.
struct BufferData {
  isa::ScalarType type = isa::ScalarType::kUChar;  // a .npy's '<u2' is ushort
  std::vector<uint64_t> shape;                     // {COUNT} when generated
  std::vector<uint8_t> bytes;
  bool uninitialized = false;  // GeneratorKind::kUninit
};

struct BytesSpec {
  int index = 0;
  isa::ScalarType type = isa::ScalarType::kUChar;
  std::vector<uint8_t> bytes;
};

struct ThreadgroupMemorySpec {
  int index = 0;
  uint64_t length = 0;
};

struct Size3 {
  uint32_t x = 1;
  uint32_t y = 1;
  uint32_t z = 1;
};

// `arg` is the text after --buffer: "INDEX=SPEC".
Result<BufferSpec> ParseBufferSpec(std::string_view arg);

// SPEC alone. The error says what is wrong with it (no option prefix).
Result<BufferSource> ParseBufferSource(std::string_view spec);

// True for "x.npy", "dir/X.NPY", ...; false for ".npy" alone.
bool IsNpyPath(std::string_view spec);

// The .npy file's array, or the generated elements. Errors name the file.
Result<BufferData> LoadBufferData(const BufferSource& source);

// The buffer's contents: count * SizeOf(type) little-endian bytes.
std::vector<uint8_t> MaterializeBuffer(const GeneratedBuffer& buffer);

// `arg` is the text after --bytes: "INDEX=TYPE:V[,V...]".
Result<BytesSpec> ParseBytesSpec(std::string_view arg);

// `arg` is the text after --threadgroup-memory: "INDEX=BYTES".
// --constant NAME=TYPE:V or INDEX=TYPE:V (a function constant's value, as
// MTLFunctionConstantValues sets it). V is checked as a value of TYPE and
// returned as text for the compiler: {NAME or INDEX, V}.
Result<std::pair<std::string, std::string>> ParseFunctionConstant(
    std::string_view arg);

Result<ThreadgroupMemorySpec> ParseThreadgroupMemorySpec(std::string_view arg);

// `arg` is "X[,Y[,Z]]"; `option` names the option in errors ("--grid").
Result<Size3> ParseSize3(std::string_view option, std::string_view arg);

// One value of `type` as SizeOf(type) little-endian bytes, parsed as for
// --bytes. The error says what is wrong with `text` (no option prefix).
Result<std::vector<uint8_t>> ParseScalarValue(isa::ScalarType type,
                                              std::string_view text);

}  // namespace mtlemu::cli
