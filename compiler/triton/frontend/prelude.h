// The library prelude's source (prelude/standard.py), embedded at build
// time: the Triton-language definitions of tl.sum, tl.argmax, tl.cdiv,
// tl.sort, tl.rand and the other functions Triton writes in Python.
#pragma once

#include <string_view>

namespace mtlemu::triton::frontend {

// The name its locations and messages carry.
inline constexpr char kPreludeFile[] = "<triton.language standard library>";

std::string_view PreludeSource();

}  // namespace mtlemu::triton::frontend
