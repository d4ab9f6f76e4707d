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

  // The [[host_name]]s of the explicit instantiations left out (see
  // RewriteMetalAttributes' `only_kernels`).
  std::vector<std::string> skipped_kernels;

  // The original offset for an offset in `text`.
  size_t OriginalOffset(size_t rewritten) const;
};

// Places where clang refused what Metal's compiler takes, found by a first
// attempt (frontend.cpp): offsets into the source, to rewrite and compile
// again.
struct RetrySites {
  // `?` of conditionals that clang finds ambiguous or incompatible (the
  // same class in two address spaces, a bfloat and a number): each of their
  // second and third operands becomes __mtl_cond_arm<decltype((the
  // other))>(...), the shims' conversion to the type Metal gives the
  // conditional.
  std::vector<size_t> conditionals;
  // Binary operators between a vector and a scalar of greater rank
  // (`0.5 * v` with `v` a half2): the left operand, or the right one of a
  // compound assignment, is wrapped in __mtl_mixed(...) (the shims'
  // operators that convert the scalar to the element type, as Metal does).
  // The same of a conditional (`c ? v : 0.0f`): both ways are wrapped in
  // __mtl_mixed_arm(...), which turns the scalar one into the vector.
  std::vector<size_t> mixed_operators;
  // Casts between vector types of different element types (`(float4)h`,
  // `float4(h)`, `T(h)` with T a half2, `static_cast<float4>(h)`), which
  // clang takes for bit casts of a different size: the operand becomes
  // __mtl_vector_cast<T>(...), the shims' conversion by value, as Metal's;
  // so do the other casts spelled as one of them in the functions with a
  // site (clang names one per statement of a template's instantiation).
  std::vector<size_t> vector_casts;
  // The same of a vector comparison (`T(x > 0)`, `(float4)(a == b)`), whose
  // true is all ones in clang and 1 in Metal: __mtl_mask_cast<T>.
  std::vector<size_t> mask_casts;
  // Braced lists of fewer elements than their vector (`float4 a = {0.f},
  // b = {0.f};`, `T4 v = {x}` with T4 a float4), whose other elements
  // Metal sets to zero: `{...}` becomes __mtl_short_list{...}, which
  // converts to any vector so.
  std::vector<size_t> short_lists;
  // Vector constructors through a template's type (`type4(a, b, c, d)`
  // with type4 a float4), which clang takes for a scalar's: the arguments
  // become __mtl_vector_make<T>(...), the shims' MSL constructor.
  std::vector<size_t> vector_constructors;
  // The names of functions defined again with only `device` and `constant`
  // swapped in their parameters (`f(device const T*)` and `f(constant
  // T*)`), which clang finds redefinitions: both are __global here, so the
  // second definition is left out and the first serves both (the same
  // where their bodies are the same; where they differ, the device one's).
  std::vector<size_t> redefinitions;

  // Adds `more`'s sites; returns whether any was new.
  bool Add(const RetrySites& more);
};

// Rewrites every MSL attribute list `[[...]]` outside comments and string
// literals whose attributes are all Metal's (not standard C++ attributes
// such as [[maybe_unused]] or namespaced ones), and function-pointer
// template parameters (`template <float (*F)(float)>` becomes `template
// <float (&F)(float)>`, as C++ for OpenCL cannot take a function's address
// as a template argument of that type), and `constant` and `threadgroup` as
// qualifiers of member functions and constructors (`complex_t(U x) constant
// : ...`; see MethodQualifierReplacement), and `constant char*` (string
// literals are __constant in C++ for OpenCL), and the other spellings
// Metal takes that clang does not (see the .cpp), and the `retry` sites.
// With `only_kernels` given, an explicit instantiation whose
// [[host_name("...")]] (first after `template`) names none of them is
// left out. Lines are kept.
RewrittenSource RewriteMetalAttributes(
    std::string_view source, const RetrySites& retry = {},
    const std::vector<std::string>& only_kernels = {});

// The [[host_name("...")]]s of `source`'s explicit instantiations, in the
// order they are written: the kernels that `only_kernels` chooses among
// (the same scan finds them).
std::vector<std::string> ExplicitInstantiations(std::string_view source);

// True for the attribute names the rewriter treats as Metal's.
bool IsMetalAttribute(std::string_view name);

}  // namespace mtlemu::msl
