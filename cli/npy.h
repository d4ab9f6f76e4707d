// Reading and writing NumPy .npy files holding one C-order array of a Metal
// scalar type.
//
// Reading accepts format versions 1.0, 2.0 and 3.0 and the little-endian
// dtypes of the scalar types:
//   '|b1' bool    '|i1' char   '|u1' uchar   '<i2' short   '<u2' ushort
//   '<i4' int     '<u4' uint   '<i8' long    '<u8' ulong   '<f2' half
//   '<f4' float
// bfloat has no NumPy dtype: bfloat data is written as '<u2' (the raw bits)
// and a '<u2' file may be used for a bfloat buffer (see NpyCompatibleTypes).
// The byte-order mark may be '<', '=' (native, which must be little-endian) or
// '|'; a big-endian mark ('>' or '!') is rejected, except on one-byte dtypes
// where byte order means nothing (NumPy treats '>i1' as 'int8' too).
// fortran_order must be False. Bytes after the array data are ignored, as
// np.load does.
//
// Writing produces version 1.0, or 2.0 if the header does not fit 1.0, with
// the header padded so the data starts at a multiple of 64 bytes.
//
// Every error message starts with the file's path.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "isa/scalar_type.h"

namespace mtlemu::cli {

// NumPy supports at most 64 dimensions; so do we.
inline constexpr int kNpyMaxRank = 64;

struct NpyArray {
  // The type the file's dtype names ('<u2' reads as ushort, never bfloat).
  isa::ScalarType type = isa::ScalarType::kUChar;
  // The dtype as written in the file, e.g. "<f4".
  std::string descr;
  // C-order shape; empty for a 0-d (scalar) array.
  std::vector<uint64_t> shape;
  // The raw little-endian elements: ElementCount() * SizeOf(type) bytes.
  std::vector<uint8_t> data;

  // Product of the shape (1 for a 0-d array).
  uint64_t ElementCount() const;
};

Result<NpyArray> ReadNpy(const std::string& path);

// The same from the file's bytes in memory; `name` stands for the path in
// error messages.
Result<NpyArray> ParseNpy(std::span<const uint8_t> bytes,
                          const std::string& name);

// Writes `data` (little-endian elements of `type`) with the given C-order
// shape. data.size() must equal the shape's product times SizeOf(type).
Status WriteNpy(const std::string& path, isa::ScalarType type,
                std::span<const uint64_t> shape, std::span<const uint8_t> data);

// The dtype string written for `type`: "<f4", "|b1", ...; "<u2" for bfloat.
std::string NpyDescr(isa::ScalarType type);

// The scalar type a dtype string names, or an error saying what is wrong
// with it (without a file name).
Result<isa::ScalarType> ScalarTypeFromNpyDescr(std::string_view descr);

// The scalar types whose buffers can be read from (or hold data of) a file
// with this dtype: e.g. {float} for "<f4", {ushort, bfloat} for "<u2"; empty
// if the dtype is not supported.
std::vector<isa::ScalarType> NpyCompatibleTypes(std::string_view descr);

// The complete header (magic, version, length, padded dict) that WriteNpy
// writes before the data. Exposed for tests. shape.size() must be at most
// kNpyMaxRank.
std::string NpyHeader(isa::ScalarType type, std::span<const uint64_t> shape);

}  // namespace mtlemu::cli
