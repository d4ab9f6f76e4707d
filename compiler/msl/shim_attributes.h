#pragma once

// The GNU attributes that the shims' address-space macros carry, handled by
// the front end as clang plugin attributes.
//
// `threadgroup` is `__local __attribute__((mtlemu_threadgroup_variable))`.
// MSL kernels are templates as often as not (`template <typename T> kernel
// void f(...)` plus `template [[host_name("f_float")]] kernel void
// f<float>(...);`), and their bodies declare `threadgroup` arrays. C++ for
// OpenCL allows neither a kernel template nor a `__local` variable outside a
// kernel, so the shims spell `kernel` as an annotation (an ordinary function
// tagged "metal.kernel"). When a `threadgroup` variable is declared in a
// function tagged "metal.kernel", the attribute gives that function OpenCL's
// kernel attribute (which is what clang checks); when such a template is
// instantiated, the scope it is instantiated in is marked as a function
// scope for as long as the instantiation runs (clang 16 checks "outermost
// scope of a kernel" on the parser's scope, which during instantiation is
// the namespace's). The front end drops the OpenCL kernel attribute again
// before code generation, so kernels are mangled like any function and
// found by their tag.
//
// `constant` is `__global const __attribute__((mtlemu_constant))`: Metal's
// constant address space is device memory read-only (OpenCL's __constant
// would not convert to generic pointers), and the attribute tags kernel
// parameters so their argument table still says `constant`.

#include <string_view>

namespace clang {
class Diagnostic;
class FunctionDecl;
class ParmVarDecl;
class Sema;
}  // namespace clang

namespace mtlemu::msl {

inline constexpr std::string_view kThreadgroupVariableAttribute =
    "mtlemu_threadgroup_variable";
inline constexpr std::string_view kConstantAttribute = "mtlemu_constant";

// A kernel: OpenCL's kernel attribute, or the shims' annotation spelling of
// `kernel` ([[kernel]] included), on it or on the template it instantiates.
bool IsKernel(const clang::FunctionDecl& f);

// Installs the instantiation hook in `sema` (once per compilation).
void InstallThreadgroupVariableSupport(clang::Sema& sema);

// Whether a parameter was declared in the constant address space.
bool IsConstantParameter(const clang::ParmVarDecl& p);

// True for clang's "attribute ignored when parsing type" warning about the
// attributes above (`threadgroup` in a cast or a template argument), which
// says nothing to the user.
bool IsShimAttributeNoise(const clang::Diagnostic& info);

}  // namespace mtlemu::msl
