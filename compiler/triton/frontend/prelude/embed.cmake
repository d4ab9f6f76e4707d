# Writes OUTPUT: a C++ file whose PreludeSource() returns INPUT's text.
file(READ ${INPUT} text)
set(delim "mtlemu_prelude")
file(WRITE ${OUTPUT} "// Generated from ${INPUT} by embed.cmake.\n#include \"compiler/triton/frontend/prelude.h\"\n\nnamespace mtlemu::triton::frontend {\n\nstd::string_view PreludeSource() {\n  static constexpr char kText[] = R\"${delim}(${text})${delim}\";\n  return std::string_view(kText, sizeof kText - 1);\n}\n\n}  // namespace mtlemu::triton::frontend\n")
