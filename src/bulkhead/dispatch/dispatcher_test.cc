// Dispatcher with the real memory store and Engine, a scripted Transport and a ManualClock: every
// delivery's request and outcome is decided by the test; no sockets, no sleeps, no threads. Every
// test runs twice (dispatch/testing/store_timing.h): with the store answering inline, and with
// every answer deferred to a later turn of the loop; each step settles the loop before the test
// looks.

#include "bulkhead/dispatch/dispatcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "bulkhead/dispatch/testing/store_timing.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/metrics/metric_names.h"
#include "bulkhead/store/testing/shared_store.h"
#include "bulkhead/transport/testing/scripted_transport.h"
#include "bulkhead/util/base64.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

using nlohmann::json;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

const SigningKey& ActorKey() {
  static const SigningKey key = *SigningKey::Generate(2048);
  return key;
}

class DispatcherTest : public ::testing::TestWithParam<StoreTiming> {
 protected:
  DispatcherTest() {
    ApplyDeliveryDefaults(config_);
    store_ = OpenTimedStore(GetParam(), io_);
    engine_ = std::make_unique<Engine>(io_, *store_, config_, clock_, rng_);
    auto signer = VapidSigner::Create(*VapidKey::Generate(), "mailto:ops@example.com", clock_);
    signer_ = std::move(*signer);
    keys_.Add("https://social.example/users/alice#main-key", ActorKey());
    dconfig_.compartments.compartment.breaker.failure_threshold = 2;
    dconfig_.compartments.compartment.unavailable_after = minutes(10);
  }
  ~DispatcherTest() override {
    if (dispatcher_) engine_->SetBuiltinJobs(nullptr);
  }

  void StartDispatcher(ScriptedTransport& transport) {
    dispatcher_ = std::make_unique<Dispatcher>(io_, *engine_, transport, signer_.get(), keys_,
                                               clock_, rng_, dconfig_);
    if (build_threads_ > 0) dispatcher_->BuildOnWorkers(build_threads_, build_fn_);
    engine_->SetBuiltinJobs(dispatcher_.get());
    transport.AfterEachAnswer([this] { Settle(io_); });
    dispatcher_->Start();
    Settle(io_);  // restoring and adoption continue on the loop
  }

  // Runs the loop until `done()`: what worker threads post arrives on it. Bounded (10 s).
  bool RunLoopUntil(const std::function<bool()>& done) {
    auto until = std::chrono::steady_clock::now() + seconds(10);
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) return false;
      io_.restart();
      io_.run_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  // What the dispatcher's timer does, or the engine's scheduler and reaper, each settled.
  void Pump() {
    dispatcher_->Pump();
    Settle(io_);
  }
  void RunScheduled() {
    engine_->RunScheduledOnce();
    Settle(io_);
  }
  void RunReaper() {
    engine_->RunReaperOnce();
    Settle(io_);
  }

  // The process dies (deliveries in flight stay reserved) and starts again on the same store.
  void Restart(ScriptedTransport& transport) {
    engine_->SetBuiltinJobs(nullptr);
    dispatcher_.reset();
    StartDispatcher(transport);
  }

  // `host`'s entry in the dispatcher's snapshot (a default one, and a failure, when missing).
  CompartmentSnapshot HostSnapshot(const std::string& host) {
    Settle(io_);
    for (const CompartmentSnapshot& h : dispatcher_->Snapshot().hosts) {
      if (h.host == host) return h;
    }
    ADD_FAILURE() << "no host " << host << " in the snapshot";
    return {};
  }

  std::vector<HostStateRecord> SavedHosts() {
    Settle(io_);
    return HostStatesOn(io_, *store_);
  }

  Status Push(json doc) {
    if (!doc.contains("jid")) doc["jid"] = "delivery" + std::to_string(next_jid_++);
    auto job = ParseJobDocument(doc, clock_.Now());
    if (!job.ok()) return job.status();
    Status out = Await<Status>(io_, "PUSH", [&](std::function<void(Status)> done) {
      engine_->Push(std::move(*job), std::move(done));
    });
    Settle(io_);  // the dispatcher takes and sends what it may
    return out;
  }

  static std::string Subscriber() {
    static const std::string p256dh = VapidKey::Generate()->public_key_b64url();
    return p256dh;
  }
  static json WebPush(const std::string& endpoint, const std::string& payload = "hello") {
    return {{"jobtype", "webpush"},
            {"queue", "push"},
            {"args",
             {{{"subscription",
                {{"endpoint", endpoint},
                 {"keys",
                  {{"p256dh", Subscriber()}, {"auth", Base64UrlEncode(std::string(16, '\x07'))}}}}},
               {"payload", payload},
               {"ttl", 3600}}}}};
  }
  static json Webhook(const std::string& url, json extra = json::object()) {
    json arg = {{"url", url}};
    arg.update(extra);
    return {{"jobtype", "webhook"}, {"args", {arg}}};
  }
  static json ActivityPub(const std::string& inbox, const std::string& key_id) {
    return {{"jobtype", "activitypub"},
            {"args",
             {{{"inbox", inbox},
               {"activity", {{"type", "Create"}, {"id", "https://social.example/1"}}},
               {"key_id", key_id}}}}};
  }

  std::vector<JobRecord> List(JobState set) {
    Settle(io_);
    return ListOn(io_, *store_, set);
  }
  // Takes every job from the outcomes queue.
  std::vector<json> Outcomes() {
    std::vector<json> out;
    Settle(io_);
    for (const JobRecord& job : TakeAllOn(io_, *store_, "bulkhead", clock_.Now())) {
      out.push_back(json::parse(job.payload));
    }
    return out;
  }
  static json PayloadOf(const JobRecord& r) { return json::parse(r.payload); }

  Config config_;
  ManualClock clock_;
  ScriptedRng rng_;  // always 0: no jitter in backoff or breaker intervals
  boost::asio::io_context io_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<VapidSigner> signer_;
  InMemoryKeyRing keys_;
  DispatcherConfig dconfig_;
  Registry metrics_;  // outlives the dispatcher, whose callbacks it holds
  std::unique_ptr<Dispatcher> dispatcher_;
  size_t build_threads_ = 0;  // > 0: requests built on worker threads (BuildOnWorkers)
  RequestBuilder::BuildFn build_fn_;
  int next_jid_ = 1;
};

