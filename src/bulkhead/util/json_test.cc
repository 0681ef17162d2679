#include "bulkhead/util/json.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(ParseJsonTest, ParsesAnObject) {
  auto doc = ParseJson(R"({"a":[1,2,{"b":null}],"c":"x"})", 64);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["a"][2].size(), 1u);
  EXPECT_EQ((*doc)["c"], "x");
}

TEST(ParseJsonTest, SyntaxErrorNamesThePosition) {
  auto doc = ParseJson(R"({"a":)", 64);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(doc.status().message().rfind("invalid JSON: parse error at line 1, column 6", 0), 0u)
      << doc.status().message();
}

TEST(ParseJsonTest, NumberOverflowIsAnErrorNotAnException) {
  // nlohmann reports this as out_of_range.406, which an earlier version let escape.
  auto doc = ParseJson(R"({"v":2,"x":1e400})", 64);
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.status().message().find("number overflow parsing '1e400'"), std::string::npos)
      << doc.status().message();
}

TEST(ParseJsonTest, DepthAtTheLimitParsesOneDeeperIsRefused) {
  std::string at_limit = std::string(8, '[') + std::string(8, ']');
  EXPECT_TRUE(ParseJson(at_limit, 8).ok());
  std::string deeper = std::string(9, '[') + std::string(9, ']');
  auto doc = ParseJson(deeper, 8);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().message(), "invalid JSON: nested deeper than 8 levels (max_json_depth)");
  std::string objects;
  for (int i = 0; i < 9; ++i) objects += "{\"a\":";
  objects += "1" + std::string(9, '}');
  EXPECT_FALSE(ParseJson(objects, 8).ok());
}

TEST(ParseJsonTest, DeepNestingFarPastTheLimitIsRefusedWithoutRecursion) {
  // 75,000 levels overflowed the stack when the document was later dumped.
  std::string deep = R"({"jid":"abcdefgh","jobtype":"x","args":)" + std::string(75000, '[') +
                     std::string(75000, ']') + "}";
  auto doc = ParseJson(deep, kDefaultMaxJsonDepth);
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.status().message().find("nested deeper than 64 levels"), std::string::npos);
}

TEST(ParseJsonTest, InvalidUtf8InAStringIsASyntaxError) {
  auto doc = ParseJson("{\"a\":\"\xff\"}", 64);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().message().rfind("invalid JSON: parse error", 0), 0u);
}

TEST(ParseJsonTest, TrailingGarbageIsRefused) { EXPECT_FALSE(ParseJson("{} x", 64).ok()); }

TEST(DumpJsonTest, InvalidUtf8IsReplacedNotThrown) {
  nlohmann::json doc = {{"error", std::string("no such path: /\xff")}};
  EXPECT_EQ(DumpJson(doc), "{\"error\":\"no such path: /\xEF\xBF\xBD\"}");
}

TEST(IsValidUtf8Test, AcceptsWellFormedText) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("https://example.com/users/alice#main-key"));
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
}

TEST(IsValidUtf8Test, RefusesMalformedText) {
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xC3\x28"));          // bad continuation
  EXPECT_FALSE(IsValidUtf8("\xC3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong, 3 bytes
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\x80"));              // lone continuation
}

TEST(TextContainsTest, FindsTheNeedleAnywhereAndOnlyWhenWholly) {
  const std::string payload = R"({"args":[],"custom":{"track":1},"jid":"a","queue":"q"})";
  EXPECT_TRUE(TextContains(payload, "\"track\""));
  EXPECT_TRUE(TextContains(payload, "{\"args\""));  // at the start
  EXPECT_TRUE(TextContains(payload, "\"q\"}"));     // at the end
  EXPECT_FALSE(TextContains(payload, "\"bid\""));
  EXPECT_FALSE(TextContains(payload, "\"trac\"\""));  // a prefix is not the needle
  EXPECT_FALSE(TextContains("\"tr", "\"track\""));    // longer than the text
  EXPECT_TRUE(TextContains(payload, ""));
  EXPECT_FALSE(TextContains("", "\"bid\""));
}

}  // namespace
}  // namespace bulkhead
