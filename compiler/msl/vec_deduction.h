// Deducing through metal::vec<T, N>.
//
// With Apple's compiler `template <typename T> void f(thread vec<T, 2>* x)`
// deduces T from a float2*, and `struct Traits<vec<T, 2>>` matches float2:
// vec<T, N> is T's ext vector for every T, bfloat included. Here bool and
// bfloat vectors are classes (clang 16 has no ext vectors of them in this
// mode), so vec<T, N> is an alias through a class template that picks one
// or the other, and nothing is deduced through it (MLX's FFT and steel
// attention fail: "couldn't infer template argument").
//
// So, before clang runs, a template whose function parameters (or whose
// partial specialization's arguments) hold vec<P, E> with P one of its own
// type parameters is written once with __mtl_ev<P, E> (the ext vector,
// deducible) in those places, and once more for each other choice between
// that and __mtl_cvec<P, E> (the class vector, deducible too) per such
// parameter P: at most 8 forms, for 3 parameters; beyond, the two uniform
// ones. The forms never overlap (an argument is an ext vector or a class),
// so overload resolution sees one. Alias templates that are vec<U, E> of
// their own parameter (MLX's `dtype_frag_t<U>`) are seen through where they
// are used in the same scope.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mtlemu::msl {

struct VecDeductionEdits {
  // [start, end) of the source -> the text that replaces it (the first form),
  // sorted and disjoint.
  struct Replacement {
    size_t start, end;
    std::string text;
  };
  std::vector<Replacement> replacements;
  // The other forms: each a template's whole text, rewritten, to insert at
  // `offset` (right after the template's end), not yet attribute-rewritten.
  struct Copy {
    size_t offset;
    std::string text;
  };
  std::vector<Copy> copies;
};

// An alias of a vector type: `using NAME = vec<A, B>;`, `typedef vec<A, B>
// NAME;`, or `template <typename A> using NAME = vec<A, B>;` (then
// `parameter` is A; empty otherwise), and the braces it is declared in
// ([0, size) at namespace scope).
struct VecAlias {
  std::string name, parameter, element, size;
  size_t scope_open, scope_close;
};
std::vector<VecAlias> FindVecAliases(std::string_view source);

// `aliases`: FindVecAliases(source), which the rewriter needs too.
VecDeductionEdits FindVecDeductions(std::string_view source,
                                    const std::vector<VecAlias>& aliases);

}  // namespace mtlemu::msl
