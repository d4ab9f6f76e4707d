// Vector loads and stores. Scalarization splits an MSL float4 (half2,
// uchar4, ...) access into one access per element; Metal's compiler keeps it
// one instruction that moves the whole vector. Adjacent loads (or stores) of
// neighbouring elements through one address become one `ld.vN` (`st.vN`)
// again: a quarter of the instructions, and one memory request for what the
// SIMD group touches instead of one per element.
#pragma once

#include <cstdint>
#include <functional>

#include "compiler/air/register_parts.h"
#include "isa/module.h"

namespace mtlemu::air {

// On virtual registers, after dead-code removal, before memory scheduling
// (which moves loads apart). A load's elements become the parts of a new
// register block (`new_vreg` makes it); a store's values must already be
// consecutive parts of one block, or registers that stand alone with one
// definition, which become the parts of a new block.
void MergeVectorAccesses(isa::Kernel& kernel, RegisterParts& parts,
                         const std::function<uint32_t()>& new_vreg);

}  // namespace mtlemu::air
