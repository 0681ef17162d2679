#include "bulkhead/dashboard/html.h"

#include <gtest/gtest.h>

namespace bulkhead::dashboard {
namespace {

using namespace std::chrono_literals;

TEST(UrlTest, EncodeLeavesOnlyUnreservedCharacters) {
  EXPECT_EQ(UrlEncode("javascript:alert(1)"), "javascript%3Aalert%281%29");
  EXPECT_EQ(UrlEncode("a b&c=d\"<"), "a%20b%26c%3Dd%22%3C");
  EXPECT_EQ(UrlDecode(UrlEncode("x y/\xff")), "x y/\xff");
  EXPECT_EQ(UrlDecode("a+b%2"), "a b%2");  // a malformed escape stays as it is
}

TEST(FormFieldsTest, ParsesRepeatedFieldsAndNumbers) {
  FormFields f = FormFields::Parse("jid=a&jid=b%20c&csrf=t&offset=30&bad=x1&&empty=");
  EXPECT_EQ(f.GetAll("jid"), (std::vector<std::string>{"a", "b c"}));
  EXPECT_EQ(f.Get("csrf"), "t");
  EXPECT_EQ(f.Get("empty", "fallback"), "");
  EXPECT_EQ(f.Get("missing", "fallback"), "fallback");
  EXPECT_EQ(f.GetInt("offset", 0, 0, 100), 30);
  EXPECT_EQ(f.GetInt("offset", 0, 0, 10), 10);
  EXPECT_EQ(f.GetInt("bad", 7, 0, 10), 7);
  EXPECT_EQ(f.GetInt("missing", 7, 0, 10), 7);
}

TEST(TimeTextTest, RelativeWithExactUtcOnHover) {
  TimePoint now = FromUnixMicros(1'700'000'000'000'000);
  EXPECT_EQ(RelativeTime(now, now), "just now");
  EXPECT_EQ(RelativeTime(now - 42s, now), "42 s ago");
  EXPECT_EQ(RelativeTime(now - 3min - 5s, now), "3 min ago");
  EXPECT_EQ(RelativeTime(now + 2h, now), "in 2 h");
  EXPECT_EQ(RelativeTime(now - 72h, now), "3 d ago");
  EXPECT_EQ(TimeTag(now - 180s, now),
            "<time datetime=\"2023-11-14T22:10:20Z\" title=\"2023-11-14 22:10:20 UTC\">3 min "
            "ago</time>");
  EXPECT_EQ(DurationText(850ms), "850 ms");
  EXPECT_EQ(DurationText(184s), "3 min 4 s");
}

}  // namespace
}  // namespace bulkhead::dashboard
