#include "bulkhead/dispatch/attempt_runner.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bulkhead/dispatch/testing/store_timing.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/transport/testing/scripted_transport.h"

namespace bulkhead {
namespace {

using nlohmann::json;
using std::chrono::hours;
using std::chrono::seconds;

// A runner over the memory store and a real Engine; jobs are pushed to a plain queue and reserved
// from it, as the dispatcher holds them, before the runner sees them. Each test runs with the store
// answering inline and deferred (dispatch/testing/store_timing.h); reads settle the loop first.
class AttemptRunnerTest : public ::testing::TestWithParam<StoreTiming> {
 protected:
  AttemptRunnerTest() {
    store_ = OpenTimedStore(GetParam(), io_);
    engine_ = std::make_unique<Engine>(io_, *store_, config_, clock_, rng_);
    dconfig_.webhook_deadlines.total = seconds(7);
    compartments_ = std::make_unique<HostCompartments>(dconfig_.compartments, rng_);
    outcomes_ = std::make_unique<OutcomeJobs>(*engine_, clock_, "bulkhead", stats_);
    keeper_ = std::make_unique<HostStateKeeper>(*store_, *compartments_, *outcomes_, clock_);
    runner_ = std::make_unique<AttemptRunner>(
        AttemptRunner::Parts{*engine_, transport_, nullptr, keys_, clock_, *compartments_, *keeper_,
                             *outcomes_, dconfig_, stats_});
  }

  // Pushes `args0` as a job of `jobtype` (with the fields of `extra`) and reserves it; returns it
  // read as a delivery job.
  DeliveryJob Reserve(const std::string& jobtype, json args0, json extra = json::object()) {
    json doc = {{"jid", "job-" + std::to_string(next_++) + "-abcdef"},
                {"jobtype", jobtype},
                {"queue", "q"},
                {"args", json::array({args0})}};
    doc.update(extra);
    auto record = ParseJobDocument(doc, clock_.Now());
    EXPECT_TRUE(record.ok());
    engine_->Push(std::move(*record), [](Status s) { EXPECT_TRUE(s.ok()) << s.ToString(); });
    auto taken = Await<Result<std::optional<JobRecord>>>(
        io_, "the reservation", [&](std::function<void(Result<std::optional<JobRecord>>)> cb) {
          store_->Fetch({"q"}, clock_.Now(), std::move(cb));
        });
    EXPECT_TRUE(taken.ok() && taken->has_value());
    Settle(io_);
    auto job = ParseDeliveryJob(**taken, dconfig_.jobs, nullptr);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return *job;
  }
  DeliveryJob Webhook() { return Reserve("webhook", {{"url", "https://hooks.example/x"}}); }
  Grant GrantFor(const DeliveryJob& job) {
    std::vector<HostDemand> demand = {{job.host, 1}};
    auto grants = compartments_->Schedule(demand, clock_.Now());
    EXPECT_EQ(grants.size(), 1u);
    return grants.at(0);
  }
  std::vector<JobRecord> List(JobState set) {
    Settle(io_);
    return ListOn(io_, *store_, set);
  }
  std::vector<json> Outcomes() {
    std::vector<json> out;
    Settle(io_);
    for (const JobRecord& job : TakeAllOn(io_, *store_, "bulkhead", clock_.Now())) {
      out.push_back(json::parse(job.payload));
    }
    return out;
  }
  // Sends `job` and concludes it with `response` after `latency`.
  void Run(const DeliveryJob& job, HttpResponse response, Duration latency = seconds(1)) {
    Grant grant = GrantFor(job);
    const TimePoint started = clock_.Now();
    ASSERT_TRUE(runner_->Send(job, [](HttpResponse) {}).ok());
    clock_.Advance(latency);
    runner_->Conclude(job, grant, started, response, clock_.Now());
    Settle(io_);
  }

