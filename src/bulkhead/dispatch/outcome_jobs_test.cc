#include "bulkhead/dispatch/outcome_jobs.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "bulkhead/dispatch/testing/store_timing.h"

namespace bulkhead {
namespace {

using nlohmann::json;

// Runs with the store answering inline and deferred (dispatch/testing/store_timing.h).
class OutcomeJobsTest : public ::testing::TestWithParam<StoreTiming> {};

TEST_P(OutcomeJobsTest, EachOutcomeIsAJobOnTheOutcomesQueue) {
  Config config;
  ManualClock clock;
  ScriptedRng rng;
  boost::asio::io_context io;
  auto store = OpenTimedStore(GetParam(), io);
  Engine engine(io, *store, config, clock, rng);
  DispatcherStats stats;
  OutcomeJobs outcomes(engine, clock, "outcomes", stats);
  DeliveryJob job;
  job.jid = "abc123456";
  job.jobtype = "webpush";
  job.url = "https://push.example/sub";
  outcomes.WebPushGone(job);
  outcomes.DeliveryDead(job, "http 400");
  outcomes.HostUnavailable("h.example", clock.Now());
  outcomes.HostAvailable("h.example", clock.Now());
  EXPECT_EQ(outcomes.pushed(), 4);
  EXPECT_EQ(stats.outcome_jobs, 4);

  std::vector<json> pushed;
  Settle(io);
  for (const JobRecord& taken : TakeAllOn(io, *store, "outcomes", clock.Now())) {
    pushed.push_back(json::parse(taken.payload));
  }
  ASSERT_EQ(pushed.size(), 4u);
  EXPECT_EQ(pushed[0]["jobtype"], kWebPushGoneJobType);
  EXPECT_EQ(pushed[0]["args"], json::array({"https://push.example/sub", "abc123456"}));
  EXPECT_EQ(pushed[1]["jobtype"], kDeliveryDeadJobType);
  EXPECT_EQ(pushed[1]["args"],
            json::array({"abc123456", "webpush", "http 400", "https://push.example/sub"}));
  EXPECT_EQ(pushed[2]["jobtype"], kHostUnavailableJobType);
  EXPECT_EQ(pushed[2]["args"], json::array({"h.example"}));
  EXPECT_EQ(pushed[3]["jobtype"], kHostAvailableJobType);
  EXPECT_EQ(pushed[3]["queue"], "outcomes");
}

// Once per event across nodes: two engines on one store stand for two nodes sharing it.
// Each event's outcome job has a jid derived from the event, so the same event pushed by both
// (or twice by one, after a re-run) is one job while the first is pending; distinct events stay
// distinct.
TEST_P(OutcomeJobsTest, TheSameEventFromTwoNodesIsOneJob) {
  Config config;
  ManualClock clock;
  ScriptedRng rng;
  boost::asio::io_context io;
  auto store = OpenTimedStore(GetParam(), io);
  Engine node_a(io, *store, config, clock, rng);
  Engine node_b(io, *store, config, clock, rng);
  DispatcherStats stats_a, stats_b;
  OutcomeJobs a(node_a, clock, "outcomes", stats_a);
  OutcomeJobs b(node_b, clock, "outcomes", stats_b);
  DeliveryJob job;
  job.jid = "delivery-1";
  job.jobtype = "webpush";
  job.url = "https://push.example/sub/1";
  DeliveryJob other = job;
  other.jid = "delivery-2";
  const TimePoint since = clock.Now() - std::chrono::hours(24 * 7);

  a.WebPushGone(job);
  b.WebPushGone(job);  // the delivery re-ran on B after A died before ending it
  a.DeliveryDead(other, "http 400");
  b.DeliveryDead(other, "http 400");
  b.WebPushGone(other);  // another event: its own job
  a.HostUnavailable("h.example", since);
  b.HostUnavailable("h.example", since);  // both crossed the threshold at once
  b.HostUnavailable("h.example", since + std::chrono::hours(1));  // a later failing period
  a.HostAvailable("h.example", since);
  b.HostAvailable("h.example", since);  // both saw the period end at once
  Settle(io);

  std::map<std::string, std::string> jobs;  // jid -> jobtype
  for (const JobRecord& taken : TakeAllOn(io, *store, "outcomes", clock.Now())) {
    jobs[taken.jid] = json::parse(taken.payload)["jobtype"];
  }
  EXPECT_EQ(jobs.size(), 6u);
  EXPECT_EQ(jobs["bh-gone-delivery-1"], kWebPushGoneJobType);
  EXPECT_EQ(jobs["bh-gone-delivery-2"], kWebPushGoneJobType);
  EXPECT_EQ(jobs["bh-dead-delivery-2"], kDeliveryDeadJobType);
  int unavailable = 0;
  for (const auto& entry : jobs) unavailable += entry.second == kHostUnavailableJobType;
  EXPECT_EQ(unavailable, 2) << "one per failing period";
  int available = 0;
  for (const auto& entry : jobs) {
    if (entry.second != kHostAvailableJobType) continue;
    ++available;
    EXPECT_EQ(entry.first.rfind("bh-available-", 0), 0u) << entry.first;
    EXPECT_NE(entry.first.find(std::to_string(ToUnixMicros(since))), std::string::npos)
        << entry.first << ": derived from the period that ended";
  }
  EXPECT_EQ(available, 1) << "one per end of a failing period";
  EXPECT_EQ(node_a.push_duplicates() + node_b.push_duplicates(), 4u)
      << "the repeats were answered OK and changed nothing";
}

INSTANTIATE_TEST_SUITE_P(StoreTimings, OutcomeJobsTest, kBothTimings, StoreTimingName);

}  // namespace
}  // namespace bulkhead
