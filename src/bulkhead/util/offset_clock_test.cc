#include "bulkhead/util/offset_clock.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

TEST(OffsetClockTest, FollowsItsBaseUntilMoved) {
  ManualClock base;
  OffsetClock clock(base);
  EXPECT_EQ(clock.Now(), base.Now());
  base.Advance(5s);
  EXPECT_EQ(clock.Now(), base.Now());
  EXPECT_EQ(clock.offset(), Duration::zero());
  EXPECT_EQ(clock.timer_source(), nullptr);
}

TEST(OffsetClockTest, AdvanceMovesEveryLaterReadingForward) {
  ManualClock base;
  OffsetClock clock(base);
  ASSERT_TRUE(clock.Advance(std::chrono::hours(24 * 7)).ok());
  ASSERT_TRUE(clock.Advance(90s).ok());
  EXPECT_EQ(clock.Now(), base.Now() + std::chrono::hours(24 * 7) + 90s);
  base.Advance(1s);
  EXPECT_EQ(clock.Now(), base.Now() + std::chrono::hours(24 * 7) + 90s);
  EXPECT_EQ(clock.offset(), std::chrono::hours(24 * 7) + 90s);
}

TEST(OffsetClockTest, RefusesToGoBackOrTooFar) {
  ManualClock base;
  OffsetClock clock(base);
  Status back = clock.Advance(-1s);
  EXPECT_EQ(back.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(back.message().find("only moves forward"), std::string::npos) << back.message();
  ASSERT_TRUE(clock.Advance(std::chrono::hours(24 * 365 * 9)).ok());
  Status far = clock.Advance(std::chrono::hours(24 * 365 * 2));
  EXPECT_EQ(far.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(far.message().find("at most 10 years"), std::string::npos) << far.message();
  EXPECT_EQ(clock.offset(), std::chrono::hours(24 * 365 * 9)) << "a refused move changes nothing";
}

TEST(OffsetClockTest, ConcurrentMovesAllCount) {
  ManualClock base;
  OffsetClock clock(base);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) ASSERT_TRUE(clock.Advance(1ms).ok());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(clock.offset(), 4000ms);
}

}  // namespace
}  // namespace bulkhead
