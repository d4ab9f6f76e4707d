// The names the generated MSL gives to what has a Python name: the kernel
// function, its parameters and the values of its body. Whatever the
// Python names are (Metal and C++ keywords, `kernel`, names of
// metal_stdlib, long names that share a prefix), the MSL is valid and no
// two names meet.
#pragma once

#include <string>
#include <string_view>

namespace mtlemu::triton::lower {

// Whether MSL (its C++ keywords, Metal's address spaces and attributes
// words, metal_stdlib's types and functions that `using namespace metal`
// brings in) gives `name` a meaning of its own.
bool IsReservedInMsl(std::string_view name);

// `name` with only the characters an identifier may have, never starting
// with a digit; at most `max_length` characters (0: all).
std::string MslIdentifier(std::string_view name, size_t max_length = 0);

// A kernel parameter's MSL name: its Python name (fault reports name it),
// whole, unless MSL reserves the word or it could meet a generated name
// (which end in _<number> or start with mtlemu), then with "_arg" after.
std::string ParameterName(std::string_view python_name);

// The MSL function of a kernel named `python_name`: its name in the
// source, and the [[host_name]] attribute that gives the Metal function
// the Python name where the source name must differ (empty otherwise).
struct KernelFunctionName {
  std::string identifier;
  std::string host_name_attribute;
};
KernelFunctionName KernelFunctionNameFor(std::string_view python_name);

}  // namespace mtlemu::triton::lower
