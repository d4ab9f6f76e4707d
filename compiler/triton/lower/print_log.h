// tl.device_print on the emulated GPU. A kernel that prints gets one more
// buffer, the print log: the threads append a record per element they
// print, and the host turns the records into Triton's lines once the
// dispatch is over (also when it faulted).
//
// The log, in 32-bit words: [0] records appended (an atomic counter; it
// may pass the capacity), [1] capacity in records (set by the host), [2..3]
// zero, then the records, kPrintRecordWords words each:
//   [0] site (the kernel's print op, in program order) | operand << 16
//   [1..3] the program id (x, y, z)
//   [4] the thread's count of prints executed before this one
//   [5] the element's row-major index in the operand (0 for a scalar)
//   [6..7] the value's bits, low word first (zero- or sign-extended by the
//          host from the operand's width)
// Each element is recorded by one thread (the one that stores it), a
// scalar by thread 0, so the lines come out once each, where Triton's GPU
// threads print replicated elements once per thread holding them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mtlemu::triton::lower {

inline constexpr int kPrintLogHeaderWords = 4;
inline constexpr int kPrintRecordWords = 8;

// One operand of a print: how to show its values and indices.
struct PrintOperand {
  enum class Kind { kFloat32, kFloat16, kBFloat16, kSigned, kUnsigned };
  Kind kind = Kind::kFloat32;
  int bits = 32;               // integers: 1, 8, 16, 32, 64
  std::vector<int64_t> shape;  // empty for a scalar
};

// One tt.print: its prefix as Triton formats it (" x: "), hex or not.
struct PrintSite {
  std::string prefix;
  bool hex = false;
  std::vector<PrintOperand> operands;
};

struct PrintedLines {
  std::vector<std::string> lines;
  uint64_t dropped = 0;  // records past the log's capacity
};

// Contract: the lines of a print log (`words` of `size` 32-bit words), as
// Triton prints them ("pid (0, 0, 0) idx ( 3) x: 1.500000"), ordered by
// program (x fastest), then each thread's print order, operand and
// element; one line per element. Records that do not parse (a site or
// operand the kernel does not have) are skipped.
PrintedLines DecodePrintLog(const std::vector<PrintSite>& sites,
                            const uint32_t* words, size_t size);

}  // namespace mtlemu::triton::lower
