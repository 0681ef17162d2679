#include "bulkhead/compartment/circuit_breaker.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

CircuitBreakerConfig NoJitter() {
  CircuitBreakerConfig c;
  c.failure_threshold = 3;
  c.base_open_interval = seconds(30);
  c.backoff_multiplier = 2.0;
  c.max_open_interval = minutes(5);
  c.jitter_fraction = 0;
  return c;
}

class CircuitBreakerTest : public ::testing::Test {
 protected:
  BreakerPermit Acquire() {
    BreakerPermit p;
    EXPECT_TRUE(breaker_.TryAcquire(clock_.Now(), &p));
    return p;
  }
  void Fail(int n) {
    for (int i = 0; i < n; ++i) breaker_.OnFailure(Acquire(), clock_.Now());
  }
  // Opens the breaker from closed with fresh permits.
  void Trip() { Fail(config_.failure_threshold); }
  TimePoint Now() { return clock_.Now(); }

  ManualClock clock_;
  ScriptedRng rng_;
  CircuitBreakerConfig config_ = NoJitter();
  CircuitBreaker breaker_{config_, rng_};
};

TEST_F(CircuitBreakerTest, StartsClosedAndAdmitsEverything) {
  EXPECT_EQ(breaker_.state(Now()), BreakerState::kClosed);
  for (int i = 0; i < 100; ++i) {
    BreakerPermit p = Acquire();
    EXPECT_FALSE(p.probe);
  }
  EXPECT_EQ(breaker_.TimeUntilProbe(Now()), Duration::zero());
  EXPECT_EQ(breaker_.openings(), 0);
}

TEST_F(CircuitBreakerTest, OpensAfterThresholdConsecutiveFailures) {
  Fail(2);
  EXPECT_EQ(breaker_.state(Now()), BreakerState::kClosed);
  EXPECT_EQ(breaker_.consecutive_failures(), 2);
  Fail(1);
  EXPECT_EQ(breaker_.state(Now()), BreakerState::kOpen);
  EXPECT_EQ(breaker_.openings(), 1);
  EXPECT_EQ(breaker_.TimeUntilProbe(Now()), seconds(30));
  BreakerPermit p;
  EXPECT_FALSE(breaker_.TryAcquire(Now(), &p));
  EXPECT_FALSE(breaker_.CanAcquire(Now()));
}

TEST_F(CircuitBreakerTest, SuccessResetsTheConsecutiveCount) {
  Fail(2);
  breaker_.OnSuccess(Acquire(), Now());
  EXPECT_EQ(breaker_.consecutive_failures(), 0);
  Fail(2);
  EXPECT_EQ(breaker_.state(Now()), BreakerState::kClosed);
}

TEST_F(CircuitBreakerTest, HalfOpenAfterIntervalAdmitsOneProbe) {
  Trip();
  clock_.Advance(seconds(29));
  EXPECT_EQ(breaker_.state(Now()), BreakerState::kOpen);
  EXPECT_EQ(breaker_.TimeUntilProbe(Now()), seconds(1));
  clock_.Advance(seconds(1));
  EXPECT_EQ(breaker_.state(Now()), BreakerState::kHalfOpen);
  EXPECT_TRUE(breaker_.CanAcquire(Now()));
  BreakerPermit probe = Acquire();
  EXPECT_TRUE(probe.probe);
  BreakerPermit second;
  EXPECT_FALSE(breaker_.TryAcquire(Now(), &second));
  EXPECT_FALSE(breaker_.CanAcquire(Now()));
}

TEST_F(CircuitBreakerTest, ProbeSuccessCloses) {
  Trip();
  clock_.Advance(seconds(30));
  breaker_.OnSuccess(Acquire(), Now());
  EXPECT_EQ(breaker_.state(Now()), BreakerState::kClosed);
  EXPECT_EQ(breaker_.consecutive_failures(), 0);
  EXPECT_FALSE(Acquire().probe);
}

TEST_F(CircuitBreakerTest, ProbeFailureReopensWithDoubledInterval) {
  Trip();
  clock_.Advance(seconds(30));
  breaker_.OnFailure(Acquire(), Now());
  EXPECT_EQ(breaker_.state(Now()), BreakerState::kOpen);
  EXPECT_EQ(breaker_.openings(), 2);
  EXPECT_EQ(breaker_.series_openings(), 2);
  EXPECT_EQ(breaker_.TimeUntilProbe(Now()), seconds(60));
}

TEST_F(CircuitBreakerTest, IntervalGrowsExponentiallyAndIsCapped) {
  Trip();
  Duration expected[] = {seconds(30), seconds(60), seconds(120), seconds(240),
                         minutes(5),  minutes(5),  minutes(5)};
  for (Duration want : expected) {
    EXPECT_EQ(breaker_.TimeUntilProbe(Now()), want);
    clock_.Advance(want);
    breaker_.OnFailure(Acquire(), Now());
  }
  EXPECT_EQ(breaker_.openings(), 8);
}

