#include "bulkhead/compartment/adaptive_limit.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

AdaptiveLimitConfig LimitTestConfig() {
  AdaptiveLimitConfig c;
  c.initial_limit = 4;
  c.min_limit = 1;
  c.max_limit = 10;
  c.additive_increase = 1.0;
  c.decrease_factor = 0.5;
  c.latency_threshold = seconds(2);
  return c;
}

class AdaptiveLimitTest : public ::testing::Test {
 protected:
  // A healthy success of an attempt that ran `latency`, with the cap in use.
  void Success(Duration latency = milliseconds(100)) {
    clock_.Advance(milliseconds(1));
    limit_.OnResult(LimitSignal::kSuccess, latency, clock_.Now(), limit_.limit());
  }
  // A congestion signal from an attempt that started after every earlier decrease.
  void Congestion(Duration latency = milliseconds(100)) {
    clock_.Advance(latency + milliseconds(1));
    limit_.OnResult(LimitSignal::kCongestion, latency, clock_.Now(), limit_.limit());
  }

  ManualClock clock_;
  AdaptiveLimitConfig config_ = LimitTestConfig();
  AdaptiveLimit limit_{config_};
};

TEST_F(AdaptiveLimitTest, StartsAtInitial) {
  EXPECT_EQ(limit_.limit(), 4);
  EXPECT_EQ(limit_.baseline(), Duration::zero());
}

TEST_F(AdaptiveLimitTest, GrowsByAboutOnePerLimitSuccesses) {
  for (int i = 0; i < 3; ++i) Success();
  EXPECT_EQ(limit_.limit(), 4);  // 4 + 1/4 + 1/4.25 + 1/4.48 < 5
  Success();
  EXPECT_EQ(limit_.limit(), 4);
  Success();
  EXPECT_EQ(limit_.limit(), 5);
}

TEST_F(AdaptiveLimitTest, GrowthStopsAtCeiling) {
  for (int i = 0; i < 1000; ++i) Success();
  EXPECT_EQ(limit_.limit(), 10);
  EXPECT_DOUBLE_EQ(limit_.raw_limit(), 10.0);
}

TEST_F(AdaptiveLimitTest, NoGrowthWhileTheCapIsNotInUse) {
  for (int i = 0; i < 100; ++i) {
    clock_.Advance(milliseconds(1));
    // One attempt in flight (it just finished: 0 left) against a cap of 4: not using the cap.
    limit_.OnResult(LimitSignal::kSuccess, milliseconds(100), clock_.Now(), 0);
  }
  EXPECT_DOUBLE_EQ(limit_.raw_limit(), 4.0);
  // Two in flight before this one finished (1 left + this one) is half the cap: grows.
  limit_.OnResult(LimitSignal::kSuccess, milliseconds(100), clock_.Now(), 1);
  EXPECT_DOUBLE_EQ(limit_.raw_limit(), 4.25);
}

TEST_F(AdaptiveLimitTest, CongestionHalves) {
  Congestion();
  EXPECT_EQ(limit_.limit(), 2);
  EXPECT_EQ(limit_.decreases(), 1);
  Congestion();
  EXPECT_EQ(limit_.limit(), 1);
}

TEST_F(AdaptiveLimitTest, FloorHolds) {
  for (int i = 0; i < 50; ++i) Congestion();
  EXPECT_EQ(limit_.limit(), 1);
  EXPECT_DOUBLE_EQ(limit_.raw_limit(), 1.0);
}

TEST_F(AdaptiveLimitTest, BurstOfTimeoutsFromOneWindowDecreasesOnce) {
  // Four attempts start together and all time out 30 s later.
  clock_.Advance(seconds(30));
  for (int i = 0; i < 4; ++i) {
    limit_.OnResult(LimitSignal::kCongestion, seconds(30), clock_.Now(), 3 - i);
  }
  EXPECT_EQ(limit_.limit(), 2);
  EXPECT_EQ(limit_.decreases(), 1);
  // One that started just before the decrease and ends later still belongs to that window.
  clock_.Advance(seconds(1));
  limit_.OnResult(LimitSignal::kCongestion, seconds(2), clock_.Now(), 0);
  EXPECT_EQ(limit_.decreases(), 1);
  // One that started after the decrease is new evidence.
  clock_.Advance(seconds(30));
  limit_.OnResult(LimitSignal::kCongestion, seconds(30), clock_.Now(), 0);
  EXPECT_EQ(limit_.limit(), 1);
  EXPECT_EQ(limit_.decreases(), 2);
}

TEST_F(AdaptiveLimitTest, SlowSuccessIsCongestion) {
  Success(seconds(2));  // at the threshold: healthy
  EXPECT_GT(limit_.raw_limit(), 4.0);
  Success(seconds(2) + milliseconds(1));
  EXPECT_EQ(limit_.limit(), 2);
}

TEST_F(AdaptiveLimitTest, IgnoreChangesNothing) {
  clock_.Advance(seconds(1));
  limit_.OnResult(LimitSignal::kIgnore, seconds(60), clock_.Now(), 4);
  EXPECT_DOUBLE_EQ(limit_.raw_limit(), 4.0);
  EXPECT_EQ(limit_.decreases(), 0);
}

