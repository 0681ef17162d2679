// A DeliveryExtension through the real Dispatcher, memory store and Engine with a scripted
// transport (as dispatcher_test.cc): a job type defined outside dispatch/ is validated at PUSH by
// the extension, its request is built later (as when a token must be fetched first), and the
// extension's verdicts lead where the built-in kinds' do, plus its own: a hold of its compartment,
// and the token-gone outcome.
#include "bulkhead/dispatch/delivery_extension.h"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "bulkhead/dispatch/delivery_job.h"
#include "bulkhead/dispatch/dispatcher.h"
#include "bulkhead/dispatch/testing/store_timing.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/transport/testing/scripted_transport.h"

namespace bulkhead {
namespace {

using nlohmann::json;

// "ext.test" jobs: args[0] = {"app": NAME, "token": TOKEN}; the compartment is "ext:NAME"; 200 ok,
// 410 gone, 403 holds the app for 10 minutes, anything else as a webhook's answer.
class TestExtension final : public DeliveryExtension {
 public:
  explicit TestExtension(boost::asio::io_context& io) : io_(io) {}
  bool Handles(std::string_view jobtype) const override { return jobtype == "ext.test"; }
  Status Read(const json& arg, TimePoint born, DeliveryJob& job) const override {
    if (!arg.contains("token") || !arg["token"].is_string()) {
      return Status::InvalidArgument("ext.test: args[0].token must be a string");
    }
    job.url = "https://ext.example/send/" + arg["token"].get<std::string>();
    job.host = "ext:" + arg.value("app", std::string("app"));
    job.deadline = born + std::chrono::hours(1);
    return Status::Ok();
  }
  void Build(const DeliveryJob& job, BuildDone done) override {
    HttpRequest r;
    r.method = "POST";
    r.url = job.url;
    ++builds;
    boost::asio::post(io_, [r = std::move(r), done = std::move(done)]() mutable { done(r); });
  }
  ExtensionVerdict Judge(const DeliveryJob& job, const HttpResponse& r, Duration latency,
                         TimePoint now) override {
    ++judged;
    if (r.ok() && r.status == 200) return {{OutcomeClass::kOk, HostSignal::kHealthy, "", 200}};
    if (r.ok() && r.status == 410) {
      return {{OutcomeClass::kGone, HostSignal::kHealthy, "http 410 Unregistered", 410}};
    }
    if (r.ok() && r.status == 403) {
      return {{OutcomeClass::kRetryable, HostSignal::kNone, "http 403 Bad", 403},
              now + std::chrono::minutes(10)};
    }
    return {Classify(JobKind::kWebhook, AttemptResult{r.error, r.status})};
  }
  bool OnGone(const DeliveryJob& job, const Outcome& outcome) override {
    gone.push_back(job.jid);
    return false;  // the dispatcher pushes bulkhead.relay_token_gone
  }

  int builds = 0;
  int judged = 0;
  std::vector<std::string> gone;

 private:
  boost::asio::io_context& io_;
};

class DeliveryExtensionTest : public ::testing::TestWithParam<StoreTiming> {
 protected:
  DeliveryExtensionTest() : extension_(io_) {
    ApplyDeliveryDefaults(config_);
    store_ = OpenTimedStore(GetParam(), io_);
    engine_ = std::make_unique<Engine>(io_, *store_, config_, clock_, rng_);
    dispatcher_ = std::make_unique<Dispatcher>(io_, *engine_, transport_, nullptr, keys_, clock_,
                                               rng_, DispatcherConfig{});
    dispatcher_->AddExtension(&extension_);
    engine_->SetBuiltinJobs(dispatcher_.get());
    transport_.AfterEachAnswer([this] { Settle(io_); });
    dispatcher_->Start();
    Settle(io_);
  }
  ~DeliveryExtensionTest() override { engine_->SetBuiltinJobs(nullptr); }

