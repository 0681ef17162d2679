#include "bulkhead/compartment/compartment.h"

#include <gtest/gtest.h>

#include "bulkhead/compartment/testing/outcomes.h"

namespace bulkhead {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

CompartmentConfig Config() {
  CompartmentConfig c;
  c.limit.initial_limit = 2;
  c.limit.min_limit = 1;
  c.limit.max_limit = 4;
  c.limit.latency_threshold = seconds(2);
  c.breaker.failure_threshold = 3;
  c.breaker.base_open_interval = seconds(30);
  c.breaker.jitter_fraction = 0;
  c.slow_call_threshold = seconds(10);
  c.latency_window = 100;
  c.max_parked = 5;
  return c;
}

class CompartmentTest : public ::testing::Test {
 protected:
  TimePoint Now() const { return clock_.Now(); }
  CompartmentPermit Acquire() {
    AcquireResult r = c_.TryAcquire(Now());
    EXPECT_TRUE(r.granted) << ParkReasonName(r.reason);
    return r.permit;
  }
  // One full attempt: acquire, `latency` passes, report.
  void Attempt(const Outcome& o, Duration latency = milliseconds(100)) {
    CompartmentPermit p = Acquire();
    clock_.Advance(latency);
    c_.OnResult(p, o, latency, Now());
  }
  void OpenBreaker() {
    for (int i = 0; i < 3; ++i) Attempt(kTimeout, seconds(30));
    ASSERT_EQ(c_.breaker().state(Now()), BreakerState::kOpen);
  }

