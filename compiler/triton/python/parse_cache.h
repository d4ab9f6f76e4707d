// Parsed modules shared across compilations in one process. Every kernel
// compiled from a file parses that file and the Triton prelude; a program
// that compiles several kernels (or one kernel with several
// specializations) parses each text once.
#pragma once

#include <memory>
#include <string_view>

#include "common/result.h"
#include "compiler/triton/python/ast.h"

namespace mtlemu::triton::py {

// Contract: as ParseModule, but the tree of a (file, source) pair parsed
// before in this process comes from memory. Trees are immutable once
// shared. Thread-safe. The cache keeps the most recently used trees (a
// bounded number); parse failures are not kept.
Result<std::shared_ptr<const Module>> ParseModuleCached(std::string_view source,
                                                        std::string_view file);

}  // namespace mtlemu::triton::py
