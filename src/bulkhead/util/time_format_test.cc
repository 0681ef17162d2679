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

// Found by fuzz/fuzz_fwp (a PUSH with "at":"5251-01-02T03:04:05.678Z", and year 1015): years a
// nanosecond TimePoint cannot hold overflowed int64 (UB) instead of being refused.
TEST(TimeFormatTest, RefusesYearsATimePointCannotHold) {
  for (const char* s :
       {"5251-01-02T03:04:05.678Z", "1015-01-02T03:04:05.678Z", "9999-12-31T23:59:60Z",
        "0000-01-01T00:00:00Z", "2262-04-11T00:00:00Z", "1677-12-31T23:59:59+00:00"}) {
    auto r = ParseRfc3339(s);
    EXPECT_FALSE(r.ok()) << s;
    EXPECT_NE(r.status().message().find("year out of range"), std::string::npos) << s;
  }
  auto first = ParseRfc3339("1678-01-01T00:00:00-23:59");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(FormatRfc3339(*first), "1678-01-01T23:59:00Z");
  auto last = ParseRfc3339("2261-12-31T23:59:60.999999+00:00");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(FormatRfc3339(*last), "2262-01-01T00:00:00.999999Z");
}

TEST(TimeFormatTest, FormatsDate) { EXPECT_EQ(FormatDate(FromUnixMicros(0)), "1970-01-01"); }

}  // namespace
}  // namespace bulkhead