TEST_F(AdaptiveLimitTest, RecoversAdditivelyAfterDecrease) {
  for (int i = 0; i < 1000; ++i) Success();
  ASSERT_EQ(limit_.limit(), 10);
  Congestion();
  EXPECT_EQ(limit_.limit(), 5);
  // From 5 back to 10 takes about 5 + 6 + 7 + 8 + 9 = 35 successes.
  int n = 0;
  while (limit_.limit() < 10) {
    Success();
    ++n;
  }
  EXPECT_GE(n, 30);
  EXPECT_LE(n, 40);
}

TEST(AdaptiveLimitBaselineTest, SuccessSlowerThanToleranceTimesBaselineIsCongestion) {
  AdaptiveLimitConfig c = LimitTestConfig();
  c.latency_threshold = seconds(10);
  c.baseline_tolerance = 3.0;
  c.baseline_window = 4;
  AdaptiveLimit limit(c);
  ManualClock clock;
  auto feed = [&](Duration latency) {
    clock.Advance(seconds(1));
    limit.OnResult(LimitSignal::kSuccess, latency, clock.Now(), limit.limit());
  };
  feed(milliseconds(100));
  EXPECT_EQ(limit.baseline(), milliseconds(100));
  feed(milliseconds(300));  // exactly 3×: healthy
  EXPECT_EQ(limit.decreases(), 0);
  feed(milliseconds(301));
  EXPECT_EQ(limit.decreases(), 1);
  // The baseline is a window minimum: after 4 newer samples the 100 ms one is gone.
  for (int i = 0; i < 4; ++i) feed(milliseconds(400));
  EXPECT_EQ(limit.baseline(), milliseconds(400));
}

TEST(AdaptiveLimitBaselineTest, TinyLatenciesNeverCountAsSlow) {
  AdaptiveLimitConfig c = LimitTestConfig();
  c.baseline_tolerance = 2.0;
  AdaptiveLimit limit(c);
  ManualClock clock;
  clock.Advance(seconds(1));
  limit.OnResult(LimitSignal::kSuccess, milliseconds(1), clock.Now(), 4);
  clock.Advance(seconds(1));
  limit.OnResult(LimitSignal::kSuccess, milliseconds(40), clock.Now(), 4);  // 40× but < 50 ms
  EXPECT_EQ(limit.decreases(), 0);
}

TEST(AdaptiveLimitConfigTest, NonsenseIsSanitised) {
  AdaptiveLimitConfig c;
  c.min_limit = 0;
  c.max_limit = -5;
  c.initial_limit = 100;
  c.decrease_factor = 0;
  AdaptiveLimit limit(c);
  EXPECT_EQ(limit.limit(), 1);  // min 1, max raised to min, initial clamped
  AdaptiveLimitConfig d;
  d.initial_limit = 0;
  d.min_limit = 3;
  d.max_limit = 8;
  d.decrease_factor = 5.0;  // clamped to 0.95
  AdaptiveLimit l2(d);
  EXPECT_EQ(l2.limit(), 3);
  ManualClock clock;
  for (int i = 0; i < 100; ++i) {
    clock.Advance(seconds(1));
    l2.OnResult(LimitSignal::kSuccess, std::chrono::milliseconds(10), clock.Now(), 8);
  }
  ASSERT_EQ(l2.limit(), 8);
  clock.Advance(seconds(1));
  l2.OnResult(LimitSignal::kCongestion, std::chrono::milliseconds(10), clock.Now(), 8);
  EXPECT_DOUBLE_EQ(l2.raw_limit(), 8 * 0.95);
}

// Cluster share: each of N nodes gets the bounds divided by N (floor, at least 1), and the
// current cap scales by old/new N into them.
TEST_F(AdaptiveLimitTest, NodesDivideTheBoundsAndScaleTheCap) {
  limit_.SetNodes(3);
  EXPECT_EQ(limit_.max_limit(), 3) << "10 / 3, floor";
  EXPECT_EQ(limit_.min_limit(), 1) << "1 / 3 is never below 1";
  EXPECT_EQ(limit_.limit(), 1) << "4 / 3 = 1.33";
  for (int i = 0; i < 50; ++i) Success();
  EXPECT_EQ(limit_.limit(), 3) << "growth stops at the node's share of max_limit";
  limit_.SetNodes(1);
  EXPECT_EQ(limit_.max_limit(), 10);
  EXPECT_EQ(limit_.limit(), 9) << "3 x 3: the same cluster-wide cap";
  limit_.SetNodes(0);
  EXPECT_EQ(limit_.nodes(), 1) << "values < 1 act as 1";
  limit_.SetNodes(20);
  EXPECT_EQ(limit_.max_limit(), 1) << "more nodes than max_limit: 1 each";
  EXPECT_EQ(limit_.limit(), 1);
}

}  // namespace
}  // namespace bulkhead
