// A fault stops a dispatch: what went wrong, where, and in which thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "isa/instruction.h"

namespace mtlemu::emu {

enum class FaultKind : uint8_t {
  kNone,
  kOutOfBounds,       // a memory access outside any buffer or block
  kMisalignedAtomic,  // an atomic access not aligned to its size
  kDivergentBarrier,  // a barrier reached by only some threads
  kTimeout,           // the dispatch ran past its time limit
  kTrap,              // a lane reached a trap instruction (a failed assert)
  kInterrupted,       // the host stopped the dispatch (Ctrl-C)
};

std::string_view FaultKindName(FaultKind kind);

struct Fault {
  FaultKind kind = FaultKind::kNone;
  // Filled by the instruction that faulted.
  int lane = 0;
  uint64_t address = 0;
  uint32_t size = 0;
  bool is_write = false;
  isa::AddressSpace space = isa::AddressSpace::kNone;
  // Filled by the executor and dispatcher.
  std::string kernel;
  uint32_t pc = 0;
  isa::SourceLocation location;
  std::string source_file;
  std::array<uint32_t, 3> threadgroup_position{};
  std::array<uint32_t, 3> thread_position{};  // of `lane`, in the grid
  uint32_t simdgroup = 0;
  // What the address was nearest to, for out-of-bounds device accesses.
  std::string region_description;  // "buffer(2) 'out' (4096 bytes)"
  int64_t region_offset = 0;
  std::string detail;  // free text for kinds without an address

  // One paragraph naming kernel, source line, thread, lane, address, buffer
  // and offset.
  std::string Describe() const;
};

}  // namespace mtlemu::emu