TEST_P(DispatcherTest, ValidateRefusesBadDeliveryJobsAtPush) {
  ScriptedTransport transport;
  StartDispatcher(transport);
  Status s = Push(WebPush("http://push.example/sub/1"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("https"), std::string::npos) << s.message();
  s = Push(ActivityPub("https://remote.example/inbox", "https://social.example/users/bob#key"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no signing key"), std::string::npos) << s.message();
  s = Push(Webhook("https://hooks.example/x", {{"method", "TRACE"}}));
  EXPECT_NE(s.message().find("method"), std::string::npos) << s.message();
  s = Push({{"jobtype", "webhook"}, {"args", {42}}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(transport.calls.empty());
  EXPECT_TRUE(Push({{"jobtype", "Mail"}, {"args", {1}}}).ok()) << "other job types untouched";
}

TEST_P(DispatcherTest, RoutesEachKindToItsRequestAndAcksSuccess) {
  ScriptedTransport transport;
  StartDispatcher(transport);
  ASSERT_TRUE(Push(WebPush("https://push.example/sub/1", "ping")).ok());
  ASSERT_TRUE(Push(ActivityPub("https://remote.example/inbox",
                               "https://social.example/users/alice#main-key"))
                  .ok());
  ASSERT_TRUE(
      Push(Webhook("https://hooks.example/x",
                   {{"method", "PUT"}, {"headers", {{"X-Token", "t1"}}}, {"body", {{"a", 1}}}}))
          .ok());
  ASSERT_EQ(transport.calls.size(), 3u) << "each job sent at once";

  const HttpRequest& wp = transport.calls[0].request;
  EXPECT_EQ(wp.method, "POST");
  EXPECT_EQ(wp.url, "https://push.example/sub/1");
  HttpResponse probe;
  probe.headers = wp.headers;
  ASSERT_TRUE(probe.Header("Authorization"));
  EXPECT_EQ(probe.Header("Authorization")->substr(0, 8), "vapid t=");
  EXPECT_EQ(probe.Header("TTL"), "3600");
  EXPECT_EQ(probe.Header("Content-Encoding"), "aes128gcm");
  EXPECT_EQ(wp.body.size(), 86u + 4 + 1 + 16) << "header + 'ping' + delimiter + tag";

  const HttpRequest& ap = transport.calls[1].request;
  EXPECT_EQ(ap.method, "POST");
  EXPECT_EQ(ap.url, "https://remote.example/inbox");
  probe.headers = ap.headers;
  EXPECT_EQ(probe.Header("Content-Type"), "application/activity+json");
  ASSERT_TRUE(probe.Header("Signature"));
  EXPECT_NE(
      probe.Header("Signature")->find("keyId=\"https://social.example/users/alice#main-key\""),
      std::string::npos);
  EXPECT_EQ(json::parse(ap.body)["type"], "Create");

  const HttpRequest& wh = transport.calls[2].request;
  EXPECT_EQ(wh.method, "PUT");
  probe.headers = wh.headers;
  EXPECT_EQ(probe.Header("X-Token"), "t1");
  EXPECT_EQ(probe.Header("Content-Type"), "application/json");
  EXPECT_EQ(wh.body, R"({"a":1})");
  EXPECT_EQ(wh.deadlines.total, dconfig_.webhook_deadlines.total);

  EXPECT_EQ(List(JobState::kWorking).size(), 3u) << "deliveries stay reserved while in flight";
  for (size_t i = 0; i < 3; ++i) transport.Answer(i, ScriptedTransport::Status(i == 0 ? 201 : 202));
  EXPECT_TRUE(List(JobState::kWorking).empty());
  EXPECT_TRUE(List(JobState::kRetry).empty());
  EXPECT_TRUE(List(JobState::kDead).empty());
  EXPECT_TRUE(Outcomes().empty());
  EXPECT_EQ(dispatcher_->stats().acked, 3);
}

TEST_P(DispatcherTest, EachKindGetsItsOwnDeadlines) {
  using std::chrono::milliseconds;
  dconfig_.webpush_deadlines.total = milliseconds(1111);
  dconfig_.webpush_deadlines.low_speed_limit = 10;
  dconfig_.webpush_deadlines.low_speed_time = seconds(3);
  dconfig_.activitypub_deadlines.total = milliseconds(2222);
  dconfig_.activitypub_deadlines.connect = milliseconds(222);
  dconfig_.webhook_deadlines.total = milliseconds(3333);
  dconfig_.webhook_deadlines.first_byte = milliseconds(0);
  ScriptedTransport transport;
  StartDispatcher(transport);
  ASSERT_TRUE(Push(WebPush("https://push.example/sub/1")).ok());
  ASSERT_TRUE(Push(ActivityPub("https://remote.example/inbox",
                               "https://social.example/users/alice#main-key"))
                  .ok());
  ASSERT_TRUE(Push(Webhook("https://hooks.example/x")).ok());
  ASSERT_EQ(transport.calls.size(), 3u);
  const Deadlines& wp = transport.calls[0].request.deadlines;
  EXPECT_EQ(wp.total, milliseconds(1111));
  EXPECT_EQ(wp.low_speed_limit, 10);
  EXPECT_EQ(wp.low_speed_time, seconds(3));
  const Deadlines& ap = transport.calls[1].request.deadlines;
  EXPECT_EQ(ap.total, milliseconds(2222));
  EXPECT_EQ(ap.connect, milliseconds(222));
  EXPECT_EQ(ap.low_speed_limit, 0);
  const Deadlines& wh = transport.calls[2].request.deadlines;
  EXPECT_EQ(wh.total, milliseconds(3333));
  EXPECT_EQ(wh.first_byte, milliseconds(0));
  EXPECT_EQ(wh.connect, milliseconds(5000));
  for (size_t i = 0; i < 3; ++i) transport.Answer(i, ScriptedTransport::Status(200));
}

TEST_P(DispatcherTest, GoneSubscriptionIsDiscardedAndReported) {
  ScriptedTransport transport;
  StartDispatcher(transport);
  ASSERT_TRUE(Push(WebPush("https://push.example/sub/gone")).ok());
  ASSERT_EQ(transport.calls.size(), 1u);
  transport.Answer(0, ScriptedTransport::Status(410));
  EXPECT_TRUE(List(JobState::kWorking).empty());
  EXPECT_TRUE(List(JobState::kRetry).empty()) << "no retry for a gone subscription";
  EXPECT_TRUE(List(JobState::kDead).empty());
  auto outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0]["jobtype"], kWebPushGoneJobType);
  EXPECT_EQ(outcomes[0]["queue"], "bulkhead");
  const json& gone = outcomes[0]["args"][0];
  EXPECT_EQ(gone["event"], "webpush_gone");
  EXPECT_EQ(gone["url"], "https://push.example/sub/gone");
  EXPECT_EQ(gone["jid"], "delivery1");
  EXPECT_EQ(gone["status"], 410);
}

TEST_P(DispatcherTest, PermanentClientErrorGoesDeadWithReason) {
  ScriptedTransport transport;
  StartDispatcher(transport);
  ASSERT_TRUE(Push(Webhook("https://hooks.example/x")).ok());
  transport.Answer(0, ScriptedTransport::Status(400));
  auto dead = List(JobState::kDead);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(PayloadOf(dead[0])["failure"]["message"], "http 400");
  EXPECT_TRUE(List(JobState::kRetry).empty());
  auto outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0]["jobtype"], kDeliveryDeadJobType);
  const json& dead_outcome = outcomes[0]["args"][0];
  EXPECT_EQ(dead_outcome["jid"], "delivery1");
  EXPECT_EQ(dead_outcome["jobtype"], "webhook");
  EXPECT_EQ(dead_outcome["reason"], "http 400");
  EXPECT_EQ(dead_outcome["status"], 400);
  EXPECT_EQ(dead_outcome["url"], "https://hooks.example/x");
}

TEST_P(DispatcherTest, ServerErrorRetriesThroughTheRetryCount) {
  ScriptedTransport transport;
  StartDispatcher(transport);
  ASSERT_TRUE(Push(WebPush("https://push.example/sub/1")).ok());
  transport.Answer(0, ScriptedTransport::Status(500));
  auto retry = List(JobState::kRetry);
  ASSERT_EQ(retry.size(), 1u);
  json failure = PayloadOf(retry[0])["failure"];
  EXPECT_EQ(failure["retry_count"], 0);
  EXPECT_EQ(failure["remaining"], 5) << "webpush retries 5 times by default";
  EXPECT_EQ(retry[0].score, ToUnixMicros(clock_.Now() + seconds(15)))
      << "Faktory backoff, no jitter";
  EXPECT_TRUE(Outcomes().empty());

  // The retry comes back into the delivery queue and is sent again.
  clock_.Advance(seconds(15));
  RunScheduled();
  ASSERT_EQ(transport.calls.size(), 2u) << "the due retry was taken and sent";
  transport.Answer(1, ScriptedTransport::Status(201));
  EXPECT_TRUE(List(JobState::kRetry).empty());
  EXPECT_TRUE(List(JobState::kWorking).empty());
}

TEST_P(DispatcherTest, RetryAfterOf429IsRespectedAndBounded) {
  ScriptedTransport transport;
  StartDispatcher(transport);
  ASSERT_TRUE(Push(Webhook("https://hooks.example/a")).ok());
  ASSERT_TRUE(Push(Webhook("https://other.example/b")).ok());
  transport.Answer(0, ScriptedTransport::Status(429, {{"Retry-After", "600"}}));
  transport.Answer(1, ScriptedTransport::Status(503, {{"Retry-After", "999999"}}));
  auto retry = List(JobState::kRetry);
  ASSERT_EQ(retry.size(), 2u);
  for (const auto& r : retry) {
    Duration expected = r.jid == "delivery1" ? Duration(seconds(600)) : dconfig_.max_retry_after;
    EXPECT_EQ(r.score, ToUnixMicros(clock_.Now() + expected)) << r.jid;
  }
  // The host itself is left alone until then too.
  ASSERT_TRUE(Push(Webhook("https://hooks.example/c")).ok());
  EXPECT_EQ(transport.calls.size(), 2u) << "hooks.example asked for 600 s of quiet";
  EXPECT_EQ(dispatcher_->compartments().Find("hooks.example")->parked_count(), 1u);
  clock_.Advance(seconds(600));
  Pump();
  ASSERT_EQ(transport.calls.size(), 3u);
  EXPECT_EQ(transport.calls[2].request.url, "https://hooks.example/c");
}

TEST_P(DispatcherTest, JobPastItsDeadlineIsDeadAsHostUnavailable) {
  ScriptedTransport transport;
  StartDispatcher(transport);
  ASSERT_TRUE(Push(Webhook("https://hooks.example/x")).ok());
  transport.Answer(0, ScriptedTransport::Status(502));
  ASSERT_EQ(List(JobState::kRetry).size(), 1u);
  clock_.Advance(hours(25));  // webhook deadline: 1 day after creation
  RunScheduled();
  EXPECT_EQ(transport.calls.size(), 1u) << "an expired job is not sent again";
  auto dead = List(JobState::kDead);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(PayloadOf(dead[0])["failure"]["message"], "host unavailable (last: http 502)")
      << "the last failure, read from the job's payload";
  auto outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0]["jobtype"], kDeliveryDeadJobType);
  EXPECT_EQ(outcomes[0]["args"][0]["reason"], "host unavailable (last: http 502)");
  EXPECT_EQ(outcomes[0]["args"][0]["status"], 502);
}

