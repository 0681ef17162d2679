#include "bulkhead/util/time_format.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(TimeFormatTest, FormatsUtcWithTrimmedFraction) {
  EXPECT_EQ(FormatRfc3339(FromUnixMicros(0)), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(FromUnixMicros(1'700'000'000'123'400)), "2023-11-14T22:13:20.1234Z");
}

TEST(TimeFormatTest, ParsesWhatItFormats) {
  auto t = FromUnixMicros(1'700'000'000'123'456);
  auto parsed = ParseRfc3339(FormatRfc3339(t));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, t);
}

TEST(TimeFormatTest, ParsesOffsetsAndNodeIsoStrings) {
  auto a = ParseRfc3339("2023-11-14T22:13:20.000Z");
  auto b = ParseRfc3339("2023-11-15T00:13:20+02:00");
  auto c = ParseRfc3339("2023-11-14T22:13:20.123456789Z");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(ToUnixMicros(*c) - ToUnixMicros(*a), 123456);
}

TEST(TimeFormatTest, RejectsMalformedWithReason) {
  for (const char* s : {"", "2023-11-14", "2023-11-14T22:13:20", "2023-13-14T22:13:20Z",
                        "2023-11-14T22:13:20Zjunk", "yesterday"}) {
    auto r = ParseRfc3339(s);
    EXPECT_FALSE(r.ok()) << s;
    EXPECT_NE(r.status().message().find("invalid RFC 3339 timestamp"), std::string::npos);
  }
}

TEST(TimeFormatTest, FormatsDate) { EXPECT_EQ(FormatDate(FromUnixMicros(0)), "1970-01-01"); }

}  // namespace
}  // namespace bulkhead