  ManualClock clock_;
  ScriptedRng rng_;
  CompartmentConfig config_ = Config();
  Compartment c_{"push.example", config_, rng_, clock_.Now()};
};

TEST_F(CompartmentTest, GrantsUpToTheAdaptiveCap) {
  EXPECT_EQ(c_.host(), "push.example");
  Acquire();
  Acquire();
  EXPECT_EQ(c_.in_flight(), 2);
  AcquireResult r = c_.TryAcquire(Now());
  EXPECT_FALSE(r.granted);
  EXPECT_EQ(r.reason, ParkReason::kAtCapacity);
  EXPECT_EQ(r.not_before, Now());
  EXPECT_EQ(c_.Check(Now()), ParkReason::kAtCapacity);
}

TEST_F(CompartmentTest, ResultFreesTheSlot) {
  CompartmentPermit a = Acquire();
  Acquire();
  c_.OnResult(a, kOk, milliseconds(50), Now());
  EXPECT_EQ(c_.in_flight(), 1);
  EXPECT_TRUE(c_.TryAcquire(Now()).granted);
}

TEST_F(CompartmentTest, BreakerOpensAfterConsecutiveTimeoutsAndParksWithProbeTime) {
  OpenBreaker();
  AcquireResult r = c_.TryAcquire(Now());
  EXPECT_FALSE(r.granted);
  EXPECT_EQ(r.reason, ParkReason::kBreakerOpen);
  EXPECT_EQ(r.not_before, Now() + seconds(30));
  clock_.Advance(seconds(30));
  AcquireResult probe = c_.TryAcquire(Now());
  ASSERT_TRUE(probe.granted);
  EXPECT_TRUE(probe.permit.breaker.probe);
  EXPECT_EQ(c_.TryAcquire(Now()).reason, ParkReason::kProbeInFlight);
  c_.OnResult(probe.permit, kOk, milliseconds(80), Now());
  EXPECT_EQ(c_.breaker().state(Now()), BreakerState::kClosed);
  EXPECT_TRUE(c_.TryAcquire(Now()).granted);
}

TEST_F(CompartmentTest, SequentialTrafficDoesNotInflateTheCap) {
  for (int i = 0; i < 50; ++i) Attempt(kOk);
  EXPECT_EQ(c_.limit(), 2);
}

TEST_F(CompartmentTest, LateResultsFromBeforeTheOpeningFreeSlotsButDoNotMoveTheBreaker) {
  config_.limit.initial_limit = 4;
  Compartment c("late.example", config_, rng_, Now());
  std::vector<CompartmentPermit> permits;
  for (int i = 0; i < 4; ++i) {
    AcquireResult r = c.TryAcquire(Now());
    ASSERT_TRUE(r.granted);
    permits.push_back(r.permit);
  }
  clock_.Advance(seconds(30));
  for (int i = 0; i < 3; ++i) c.OnResult(permits[i], kTimeout, seconds(30), Now());
  ASSERT_EQ(c.breaker().state(Now()), BreakerState::kOpen);
  EXPECT_EQ(c.in_flight(), 1);
  // The fourth answers late with a success: the slot is freed and the success is counted, but
  // the breaker waits for its own probe.
  clock_.Advance(seconds(1));
  c.OnResult(permits[3], kOk, seconds(31), Now());
  EXPECT_EQ(c.in_flight(), 0);
  EXPECT_EQ(c.breaker().state(Now()), BreakerState::kOpen);
  EXPECT_EQ(c.Snapshot(Now()).successes, 1);
  EXPECT_FALSE(c.failing_since().has_value());
}

TEST_F(CompartmentTest, NegativeLatencyIsTreatedAsZero) {
  CompartmentPermit p = Acquire();
  c_.OnResult(p, kOk, -seconds(5), Now());
  EXPECT_EQ(c_.Snapshot(Now()).latency_p99, Duration::zero());
}

TEST_F(CompartmentTest, TimeoutsShrinkTheCap) {
  // Rounds that use the whole cap grow it.
  for (int round = 0; round < 20; ++round) {
    std::vector<CompartmentPermit> permits;
    AcquireResult r;
    while ((r = c_.TryAcquire(Now())).granted) permits.push_back(r.permit);
    clock_.Advance(milliseconds(100));
    for (const CompartmentPermit& p : permits) c_.OnResult(p, kOk, milliseconds(100), Now());
  }
  EXPECT_EQ(c_.limit(), 4);
  Attempt(kTimeout, seconds(30));
  EXPECT_EQ(c_.limit(), 2);
}

TEST_F(CompartmentTest, SlowSuccessCountsAgainstTheBreakerButClearsFailing) {
  Attempt(kTimeout, seconds(30));
  ASSERT_TRUE(c_.failing_since().has_value());
  Attempt(kOk, seconds(11));
  EXPECT_FALSE(c_.failing_since().has_value());
  EXPECT_EQ(c_.breaker().consecutive_failures(), 2);
  Attempt(kOk, seconds(11));
  EXPECT_EQ(c_.breaker().state(Now()), BreakerState::kOpen);
  CompartmentSnapshot s = c_.Snapshot(Now());
  EXPECT_EQ(s.successes, 2);
  EXPECT_EQ(s.failures, 1);
}

TEST_F(CompartmentTest, SlowCallRuleCanBeDisabled) {
  config_.slow_call_threshold = Duration::zero();
  Compartment c("slow.example", config_, rng_, Now());
  for (int i = 0; i < 10; ++i) {
    AcquireResult r = c.TryAcquire(Now());
    ASSERT_TRUE(r.granted);
    c.OnResult(r.permit, kOk, seconds(25), Now());
  }
  EXPECT_EQ(c.breaker().state(Now()), BreakerState::kClosed);
  EXPECT_EQ(c.limit(), 1);  // still squeezed by the latency threshold
}

TEST_F(CompartmentTest, OverloadOpensTheBreakerWithoutMarkingTheHostFailing) {
  for (int i = 0; i < 3; ++i) Attempt(k429);
  EXPECT_EQ(c_.breaker().state(Now()), BreakerState::kOpen);
  EXPECT_FALSE(c_.failing_since().has_value());
  EXPECT_EQ(c_.Snapshot(Now()).overloaded, 3);
}

TEST_F(CompartmentTest, NoHostSignalChangesNoHealthState) {
  Attempt(kTimeout, seconds(30));
  Attempt(kBlocked);
  Attempt(kBlocked);
  EXPECT_EQ(c_.breaker().consecutive_failures(), 1);
  EXPECT_TRUE(c_.failing_since().has_value());
  CompartmentSnapshot s = c_.Snapshot(Now());
  EXPECT_EQ(s.successes, 0);
  EXPECT_EQ(s.failures, 1);
  EXPECT_EQ(c_.in_flight(), 0);
}

TEST_F(CompartmentTest, IgnoredProbeLetsAnotherProbeThrough) {
  OpenBreaker();
  clock_.Advance(seconds(30));
  AcquireResult probe = c_.TryAcquire(Now());
  ASSERT_TRUE(probe.granted);
  c_.OnResult(probe.permit, kBlocked, milliseconds(1), Now());
  EXPECT_TRUE(c_.TryAcquire(Now()).granted);
}

TEST_F(CompartmentTest, RetryAfterBlocksEveryAttemptUntilItEnds) {
  CompartmentPermit p = Acquire();
  c_.OnResult(p, k429, milliseconds(100), Now(), Now() + seconds(90));
  AcquireResult r = c_.TryAcquire(Now());
  EXPECT_EQ(r.reason, ParkReason::kRetryAfter);
  EXPECT_EQ(r.not_before, Now() + seconds(90));
  EXPECT_EQ(c_.Snapshot(Now()).retry_after_until, Now() + seconds(90));
  clock_.Advance(seconds(89));
  EXPECT_FALSE(c_.TryAcquire(Now()).granted);
  clock_.Advance(seconds(1));
  EXPECT_TRUE(c_.TryAcquire(Now()).granted);
  EXPECT_FALSE(c_.Snapshot(Now()).retry_after_until.has_value());
}

TEST_F(CompartmentTest, RetryAfterOnlyExtends) {
  CompartmentPermit a = Acquire();
  CompartmentPermit b = Acquire();
  c_.OnResult(a, k429, milliseconds(1), Now(), Now() + seconds(60));
  c_.OnResult(b, kOk, milliseconds(1), Now(), Now() + seconds(10));
  EXPECT_EQ(c_.retry_after_until(), Now() + seconds(60));
  // A Retry-After in the past is no-op.
  clock_.Advance(seconds(61));
  CompartmentPermit d = Acquire();
  c_.OnResult(d, kOk, milliseconds(1), Now(), Now() - seconds(1));
  EXPECT_TRUE(c_.TryAcquire(Now()).granted);
}

TEST_F(CompartmentTest, RetryAfterHonouredEvenFromHealthyAnswer) {
  CompartmentPermit p = Acquire();
  c_.OnResult(p, kOk, milliseconds(1), Now(), Now() + seconds(5));
  EXPECT_EQ(c_.TryAcquire(Now()).reason, ParkReason::kRetryAfter);
}

TEST_F(CompartmentTest, ParkedFifoWithNextReady) {
  ASSERT_TRUE(c_.Park("j1").ok());
  ASSERT_TRUE(c_.Park("j2").ok());
  ASSERT_TRUE(c_.Park("j3").ok());
  EXPECT_EQ(c_.parked_count(), 3u);
  // A fresh attempt may not overtake parked jobs.
  EXPECT_EQ(c_.TryAcquire(Now()).reason, ParkReason::kParkedAhead);
  std::optional<ReadyJob> a = c_.NextReady(Now());
  std::optional<ReadyJob> b = c_.NextReady(Now());
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->job_id, "j1");
  EXPECT_EQ(b->job_id, "j2");
  EXPECT_FALSE(c_.NextReady(Now()).has_value());  // cap of 2 reached; j3 stays
  EXPECT_EQ(c_.parked_count(), 1u);
  EXPECT_EQ(c_.NextWakeup(Now()), std::nullopt);  // waits for a result, not for time
  c_.OnResult(a->permit, kOk, milliseconds(10), Now());
  std::optional<ReadyJob> d = c_.NextReady(Now());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->job_id, "j3");
  EXPECT_FALSE(c_.NextReady(Now()).has_value());  // nothing parked
}