  Status Push(const std::string& jid, json arg) {
    json doc = {{"jid", jid}, {"jobtype", "ext.test"}, {"args", json::array({std::move(arg)})}};
    auto job = ParseJobDocument(doc, clock_.Now());
    if (!job.ok()) return job.status();
    Status out = Await<Status>(io_, "PUSH", [&](std::function<void(Status)> done) {
      engine_->Push(std::move(*job), std::move(done));
    });
    Settle(io_);
    return out;
  }

  Config config_;
  ManualClock clock_{FromUnixMicros(1'800'000'000'000'000)};
  ScriptedRng rng_;
  boost::asio::io_context io_;
  ScriptedTransport transport_;
  InMemoryKeyRing keys_;
  TestExtension extension_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Dispatcher> dispatcher_;
};

TEST_P(DeliveryExtensionTest, ValidatedByTheExtensionBuiltLaterAndAcked) {
  Status refused = Push("ext-bad-0001", {{"app", "a"}});
  EXPECT_EQ(refused.message(), "ext.test: args[0].token must be a string");
  ASSERT_TRUE(Push("ext-ok-00001", {{"app", "a"}, {"token", "t1"}}).ok());
  ASSERT_EQ(transport_.calls.size(), 1u);
  EXPECT_EQ(transport_.calls[0].request.url, "https://ext.example/send/t1");
  EXPECT_EQ(extension_.builds, 1);
  transport_.Answer(0, ScriptedTransport::Status(200));
  EXPECT_EQ(extension_.judged, 1);
  EXPECT_TRUE(ListOn(io_, *store_, JobState::kWorking).empty());
  EXPECT_TRUE(ListOn(io_, *store_, JobState::kDead).empty());
}

TEST_P(DeliveryExtensionTest, GoneIsDiscardedWithTheTokenGoneOutcome) {
  ASSERT_TRUE(
      Push("ext-gone-0001", {{"app", "a"}, {"token", "t1"}, {"context", {{"id", 7}}}}).ok());
  transport_.Answer(0, ScriptedTransport::Status(410));
  EXPECT_EQ(extension_.gone, std::vector<std::string>{"ext-gone-0001"});
  EXPECT_TRUE(ListOn(io_, *store_, JobState::kWorking).empty());
  EXPECT_TRUE(ListOn(io_, *store_, JobState::kDead).empty());
  auto outcomes = TakeAllOn(io_, *store_, "bulkhead", clock_.Now());
  ASSERT_EQ(outcomes.size(), 1u);
  json o = json::parse(outcomes[0].payload);
  EXPECT_EQ(o["jobtype"], "bulkhead.relay_token_gone");
  EXPECT_EQ(o["jid"], "bh-token-gone-ext-gone-0001");
  EXPECT_EQ(o["args"][0]["host"], "ext:a");
  EXPECT_EQ(o["args"][0]["status"], 410);
  EXPECT_EQ(o["args"][0]["context"], (json{{"id", 7}}));
}

TEST_P(DeliveryExtensionTest, AHoldStopsTheCompartmentNotTheOthers) {
  ASSERT_TRUE(Push("ext-hold-0001", {{"app", "a"}, {"token", "t1"}}).ok());
  transport_.Answer(0, ScriptedTransport::Status(403));
  ASSERT_TRUE(Push("ext-hold-0002", {{"app", "a"}, {"token", "t2"}}).ok());
  ASSERT_TRUE(Push("ext-other-001", {{"app", "b"}, {"token", "t3"}}).ok());
  ASSERT_EQ(transport_.calls.size(), 2u) << "app a holds; app b is its own compartment";
  EXPECT_EQ(transport_.calls[1].request.url, "https://ext.example/send/t3");
  clock_.Advance(std::chrono::minutes(10) + std::chrono::seconds(1));
  dispatcher_->Pump();
  Settle(io_);
  ASSERT_EQ(transport_.calls.size(), 3u) << "the held job goes once the hold has passed";
  EXPECT_EQ(transport_.calls[2].request.url, "https://ext.example/send/t2");
}

INSTANTIATE_TEST_SUITE_P(StoreTimings, DeliveryExtensionTest, kBothTimings, StoreTimingName);

}  // namespace
}  // namespace bulkhead
