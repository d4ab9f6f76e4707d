// Streamed (non-temporal) stores: compiled code writes a SIMD group's 32
// consecutive words to a large device buffer past the host's caches
// (emu/jit/run_codegen.cpp), sparing the read of each line that an
// ordinary store makes first; a kernel that streams an output, as most
// elementwise ones do, then moves a third less memory. On x86-64 such
// stores are weakly ordered: other host threads see them only after an
// SFENCE on the thread that made them. The executor fences where another
// thread may look: before a device atomic (a kernel's own way to publish
// data within a dispatch) and at the end of each range of threadgroups
// (before the dispatch returns). A thread always sees its own stores in
// order, so threadgroup barriers need nothing.
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "emu/exec/exec_context.h"

namespace mtlemu::emu {

// Whether compiled code streams stores on this host.
#if defined(__x86_64__)
inline constexpr bool kStreamedStores = true;
#else
inline constexpr bool kStreamedStores = false;
#endif

// Buffers (device regions) at least this long are streamed: larger than
// the caches that could keep them for the next kernel, as glibc's memcpy
// decides for its own streaming.
inline constexpr uint64_t kStreamedStoreMinLength = uint64_t{8} << 20;

// Makes this thread's streamed stores visible to the others, if it made
// any since the last time.
inline void FenceStreamedStores(ExecContext& ctx) {
#if defined(__x86_64__)
  if (ctx.streamed) [[unlikely]] {
    _mm_sfence();
    ctx.streamed = false;
  }
#else
  (void)ctx;
#endif
}

}  // namespace mtlemu::emu