TEST_F(CompartmentTest, ParkIsBounded) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(c_.Park(JobId(i)).ok());
  Status s = c_.Park("j5");
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(c_.parked_count(), 5u);
}

TEST_F(CompartmentTest, Unpark) {
  ASSERT_TRUE(c_.Park("a").ok());
  ASSERT_TRUE(c_.Park("b").ok());
  EXPECT_TRUE(c_.Unpark("a"));
  EXPECT_FALSE(c_.Unpark("a"));
  EXPECT_EQ(c_.parked().front(), "b");
}

TEST_F(CompartmentTest, ParkedJobsWaitForTheBreakerWithoutAttempts) {
  OpenBreaker();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(c_.Park(JobId(i)).ok());
  EXPECT_EQ(c_.NextWakeup(Now()), Now() + seconds(30));
  EXPECT_FALSE(c_.NextReady(Now()).has_value());
  clock_.Advance(seconds(30));
  std::optional<ReadyJob> probe = c_.NextReady(Now());
  ASSERT_TRUE(probe);
  EXPECT_TRUE(probe->permit.breaker.probe);
  EXPECT_FALSE(c_.NextReady(Now()).has_value());  // one probe only
  // Probe fails: back to open for 60 s; the other four never ran.
  clock_.Advance(seconds(30));
  c_.OnResult(probe->permit, kTimeout, seconds(30), Now());
  EXPECT_EQ(c_.NextWakeup(Now()), Now() + seconds(60));
  EXPECT_EQ(c_.parked_count(), 4u);
}