TEST_P(DispatcherTest, ParkedJobExpiresOnTheTimerWithoutAnAttempt) {
  ScriptedTransport transport;
  StartDispatcher(transport);
  // Webpush ttl 3600 s: open the host's breaker, then let the parked job run out of time.
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(Push(WebPush("https://push.example/s" + std::to_string(i))).ok());
  ASSERT_EQ(transport.calls.size(), 3u);
  transport.Answer(0, ScriptedTransport::Error(TransportError::kConnectRefused));
  transport.Answer(1, ScriptedTransport::Error(TransportError::kConnectRefused));
  transport.Answer(2, ScriptedTransport::Error(TransportError::kConnectRefused));
  ASSERT_TRUE(Push(WebPush("https://push.example/late")).ok());
  EXPECT_EQ(transport.calls.size(), 3u) << "breaker open: the new job is parked";
  ASSERT_TRUE(dispatcher_->next_wakeup());
  clock_.Advance(hours(2));
  // Only the deadline sweep runs (the breaker would allow a probe, but the job is past its ttl).
  Pump();
  EXPECT_EQ(transport.calls.size(), 3u);
  auto dead = List(JobState::kDead);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].jid, "delivery4");
  EXPECT_EQ(PayloadOf(dead[0])["failure"]["message"], "host unavailable");
}

