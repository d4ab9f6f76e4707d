#include "traces/escape.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace mtlemu::traces {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::string Json(std::string_view text) {
  std::string out = "[";  // appends, never replaces
  AppendJsonEscaped(text, out);
  return out;
}

std::string Xml(std::string_view text) {
  std::string out;
  AppendXmlEscaped(text, out);
  return out;
}

TEST(JsonEscape, QuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(Json("plain name_1"), "[plain name_1");
  EXPECT_EQ(Json(R"(a "b" \c)"), R"([a \"b\" \\c)");
  EXPECT_EQ(Json("\n\r\t\b\f"), R"([\n\r\t\b\f)");
  EXPECT_EQ(Json(std::string_view("\x01\x1f\0", 3)), R"([\u0001\u001f\u0000)");
  EXPECT_EQ(Json("/ ' < > \x7f"), "[/ ' < > \x7f");
}

TEST(JsonEscape, KeepsUtf8AndReplacesWhatIsNot) {
  EXPECT_EQ(Json("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "[\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");  // é € 😀
  const std::string r(kReplacement);
  EXPECT_EQ(Json("a\xff"), "[a" + r);
  EXPECT_EQ(Json("\xc0\xaf"), "[" + r + r);                  // overlong '/'
  EXPECT_EQ(Json("\xed\xa0\x80"), "[" + r + r + r);          // a surrogate
  EXPECT_EQ(Json("\xf4\x90\x80\x80"), "[" + r + r + r + r);  // > U+10FFFF
  EXPECT_EQ(Json("\xe2\x82"), "[" + r + r);  // cut short at the end
  EXPECT_EQ(Json("\xe2\x82x"), "[" + r + r + "x");
}

TEST(XmlEscape, MarkupCharactersBecomeEntities) {
  EXPECT_EQ(Xml(R"(A&B <"x"> 'y')"),
            "A&amp;B &lt;&quot;x&quot;&gt; &apos;y&apos;");
  EXPECT_EQ(Xml("a\tb\nc\rd"), "a&#9;b&#10;c&#13;d");
}

TEST(XmlEscape, CharactersXmlForbidsAreReplaced) {
  const std::string r(kReplacement);
  EXPECT_EQ(Xml(std::string_view("a\x01\0b", 4)), "a" + r + r + "b");
  EXPECT_EQ(Xml("\xef\xbf\xbe\xef\xbf\xbf"), r + r);  // U+FFFE, U+FFFF
  EXPECT_EQ(Xml("\xff"), r);
  EXPECT_EQ(Xml("\xc3\xa9"), "\xc3\xa9");
}

}  // namespace
}  // namespace mtlemu::traces
