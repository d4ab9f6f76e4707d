#pragma once

// Threadgroup variables in kernel bodies, templated kernels included.
//
// MSL kernels are templates as often as not (`template <typename T> kernel
// void f(...)` plus `template [[host_name("f_float")]] kernel void
// f<float>(...);`), and their bodies declare `threadgroup` arrays. C++ for
// OpenCL allows neither a kernel template nor a `__local` variable outside a
// kernel, so the shims spell `kernel` as an annotation (an ordinary function
// tagged "metal.kernel") and `threadgroup` as `__local` plus the attribute
// below. When a `threadgroup` variable is declared in a function tagged
// "metal.kernel", the attribute gives that function OpenCL's kernel attribute
// (which is what clang checks); when such a template is instantiated, the
// scope it is instantiated in is marked as a function scope for as long as
// the instantiation runs (clang 16 checks "outermost scope of a kernel" on
// the parser's scope, which during instantiation is the namespace's). The
// front end drops the OpenCL kernel attribute again before code generation,
// so kernels are mangled like any function and found by their tag.

#include <string_view>

namespace clang {
class Sema;
class Diagnostic;
}  // namespace clang

namespace mtlemu::msl {

// The GNU attribute the shims' `threadgroup` macro carries.
inline constexpr std::string_view kThreadgroupVariableAttribute =
    "mtlemu_threadgroup_variable";

// Installs the instantiation hook in `sema` (once per compilation).
void InstallThreadgroupVariableSupport(clang::Sema& sema);

// True for clang's "attribute ignored when parsing type" warning about the
// attribute above (`threadgroup` in a cast or a template argument), which
// says nothing to the user.
bool IsThreadgroupAttributeNoise(const clang::Diagnostic& info);

}  // namespace mtlemu::msl