TEST_P(DispatcherTest, DeadHostJobsWaitParkedWithoutRetriesWhileHealthyHostCompletes) {
  ScriptedTransport transport;
  StartDispatcher(transport);
  for (int i = 0; i < 8; ++i)
    ASSERT_TRUE(Push(Webhook("https://dead.example/" + std::to_string(i))).ok());
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(Push(Webhook("https://good.example/" + std::to_string(i))).ok());
  auto dead_calls = transport.Pending("dead.example");
  auto good_calls = transport.Pending("good.example");
  ASSERT_EQ(good_calls.size(), 3u) << "the healthy host is not held back";
  ASSERT_EQ(dead_calls.size(), 4u) << "the adaptive cap's initial 4 attempts for dead.example";
  for (size_t i : dead_calls)
    transport.Answer(i, ScriptedTransport::Error(TransportError::kTimeoutTotal));
  for (size_t i : good_calls) transport.Answer(i, ScriptedTransport::Status(200));

  EXPECT_EQ(List(JobState::kRetry).size(), 4u) << "only the attempted jobs spent a retry";
  auto working = List(JobState::kWorking);
  ASSERT_EQ(working.size(), 4u) << "the other 4 stay reserved, parked in memory";
  for (const auto& w : working) EXPECT_FALSE(PayloadOf(w).contains("failure")) << w.jid;
  EXPECT_EQ(dispatcher_->compartments().Find("dead.example")->parked_count(), 4u);
  EXPECT_EQ(dispatcher_->compartments().Find("dead.example")->breaker().state(clock_.Now()),
            BreakerState::kOpen);
  EXPECT_EQ(dispatcher_->stats().acked, 3);

  // More jobs for the good host still go straight out.
  ASSERT_TRUE(Push(Webhook("https://good.example/late")).ok());
  ASSERT_EQ(transport.Pending("good.example").size(), 1u);
  transport.Answer(transport.Pending("good.example")[0], ScriptedTransport::Status(200));

  // When the breaker allows a probe, exactly one parked job is tried.
  ASSERT_TRUE(dispatcher_->next_wakeup());
  clock_.Set(*dispatcher_->next_wakeup());
  Pump();
  auto probes = transport.Pending("dead.example");
  ASSERT_EQ(probes.size(), 1u) << "one half-open probe";
  transport.Answer(probes[0], ScriptedTransport::Status(200));
  // The host answered: the parked jobs drain.
  for (int round = 0; round < 10 && !transport.Pending("dead.example").empty(); ++round) {
    for (size_t i : transport.Pending("dead.example"))
      transport.Answer(i, ScriptedTransport::Status(200));
  }
  EXPECT_EQ(dispatcher_->compartments().Find("dead.example")->parked_count(), 0u);
  EXPECT_TRUE(List(JobState::kWorking).empty());
  EXPECT_EQ(List(JobState::kRetry).size(), 4u);
}

TEST_P(DispatcherTest, ParkedJobsKeepTheirReservationPastADay) {
  // The breaker stays open for three days: the parked jobs wait longer than their 1-day
  // reservation, and only their 48-hour activitypub deadline may end them.
  dconfig_.compartments.compartment.breaker.base_open_interval = hours(72);
  dconfig_.compartments.compartment.breaker.max_open_interval = hours(72);
  ScriptedTransport transport;
  StartDispatcher(transport);
  const std::string key = "https://social.example/users/alice#main-key";
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(Push(ActivityPub("https://dead.example/inbox" + std::to_string(i), key)).ok());
  }
  auto attempts = transport.Pending("dead.example");
  ASSERT_EQ(attempts.size(), 4u);
  for (size_t i : attempts)
    transport.Answer(i, ScriptedTransport::Error(TransportError::kConnectRefused));
  ASSERT_EQ(dispatcher_->compartments().Find("dead.example")->parked_count(), 2u);
  ASSERT_EQ(List(JobState::kRetry).size(), 4u);
  const TimePoint taken = clock_.Now();
  auto expiries = [&] {
    std::set<TimePoint> out;
    for (const auto& w : List(JobState::kWorking)) out.insert(FromUnixMicros(w.score));
    return out;
  };
  ASSERT_EQ(expiries(), std::set<TimePoint>{taken + hours(24)}) << "built-ins are reserved a day";

  // Nothing to renew while more than half of the reservation remains.
  clock_.Advance(hours(11));
  Pump();
  EXPECT_EQ(expiries(), std::set<TimePoint>{taken + hours(24)});
  ASSERT_TRUE(dispatcher_->next_wakeup());
  EXPECT_EQ(*dispatcher_->next_wakeup(), taken + hours(12)) << "the timer wakes for the renewal";

  clock_.Set(taken + hours(12));
  Pump();
  EXPECT_EQ(expiries(), std::set<TimePoint>{taken + hours(36)});
  EXPECT_EQ(dispatcher_->stats().renewed, 2);

  // Past the original expiry the reaper finds nothing to fail; renewals keep going.
  clock_.Set(taken + hours(30));
  RunReaper();
  EXPECT_EQ(List(JobState::kWorking).size(), 2u);
  Pump();
  EXPECT_EQ(expiries(), std::set<TimePoint>{taken + hours(54)});
  clock_.Set(taken + hours(40));
  RunReaper();
  EXPECT_EQ(List(JobState::kWorking).size(), 2u);
  EXPECT_EQ(List(JobState::kRetry).size(), 4u) << "no retry spent by waiting";
  for (const auto& w : List(JobState::kWorking)) EXPECT_FALSE(PayloadOf(w).contains("failure"));
  EXPECT_EQ(dispatcher_->compartments().Find("dead.example")->parked_count(), 2u);
  EXPECT_EQ(transport.calls.size(), 4u) << "no attempt while the breaker is open";

  // The deadline, not the reservation, ends the wait.
  clock_.Set(taken + hours(48));
  Pump();
  EXPECT_TRUE(List(JobState::kWorking).empty());
  auto dead = List(JobState::kDead);
  ASSERT_EQ(dead.size(), 2u);
  EXPECT_EQ(PayloadOf(dead[0])["failure"]["message"], "host unavailable");
}