TEST_F(CompartmentTest, NextWakeupIsEmptyWhenNothingWaitsOnTime) {
  EXPECT_EQ(c_.NextWakeup(Now()), std::nullopt);  // nothing parked
  ASSERT_TRUE(c_.Park("j").ok());
  EXPECT_EQ(c_.NextWakeup(Now()), std::nullopt);  // could start now
}

TEST_F(CompartmentTest, NextWakeupForRetryAfter) {
  CompartmentPermit p = Acquire();
  c_.OnResult(p, k429, milliseconds(10), Now(), Now() + seconds(45));
  ASSERT_TRUE(c_.Park("j").ok());
  EXPECT_EQ(c_.NextWakeup(Now()), Now() + seconds(45));
}

TEST_F(CompartmentTest, NextWakeupIsTheLaterOfRetryAfterAndBreaker) {
  for (int i = 0; i < 2; ++i) Attempt(kTimeout, seconds(30));
  CompartmentPermit p = Acquire();
  c_.OnResult(p, k429, milliseconds(10), Now(), Now() + seconds(10));  // 3rd failure: opens
  ASSERT_TRUE(c_.Park("j").ok());
  EXPECT_EQ(c_.NextWakeup(Now()), Now() + seconds(30));
}

TEST_F(CompartmentTest, HostBecomesUnavailableAfterSevenDaysOfFailing) {
  const TimePoint start = Now();
  Attempt(kTimeout, seconds(30));
  EXPECT_EQ(c_.failing_since(), start);  // when the failed attempt started
  EXPECT_FALSE(c_.unavailable(Now()));
  clock_.Set(start + hours(24 * 7) - seconds(1));
  EXPECT_FALSE(c_.unavailable(Now()));
  clock_.Set(start + hours(24 * 7));
  EXPECT_TRUE(c_.unavailable(Now()));
  EXPECT_TRUE(c_.Snapshot(Now()).unavailable);
  // Later failures do not move failing_since.
  clock_.Advance(minutes(10));
  Attempt(kTimeout, seconds(30));
  EXPECT_EQ(c_.failing_since(), start);
}

TEST_F(CompartmentTest, SuccessClearsUnavailable) {
  Attempt(kTimeout, seconds(30));
  clock_.Advance(hours(24 * 8));
  ASSERT_TRUE(c_.unavailable(Now()));
  Attempt(kGone);  // a healthy answer, even if the job itself is gone
  EXPECT_FALSE(c_.unavailable(Now()));
  EXPECT_FALSE(c_.failing_since().has_value());
}

TEST_F(CompartmentTest, RestoredFailingSince) {
  c_.RestoreFailingSince(Now() - hours(24 * 7));
  EXPECT_TRUE(c_.unavailable(Now()));
}

