// make_shim_pch's own EmbeddedShimPch: it makes the PCH, so has none.
#include "compiler/msl/precompiled_shims.h"

namespace mtlemu::msl {

std::string_view EmbeddedShimPch(bool) { return {}; }

}  // namespace mtlemu::msl