// A host whose parked backlog is full hands further jobs back to the retry schedule; on a job's
// last retry that makes it dead, and the app is told (as for any other last failure).
TEST_P(DispatcherTest, BacklogFullOnTheLastRetryIsDeadAndReported) {
  dconfig_.compartments.compartment.max_parked = 1;
  ScriptedTransport transport;
  StartDispatcher(transport);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(Push(Webhook("https://dead.example/" + std::to_string(i))).ok());
    transport.Answer(i, ScriptedTransport::Error(TransportError::kConnectRefused));
  }
  ASSERT_TRUE(Push(Webhook("https://dead.example/parked")).ok());
  EXPECT_EQ(dispatcher_->compartments().Find("dead.example")->parked_count(), 1u);
  json last = Webhook("https://dead.example/last", {{"context", {{"n", 1}}}});
  last["jid"] = "last-retry";
  last["retry"] = 1;
  last["failure"] = {{"retry_count", 0}, {"message", "connect_error"}};
  ASSERT_TRUE(Push(last).ok());
  json spare = Webhook("https://dead.example/spare");
  spare["jid"] = "spare-job";
  ASSERT_TRUE(Push(spare).ok());
  EXPECT_EQ(transport.calls.size(), 2u);

  auto dead = List(JobState::kDead);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].jid, "last-retry");
  EXPECT_EQ(PayloadOf(dead[0])["failure"]["errtype"], "HostBacklogFull");
  auto retry = List(JobState::kRetry);
  EXPECT_TRUE(std::any_of(retry.begin(), retry.end(),
                          [](const JobRecord& r) { return r.jid == "spare-job"; }));
  auto outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  const json& outcome = outcomes[0]["args"][0];
  EXPECT_EQ(outcome["event"], "delivery_dead");
  EXPECT_EQ(outcome["jid"], "last-retry");
  EXPECT_EQ(outcome["url"], "https://dead.example/last");
  EXPECT_EQ(outcome["context"], json({{"n", 1}}));
  EXPECT_TRUE(outcome["status"].is_null());
}

TEST_P(DispatcherTest, InFlightJobsAreNotRenewed) {
  ScriptedTransport transport;
  StartDispatcher(transport);
  ASSERT_TRUE(Push(Webhook("https://slow.example/1")).ok());
  ASSERT_EQ(transport.Pending().size(), 1u);
  clock_.Advance(hours(13));
  Pump();
  EXPECT_EQ(dispatcher_->stats().renewed, 0);
  transport.Answer(0, ScriptedTransport::Status(200));
  EXPECT_TRUE(List(JobState::kWorking).empty());
}

TEST_P(DispatcherTest, HostUnavailableAndAvailableAreReported) {
  ScriptedTransport transport;
  StartDispatcher(transport);
  ASSERT_TRUE(Push(Webhook("https://flaky.example/1")).ok());
  transport.Answer(0, ScriptedTransport::Error(TransportError::kConnectRefused));
  clock_.Advance(minutes(11));  // unavailable_after is 10 min in this fixture
  ASSERT_TRUE(Push(Webhook("https://flaky.example/2")).ok());
  ASSERT_EQ(transport.calls.size(), 2u);
  transport.Answer(1, ScriptedTransport::Error(TransportError::kConnectRefused));
  auto outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0]["jobtype"], kHostUnavailableJobType);
  const json unavailable = outcomes[0]["args"][0];  // a copy: outcomes is read again below
  EXPECT_EQ(unavailable["host"], "flaky.example");
  EXPECT_EQ(unavailable["event"], "host_unavailable");
  EXPECT_EQ(unavailable["reason"].get<std::string>().rfind("connect_error", 0), 0u);
  EXPECT_TRUE(unavailable["status"].is_null());
  EXPECT_FALSE(unavailable.contains("jid"));
  EXPECT_TRUE(HostSnapshot("flaky.example").unavailable);

  ASSERT_TRUE(Push(Webhook("https://flaky.example/3")).ok());
  EXPECT_EQ(transport.calls.size(), 2u) << "two failures opened the breaker";
  ASSERT_TRUE(dispatcher_->next_wakeup());
  clock_.Set(*dispatcher_->next_wakeup());
  Pump();
  ASSERT_EQ(transport.calls.size(), 3u) << "the probe";
  transport.Answer(2, ScriptedTransport::Status(204));
  outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0]["jobtype"], kHostAvailableJobType);
  EXPECT_EQ(outcomes[0]["args"][0]["host"], "flaky.example");
  EXPECT_EQ(outcomes[0]["args"][0]["since"], unavailable["since"]) << "the period that ended";
}

TEST_P(DispatcherTest, AdoptsItsReservationsAfterARestart) {
  ScriptedTransport before;
  StartDispatcher(before);
  ASSERT_TRUE(Push(Webhook("https://hooks.example/1")).ok());
  ASSERT_TRUE(Push(Webhook("https://hooks.example/2")).ok());
  ASSERT_TRUE(Push({{"jobtype", "Mail"}, {"args", {1}}}).ok());
  auto mail = Await<Result<std::optional<std::string>>>(
      io_, "FETCH", [&](std::function<void(Result<std::optional<std::string>>)> cb) {
        engine_->Fetch({"default"}, "", std::move(cb));
      });
  ASSERT_TRUE(mail.ok() && mail->has_value()) << "a client's reservation exists too";
  ASSERT_EQ(before.calls.size(), 2u);
  // The process dies with both deliveries in flight.
  engine_->SetBuiltinJobs(nullptr);
  dispatcher_.reset();
  EXPECT_EQ(List(JobState::kWorking).size(), 3u);

  ScriptedTransport after;
  StartDispatcher(after);
  EXPECT_EQ(dispatcher_->stats().adopted, 2) << "only reservations of the delivery queue";
  ASSERT_EQ(after.calls.size(), 2u);
  after.Answer(0, ScriptedTransport::Status(200));
  after.Answer(1, ScriptedTransport::Status(200));
  auto working = List(JobState::kWorking);
  ASSERT_EQ(working.size(), 1u);
  EXPECT_EQ(working[0].queue, "default");
}

