#include "bulkhead/bridge/sidekiq_time.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(SidekiqTimeTest, EachVersionsFormIsWrittenAndBothAreRead) {
  TimePoint t = FromUnixMicros(1'700'000'000'123'456);
  nlohmann::json seconds = SidekiqTimestamp(t, SidekiqTimeFormat::kFloatSeconds);
  nlohmann::json millis = SidekiqTimestamp(t, SidekiqTimeFormat::kIntegerMilliseconds);
  EXPECT_TRUE(seconds.is_number_float());
  EXPECT_EQ(seconds.dump(), "1700000000.123456");
  EXPECT_TRUE(millis.is_number_integer());
  EXPECT_EQ(millis.dump(), "1700000000123");
  EXPECT_EQ(ReadSidekiqTimestamp(seconds), t);
  EXPECT_EQ(ReadSidekiqTimestamp(millis), FromUnixMicros(1'700'000'000'123'000));
  // Ruby writes a whole float with ".0": still seconds.
  EXPECT_EQ(ReadSidekiqTimestamp(nlohmann::json::parse("1700000000.0")),
            FromUnixMicros(1'700'000'000'000'000));
  EXPECT_EQ(ReadSidekiqTimestamp("1700000000"), std::nullopt);
  EXPECT_EQ(ReadSidekiqTimestamp(-1.0), std::nullopt);
  EXPECT_EQ(ReadSidekiqTimestamp(1e300), std::nullopt);
  EXPECT_EQ(ReadSidekiqTimestamp(int64_t{9'700'000'000'123}), std::nullopt)
      << "year 2277: past what a TimePoint holds";
  EXPECT_EQ(SidekiqScore(t), "1700000000.123456");
  EXPECT_EQ(ParseSidekiqTimeFormat("milliseconds"), SidekiqTimeFormat::kIntegerMilliseconds);
  EXPECT_EQ(ParseSidekiqTimeFormat("ms"), std::nullopt);
}

}  // namespace
}  // namespace bulkhead
