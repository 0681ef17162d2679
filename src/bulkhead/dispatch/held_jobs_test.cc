#include "bulkhead/dispatch/held_jobs.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

const TimePoint kT0 = FromUnixMicros(1'700'000'000'000'000);

DeliveryJob Job(const std::string& jid, const std::string& host, Duration deadline_in = hours(48)) {
  DeliveryJob job;
  job.jid = jid;
  job.host = host;
  job.deadline = kT0 + deadline_in;
  return job;
}

TEST(HeldJobsTest, NewJobsAreFreshPerHostInArrivalOrder) {
  HeldJobs held;
  EXPECT_TRUE(held.Add(Job("a1", "a.example"), kT0 + hours(24), hours(24)));
  EXPECT_TRUE(held.Add(Job("b1", "b.example"), kT0 + hours(24), hours(24)));
  EXPECT_TRUE(held.Add(Job("a2", "a.example"), kT0 + hours(24), hours(24)));
  EXPECT_EQ(held.size(), 3u);
  auto demand = held.FreshDemand();
  ASSERT_EQ(demand.size(), 2u);
  EXPECT_EQ(demand[0].host, "a.example");
  EXPECT_EQ(demand[0].fresh, 2);
  EXPECT_EQ(demand[1].fresh, 1);
  EXPECT_EQ(held.PopFresh("a.example"), "a1");
  EXPECT_EQ(held.PopFresh("nobody.example"), std::nullopt);
  auto rest = held.TakeFresh();
  EXPECT_EQ(rest["a.example"], std::deque<std::string>{"a2"});
  EXPECT_EQ(rest["b.example"], std::deque<std::string>{"b1"});
  EXPECT_TRUE(held.FreshDemand().empty());
  EXPECT_EQ(held.size(), 3u) << "taking the fresh queues does not drop the jobs";
}

TEST(HeldJobsTest, ReservationsAreRenewedAtHalfTimeAndNotWhileInFlight) {
  HeldJobs held;
  held.Add(Job("j1", "h.example"), kT0 + hours(24), hours(24));
  held.Add(Job("j2", "h.example"), kT0 + hours(24), hours(24));
  EXPECT_EQ(held.NextDue(), kT0 + hours(12));
  EXPECT_TRUE(held.RenewDue(kT0 + hours(11)).empty());

  held.PopFresh("h.example");
  held.MarkInFlight(*held.Find("j1"), Grant{"h.example", {}, std::nullopt}, kT0);
  EXPECT_TRUE(held.Find("j1")->in_flight);
  auto renewed = held.RenewDue(kT0 + hours(12));
  ASSERT_EQ(renewed.size(), 1u) << "the job in flight is not renewed";
  EXPECT_EQ(renewed[0].jid, "j2");
  EXPECT_EQ(renewed[0].reserved_until, kT0 + hours(36));
  EXPECT_EQ(held.Find("j2")->reserved_until, kT0 + hours(36));
  EXPECT_EQ(held.NextDue(), kT0 + hours(24)) << "the next renewal, at half of the new one";
}

TEST(HeldJobsTest, TakenAgainKeepsTheHeldJobUnderItsNewReservation) {
  HeldJobs held;
  held.Add(Job("j1", "h.example"), kT0 + hours(24), hours(24));
  EXPECT_FALSE(held.Add(Job("j1", "h.example"), kT0 + hours(30), hours(24)));
  EXPECT_EQ(held.size(), 1u);
  EXPECT_EQ(held.Find("j1")->reserved_until, kT0 + hours(30));
  EXPECT_EQ(held.NextDue(), kT0 + hours(18));
  EXPECT_EQ(held.FreshDemand()[0].fresh, 1) << "not queued twice";
}

TEST(HeldJobsTest, ExpiredJobsLeaveTheLedgerSayingWhereTheyWaited) {
  HeldJobs held;
  held.Add(Job("fresh", "h.example", minutes(5)), kT0 + hours(24), hours(24));
  held.Add(Job("parked", "h.example", minutes(10)), kT0 + hours(24), hours(24));
  held.Add(Job("flying", "h.example", minutes(1)), kT0 + hours(24), hours(24));
  held.Add(Job("later", "h.example", hours(2)), kT0 + hours(24), hours(24));
  // "parked" and "flying" leave the fresh queue; "flying" starts its attempt.
  auto fresh = held.TakeFresh();
  held.Add(Job("fresh2", "h.example", minutes(5)), kT0 + hours(24), hours(24));
  held.MarkInFlight(*held.Find("flying"), Grant{"h.example", {}, std::nullopt}, kT0);
  EXPECT_EQ(held.NextDue(), kT0 + minutes(5)) << "a job in flight has no deadline entry";

  auto first = held.PopExpired(kT0 + minutes(20));
  ASSERT_TRUE(first);
  auto second = held.PopExpired(kT0 + minutes(20));
  ASSERT_TRUE(second);
  auto third = held.PopExpired(kT0 + minutes(20));
  ASSERT_TRUE(third);
  EXPECT_FALSE(held.PopExpired(kT0 + minutes(20)));
  std::map<std::string, bool> was_fresh = {{first->held.job.jid, first->was_fresh},
                                           {second->held.job.jid, second->was_fresh},
                                           {third->held.job.jid, third->was_fresh}};
  EXPECT_EQ(was_fresh,
            (std::map<std::string, bool>{{"fresh", false}, {"fresh2", true}, {"parked", false}}));
  EXPECT_EQ(held.size(), 2u);
  EXPECT_NE(held.Find("flying"), nullptr);
  EXPECT_NE(held.Find("later"), nullptr);
  EXPECT_TRUE(held.FreshDemand().empty());
}

TEST(HeldJobsTest, ForgetReturnsTheJobWithItsGrant) {
  HeldJobs held;
  held.Add(Job("j1", "h.example"), kT0 + hours(24), hours(24));
  held.PopFresh("h.example");
  held.MarkInFlight(*held.Find("j1"), Grant{"h.example", {}, std::string("j1")}, kT0 + minutes(1));
  HeldJob job = held.Forget("j1");
  EXPECT_EQ(job.job.jid, "j1");
  ASSERT_TRUE(job.grant);
  EXPECT_EQ(job.grant->host, "h.example");
  EXPECT_EQ(job.started, kT0 + minutes(1));
  EXPECT_TRUE(held.empty());
  EXPECT_EQ(held.NextDue(), std::nullopt);
}

TEST(HeldJobsTest, TakeInFlightTakesOnlyAJobInFlight) {
  HeldJobs held;
  held.Add(Job("waiting", "h.example"), kT0 + hours(24), hours(24));
  held.Add(Job("flying", "h.example"), kT0 + hours(24), hours(24));
  held.TakeFresh();
  held.MarkInFlight(*held.Find("flying"), Grant{"h.example", {}, std::nullopt}, kT0);
  EXPECT_EQ(held.TakeInFlight("unknown"), std::nullopt);
  EXPECT_EQ(held.TakeInFlight("waiting"), std::nullopt);
  EXPECT_NE(held.Find("waiting"), nullptr) << "a job not in flight stays held";
  std::optional<HeldJob> taken = held.TakeInFlight("flying");
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->job.jid, "flying");
  EXPECT_EQ(held.Find("flying"), nullptr);
  EXPECT_EQ(held.size(), 1u);
}

}  // namespace
}  // namespace bulkhead
