// A small, strict XML reader for the roofline tests: checks that a document
// is well-formed (one root, tags balanced, attributes quoted and unique,
// only the five named entities and character references) and returns its
// element tree, so the tests read values back instead of searching the text.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/traces/utf8.h"

namespace mtlemu::traces::testing {

struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<XmlElement> children;
  std::string text;  // character data directly inside, entities decoded

  // The attribute `key`, or nullopt.
  std::optional<std::string> Attribute(std::string_view key) const {
    for (const auto& [k, v] : attributes) {
      if (k == key) return v;
    }
    return std::nullopt;
  }
  // The text of this element and all its descendants, in document order.
  std::string AllText() const {
    std::string all = text;
    for (const XmlElement& child : children) all += child.AllText();
    return all;
  }
  // Every descendant (and this element) for which `match` holds.
  std::vector<const XmlElement*> FindAll(
      const std::function<bool(const XmlElement&)>& match) const {
    std::vector<const XmlElement*> found;
    if (match(*this)) found.push_back(this);
    for (const XmlElement& child : children) {
      for (const XmlElement* e : child.FindAll(match)) found.push_back(e);
    }
    return found;
  }
  std::vector<const XmlElement*> FindByClass(std::string_view cls) const {
    return FindAll(
        [&](const XmlElement& e) { return e.Attribute("class") == cls; });
  }
};

class XmlReader {
 public:
  static std::optional<XmlElement> Parse(std::string_view text,
                                         std::string* error) {
    XmlReader reader(text);
    XmlElement root;
    if (reader.Document(root)) return root;
    *error = reader.error_ + " at offset " + std::to_string(reader.pos_);
    return std::nullopt;
  }

 private:
  explicit XmlReader(std::string_view text) : text_(text) {}

  bool Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  bool StartsWith(std::string_view s) const {
    return text_.substr(pos_, s.size()) == s;
  }
  void SkipSpace() {
    while (!AtEnd() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                        text_[pos_] == '\r' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }
  // Comments and processing instructions between elements.
  bool SkipMisc() {
    for (;;) {
      SkipSpace();
      if (StartsWith("<!--")) {
        const size_t end = text_.find("-->", pos_ + 4);
        if (end == std::string_view::npos) return Fail("unterminated comment");
        pos_ = end + 3;
      } else if (StartsWith("<?")) {
        const size_t end = text_.find("?>", pos_ + 2);
        if (end == std::string_view::npos) return Fail("unterminated <?");
        pos_ = end + 2;
      } else {
        return true;
      }
    }
  }

  bool Document(XmlElement& root) {
    if (!SkipMisc()) return false;
    if (!StartsWith("<")) return Fail("no root element");
    if (!Element(root, 0)) return false;
    if (!SkipMisc()) return false;
    if (!AtEnd()) return Fail("content after the root element");
    return true;
  }

  static bool NameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '-' || c == '_' || c == ':' ||
           c == '.';
  }
  bool Name(std::string& out) {
    const size_t start = pos_;
    while (!AtEnd() && NameChar(text_[pos_])) ++pos_;
    if (pos_ == start) return Fail("expected a name");
    out = std::string(text_.substr(start, pos_ - start));
    return true;
  }

