// Reads TTIR, the text form of Triton's block IR, as Triton 3.x prints it
// (compiled.asm["ttir"], triton-opt output) and as ir/printer.h writes it.
//
// Accepted: `#loc` alias definitions before and after the module (uses may
// come before definitions); every loc(...) form ("file":line:col with an
// optional "to line:col" range, unknown, "name"(loc), callsite(a at b),
// fused[...] and fused<...>[...], #aliases); `module` with attributes;
// `tt.func` with visibility, argument attributes and locations, results
// and `attributes {...}`; every op of ops.def in Triton's own syntax and in
// MLIR's generic syntax ("tt.reduce"(%x) <{axis = 0 : i32}> ({...}) : ...,
// or any op written that way); integer, float (decimal and hexadecimal
// bits), bool, string, array<i32: ...>, dense<...> (splat, nested lists
// and "0x..." hex data), type and unit attributes; block arguments with
// types and locations; `%x:2` result groups and `%x#1` uses; `//`
// comments. scf.for and scf.if get their implied scf.yield back.
//
// A tt.func body may have several blocks ("^bb2(%a: i32 loc(...)):")
// joined by cf.br and cf.cond_br with successor operands ("cf.br
// ^bb3(%7, %8 : i32, f32)"), as Triton prints a `return` inside an `if`.
// The IR has no blocks or branches: the reader structures them as it
// reads. From the entry block, a cf.br goes on with its destination's ops
// (its block arguments standing for the branch's operands) and a
// cf.cond_br becomes an scf.if whose regions hold what each destination
// leads to; every path ends in tt.return, which inside the scf.if becomes
// an scf.yield of the returned values (the scf.if's results, which the
// function then returns). A block reached on several paths is copied onto
// each. Branches must not form a loop ("unstructured loops are not
// supported"), regions of ops (scf, tt.reduce) hold one block and no
// branches, values must be defined above their uses in the text and
// dominate them, and blocks the entry does not reach are dropped.
//
// Each op's SourceLocation comes from its loc: a named loc gives the
// location inside it (and its name becomes the result's Value::name when
// the SSA name is a number); callsite(callee at caller) gives the callee
// unless the callee is unknown or inside Triton's own library (a path with
// "/triton/language/"), then the caller. SSA names (%offs_m_2) become
// Value::name ("offs_m_2"); numbers (%3) and %argN leave it empty.
//
// Errors are values ("file:line:col: error: message", at the TTIR text's
// line and 1-based column): malformed text, undefined or redefined values,
// unknown ops, types that contradict an operand's type. The reader does
// not check the ops' rules beyond what their syntax needs (ir/verifier.h
// does). It never throws, and its recursion is bounded.
#pragma once

#include <memory>
#include <string_view>

#include "common/result.h"
#include "compiler/triton/ir/ir.h"

namespace mtlemu::triton::ttir {

// `file` names the text in messages.
Result<std::unique_ptr<ir::Module>> ReadTtir(std::string_view text,
                                             std::string_view file);

}  // namespace mtlemu::triton::ttir
