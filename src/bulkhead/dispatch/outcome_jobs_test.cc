#include "bulkhead/dispatch/outcome_jobs.h"

#include <gtest/gtest.h>

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
  outcomes.HostUnavailable("h.example");
  outcomes.HostAvailable("h.example");
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

INSTANTIATE_TEST_SUITE_P(StoreTimings, OutcomeJobsTest, kBothTimings, StoreTimingName);

}  // namespace
}  // namespace bulkhead
