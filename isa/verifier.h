// The verifier: the rules a Module must satisfy before it runs.
//
// It checks what the assembler cannot see from one line (types per opcode,
// address spaces per operation, register spans, branch targets,
// terminators, argument tables, limits) and that every field of every
// instruction is canonical, so that a verified module prints and reassembles
// to an equal module. It never crashes on a malformed Module (out-of-range
// enums included). Instruction diagnostics carry the instruction's source
// location (module.files[loc.file], loc.line, loc.column) and name the
// kernel, the instruction index and its text.
#pragma once

#include <cstdint>
#include <string_view>

#include "isa/diagnostic.h"
#include "isa/instruction.h"
#include "isa/module.h"
#include "isa/opcode.h"

namespace mtlemu::isa {

// Whether `op` (of element type `type`) may access memory in `space` (the
// Spaces columns of shapes.def): ld any space; st not constant; atomics
// device or threadgroup (float atomics device only); simdgroup_load device,
// constant or threadgroup; simdgroup_store device or threadgroup.
bool IsAddressSpaceAllowed(Opcode op, ScalarType type, AddressSpace space);

// Verifies every kernel, and that kernel names are unique.
Diagnostics Verify(const Module& module);
// The same, with "after pass 'NAME': " before every message (for compiler
// passes that verify their output).
Diagnostics Verify(const Module& module, std::string_view after_pass);
// Verifies one kernel of `module` (the module supplies file names).
Diagnostics VerifyKernel(const Module& module, const Kernel& kernel,
                         std::string_view after_pass = {});

struct VerifyOptions {
  // Puts "after pass 'NAME': " before every message.
  std::string_view after_pass;
  // Code before register allocation: virtual registers, as many as it
  // likes, and kernel.registers and kernel.uniforms not counted yet
  // (ComputeResources).
  bool virtual_registers = false;
};
Diagnostics VerifyKernel(const Module& module, const Kernel& kernel,
                         const VerifyOptions& options);

}  // namespace mtlemu::isa