TEST_F(CompartmentTest, StateIsEmptyWhileHealthy) {
  EXPECT_TRUE(c_.State(Now()).healthy());
  Attempt(kOk);
  EXPECT_EQ(c_.State(Now()), CompartmentState{});
}

TEST_F(CompartmentTest, StateChangesOnlyWithWhatIsPersisted) {
  const TimePoint start = Now();
  Attempt(kTimeout, seconds(30));
  CompartmentState first = c_.State(Now());
  EXPECT_EQ(first.failing_since, start);
  EXPECT_FALSE(first.breaker_open_until);
  Attempt(kTimeout, seconds(30));
  EXPECT_EQ(c_.State(Now()), first) << "a failure below the threshold changes nothing kept";
  Attempt(kTimeout, seconds(30));  // the third opens the breaker
  CompartmentState open = c_.State(Now());
  EXPECT_EQ(open.breaker_open_until, Now() + seconds(30));
  EXPECT_EQ(open.breaker_series_openings, 1);
  EXPECT_EQ(open.breaker_openings, 1);
  EXPECT_EQ(open.failing_since, start);
  clock_.Advance(seconds(30));
  AcquireResult probe = c_.TryAcquire(Now());  // half-open now
  ASSERT_TRUE(probe.granted);
  EXPECT_EQ(c_.State(Now()), open) << "half-open is kept as open with its time passed";
  c_.OnResult(probe.permit, kOk, milliseconds(50), Now());
  EXPECT_TRUE(c_.State(Now()).healthy()) << "the probe closed the breaker and cleared failing";
}

TEST_F(CompartmentTest, StateKeepsRetryAfterOnlyWhileAhead) {
  CompartmentPermit p = Acquire();
  c_.OnResult(p, k429, milliseconds(10), Now(), Now() + seconds(45));
  EXPECT_EQ(c_.State(Now()).retry_after_until, Now() + seconds(45));
  EXPECT_FALSE(c_.State(Now()).failing_since) << "429 is not failing";
  clock_.Advance(seconds(45));
  EXPECT_TRUE(c_.State(Now()).healthy());
}

TEST_F(CompartmentTest, RestoredStateParksUntilTheProbeTime) {
  const TimePoint failing = Now() - hours(24 * 6);
  CompartmentState saved;
  saved.breaker_open_until = Now() + seconds(40);
  saved.breaker_series_openings = 1;
  saved.breaker_openings = 3;
  saved.failing_since = failing;
  Compartment c("dead.example", config_, rng_, Now());
  c.Restore(saved, Now());
  EXPECT_EQ(c.State(Now()), saved);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(c.Park(JobId(i)).ok());
  EXPECT_FALSE(c.NextReady(Now()));
  EXPECT_EQ(c.NextWakeup(Now()), Now() + seconds(40));
  CompartmentSnapshot snap = c.Snapshot(Now());
  EXPECT_EQ(snap.breaker, BreakerState::kOpen);
  EXPECT_EQ(snap.breaker_openings, 3);
  EXPECT_EQ(snap.failing_since, failing);
  clock_.Advance(seconds(40));
  std::optional<ReadyJob> probe = c.NextReady(Now());
  ASSERT_TRUE(probe);
  EXPECT_TRUE(probe->permit.breaker.probe);
  EXPECT_FALSE(c.NextReady(Now()));
  // A failed probe reopens with the series' second interval, and the host is unavailable seven
  // days after its first failure, not after the restart.
  c.OnResult(probe->permit, kTimeout, seconds(30), Now());
  EXPECT_EQ(c.NextWakeup(Now()), Now() + seconds(60));
  EXPECT_FALSE(c.unavailable(Now()));
  clock_.Set(failing + hours(24 * 7));
  EXPECT_TRUE(c.unavailable(Now()));
}

TEST_F(CompartmentTest, RestoredRetryAfterInThePastIsIgnored) {
  CompartmentState saved;
  saved.retry_after_until = Now() - seconds(1);
  c_.Restore(saved, Now());
  EXPECT_TRUE(c_.State(Now()).healthy());
  EXPECT_TRUE(c_.TryAcquire(Now()).granted);
  saved.retry_after_until = Now() + seconds(10);
  Compartment c("later.example", config_, rng_, Now());
  c.Restore(saved, Now());
  EXPECT_EQ(c.TryAcquire(Now()).reason, ParkReason::kRetryAfter);
}

