// The printer: Module -> the canonical text form of README.md.
//
// Round trip: for a module m that passes Verify() and whose branch targets
// all have names in Kernel::labels (as every assembled module does),
// Assemble(PrintModule(m), m.files[0]) gives a module equal to m except for
// SourceLocations, and printing that again gives identical text.
//  - Locations in files other than file 0 round-trip exactly: the printer
//    emits `.file N "PATH"` for files 1.. and `.loc FILE LINE [COL]` before
//    instructions whose location changes, and `.loc 0 0` to return to the
//    default.
//  - Locations in file 0 are not printed; on reassembly they become the
//    instruction's own line and column in the printed text.
//  - A branch target without a name in Kernel::labels is printed with a
//    generated name (`L12`, for instruction 12), which the reassembled
//    kernel then has in its labels.
//  - Comments and layout are not kept.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "isa/instruction.h"
#include "isa/module.h"
#include "isa/scalar_type.h"

namespace mtlemu::isa {

std::string PrintModule(const Module& module);
// One kernel, `.kernel` to `.end` (without the module's `.file` lines).
std::string PrintKernel(const Kernel& kernel);
// One instruction without indentation or newline: "add.f32 r0, r1, 1.5".
// Branch targets print by their name in kernel.labels, or a generated one.
std::string PrintInstruction(const Instruction& inst, const Kernel& kernel);
// The same with names from LabelNames(kernel), computed once per kernel.
std::string PrintInstruction(const Instruction& inst,
                             const std::map<uint32_t, std::string>& names);

// kernel.labels plus a generated, unique name (`L<index>`) for every branch
// target that has none.
std::map<uint32_t, std::string> LabelNames(const Kernel& kernel);

// An immediate of `type` as the text form writes it: integers in decimal;
// floats in the shortest decimal that reassembles to the same bits
// ("1.0", "-0.0", "0.1", "1e-7", "inf"), NaNs as raw bits ("0x7fc00000").
std::string PrintImmediate(uint64_t bits, ScalarType type);

}  // namespace mtlemu::isa
