#include "traces/escape.h"

#include <cstddef>
#include <cstdint>

namespace mtlemu::traces {
namespace {

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed UTF-8 sequence (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF) that starts `text` with a
// byte >= 0x80, or 0 if there is none.
size_t Utf8SequenceLength(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(0);
  size_t length = 0;
  uint8_t second_min = 0x80, second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;
    if (lead == 0xED) second_max = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;
    if (lead == 0xF4) second_max = 0x8F;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  if (byte(1) < second_min || byte(1) > second_max) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

// Calls `ascii(c)` for each byte below 0x80 and `other(sequence)` for each
// well-formed multi-byte sequence, and appends U+FFFD for each byte that
// starts no well-formed sequence.
template <class Ascii, class Other>
void ForEachCharacter(std::string_view text, std::string& out, Ascii ascii,
                      Other other) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ascii(static_cast<char>(c));
      ++i;
      continue;
    }
    const size_t length = Utf8SequenceLength(text.substr(i));
    if (length == 0) {
      out += kReplacementCharacter;
      ++i;
    } else {
      other(text.substr(i, length));
      i += length;
    }
  }
}

}  // namespace

void AppendJsonEscaped(std::string_view text, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  ForEachCharacter(
      text, out,
      [&](char c) {
        switch (c) {
          case '"':
            out += "\\\"";
            return;
          case '\\':
            out += "\\\\";
            return;
          case '\n':
            out += "\\n";
            return;
          case '\r':
            out += "\\r";
            return;
          case '\t':
            out += "\\t";
            return;
          case '\b':
            out += "\\b";
            return;
          case '\f':
            out += "\\f";
            return;
          default:
            break;
        }
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out += kHex[(c >> 4) & 0xF];
          out += kHex[c & 0xF];
        } else {
          out += c;
        }
      },
      [&](std::string_view sequence) { out += sequence; });
}

void AppendXmlEscaped(std::string_view text, std::string& out) {
  ForEachCharacter(
      text, out,
      [&](char c) {
        switch (c) {
          case '&':
            out += "&amp;";
            return;
          case '<':
            out += "&lt;";
            return;
          case '>':
            out += "&gt;";
            return;
          case '"':
            out += "&quot;";
            return;
          case '\'':
            out += "&apos;";
            return;
          case '\t':
            out += "&#9;";
            return;
          case '\n':
            out += "&#10;";
            return;
          case '\r':
            out += "&#13;";
            return;
          default:
            break;
        }
        if (static_cast<unsigned char>(c) < 0x20) {
          out += kReplacementCharacter;  // not allowed in XML 1.0 at all
        } else {
          out += c;
        }
      },
      [&](std::string_view sequence) {
        // U+FFFE and U+FFFF are not XML characters either.
        if (sequence == "\xEF\xBF\xBE" || sequence == "\xEF\xBF\xBF") {
          out += kReplacementCharacter;
        } else {
          out += sequence;
        }
      });
}

}  // namespace mtlemu::traces