TEST_P(DispatcherTest, OnASharedStoreTheReservationsFoundAtStartAreLeftToTheirNodes) {
  ScriptedTransport before;
  StartDispatcher(before);
  ASSERT_TRUE(Push(Webhook("https://hooks.example/1")).ok());
  ASSERT_EQ(before.calls.size(), 1u) << "in flight on this node";
  engine_->SetBuiltinJobs(nullptr);

  // Another node starts on the same store while this one still holds its delivery.
  SharedStore shared(*store_, [this](std::function<void()> f) { boost::asio::post(io_, f); });
  ASSERT_TRUE(shared.cluster().shared());
  Engine other(io_, shared, config_, clock_, rng_);
  ScriptedTransport after;
  Dispatcher node_b(io_, other, after, signer_.get(), keys_, clock_, rng_, dconfig_);
  other.SetBuiltinJobs(&node_b);
  node_b.Start();
  Settle(io_);
  EXPECT_EQ(node_b.stats().adopted, 0) << "the other node's delivery is not taken over";
  EXPECT_TRUE(after.calls.empty());
  EXPECT_EQ(List(JobState::kWorking).size(), 1u);

  // What is queued is taken as usual.
  json doc = Webhook("https://hooks.example/2");
  doc["jid"] = "delivery-on-b";
  auto job = ParseJobDocument(doc, clock_.Now());
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  Status pushed = Await<Status>(io_, "PUSH", [&](std::function<void(Status)> done) {
    other.Push(std::move(*job), std::move(done));
  });
  ASSERT_TRUE(pushed.ok()) << pushed.ToString();
  Settle(io_);
  ASSERT_EQ(after.calls.size(), 1u);
  EXPECT_EQ(after.calls[0].request.url, "https://hooks.example/2");
  after.Answer(0, ScriptedTransport::Status(200));
  Settle(io_);
  other.SetBuiltinJobs(nullptr);
}

TEST(DispatcherStoreOptionsTest, AGracefullyStoppingRedisNodeGivesBackTheDeliveryQueue) {
  // Only this node's dispatcher could end its delivery reservations (no other node adopts them).
  auto queues = StoreOptions().redis_give_back_at_stop;
  EXPECT_NE(std::find(queues.begin(), queues.end(), kDeliveryQueue), queues.end());
}

TEST_P(DispatcherTest, StoreAnswersAfterTheDispatcherIsGoneAreDropped) {
  // Destroyed while restoring the host states: nothing continues on the destroyed dispatcher.
  ScriptedTransport first;
  dispatcher_ = std::make_unique<Dispatcher>(io_, *engine_, first, signer_.get(), keys_, clock_,
                                             rng_, dconfig_);
  dispatcher_->Start();
  dispatcher_.reset();
  Settle(io_);

  // Destroyed while taking a job (deferred: the Fetch answer is outstanding; inline: the job is
  // in flight): the job stays reserved and the next dispatcher adopts and sends it.
  ScriptedTransport second;
  StartDispatcher(second);
  json doc = Webhook("https://hooks.example/1");
  doc["jid"] = "delivery1";
  auto job = ParseJobDocument(doc, clock_.Now());
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  engine_->Push(std::move(*job), [](Status s) { EXPECT_TRUE(s.ok()) << s.ToString(); });
  engine_->SetBuiltinJobs(nullptr);
  dispatcher_.reset();
  Settle(io_);
  EXPECT_EQ(List(JobState::kWorking).size(), 1u);

  ScriptedTransport third;
  StartDispatcher(third);
  EXPECT_EQ(dispatcher_->stats().adopted, 1);
  ASSERT_EQ(third.calls.size(), 1u);
  third.Answer(0, ScriptedTransport::Status(200));
  EXPECT_TRUE(List(JobState::kWorking).empty());
}

TEST_P(DispatcherTest, OpenBreakerSurvivesARestartAndParksTheAdoptedJobsUntilTheProbe) {
  ScriptedTransport before;
  StartDispatcher(before);
  const TimePoint failed_at = clock_.Now();
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(Push(Webhook("https://dead.example/" + std::to_string(i))).ok());
  }
  ASSERT_EQ(before.Pending("dead.example").size(), 2u);
  for (size_t i : before.Pending("dead.example")) {
    before.Answer(i, ScriptedTransport::Error(TransportError::kTimeoutTotal));
  }
  // Two failures open the breaker (this fixture) for 30 s, without jitter.
  const TimePoint probe_at = clock_.Now() + seconds(30);
  std::vector<HostStateRecord> saved = SavedHosts();
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].host, "dead.example");
  EXPECT_EQ(saved[0].breaker_open_until_us, ToUnixMicros(probe_at));
  EXPECT_EQ(saved[0].breaker_series_openings, 1);
  EXPECT_EQ(saved[0].failing_since_us, ToUnixMicros(failed_at));
  EXPECT_FALSE(saved[0].unavailable);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(Push(Webhook("https://dead.example/parked" + std::to_string(i))).ok());
  }
  ASSERT_EQ(before.calls.size(), 2u);
  ASSERT_EQ(List(JobState::kRetry).size(), 2u);

  // The process dies with three jobs parked and comes back 10 s later.
  clock_.Advance(seconds(10));
  ScriptedTransport after;
  Restart(after);
  EXPECT_EQ(dispatcher_->stats().adopted, 3);
  EXPECT_TRUE(after.calls.empty()) << "no attempt while the restored breaker is open";
  const Compartment* dead = dispatcher_->compartments().Find("dead.example");
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(dead->parked_count(), 3u);
  EXPECT_EQ(dead->breaker().state(clock_.Now()), BreakerState::kOpen);
  EXPECT_EQ(dead->failing_since(), failed_at);
  ASSERT_TRUE(dispatcher_->next_wakeup());
  EXPECT_EQ(*dispatcher_->next_wakeup(), probe_at);
  clock_.Set(probe_at - std::chrono::milliseconds(1));
  Pump();
  EXPECT_TRUE(after.calls.empty());
  EXPECT_EQ(List(JobState::kRetry).size(), 2u) << "no retry spent by the parked jobs";
  EXPECT_EQ(List(JobState::kWorking).size(), 3u);

  // At the saved probe time exactly one probe; its failure reopens the breaker for the series'
  // second interval (60 s), as it would have without the restart.
  clock_.Set(probe_at);
  Pump();
  ASSERT_EQ(after.Pending("dead.example").size(), 1u) << "one half-open probe";
  after.Answer(0, ScriptedTransport::Error(TransportError::kConnectRefused));
  EXPECT_EQ(List(JobState::kRetry).size(), 3u);
  ASSERT_TRUE(dispatcher_->next_wakeup());
  EXPECT_EQ(*dispatcher_->next_wakeup(), probe_at + seconds(60));
  saved = SavedHosts();
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].breaker_open_until_us, ToUnixMicros(probe_at + seconds(60)));
  EXPECT_EQ(saved[0].breaker_series_openings, 2);
  EXPECT_EQ(saved[0].breaker_openings, 2);

  // The host answers again: the parked jobs drain and its saved state is deleted.
  clock_.Set(probe_at + seconds(60));
  Pump();
  ASSERT_EQ(after.Pending("dead.example").size(), 1u);
  for (int round = 0; round < 10 && !after.Pending("dead.example").empty(); ++round) {
    for (size_t i : after.Pending("dead.example")) after.Answer(i, ScriptedTransport::Status(200));
  }
  EXPECT_TRUE(List(JobState::kWorking).empty());
  EXPECT_EQ(List(JobState::kRetry).size(), 3u);
  EXPECT_TRUE(SavedHosts().empty()) << "a healthy host leaves nothing in the store";
}

