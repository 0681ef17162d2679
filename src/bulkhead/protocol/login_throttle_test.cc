#include "bulkhead/protocol/login_throttle.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

LoginThrottle::Options Opts() {
  LoginThrottle::Options o;
  o.base_delay = milliseconds(250);
  o.max_delay = seconds(30);
  o.forget_after = minutes(15);
  o.max_peers = 3;
  return o;
}

TEST(LoginThrottleTest, FirstFailureIsFreeThenTheDelayDoublesUpToTheMaximum) {
  ManualClock clock;
  LoginThrottle t(clock, Opts());
  EXPECT_EQ(t.Wait("10.0.0.1"), Duration::zero());
  EXPECT_EQ(t.RecordFailure("10.0.0.1"), 1);
  EXPECT_EQ(t.Wait("10.0.0.1"), Duration::zero()) << "one typo costs nothing";
  t.RecordFailure("10.0.0.1");
  EXPECT_EQ(t.Wait("10.0.0.1"), milliseconds(250));
  clock.Advance(milliseconds(100));
  EXPECT_EQ(t.Wait("10.0.0.1"), milliseconds(150));
  clock.Advance(milliseconds(150));
  EXPECT_EQ(t.Wait("10.0.0.1"), Duration::zero());
  t.RecordFailure("10.0.0.1");
  EXPECT_EQ(t.Wait("10.0.0.1"), milliseconds(500));
  t.RecordFailure("10.0.0.1");
  EXPECT_EQ(t.Wait("10.0.0.1"), milliseconds(1000));
  for (int i = 0; i < 100; ++i) t.RecordFailure("10.0.0.1");
  EXPECT_EQ(t.Wait("10.0.0.1"), seconds(30));
  EXPECT_EQ(t.Wait("10.0.0.2"), Duration::zero()) << "other addresses are not slowed";
}

TEST(LoginThrottleTest, SuccessClearsAndQuietTimeForgets) {
  ManualClock clock;
  LoginThrottle t(clock, Opts());
  t.RecordFailure("a");
  t.RecordFailure("a");
  t.RecordSuccess("a");
  EXPECT_EQ(t.Wait("a"), Duration::zero());
  EXPECT_EQ(t.RecordFailure("a"), 1);
  t.RecordFailure("a");
  t.RecordFailure("a");
  clock.Advance(minutes(15));
  EXPECT_EQ(t.Wait("a"), Duration::zero());
  EXPECT_EQ(t.RecordFailure("a"), 1) << "failures older than forget_after start a new count";
}

TEST(LoginThrottleTest, ZeroBaseDelayTurnsItOff) {
  ManualClock clock;
  auto o = Opts();
  o.base_delay = Duration::zero();
  LoginThrottle t(clock, o);
  for (int i = 0; i < 10; ++i) t.RecordFailure("a");
  EXPECT_EQ(t.Wait("a"), Duration::zero());
}

TEST(LoginThrottleTest, RemembersAtMostMaxPeersForgettingTheOldestFirst) {
  ManualClock clock;
  LoginThrottle t(clock, Opts());
  for (const char* p : {"a", "b", "c"}) {
    t.RecordFailure(p);
    t.RecordFailure(p);
    clock.Advance(milliseconds(1));
  }
  t.RecordFailure("d");
  EXPECT_EQ(t.peers(), 3u);
  EXPECT_EQ(t.Wait("a"), Duration::zero()) << "the oldest was forgotten";
  EXPECT_GT(t.Wait("c"), Duration::zero());
}

}  // namespace
}  // namespace bulkhead