TEST_F(CompartmentTest, HeldProbesWaitForTheHoldWhileHalfOpen) {
  CompartmentState saved;
  saved.breaker_open_until = Now() + seconds(30);
  saved.breaker_series_openings = 1;
  saved.breaker_openings = 1;
  c_.Restore(saved, Now());
  ASSERT_TRUE(c_.Park("held-1").ok());
  c_.HoldProbes(Now() + seconds(60));
  // Open: the hold changes nothing, the breaker's end is the wake-up.
  EXPECT_EQ(c_.Check(Now()), ParkReason::kBreakerOpen);
  EXPECT_EQ(c_.NextWakeup(Now()), Now() + seconds(30));
  // Half-open: another node's probe runs; no probe here before the hold ends.
  clock_.Advance(seconds(31));
  EXPECT_EQ(c_.Check(Now(), /*ignore_parked=*/true), ParkReason::kProbeInFlight);
  EXPECT_FALSE(c_.NextReady(Now()).has_value());
  EXPECT_EQ(c_.NextWakeup(Now()), *c_.probe_hold_until());
  EXPECT_EQ(c_.State(Now()).breaker_open_until, saved.breaker_open_until) << "not persisted";
  // Lifted (or lapsed): this node probes.
  c_.HoldProbes(std::nullopt);
  auto probe = c_.NextReady(Now());
  ASSERT_TRUE(probe.has_value());
  EXPECT_TRUE(probe->permit.breaker.probe);
  c_.OnResult(probe->permit, kOk, milliseconds(10), Now());
}

TEST_F(CompartmentTest, UnavailablePeriodIsConfigurable) {
  config_.unavailable_after = hours(1);
  Compartment c("x.example", config_, rng_, Now());
  AcquireResult r = c.TryAcquire(Now());
  c.OnResult(r.permit, kTimeout, seconds(30), Now());
  clock_.Advance(hours(1));
  EXPECT_TRUE(c.unavailable(Now()));
}

TEST_F(CompartmentTest, SnapshotLatencyPercentiles) {
  // 1..100 ms: p50 = 50 ms, p99 = 99 ms (nearest rank).
  for (int i = 1; i <= 100; ++i) Attempt(kOk, milliseconds(i));
  CompartmentSnapshot s = c_.Snapshot(Now());
  EXPECT_EQ(s.latency_p50, milliseconds(50));
  EXPECT_EQ(s.latency_p99, milliseconds(99));
  EXPECT_EQ(s.successes, 100);
  EXPECT_GT(s.latency_ewma, milliseconds(90));
  EXPECT_LT(s.latency_ewma, milliseconds(100));
  // The window keeps the last 100: ten 1 s samples push out the ten fastest.
  for (int i = 0; i < 10; ++i) Attempt(kOk, seconds(1));
  s = c_.Snapshot(Now());
  EXPECT_EQ(s.latency_p50, milliseconds(60));
  EXPECT_EQ(s.latency_p99, seconds(1));
}

TEST_F(CompartmentTest, SnapshotFields) {
  CompartmentSnapshot s = c_.Snapshot(Now());
  EXPECT_EQ(s.host, "push.example");
  EXPECT_EQ(s.latency_p50, Duration::zero());
  EXPECT_EQ(s.latency_ewma, Duration::zero());
  EXPECT_EQ(s.limit, 2);
  OpenBreaker();
  ASSERT_TRUE(c_.Park("j").ok());
  clock_.Advance(seconds(10));
  s = c_.Snapshot(Now());
  EXPECT_EQ(s.breaker, BreakerState::kOpen);
  EXPECT_EQ(s.breaker_openings, 1);
  EXPECT_EQ(s.time_until_probe, seconds(20));
  EXPECT_EQ(s.failures, 3);
  EXPECT_EQ(s.parked, 1u);
  EXPECT_EQ(s.in_flight, 0);
  EXPECT_EQ(s.latency_p99, seconds(30));
  EXPECT_TRUE(s.failing_since.has_value());
  EXPECT_FALSE(s.unavailable);
  EXPECT_EQ(s.breaker_open_until, Now() + seconds(20));
}