  Config config_;
  ManualClock clock_;
  ScriptedRng rng_;
  boost::asio::io_context io_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Engine> engine_;
  InMemoryKeyRing keys_;
  ScriptedTransport transport_;
  DispatcherConfig dconfig_;
  DispatcherStats stats_;
  std::unique_ptr<HostCompartments> compartments_;
  std::unique_ptr<OutcomeJobs> outcomes_;
  std::unique_ptr<HostStateKeeper> keeper_;
  std::unique_ptr<AttemptRunner> runner_;
  int next_ = 1;
};

TEST_P(AttemptRunnerTest, SendsTheRequestWithItsKindsDeadlines) {
  DeliveryJob job = Webhook();
  bool answered = false;
  ASSERT_TRUE(runner_->Send(job, [&](HttpResponse) { answered = true; }).ok());
  ASSERT_EQ(transport_.calls.size(), 1u);
  EXPECT_EQ(transport_.calls[0].request.url, "https://hooks.example/x");
  EXPECT_EQ(transport_.calls[0].request.method, "POST");
  EXPECT_EQ(transport_.calls[0].request.deadlines.total, seconds(7));
  EXPECT_EQ(stats_.attempts, 1);
  EXPECT_FALSE(answered) << "never inside Send";
  transport_.Answer(0, ScriptedTransport::Status(200));
  EXPECT_TRUE(answered);
}

TEST_P(AttemptRunnerTest, SuccessIsAckedAndReportedToTheCompartment) {
  DeliveryJob job = Webhook();
  Run(job, ScriptedTransport::Status(204));
  EXPECT_TRUE(List(JobState::kWorking).empty());
  EXPECT_TRUE(List(JobState::kRetry).empty());
  EXPECT_EQ(stats_.acked, 1);
  EXPECT_EQ(compartments_->global_in_flight(), 0);
  EXPECT_EQ(compartments_->Find("hooks.example")->Snapshot(clock_.Now()).successes, 1);
  EXPECT_TRUE(Outcomes().empty());
}

TEST_P(AttemptRunnerTest, RetryableFailureWaitsForTheHostsRetryAfter) {
  DeliveryJob job = Webhook();
  Run(job, ScriptedTransport::Status(429, {{"Retry-After", "600"}}));
  auto retry = List(JobState::kRetry);
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_GE(FromUnixMicros(retry[0].score), clock_.Now() + seconds(600));
  EXPECT_EQ(stats_.retried, 1);
  EXPECT_TRUE(Outcomes().empty());
}

TEST_P(AttemptRunnerTest, PermanentRefusalGoesDeadWithAnOutcomeJob) {
  DeliveryJob job = Webhook();
  Run(job, ScriptedTransport::Status(400));
  auto dead = List(JobState::kDead);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(json::parse(dead[0].payload)["failure"]["errtype"], "DeliveryRefused");
  EXPECT_EQ(stats_.dead, 1);
  auto outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0]["jobtype"], kDeliveryDeadJobType);
  const json& outcome = outcomes[0]["args"][0];
  EXPECT_EQ(outcome["event"], "delivery_dead");
  EXPECT_EQ(outcome["jid"], job.jid);
  EXPECT_EQ(outcome["jobtype"], "webhook");
  EXPECT_EQ(outcome["url"], "https://hooks.example/x");
  EXPECT_EQ(outcome["host"], "hooks.example");
  EXPECT_EQ(outcome["status"], 400);
  EXPECT_EQ(outcome["reason"], "http 400");
}

TEST_P(AttemptRunnerTest, RetryableFailurePastTheDeadlineIsHostUnavailable) {
  DeliveryJob job = Webhook();
  Run(job, ScriptedTransport::Error(TransportError::kConnectRefused), hours(25));
  auto dead = List(JobState::kDead);
  ASSERT_EQ(dead.size(), 1u);
  const std::string message = json::parse(dead[0].payload)["failure"]["message"];
  EXPECT_EQ(message.rfind("host unavailable (last: connect_error", 0), 0u) << message;
  EXPECT_EQ(stats_.expired, 1);
  EXPECT_EQ(stats_.dead, 1);
  auto outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0]["args"][0]["reason"], message);
  EXPECT_TRUE(outcomes[0]["args"][0]["status"].is_null()) << "no HTTP answer";
}

// Past the deadline after an HTTP answer: the outcome carries that answer's status, so the app
// can tell a host that kept answering 503 from a 4xx.
TEST_P(AttemptRunnerTest, DeadlinePassedAfterAnHttpAnswerCarriesItsStatus) {
  DeliveryJob job = Webhook();
  Run(job, ScriptedTransport::Status(503), hours(25));
  auto outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0]["args"][0]["reason"], "host unavailable (last: http 503)");
  EXPECT_EQ(outcomes[0]["args"][0]["status"], 503);
}

