#include "bulkhead/relay/rate_limiter.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

const TimePoint kT0 = FromUnixMicros(1'800'000'000'000'000);

TEST(RateLimiterTest, BurstThenTheRate) {
  RateLimiter limiter(2, std::chrono::seconds(1), 3);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(limiter.Take("a", kT0).has_value());
  auto wait = limiter.Take("a", kT0);
  ASSERT_TRUE(wait.has_value());
  EXPECT_EQ(*wait, std::chrono::milliseconds(500));  // one more at 2/s
  EXPECT_FALSE(limiter.Take("b", kT0).has_value());  // another key has its own bucket
  EXPECT_FALSE(limiter.Take("a", kT0 + std::chrono::milliseconds(500)).has_value());
  EXPECT_TRUE(limiter.Take("a", kT0 + std::chrono::milliseconds(500)).has_value());
}

TEST(RateLimiterTest, ZeroRateIsNoLimit) {
  RateLimiter limiter(0, std::chrono::seconds(1), 1);
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(limiter.Take("a", kT0).has_value());
  EXPECT_EQ(limiter.keys(), 0u);
}

TEST(RateLimiterTest, KeysAreBounded) {
  RateLimiter limiter(1, std::chrono::minutes(1), 2, 100);
  for (int i = 0; i < 1000; ++i)
    limiter.Take("k" + std::to_string(i), kT0 + std::chrono::seconds(i));
  EXPECT_LE(limiter.keys(), 100u);
  // A key just used keeps its state: its bucket is not refilled by a trim.
  const TimePoint now = kT0 + std::chrono::seconds(1000);
  limiter.Take("hot", now);
  limiter.Take("hot", now);
  EXPECT_TRUE(limiter.Take("hot", now).has_value());
}

}  // namespace
}  // namespace bulkhead
