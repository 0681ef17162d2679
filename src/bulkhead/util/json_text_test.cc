#include "bulkhead/util/json_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bulkhead {
namespace {

using Views = std::vector<std::string_view>;

TEST(JsonArrayElementsTest, SplitsAtTopLevelCommasOnly) {
  std::string text = R"( [ {"a":"x,]}","b":[1,2]} , 1,"s\"],[" ,[2,{"c":3}], null ] )";
  EXPECT_EQ(JsonArrayElements(text),
            (Views{R"({"a":"x,]}","b":[1,2]})", "1", R"("s\"],[")", R"([2,{"c":3}])", "null"}));
}

TEST(JsonArrayElementsTest, EmptyArraysHaveNoElements) {
  EXPECT_TRUE(JsonArrayElements("[]").empty());
  EXPECT_TRUE(JsonArrayElements(" [ \t\r\n ] ").empty());
  EXPECT_EQ(JsonArrayElements("[{}]"), (Views{"{}"}));
}

TEST(JsonArrayElementsTest, AStringEndingInAnEscapedBackslashEndsThere) {
  EXPECT_EQ(JsonArrayElements(R"(["a\\",{"b":"c"}])"), (Views{R"("a\\")", R"({"b":"c"})"}));
}

TEST(JsonObjectMemberCountTest, CountsMembersAsWrittenRepeatsIncluded) {
  EXPECT_EQ(JsonObjectMemberCount("{}"), 0u);
  EXPECT_EQ(JsonObjectMemberCount(" { } "), 0u);
  EXPECT_EQ(JsonObjectMemberCount(R"({"a":1})"), 1u);
  EXPECT_EQ(JsonObjectMemberCount(R"({"a":{"b":1,"c":[2,3]},"d":"},{,"})"), 2u);
  EXPECT_EQ(JsonObjectMemberCount(R"({"a":1,"a":2})"), 2u) << "the parsed document holds one";
}

TEST(HasUnicodeEscapeTest, SeesEscapesButNotAnEscapedBackslashBeforeU) {
  EXPECT_TRUE(HasUnicodeEscape(R"({"\u0062id":1})"));
  EXPECT_TRUE(HasUnicodeEscape(R"("a\\\u0041")"));
  EXPECT_FALSE(HasUnicodeEscape(R"("a\\u0041")")) << "a backslash, then the letters u0041";
  EXPECT_FALSE(HasUnicodeEscape(R"({"a":"\"\n\/"})"));
  EXPECT_FALSE(HasUnicodeEscape("\\"));
  EXPECT_FALSE(HasUnicodeEscape(""));
}

TEST(TrimJsonWhitespaceTest, TrimsOnlyJsonWhitespace) {
  EXPECT_EQ(TrimJsonWhitespace(" \t\r\n{}\n "), "{}");
  EXPECT_EQ(TrimJsonWhitespace("\v{}"), "\v{}") << "not JSON whitespace";
  EXPECT_EQ(TrimJsonWhitespace("   "), "");
}

}  // namespace
}  // namespace bulkhead
