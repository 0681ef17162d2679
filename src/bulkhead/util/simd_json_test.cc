#include "bulkhead/util/simd_json.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bulkhead/util/json.h"

namespace bulkhead {
namespace {

// simdjson's document of `text` written out by nlohmann, for comparing with ParseJson's.
std::string Written(const simdjson::dom::element& root) {
  return DumpJson(nlohmann::json::parse(simdjson::minify(root)));
}

TEST(SimdJsonTest, ReadsWhatNlohmannReadsTheSameWay) {
  const std::vector<std::string> texts = {
      R"([{"jid":"0123456789abcdef0123","jobtype":"Push","args":[1,-2,3.5,"x",true,null]}])",
      R"({"a":{"b":[[],{},[{}]]},"c":0})",
      R"(["tab\t quote\" slash\/ back\\ nl\n","\u00e9\ud83d\ude00","\u0000"])",
      R"([0, -1, 9223372036854775807, 9223372036854775808, 18446744073709551615])",
      R"([-9223372036854775808, 1.0, 1e2, -0.0, 2.5e-3, 1.7976931348623157e308])",
      "\"only a string\"",
      "42",
      "null",
      " [ ] ",
      "{}",
      "\"\xc3\xa9\"",
  };
  for (const std::string& text : texts) {
    simdjson::dom::element root;
    ASSERT_TRUE(SimdJsonParse(text, kDefaultMaxJsonDepth, root)) << text;
    auto doc = ParseJson(text, kDefaultMaxJsonDepth);
    ASSERT_TRUE(doc.ok()) << text;
    EXPECT_EQ(Written(root), DumpJson(*doc)) << text;
  }
}

TEST(SimdJsonTest, RefusesWhatNlohmannRefusesOrReadsOtherwise) {
  const std::vector<std::string> invalid = {
      "",     "[1,]",     "{\"a\":1} x", "[\"\xff\"]",    "[1e400]",
      "[01]", "[\"\t\"]", "[nul]",       "[\"\\ud800\"]", "[\"\\udc00x\"]",
  };
  for (const std::string& text : invalid) {
    ASSERT_FALSE(ParseJson(text, kDefaultMaxJsonDepth).ok()) << text;
    simdjson::dom::element root;
    EXPECT_FALSE(SimdJsonParse(text, kDefaultMaxJsonDepth, root)) << text;
  }
  // Valid to nlohmann, which reads a double for the first, skips the byte-order mark and ends the
  // text at a NUL byte.
  for (std::string text : {std::string("[18446744073709551616]"), std::string("\xef\xbb\xbf[1]"),
                           std::string("[1]\0", 4)}) {
    ASSERT_TRUE(ParseJson(text, kDefaultMaxJsonDepth).ok()) << text;
    simdjson::dom::element root;
    EXPECT_FALSE(SimdJsonParse(text, kDefaultMaxJsonDepth, root)) << text;
  }
}

TEST(SimdJsonTest, NeverAcceptsDeeperThanTheBound) {
  // Every nesting of 1 to 6 levels, of arrays or objects, the innermost empty or not, at bounds
  // 1 to 5: accepted only within the bound (nlohmann judges the rest).
  for (int bound = 1; bound <= 5; ++bound) {
    for (int levels = 1; levels <= 6; ++levels) {
      for (std::string inner : {"", "1"}) {
        for (bool objects : {false, true}) {
          std::string text;
          for (int i = 0; i < levels; ++i) text += objects ? "{\"k\":" : "[";
          text += objects ? (inner.empty() ? "{}" : inner) : inner;
          for (int i = 0; i < levels; ++i) text += objects ? "}" : "]";
          int depth = levels + (objects && inner.empty() ? 1 : 0);
          simdjson::dom::element root;
          if (SimdJsonParse(text, bound, root)) EXPECT_LE(depth, bound) << text;
        }
      }
    }
  }
  // Well within the bound, the fast path takes it.
  simdjson::dom::element root;
  EXPECT_TRUE(SimdJsonParse(std::string(63, '[') + "1" + std::string(63, ']'), 64, root));
}

TEST(SimdJsonTest, LeavesLongTextsToNlohmann) {
  simdjson::dom::element root;
  EXPECT_FALSE(SimdJsonParse("[\"" + std::string(kSimdJsonMaxBytes, 'a') + "\"]", 64, root));
  ASSERT_TRUE(SimdJsonParse("[\"" + std::string(kSimdJsonMaxBytes - 4, 'a') + "\"]", 64, root));
  EXPECT_EQ(root.at(0).get_string().value().size(), kSimdJsonMaxBytes - 4);
}
}  // namespace
}  // namespace bulkhead