TEST_P(DispatcherTest, FailingSinceSurvivesRestartsSoUnavailableCountsFromTheFirstFailure) {
  dconfig_.compartments.compartment.unavailable_after = hours(24 * 7);
  ScriptedTransport first;
  StartDispatcher(first);
  const TimePoint failed_at = clock_.Now();
  ASSERT_TRUE(Push(Webhook("https://flaky.example/1")).ok());
  first.Answer(0, ScriptedTransport::Error(TransportError::kConnectRefused));

  // A weekly restart, six days later.
  clock_.Advance(hours(24 * 6));
  ScriptedTransport second;
  Restart(second);
  ASSERT_NE(dispatcher_->compartments().Find("flaky.example"), nullptr);
  EXPECT_EQ(dispatcher_->compartments().Find("flaky.example")->failing_since(), failed_at);
  EXPECT_TRUE(Outcomes().empty());

  // Seven days after the first failure, the next failure makes the host unavailable.
  clock_.Set(failed_at + hours(24 * 7));
  ASSERT_TRUE(Push(Webhook("https://flaky.example/2")).ok());
  ASSERT_EQ(second.calls.size(), 1u);
  second.Answer(0, ScriptedTransport::Error(TransportError::kConnectRefused));
  auto outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0]["jobtype"], kHostUnavailableJobType);
  EXPECT_EQ(outcomes[0]["args"][0]["host"], "flaky.example");
  EXPECT_EQ(outcomes[0]["args"][0]["since"], FormatRfc3339(failed_at))
      << "failing since the first failure, before the restart";
  std::vector<HostStateRecord> saved = SavedHosts();
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_TRUE(saved[0].unavailable);
  EXPECT_EQ(saved[0].failing_since_us, ToUnixMicros(failed_at));

  // After another restart the verdict is not announced again, and the next healthy answer clears
  // it: bulkhead.host_available, and nothing left in the store.
  ScriptedTransport third;
  Restart(third);
  clock_.Advance(minutes(1));
  ASSERT_TRUE(Push(Webhook("https://flaky.example/3")).ok());
  ASSERT_EQ(third.calls.size(), 1u);
  EXPECT_TRUE(HostSnapshot("flaky.example").unavailable);
  third.Answer(0, ScriptedTransport::Status(200));
  outcomes = Outcomes();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0]["jobtype"], kHostAvailableJobType);
  EXPECT_TRUE(SavedHosts().empty());
}

TEST_P(DispatcherTest, SnapshotAndMetricsShowPerHostState) {
  ScriptedTransport transport;
  StartDispatcher(transport);
  Registry& registry = metrics_;
  ASSERT_TRUE(dispatcher_->RegisterMetrics(registry).ok());
  ASSERT_TRUE(Push(Webhook("https://hooks.example/1")).ok());
  ASSERT_TRUE(Push(Webhook("https://hooks.example:8443/2")).ok());
  clock_.Advance(std::chrono::milliseconds(120));
  transport.Answer(0, ScriptedTransport::Status(200));
  DeliverySnapshot snapshot = dispatcher_->Snapshot();
  ASSERT_EQ(snapshot.hosts.size(), 2u);
  EXPECT_EQ(snapshot.hosts[0].host, "hooks.example");
  EXPECT_EQ(snapshot.hosts[0].successes, 1);
  EXPECT_EQ(snapshot.hosts[0].in_flight, 0);
  EXPECT_EQ(snapshot.hosts[0].breaker, BreakerState::kClosed);
  EXPECT_EQ(snapshot.hosts[0].latency_p99, std::chrono::milliseconds(120));
  EXPECT_EQ(snapshot.hosts[1].host, "hooks.example:8443");
  EXPECT_EQ(snapshot.hosts[1].in_flight, 1);
  EXPECT_EQ(snapshot.in_flight, 1);
  // The same figures, published for the per-host gauges (view/delivery_gauges.h).
  EXPECT_EQ(dispatcher_->published_snapshot().Latest(), nullptr) << "published only when asked";
  dispatcher_->PublishSnapshot();
  auto published = dispatcher_->published_snapshot().Latest();
  ASSERT_NE(published, nullptr);
  ASSERT_EQ(published->hosts.size(), 2u);
  EXPECT_EQ(published->at, snapshot.at);
  EXPECT_EQ(published->hosts[1].in_flight, 1);

  std::map<std::string, FamilySnapshot> families;
  for (auto& f : registry.Collect()) families[f.name] = f;
  EXPECT_FALSE(families.count(std::string(metric_names::kHostInflight)))
      << "the dispatcher renders no gauge: the server registers view/delivery_gauges.h";
  ASSERT_TRUE(families.count(std::string(metric_names::kDeliveriesTotal)));
  const auto& delivered = families[std::string(metric_names::kDeliveriesTotal)].samples;
  ASSERT_EQ(delivered.size(), 1u);
  EXPECT_EQ(delivered[0].label_values, (std::vector<std::string>{"hooks.example", "success"}));
  transport.Answer(1, ScriptedTransport::Status(200));
}

TEST_P(DispatcherTest, RequestsBuiltOnWorkerThreadsAreSentAndAcked) {
  build_threads_ = 2;
  ScriptedTransport transport;
  StartDispatcher(transport);
  ASSERT_TRUE(Push(WebPush("https://push.example/sub/1", "ping")).ok());
  ASSERT_TRUE(Push(ActivityPub("https://remote.example/inbox",
                               "https://social.example/users/alice#main-key"))
                  .ok());
  ASSERT_TRUE(RunLoopUntil([&] { return transport.calls.size() == 2; }))
      << "the built requests were not sent within 10 s";
  for (const auto& call : transport.calls) {
    HttpResponse probe;  // for its Header lookup
    probe.headers = call.request.headers;
    if (call.request.url == "https://remote.example/inbox") {
      EXPECT_TRUE(probe.Header("Signature")) << "signed on a worker";
    } else {
      EXPECT_EQ(probe.Header("Content-Encoding"), "aes128gcm") << "encrypted on a worker";
    }
  }
  transport.Answer(0, ScriptedTransport::Status(201));
  transport.Answer(1, ScriptedTransport::Status(202));
  EXPECT_TRUE(List(JobState::kWorking).empty());
  EXPECT_EQ(dispatcher_->stats().acked, 2);
}

