#include "bulkhead/dispatch/outcome_jobs.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "bulkhead/dispatch/testing/store_timing.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

using nlohmann::json;

// Runs with the store answering inline and deferred (dispatch/testing/store_timing.h).
class OutcomeJobsTest : public ::testing::TestWithParam<StoreTiming> {};

// The job (and its one argument) each event is pushed as, in `form`.
std::vector<json> PushEachEvent(OutcomeArgs form, StoreTiming timing, ManualClock& clock) {
  Config config;
  ScriptedRng rng;
  boost::asio::io_context io;
  auto store = OpenTimedStore(timing, io);
  Engine engine(io, *store, config, clock, rng);
  DispatcherStats stats;
  OutcomeJobs outcomes(engine, clock, "outcomes", stats, form);
  DeliveryJob job;
  job.jid = "abc123456";
  job.jobtype = "webpush";
  job.url = "https://push.example/sub";
  job.host = "push.example";
  job.context = {{"subscription_id", 42}, {"note", "Grüße"}};
  const TimePoint since = clock.Now() - std::chrono::hours(24 * 7);
  outcomes.WebPushGone(job, 410, "http 410");
  job.context = nullptr;
  outcomes.DeliveryDead(job, "timeout: Connection timed out", 0);
  outcomes.HostUnavailable("h.example", since, "http 503");
  outcomes.HostAvailable("h.example", since);
  EXPECT_EQ(outcomes.pushed(), 4);
  EXPECT_EQ(stats.outcome_jobs, 4);

  std::vector<json> pushed;
  Settle(io);
  for (const JobRecord& taken : TakeAllOn(io, *store, "outcomes", clock.Now())) {
    pushed.push_back(json::parse(taken.payload));
  }
  return pushed;
}

TEST_P(OutcomeJobsTest, EachOutcomeIsAJobOnTheOutcomesQueueWithOneObject) {
  ManualClock clock;
  const std::string at = FormatRfc3339(clock.Now());
  const std::string since = FormatRfc3339(clock.Now() - std::chrono::hours(24 * 7));
  std::vector<json> pushed = PushEachEvent(OutcomeArgs::kObject, GetParam(), clock);
  ASSERT_EQ(pushed.size(), 4u);
  for (const json& job : pushed) {
    EXPECT_EQ(job["queue"], "outcomes");
    ASSERT_EQ(job["args"].size(), 1u) << job.dump();
    EXPECT_EQ(job["jobtype"], OutcomeJobType(job["args"][0]["event"].get<std::string>()));
  }
  EXPECT_EQ(pushed[0]["jobtype"], kWebPushGoneJobType);
  EXPECT_EQ(pushed[0]["args"][0],
            json({{"event", "webpush_gone"},
                  {"at", at},
                  {"host", "push.example"},
                  {"status", 410},
                  {"reason", "http 410"},
                  {"jid", "abc123456"},
                  {"jobtype", "webpush"},
                  {"url", "https://push.example/sub"},
                  {"context", {{"subscription_id", 42}, {"note", "Grüße"}}}}));
  EXPECT_EQ(pushed[1]["jobtype"], kDeliveryDeadJobType);
  EXPECT_EQ(pushed[1]["args"][0], json({{"event", "delivery_dead"},
                                        {"at", at},
                                        {"host", "push.example"},
                                        {"status", nullptr},
                                        {"reason", "timeout: Connection timed out"},
                                        {"jid", "abc123456"},
                                        {"jobtype", "webpush"},
                                        {"url", "https://push.example/sub"}}))
      << "no context when the job carried none; status null without an HTTP answer";
  EXPECT_EQ(pushed[2]["jobtype"], kHostUnavailableJobType);
  EXPECT_EQ(pushed[2]["args"][0], json({{"event", "host_unavailable"},
                                        {"at", at},
                                        {"host", "h.example"},
                                        {"status", 503},
                                        {"reason", "http 503"},
                                        {"since", since}}));
  EXPECT_EQ(pushed[3]["jobtype"], kHostAvailableJobType);
  EXPECT_EQ(pushed[3]["args"][0], json({{"event", "host_available"},
                                        {"at", at},
                                        {"host", "h.example"},
                                        {"status", nullptr},
                                        {"since", since}}));
  for (const json& job : pushed) {
    Result<OutcomeRecord> back = OutcomeRecordFromJson(job["args"][0]);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(ToJson(*back), job["args"][0]) << "what a worker reads back is what was written";
  }
}

// delivery_outcome_args = "positional" (deprecated): the arguments of earlier versions, unchanged.
TEST_P(OutcomeJobsTest, PositionalFormKeepsTheArgumentsOfEarlierVersions) {
  ManualClock clock;
  std::vector<json> pushed = PushEachEvent(OutcomeArgs::kPositional, GetParam(), clock);
  ASSERT_EQ(pushed.size(), 4u);
  EXPECT_EQ(pushed[0]["jobtype"], kWebPushGoneJobType);
  EXPECT_EQ(pushed[0]["args"], json::array({"https://push.example/sub", "abc123456"}));
  EXPECT_EQ(pushed[1]["jobtype"], kDeliveryDeadJobType);
  EXPECT_EQ(pushed[1]["args"], json::array({"abc123456", "webpush", "timeout: Connection timed out",
                                            "https://push.example/sub"}));
  EXPECT_EQ(pushed[2]["jobtype"], kHostUnavailableJobType);
  EXPECT_EQ(pushed[2]["args"], json::array({"h.example"}));
  EXPECT_EQ(pushed[3]["jobtype"], kHostAvailableJobType);
  EXPECT_EQ(pushed[3]["args"], json::array({"h.example"}));
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

  a.WebPushGone(job, 410, "http 410");
  b.WebPushGone(job, 410, "http 410");  // the delivery re-ran on B after A died before ending it
  a.DeliveryDead(other, "http 400", 400);
  b.DeliveryDead(other, "http 400", 400);
  b.WebPushGone(other, 404, "http 404");  // another event: its own job
  a.HostUnavailable("h.example", since, "timeout");
  b.HostUnavailable("h.example", since, "timeout");  // both crossed the threshold at once
  b.HostUnavailable("h.example", since + std::chrono::hours(1), "");  // a later failing period
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
