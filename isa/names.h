// Names in the text form: of kernels, arguments and labels. Their own file
// because both the assembler (which reads them) and the verifier (which
// checks a Module built without it) need the same rules.
#pragma once

#include <string_view>

namespace mtlemu::isa {

// The characters a name starts with and goes on with.
bool IsNameStart(char c);  // [A-Za-z_.$]
bool IsNameChar(char c);   // [A-Za-z0-9_.$]

// `[A-Za-z_.$][A-Za-z0-9_.$]*`: names of kernels, arguments and labels.
bool IsValidName(std::string_view name);

// A valid name that does not read as an operand of another kind: not a
// register or uniform (`r12`, `u3`) and not `inf` or `nan`.
bool IsValidLabelName(std::string_view name);

}  // namespace mtlemu::isa
