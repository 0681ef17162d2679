// Engine tests on a memory store with a manual clock; blocking waits run the io_context until a
// condition holds (bounded), never sleep.
#include "bulkhead/engine/engine.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bulkhead/engine/job_parser.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

class FakeBuiltin : public BuiltinJobs {
 public:
  bool Handles(std::string_view jobtype) const override { return jobtype == "webpush"; }
  Status Validate(const JobRecord& job) const override {
    if (job.payload.find("bad-endpoint") != std::string::npos) {
      return Status::InvalidArgument("webpush: subscription.endpoint is not a URL");
    }
    return Status::Ok();
  }
  void OnJobsAvailable() override { ++available; }
  int available = 0;
};

class EngineTest : public ::testing::Test {
 protected:
  EngineTest() {
    config_.fetch_block_ms = 50;
    store_ = std::move(*OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); }));
    engine_ = std::make_unique<Engine>(io_, *store_, config_, clock_, rng_);
  }
  Status Push(const std::string& json) {
    auto job = ParseJob(json, clock_.Now());
    if (!job.ok()) return job.status();
    std::optional<Status> out;
    engine_->Push(std::move(*job), [&](Status s) { out = s; });
    EXPECT_TRUE(out.has_value()) << "memory store answers inline";
    return *out;
  }
  std::optional<std::string> Fetch(std::vector<std::string> queues) {
    std::optional<Result<std::optional<std::string>>> out;
    engine_->Fetch(queues, "", [&](Result<std::optional<std::string>> r) { out = std::move(r); });
    for (int i = 0; i < 1000 && !out; ++i) io_.run_one_for(10ms);
    EXPECT_TRUE(out.has_value()) << "FETCH never answered";
    return out && out->ok() ? **out : std::nullopt;
  }
  StoreStats Stats() {
    StoreStats s;
    store_->Stats([&](Result<StoreStats> r) { s = *r; });
    return s;
  }

  Config config_;
  ManualClock clock_;
  ScriptedRng rng_;
  boost::asio::io_context io_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineTest, BuiltinJobsNeverReachFetchAndAreValidatedAtPush) {
  FakeBuiltin builtin;
  engine_->SetBuiltinJobs(&builtin);
  EXPECT_TRUE(Push(R"({"jid":"webpush01","jobtype":"webpush","args":[{}]})").ok());
  EXPECT_EQ(builtin.available, 1);
  Status bad = Push(R"({"jid":"webpush02","jobtype":"webpush","args":["bad-endpoint"]})");
  EXPECT_EQ(bad.message(), "webpush: subscription.endpoint is not a URL");
  EXPECT_TRUE(Push(R"({"jid":"mailjob01","jobtype":"mail","args":[]})").ok());
  EXPECT_NE(Fetch({"default"})->find("mailjob01"), std::string::npos);
  EXPECT_FALSE(Fetch({"default"}).has_value()) << "a worker on default must not get the webpush job";
  StoreStats s = Stats();
  EXPECT_EQ(s.queues[kDeliveryQueue].size, 1u);
  // The dispatcher takes it from the delivery queue; the payload keeps the client's queue.
  std::optional<JobRecord> job;
  store_->Fetch({kDeliveryQueue}, clock_.Now(), [&](auto r) { job = **r; });
  ASSERT_TRUE(job);
  EXPECT_EQ(nlohmann::json::parse(job->payload)["queue"], "default");
}

TEST_F(EngineTest, FailOptionsDelayKillOrDiscard) {
  for (const char* jid : {"optjob001", "optjob002", "optjob003"}) {
    ASSERT_TRUE(Push(std::string(R"({"jobtype":"t","args":[],"jid":")") + jid + "\"}").ok());
    ASSERT_TRUE(Fetch({"default"}));
  }
  bool done = false;
  FailOptions later;
  later.not_before = clock_.Now() + 1h;
  engine_->Fail("optjob001", {"http_429", "Retry-After 3600", {}}, [&](Status s) { done = s.ok(); },
                later);
  EXPECT_TRUE(done);
  std::vector<JobRecord> retries;
  store_->List(JobState::kRetry, 0, 10, [&](auto r) { retries = *r; });
  ASSERT_EQ(retries.size(), 1u);
  EXPECT_EQ(retries[0].score, ToUnixMicros(clock_.Now() + 1h));
  FailOptions dead;
  dead.dead = true;
  engine_->Fail("optjob002", {"http_400", "bad request", {}}, [](Status) {}, dead);
  FailOptions discard;
  discard.discard = true;
  engine_->Fail("optjob003", {"gone", "subscription gone", {}}, [](Status) {}, discard);
  StoreStats s = Stats();
  EXPECT_EQ(s.dead, 1u);
  EXPECT_EQ(s.retries, 1u);
  EXPECT_EQ(s.working, 0u);
  EXPECT_EQ(s.processed, 3);
  EXPECT_EQ(s.failures, 2) << "a discarded delivery is finished, not failed";
}

TEST_F(EngineTest, ExpiredReservationFailsThroughTheRetryPolicy) {
  ASSERT_TRUE(Push(R"({"jid":"expire001","jobtype":"t","args":[],"reserve_for":60})").ok());
  ASSERT_TRUE(Fetch({"default"}));
  clock_.Advance(61s);
  engine_->RunReaperOnce();
  std::vector<JobRecord> retries;
  store_->List(JobState::kRetry, 0, 10, [&](auto r) { retries = *r; });
  ASSERT_EQ(retries.size(), 1u);
  auto failure = nlohmann::json::parse(retries[0].payload)["failure"];
  EXPECT_EQ(failure["errtype"], "ReservationExpired");
  EXPECT_EQ(failure["message"], "Faktory job reservation expired");
}

TEST_F(EngineTest, DueRetriesReturnToTheirQueue) {
  ASSERT_TRUE(Push(R"({"jid":"retry0001","jobtype":"t","args":[],"queue":"q"})").ok());
  ASSERT_TRUE(Fetch({"q"}));
  engine_->Fail("retry0001", {}, [](Status) {});
  EXPECT_FALSE(Fetch({"q"}).has_value());
  clock_.Advance(15s);  // ScriptedRng gives 0 jitter: first retry after exactly 15 s
  engine_->RunScheduledOnce();
  auto job = Fetch({"q"});
  ASSERT_TRUE(job);
  EXPECT_EQ(nlohmann::json::parse(*job)["failure"]["retry_count"], 0);
}

}  // namespace
}  // namespace bulkhead
