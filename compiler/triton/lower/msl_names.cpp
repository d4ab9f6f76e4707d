#include "compiler/triton/lower/msl_names.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace mtlemu::triton::lower {
namespace {

// "mtlemu" names are the generated code's own.
bool IsGeneratedLike(std::string_view name) {
  if (name.rfind("mtlemu", 0) == 0) return true;
  const size_t us = name.rfind('_');
  return us != std::string_view::npos && us + 1 < name.size() &&
         std::all_of(name.begin() + us + 1, name.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c));
         });
}

}  // namespace

bool IsReservedInMsl(std::string_view name) {
  static const std::set<std::string, std::less<>> kReserved = {
      // C++ keywords and alternative tokens.
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
      "bool", "break", "case", "catch", "char", "char8_t", "char16_t",
      "char32_t", "class", "compl", "concept", "const", "consteval",
      "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false",
      "float", "for", "friend", "goto", "if", "inline", "int", "long",
      "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr",
      "operator", "or", "or_eq", "private", "protected", "public", "register",
      "reinterpret_cast", "requires", "return", "short", "signed", "sizeof",
      "static", "static_assert", "static_cast", "struct", "switch", "template",
      "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
      "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
      "wchar_t", "while", "xor", "xor_eq", "main",
      // Metal's address spaces, function kinds and attribute words.
      "kernel", "vertex", "fragment", "visible", "device", "constant",
      "threadgroup", "threadgroup_imageblock", "thread", "ray_data",
      "object_data", "metal", "stage_in",
      // Scalar and vector types, and metal_stdlib's names that a kernel
      // or parameter of that name would hide or clash with.
      "half", "bfloat", "uint", "uchar", "ushort", "ulong", "size_t",
      "ptrdiff_t", "vec", "array", "atomic", "atomic_int", "atomic_uint",
      "atomic_float", "simd", "min", "max", "abs", "exp", "exp2", "log", "log2",
      "sqrt", "rsqrt", "sin", "cos", "tan", "pow", "fma", "floor", "ceil",
      "round", "trunc", "select", "clamp", "mix", "dot", "isnan", "isinf",
      "fmin", "fmax", "fabs", "copysign", "as_type", "sign", "saturate", "step",
      "popcount", "clz", "ctz", "precise", "fast"};
  return kReserved.count(name) != 0;
}

std::string MslIdentifier(std::string_view name, size_t max_length) {
  std::string s;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') s += c;
    if (max_length != 0 && s.size() >= max_length) break;
  }
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v" + s;
  return s;
}

std::string ParameterName(std::string_view python_name) {
  std::string name = MslIdentifier(python_name);
  if (IsReservedInMsl(name) || IsGeneratedLike(name)) name += "_arg";
  return name;
}

KernelFunctionName KernelFunctionNameFor(std::string_view python_name) {
  const std::string id = MslIdentifier(python_name);
  if (id == python_name && !IsReservedInMsl(id) && id.rfind("mtlemu", 0) != 0) {
    return {id, ""};
  }
  return {"mtlemu_kernel_" + id,
          "[[host_name(\"" + std::string(python_name) + "\")]] "};
}

}  // namespace mtlemu::triton::lower
