#include "bulkhead/util/log_limiter.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

using std::chrono::seconds;

TEST(LogLimiterTest, FirstLineThenOnePerIntervalWithTheDroppedCount) {
  ManualClock clock;
  LogLimiter limiter(clock, seconds(10));
  EXPECT_EQ(limiter.Admit("accept"), 0);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(limiter.Admit("accept"), std::nullopt);
  clock.Advance(seconds(9));
  EXPECT_EQ(limiter.Admit("accept"), std::nullopt);
  clock.Advance(seconds(1));
  EXPECT_EQ(limiter.Admit("accept"), 1001);
  EXPECT_EQ(limiter.Admit("accept"), std::nullopt);
  clock.Advance(seconds(10));
  EXPECT_EQ(limiter.Admit("accept"), 1);
}

TEST(LogLimiterTest, KindsAreLimitedApart) {
  ManualClock clock;
  LogLimiter limiter(clock, seconds(10));
  EXPECT_EQ(limiter.Admit("login:10.0.0.1"), 0);
  EXPECT_EQ(limiter.Admit("login:10.0.0.2"), 0);
  EXPECT_EQ(limiter.Admit("login:10.0.0.1"), std::nullopt);
}

TEST(LogLimiterTest, RemembersAtMostMaxKeys) {
  ManualClock clock;
  LogLimiter limiter(clock, seconds(10), 2);
  EXPECT_EQ(limiter.Admit("a"), 0);
  EXPECT_EQ(limiter.Admit("b"), 0);
  EXPECT_EQ(limiter.Admit("c"), 0);  // forgets "a"
  EXPECT_EQ(limiter.Admit("a"), 0) << "a forgotten kind starts again";
  EXPECT_EQ(limiter.Admit("c"), std::nullopt);
}

TEST(LogLimiterTest, SuppressedNote) {
  EXPECT_EQ(LogLimiter::SuppressedNote(0), "");
  EXPECT_EQ(LogLimiter::SuppressedNote(1), " (1 similar line suppressed)");
  EXPECT_EQ(LogLimiter::SuppressedNote(42), " (42 similar lines suppressed)");
}

}  // namespace
}  // namespace bulkhead