TEST_F(CompartmentTest, SnapshotBreakerOpenUntilOnlyWhileNotClosed) {
  EXPECT_FALSE(c_.Snapshot(Now()).breaker_open_until.has_value());
  OpenBreaker();
  const TimePoint until = Now() + seconds(30);
  EXPECT_EQ(c_.Snapshot(Now()).breaker_open_until, until);
  clock_.Advance(seconds(31));
  ASSERT_EQ(c_.breaker().state(Now()), BreakerState::kHalfOpen);
  EXPECT_EQ(c_.Snapshot(Now()).breaker_open_until, until) << "half-open: the interval that ended";
  Attempt(kOk);
  ASSERT_EQ(c_.breaker().state(Now()), BreakerState::kClosed);
  EXPECT_FALSE(c_.Snapshot(Now()).breaker_open_until.has_value());
}

TEST_F(CompartmentTest, LastErrorIsTheReasonOfTheLastFailedOrOverloadedAttempt) {
  CompartmentSnapshot s = c_.Snapshot(Now());
  EXPECT_EQ(s.last_error, "");
  EXPECT_FALSE(s.last_error_at.has_value());
  Attempt(kOk);
  Attempt(kBlocked);
  EXPECT_EQ(c_.Snapshot(Now()).last_error, "") << "successes and local failures are no host error";
  Attempt(kTimeout, seconds(5));
  const TimePoint timeout_at = Now();
  s = c_.Snapshot(Now());
  EXPECT_EQ(s.last_error, "timeout");
  EXPECT_EQ(s.last_error_at, timeout_at) << "the end of the failed attempt";
  clock_.Advance(seconds(1));
  Attempt(k429);
  s = c_.Snapshot(Now());
  EXPECT_EQ(s.last_error, "http 429");
  EXPECT_EQ(s.last_error_at, Now());
}

TEST_F(CompartmentTest, LastErrorOutlivesLaterSuccessesUntilForgotten) {
  Attempt(kTimeout);
  const TimePoint at = Now();
  Attempt(kOk);
  clock_.Advance(hours(1));
  CompartmentSnapshot s = c_.Snapshot(Now());
  EXPECT_FALSE(s.failing_since.has_value());
  EXPECT_EQ(s.last_error, "timeout");
  EXPECT_EQ(s.last_error_at, at);
  EXPECT_EQ(c_.State(Now()), CompartmentState{}) << "not persisted";
  c_.ForgetLastError();
  s = c_.Snapshot(Now());
  EXPECT_EQ(s.last_error, "");
  EXPECT_FALSE(s.last_error_at.has_value());
}

TEST_F(CompartmentTest, Evictable) {
  const Duration idle = minutes(15);
  const Duration retention = hours(24 * 8);
  EXPECT_FALSE(c_.Evictable(Now(), idle, retention));
  clock_.Advance(idle);
  EXPECT_TRUE(c_.Evictable(Now(), idle, retention));
  // In flight: never.
  CompartmentPermit p = Acquire();
  clock_.Advance(hours(1000));
  EXPECT_FALSE(c_.Evictable(Now(), idle, retention));
  c_.OnResult(p, kOk, milliseconds(1), Now());
  // Parked: never.
  ASSERT_TRUE(c_.Park("j").ok());
  clock_.Advance(hours(1000));
  EXPECT_FALSE(c_.Evictable(Now(), idle, retention));
  ASSERT_TRUE(c_.Unpark("j"));
  EXPECT_TRUE(c_.Evictable(Now(), idle, retention));
}

TEST_F(CompartmentTest, FailingHostIsRetainedLonger) {
  const Duration idle = minutes(15);
  const Duration retention = hours(24 * 8);
  Attempt(kTimeout, seconds(30));
  clock_.Advance(hours(1));
  EXPECT_FALSE(c_.Evictable(Now(), idle, retention));
  clock_.Advance(retention);
  EXPECT_TRUE(c_.Evictable(Now(), idle, retention));
}

