// A source of many kernels compiled in parts, side by side: each part is a
// whole compile (front end, IR pipeline, lowering) of a share of the
// source's explicit instantiations (`template [[host_name("x")]] ...;`),
// as `msl::CompileMsl`'s `only_kernels` makes it, and the parts' modules
// are merged into the one a single compile gives, in its order.
//
// The parts' front ends go round by round in step, each round with the
// retry sites that all found (msl::RetrySites), so each part's kernels get
// the rewrites, and the code, that one compile gives them: the module does
// not depend on the division, and the division follows the host's cores.
// A kernel that is not an explicit instantiation (`kernel void f(...)`) is
// compiled by every part's front end and lowered by one.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "isa/module.h"

namespace mtlemu::compiler {

// Whether a source of `count` explicit instantiations is one of many
// kernels: it compiles in parts when the host has the cores for them, and
// a library of it lowers each kernel when a function first asks for it.
bool ManyInstantiations(size_t count);

// What each part's front end makes: a share of `instantiations` (the
// source's, in source order: msl::ExplicitInstantiations), the ones among
// `kernels` when it is not empty, in at most `max_parts` parts. Dealt out
// in turn (neighbours in the source are often one family, of one cost),
// none empty; one part (all of them) when there are too few to be worth
// the parse that every part repeats.
std::vector<std::vector<std::string>> PartitionInstantiations(
    const std::vector<std::string>& instantiations,
    const std::vector<std::string>& kernels, size_t max_parts);

// The kernels part `part` of `parts` lowers, given what its front end
// declared (`declared`, in source order) and the source's explicit
// instantiations (`instantiations`): those of its own share
// (`own_instantiations`) that it declared or that were asked for, and every
// parts-th of the other kernels asked for
// (`kernels`; all when empty), counted in source order. Part 0 also takes
// the names asked for that no part declares, so that one part reports
// them.
std::vector<std::string> KernelsToLower(
    const std::vector<std::string>& declared,
    const std::vector<std::string>& instantiations,
    const std::vector<std::string>& own_instantiations,
    const std::vector<std::string>& kernels, size_t part, size_t parts);

// The kernels of all parts in the order one compile declares them:
// `declared[p]` is part p's front end's list, in source order. The
// kernels that are not explicit instantiations are in every list, in the
// same order; an instantiation is in one list, and `instantiations` has
// them all in source order.
std::vector<std::string> SourceOrder(
    const std::vector<std::vector<std::string>>& declared,
    const std::vector<std::string>& instantiations);

// One module of the parts' kernels in `order` (each kernel in exactly one
// part), with one file table: each part's source locations are renumbered
// into it.
Result<isa::Module> MergeParts(std::vector<isa::Module> parts,
                               const std::vector<std::string>& order);

}  // namespace mtlemu::compiler
