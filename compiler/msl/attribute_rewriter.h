// MSL attributes ([[buffer(0)]], [[thread_position_in_grid]],
// [[host_name("f")]], ...) become clang `annotate` attributes that the
// front end reads off the AST: clang drops unknown [[...]] attributes, but
// keeps __attribute__((annotate("metal.NAME", ARGS...))).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mtlemu::msl {

// The rewritten text and where each piece of it came from, so diagnostics
// can point at the user's own columns.
struct RewrittenSource {
  std::string text;
  // Sorted pairs (offset in text, offset in the original) at the start of
  // each piece that was copied or replaced.
  std::vector<std::pair<size_t, size_t>> anchors;

  // Function constants declared in the source (`constant T name
  // [[function_constant(index)]];`), in order: each declaration became
  // `constant T name = __MTLEMU_FC_<index>;`, a macro the front end defines
  // as the value set for it, or `{}` when none is.
  struct FunctionConstant {
    std::string name;
    int index;
  };
  std::vector<FunctionConstant> function_constants;

  // The original offset for an offset in `text`.
  size_t OriginalOffset(size_t rewritten) const;
};

// Rewrites every MSL attribute list `[[...]]` outside comments and string
// literals whose attributes are all Metal's (not standard C++ attributes
// such as [[maybe_unused]] or namespaced ones), and function-pointer
// template parameters (`template <float (*F)(float)>` becomes `template
// <auto F>`, as C++ for OpenCL cannot take a function's address as a
// template argument of that type), and `constant` and `threadgroup` as
// qualifiers of member functions and constructors (`complex_t(U x) constant
// : ...`; see MethodQualifierReplacement), and `constant char*` (string
// literals are __constant in C++ for OpenCL). Lines are kept.
// `conditionals`: offsets of `?` whose second and third operands are
// wrapped in __mtl_rvalue(...) (the shims' copy to a prvalue with no
// address space), for conditionals that clang finds ambiguous or
// incompatible between the same class in two address spaces (see
// frontend.cpp, which names them after a first attempt).
RewrittenSource RewriteMetalAttributes(
    std::string_view source, const std::vector<size_t>& conditionals = {});

// True for the attribute names the rewriter treats as Metal's.
bool IsMetalAttribute(std::string_view name);

}  // namespace mtlemu::msl
