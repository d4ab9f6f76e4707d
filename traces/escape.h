// Text as it must appear inside a JSON string or an XML document, for the
// trace and roofline writers: special characters escaped, and bytes that are
// not valid UTF-8 replaced by U+FFFD, so a strange kernel name can never
// make the output unreadable.
#pragma once

#include <string>
#include <string_view>

namespace mtlemu::traces {

// Appends `text` to `out` as the inside of a JSON string (without the
// surrounding quotes): `"` and `\` escaped, control characters as \n, \t,
// ... or \u00XX.
void AppendJsonEscaped(std::string_view text, std::string& out);

// Appends `text` to `out` for XML character data or an attribute value
// (either quote): & < > " ' as entities, tab and line breaks as character
// references, other characters XML 1.0 forbids replaced by U+FFFD.
void AppendXmlEscaped(std::string_view text, std::string& out);

}  // namespace mtlemu::traces
