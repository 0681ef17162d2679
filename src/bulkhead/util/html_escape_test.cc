#include "bulkhead/util/html_escape.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(HtmlEscapeTest, MarkupAndQuotesBecomeEntities) {
  EXPECT_EQ(HtmlEscape("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(HtmlEscape("\"><img src=x onerror=alert(1)>"),
            "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;");
  EXPECT_EQ(HtmlEscape("a'b&c"), "a&#39;b&amp;c");
  EXPECT_EQ(HtmlEscape("javascript:alert(1)"), "javascript:alert(1)");  // text, never a link
}

TEST(HtmlEscapeTest, KeepsUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(HtmlEscape("héllo ✓"), "héllo ✓");
  EXPECT_EQ(HtmlEscape(std::string("a\xff<b")), "a\xEF\xBF\xBD&lt;b");
  EXPECT_EQ(HtmlEscape(std::string("\xe2\x9c")), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace bulkhead