TEST_F(CircuitBreakerTest, ManyOpeningsDoNotOverflow) {
  Trip();
  for (int i = 0; i < 2000; ++i) {
    clock_.Advance(breaker_.TimeUntilProbe(Now()));
    breaker_.OnFailure(Acquire(), Now());
  }
  EXPECT_EQ(breaker_.TimeUntilProbe(Now()), minutes(5));
}

TEST_F(CircuitBreakerTest, SeriesResetsAfterStayingClosed) {
  Trip();
  clock_.Advance(seconds(30));
  breaker_.OnFailure(Acquire(), Now());  // 60 s
  clock_.Advance(seconds(60));
  breaker_.OnSuccess(Acquire(), Now());  // closed
  // Reopened soon: the series continues (flapping host keeps backing off).
  clock_.Advance(minutes(1));
  Trip();
  EXPECT_EQ(breaker_.TimeUntilProbe(Now()), seconds(120));
  clock_.Advance(seconds(120));
  breaker_.OnSuccess(Acquire(), Now());
  // Closed for the whole series_reset_after: back to the base interval.
  clock_.Advance(config_.series_reset_after);
  Trip();
  EXPECT_EQ(breaker_.series_openings(), 1);
  EXPECT_EQ(breaker_.TimeUntilProbe(Now()), seconds(30));
}

TEST_F(CircuitBreakerTest, JitterAddsUpToFractionFromRng) {
  config_.jitter_fraction = 0.2;
  CircuitBreaker b(config_, rng_);
  // 30 s × 0.2 = 6 s spread in microseconds; Uniform(6'000'001) of 2'500'000 adds 2.5 s.
  rng_.Push(2'500'000);
  BreakerPermit p;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(b.TryAcquire(Now(), &p));
    b.OnFailure(p, Now());
  }
  EXPECT_EQ(b.TimeUntilProbe(Now()), std::chrono::milliseconds(32'500));
  // The largest jitter value.
  clock_.Advance(b.TimeUntilProbe(Now()));
  rng_.Push(12'000'000);
  ASSERT_TRUE(b.TryAcquire(Now(), &p));
  b.OnFailure(p, Now());
  EXPECT_EQ(b.TimeUntilProbe(Now()), seconds(72));
}

TEST_F(CircuitBreakerTest, JitterNeverExceedsCap) {
  config_.jitter_fraction = 0.5;
  config_.base_open_interval = minutes(5);
  CircuitBreaker b(config_, rng_);
  rng_.Push(150'000'000);  // the full +50 %
  BreakerPermit p;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(b.TryAcquire(Now(), &p));
    b.OnFailure(p, Now());
  }
  EXPECT_EQ(b.TimeUntilProbe(Now()), minutes(5));
}

TEST_F(CircuitBreakerTest, StaleResultsDoNotMoveTheState) {
  // Five attempts started while closed; three fail and open the breaker.
  std::vector<BreakerPermit> permits;
  for (int i = 0; i < 5; ++i) permits.push_back(Acquire());
  for (int i = 0; i < 3; ++i) breaker_.OnFailure(permits[i], Now());
  ASSERT_EQ(breaker_.state(Now()), BreakerState::kOpen);
  // The other two finish later: neither a failure nor a success from the old state counts.
  breaker_.OnFailure(permits[3], Now());
  EXPECT_EQ(breaker_.openings(), 1);
  EXPECT_EQ(breaker_.TimeUntilProbe(Now()), seconds(30));
  clock_.Advance(seconds(30));
  breaker_.OnSuccess(permits[4], Now());
  EXPECT_EQ(breaker_.state(Now()), BreakerState::kHalfOpen);
  // The probe slot is still free.
  EXPECT_TRUE(Acquire().probe);
}

TEST_F(CircuitBreakerTest, IgnoredProbeReleasesItsSlot) {
  Trip();
  clock_.Advance(seconds(30));
  BreakerPermit probe = Acquire();
  EXPECT_FALSE(breaker_.CanAcquire(Now()));
  breaker_.OnIgnored(probe, Now());
  EXPECT_EQ(breaker_.state(Now()), BreakerState::kHalfOpen);
  EXPECT_TRUE(breaker_.CanAcquire(Now()));
}

TEST_F(CircuitBreakerTest, IgnoredInClosedStateChangesNothing) {
  Fail(2);
  breaker_.OnIgnored(Acquire(), Now());
  EXPECT_EQ(breaker_.consecutive_failures(), 2);
}