TEST_F(CompartmentTest, OpenBreakerIsRetainedLikeFailingThenForgotten) {
  const Duration idle = minutes(15);
  const Duration retention = hours(24 * 8);
  for (int i = 0; i < 2; ++i) Attempt(k429);  // failures toward the breaker, not "failing"
  EXPECT_FALSE(c_.failing_since().has_value());
  Attempt(k429);  // opens
  ASSERT_EQ(c_.breaker().state(Now()), BreakerState::kOpen);
  clock_.Advance(idle);
  EXPECT_FALSE(c_.Evictable(Now(), idle, retention));
  // No more traffic: the breaker sits half-open forever, but the host is not kept forever.
  clock_.Advance(retention);
  EXPECT_EQ(c_.breaker().state(Now()), BreakerState::kHalfOpen);
  EXPECT_TRUE(c_.Evictable(Now(), idle, retention));
}

TEST_F(CompartmentTest, PendingRetryAfterPreventsEviction) {
  CompartmentPermit p = Acquire();
  c_.OnResult(p, kOk, milliseconds(1), Now(), Now() + seconds(60));
  EXPECT_FALSE(c_.Evictable(Now(), Duration::zero(), Duration::zero()));
  clock_.Advance(seconds(60));
  EXPECT_TRUE(c_.Evictable(Now(), Duration::zero(), Duration::zero()));
}

TEST(ParkReasonTest, Names) {
  EXPECT_STREQ(ParkReasonName(ParkReason::kBreakerOpen), "breaker_open");
  EXPECT_STREQ(ParkReasonName(ParkReason::kAtCapacity), "at_capacity");
}

}  // namespace
}  // namespace bulkhead

namespace bulkhead {
namespace {

TEST(CompartmentIndexTest, TracksParkedAndHolders) {
  ManualClock clock;
  ScriptedRng rng;
  CompartmentIndex index;
  CompartmentConfig config = Config();
  auto c = std::make_unique<Compartment>("b.example", config, rng, clock.Now());
  Compartment a("a.example", config, rng, clock.Now());
  ASSERT_TRUE(c->Park("early").ok());  // parked before attaching: picked up on attach
  c->AttachIndex(&index);
  a.AttachIndex(&index);
  EXPECT_EQ(index.parked.size(), 1u);
  ASSERT_TRUE(a.Park("x").ok());
  ASSERT_TRUE(a.Park("y").ok());
  ASSERT_EQ(index.parked.size(), 2u);
  EXPECT_EQ((*index.parked.begin())->host(), "a.example");  // ordered by host
  std::optional<ReadyJob> x = a.NextReady(clock.Now());
  ASSERT_TRUE(x);
  EXPECT_EQ(index.holders, 1);
  EXPECT_EQ(index.parked.size(), 2u);  // y still parked
  EXPECT_TRUE(a.Unpark("y"));
  EXPECT_EQ(index.parked.size(), 1u);
  AcquireResult r = a.TryAcquire(clock.Now());
  ASSERT_TRUE(r.granted);
  EXPECT_EQ(index.holders, 1);  // counts compartments, not attempts
  a.OnResult(x->permit, kOk, milliseconds(1), clock.Now());
  EXPECT_EQ(index.holders, 1);
  a.OnResult(r.permit, kOk, milliseconds(1), clock.Now());
  EXPECT_EQ(index.holders, 0);
  // Destruction and detaching leave the index clean.
  std::optional<ReadyJob> e = c->NextReady(clock.Now());
  ASSERT_TRUE(e);
  ASSERT_TRUE(c->Park("late").ok());
  EXPECT_EQ(index.holders, 1);
  c.reset();
  EXPECT_EQ(index.holders, 0);
  EXPECT_TRUE(index.parked.empty());
  ASSERT_TRUE(a.Park("z").ok());
  a.AttachIndex(nullptr);
  EXPECT_TRUE(index.parked.empty());
}

}  // namespace
}  // namespace bulkhead
