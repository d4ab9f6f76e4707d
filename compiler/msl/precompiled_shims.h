// The <metal_stdlib> shims precompiled: a clang PCH of the prelude and
// <metal_stdlib>, one per fast-math setting. Parsing the shims is most of a
// small kernel's compile time; loading the PCH is a fraction of it. The
// build makes both PCHs with the make_shim_pch tool (this same front end)
// and embeds them in the binary, so they always match the shims and the
// clang they were made with.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "compiler/msl/frontend.h"

namespace mtlemu::msl {

// Where the PCH is served in the in-memory file system.
inline constexpr char kShimPchPath[] = "/__mtlemu/metal/shims.pch";

// The embedded PCH for this fast-math setting; empty in a binary without
// one (make_shim_pch itself).
std::string_view EmbeddedShimPch(bool fast_math);

// Whether a compilation with these options may use the PCH: not when a
// macro that the shims read (MTLEMU_*, __METAL*, __MTL*, __FAST_MATH__) is
// set from outside, as the PCH was made without it.
bool CanUseShimPch(const CompileOptions& options);

// Makes the PCH for this fast-math setting and writes it to `path`.
Status WriteShimPch(bool fast_math, const std::string& path);

}  // namespace mtlemu::msl