// The last retry spent: the job is dead (the engine's retry policy) and the app is told, with the
// status of the answer.
TEST_P(AttemptRunnerTest, LastRetryFailingIsDeadWithTheStatusOfItsAnswer) {
  // Two failures already: this one is the third, and the job retries twice.
  DeliveryJob job =
      Reserve("webhook", {{"url", "https://hooks.example/x"}, {"context", {{"hook_id", 3}}}},
              {{"retry", 2}, {"failure", {{"retry_count", 1}, {"message", "http 502"}}}});
  ASSERT_EQ(job.last_retry_count, 1);
  EXPECT_EQ(job.last_failure, "http 502");
  Run(job, ScriptedTransport::Status(500));
  EXPECT_EQ(List(JobState::kDead).size(), 1u);
  EXPECT_EQ(stats_.dead, 1);
  auto outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0]["args"][0]["status"], 500);
  EXPECT_EQ(outcomes[0]["args"][0]["reason"], "http 500");
  EXPECT_EQ(outcomes[0]["args"][0]["context"], json({{"hook_id", 3}}));
}

// retry 0: the first failure ends the job — discarded, not kept dead (Faktory's rule) — and the
// app is told, as for any delivery that will not be retried.
TEST_P(AttemptRunnerTest, RetryZeroEndsAtTheFirstFailureAndIsReported) {
  DeliveryJob job = Reserve("webhook", {{"url", "https://hooks.example/x"}}, {{"retry", 0}});
  Run(job, ScriptedTransport::Status(503));
  EXPECT_TRUE(List(JobState::kDead).empty());
  EXPECT_TRUE(List(JobState::kRetry).empty());
  EXPECT_TRUE(List(JobState::kWorking).empty());
  auto outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0]["args"][0]["event"], "delivery_dead");
  EXPECT_EQ(outcomes[0]["args"][0]["status"], 503);
}

TEST_P(AttemptRunnerTest, GoneSubscriptionIsReportedWithItsStatusAndContext) {
  DeliveryJob job =
      Reserve("webpush", {{"subscription",
                           {{"endpoint", "https://push.example/sub/9"},
                            {"keys",
                             {{"p256dh", VapidKey::Generate()->public_key_b64url()},
                              {"auth", "AAAAAAAAAAAAAAAAAAAAAA"}}}}},
                          {"context", {{"web_push_subscription_id", 9}, {"user", "alice"}}}});
  Grant grant = GrantFor(job);
  runner_->Conclude(job, grant, clock_.Now(), ScriptedTransport::Status(404), clock_.Now());
  Settle(io_);
  EXPECT_TRUE(List(JobState::kDead).empty()) << "discarded, not dead";
  auto outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0]["jobtype"], kWebPushGoneJobType);
  const json& outcome = outcomes[0]["args"][0];
  EXPECT_EQ(outcome["status"], 404);
  EXPECT_EQ(outcome["url"], "https://push.example/sub/9");
  EXPECT_EQ(outcome["context"], json({{"web_push_subscription_id", 9}, {"user", "alice"}}));
}

TEST_P(AttemptRunnerTest, UnbuildableRequestIsRefusedAndFreesTheSlot) {
  // Parsed without a key ring, so the unknown key only shows when the request is built.
  DeliveryJob job = Reserve("activitypub", {{"inbox", "https://remote.example/inbox"},
                                            {"activity", {{"type", "Create"}}},
                                            {"key_id", "https://social.example/users/x#k"}});
  Grant grant = GrantFor(job);
  Status sent = runner_->Send(job, [](HttpResponse) {});
  ASSERT_FALSE(sent.ok());
  EXPECT_TRUE(transport_.calls.empty());
  runner_->Refused(job, grant, sent, clock_.Now());
  Settle(io_);
  EXPECT_EQ(compartments_->global_in_flight(), 0);
  auto dead = List(JobState::kDead);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(json::parse(dead[0].payload)["failure"]["errtype"], "InvalidDeliveryJob");
}

TEST_P(AttemptRunnerTest, ReleasedAttemptLeavesTheJobReserved) {
  DeliveryJob job = Webhook();
  Grant grant = GrantFor(job);
  const TimePoint started = clock_.Now();
  ASSERT_TRUE(runner_->Send(job, [](HttpResponse) {}).ok());
  runner_->Release(grant, started, clock_.Now());
  EXPECT_EQ(compartments_->global_in_flight(), 0);
  EXPECT_EQ(List(JobState::kWorking).size(), 1u);
  EXPECT_EQ(stats_.acked + stats_.retried + stats_.dead, 0);
}

INSTANTIATE_TEST_SUITE_P(StoreTimings, AttemptRunnerTest, kBothTimings, StoreTimingName);

}  // namespace
}  // namespace bulkhead