TEST_P(DispatcherTest, AJobWhoseRequestCannotBeBuiltOnAWorkerGoesDead) {
  build_threads_ = 1;
  build_fn_ = [](const DeliveryJob&) -> Result<HttpRequest> {
    return Status::InvalidArgument("no signing key for the job's key_id");
  };
  ScriptedTransport transport;
  StartDispatcher(transport);
  ASSERT_TRUE(Push(Webhook("https://hooks.example/x")).ok());
  ASSERT_TRUE(RunLoopUntil([&] { return List(JobState::kDead).size() == 1; }))
      << "the job was not sent dead within 10 s";
  EXPECT_TRUE(transport.calls.empty());
  EXPECT_EQ(dispatcher_->Snapshot().in_flight, 0) << "its slot is given back";
}

TEST_P(DispatcherTest, ARequestBuiltAfterStopIsNotSentAndItsJobStaysReserved) {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  build_threads_ = 1;
  build_fn_ = [&](const DeliveryJob& job) -> Result<HttpRequest> {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, seconds(10), [&] { return open; });
    HttpRequest r;
    r.url = job.url;
    return r;
  };
  ScriptedTransport transport;
  StartDispatcher(transport);
  ASSERT_TRUE(Push(Webhook("https://hooks.example/x")).ok());
  EXPECT_EQ(dispatcher_->Snapshot().in_flight, 1);
  dispatcher_->Stop();
  {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
  }
  cv.notify_all();
  ASSERT_TRUE(RunLoopUntil([&] { return dispatcher_->Snapshot().in_flight == 0; }))
      << "the build's result did not come back within 10 s";
  EXPECT_TRUE(transport.calls.empty()) << "nothing is sent after Stop";
  EXPECT_EQ(List(JobState::kWorking).size(), 1u) << "the job stays reserved for the next start";
}

INSTANTIATE_TEST_SUITE_P(StoreTimings, DispatcherTest, kBothTimings, StoreTimingName);

// The dashboard's host actions (dispatch/host_actions.cc).
TEST_P(DispatcherTest, ProbeHostNowSendsOneParkedJobAsTheProbeBeforeTheBreakerTime) {
  ScriptedTransport transport;
  StartDispatcher(transport);
  EXPECT_EQ(dispatcher_->ProbeHostNow("nowhere.example").code(), StatusCode::kNotFound);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(Push(Webhook("https://dead.example/" + std::to_string(i))).ok());
  }
  for (size_t i : transport.Pending("dead.example")) {
    transport.Answer(i, ScriptedTransport::Error(TransportError::kTimeoutTotal));
  }
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(Push(Webhook("https://dead.example/parked" + std::to_string(i))).ok());
  }
  ASSERT_EQ(transport.calls.size(), 2u);
  ASSERT_EQ(dispatcher_->compartments().Find("dead.example")->parked_count(), 3u);

  clock_.Advance(seconds(1));  // 29 s before the breaker's own probe time
  ASSERT_TRUE(dispatcher_->ProbeHostNow("dead.example").ok());
  ASSERT_EQ(transport.Pending("dead.example").size(), 1u) << "one half-open probe";
  EXPECT_EQ(dispatcher_->compartments().Find("dead.example")->parked_count(), 2u);
  transport.Answer(transport.Pending("dead.example")[0], ScriptedTransport::Status(200));
  for (int round = 0; round < 10 && !transport.Pending("dead.example").empty(); ++round) {
    for (size_t i : transport.Pending("dead.example")) {
      transport.Answer(i, ScriptedTransport::Status(200));
    }
  }
  EXPECT_EQ(dispatcher_->compartments().Find("dead.example")->parked_count(), 0u);
  EXPECT_TRUE(SavedHosts().empty());
  EXPECT_EQ(dispatcher_->ProbeHostNow("dead.example").code(), StatusCode::kFailedPrecondition);
}

TEST_P(DispatcherTest, ForgetHostFailuresReleasesTheParkedJobsAndDeletesTheSavedState) {
  ScriptedTransport transport;
  StartDispatcher(transport);
  EXPECT_EQ(dispatcher_->ForgetHostFailures("nowhere.example").code(), StatusCode::kNotFound);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(Push(Webhook("https://dead.example/" + std::to_string(i))).ok());
  }
  for (size_t i : transport.Pending("dead.example")) {
    transport.Answer(i, ScriptedTransport::Error(TransportError::kTimeoutTotal));
  }
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(Push(Webhook("https://dead.example/parked" + std::to_string(i))).ok());
  }
  ASSERT_EQ(SavedHosts().size(), 1u);
  ASSERT_EQ(dispatcher_->compartments().Find("dead.example")->parked_count(), 3u);
  EXPECT_EQ(dispatcher_->compartments().Find("dead.example")->last_error(),
            "timeout: timeout_total");

  ASSERT_TRUE(dispatcher_->ForgetHostFailures("dead.example").ok());
  const Compartment* dead = dispatcher_->compartments().Find("dead.example");
  EXPECT_EQ(dead->breaker().state(clock_.Now()), BreakerState::kClosed);
  EXPECT_EQ(dead->failing_since(), std::nullopt);
  EXPECT_EQ(dead->last_error(), "");
  EXPECT_EQ(dead->last_error_at(), std::nullopt);
  EXPECT_EQ(dead->breaker().openings(), 1) << "the count of openings stays";
  EXPECT_TRUE(SavedHosts().empty()) << "nothing failing left to keep";
  // The parked jobs start at once, as many as the host's cap (lowered by the failures) allows.
  ASSERT_FALSE(transport.Pending("dead.example").empty()) << "no need to wait for a probe";
  for (int round = 0; round < 10 && !transport.Pending("dead.example").empty(); ++round) {
    for (size_t i : transport.Pending("dead.example")) {
      transport.Answer(i, ScriptedTransport::Status(200));
    }
  }
  EXPECT_EQ(dead->parked_count(), 0u);
  EXPECT_TRUE(List(JobState::kWorking).empty());
}

}  // namespace
}  // namespace bulkhead