TEST_F(CircuitBreakerTest, SeveralProbesAndSuccessesToClose) {
  config_.half_open_max_probes = 2;
  config_.half_open_successes_to_close = 3;
  CircuitBreaker b(config_, rng_);
  BreakerPermit p;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(b.TryAcquire(Now(), &p));
    b.OnFailure(p, Now());
  }
  clock_.Advance(seconds(30));
  BreakerPermit a, c, d;
  ASSERT_TRUE(b.TryAcquire(Now(), &a));
  ASSERT_TRUE(b.TryAcquire(Now(), &c));
  EXPECT_FALSE(b.TryAcquire(Now(), &d));
  b.OnSuccess(a, Now());
  EXPECT_EQ(b.state(Now()), BreakerState::kHalfOpen);
  ASSERT_TRUE(b.TryAcquire(Now(), &d));  // the freed slot
  b.OnSuccess(c, Now());
  EXPECT_EQ(b.state(Now()), BreakerState::kHalfOpen);
  b.OnSuccess(d, Now());
  EXPECT_EQ(b.state(Now()), BreakerState::kClosed);
}

TEST_F(CircuitBreakerTest, OneFailedProbeAmongSeveralReopens) {
  config_.half_open_max_probes = 2;
  config_.half_open_successes_to_close = 2;
  CircuitBreaker b(config_, rng_);
  BreakerPermit p;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(b.TryAcquire(Now(), &p));
    b.OnFailure(p, Now());
  }
  clock_.Advance(seconds(30));
  BreakerPermit a, c;
  ASSERT_TRUE(b.TryAcquire(Now(), &a));
  ASSERT_TRUE(b.TryAcquire(Now(), &c));
  b.OnSuccess(a, Now());
  b.OnFailure(c, Now());
  EXPECT_EQ(b.state(Now()), BreakerState::kOpen);
  EXPECT_EQ(b.TimeUntilProbe(Now()), seconds(60));
}

TEST_F(CircuitBreakerTest, NonsenseConfigIsSanitised) {
  CircuitBreakerConfig c = NoJitter();
  c.failure_threshold = 0;
  c.half_open_max_probes = 0;
  c.half_open_successes_to_close = -3;
  c.backoff_multiplier = 0.1;
  CircuitBreaker b(c, rng_);
  BreakerPermit p;
  ASSERT_TRUE(b.TryAcquire(Now(), &p));
  b.OnFailure(p, Now());  // threshold acts as 1
  EXPECT_EQ(b.state(Now()), BreakerState::kOpen);
  clock_.Advance(seconds(30));
  ASSERT_TRUE(b.TryAcquire(Now(), &p));  // one probe
  b.OnFailure(p, Now());
  EXPECT_EQ(b.TimeUntilProbe(Now()), seconds(30));  // multiplier acts as 1
  clock_.Advance(seconds(30));
  ASSERT_TRUE(b.TryAcquire(Now(), &p));
  b.OnSuccess(p, Now());
  EXPECT_EQ(b.state(Now()), BreakerState::kClosed);
}

TEST_F(CircuitBreakerTest, RestoredOpenStaysOpenUntilItsTimeThenProbes) {
  breaker_.Restore(Now() + seconds(20), /*series_openings=*/2, /*openings=*/5, Now());
  EXPECT_EQ(breaker_.state(Now()), BreakerState::kOpen);
  EXPECT_EQ(breaker_.TimeUntilProbe(Now()), seconds(20));
  EXPECT_EQ(breaker_.openings(), 5);
  EXPECT_EQ(breaker_.series_openings(), 2);
  BreakerPermit p;
  EXPECT_FALSE(breaker_.TryAcquire(Now(), &p));
  clock_.Advance(seconds(20));
  BreakerPermit probe = Acquire();
  EXPECT_TRUE(probe.probe);
  EXPECT_FALSE(breaker_.TryAcquire(Now(), &p)) << "one probe at a time";
  // The series continues: its third opening lasts 30 s * 2^2.
  breaker_.OnFailure(probe, Now());
  EXPECT_EQ(breaker_.TimeUntilProbe(Now()), seconds(120));
  EXPECT_EQ(breaker_.openings(), 6);
}

TEST_F(CircuitBreakerTest, RestoredOpenTimeInThePastIsHalfOpen) {
  breaker_.Restore(Now() - seconds(1), 1, 1, Now());
  EXPECT_EQ(breaker_.state(Now()), BreakerState::kHalfOpen);
  BreakerPermit probe = Acquire();
  EXPECT_TRUE(probe.probe);
  breaker_.OnSuccess(probe, Now());
  EXPECT_EQ(breaker_.state(Now()), BreakerState::kClosed);
}

TEST_F(CircuitBreakerTest, RestoreMakesEarlierPermitsStale) {
  BreakerPermit before = Acquire();
  breaker_.Restore(std::nullopt, 0, 0, Now());
  Fail(2);
  breaker_.OnFailure(before, Now());  // stale: not the third failure
  EXPECT_EQ(breaker_.state(Now()), BreakerState::kClosed);
  EXPECT_EQ(breaker_.consecutive_failures(), 2);
}

TEST(BreakerStateTest, Names) {
  EXPECT_STREQ(BreakerStateName(BreakerState::kHalfOpen), "half_open");
}

}  // namespace
}  // namespace bulkhead
