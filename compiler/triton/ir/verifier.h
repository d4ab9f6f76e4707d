// Checks the block IR against the rules of its ops (ops.def): operand and
// result counts and types (elementwise ops keep one shape, arith.cmpi gives
// i1, tt.addptr's offset has its pointer's shape, tt.load's mask and other
// match its pointer, tt.dot is MxK * KxN -> MxN, ...), attributes, regions
// (tt.reduce's combiner, scf.for/if/while block arguments and yields),
// terminators (at the end of each region, and nowhere else), and SSA
// dominance (a value is used only after its definition in its block, or in
// a region nested below it).
//
// Every problem is reported, not only the first: the Error's message has
// one line per problem, "kernel.py:12:9: error: tt.addptr: offset shape
// 32x1 does not match pointer shape 32x32 (IR after 'front end')", at the
// op's location (else the nearest enclosing op's, else the function's;
// columns 1-based). The front end calls this between passes in debug
// builds, with the pass that produced the IR.
#pragma once

#include <string_view>

#include "common/result.h"
#include "compiler/triton/ir/ir.h"

namespace mtlemu::triton::ir {

Status Verify(const Module& module, std::string_view after_pass = "");

}  // namespace mtlemu::triton::ir