  // After '&': a named entity or a character reference, up to ';'.
  bool Reference(std::string& out) {
    const size_t end = text_.find(';', pos_);
    if (end == std::string_view::npos || end - pos_ > 10) {
      return Fail("unterminated reference");
    }
    const std::string_view ref = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    if (ref == "amp") {
      out += '&';
    } else if (ref == "lt") {
      out += '<';
    } else if (ref == "gt") {
      out += '>';
    } else if (ref == "quot") {
      out += '"';
    } else if (ref == "apos") {
      out += '\'';
    } else if (ref.size() > 1 && ref[0] == '#') {
      const bool hex = ref[1] == 'x';
      const std::string_view digits = ref.substr(hex ? 2 : 1);
      if (digits.empty()) return Fail("empty character reference");
      uint32_t cp = 0;
      for (char c : digits) {
        uint32_t d;
        if (c >= '0' && c <= '9') {
          d = static_cast<uint32_t>(c - '0');
        } else if (hex && c >= 'a' && c <= 'f') {
          d = static_cast<uint32_t>(c - 'a' + 10);
        } else if (hex && c >= 'A' && c <= 'F') {
          d = static_cast<uint32_t>(c - 'A' + 10);
        } else {
          return Fail("bad character reference");
        }
        cp = cp * (hex ? 16 : 10) + d;
        if (cp > 0x10FFFF) return Fail("character reference out of range");
      }
      const bool allowed = cp == 0x9 || cp == 0xA || cp == 0xD ||
                           (cp >= 0x20 && cp <= 0xD7FF) ||
                           (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
      if (!allowed) return Fail("reference to a character XML forbids");
      AppendUtf8(cp, out);
    } else {
      return Fail("unknown entity '" + std::string(ref) + "'");
    }
    return true;
  }

  // Character data up to the next '<'.
  bool CharData(std::string& out) {
    while (!AtEnd() && text_[pos_] != '<') {
      const char c = text_[pos_++];
      if (c == '&') {
        if (!Reference(out)) return false;
      } else if (c == '>' && out.size() >= 2 &&
                 out.compare(out.size() - 2, 2, "]]") == 0) {
        return Fail("']]>' in text");
      } else if (static_cast<unsigned char>(c) < 0x20 && c != '\t' &&
                 c != '\n' && c != '\r') {
        return Fail("control character in text");
      } else {
        out += c;
      }
    }
    return true;
  }

  bool Element(XmlElement& element, int depth) {
    if (depth > 64) return Fail("nested too deeply");
    ++pos_;  // <
    if (!Name(element.name)) return false;
    for (;;) {
      const size_t before = pos_;
      SkipSpace();
      if (AtEnd()) return Fail("unterminated start tag");
      if (StartsWith("/>")) {
        pos_ += 2;
        return true;
      }
      if (text_[pos_] == '>') {
        ++pos_;
        break;
      }
      if (pos_ == before) return Fail("expected space before an attribute");
      std::string key, value;
      if (!Name(key)) return false;
      if (element.Attribute(key)) {
        return Fail("duplicate attribute '" + key + "'");
      }
      SkipSpace();
      if (AtEnd() || text_[pos_] != '=') return Fail("expected '='");
      ++pos_;
      SkipSpace();
      if (AtEnd() || (text_[pos_] != '"' && text_[pos_] != '\'')) {
        return Fail("unquoted attribute value");
      }
      const char quote = text_[pos_++];
      for (;;) {
        if (AtEnd()) return Fail("unterminated attribute value");
        const char c = text_[pos_++];
        if (c == quote) break;
        if (c == '<') return Fail("'<' in an attribute value");
        if (c == '&') {
          if (!Reference(value)) return false;
        } else if (static_cast<unsigned char>(c) < 0x20 && c != '\t' &&
                   c != '\n' && c != '\r') {
          return Fail("control character in an attribute value");
        } else {
          value += c;
        }
      }
      element.attributes.emplace_back(std::move(key), std::move(value));
    }
    // Content up to the matching end tag.
    for (;;) {
      if (!CharData(element.text)) return false;
      if (AtEnd()) return Fail("missing </" + element.name + ">");
      if (StartsWith("</")) {
        pos_ += 2;
        std::string name;
        if (!Name(name)) return false;
        if (name != element.name) {
          return Fail("</" + name + "> closes <" + element.name + ">");
        }
        SkipSpace();
        if (AtEnd() || text_[pos_] != '>') return Fail("expected '>'");
        ++pos_;
        return true;
      }
      if (StartsWith("<!--") || StartsWith("<?")) {
        if (!SkipMisc()) return false;
        continue;
      }
      if (StartsWith("<!")) return Fail("unsupported markup declaration");
      XmlElement child;
      if (!Element(child, depth + 1)) return false;
      element.children.push_back(std::move(child));
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace mtlemu::traces::testing
